"""«Revancha»: at the end of a game, the same people at a new table with the same options.

The real ``games.table.actions.rematch`` functions and HTTP views, the clock's due steps run by hand
(``actions.do_due``), races in threads as in ``test_races``.  After every refusal nothing has changed
(tables, seats, every account and ledger row) and the books balance (``ledger.audit``).
"""

from __future__ import annotations

import html
import itertools
import re
from datetime import timedelta
from typing import Any

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.utils import timezone
from django.utils.translation import override

from accounts import ledger, moderation
from accounts.models import Account, Transaction
from games.engine.cards import ALL_CARDS
from games.live import timers
from games.models import Seat, Table
from games.read.rematch import rematch_context
from games.table import access, actions
from games.table.actions import rematch
from games.web.views import open_tables

from .helpers import person, play_to_the_end, seated_table
from .test_races import race

pytestmark = pytest.mark.django_db(transaction=True)

WELCOME = ledger.WELCOME_CHIPS
REMATCH_ONLY = "Esta revancha es solo para quienes jugaron la partida."
_names = itertools.count()


@pytest.fixture(autouse=True)
def quick_bots_and_no_background_clock(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bots move at once, and every due step is run here by hand (``do_due``): nothing is armed."""
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_REMATCH_WAIT = 30
    monkeypatch.setattr(timers, "arm", lambda table_id, seq, due, **_kw: None)


# -- helpers -------------------------------------------------------------------------------


def finished(
    size: int = 3, humans: int = 3, *, stake: int = 100, public: bool = True, bots: bool = True, quick: bool = False
) -> tuple[Table, list[Any]]:
    """A finished game of ``humans`` people (and bots in the other seats) at a table with these options."""
    prefix = f"r{next(_names)}-"
    if stake == 0 and public and not quick and humans == size:
        table_id, users = seated_table(size, humans, prefix=prefix)
    else:
        users = [person(f"{prefix}{i}") for i in range(humans)]
        if quick:
            table = None
            for user in users:
                table = actions.do_quick_play(user, size, stake)
            assert table is not None
        else:
            table = actions.do_create_table(users[0], size, public=public, stake=stake, bots_allowed=bots)
            for user in users[1:]:
                actions.do_take_seat(table.pk, user, code=table.code)
        table = Table.objects.get(pk=table.pk)
        if table.status == Table.Status.WAITING:
            actions.do_start(table.pk, users[0])
        table_id = table.pk
    table = play_to_the_end(table_id)
    assert table.status == Table.Status.FINISHED
    return table, users


def everything() -> dict[str, Any]:
    return {
        "accounts": sorted(Account.objects.values_list("pk", "balance")),
        "transactions": Transaction.objects.count(),
        "tables": sorted(Table.objects.values_list("pk", "status", "seq", "rematch_of_id")),
        "seats": sorted(Seat.objects.values_list("table_id", "position", "user_id", "is_bot")),
    }


def balances(users: list[Any]) -> list[int]:
    return [ledger.balance(u.pk) for u in users]


def pot(table: Table) -> int:
    return int(
        Account.objects.filter(kind=Account.Kind.POT, table_id=table.pk).values_list("balance", flat=True).first() or 0
    )


def books_balance() -> None:
    problems = ledger.audit()
    assert problems == [], "the ledger audit found problems:\n" + "\n".join(problems)


def refused(call: Any, code: str) -> actions.ActionError:
    with pytest.raises(actions.ActionError) as error:
        call()
    assert error.value.code == code, error.value
    return error.value


def browser(user: Any, *, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def page_messages(response: Any) -> list[str]:
    return [
        html.unescape(m).strip()
        for m in re.findall(r'<ul class="messages">\s*<li[^>]*>(.*?)</li>', response.content.decode(), re.S)
    ]


def fragment(table: Table, user: Any) -> str:
    ctx = rematch_context(table, list(Seat.objects.filter(table=table)), user.pk)
    with override("es"):
        return render_to_string("games/_rematch.html", {"rematch": ctx, "seq": table.seq})


# -- proposing and accepting -------------------------------------------------------------------


def test_the_offer_creates_one_table_with_the_same_options_and_the_stake_held() -> None:
    old, (a, b, c) = finished(stake=100)
    Table.objects.filter(pk=old.pk).update(card_seconds=25, bid_seconds=40, trump_seconds=15)
    old.refresh_from_db()
    before = balances([a, b, c])
    new = rematch.do_offer_rematch(old.pk, b)
    new.refresh_from_db()
    assert Table.objects.filter(rematch_of=old).count() == 1 and new.rematch_of_id == old.pk
    assert (new.size, new.stake, new.is_public, new.is_quick, new.bots_allowed) == (3, 100, True, False, True)
    assert (new.card_seconds, new.bid_seconds, new.trump_seconds) == (25, 40, 15)
    assert new.status == Table.Status.WAITING and new.created_by_id == b.pk and new.code is None
    assert list(Seat.objects.filter(table=new).values_list("position", "user_id", "is_bot")) == [(0, b.pk, False)]
    assert balances([a, b, c]) == [before[0], before[1] - 100, before[2]] and pot(new) == 100
    # the bots' clock: the rematch's own wait, which is what the sweeper acts on
    assert timedelta(seconds=29) < new.fill_at - timezone.now() <= timedelta(seconds=30)
    assert new.due_at == new.fill_at and new.seq == 1
    # the lobby never offers it to anyone else
    assert all(row["table"].pk != new.pk for row in open_tables(person("mirona").pk))
    ctx = rematch_context(old, list(Seat.objects.filter(table=old)), a.pk)
    assert ctx is not None and ctx["offered"] and ctx["table_id"] == new.pk and ctx["by"] == b.username
    assert ctx["seated"] == [b.username] and ctx["waiting"] == [a.username, c.username]
    assert not ctx["mine"] and ctx["status"] == "waiting"
    assert rematch_context(old, list(Seat.objects.filter(table=old)), b.pk)["mine"]
    books_balance()


def test_everyone_accepting_starts_it_at_once_with_the_same_people_and_no_bots() -> None:
    old, (a, b, c) = finished(stake=500)
    before = balances([a, b, c])
    new = rematch.do_offer_rematch(old.pk, a)
    assert rematch.do_accept_rematch(old.pk, c).pk == new.pk
    assert Table.objects.get(pk=new.pk).status == Table.Status.WAITING
    refused(lambda: rematch.do_accept_rematch(old.pk, c), "already_seated")
    # proposing again is accepting: the last one in, and it starts
    assert rematch.do_offer_rematch(old.pk, b).pk == new.pk
    new.refresh_from_db()
    seats = list(Seat.objects.filter(table=new))
    assert new.status == Table.Status.PLAYING and new.fill_at is None and new.round_number == 1
    assert not any(s.is_bot for s in seats) and {s.user_id for s in seats} == {a.pk, b.pk, c.pk}
    assert balances([a, b, c]) == [x - 500 for x in before] and pot(new) == 1500
    assert Table.objects.filter(rematch_of=old).count() == 1
    refused(lambda: rematch.do_accept_rematch(old.pk, a), "already_seated")  # a late second click
    refused(lambda: rematch.do_decline_rematch(old.pk, a), "already_seated")
    play_to_the_end(new.pk)
    books_balance()


def test_someone_who_never_accepts_gets_a_bot_after_the_wait(settings: Any) -> None:
    settings.POCHA_REMATCH_WAIT = 5
    old, (a, b, c) = finished(stake=100)
    new = rematch.do_offer_rematch(old.pk, a)
    rematch.do_accept_rematch(old.pk, b)
    new.refresh_from_db()
    assert new.status == Table.Status.WAITING
    assert actions.do_due(new.pk, new.seq) is None  # not due yet
    assert new.due_at == new.fill_at and timedelta(seconds=4) < new.fill_at - timezone.now() <= timedelta(seconds=5)
    past = timezone.now() - timedelta(seconds=1)
    Table.objects.filter(pk=new.pk).update(fill_at=past, due_at=past)  # the wait is over
    assert actions.do_due(new.pk, new.seq) is not None
    new.refresh_from_db()
    seats = list(Seat.objects.filter(table=new))
    assert new.status == Table.Status.PLAYING
    assert [(s.user_id, s.is_bot) for s in seats] == [(a.pk, False), (b.pk, False), (None, True)]
    assert pot(new) == 300 and Account.objects.get(kind=Account.Kind.HOUSE).balance <= -100
    error = refused(lambda: rematch.do_accept_rematch(old.pk, c), "rematch_started")
    assert error.message("es") == "La revancha ya ha empezado."
    assert "La revancha ya ha empezado." in fragment(old, c)
    books_balance()


def test_no_thanks_starts_it_at_once_with_a_bot_for_whoever_declined() -> None:
    old, (a, b, c) = finished(stake=0)
    new = rematch.do_offer_rematch(old.pk, a)
    rematch.do_decline_rematch(old.pk, c)
    ctx = rematch_context(old, list(Seat.objects.filter(table=old)), c.pk)
    assert ctx["declined"] == [c.username] and ctx["waiting"] == [b.username] and ctx["i_declined"]
    assert Table.objects.get(pk=new.pk).status == Table.Status.WAITING  # b may still come
    rematch.do_accept_rematch(old.pk, b)
    new.refresh_from_db()
    assert new.status == Table.Status.PLAYING
    assert [(s.user_id, s.is_bot) for s in Seat.objects.filter(table=new)] == [
        (a.pk, False),
        (b.pk, False),
        (None, True),
    ]
    books_balance()


def test_two_proposals_at_once_make_one_rematch() -> None:
    old, (a, b, c) = finished(stake=100)
    before = balances([a, b, c])
    results = race(lambda: rematch.do_offer_rematch(old.pk, a), lambda: rematch.do_offer_rematch(old.pk, b))
    assert [kind for kind, _value in results] == ["ok", "ok"], results
    new = Table.objects.get(rematch_of=old)
    assert results[0][1].pk == results[1][1].pk == new.pk
    assert Table.objects.filter(status=Table.Status.WAITING).count() == 1
    assert sorted(Seat.objects.filter(table=new).values_list("user_id", flat=True)) == sorted([a.pk, b.pk])
    assert balances([a, b, c]) == [before[0] - 100, before[1] - 100, before[2]] and pot(new) == 200
    # and the last two at once: one of them starts it, the other is then refused
    results = race(lambda: rematch.do_accept_rematch(old.pk, c), lambda: rematch.do_offer_rematch(old.pk, c))
    kinds = sorted(kind for kind, _value in results)
    assert kinds == ["ok", "refused"], results
    # (which refusal depends on what the loser read first: on SQLite, without row locks, either)
    assert next(v for k, v in results if k == "refused").code in ("already_seated", "rematch_started")
    assert Table.objects.get(pk=new.pk).status == Table.Status.PLAYING and pot(new) == 300
    books_balance()


# -- who may not -------------------------------------------------------------------------------


def test_a_stranger_is_refused_everywhere_and_nothing_changes() -> None:
    old, (a, b, c) = finished(stake=100)
    stranger = person("forastera")
    refused(lambda: rematch.do_accept_rematch(old.pk, stranger), "rematch_only")  # before any offer too
    new = rematch.do_offer_rematch(old.pk, a)
    before = everything()
    for call in (
        lambda: rematch.do_accept_rematch(old.pk, stranger),
        lambda: rematch.do_offer_rematch(old.pk, stranger),
        lambda: rematch.do_decline_rematch(old.pk, stranger),
        lambda: actions.do_take_seat(new.pk, stranger),
    ):
        assert refused(call, "rematch_only").message("es") == REMATCH_ONLY
    assert not access.can_sit(new, stranger)
    assert access.can_view(new, stranger)  # a public rematch can be watched
    assert rematch_context(old, list(Seat.objects.filter(table=old)), stranger.pk) is None
    # over HTTP: the seat form of the rematch's own page and the rematch form of the old one
    client = browser(stranger)
    assert page_messages(client.post(f"/mesa/{new.pk}/sentarse/", follow=True)) == [REMATCH_ONLY]
    response = client.post(f"/mesa/{old.pk}/revancha/", follow=True)
    assert response.redirect_chain[-1][0] == f"/mesa/{old.pk}/" and page_messages(response) == [REMATCH_ONLY]
    assert everything() == before
    assert ledger.balance(stranger.pk) == WELCOME
    books_balance()


def test_a_private_rematch_seats_its_players_without_the_code_and_nobody_else() -> None:
    old, (host, guest, third) = finished(stake=100, public=False)
    new = rematch.do_offer_rematch(old.pk, guest)
    new.refresh_from_db()
    assert not new.is_public and new.code and new.code != old.code and new.created_by_id == guest.pk
    stranger = person("fisgona")
    before = everything()
    # without the code a private table does not exist; with it, the rematch is still only theirs
    assert refused(lambda: actions.do_take_seat(new.pk, stranger), "unknown_table")
    assert refused(lambda: actions.do_take_seat(new.pk, stranger, code=new.code), "rematch_only")
    assert refused(lambda: rematch.do_accept_rematch(old.pk, stranger), "unknown_table")
    assert browser(stranger).get(f"/mesa/{new.pk}/").status_code == 404
    assert everything() == before
    assert browser(host).get(f"/mesa/{new.pk}/").status_code == 200  # a player of the original, while it waits
    actions.do_take_seat(new.pk, host)  # the seat form works too, without the code
    rematch.do_accept_rematch(old.pk, third)
    assert Table.objects.get(pk=new.pk).status == Table.Status.PLAYING
    books_balance()


def test_without_the_chips_the_ledgers_error_and_nothing_changes() -> None:
    old, (a, b, c) = finished(stake=2000)
    for user in (a, b):
        ledger.adjust(user.pk, -ledger.balance(user.pk) + 1999, "prueba", f"poor:{user.pk}")
    before = everything()
    error = refused(lambda: rematch.do_offer_rematch(old.pk, a), "chips")
    assert error.message("es").startswith("No tienes fichas suficientes: tienes 1999 y esta mesa pide 2000.")
    assert everything() == before and not Table.objects.filter(rematch_of=old).exists()
    new = rematch.do_offer_rematch(old.pk, c)
    before = everything()
    error = refused(lambda: rematch.do_accept_rematch(old.pk, b), "chips")
    assert error.message("es").startswith("No tienes fichas suficientes: tienes 1999 y esta mesa pide 2000.")
    assert everything() == before
    assert Seat.objects.filter(table=new).count() == 1
    books_balance()


def test_a_suspended_player_is_refused() -> None:
    old, (a, b, c) = finished(stake=100)
    moderator = person("moderadora")
    moderation.suspend(b.pk, moderator, "insultos en la mesa")
    before = everything()
    for call in (lambda: rematch.do_offer_rematch(old.pk, b), lambda: rematch.do_accept_rematch(old.pk, b)):
        assert refused(call, "suspended").message("es") == "Tu cuenta está suspendida: insultos en la mesa"
    assert everything() == before
    new = rematch.do_offer_rematch(old.pk, a)
    before = everything()
    refused(lambda: rematch.do_accept_rematch(old.pk, b), "suspended")
    refused(lambda: actions.do_take_seat(new.pk, b), "suspended")
    assert everything() == before
    books_balance()


def test_only_a_finished_game_and_only_once_offered() -> None:
    table_id, (a, b, c) = seated_table(3, 3, prefix="vivo")
    refused(lambda: rematch.do_offer_rematch(table_id, a), "not_finished")
    old = play_to_the_end(table_id)
    error = refused(lambda: rematch.do_accept_rematch(old.pk, a), "no_rematch")
    assert error.message("es") == "Nadie ha propuesto la revancha de esta partida."
    refused(lambda: rematch.do_decline_rematch(old.pk, a), "no_rematch")
    refused(lambda: rematch.do_offer_rematch(10_000_000, a), "unknown_table")


def test_without_bots_there_is_no_clock_and_the_proposer_hosts_it(settings) -> None:
    old, (host, b, c) = finished(stake=0, public=False, bots=False)
    new = rematch.do_offer_rematch(old.pk, b)
    new.refresh_from_db()
    # No bots to fill it: only the waiting tables' time limit (it is called off if nobody starts it).
    assert not new.bots_allowed and new.fill_at is None
    assert new.due_at is not None and new.due_at > timezone.now() + timedelta(seconds=settings.POCHA_WAITING_TTL - 60)
    rematch.do_decline_rematch(old.pk, c)  # nobody to take the empty seat: it waits for the host
    rematch.do_accept_rematch(old.pk, host)
    assert Table.objects.get(pk=new.pk).status == Table.Status.WAITING
    refused(lambda: actions.do_start(new.pk, host), "not_host")
    refused(lambda: actions.do_start(new.pk, b), "need_players")
    actions.do_cancel(new.pk, b)
    assert Table.objects.get(pk=new.pk).status == Table.Status.CANCELLED
    error = refused(lambda: rematch.do_accept_rematch(old.pk, c), "rematch_cancelled")
    assert error.message("es") == "La revancha se ha cancelado."
    assert "La revancha se ha cancelado." in fragment(old, c)
    books_balance()


def test_quick_play_never_seats_a_stranger_at_a_public_rematch() -> None:
    old, (a, b, c) = finished(stake=100, quick=True)
    assert old.is_quick and old.is_public
    new = rematch.do_offer_rematch(old.pk, a)
    assert Table.objects.get(pk=new.pk).is_quick
    stranger = person("prisas")
    mine = actions.do_quick_play(stranger, 3, 100)
    assert mine.pk != new.pk and mine.rematch_of_id is None
    assert list(Seat.objects.filter(table=new).values_list("user_id", flat=True)) == [a.pk]
    # and the open-tables list (the lobby's, and its refresh) does not show it
    lobby = browser(stranger).get("/mesas/abiertas/").content.decode()
    assert f"Mesa {new.pk}:" not in lobby and f"Mesa {mine.pk}:" in lobby
    books_balance()


# -- the HTTP views -------------------------------------------------------------------------------


def test_the_views_post_only_with_csrf_and_go_to_the_rematch() -> None:
    old, (a, b, c) = finished(stake=100)
    before = everything()
    strict = browser(a, csrf=True)
    assert strict.post(f"/mesa/{old.pk}/revancha/").status_code == 403  # no token
    assert strict.post(f"/mesa/{old.pk}/revancha/no/").status_code == 403
    assert browser(a).get(f"/mesa/{old.pk}/revancha/").status_code == 405
    assert browser(a).get(f"/mesa/{old.pk}/revancha/no/").status_code == 405
    assert Client().post(f"/mesa/{old.pk}/revancha/").status_code == 302  # to the login page
    assert everything() == before
    # the page drawn for the player carries the form with its token
    page = strict.get(f"/mesa/{old.pk}/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    response = strict.post(f"/mesa/{old.pk}/revancha/", {"csrfmiddlewaretoken": token})
    new = Table.objects.get(rematch_of=old)
    assert response.status_code == 302 and response["Location"] == f"/mesa/{new.pk}/"
    # a form drawn over the socket has no token field: htmx sends the page's token as a header
    htmx = browser(b, csrf=True)
    htmx.get(f"/mesa/{old.pk}/")
    header_token = htmx.cookies["csrftoken"].value
    response = htmx.post(f"/mesa/{old.pk}/revancha/", HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=header_token)
    assert response.status_code == 204 and response["HX-Redirect"] == f"/mesa/{new.pk}/"
    assert Seat.objects.filter(table=new, user=b).exists()
    # a second click goes to it quietly
    response = browser(b).post(f"/mesa/{old.pk}/revancha/", follow=True)
    assert response.redirect_chain[-1][0] == f"/mesa/{new.pk}/" and page_messages(response) == []
    # no, thanks: back to the lobby; and then it has started, which the old page says
    response = browser(c).post(f"/mesa/{old.pk}/revancha/no/")
    assert response.status_code == 302 and response["Location"] == "/"
    assert Table.objects.get(pk=new.pk).status == Table.Status.PLAYING
    response = browser(c).post(f"/mesa/{old.pk}/revancha/", follow=True)
    assert response.redirect_chain[-1][0] == f"/mesa/{old.pk}/"
    assert page_messages(response) == ["La revancha ya ha empezado."]
    books_balance()


def test_a_private_tables_rematch_form_does_not_exist_for_others() -> None:
    old, (host, b, c) = finished(stake=0, public=False)
    stranger = person("curiosa")
    response = browser(stranger).post(f"/mesa/{old.pk}/revancha/", follow=True)
    assert response.redirect_chain[-1][0] == "/" and page_messages(response) == ["Esa mesa no existe."]
    assert not Table.objects.filter(rematch_of=old).exists()


# -- what the final screen shows -------------------------------------------------------------------


def _no_card_in(text: str) -> None:
    for card in ALL_CARDS:
        assert not re.search(rf"(?<![\w/-]){re.escape(str(card))}(?![\w-])", text), (str(card), text)
        for name in (card.name_es, card.name_en):
            assert name.lower() not in text.lower(), (name, text)


def test_the_rematch_box_for_each_player_names_no_card() -> None:
    old, (a, b, c) = finished(stake=100)
    spectator = person("mirona")
    assert rematch_context(old, list(Seat.objects.filter(table=old)), spectator.pk) is None
    assert fragment(old, spectator).strip() == ""
    first = fragment(old, a)
    assert re.search(r'<button type="submit" class="button">\s*Revancha\s*</button>', first)
    assert "Misma mesa, mismas opciones: empieza cuando aceptéis." in first
    assert f'action="/mesa/{old.pk}/revancha/"' in first and f'hx-post="/mesa/{old.pk}/revancha/"' in first
    _no_card_in(first)
    new = rematch.do_offer_rematch(old.pk, a)
    mine, theirs = fragment(old, a), fragment(old, b)
    assert "Ir a la revancha" in mine and f'href="/mesa/{new.pk}/"' in mine
    assert f"Faltan: {b.username}, {c.username}" in mine
    assert f"{a.username} propone la revancha" in theirs
    assert "Aceptar la revancha" in theirs and "No, gracias" in theirs
    assert f"Han aceptado: {a.username}" in theirs and f"Faltan: {b.username}, {c.username}" in theirs
    rematch.do_accept_rematch(old.pk, b)
    assert f"Falta: {c.username}" in fragment(old, c)
    for user in (a, b, c):
        _no_card_in(fragment(old, user))
    # the context itself: names and a status only
    ctx = rematch_context(old, list(Seat.objects.filter(table=old)), c.pk)
    assert set(ctx) >= {"offered", "table_id", "by", "seated", "waiting", "mine", "status"}
    _no_card_in(repr(ctx))
