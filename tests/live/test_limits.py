"""Limits (issue 11): one live table per person, even under concurrency (threads and processes); waiting
tables that nobody starts are called off with every stake back; a move after its turn's deadline is
refused as late and the clock plays it; the lobby shows the refusals.

A person's live table is a waiting or running table where they have a seat they have not left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings as django_settings
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts import ledger
from accounts.models import Account
from accounts.models import Transaction as LedgerTransaction
from games.engine import default_action
from games.engine.snapshot import load
from games.live import loop as server_loop
from games.live import timers
from games.models import Move, Seat, Table
from games.table import actions
from games.table.actions import rematch
from games.web.views import open_tables

from .helpers import Tab, is_board, person, play_to_the_end, settle, table_fingerprint

pytestmark = pytest.mark.django_db(transaction=True)

WELCOME = ledger.WELCOME_CHIPS
LIVE_ELSEWHERE = "Ya estás jugando en otra mesa: termina o deja esa partida primero."


@pytest.fixture(autouse=True)
def manual_clock(monkeypatch, settings) -> list[tuple[int, int, Any]]:
    """Nothing runs due steps but the test (``timers.arm`` only records); bots move at once."""
    armed: list[tuple[int, int, Any]] = []
    monkeypatch.setattr(timers, "arm", lambda table_id, seq, due, **_kw: armed.append((table_id, seq, due)))
    monkeypatch.setattr(server_loop, "bind_loop", lambda: None)
    settings.POCHA_BOT_DELAY = 0
    return armed


def refused(call: Callable[[], Any], code: str) -> actions.ActionError:
    with pytest.raises(actions.ActionError) as caught:
        call()
    assert caught.value.code == code, caught.value
    return caught.value


def live_seats(user: Any) -> list[int]:
    return list(
        Seat.objects.filter(
            user=user, left=False, table__status__in=[Table.Status.WAITING, Table.Status.PLAYING]
        ).values_list("table_id", flat=True)
    )


def books() -> dict[str, Any]:
    return {
        "balances": dict(Account.objects.values_list("pk", "balance")),
        "transactions": LedgerTransaction.objects.count(),
    }


def books_balance() -> None:
    assert ledger.audit() == []


def in_threads(calls: list[Callable[[], Any]]) -> list[tuple[str, Any]]:
    """The calls in threads, each on its own database connection, released together."""
    barrier = threading.Barrier(len(calls))
    results: list[tuple[str, Any]] = [("missing", None)] * len(calls)

    def run(i: int, call: Callable[[], Any]) -> None:
        try:
            connection.ensure_connection()
            barrier.wait(timeout=20)
            results[i] = ("ok", call())
        except actions.ActionError as error:
            results[i] = ("refused", error)
        except BaseException as error:  # noqa: BLE001 (reported by the assertions)
            results[i] = ("crashed", error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a request never finished"
    assert not [r for r in results if r[0] in ("crashed", "missing")], results
    return results


# -- one live table per person, under concurrency -------------------------------------------------------


@pytest.mark.parametrize("waiting", [0, 2])
def test_eight_quick_plays_at_once_from_one_person_give_one_table(waiting: int) -> None:
    """Eight «Jugar ya» at the same moment (eight tabs): one seat, and every one of them answers with it
    (with no table waiting, and with two quick tables waiting for players)."""
    for round_number in range(3):
        for i in range(waiting):
            actions.do_quick_play(person(f"w{round_number}-{i}"), 5, 100)  # (one table: they are put together)
        someone = person(f"impaciente{round_number}")
        tables_before = Table.objects.count()
        results = in_threads([lambda: actions.do_quick_play(someone, 5, 100) for _ in range(8)])
        assert all(kind == "ok" for kind, _value in results), results
        table_ids = {value.pk for _kind, value in results}
        assert len(table_ids) == 1, (round_number, table_ids)
        assert live_seats(someone) == list(table_ids)
        assert Seat.objects.filter(user=someone).count() == 1
        assert ledger.balance(someone.pk) == WELCOME - 100  # one stake, held once
        assert Table.objects.count() == tables_before + (0 if waiting else 1)
        books_balance()
        # (start the shared table so the next round finds nobody waiting)
        Table.objects.filter(status=Table.Status.WAITING).update(due_at=timezone.now() - timedelta(seconds=1))
        actions.sweep()


def test_quick_play_create_and_sit_at_once_from_one_person_give_one_seat() -> None:
    """Every way in at once (quick play, a new public table, a new private one, a seat elsewhere): one
    seat; the others are refused as "live elsewhere" (quick play answers with the seat taken)."""
    for round_number in range(3):
        host = person(f"anfitriona{round_number}")
        other = actions.do_create_table(host, 4, stake=100)
        someone = person(f"todo{round_number}")
        results = in_threads(
            [
                lambda: actions.do_quick_play(someone, 3),
                lambda: actions.do_create_table(someone, 4),
                lambda: actions.do_create_private_table(someone, 3, 0, True),
                lambda: actions.do_take_seat(other.pk, someone),
                lambda: actions.do_quick_play(someone, 6, 500),
            ]
        )
        assert len(live_seats(someone)) == 1, (round_number, results)
        assert Seat.objects.filter(user=someone).count() == 1
        mine = live_seats(someone)[0]
        for kind, value in results:
            if kind == "refused":
                assert value.code == "live_elsewhere", results
            elif isinstance(value, Table):
                assert value.pk == mine, results
        books_balance()


# The subprocess: the same settings, the test's database (its name given here), «Jugar ya» from threads
# once the parent says go; it prints the ids it was given, or the codes of its refusals.
CHILD = r"""
import json, os, sys, threading
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pocha_site.settings")
from django.conf import settings
settings.DATABASES["default"]["NAME"] = sys.argv[1]
import django
django.setup()
from django.contrib.auth import get_user_model
from django.db import connection
from games.table import actions
from games.live import timers
timers.arm = lambda *args, **kwargs: None  # the parent test runs the clock
user = get_user_model().objects.get(pk=int(sys.argv[2]))
threads = int(sys.argv[3])
results = [None] * threads
barrier = threading.Barrier(threads + 1)

def run(i):
    try:
        connection.ensure_connection()
        barrier.wait(timeout=60)
        results[i] = actions.do_quick_play(user, 4, 500).pk
    except actions.ActionError as error:
        results[i] = "refused:" + error.code
    except BaseException as error:
        results[i] = "crashed:" + repr(error)
    finally:
        connection.close()

workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
for worker in workers:
    worker.start()
print("ready", flush=True)
sys.stdin.readline()  # the parent's go: every process at once
barrier.wait(timeout=60)
for worker in workers:
    worker.join(timeout=120)
print(json.dumps(results), flush=True)
"""


def test_quick_plays_at_once_from_two_processes_give_one_table() -> None:
    """Two server processes, four «Jugar ya» each, released together, against the same database (the
    suite's SQLite file, or PostgreSQL in services mode): one seat, one stake."""
    name = connection.settings_dict["NAME"]
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}  # no Celery clock in the children
    for round_number in range(2):
        host = person(f"espera{round_number}")
        waiting = actions.do_quick_play(host, 4, 500)  # a quick table waiting for players
        someone = person(f"dosprocesos{round_number}")
        children = [
            subprocess.Popen(
                [sys.executable, "-c", CHILD, str(name), str(someone.pk), "4"],
                cwd=str(django_settings.BASE_DIR),
                env=env,
                text=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(2)
        ]
        try:
            for child in children:
                assert child.stdout is not None
                line = child.stdout.readline()
                assert line.strip() == "ready", (line, child.stderr.read() if child.poll() is not None else "")
            for child in children:  # go
                assert child.stdin is not None
                child.stdin.write("go\n")
                child.stdin.flush()
            outputs = [child.communicate(timeout=180) for child in children]
        finally:
            for child in children:
                if child.poll() is None:
                    child.kill()
        results: list[Any] = []
        for (out, err), child in zip(outputs, children):
            assert child.returncode == 0, err
            results += json.loads(out.strip().splitlines()[-1])
        assert all(isinstance(r, int) for r in results), results
        assert set(results) == {waiting.pk}, results
        assert Seat.objects.filter(user=someone).count() == 1
        assert ledger.balance(someone.pk) == WELCOME - 500
        books_balance()
        Table.objects.filter(pk=waiting.pk).update(due_at=timezone.now() - timedelta(seconds=1))
        actions.sweep()  # bots fill it: the next round starts with no table waiting


# -- one live table per person: the rules -------------------------------------------------------------


def test_taking_a_seat_while_seated_elsewhere_is_refused_and_changes_nothing() -> None:
    ana, bea = person("ana"), person("bea")
    mine = actions.do_create_table(ana, 4, stake=500)
    theirs = actions.do_create_table(bea, 4, stake=500)
    private = actions.do_create_private_table(person("cris"), 3, 100, True)
    before, seats = books(), table_fingerprint(theirs.pk)
    error = refused(lambda: actions.do_take_seat(theirs.pk, ana), "live_elsewhere")
    assert error.message("es") == LIVE_ELSEWHERE
    refused(lambda: actions.do_take_seat(private.pk, ana, code=private.code), "live_elsewhere")
    assert books() == before and table_fingerprint(theirs.pk) == seats
    assert live_seats(ana) == [mine.pk] and ledger.balance(ana.pk) == WELCOME - 500
    # once she stands up (her own public table, nobody else at it: it is called off), she may sit
    actions.do_leave_seat(mine.pk, ana)
    actions.do_take_seat(theirs.pk, ana)
    assert live_seats(ana) == [theirs.pk] and ledger.balance(ana.pk) == WELCOME - 500
    books_balance()


def test_a_person_cannot_open_a_second_waiting_table() -> None:
    """Many «Nueva mesa» from one person: one waiting table (the open list is not theirs to fill)."""
    dani = person("dani")
    first = actions.do_create_table(dani, 4)
    tables_before = Table.objects.count()
    for _ in range(5):
        refused(lambda: actions.do_create_table(dani, 4), "live_elsewhere")
        refused(lambda: actions.do_create_private_table(dani, 3, 0, True), "live_elsewhere")
        refused(lambda: actions.do_create_table(dani, 3, stake=100), "live_elsewhere")
    assert Table.objects.count() == tables_before
    assert ledger.balance(dani.pk) == WELCOME
    # «Jugar ya» takes them back to the table they are at, of whatever kind
    assert actions.do_quick_play(dani, 5).pk == first.pk
    assert [row["table"].pk for row in open_tables(None)] == [first.pk]


def test_after_leaving_a_running_game_a_person_may_start_another_but_not_take_the_old_seat_back() -> None:
    eva = person("eva")
    old = actions.do_create_table(eva, 3, stake=100)
    actions.do_start(old.pk, eva)
    assert actions.do_quick_play(eva, 4).pk == old.pk  # still playing there: quick play sends her back to it
    refused(lambda: actions.do_create_table(eva, 4), "live_elsewhere")
    actions.do_leave_seat(old.pk, eva)  # the bot plays her seat to the end (the seat stays hers)
    new = actions.do_quick_play(eva, 4)
    assert new.pk != old.pk and live_seats(eva) == [new.pk]
    # back at the old game: «Vuelvo» or a card would make two live tables
    table = Table.objects.get(pk=old.pk)
    refused(lambda: actions.do_back(old.pk, eva, table.seq), "live_elsewhere")
    game = load(table.state)
    if table.turn_seat == 0:
        refused(lambda: actions.do_action(old.pk, eva, default_action(game), table.seq), "live_elsewhere")
    assert Seat.objects.get(table=old, user=eva).left
    # once the new one is given up, she may take the old seat back
    actions.do_leave_seat(new.pk, eva)
    actions.do_back(old.pk, eva, Table.objects.get(pk=old.pk).seq)
    assert live_seats(eva) == [old.pk]
    books_balance()


def test_a_finished_game_frees_its_players_and_its_rematch_still_works() -> None:
    a, b, c = person("rema"), person("remb"), person("remc")
    old = actions.do_create_table(a, 3, stake=100)
    actions.do_take_seat(old.pk, b)
    actions.do_take_seat(old.pk, c)  # full: it starts
    play_to_the_end(old.pk)
    assert live_seats(a) == live_seats(b) == live_seats(c) == []
    new = rematch.do_offer_rematch(old.pk, a)
    rematch.do_accept_rematch(old.pk, b)
    # c is at another table meanwhile: accepting is refused (one live table), and the rematch waits
    elsewhere = actions.do_quick_play(c, 4)
    refused(lambda: rematch.do_accept_rematch(old.pk, c), "live_elsewhere")
    refused(lambda: actions.do_take_seat(new.pk, c), "live_elsewhere")
    assert Table.objects.get(pk=new.pk).status == Table.Status.WAITING
    assert live_seats(c) == [elsewhere.pk]
    # c leaves the other table and accepts: everyone is back, it starts
    actions.do_leave_seat(elsewhere.pk, c)
    rematch.do_accept_rematch(old.pk, c)
    assert Table.objects.get(pk=new.pk).status == Table.Status.PLAYING
    books_balance()


def test_proposing_a_rematch_while_at_another_table_is_refused() -> None:
    a, b = person("propa"), person("propb")
    old = actions.do_create_table(a, 3)
    actions.do_take_seat(old.pk, b)
    actions.do_start(old.pk, a)
    play_to_the_end(old.pk)
    elsewhere = actions.do_quick_play(a, 4, 100)
    tables_before = Table.objects.count()
    refused(lambda: rematch.do_offer_rematch(old.pk, a), "live_elsewhere")
    assert Table.objects.count() == tables_before and live_seats(a) == [elsewhere.pk]
    assert rematch.do_offer_rematch(old.pk, b).pk  # b is free to propose it
    books_balance()


# -- waiting tables that nobody starts ----------------------------------------------------------------


@pytest.mark.parametrize("public", [True, False])
def test_a_waiting_table_nobody_starts_is_called_off_with_every_stake_back(public: bool, settings) -> None:
    host, guest = person("paciente"), person("invitado")
    before_create = timezone.now()
    if public:
        table = actions.do_create_table(host, 4, stake=500)
        actions.do_take_seat(table.pk, guest)
    else:
        table = actions.do_create_private_table(host, 4, 500, True)
        actions.do_take_seat(table.pk, guest, code=table.code)
    table.refresh_from_db()
    ttl = timedelta(seconds=settings.POCHA_WAITING_TTL)
    assert table.fill_at is None and before_create + ttl <= table.due_at <= timezone.now() + ttl
    assert actions.sweep() == 0 and Table.objects.get(pk=table.pk).status == Table.Status.WAITING  # not yet
    assert ledger.balance(host.pk) == ledger.balance(guest.pk) == WELCOME - 500
    # the time is up: the sweeper (or the timer) calls it off, every stake goes back, in one step
    Table.objects.filter(pk=table.pk).update(due_at=timezone.now() - timedelta(seconds=1))
    if public:
        assert table.pk not in [row["table"].pk for row in open_tables(None)]  # (gone from the list at once)
    assert actions.sweep() == 1
    table.refresh_from_db()
    assert table.status == Table.Status.CANCELLED and table.due_at is None and table.fill_at is None
    assert ledger.balance(host.pk) == ledger.balance(guest.pk) == WELCOME
    assert Account.objects.get(kind=Account.Kind.POT, table_id=table.pk).balance == 0
    refunds = LedgerTransaction.objects.filter(kind=LedgerTransaction.Kind.REFUND, table_id=table.pk)
    assert refunds.count() == 2
    books_balance()
    assert open_tables(None) == []
    # both are free to play again; a second run of the step does nothing
    assert actions.do_due(table.pk, table.seq - 1) is None
    assert live_seats(host) == live_seats(guest) == []
    actions.do_create_table(host, 3)


def test_the_waiting_limit_is_the_setting_and_quick_tables_keep_their_bots(settings) -> None:
    settings.POCHA_WAITING_TTL = 0
    table = actions.do_create_table(person("breve"), 3, stake=100)
    quick = actions.do_quick_play(person("rapido"), 3)
    quick.refresh_from_db()
    assert quick.due_at == quick.fill_at is not None  # bots fill a quick table at its fill_at
    assert actions.sweep() == 1  # (only the other one is due)
    assert Table.objects.get(pk=table.pk).status == Table.Status.CANCELLED
    assert Table.objects.get(pk=quick.pk).status == Table.Status.WAITING
    books_balance()


def test_a_table_that_changes_waits_from_its_last_change(settings) -> None:
    settings.POCHA_WAITING_TTL = 600
    table = actions.do_create_table(person("cambia"), 4)
    Table.objects.filter(pk=table.pk).update(due_at=timezone.now() + timedelta(seconds=5))
    actions.do_take_seat(table.pk, person("llega"))
    table.refresh_from_db()
    assert table.due_at > timezone.now() + timedelta(seconds=590)


# -- a move after its deadline ------------------------------------------------------------------------


def my_turn(table_id: int, position: int = 0) -> Table:
    for _ in range(400):
        table = Table.objects.get(pk=table_id)
        assert table.status == Table.Status.PLAYING
        if table.turn_seat == position:
            return table
        Table.objects.filter(pk=table_id).update(due_at=timezone.now() - timedelta(seconds=1))
        assert actions.do_due(table_id, table.seq) is not None
    raise AssertionError("never my turn")


def test_a_move_after_the_deadline_is_refused_and_the_clock_plays_it() -> None:
    fer = person("fer")
    table = actions.do_create_table(fer, 3, stake=100)
    actions.do_start(table.pk, fer)
    # in time: accepted (every move before the deadline counts)
    table = my_turn(table.pk)
    assert table.turn_deadline is not None and table.turn_deadline > timezone.now()
    actions.do_action(table.pk, fer, default_action(load(table.state)), table.seq)
    # too late: refused, and nothing changes
    table = my_turn(table.pk)
    past = timezone.now() - timedelta(seconds=1)
    Table.objects.filter(pk=table.pk).update(turn_deadline=past, due_at=past)
    before = table_fingerprint(table.pk)
    seat_before = Seat.objects.filter(table=table, position=0).values("timeouts", "away", "bot_log").get()
    error = refused(lambda: actions.do_action(table.pk, fer, default_action(load(table.state)), table.seq), "late")
    assert error.resync and error.message("es") == "Se acabó tu tiempo: el bot juega por ti."
    assert table_fingerprint(table.pk) == before
    assert Seat.objects.filter(table=table, position=0).values("timeouts", "away", "bot_log").get() == seat_before
    # the clock's step plays it for them
    by_clock_before = by_clock(table.pk)
    assert actions.do_due(table.pk, table.seq) is not None
    assert Table.objects.get(pk=table.pk).seq == table.seq + 1
    assert by_clock(table.pk) == by_clock_before + 1
    assert Seat.objects.get(table=table, position=0).timeouts == 1
    books_balance()


def by_clock(table_id: int) -> int:
    """How many decisions the clock has made at the table (bids, trumps and cards)."""
    return Move.objects.filter(table_id=table_id, by_clock=True).count()


async def test_a_late_move_over_the_socket_redraws_the_table_and_says_why() -> None:
    def prepare() -> tuple[int, Any]:
        someone = person("tarde")
        table = actions.do_create_table(someone, 3)
        actions.do_start(table.pk, someone)
        my_turn(table.pk)
        return table.pk, someone

    table_id, someone = await database_sync_to_async(prepare)()
    tab = Tab(someone, table_id)
    try:
        assert await tab.open()
        seq = await settle([tab], table_id)
        move = tab.game_moves()[0]
        past = timezone.now() - timedelta(seconds=1)
        await database_sync_to_async(
            lambda: Table.objects.filter(pk=table_id).update(turn_deadline=past, due_at=past)
        )()
        before = await database_sync_to_async(table_fingerprint)(table_id)
        count = len(tab.frames)
        await tab.send(move)
        await tab.wait_for(
            lambda: tab.flashes(count) != [] and len(tab.boards) > 0 and any(is_board(f) for f in tab.frames[count:])
        )
        assert tab.flashes(count) == ["Se acabó tu tiempo: el bot juega por ti."]
        assert await database_sync_to_async(table_fingerprint)(table_id) == before
        assert tab.seq == seq
        assert await database_sync_to_async(actions.do_due)(table_id, seq) is not None  # the clock plays it
        await tab.wait_for(lambda: tab.seq == seq + 1)
    finally:
        await tab.close()


# -- the lobby shows the refusals ---------------------------------------------------------------------


def lobby_messages(client: Client) -> str:
    return client.get(reverse("home")).content.decode()


def test_the_lobby_says_why_a_second_table_or_seat_is_refused() -> None:
    gala, hugo = person("gala"), person("hugo")
    client = Client()
    client.force_login(gala)
    first = client.post(reverse("games:create_table"), {"size": "4", "stake": "0"})
    assert first.status_code == 302
    mine = Table.objects.get(seats__user=gala)
    assert first["Location"] == reverse("games:table", kwargs={"table_id": mine.pk})
    # 25 more «Nueva mesa»: refused each time, with the reason on the lobby page, and no table made
    for _ in range(25):
        again = client.post(reverse("games:create_table"), {"size": "4", "stake": "0"})
        assert again.status_code == 302 and again["Location"] == reverse("home")
    assert LIVE_ELSEWHERE in lobby_messages(client)
    assert Table.objects.filter(created_by=gala).count() == 1
    private = client.post(reverse("games:create_private"), {"size": "3", "stake": "0", "bots": "on"})
    assert private.status_code == 302 and private["Location"] == reverse("home")
    assert LIVE_ELSEWHERE in lobby_messages(client)
    # a seat at someone else's table: back to the lobby with the reason
    theirs = actions.do_create_table(hugo, 4)
    sit = client.post(reverse("games:take_seat", kwargs={"table_id": theirs.pk}))
    assert sit.status_code == 302 and sit["Location"] == reverse("home")
    page = lobby_messages(client)
    assert LIVE_ELSEWHERE in page and reverse("games:table", kwargs={"table_id": mine.pk}) in page
    assert not Seat.objects.filter(table=theirs, user=gala).exists()
    # by code too
    code_table = actions.do_create_private_table(person("ines"), 3, 0, True)
    by_code = client.post(reverse("games:join_by_code"), {"code": code_table.code})
    assert by_code.status_code == 302 and by_code["Location"] == reverse("home")
    assert LIVE_ELSEWHERE in lobby_messages(client)
    # «Jugar ya» goes to the table she is at
    quick = client.post(reverse("games:quick_play"), {"size": "3", "stake": "0"})
    assert quick.status_code == 302 and quick["Location"] == reverse("games:table", kwargs={"table_id": mine.pk})
