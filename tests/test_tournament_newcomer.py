"""What a new player tripped over around tournaments and the wallet (issue 43), through the site's own views:
the wallet names every tournament movement (the entry, its refund, the prize, each with the tournament's name and
a link to its page) and no movement is a bare «Ajuste»; the tournament page's «Has quedado…» agrees with the
standings; the page numbers a table as the table itself does («Mesa 9»); «Tus mesas» marks a tournament's table;
and every page says that a tournament the person plays has started, with a link to their table."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.translation import override
from live.helpers import play_to_the_end
from test_table_english import spanish_in
from test_tournament_pages import (
    browser,
    quick_bots,  # noqa: F401 (autouse: bots move at once)
    rich,
    start_now,
    text,
    tournament,
)

from accounts import ledger
from accounts.models import Transaction
from games.models import Registration, Table
from games.tournaments import entries, runner

pytestmark = pytest.mark.django_db


def wallet_rows(page: str) -> list[tuple[str, str, str]]:
    """(what, chips, link) of each movement the wallet lists, newest first."""
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        link = re.search(r'<a href="([^"]+)"', cells[1])
        rows.append((text(cells[1]), text(cells[2]), link.group(1) if link else ""))
    return rows


# -- the wallet ----------------------------------------------------------------------------------------------


def test_the_wallet_names_every_tournament_movement_with_the_tournament_and_a_link() -> None:
    cup = tournament(name="Copa de Otoño", entry_fee=100, prizes="100")
    people = [rich(n) for n in ("ana", "bea")]
    for p in people:
        entries.register(p, cup.pk, None)
    start_now(cup)
    for table in Table.objects.filter(tournament=cup):
        play_to_the_end(table.pk)
    assert runner.advance(cup.pk) == "finished"
    withdrawn = tournament(name="El que dejé", entry_fee=50)
    entries.register(people[0], withdrawn.pk, None)
    entries.withdraw(people[0], withdrawn.pk)
    called_off = tournament(name="Suspendido", entry_fee=70)
    entries.register(people[0], called_off.pk, None)
    runner.cancel(called_off.pk, "lluvia")
    winner = Registration.objects.get(tournament=cup, prize=200).user

    for who in people:
        rows = wallet_rows(browser(who).get("/accounts/fichas/").content.decode())
        assert not any(what.startswith("Ajuste") for what, _chips, _link in rows), rows
        assert ("Inscripción en el torneo «Copa de Otoño»", "−100", f"/torneos/{cup.pk}/") in rows
        prize = ("Premio del torneo «Copa de Otoño»", "+200", f"/torneos/{cup.pk}/")
        assert (prize in rows) == (who == winner), rows
    rows = wallet_rows(browser(people[0]).get("/accounts/fichas/").content.decode())
    assert rows[:4] == [
        ("Devolución de la inscripción del torneo «Suspendido»", "+70", f"/torneos/{called_off.pk}/"),
        ("Inscripción en el torneo «Suspendido»", "−70", f"/torneos/{called_off.pk}/"),
        ("Devolución de la inscripción del torneo «El que dejé»", "+50", f"/torneos/{withdrawn.pk}/"),
        ("Inscripción en el torneo «El que dejé»", "−50", f"/torneos/{withdrawn.pk}/"),
    ]
    assert rows[-1] == ("Regalo de bienvenida", "+5.000", "")
    # in English too
    english = browser(people[0], "en").get("/accounts/fichas/").content.decode()
    assert "Entry to the tournament “Copa de Otoño”" in english
    assert "Refund of the entry to the tournament “Suspendido”" in english
    names = ("Copa de Otoño", "El que dejé", "Suspendido", "ana", "bea")
    assert spanish_in(english, names) == []
    assert ledger.audit() == []


def test_every_kind_of_movement_has_a_name_of_its_own() -> None:
    """Whatever the kind, the words are its own: never «Ajuste» for a movement that is not a moderator's."""
    cup = tournament(name="Copa")
    table = Table.objects.create(size=4)
    with override("es"):
        for where in ({}, {"table_id": table.pk}, {"tournament_id": cup.pk}):
            said = set()
            for kind, _label in Transaction.Kind.choices:
                words = ledger.describe(Transaction(kind=kind, key=f"{kind}:{where}", note="", **where))
                assert words and ("Ajuste" in words) == (kind == Transaction.Kind.ADJUSTMENT), (kind, where, words)
                said.add(words)
            assert len(said) == len(Transaction.Kind.choices), said  # no two kinds in the same words
        assert ledger.describe(Transaction(kind="adjustment", key="a", note="por un error")) == "Ajuste: por un error"
        assert ledger.describe(Transaction(kind="prize", key="p", tournament_id=cup.pk)) == "Premio del torneo «Copa»"
        assert ledger.describe(Transaction(kind="payout", key="b", table_id=table.pk)) == f"Bote de la mesa {table.pk}"


def test_the_wallet_reads_a_page_of_movements_in_the_same_queries_with_tournaments() -> None:
    ana = rich("ana")
    client = browser(ana)
    client.get("/accounts/fichas/")
    with CaptureQueriesContext(connection) as plain:
        client.get("/accounts/fichas/")
    for n in range(3):
        t = tournament(name=f"Torneo {n}", entry_fee=10)
        entries.register(ana, t.pk, None)
    with CaptureQueriesContext(connection) as with_tournaments:
        page = client.get("/accounts/fichas/").content.decode()
    assert "Inscripción en el torneo «Torneo 2»" in page
    assert len(with_tournaments) == len(plain)
