"""Load shedding (``games.live.capacity``): a server process past what it can serve refuses new tables and quick
play with «Sala llena» (HTTP 503, ``Retry-After``), while sitting at a table that exists and every running
game go on; it is full once its loop lag or its database wait passes the limit, and free again only once
both are back under half of it (hysteresis); its own watcher measures the loop for real.

The suite turns shedding off (``no_load_shedding`` in ``tests/conftest.py``); the tests here turn it back on
and put ``capacity.state`` back as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from accounts import ledger
from accounts.models import Account
from accounts.models import Transaction as LedgerTransaction
from games.live import capacity, timers
from games.models import Move, Seat, Table
from games.table import actions

from .helpers import Tab, person, seated_table, settle

pytestmark = [pytest.mark.django_db(transaction=True)]

FULL = "Sala llena"
RETRY_AFTER = 7  # not the default (10): the header must come from the setting

NEW_TABLE_VIEWS = [
    ("/jugar/", {"size": "4", "stake": "100"}),
    ("/mesas/nueva/", {"size": "4", "stake": "100"}),
    ("/mesas/privada/", {"size": "4", "stake": "100", "bots": "on"}),
]


@pytest.fixture
def shedding(settings: Any) -> Iterator[Any]:
    """Limits on (0.1 s of loop lag, 0.1 s of database wait, 85 % of a core); ``capacity.state`` restored
    afterwards."""
    settings.POCHA_SHED_LOOP_LAG = 0.1
    settings.POCHA_SHED_DB_WAIT = 0.1
    settings.POCHA_SHED_CPU = 0.85
    settings.POCHA_SHED_MOVE_TIME = 0.1
    settings.POCHA_SHED_HTTP_WAIT = 0.5
    settings.POCHA_SHED_RETRY_AFTER = RETRY_AFTER
    state = capacity.state
    names = ("loop_lag", "db_wait", "cpu", "move_time", "http_wait", "full", "refused", "watching")
    saved = {name: getattr(state, name) for name in names}
    try:
        yield settings
    finally:
        for name, value in saved.items():
            setattr(state, name, value)


@pytest.fixture
def full(shedding: Any) -> Iterator[None]:
    """This process is full (as its watcher would have found it)."""
    capacity.state.full = True
    try:
        yield
    finally:
        capacity.state.full = False


@pytest.fixture
def no_clock(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """No turn clock runs (nor is queued to Celery): ``timers.arm`` only records."""
    armed: list[tuple[int, int]] = []
    monkeypatch.setattr(timers, "arm", lambda table_id, seq, due, **_kw: armed.append((table_id, seq)))
    return armed


def books() -> dict[str, Any]:
    """Every chip and every ledger transaction (synchronous)."""
    return {
        "balances": dict(Account.objects.values_list("pk", "balance")),
        "transactions": LedgerTransaction.objects.count(),
    }


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


# -- refused while full, and only what starts a new table ----------------------------------------------------


@pytest.mark.parametrize(("url", "fields"), NEW_TABLE_VIEWS)
def test_a_full_server_refuses_new_tables_with_sala_llena_and_moves_nothing(
    url: str, fields: dict[str, str], full: None, no_clock: list[Any]
) -> None:
    someone = person("apurada")
    client = logged_in(someone)
    tables, seats, chips, before = Table.objects.count(), Seat.objects.count(), ledger.balance(someone.pk), books()
    refused = capacity.state.refused

    response = client.post(url, fields)

    assert response.status_code == 503
    body = response.content.decode()
    assert FULL in body and "Sala llena, prueba en un momento." in body
    assert response["Retry-After"] == str(RETRY_AFTER)
    assert Table.objects.count() == tables and Seat.objects.count() == seats
    assert ledger.balance(someone.pk) == chips and books() == before
    assert ledger.audit() == []
    assert capacity.state.refused == refused + 1

    # The same request once the process is no longer full: a table, and the stake held (the refusal above
    # was the shedding, not the request).
    capacity.state.full = False
    response = client.post(url, fields)
    assert response.status_code == 302 and "/mesa/" in response["Location"]
    assert Table.objects.count() == tables + 1
    assert ledger.balance(someone.pk) == chips - 100
    assert ledger.audit() == []
    assert capacity.state.refused == refused + 1


def test_a_full_server_still_seats_people_at_a_table_that_exists(full: None, no_clock: list[Any]) -> None:
    host, guest = person("anfitriona"), person("invitado")
    capacity.state.full = False
    table = actions.do_create_table(host, 4, public=True, stake=100)
    capacity.state.full = True
    chips = ledger.balance(guest.pk)
    tables = Table.objects.count()

    response = logged_in(guest).post(f"/mesa/{table.pk}/sentarse/")

    assert response.status_code == 302 and response["Location"].endswith(f"/mesa/{table.pk}/")
    assert Seat.objects.filter(table=table, user=guest, left=False).exists()
    assert ledger.balance(guest.pk) == chips - 100  # the stake is held, as at any time
    assert Table.objects.count() == tables
    assert ledger.audit() == []
    assert capacity.is_full()  # (it was full all along)
    # ...and the page of that table is served
    assert logged_in(guest).get(f"/mesa/{table.pk}/").status_code == 200


async def test_a_running_game_goes_on_over_the_socket_while_full(
    full: None, no_clock: list[Any], monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    # One database thread (Channels' own, whose connections the live conftest closes): the hot path's
    # pool threads would keep PostgreSQL connections to the test database open after the test.
    settings.POCHA_DB_THREADS = 1

    # The process's own watcher (started with the first socket) would measure an idle loop and clear the
    # state: here the test says the process is full, and nothing measures.
    async def no_watch() -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(capacity, "watch", no_watch)
    table_id, users = await database_sync_to_async(seated_table)(4, 4, prefix="llena")
    table = await database_sync_to_async(Table.objects.get)(pk=table_id)
    assert table.status == Table.Status.PLAYING
    mover = Tab(users[table.turn_seat], table_id)
    assert await mover.open()
    try:
        seq = await settle([mover], table_id)
        moves = mover.game_moves()
        assert moves, "the seat to move is offered no move"
        bids = await database_sync_to_async(Move.objects.filter(table_id=table_id, kind=Move.Kind.BID).count)()

        await mover.send(moves[0])
        await mover.wait_for(lambda: mover.seq > seq)

        after = await database_sync_to_async(Table.objects.get)(pk=table_id)
        assert after.seq > seq and after.turn_seat != table.turn_seat
        assert (
            await database_sync_to_async(Move.objects.filter(table_id=table_id, kind=Move.Kind.BID).count)() == bids + 1
        )
        assert not mover.flashes(), mover.flashes()
        assert capacity.is_full()  # the move went through while the process was full
    finally:
        await mover.close()


# -- when the process is full: hysteresis ----------------------------------------------------------------------


def measured(loop_lag: float, db_wait: float, cpu: float = 0.0, move: float = 0.0, http: float = 0.0) -> bool:
    state = capacity.state
    state.loop_lag, state.db_wait, state.cpu, state.move_time, state.http_wait = loop_lag, db_wait, cpu, move, http
    capacity._update()
    return capacity.is_full()


def test_full_past_the_limit_and_free_only_under_half_of_it(shedding: Any) -> None:
    capacity.state.full = False
    assert measured(0.09, 0.09) is False  # under the limits
    assert measured(0.15, 0.0) is True  # the loop lags past its limit
    assert measured(0.07, 0.0) is True  # back under the limit, not under half of it: still full
    assert measured(0.04, 0.07) is True  # the loop is back, the database is not under half yet
    assert measured(0.04, 0.04) is False  # both under half: no longer full
    assert measured(0.07, 0.07) is False  # between half and the limit, from free: stays free
    assert measured(0.0, 0.15) is True  # the database wait alone
    assert measured(0.0, 0.06) is True
    assert measured(0.0, 0.0) is False


def test_each_limit_alone_and_no_limits_never_full(shedding: Any) -> None:
    capacity.state.full = False
    shedding.POCHA_SHED_DB_WAIT = 0  # only the loop counts
    assert measured(0.0, 10.0) is False
    assert measured(0.2, 10.0) is True
    assert measured(0.04, 10.0) is False

    shedding.POCHA_SHED_DB_WAIT = 0.1
    shedding.POCHA_SHED_LOOP_LAG = 0  # only the database counts
    assert measured(10.0, 0.0) is False
    assert measured(10.0, 0.2) is True
    assert measured(10.0, 0.04) is False

    shedding.POCHA_SHED_DB_WAIT = 0
    shedding.POCHA_SHED_CPU = 0
    assert measured(10.0, 10.0, 1.0) is False
    capacity.state.full = True  # full when the limits were lifted: free at the next reading
    assert measured(10.0, 10.0, 1.0) is False


def test_a_busy_process_is_full_though_its_loop_wakes_on_time(shedding: Any) -> None:
    capacity.state.full = False
    assert measured(0.0, 0.0, 0.80) is False  # busy, under the limit
    assert measured(0.0, 0.0, 0.95) is True  # past 85 % of a core, with no lag at all
    assert measured(0.0, 0.0, 0.70) is True  # under the limit, not under 0.8 of it (0.68): still full
    assert measured(0.0, 0.0, 0.60) is False
    assert measured(0.0, 0.0, 0.84) is False  # between the release level and the limit: stays free
    shedding.POCHA_SHED_LOOP_LAG = shedding.POCHA_SHED_DB_WAIT = 0  # the CPU alone
    assert measured(10.0, 10.0, 0.9) is True
    shedding.POCHA_SHED_CPU = 0  # and no CPU limit: waits only
    shedding.POCHA_SHED_LOOP_LAG = 0.1
    assert measured(0.0, 0.0, 1.0) is False


# -- the watcher measures for real ---------------------------------------------------------------------------


async def test_the_watcher_finds_a_blocked_loop_full_then_free_again(shedding: Any) -> None:
    capacity.state.full = False
    capacity.state.loop_lag = capacity.state.db_wait = 0.0
    task = asyncio.get_running_loop().create_task(capacity.watch())
    try:
        await asyncio.sleep(0.5)  # an idle loop: a few readings, nothing near the limits
        assert capacity.state.watching
        assert not capacity.is_full(), (capacity.state.loop_lag, capacity.state.db_wait)

        became_full_after = None
        for block in range(1, 9):  # the loop held for 0.3 s at a time, with only a moment free in between
            time.sleep(0.3)
            await asyncio.sleep(0.01)
            if capacity.is_full():
                became_full_after = block
                break
        assert became_full_after is not None, (capacity.state.loop_lag, capacity.state.db_wait)
        assert became_full_after >= 2  # smoothed: a single hiccup does not fill it
        assert max(capacity.state.loop_lag, capacity.state.db_wait) > 0.1

        loop = asyncio.get_running_loop()
        freed_at = loop.time()
        while capacity.is_full() and loop.time() - freed_at < 5:
            await asyncio.sleep(0.05)
        free_after = loop.time() - freed_at
        assert not capacity.is_full(), (capacity.state.loop_lag, capacity.state.db_wait)
        assert free_after < 3.5, free_after  # about a second or two of a free loop
        assert capacity.state.loop_lag < 0.05 and capacity.state.db_wait < 0.05
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    # a watcher that stops leaves nothing behind it
    assert not capacity.state.watching and not capacity.is_full()
    assert capacity.state.loop_lag == capacity.state.db_wait == 0.0


async def test_the_watcher_finds_a_busy_process_full_while_its_loop_is_free(
    shedding: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process's threads use 95 % of a core (its CPU clock, made to run so: a shared test machine
    cannot promise a real core), the loop itself is free: the process is found full, then free again once
    they use 10 %."""
    shedding.POCHA_SHED_LOOP_LAG = shedding.POCHA_SHED_DB_WAIT = 0  # the CPU alone
    capacity.state.full = False
    capacity.state.cpu = 0.0
    loop = asyncio.get_running_loop()
    share = [0.1]
    clock = {"wall": loop.time(), "cpu": 0.0}

    def process_time() -> float:
        now = loop.time()
        clock["cpu"] += share[0] * (now - clock["wall"])
        clock["wall"] = now
        return clock["cpu"]

    monkeypatch.setattr(capacity, "time", SimpleNamespace(process_time=process_time, monotonic=time.monotonic))
    task = loop.create_task(capacity.watch())
    try:
        await asyncio.sleep(0.5)
        assert not capacity.is_full(), capacity.state.cpu
        assert 0.05 < capacity.state.cpu < 0.15  # what the clock says
        share[0] = 0.95
        started = loop.time()
        while not capacity.is_full() and loop.time() - started < 8:
            await asyncio.sleep(0.05)
        assert capacity.is_full(), capacity.state.cpu
        assert loop.time() - started > 0.3  # smoothed: the first busy reading does not fill it
        share[0] = 0.75  # under the limit, not under 0.8 of it: still full
        await asyncio.sleep(1.5)
        assert capacity.is_full(), capacity.state.cpu
        share[0] = 0.1
        freed_at = loop.time()
        while capacity.is_full() and loop.time() - freed_at < 8:
            await asyncio.sleep(0.05)
        assert not capacity.is_full(), capacity.state.cpu
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def test_slow_moves_or_queued_requests_fill_it_too(shedding: Any) -> None:
    capacity.state.full = False
    assert measured(0.0, 0.0, move=0.09) is False
    assert measured(0.0, 0.0, move=0.12) is True  # the moves take past 100 ms on the server
    assert measured(0.0, 0.0, move=0.06) is True  # not under half yet
    assert measured(0.0, 0.0, move=0.04) is False
    assert measured(0.0, 0.0, http=0.6) is True  # HTTP requests wait past 500 ms for their turn
    assert measured(0.0, 0.0, http=0.3) is True
    assert measured(0.0, 0.0, http=0.2) is False
    shedding.POCHA_SHED_MOVE_TIME = shedding.POCHA_SHED_HTTP_WAIT = 0
    assert measured(0.0, 0.0, move=5.0, http=5.0) is False


def test_sampled_signals_follow_their_samples_and_fade_when_quiet() -> None:
    samples: list[Any] = [0.0, 0]
    value, quiet = 0.0, 0
    for _ in range(30):  # moves of 200 ms, readings after readings
        samples[0] += 0.2 + 0.2
        samples[1] += 2
        value, quiet = capacity._sampled(value, samples, quiet)
    assert 0.19 < value <= 0.2 and quiet == 0 and samples == [0.0, 0]
    for _ in range(capacity.QUIET_READINGS - 1):  # a moment with no move: kept
        value, quiet = capacity._sampled(value, samples, quiet)
    assert 0.19 < value <= 0.2
    for _ in range(30):  # a quiet stretch: it fades
        value, quiet = capacity._sampled(value, samples, quiet)
    assert value < 0.01


async def test_the_watcher_finds_slow_moves_full(shedding: Any) -> None:
    shedding.POCHA_SHED_LOOP_LAG = shedding.POCHA_SHED_DB_WAIT = shedding.POCHA_SHED_CPU = 0
    capacity.state.full = False
    capacity.state.move_time = 0.0
    task = asyncio.get_running_loop().create_task(capacity.watch())
    try:
        for _ in range(40):  # 4 s of moves taking 250 ms each
            capacity.note_move(0.25)
            await asyncio.sleep(0.1)
            if capacity.is_full():
                break
        assert capacity.is_full(), capacity.state.move_time
        for _ in range(60):  # quick moves again
            capacity.note_move(0.005)
            await asyncio.sleep(0.1)
            if not capacity.is_full():
                break
        assert not capacity.is_full(), capacity.state.move_time
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_move_over_the_socket_is_timed(
    no_clock: list[Any], monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """The socket's move path notes each move's time (what the move-time signal reads)."""
    settings.POCHA_DB_THREADS = 1  # as in the test above
    noted: list[float] = []
    monkeypatch.setattr(capacity, "note_move", noted.append)
    table_id, users = await database_sync_to_async(seated_table)(4, 4, prefix="cronometro")
    table = await database_sync_to_async(Table.objects.get)(pk=table_id)
    mover = Tab(users[table.turn_seat], table_id)
    assert await mover.open()
    try:
        seq = await settle([mover], table_id)
        assert noted == []  # opening the socket is no move
        await mover.send(mover.game_moves()[0])
        await mover.wait_for(lambda: mover.seq > seq)
        await mover.send({"action": "play", "value": "1o", "seq": str(seq)})  # a stale one is refused...
        await mover.wait_for(lambda: len(mover.flashes()) > 0)
    finally:
        await mover.close()
    assert len(noted) == 2 and all(0 < t < 5 for t in noted), noted  # ...and timed as well
