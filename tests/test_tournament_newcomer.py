"""What a new player tripped over around tournaments and the wallet (issue 43), through the site's own views:
the wallet names every tournament movement (the entry, its refund, the prize, each with the tournament's name and
a link to its page) and no movement is a bare «Ajuste»; the tournament page's «Has quedado…» agrees with the
standings; the page numbers a table as the table itself does («Mesa 9»); «Tus mesas» marks a tournament's table;
and every page says that a tournament the person plays has started, with a link to their table."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.translation import override
from live.helpers import person, play_to_the_end
from test_table_english import spanish_in
from test_tournament_pages import (
    browser,
    play_deal,
    quick_bots,  # noqa: F401 (autouse: bots move at once)
    rich,
    section,
    start_now,
    text,
    tournament,
)

from accounts import ledger
from accounts.models import Transaction
from games.models import Registration, Seat, Table, Tournament
from games.table import actions
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
    prizes = {r.user_id: r.prize for r in Registration.objects.filter(tournament=cup)}
    assert sum(prizes.values()) == 200  # (shared if the two tied)

    for who in people:
        rows = wallet_rows(browser(who).get("/accounts/fichas/").content.decode())
        assert not any(what.startswith("Ajuste") for what, _chips, _link in rows), rows
        assert ("Inscripción en el torneo «Copa de Otoño»", "−100", f"/torneos/{cup.pk}/") in rows
        prize = ("Premio del torneo «Copa de Otoño»", f"+{prizes[who.pk]}", f"/torneos/{cup.pk}/")
        assert (prize in rows) == bool(prizes[who.pk]), rows
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


# -- the tournament page: one place, one numbering --------------------------------------------------------------


def standings_rows(page: str) -> list[dict[str, str]]:
    """Each line of the standings as shown: place, place among people, name, whether it is the viewer's, and the
    table a bot's line names."""
    part = section(page, "tournament-standings")
    rows = []
    for attrs, row in re.findall(r"<tr (data-name=[^>]*)>(.*?)</tr>", part, re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        table = re.search(r"Mesa (\d+)", text(cells[2]))
        rows.append(
            {
                "place": text(cells[0]),
                "person_place": text(cells[1]),
                "name": re.search(r'data-name="([^"]*)"', attrs).group(1),  # type: ignore[union-attr]
                "me": "aria-current" in attrs,
                "table": table.group(1) if table else "",
            }
        )
    return rows


def crafted_results(t: Tournament, people: list[Any]) -> None:
    """The kept final standings of ``t`` written so that the bots are ahead of the people: ana is 6.º of 8 and
    1.º of the people, bea 8.º and 2.º (as a tournament where the difícil bots beat everyone ends)."""
    bots = [f"Bot {n}" for n in ("Lola", "Paco", "Carmen", "Manolo", "Pilar", "Curro")]
    lines: list[dict[str, Any]] = []
    for place, name in enumerate(bots[:5], start=1):
        lines.append({"key": f"b{place}", "name": name, "user_id": None, "score": 10 - place, "place": place})
    lines.append({"key": "ana", "name": "ana", "user_id": people[0].pk, "score": 4, "place": 6, "person_place": 1})
    lines.append({"key": "b6", "name": bots[5], "user_id": None, "score": 3, "place": 7})
    lines.append({"key": "bea", "name": "bea", "user_id": people[1].pk, "score": 2, "place": 8, "person_place": 2})
    for line in lines:
        line.update({"points": 0, "played": 2, "table_id": None, "seat": 0, "prize": 0})
        line.setdefault("person_place", None)
    lines[5]["prize"], lines[7]["prize"] = 200, 0
    Tournament.objects.filter(pk=t.pk).update(results=lines)


def test_the_place_said_is_the_one_the_standings_show() -> None:
    t = tournament(entry_fee=100, prizes="100")
    people = [rich(n) for n in ("ana", "bea")]
    for p in people:
        entries.register(p, t.pk, None)
    start_now(t)
    for table in Table.objects.filter(tournament=t):
        play_to_the_end(table.pk)
    assert runner.advance(t.pk) == "finished"
    for who in people:  # as the game went: whatever the places, the sentence and the viewer's line agree
        page = browser(who).get(f"/torneos/{t.pk}/").content.decode()
        mine = [row for row in standings_rows(page) if row["me"]]
        assert len(mine) == 1 and mine[0]["name"] == who.username
        registration = Registration.objects.get(tournament=t, user=who)
        state = text(section(page, "tournament-state"))
        assert f"Has quedado {registration.place}.º de 2 personas." in state
        assert mine[0]["person_place"] == f"{registration.place}.º"
        assert f"En la clasificación, con los bots: {mine[0]['place']}.º de 8." in state

    crafted_results(t, people)  # the case that was seen: bots ahead
    page = browser(people[0]).get(f"/torneos/{t.pk}/").content.decode()
    state = text(section(page, "tournament-state"))
    assert "Has quedado 1.º de 2 personas. En la clasificación, con los bots: 6.º de 8. Premio: 200 fichas." in state
    rows = standings_rows(page)
    assert [(r["place"], r["person_place"], r["name"]) for r in rows if r["me"]] == [("6", "1.º", "ana")]
    assert [r["person_place"] for r in rows] == ["", "", "", "", "", "1.º", "", "2.º"]
    assert ">Entre personas</abbr></th>" in section(page, "tournament-standings")
    english = browser(people[0], "en").get(f"/torneos/{t.pk}/").content.decode()
    assert "You finished #1 of 2 people. In the standings, bots included: #6 of 8." in text(
        section(english, "tournament-state")
    )


def test_while_playing_the_place_so_far_agrees_with_the_standings() -> None:
    t = tournament(entry_fee=0)
    people = [person(n) for n in ("ana", "bea", "carla")]
    for p in people:
        entries.register(p, t.pk, None)
    start_now(t)
    page = browser(people[0]).get(f"/torneos/{t.pk}/").content.decode()
    assert 'class="my-place"' not in page  # nothing played yet: no place to speak of
    for table in Table.objects.filter(tournament=t):
        play_deal(table.pk)
    for who in people:
        page = browser(who).get(f"/torneos/{t.pk}/").content.decode()
        mine = next(row for row in standings_rows(page) if row["me"])
        said = re.search(r'<p class="my-place" data-place="(\d+)" data-overall="(\d+)">(.*?)</p>', page, re.S)
        assert said is not None
        assert f"{said.group(1)}.º" == mine["person_place"] and said.group(2) == mine["place"]
        assert text(said.group(3)) == (
            f"Vas {said.group(1)}.º de 3 personas · en la clasificación, con los bots: {mine['place']}.º de 8."
        )


def test_the_page_calls_each_table_by_the_number_its_board_shows() -> None:
    for _n in range(7):  # tables before the tournament's: its tables' own numbers are not 1 and 2
        Table.objects.create(size=4)
    t = tournament(entry_fee=0)
    ana, bea, carla = (person(n) for n in ("ana", "bea", "carla"))
    for p in (ana, bea, carla):
        entries.register(p, t.pk, None)
    start_now(t)
    mine = Table.objects.get(tournament=t, seats__user=ana)
    assert mine.pk != mine.tournament_number
    page = browser(ana).get(f"/torneos/{t.pk}/").content.decode()
    assert f"Juegas en la mesa {mine.pk}." in text(section(page, "tournament-state"))
    listed = dict(re.findall(r'<tr data-table="(\d+)"[^>]*>\s*<th scope="row">(.*?)</th>', page, re.S))
    assert set(listed) == {str(pk) for pk in Table.objects.filter(tournament=t).values_list("pk", flat=True)}
    for pk, head in listed.items():
        assert text(head).startswith(f"Mesa {pk}")
    board = browser(ana).get(f"/mesa/{mine.pk}/").content.decode()
    title = re.search(r'<h1 class="table-title">(.*?)</h1>', board, re.S)
    assert title is not None and text(title.group(1)) == f"Mesa {mine.pk}"
    # a bot's line in the standings names its table by the same number
    seats = {(s.table_id, s.name) for s in Seat.objects.filter(table__tournament=t, is_bot=True)}
    bots = [row for row in standings_rows(page) if row["table"]]
    assert len(bots) == 5 and all((int(row["table"]), row["name"]) in seats for row in bots)


# -- «Tus mesas» ----------------------------------------------------------------------------------------------


def my_tables(page: str) -> dict[int, str]:
    """«Tus mesas» on the home page: each table's id and its line's HTML."""
    part = re.search(r"<h2>Tus mesas</h2>\s*<ul>(.*?)</ul>", page, re.S)
    assert part is not None, "no «Tus mesas»"
    lines = re.findall(r"<li>(.*?)</li>", part.group(1), re.S)
    return {int(re.search(r'href="/mesa/(\d+)/"', line).group(1)): line for line in lines}  # type: ignore[union-attr]


def words(fragment: str) -> str:
    """The fragment's text as read (``text`` leaves a space where a tag ends before a comma)."""
    return text(fragment).replace(" ,", ",")


def test_your_tables_mark_a_tournaments_table_with_its_name_and_deal() -> None:
    t = tournament(entry_fee=0, name="Copa Pocha")
    ana, bea = person("ana"), person("bea")
    for p in (ana, bea):
        entries.register(p, t.pk, None)
    quick = actions.do_create_table(ana, 4)  # a table of their own, waiting for players
    start_now(t)
    mine = Table.objects.get(tournament=t, seats__user=ana)
    client = browser(ana)
    lines = my_tables(client.get("/").content.decode())
    assert set(lines) == {mine.pk, quick.pk}
    assert words(lines[mine.pk]).endswith("— en juego Torneo: Copa Pocha, mano 1 de 2")
    assert f'<a href="/torneos/{t.pk}/">Copa Pocha</a>' in lines[mine.pk]
    assert "Torneo" not in lines[quick.pk]
    play_deal(mine.pk)
    assert words(my_tables(client.get("/").content.decode())[mine.pk]).endswith("Torneo: Copa Pocha, mano 2 de 2")
    english = browser(ana, "en").get("/").content.decode()
    line = re.search(rf'<li><a href="/mesa/{mine.pk}/">.*?</li>', english, re.S)
    assert line is not None and words(line.group(0)).endswith("in play Tournament: Copa Pocha, hand 2 of 2")


def test_your_tables_say_which_game_of_a_por_puntos_tournament() -> None:
    t = tournament(format=Tournament.Format.POINTS, games=2, deals=1, entry_fee=0, name="Liga")
    ana, bea = person("ana"), person("bea")
    for p in (ana, bea):
        entries.register(p, t.pk, None)
    start_now(t)
    mine = Table.objects.get(tournament=t, seats__user=ana)
    line = my_tables(browser(ana).get("/").content.decode())[mine.pk]
    assert words(line).endswith("Torneo: Liga, partida 1 de 2, mano 1 de 1")


def test_your_tables_read_the_tournaments_in_one_query() -> None:
    ana = person("ana")
    client = browser(ana)
    actions.do_create_table(ana, 4)
    client.get("/")
    with CaptureQueriesContext(connection) as without:
        client.get("/")
    t = tournament(entry_fee=0)
    entries.register(ana, t.pk, None)
    entries.register(person("bea"), t.pk, None)
    start_now(t)
    with CaptureQueriesContext(connection) as with_one:
        page = client.get("/").content.decode()
    assert f'Torneo: <a href="/torneos/{t.pk}/">Torneo del Casino</a>, mano 1 de 2' in page
    assert len(with_one) == len(without) + 1  # the tournament's name


# -- the notice on every page ---------------------------------------------------------------------------------

PAGES = ("/", "/accounts/fichas/", "/torneos/", "/clasificacion/", "/reglas/")
PUBLIC = tuple(path for path in PAGES if not path.startswith("/accounts/"))


def notice_of(page: str) -> str | None:
    found = re.search(r'<p class="card tournament-notice" id="tournament-notice"[^>]*>.*?</p>', page, re.S)
    return found.group(0) if found else None


def test_every_page_says_a_tournament_started_with_a_link_to_the_persons_table() -> None:
    t = tournament(entry_fee=0, name="Copa Pocha")
    ana, bea, carla = person("ana"), person("bea"), person("carla")
    for p in (ana, bea):
        entries.register(p, t.pk, None)
    client = browser(ana)
    for path in (*PAGES, f"/jugador/{ana.username}/"):
        assert notice_of(client.get(path).content.decode()) is None, path  # registered, not started yet
    start_now(t)
    mine = Table.objects.get(tournament=t, seats__user=ana)
    for path in (*PAGES, f"/jugador/{bea.username}/", f"/torneos/{t.pk}/no-such/"):
        response = client.get(path)
        notice = notice_of(response.content.decode())
        assert notice is not None, (path, response.status_code)
        assert (
            text(notice)
            == f"El torneo «Copa Pocha» ha empezado: te espera la mesa {mine.pk}. Ir a tu mesa Ver el torneo"
        )
        assert f'<a class="button" href="/mesa/{mine.pk}/">Ir a tu mesa</a>' in notice
        assert f'<a href="/torneos/{t.pk}/">Ver el torneo</a>' in notice
    # the table's own page and the tournament's page say it already: no notice there
    assert notice_of(client.get(f"/mesa/{mine.pk}/").content.decode()) is None
    assert "Ir a tu mesa" in client.get(f"/torneos/{t.pk}/").content.decode()
    assert notice_of(client.get(f"/torneos/{t.pk}/").content.decode()) is None
    # nobody else: not a person of another tournament, not a visitor
    assert notice_of(browser(carla).get("/").content.decode()) is None
    assert notice_of(browser().get("/").content.decode()) is None
    # in English
    english = notice_of(browser(ana, "en").get("/").content.decode())
    assert english is not None and text(english) == (
        f"The tournament “Copa Pocha” has started: table {mine.pk} is waiting for you. Go to your table See the tournament"
    )
    # bea's table is hers (two people, two tables: one each)
    theirs = Table.objects.get(tournament=t, seats__user=bea)
    assert theirs.pk != mine.pk
    assert f'href="/mesa/{theirs.pk}/"' in (notice_of(browser(bea).get("/").content.decode()) or "")
    # once their table has finished (the tournament may still be played), or they left it: no more
    play_to_the_end(mine.pk)
    assert Tournament.objects.get(pk=t.pk).status == Tournament.Status.PLAYING
    assert notice_of(client.get("/").content.decode()) is None
    actions.do_leave_seat(theirs.pk, bea)
    assert notice_of(browser(bea).get("/").content.decode()) is None


def test_the_notice_costs_one_query_a_page_for_a_person_and_none_for_a_visitor(settings: Any) -> None:
    t = tournament(entry_fee=0)
    ana, bea = person("ana"), person("bea")
    for p in (ana, bea):
        entries.register(p, t.pk, None)
    start_now(t)

    def queries(client: Any) -> dict[str, int]:
        counts = {}
        for path in PAGES if client.session.get("_auth_user_id") else PUBLIC:
            client.get(path)  # (a first visit may write: the session, the profile…)
            with CaptureQueriesContext(connection) as seen:
                assert client.get(path).status_code == 200
            counts[path] = len(seen)
        return counts

    with_notice = queries(browser(ana)), queries(browser())
    engines = [dict(engine) for engine in settings.TEMPLATES]
    processors = engines[0]["OPTIONS"]["context_processors"]
    engines[0]["OPTIONS"] = {
        **engines[0]["OPTIONS"],
        "context_processors": [p for p in processors if p != "pocha_site.context_processors.tournament_notice"],
    }
    assert len(engines[0]["OPTIONS"]["context_processors"]) == len(processors) - 1
    settings.TEMPLATES = engines
    without = queries(browser(ana)), queries(browser())
    print("queries a page, person with the notice / without; visitor with / without:")
    for path in PAGES:
        visitor = f"{with_notice[1][path]} / {without[1][path]}" if path in PUBLIC else "-"
        print(f"  {path}: {with_notice[0][path]} / {without[0][path]}; {visitor}")
    assert {path: with_notice[0][path] - without[0][path] for path in PAGES} == dict.fromkeys(PAGES, 1)
    assert with_notice[1] == without[1]
