"""Moderation in the admin, as a moderator would do it (the Django test client, the admin's own forms):
suspending and lifting, adjusting chips, cancelling a running game; every step logged with who, when
and why, and refused (403) to staff without its permission.  The suspended player's side is checked
through the real site and the real socket."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.test import Client
from live.helpers import Tab, person

from accounts import ledger, moderation
from accounts.models import Account, Profile, Transaction
from games.engine import default_action
from games.engine.snapshot import load
from games.models import Round, Seat, Table
from games.table import access, actions
from games.table.errors import ActionError

REASON = "insultos en el chat de la mesa 7"
SUSPENDED = f"Tu cuenta está suspendida: {REASON}"
MODERATOR_PERMISSIONS = [
    ("auth", "view_user"),
    ("accounts", "suspend_user"),
    ("accounts", "adjust_chips"),
    ("games", "view_table"),
    ("games", "cancel_table"),
]


# -- people and pages ----------------------------------------------------------------------


def staff(name: str, permissions: list[tuple[str, str]]) -> Any:
    user = person(name)
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.user_permissions.set(
        [Permission.objects.get(content_type__app_label=app, codename=codename) for app, codename in permissions]
    )
    return user


def browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def admin_messages(response: Any) -> list[str]:
    return [str(m.message) for m in get_messages(response.wsgi_request)]


def page_messages(response: Any) -> list[str]:
    return [
        html.unescape(m).strip()
        for m in re.findall(r'<ul class="messages">\s*<li[^>]*>(.*?)</li>', response.content.decode(), re.S)
    ]


def banner(response: Any) -> str | None:
    match = re.search(r'<ul class="messages suspension"[^>]*>\s*<li[^>]*>(.*?)</li>', response.content.decode(), re.S)
    return html.unescape(match.group(1)).strip() if match else None


def log_lines(obj: Any) -> list[tuple[int, str]]:
    return list(
        LogEntry.objects.filter(object_id=str(obj.pk), content_type__model=obj._meta.model_name)
        .order_by("pk")
        .values_list("user_id", "change_message")
    )


def running_table(host: Any, *, stake: int = 0, guests: tuple[Any, ...] = ()) -> Table:
    """A table of 3 started with bots in the empty seats, ``host`` at seat 0."""
    table = actions.do_create_table(host, 3, stake=stake)
    for guest in guests:
        actions.do_take_seat(table.pk, guest)
    actions.do_start(table.pk, host)
    return Table.objects.get(pk=table.pk)


def play_some(table_id: int, users: list[Any], moves: int) -> None:
    """``moves`` turns played with the default move (people through do_action, bots through do_due)."""
    by_id = {u.pk: u for u in users}
    for _ in range(moves):
        table = Table.objects.get(pk=table_id)
        seat = Seat.objects.get(table_id=table_id, position=table.turn_seat)
        if seat.is_bot or seat.away:
            Table.objects.filter(pk=table_id).update(due_at=table.due_at.replace(year=2000))
            assert actions.do_due(table_id, table.seq) is not None
        else:
            actions.do_action(table_id, by_id[seat.user_id], default_action(load(table.state)), table.seq)


@pytest.fixture
def moderator(db: Any) -> Any:
    return staff("moderadora", MODERATOR_PERMISSIONS)


# -- suspension ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_suspension_with_its_reason_stands_the_player_up_and_is_logged_and_lifted(
    moderator: Any, monkeypatch: Any
) -> None:
    player, host, other = person("tahur"), person("anfitriona"), person("otra")
    # A running game and a waiting seat at once, as a player may still hold from before one live table
    # each (the rule is set aside to seat them): a suspension stands them up from both.
    with monkeypatch.context() as before_the_rule:
        before_the_rule.setattr(access, "live_table", lambda *args, **kwargs: None)
        running = running_table(player, stake=100)
        waiting = actions.do_create_table(host, 4, stake=500)
        actions.do_take_seat(waiting.pk, player)
    assert ledger.balance(player.pk) == 5_000 - 100 - 500
    running_seq = running.seq
    admin = browser(moderator)

    # The action on the list asks for the reason on a page of its own, then suspends.
    form = admin.post("/admin/auth/user/", {"action": "suspend_users", "_selected_action": [player.pk], "index": 0})
    assert form.status_code == 200 and "Motivo" in form.content.decode() and "tahur" in form.content.decode()
    assert not Profile.objects.filter(user=player, suspended_at__isnull=False).exists()  # not until confirmed
    empty = admin.post(
        "/admin/auth/user/",
        {"action": "suspend_users", "_selected_action": [player.pk], "confirm": "yes", "reason": "  "},
    )
    assert empty.status_code == 200 and "errorlist" in empty.content.decode()  # a reason is required
    done = admin.post(
        "/admin/auth/user/",
        {"action": "suspend_users", "_selected_action": [player.pk], "confirm": "yes", "reason": REASON},
    )
    assert done.status_code == 302, done.content.decode()[:2000]
    profile = Profile.objects.get(user=player)
    assert profile.suspended_at is not None and profile.suspended_reason == REASON
    assert profile.suspended_by_id == moderator.pk
    entry = LogEntry.objects.get(object_id=str(player.pk), content_type__model="user")
    assert entry.user_id == moderator.pk and REASON in entry.get_change_message() and entry.action_time is not None

    # The waiting seat was given up with its stake back; the running seat is the bot's, at once.
    assert not Seat.objects.filter(table=waiting, user=player).exists()
    assert ledger.balance(player.pk) == 5_000 - 100
    seat = Seat.objects.get(table=running, user=player)
    assert seat.left and seat.away
    assert seat.forfeit == Seat.Forfeit.LEFT  # made to leave is leaving: ranked last at the end
    running.refresh_from_db()
    assert running.seq == running_seq + 1 and running.status == Table.Status.PLAYING
    if running.turn_seat == seat.position:
        assert running.turn_deadline is None and running.due_at is not None  # the bot's short pause, no clock
    assert ledger.audit() == []

    # Every door to a seat or a move says why.
    site = browser(player)
    response = site.post(f"/mesa/{waiting.pk}/sentarse/", follow=True)
    assert page_messages(response) == [SUSPENDED] and not Seat.objects.filter(table=waiting, user=player).exists()
    response = site.post("/jugar/", {"size": "4", "stake": "0"}, follow=True)
    assert page_messages(response) == [SUSPENDED]
    assert not Table.objects.filter(seats__user=player, status=Table.Status.WAITING).exists()
    assert banner(site.get("/")) == SUSPENDED  # on every page, while it lasts
    assert banner(browser(other).get("/")) is None
    for attempt in (
        lambda: actions.do_create_table(player, 3),
        lambda: actions.do_quick_play(player, 3),
        lambda: actions.do_take_seat(waiting.pk, player),
        lambda: actions.do_back(running.pk, player),
        lambda: actions.do_action(running.pk, player, default_action(load(running.state)), running.seq),
    ):
        with pytest.raises(ActionError) as refused:
            attempt()
        assert refused.value.code == "suspended" and refused.value.message("es") == SUSPENDED
    assert Seat.objects.filter(user=player).count() == 1

    # Lifting it: the button on the player's page, with its own reason, logged; they play again.
    page = admin.get(f"/admin/auth/user/{player.pk}/change/").content.decode()
    assert "Levantar la suspensión" in page and REASON in page
    assert admin.get(f"/admin/auth/user/{player.pk}/levantar-suspension/").status_code == 200
    lifted = admin.post(
        f"/admin/auth/user/{player.pk}/levantar-suspension/", {"confirm": "yes", "reason": "recurso aceptado"}
    )
    assert lifted.status_code == 302 and lifted["Location"] == f"/admin/auth/user/{player.pk}/change/"
    profile.refresh_from_db()
    assert profile.suspended_at is None and profile.suspended_reason == ""
    assert [m for _, m in log_lines(player)][-1].startswith("Suspensión levantada: recurso aceptado")
    assert banner(site.get("/")) is None
    response = site.post(f"/mesa/{waiting.pk}/sentarse/", follow=True)
    assert page_messages(response) == [] and Seat.objects.filter(table=waiting, user=player).exists()
    with pytest.raises(ActionError) as refused:  # one live table each: not while seated at the waiting one
        actions.do_back(running.pk, player)
    assert refused.value.code == "live_elsewhere"
    actions.do_leave_seat(waiting.pk, player)
    actions.do_back(running.pk, player)  # "Vuelvo": the running seat is theirs again
    seat.refresh_from_db()
    assert not seat.left and not seat.away
    assert seat.forfeit == Seat.Forfeit.LEFT  # but the forfeit stands
    assert ledger.audit() == []


@pytest.mark.django_db
def test_a_suspended_host_calls_off_their_private_table_and_nobody_suspends_themselves(moderator: Any) -> None:
    host, guest = person("anfitrion"), person("invitado")
    table = actions.do_create_private_table(host, 3, 500, bots_allowed=True)
    actions.do_take_seat(table.pk, guest, code=table.code)
    response = browser(moderator).post(f"/admin/auth/user/{host.pk}/suspender/", {"confirm": "yes", "reason": REASON})
    assert response.status_code == 302
    table.refresh_from_db()
    assert table.status == Table.Status.CANCELLED
    assert ledger.balance(host.pk) == ledger.balance(guest.pk) == 5_000 and ledger.audit() == []
    mine = browser(moderator).post(f"/admin/auth/user/{moderator.pk}/suspender/", {"confirm": "yes", "reason": "x"})
    assert mine.status_code == 302 and admin_messages(mine) == ["moderadora: No puedes suspenderte a ti mismo."]
    assert not Profile.objects.filter(user=moderator, suspended_at__isnull=False).exists()


# -- chips ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_adjustment_is_a_ledger_transaction_with_its_reason_and_a_log_line(moderator: Any) -> None:
    player = person("compensada")
    admin = browser(moderator)
    page = admin.get(f"/admin/auth/user/{player.pk}/ajustar-fichas/")
    assert page.status_code == 200 and 'name="amount"' in page.content.decode()
    for bad in ({"amount": "0", "reason": "nada"}, {"amount": "abc", "reason": "nada"}, {"amount": "10", "reason": ""}):
        again = admin.post(f"/admin/auth/user/{player.pk}/ajustar-fichas/", {"confirm": "yes", **bad})
        assert again.status_code == 200 and "errorlist" in again.content.decode()
    assert not Transaction.objects.filter(kind="adjustment").exists()

    done = admin.post(
        f"/admin/auth/user/{player.pk}/ajustar-fichas/",
        {"confirm": "yes", "amount": "250", "reason": "caída del servidor en la mesa 12"},
    )
    assert done.status_code == 302
    record = Transaction.objects.get(kind="adjustment")
    assert record.note == "caída del servidor en la mesa 12"
    assert sorted(record.entries.values_list("amount", flat=True)) == [-250, 250]
    assert ledger.balance(player.pk) == 5_250
    ((who, message),) = log_lines(player)
    assert who == moderator.pk and "+250" in message and "caída del servidor en la mesa 12" in message

    # The same through the list's action; taking more than they have is refused and changes nothing.
    admin.post("/admin/auth/user/", {"action": "adjust_chips", "_selected_action": [player.pk], "index": 0})
    too_much = admin.post(
        "/admin/auth/user/",
        {
            "action": "adjust_chips",
            "_selected_action": [player.pk],
            "confirm": "yes",
            "amount": "-6000",
            "reason": "fraude",
        },
    )
    assert too_much.status_code == 302
    assert admin_messages(too_much) == ["compensada: compensada tiene 5250 fichas: no se le pueden quitar 6000."]
    assert ledger.balance(player.pk) == 5_250 and Transaction.objects.filter(kind="adjustment").count() == 1
    taken = admin.post(
        "/admin/auth/user/",
        {
            "action": "adjust_chips",
            "_selected_action": [player.pk],
            "confirm": "yes",
            "amount": "-5250",
            "reason": "fraude",
        },
    )
    assert taken.status_code == 302 and ledger.balance(player.pk) == 0
    assert len(log_lines(player)) == 2 and ledger.audit() == []
    # The balance itself stays read-only.
    account = Account.objects.get(user=player)
    edit = admin.post(f"/admin/accounts/account/{account.pk}/change/", {"balance": "99999", "kind": "user"})
    assert edit.status_code == 403 and ledger.balance(player.pk) == 0


# -- cancelling a game ---------------------------------------------------------------------


@pytest.mark.django_db
def test_cancelling_a_running_staked_game_refunds_every_stake_once(moderator: Any) -> None:
    host, guest = person("uno"), person("dos")
    house_before = ledger.house_account().balance
    table = running_table(host, stake=500, guests=(guest,))
    play_some(table.pk, [host, guest], 7)
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING and Account.objects.get(table=table).balance == 1_500
    admin = browser(moderator)
    page = admin.get(f"/admin/games/table/{table.pk}/change/").content.decode()
    assert f"/admin/games/table/{table.pk}/cancelar/" in page and f'href="/mesa/{table.pk}/"' in page

    done = admin.post(f"/admin/games/table/{table.pk}/cancelar/", {"confirm": "yes", "reason": "trampas con bots"})
    assert done.status_code == 302
    table.refresh_from_db()
    assert table.status == Table.Status.CANCELLED
    assert table.due_at is None and table.turn_deadline is None
    assert Account.objects.get(table=table).balance == 0
    assert ledger.balance(host.pk) == ledger.balance(guest.pk) == 5_000
    assert ledger.house_account().balance == house_before  # the bot's stake went back to the house
    assert Transaction.objects.filter(table=table, kind="refund").count() == 3
    assert ledger.audit() == []
    ((who, message),) = log_lines(table)
    assert who == moderator.pk and message == "Partida cancelada: trampas con bots"

    # A second cancel (the list's action this time) is refused and moves nothing.
    before = (sorted(Account.objects.values_list("pk", "balance")), Transaction.objects.count(), table.seq)
    again = admin.post(
        "/admin/games/table/",
        {"action": "cancel_tables", "_selected_action": [table.pk], "confirm": "yes", "reason": "otra vez"},
    )
    assert again.status_code == 302
    assert (
        admin_messages(again)[-1] == f"{Table.objects.get(pk=table.pk)}: Esta partida ya ha terminado o está cancelada."
    )
    table.refresh_from_db()
    assert (sorted(Account.objects.values_list("pk", "balance")), Transaction.objects.count(), table.seq) == before
    assert len(log_lines(table)) == 1
    with pytest.raises(ActionError):
        actions.do_admin_cancel(table.pk, moderator, "y otra")

    # The table's page: cancelled, no winner, no move to make, whoever looks.
    assert "Cancelar la partida" not in admin.get(f"/admin/games/table/{table.pk}/change/").content.decode()
    for user in (host, guest):
        board = browser(user).get(f"/mesa/{table.pk}/").content.decode()
        assert "Partida cancelada" in board and "Se han devuelto las apuestas." in board
        assert "ganador" not in board and "Clasificación final" not in board
        assert "ws-send" not in board.split('id="controls"')[1].split("</section>")[0]
        assert 'class="card playable"' not in board


@pytest.mark.django_db
def test_a_waiting_table_can_be_cancelled_too(moderator: Any) -> None:
    host = person("espera")
    table = actions.do_create_table(host, 4, stake=100)
    response = browser(moderator).post(
        "/admin/games/table/", {"action": "cancel_tables", "_selected_action": [table.pk], "index": 0}
    )
    assert response.status_code == 200 and "Motivo" in response.content.decode()
    response = browser(moderator).post(
        "/admin/games/table/",
        {"action": "cancel_tables", "_selected_action": [table.pk], "confirm": "yes", "reason": "mesa de prueba"},
    )
    assert response.status_code == 302
    assert Table.objects.get(pk=table.pk).status == Table.Status.CANCELLED and ledger.balance(host.pk) == 5_000


# -- who may do it -------------------------------------------------------------------------


@pytest.mark.django_db
def test_staff_without_the_permission_get_403_and_nothing_changes(moderator: Any) -> None:
    onlooker = staff("mirona", [("auth", "view_user"), ("games", "view_table")])
    player = person("jugadora")
    table = running_table(player, stake=100)
    moderation.suspend(player.pk, moderator, REASON)
    other = person("otro")
    admin = browser(onlooker)

    def state() -> Any:
        return (
            sorted(Account.objects.values_list("pk", "balance")),
            Transaction.objects.count(),
            sorted(Profile.objects.values_list("user_id", "suspended_reason")),
            sorted(Table.objects.values_list("pk", "status", "seq")),
            LogEntry.objects.count(),
        )

    before = state()
    for url, data in (
        (f"/admin/auth/user/{other.pk}/suspender/", {"reason": "x"}),
        (f"/admin/auth/user/{player.pk}/levantar-suspension/", {"reason": "x"}),
        (f"/admin/auth/user/{other.pk}/ajustar-fichas/", {"amount": "100", "reason": "x"}),
        (f"/admin/games/table/{table.pk}/cancelar/", {"reason": "x"}),
    ):
        assert admin.get(url).status_code == 403, url
        assert admin.post(url, {"confirm": "yes", **data}).status_code == 403, url
    # The list's actions are not offered to them, and posting one anyway does nothing.
    users_page = admin.get("/admin/auth/user/").content.decode()
    assert "suspend_users" not in users_page and "adjust_chips" not in users_page
    assert "cancel_tables" not in admin.get("/admin/games/table/").content.decode()
    for url, action, pk in (
        ("/admin/auth/user/", "suspend_users", other.pk),
        ("/admin/auth/user/", "lift_suspensions", player.pk),
        ("/admin/auth/user/", "adjust_chips", other.pk),
        ("/admin/games/table/", "cancel_tables", table.pk),
    ):
        admin.post(url, {"action": action, "_selected_action": [pk], "confirm": "yes", "reason": "x", "amount": "100"})
    assert state() == before
    # A person's page shows them no moderation buttons.
    page = admin.get(f"/admin/auth/user/{player.pk}/change/").content.decode()
    assert "/suspender/" not in page and "/ajustar-fichas/" not in page and "/levantar-suspension/" not in page
    # People who are not staff do not reach the admin at all.
    assert browser(other).get(f"/admin/auth/user/{player.pk}/suspender/").status_code == 302
    assert state() == before


@pytest.mark.django_db
def test_game_rows_are_read_only_in_the_admin_and_speak_spanish(django_user_model: Any) -> None:
    boss = django_user_model.objects.create_superuser(username="jefa", password=None, email="")
    player = person("lector")
    table = running_table(player, stake=100)
    admin = browser(boss)
    page = admin.get(f"/admin/games/table/{table.pk}/change/")
    assert page.status_code == 200
    before = Table.objects.filter(pk=table.pk).values().get()
    changed = admin.post(f"/admin/games/table/{table.pk}/change/", {"size": "6", "status": "cancelled"})
    assert changed.status_code == 403
    assert admin.post(f"/admin/games/table/{table.pk}/delete/", {"post": "yes"}).status_code == 403
    assert admin.get("/admin/games/table/add/").status_code == 403
    assert Table.objects.filter(pk=table.pk).values().get() == before
    round_row = Round.objects.get(table=table, number=1)
    assert admin.post(f"/admin/games/round/{round_row.pk}/change/", {"dealer": "2"}).status_code == 403

    tables = admin.get("/admin/games/table/").content.decode()
    assert "Partida rápida" in tables and "Is quick" not in tables
    rounds = admin.get("/admin/games/round/").content.decode()
    assert f"Ronda 1 de la mesa {table.pk}" in rounds and "Round object" not in rounds
    assert str(table) == f"Mesa {table.pk} (3 jugadores, en juego)"
    for url in (
        "/admin/games/bid/",
        "/admin/games/trick/",
        "/admin/games/play/",
        "/admin/accounts/account/",
        "/admin/accounts/transaction/",
        "/admin/",
    ):
        content = admin.get(url).content.decode()
        assert " object (" not in content, url

    # A finished table links its page, its replay and its record.
    finished = running_table(person("final"))
    Table.objects.filter(pk=finished.pk).update(status=Table.Status.FINISHED)
    page = admin.get(f"/admin/games/table/{finished.pk}/change/").content.decode()
    for link in (f"/mesa/{finished.pk}/", f"/mesa/{finished.pk}/repeticion/", f"/mesa/{finished.pk}/partida.json"):
        assert f'href="{link}"' in page, link
    assert "/cancelar/" not in page


# -- the socket ------------------------------------------------------------------------------


@pytest.fixture
def fresh_channel_layer() -> Iterator[None]:
    """As in tests/live: every test runs on a new event loop, so each gets its own channel layer."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture
async def server_connections_closed() -> Any:
    """As in tests/live: close the connections the consumers' worker thread kept open (PostgreSQL's test
    database must have no session left at teardown)."""
    yield
    from django.db import connections

    await database_sync_to_async(connections.close_all)()


@pytest.mark.django_db(transaction=True)
async def test_a_suspension_closes_the_players_sockets_and_refuses_new_ones(
    fresh_channel_layer: None, server_connections_closed: None, settings: Any
) -> None:
    settings.POCHA_BOT_DELAY = 30  # nothing moves by itself while we look
    player, watcher = [await database_sync_to_async(person)(n) for n in ("suspendida", "mirona")]
    mod = await database_sync_to_async(staff)("moderador", MODERATOR_PERMISSIONS)
    table = await database_sync_to_async(running_table)(player)
    tabs = [Tab(player, table.pk), Tab(watcher, table.pk)]
    fresh = Tab(player, table.pk)
    try:
        for tab in tabs:
            assert await tab.open()
            await tab.wait_for(lambda tab=tab: tab.board)
        await asyncio.sleep(0.2)
        seen = len(tabs[0].frames)

        def suspend() -> int:
            return (
                browser(mod)
                .post(f"/admin/auth/user/{player.pk}/suspender/", {"confirm": "yes", "reason": REASON})
                .status_code
            )

        assert await database_sync_to_async(suspend)() == 302
        await tabs[0].wait_for(lambda: tabs[0].closed is not None)
        assert tabs[0].closed == 4403 and SUSPENDED in tabs[0].flashes(seen)
        # Everyone at the table sees the bot playing for her; the watcher's socket stays open.
        await tabs[1].wait_for(lambda: "juega el bot por suspendida" in tabs[1].board)
        assert tabs[1].closed is None

        # A fresh socket is told why and closed before it shows the table or takes a move.
        assert await fresh.open()
        await fresh.wait_for(lambda: fresh.closed is not None)
        assert fresh.closed == 4403 and fresh.flashes() == [SUSPENDED] and fresh.boards == []
        seat = await database_sync_to_async(Seat.objects.get)(table_id=table.pk, user=player)
        assert seat.left and seat.away
    finally:
        for tab in [*tabs, fresh]:
            await tab.close()


@pytest.mark.django_db(transaction=True)
async def test_a_cancelled_game_is_redrawn_on_every_seat(
    fresh_channel_layer: None, server_connections_closed: None, settings: Any
) -> None:
    settings.POCHA_BOT_DELAY = 30
    host, guest = [await database_sync_to_async(person)(n) for n in ("primera", "segunda")]
    mod = await database_sync_to_async(staff)("moderador", MODERATOR_PERMISSIONS)
    table = await database_sync_to_async(lambda: running_table(host, stake=500, guests=(guest,)))()
    tabs = [Tab(host, table.pk), Tab(guest, table.pk)]
    try:
        for tab in tabs:
            assert await tab.open()
            await tab.wait_for(lambda tab=tab: tab.board)
        await asyncio.sleep(0.2)

        def cancel() -> int:
            return (
                browser(mod)
                .post(f"/admin/games/table/{table.pk}/cancelar/", {"confirm": "yes", "reason": "partida amañada"})
                .status_code
            )

        assert await database_sync_to_async(cancel)() == 302
        for tab in tabs:
            await tab.wait_for(lambda tab=tab: "Partida cancelada" in tab.board)
            assert tab.game_moves() == [] and "ganador" not in tab.board
            assert 'data-chips="5000"' in tab.board  # the header's count, redrawn with the refund
            assert tab.closed is None
    finally:
        for tab in tabs:
            await tab.close()
    assert await database_sync_to_async(ledger.audit)() == []
