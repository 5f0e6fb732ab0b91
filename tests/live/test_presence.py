"""Presence that cannot drift (issue 11): each socket is a ``Watcher`` row of the server process holding it,
each process beats, and the rows of a process not heard from for ``POCHA_PRESENCE_TTL`` seconds stop
counting.  A seated person is present while they have a row at the table; ``Seat.sockets`` and
``Seat.disconnected_at`` are recomputed from the rows without locking the table's row.

A second server process is simulated by a ``ServerProcess`` row (and socket rows) of another id; this
test process's own beat runs on each test's event loop once a socket has opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from support.server import Daphne, child_env

from games.live import consumers, hub, presence, push, timers
from games.live.consumers import TableConsumer
from games.models import Seat, ServerProcess, Table, Watcher
from games.table import actions, rows
from games.table import snapshot as snapshots
from games.table.snapshot import spectator_count

from .helpers import SEQ, Tab, flash_message, is_board, person, seated_table, session_cookie, settle, table_fingerprint
from .test_clock import (  # noqa: F401 (manual_clock is a fixture)
    advance_to,
    db,
    eventually,
    manual_clock,
    moves,
    new_moves,
    new_table,
    past,
    rows_since,
    seat_row,
    table_row,
)
from .wsclient import WebSocket

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.django_db(transaction=True)]

MALFORMED = "Mensaje no válido."
TOO_MANY = "Tienes demasiadas pestañas abiertas: cierra alguna."


@pytest.fixture
def quick_beat(settings: Any) -> Any:
    """Beats every 0.2 s, a process dead after 1 s unheard."""
    settings.POCHA_PRESENCE_BEAT = 0.2
    settings.POCHA_PRESENCE_TTL = 1.0
    return settings


def other_process(seen_seconds_ago: float = 0) -> ServerProcess:
    """Another server process (synchronous)."""
    return ServerProcess.objects.create(id=uuid.uuid4(), name="otro:1", seen_at=past(seen_seconds_ago))


def socket_on(process: ServerProcess, table_id: int, user: Any) -> Watcher:
    """A socket of ``user`` at the table held by ``process`` (synchronous)."""
    return Watcher.objects.create(
        table_id=table_id, user=user, channel_name=f"otro.{uuid.uuid4().hex}", process=process
    )


def kill(process: ServerProcess) -> None:
    """The process stops beating: it was last heard from long ago (synchronous)."""
    ServerProcess.objects.filter(pk=process.pk).update(seen_at=past(3600))


def presence_of(table_id: int, user: Any) -> tuple[int, Any]:
    seat = Seat.objects.get(table_id=table_id, user=user)
    return seat.sockets, seat.disconnected_at


def rows_of(table_id: int, user: Any) -> list[Watcher]:
    return list(Watcher.objects.filter(table_id=table_id, user=user))


async def opened(tab: Tab) -> Tab:
    """Open the tab and wait for its first board (the socket's row is written before it is drawn)."""
    assert await tab.open()
    await tab.wait_for(lambda: bool(tab.board))
    return tab


def started_four(prefix: str) -> tuple[int, list[Any], int]:
    """Four people at a started table (no bots, no clock); returns the table, the users, the seat to move."""
    table_id, users = seated_table(4, 4, prefix=prefix)
    return table_id, users, Table.objects.get(pk=table_id).turn_seat


# -- a process that dies -------------------------------------------------------------------------


def test_a_dead_process_stops_counting_and_the_bot_plays_after_the_grace(manual_clock, settings):
    settings.POCHA_DISCONNECT_GRACE = 1.0
    table_id, (ana,) = new_table(3, 1, prefix="muerta")
    table = advance_to(table_id, 0)
    other = other_process()
    socket_on(other, table_id, ana)
    assert presence.refresh(table_id, ana.pk) is True  # her socket opened on the other process
    assert presence_of(table_id, ana) == (1, None)
    table = table_row(table_id)
    assert table.due_at == table.turn_deadline  # she is here: her own clock runs
    seq = table.seq

    kill(other)
    manual_clock.clear()
    swept = presence.sweep()
    assert (swept.processes, swept.rows, swept.seats) == (1, 1, 1)
    assert not ServerProcess.objects.filter(pk=other.pk).exists()
    assert rows_of(table_id, ana) == []
    sockets, gone_at = presence_of(table_id, ana)
    assert sockets == 0 and gone_at is not None
    table = table_row(table_id)
    grace = timedelta(seconds=settings.POCHA_DISCONNECT_GRACE)
    assert table.seq == seq  # presence is not a move
    assert table.due_at == gone_at + grace < table.turn_deadline  # the grace started
    assert manual_clock == [(table_id, seq, table.due_at)]  # and its step was armed
    assert presence.sweep().rows == 0  # a second sweep finds nothing

    if timezone.now() < table.due_at:
        assert actions.do_due(table_id, seq) is None  # not before the grace ends
    time.sleep(max(0.0, (table.due_at - timezone.now()).total_seconds()) + 0.05)
    before = moves(table_id)
    assert actions.do_due(table_id, seq) == actions.TableChanged(table_id, seq + 1)
    played = list(new_moves(before, moves(table_id)).values())
    assert played[0][0] == 0 and played[0][1] is False and played[0][2] in (True, None), played  # the bot's


def test_a_live_process_and_a_fresh_one_keep_their_sockets(manual_clock, settings):
    table_id, (ana,) = new_table(3, 1, prefix="viva")
    advance_to(table_id, 0)
    alive = other_process(seen_seconds_ago=settings.POCHA_PRESENCE_TTL / 2)
    socket_on(alive, table_id, ana)
    presence.refresh(table_id, ana.pk)
    before = table_row(table_id).due_at
    assert presence.sweep().rows == 0
    assert presence_of(table_id, ana) == (1, None)
    assert table_row(table_id).due_at == before


@pytest.mark.asyncio
async def test_a_dead_process_on_the_real_clock(quick_beat, settings, celery_clock_worker):
    """Real clock: her socket's process stops beating; this process's loop sweeps it, the grace starts
    and the bot plays her turn once it has run out (the in-process clock, or the Celery worker)."""
    settings.POCHA_DISCONNECT_GRACE = 1.0
    settings.POCHA_BOT_DELAY = 0
    table_id, (ana,) = await db(new_table, 3, 1, prefix="realmuerta")
    tab = Tab(ana, table_id)
    try:
        await opened(tab)
        table = await eventually(lambda: (t := table_row(table_id)).turn_seat == 0 and t, "her turn", timeout=30)
        assert await db(presence_of, table_id, ana) == (1, None)
        seq = table.seq

        def move_her_socket() -> ServerProcess:
            """As if her socket were held by another process, which then stops beating."""
            other = other_process()
            row = Watcher.objects.get(table_id=table_id, user=ana)
            Watcher.objects.filter(pk=row.pk).update(process=other)
            presence._local.pop(row.channel_name, None)
            return other

        other = await db(move_her_socket)
        seat = await eventually(
            lambda: (s := seat_row(table_id, 0)).sockets == 0 and s, "her socket to stop counting", timeout=10
        )
        assert not await db(ServerProcess.objects.filter(pk=other.pk).exists)
        grace = timedelta(seconds=settings.POCHA_DISCONNECT_GRACE)
        # The seat is written first, then her step's due time moves (a moment later, on the same sweep): her
        # step is due when the grace runs out, not at the end of her clock, unless the bot played already.
        full_clock = table.due_at

        def grace_started() -> Table | None:
            row = table_row(table_id)
            return row if row.seq > seq or row.due_at != full_clock else None

        table = await eventually(grace_started, "the grace to start", timeout=10)
        if table.seq == seq:
            assert seat.disconnected_at + grace <= table.due_at < seat.disconnected_at + grace + timedelta(seconds=5)
        table = await eventually(
            lambda: (t := table_row(table_id)).seq > seq and t, "the bot to play for her", timeout=20
        )
        # the first move made for her (with no bot delay, more may follow before this reads them)
        move = min(await db(rows_since, table_id, 0, seat.disconnected_at), key=lambda row: row.made_at)
        assert move.by_bot and not move.by_clock
        assert move.made_at >= seat.disconnected_at + grace
    finally:
        await tab.close()


@pytest.mark.asyncio
async def test_the_beat_updates_seen_at(quick_beat):
    table_id, users, _turn = await db(started_four, "latido")
    tab = Tab(users[0], table_id)
    try:
        await opened(tab)
        row = await db(lambda: Watcher.objects.select_related("process").get(table_id=table_id, user=users[0]))
        assert row.process_id == presence.PROCESS_ID
        first = row.process.seen_at
        later = await eventually(
            lambda: (p := ServerProcess.objects.get(pk=presence.PROCESS_ID)).seen_at > first and p.seen_at,
            "a beat",
            timeout=5,
        )
        assert later - first < timedelta(seconds=5)
        assert await db(presence_of, table_id, users[0]) == (1, None)
    finally:
        await tab.close()
    assert (await db(presence_of, table_id, users[0]))[0] == 0


@pytest.mark.asyncio
async def test_a_process_taken_for_dead_writes_its_sockets_again(quick_beat):
    """Frozen longer than the TTL, this process was swept by another: its next beat writes back the rows
    of the sockets it still holds, and its people are present again."""
    table_id, users, _turn = await db(started_four, "resucita")
    tab = Tab(users[0], table_id)
    try:
        await opened(tab)
        (row,) = await db(rows_of, table_id, users[0])

        def swept_by_another() -> tuple[int, Any]:
            ServerProcess.objects.filter(pk=presence.PROCESS_ID).delete()  # and its rows with it
            presence.refresh(table_id, users[0].pk)
            return presence_of(table_id, users[0])

        sockets, _gone_at = await db(swept_by_another)
        assert sockets == 0 or await db(rows_of, table_id, users[0])  # (unless a beat already came back)
        await eventually(lambda: presence_of(table_id, users[0]) == (1, None), "her presence back", timeout=5)
        (again,) = await db(rows_of, table_id, users[0])
        assert again.channel_name == row.channel_name and again.process_id == presence.PROCESS_ID
    finally:
        await tab.close()
    assert await db(rows_of, table_id, users[0]) == []


def test_the_own_rows_check_deletes_a_row_whose_close_failed(settings):
    table_id, users, _turn = started_four("huerfana")
    presence.forget_local()
    presence.beat()
    Watcher.objects.create(
        table_id=table_id, user=users[1], channel_name="sin-socket", process_id=presence.PROCESS_ID
    )  # held by no socket of this process
    presence.refresh(table_id, users[1].pk)
    assert presence_of(table_id, users[1])[0] == 1
    assert presence.check_own_rows() == 1
    assert rows_of(table_id, users[1]) == []
    sockets, gone_at = presence_of(table_id, users[1])
    assert sockets == 0 and gone_at is not None


# -- no table row lock -------------------------------------------------------------------------------


def without_subqueries(sql: str) -> str:
    while (shorter := re.sub(r"\([^()]*\)", "", sql)) != sql:
        sql = shorter
    return sql


def test_opening_and_closing_a_socket_takes_no_table_lock(manual_clock, monkeypatch, settings):
    """Even for the seat to move (whose presence moves the table's due step)."""
    table_id, users, turn = started_four("sinbloqueo")

    def no_lock(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the table's row was locked")

    monkeypatch.setattr(rows, "lock_table", no_lock)
    mover = users[turn]
    deadline = table_row(table_id).turn_deadline
    with CaptureQueriesContext(connection) as opened:
        presence.open_socket(table_id, mover.pk, "sinbloqueo.1")
    assert presence_of(table_id, mover) == (1, None)
    manual_clock.clear()
    with CaptureQueriesContext(connection) as closed:
        presence.close_socket("sinbloqueo.1")
    sockets, gone_at = presence_of(table_id, mover)
    assert sockets == 0 and gone_at is not None
    table = table_row(table_id)
    grace = timedelta(seconds=settings.POCHA_DISCONNECT_GRACE)
    assert table.due_at == min(deadline, gone_at + grace) == gone_at + grace  # the grace moved the due step
    assert manual_clock == [(table_id, table.seq, table.due_at)]
    sql = [q["sql"] for q in (*opened.captured_queries, *closed.captured_queries)]
    locking = [without_subqueries(q) for q in sql if "FOR UPDATE" in q]
    assert not [q for q in locking if '"games_table"' in q], locking  # FOR UPDATE locks what the FROM names
    if connection.vendor == "postgresql":
        assert any('FROM "games_seat"' in q for q in locking)  # the seat's row is what serialises
    assert any(q.startswith('UPDATE "games_table"') for q in sql)  # the compare-and-set


@pytest.mark.asyncio
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL only")
async def test_a_socket_opens_and_closes_while_a_move_holds_the_table(settings):
    table_id, users, turn = await db(started_four, "mientras")
    locked, release, done = threading.Event(), threading.Event(), threading.Event()

    def hold_the_table() -> None:
        try:
            with transaction.atomic():
                Table.objects.select_for_update().get(pk=table_id)
                locked.set()
                release.wait(30)
        finally:
            connection.close()
            done.set()

    holder = threading.Thread(target=hold_the_table)
    holder.start()
    tab = Tab(users[(turn + 1) % 4], table_id)
    try:
        assert locked.wait(10)
        started = time.monotonic()
        assert await tab.open()
        await tab.wait_for(lambda: bool(tab.board), timeout=10)
        assert time.monotonic() - started < 5 and not done.is_set()
        assert await db(presence_of, table_id, tab.user) == (1, None)
        await tab.close()
        sockets, gone_at = await db(presence_of, table_id, tab.user)
        assert sockets == 0 and gone_at is not None
        assert not done.is_set(), "the table's lock was held all along"
    finally:
        release.set()
        holder.join(30)
        await tab.close()


# -- what the socket does with failures --------------------------------------------------------------


@pytest.mark.asyncio
async def test_too_many_sockets_are_refused(settings):
    settings.POCHA_MAX_SOCKETS = 2
    table_id, users, turn = await db(started_four, "pestanas")
    me = users[turn]
    tabs = [Tab(me, table_id), Tab(me, table_id)]
    witness = Tab(users[(turn + 1) % 4], table_id)
    extra = Tab(me, table_id)
    try:
        for tab in (*tabs, witness):
            assert await tab.open()
        await settle([*tabs, witness], table_id)
        await asyncio.sleep(0.2)
        before = await db(table_fingerprint, table_id)
        counts = {t: len(t.frames) for t in (*tabs, witness)}
        assert await extra.open()  # accepted, told why, closed
        await extra.wait_for(lambda: extra.closed is not None)
        assert extra.closed == 4429
        assert [flash_message(f) for f in extra.frames] == [TOO_MANY]
        assert not any(is_board(f) for f in extra.frames)
        await asyncio.sleep(0.2)
        assert all(t.frames[counts[t] :] == [] for t in (*tabs, witness)), "nobody else noticed"
        assert await db(table_fingerprint, table_id) == before
        assert len(await db(rows_of, table_id, me)) == 2
        assert await db(presence_of, table_id, me) == (2, None)
        # one closed, the next one opens
        await tabs[0].close()
        again = Tab(me, table_id)
        assert await again.open()
        await again.wait_for(lambda: bool(again.board))
        assert again.closed is None
        tabs.append(again)
    finally:
        for tab in (*tabs, witness, extra):
            await tab.close()


@pytest.mark.asyncio
async def test_a_nested_frame_leaves_presence_right():
    table_id, users, turn = await db(started_four, "anidado")
    tab = Tab(users[turn], table_id)
    try:
        assert await tab.open()
        await settle([tab], table_id)
        assert await db(presence_of, table_id, users[turn]) == (1, None)
        before = len(tab.frames)
        await tab.send("[" * 2000 + "]" * 2000)
        await tab.wait_for(lambda: tab.flashes(before))
        assert tab.flashes(before) == [MALFORMED] and tab.closed is None
        assert await db(presence_of, table_id, users[turn]) == (1, None)
        assert len(await db(rows_of, table_id, users[turn])) == 1
    finally:
        await tab.close()
    sockets, gone_at = await db(presence_of, table_id, users[turn])
    assert sockets == 0 and gone_at is not None
    assert await db(rows_of, table_id, users[turn]) == []


@pytest.mark.asyncio
async def test_a_redraw_that_fails_keeps_the_socket(monkeypatch):
    table_id, users, turn = await db(started_four, "redibujo")
    tab = Tab(users[turn], table_id)
    real = snapshots.load_snapshot  # a forced redraw reads the table afresh (once per process)
    failures: list[int] = []

    def broken(*args: Any, **kwargs: Any) -> Any:
        failures.append(1)
        raise RuntimeError("the template broke")

    try:
        assert await tab.open()
        await settle([tab], table_id)
        count = len(tab.frames)
        seq = tab.seq
        monkeypatch.setattr(consumers, "load_snapshot", broken)
        await db(push.table_changed, table_id, seq, force=True)
        await asyncio.sleep(0.3)
        assert failures and tab.closed is None and not tab.comm.future.done()
        monkeypatch.setattr(consumers, "load_snapshot", real)
        await db(push.table_changed, table_id, seq, force=True)
        await tab.wait_for(lambda: len(tab.frames) > count)
        assert is_board(tab.frames[-1]) and tab.seq == seq
        assert await db(presence_of, table_id, users[turn]) == (1, None)
    finally:
        await tab.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("failing", ["render", "group"])
async def test_a_connection_that_fails_half_way_is_undone(monkeypatch, failing):
    """The board cannot be drawn (the database), or the table's events cannot be heard (Redis, ``games.live.hub``):
    the socket is closed with 1011 and its row is gone, so its person is not left counted."""
    table_id, users, turn = await db(started_four, f"mitad{failing}")
    me = users[turn]
    if failing == "render":

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("database gone")

        monkeypatch.setattr(consumers, "load_snapshot", broken)  # the first board's read
    else:

        async def register(table_id: int, listener: Any) -> None:
            raise ConnectionError("redis gone")

        monkeypatch.setattr(hub, "register", register)
    tab = Tab(me, table_id)
    try:
        assert await tab.open()
        await tab.wait_for(lambda: tab.closed is not None)
        assert tab.closed == 1011
        assert await db(rows_of, table_id, me) == []
        assert (await db(presence_of, table_id, me))[0] == 0
    finally:
        await tab.close()


@pytest.mark.asyncio
async def test_an_exception_escaping_the_consumer_stops_its_socket_counting(monkeypatch):
    table_id, users, turn = await db(started_four, "excepcion")
    me = users[turn]
    tab = Tab(me, table_id)
    assert await tab.open()
    await settle([tab], table_id)
    assert await db(presence_of, table_id, me) == (1, None)

    async def escaping(self: Any, event: dict[str, Any]) -> None:
        raise RuntimeError("a bug in a handler")

    monkeypatch.setattr(TableConsumer, "table_changed", escaping)
    await db(push.table_changed, table_id, tab.seq, force=True)
    await eventually(lambda: presence_of(table_id, me)[0] == 0, "her socket to stop counting", timeout=10)
    assert await db(rows_of, table_id, me) == []
    # The row goes in the consumer's last step; its task ends a moment after, with the handler's exception.
    await asyncio.wait([tab.comm.future], timeout=10)
    assert tab.comm.future.done()
    assert isinstance(tab.comm.future.exception(), RuntimeError)
    if tab._reader is not None:
        tab._reader.cancel()
    tab.comm = None


# -- spectators and repairs --------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_the_spectator_count_after_a_dead_process_is_swept():
    table_id, users, turn = await db(started_four, "poda")
    player = Tab(users[0], table_id)
    stranger = await db(person, "mirona-muerta")
    try:
        assert await player.open()
        await settle([player], table_id)
        other = await db(other_process)
        await db(socket_on, other, table_id, stranger)
        await db(socket_on, other, table_id, users[1])  # a seated person's socket is no spectator
        assert await db(spectator_count, table_id) == 1
        count = len(player.frames)
        await db(kill, other)
        assert (await db(presence.sweep_dead, timezone.now() - timedelta(seconds=1))).rows == 2
        assert await db(spectator_count, table_id) == 0
        await player.wait_for(lambda: any(is_board(f) for f in player.frames[count:]))
        assert await db(Watcher.objects.filter(table_id=table_id).count) == 1  # the player's own
    finally:
        await player.close()


def test_a_due_step_left_on_the_full_clock_is_pulled_in(manual_clock, settings):
    """A move made as her last socket closed read her as present and gave her the full clock: the sweeper
    pulls the due step in to the grace."""
    settings.POCHA_DISCONNECT_GRACE = 5.0
    table_id, (ana,) = new_table(3, 1, prefix="repara")
    table = advance_to(table_id, 0)
    assert table.due_at == table.turn_deadline > timezone.now() + timedelta(seconds=20)
    gone_at = past(2)
    Seat.objects.filter(table_id=table_id, position=0).update(sockets=0, disconnected_at=gone_at)
    manual_clock.clear()
    assert presence.repair_due() == 1
    table = table_row(table_id)
    assert table.due_at == gone_at + timedelta(seconds=5)
    assert manual_clock == [(table_id, table.seq, table.due_at)]
    assert presence.repair_due() == 0  # right now: nothing to do

    # long gone: due at once
    Seat.objects.filter(table_id=table_id, position=0).update(disconnected_at=past(60))
    Table.objects.filter(pk=table_id).update(due_at=table.turn_deadline)
    assert presence.repair_due() == 1
    table = table_row(table_id)
    assert table.due_at <= timezone.now()
    assert actions.do_due(table_id, table.seq) == actions.TableChanged(table_id, table.seq + 1)

    # present, or away (the bot at once anyway): nothing to repair
    table = advance_to(table_id, 0)
    Seat.objects.filter(table_id=table_id, position=0).update(sockets=1, disconnected_at=None)
    assert presence.repair_due() == 0


def test_a_seat_drifted_from_its_sockets_is_reconciled(manual_clock):
    table_id, users, turn = started_four("deriva")
    presence.beat()
    Watcher.objects.create(table_id=table_id, user=users[2], channel_name="deriva.1", process_id=presence.PROCESS_ID)
    assert presence_of(table_id, users[2]) == (0, None)  # as if the seat were taken from an open socket
    assert presence.reconcile() == 1
    assert presence_of(table_id, users[2]) == (1, None)
    assert presence.reconcile() == 0


# -- services mode: every server sweeps overdue steps -------------------------------------------------


def test_overdue_steps_leave_the_slack_to_the_precise_timer(manual_clock):
    table_id, _users = new_table(3, 1, prefix="holgura")
    advance_to(table_id, 0)
    Table.objects.filter(pk=table_id).update(due_at=past(0.3))
    assert (table_id, table_row(table_id).seq) in actions.due.overdue_steps()
    assert table_id not in [t for t, _s in actions.due.overdue_steps(slack=1.0)]
    Table.objects.filter(pk=table_id).update(due_at=past(1.5))
    assert table_id in [t for t, _s in actions.due.overdue_steps(slack=1.0)]


@pytest.mark.asyncio
@pytest.mark.skipif(not timers.celery_clock(), reason="services mode only (the Celery clock)")
async def test_services_a_server_plays_overdue_steps_without_celery(quick_beat, settings):
    """No Celery worker runs: the bots' steps armed as tasks are never run by one, and the server's own
    sweep plays them once they are overdue by the slack."""
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_SERVER_SWEEP_SLACK = 0.5
    table_id, (ana,) = await db(new_table, 3, 1, prefix="sinapio")
    tab = Tab(ana, table_id)
    try:
        assert await tab.open()
        table = await eventually(lambda: (t := table_row(table_id)).turn_seat == 0 and t, "her turn", timeout=30)
        await tab.wait_for(lambda: tab.seq == table.seq)
        assert table.seq > 1
    finally:
        await tab.close()


# -- services mode: two real servers, one killed -------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.skipif(not timers.celery_clock(), reason="services mode only (PostgreSQL, Redis)")
async def test_services_a_killed_servers_sockets_stop_counting(settings, tmp_path):
    """Two servers, no Celery worker: her socket is on the first, which is killed (SIGKILL); the second
    finds it dead within the TTL and a beat, her seat is absent, and the bot plays her turn after the grace
    (the second server's own sweep runs the step)."""
    database = settings.DATABASES["default"]
    auth = database["USER"] + (f":{database['PASSWORD']}" if database.get("PASSWORD") else "")
    url = f"postgres://{auth}@{database['HOST'] or '127.0.0.1'}:{database['PORT'] or 5432}/{database['NAME']}"
    ttl, beat, grace = 2.0, 0.5, 1.0
    env = child_env(
        {
            "DATABASE_URL": url,
            "REDIS_URL": settings.REDIS_URL,
            "POCHA_BOT_DELAY": "0",
            "POCHA_PRESENCE_TTL": str(ttl),
            "POCHA_PRESENCE_BEAT": str(beat),
            "POCHA_DISCONNECT_GRACE": str(grace),
            "POCHA_SERVER_SWEEP_SLACK": "0.3",
            "POCHA_TRICK_PAUSE": "0",
            "POCHA_ROUND_PAUSE": "0",
        }
    )
    table_id, (ana,) = await db(new_table, 3, 1, prefix="matada")
    cookie = await session_cookie(ana)
    first = Daphne(tmp_path, env, log_name="first.log")
    second = Daphne(tmp_path, env, log_name="second.log")
    ws: WebSocket | None = None
    try:
        first.launch()
        second.launch()
        await asyncio.get_running_loop().run_in_executor(None, first.wait_ready)
        await asyncio.get_running_loop().run_in_executor(None, second.wait_ready)
        ws = await WebSocket.connect(
            first.port,
            f"/ws/mesa/{table_id}/",
            {"Origin": f"http://127.0.0.1:{first.port}", "Cookie": f"{django_settings.SESSION_COOKIE_NAME}={cookie}"},
        )
        assert SEQ.search(await asyncio.wait_for(ws.recv(), 10) or "")
        # the bots play (the servers' own sweeps: no worker runs their tasks) until it is her turn
        table = await eventually(lambda: (t := table_row(table_id)).turn_seat == 0 and t, "her turn", timeout=30)
        assert await db(presence_of, table_id, ana) == (1, None)
        assert table.due_at == table.turn_deadline
        seq = table.seq
        processes = await db(lambda: set(ServerProcess.objects.values_list("name", flat=True)))
        assert {f"{socket.gethostname()}:{p.process.pid}" for p in (first, second)} <= processes

        first.kill()
        killed_at = time.monotonic()
        seat = await eventually(
            lambda: (s := seat_row(table_id, 0)).sockets == 0 and s,
            "her socket to stop counting",
            timeout=ttl + 4 * beat + 5,
        )
        assert time.monotonic() - killed_at < ttl + 4 * beat + 5
        assert await db(lambda: not Watcher.objects.filter(table_id=table_id).exists())
        table = await eventually(
            lambda: (t := table_row(table_id)).seq > seq and t, "the bot to play for her", timeout=grace + 10
        )
        # the first move made for her (with no bot delay, more may follow before this reads them)
        move = min(await db(rows_since, table_id, 0, seat.disconnected_at), key=lambda row: row.made_at)
        assert move.by_bot and not move.by_clock
        assert move.made_at >= seat.disconnected_at + timedelta(seconds=grace)
        names = await db(lambda: set(ServerProcess.objects.values_list("name", flat=True)))
        assert f"{socket.gethostname()}:{first.process.pid}" not in names
    finally:
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()
        for server in (first, second):
            server.kill()
        print("---- first ----\n" + first.log[-5000:] + "\n---- second ----\n" + second.log[-5000:])
