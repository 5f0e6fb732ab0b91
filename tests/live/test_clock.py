"""The turn clock: expired turns, the sweeper, away players, dropped connections, idle games.

Most tests hold the clock in their hands (``manual_clock``: nothing is armed, the in-process loop
is not bound) and move ``Table.due_at`` / ``turn_deadline`` into the past before calling
``actions.do_due`` or ``actions.sweep`` themselves, so nothing sleeps and nothing else moves the
table behind their back.  The tests marked "real clock" let the clock of the mode run the table:
the in-process loop, or a Celery worker over Redis in services mode (and, last, a Celery worker
with beat in a separate process).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.db import connections
from django.utils import timezone

from benchmarks.load.wsclient import compose
from games.engine import default_action
from games.engine.snapshot import load
from games.live import loop as server_loop
from games.live import timers
from games.models import Move, Round, Seat, Table
from games.read import board as board_view
from games.table import actions
from pocha_site.asgi import application

from .helpers import SEQ, BoardReader, check_the_log, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "cuarenta-bazas-2025"


# -- a clock in the test's hands -----------------------------------------------------------


@pytest.fixture
def manual_clock(monkeypatch, settings) -> list[tuple[int, int, Any]]:
    """Nothing runs due steps but the test: ``timers.arm`` only records what it was asked to arm,
    and the ASGI application does not start the in-process clock.  Returns the armed steps."""
    armed: list[tuple[int, int, Any]] = []
    monkeypatch.setattr(timers, "arm", lambda table_id, seq, due, **_kw: armed.append((table_id, seq, due)))
    monkeypatch.setattr(server_loop, "bind_loop", lambda: None)
    settings.POCHA_BOT_DELAY = 0
    return armed


def past(seconds: float = 1) -> Any:
    return timezone.now() - timedelta(seconds=seconds)


def table_row(table_id: int) -> Table:
    return Table.objects.get(pk=table_id)


def seat_row(table_id: int, position: int) -> Seat:
    return Seat.objects.get(table_id=table_id, position=position)


def new_table(size: int = 3, humans: int = 1, *, prefix: str = "p", **clock: int) -> tuple[int, list[Any]]:
    """A started table: ``humans`` people at positions 0.., bots in the other seats.
    ``clock``: Table fields such as ``bid_seconds=1`` set before the game starts."""
    users = [get_user_model().objects.create_user(username=f"{prefix}{i}", password=PASSWORD) for i in range(humans)]
    table = actions.do_create_table(users[0], size)
    for user in users[1:]:
        actions.do_take_seat(table.pk, user)
    if clock:
        Table.objects.filter(pk=table.pk).update(**clock)
    if humans < size:
        actions.do_start(table.pk, users[0])
    assert table_row(table.pk).status == Table.Status.PLAYING
    return table.pk, users


def make_due(table_id: int, *, expire_turn: bool = False, seconds: float = 1) -> int:
    """Move the table's due step (and, with ``expire_turn``, the person's clock) into the past,
    without arming anything: as if the timer had fired, or been lost.  Returns the table's seq."""
    fields: dict[str, Any] = {"due_at": past(seconds)}
    if expire_turn:
        fields["turn_deadline"] = past(seconds)
    Table.objects.filter(pk=table_id).update(**fields)
    return table_row(table_id).seq


def advance_to(table_id: int, position: int, limit: int = 400) -> Table:
    """Let the bots (and away people) play, step by step, until it is ``position``'s turn."""
    for _ in range(limit):
        table = table_row(table_id)
        assert table.status == Table.Status.PLAYING, table.status
        if table.turn_seat == position:
            return table
        seat = seat_row(table_id, table.turn_seat)
        assert seat.is_bot or seat.away, f"seat {seat.position} is a person's turn"
        seq = make_due(table_id)
        assert actions.do_due(table_id, seq) is not None
    raise AssertionError(f"seat {position} never got the turn")


def moves(table_id: int) -> dict[tuple[str, int, int], tuple[int | None, bool, bool | None]]:
    """Every decision in the table's log: (kind, round, index among the round's of that kind) -> (seat,
    by_clock, by_bot)."""
    kinds = {Move.Kind.BID: "bid", Move.Kind.TRUMP: "trump", Move.Kind.PLAY: "play"}
    found: dict[tuple[str, int, int], tuple[int | None, bool, bool | None]] = {}
    counted: dict[tuple[str, int], int] = {}
    for move in Move.objects.filter(table_id=table_id).order_by("seq"):
        kind = kinds[move.kind]
        index = counted.get((kind, move.round), 0)
        counted[(kind, move.round)] = index + 1
        found[(kind, move.round, index)] = (move.seat, move.by_clock, move.by_bot)
    return found


def new_moves(before: dict[Any, Any], after: dict[Any, Any]) -> dict[Any, Any]:
    assert set(before) <= set(after), "a recorded move disappeared"
    return {key: value for key, value in after.items() if key not in before}


def fingerprint(table_id: int) -> dict[str, Any]:
    table = table_row(table_id)
    return {
        "seq": table.seq,
        "state": table.state,
        "due_at": table.due_at,
        "turn_deadline": table.turn_deadline,
        "moves": moves(table_id),
        "seats": list(Seat.objects.filter(table_id=table_id).values_list("timeouts", "away")),
    }


def legal_choice(table_id: int, position: int) -> Any:
    """A legal action for ``position`` that is not the default (when there is another)."""
    game = load(table_row(table_id).state)
    assert game.turn == position
    default = default_action(game)
    legal = list(game.legal_actions())
    others = [a for a in legal if a != default]
    return others[0] if others else default


# -- 1. an expired turn is played exactly once ---------------------------------------------


def test_due_step_before_the_deadline_does_nothing(manual_clock):
    table_id, _users = new_table()
    table = advance_to(table_id, 0)
    assert table.turn_deadline is not None and table.turn_deadline > timezone.now()
    assert table.due_at == table.turn_deadline  # a person who never connected: only their clock is due
    before = fingerprint(table_id)
    assert actions.do_due(table_id, table.seq) is None
    assert fingerprint(table_id) == before


@pytest.mark.parametrize("late", [1, 3600], ids=["on-time", "an-hour-late"])
def test_expired_turn_is_played_once_by_the_clock(manual_clock, late):
    table_id, _users = new_table()
    advance_to(table_id, 0)
    seq = make_due(table_id, expire_turn=True, seconds=late)
    before = moves(table_id)
    manual_clock.clear()

    changed = actions.do_due(table_id, seq)
    assert changed == actions.TableChanged(table_id, seq + 1)
    assert actions.do_due(table_id, seq) is None  # the duplicate task
    assert actions.do_due(table_id, seq) is None  # and a very late one

    played = new_moves(before, moves(table_id))
    assert list(played.values()) == [(0, True, False)]  # one move, seat 0's, by the clock, not "by the bot"
    table = table_row(table_id)
    assert table.seq == seq + 1
    seat = seat_row(table_id, 0)
    assert (seat.timeouts, seat.away) == (1, False)
    # and what comes next was armed after the commit
    assert manual_clock == [(table_id, seq + 1, table.due_at)]


def test_stale_due_step_does_nothing_even_when_overdue(manual_clock):
    table_id, _users = new_table()
    advance_to(table_id, 0)
    seq = make_due(table_id, expire_turn=True)
    before = fingerprint(table_id)
    assert actions.do_due(table_id, seq - 1) is None
    assert actions.do_due(table_id, seq + 1) is None
    assert fingerprint(table_id) == before


def race(table_id: int, user: Any, action: Any, seq: int) -> tuple[Any, Any]:
    """A person's move and the clock's due step, released together at the same seq from two threads."""
    barrier = threading.Barrier(2)
    results: dict[str, Any] = {}

    def person() -> None:
        try:
            barrier.wait(timeout=10)
            results["person"] = actions.do_action(table_id, user, action, seq)
        except actions.ActionError as error:
            results["person"] = error
        except BaseException as error:  # noqa: BLE001 - reported below
            results["person_crash"] = error
        finally:
            connections.close_all()

    def clock() -> None:
        try:
            barrier.wait(timeout=10)
            results["clock"] = actions.do_due(table_id, seq)
        except BaseException as error:  # noqa: BLE001 - reported below
            results["clock_crash"] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=person), threading.Thread(target=clock)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a racing thread hung"
    assert "person_crash" not in results and "clock_crash" not in results, results
    return results["person"], results["clock"]


def test_move_at_the_deadline_races_the_clock(manual_clock):
    """The person's move and the clock's default, at the same seq: exactly one of them is recorded."""
    table_id, (user,) = new_table()
    winners = []
    for _attempt in range(8):
        Seat.objects.filter(table_id=table_id, position=0).update(timeouts=0, away=False)
        table = advance_to(table_id, 0)
        if table.status != Table.Status.PLAYING:
            break
        action = legal_choice(table_id, 0)
        seq = make_due(table_id, expire_turn=True, seconds=0.001)
        before = moves(table_id)

        person, clock = race(table_id, user, action, seq)

        person_won = isinstance(person, actions.TableChanged)
        clock_won = isinstance(clock, actions.TableChanged)
        assert person_won != clock_won, (person, clock)
        if person_won:
            assert person == actions.TableChanged(table_id, seq + 1) and clock is None
        else:
            assert clock == actions.TableChanged(table_id, seq + 1)
            # stale if the clock got in first; late if the move got the lock first (the deadline has passed)
            assert isinstance(person, actions.ActionError) and person.code in ("stale", "late") and person.resync
        played = new_moves(before, moves(table_id))
        assert len(played) == 1, played
        (((_kind, _round, _index), (seat, by_clock, by_bot)),) = played.items()
        assert seat == 0
        assert by_clock == clock_won and by_bot in (False, None)
        assert table_row(table_id).seq == seq + 1
        winners.append("clock" if clock_won else "person")
    assert len(winners) >= 4, winners


# -- 2. the sweeper --------------------------------------------------------------------------


def test_sweeper_plays_a_turn_whose_timer_was_lost(manual_clock, settings):
    settings.POCHA_BOT_DELAY = 60  # the bots' next steps are far away: only the lost turn is due
    table_id, _users = new_table(prefix="a")
    advance_to(table_id, 0)
    waiting_id, _others = new_table(prefix="b")  # a person with time left on their clock
    advance_to(waiting_id, 0)
    seq = make_due(table_id, expire_turn=True)  # nothing armed: the timer was lost
    before, untouched = moves(table_id), fingerprint(waiting_id)
    manual_clock.clear()

    assert actions.sweep() == 1
    played = new_moves(before, moves(table_id))
    assert list(played.values()) == [(0, True, False)]
    assert table_row(table_id).seq == seq + 1
    assert fingerprint(waiting_id) == untouched
    assert [armed[:2] for armed in manual_clock] == [(table_id, seq + 1)]

    assert actions.sweep() == 0  # nothing else is due yet
    assert table_row(table_id).seq == seq + 1

    # a bot's lost step is caught the same way
    table = table_row(table_id)
    assert seat_row(table_id, table.turn_seat).is_bot
    make_due(table_id)
    assert actions.sweep() == 1
    (bot_move,) = new_moves(played | before, moves(table_id)).values()
    assert bot_move[0] == table.turn_seat and bot_move[1] is False and bot_move[2] in (True, None)


# -- 3. away and back ------------------------------------------------------------------------


def time_out(table_id: int) -> tuple[int | None, bool, bool | None]:
    """Seat 0's turn comes and its clock runs out; returns the move the clock made."""
    advance_to(table_id, 0)
    seq = make_due(table_id, expire_turn=True)
    before = moves(table_id)
    assert actions.do_due(table_id, seq) is not None
    (move,) = new_moves(before, moves(table_id)).values()
    return move


def go_away(table_id: int) -> None:
    """Two turns in a row played by the clock: seat 0 is away."""
    assert time_out(table_id)[:2] == (0, True)
    seat = seat_row(table_id, 0)
    assert (seat.timeouts, seat.away) == (1, False)
    assert time_out(table_id)[:2] == (0, True)
    seat = seat_row(table_id, 0)
    assert (seat.timeouts, seat.away) == (2, True)


def assert_bot_plays_at_once(table_id: int, delay: float) -> None:
    """Seat 0 is away and it is their turn: no clock, the bot's pause only, then the bot plays."""
    start = timezone.now()
    table = advance_to(table_id, 0)
    if table.due_at < start:  # their turn came with the last clock-played move, before `start`
        start = table.due_at - timedelta(seconds=delay)
    assert table.turn_deadline is None
    assert start + timedelta(seconds=delay) <= table.due_at <= timezone.now() + timedelta(seconds=delay)
    before = moves(table_id)
    seq = make_due(table_id)  # the bot's pause ends (only due_at: nobody's clock ran out)
    assert actions.do_due(table_id, seq) is not None
    (move,) = new_moves(before, moves(table_id)).values()
    assert move[0] == 0 and move[1] is False and move[2] in (True, None)  # by_bot (trump choices have no flag)
    seat = seat_row(table_id, 0)
    assert (seat.timeouts, seat.away) == (2, True)


def assert_next_turn_has_a_clock(table_id: int) -> None:
    start = timezone.now()
    table = advance_to(table_id, 0)
    assert table.turn_deadline is not None
    assert table.due_at == table.turn_deadline
    seconds = {"bidding": table.bid_seconds, "choosing_trump": table.trump_seconds}.get(table.phase, table.card_seconds)
    assert table.turn_deadline >= min(start, timezone.now()) + timedelta(seconds=seconds - 1)
    assert actions.do_due(table_id, table.seq) is None  # and the clock waits for them


def test_two_timeouts_make_a_player_away_and_their_own_move_brings_them_back(manual_clock, settings):
    settings.POCHA_BOT_DELAY = 0.5
    table_id, (user,) = new_table()
    go_away(table_id)
    assert_bot_plays_at_once(table_id, 0.5)
    assert_bot_plays_at_once(table_id, 0.5)

    # they move by themselves on their (bot-paced) turn: back in their seat, with a clock again
    table = advance_to(table_id, 0)
    before = moves(table_id)
    actions.do_action(table_id, user, legal_choice(table_id, 0), table.seq)
    (move,) = new_moves(before, moves(table_id)).values()
    assert move[0] == 0 and move[1] is False and move[2] in (False, None)
    seat = seat_row(table_id, 0)
    assert (seat.timeouts, seat.away) == (0, False)
    assert_next_turn_has_a_clock(table_id)


def test_one_timeout_is_forgiven_by_a_move(manual_clock):
    table_id, (user,) = new_table()
    assert time_out(table_id)[:2] == (0, True)
    table = advance_to(table_id, 0)
    assert table.turn_deadline is not None  # one timeout is not away
    actions.do_action(table_id, user, legal_choice(table_id, 0), table.seq)
    assert time_out(table_id)[:2] == (0, True)  # so this is again the first in a row
    seat = seat_row(table_id, 0)
    assert (seat.timeouts, seat.away) == (1, False)


def test_back_when_not_away_is_refused(manual_clock):
    table_id, (user,) = new_table()
    before = fingerprint(table_id)
    with pytest.raises(actions.ActionError) as refused:
        actions.do_back(table_id, user, table_row(table_id).seq)
    assert refused.value.code == "not_away"
    assert fingerprint(table_id) == before


# -- a browser tab through the real consumer ------------------------------------------------


class Browser(BoardReader):
    """One tab on the table's socket (the real consumer); frames are read in the background."""

    def __init__(self, user: Any, table_id: int) -> None:
        self.user = user
        self.table_id = table_id
        self.frames: list[str] = []
        self.board = ""
        self.closed = False
        self.comm: WebsocketCommunicator | None = None
        self._reader: asyncio.Task[None] | None = None
        self._arrived = asyncio.Event()

    async def open(self) -> None:
        cookie = await session_cookie(self.user)
        headers = [
            (b"cookie", f"{django_settings.SESSION_COOKIE_NAME}={cookie}".encode()),
            (b"origin", b"http://testserver"),
            (b"host", b"testserver"),
        ]
        self.comm = WebsocketCommunicator(application, f"/ws/mesa/{self.table_id}/", headers=headers)
        connected, code = await self.comm.connect(timeout=10)
        assert connected, f"socket refused: {code}"
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.comm is not None
        while True:
            message = await self.comm.output_queue.get()
            if message["type"] == "websocket.close":
                self.closed = True
            elif message.get("text"):
                self.frames.append(message["text"])
                if SEQ.search(message["text"]):
                    self.board = compose(self.board, message["text"])  # as the page: a section left out stays
            self._arrived.set()
            if self.closed:
                return

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):
                pass
            self._reader = None
        if self.comm is not None:
            await self.comm.disconnect(timeout=10)
            self.comm = None

    async def send(self, payload: dict[str, Any]) -> None:
        assert self.comm is not None
        await self.comm.send_to(text_data=json.dumps(payload))

    async def wait(self, predicate: Callable[[], bool], what: str, timeout: float = 20) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not predicate():
            left = end - loop.time()
            if left <= 0:
                raise AssertionError(
                    f"timed out waiting for {what}; {len(self.frames)} frames, last board:\n{self.board[:3000]}"
                )
            self._arrived.clear()
            if predicate():
                return
            try:
                async with asyncio.timeout(min(left, 0.25)):
                    await self._arrived.wait()
            except TimeoutError:
                pass


async def db(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await database_sync_to_async(fn)(*args, **kwargs)


async def eventually(fn: Callable[[], Any], what: str, timeout: float = 20, every: float = 0.05) -> Any:
    """Poll a synchronous (database) check until it returns something truthy."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        value = await db(fn)
        if value:
            return value
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(every)


async def play_until_turn(table_id: int, position: int, people: dict[int, Browser], timeout: float = 30) -> Table:
    """The connected people in ``people`` make their first offered move on their turns; bots play by the
    clock; returns the table once it is ``position``'s turn."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        table = await db(table_row, table_id)
        assert table.status == Table.Status.PLAYING
        if table.turn_seat == position:
            return table
        mover = people.get(table.turn_seat)
        if mover is None:
            await asyncio.sleep(0.02)
            continue
        await mover.wait(lambda: mover.seq >= table.seq, "the mover's board")
        if mover.seq == table.seq:
            options = mover.game_moves()
            assert options, f"seat {table.turn_seat} is offered no move:\n{mover.board[:3000]}"
            await mover.send(options[0])
            await mover.wait(lambda: mover.seq > table.seq, "the move to land")
    raise AssertionError(f"seat {position} never got the turn")


def rows_since(table_id: int, position: int, since: Any) -> list[Any]:
    """The moves of ``position`` in the table's log made at or after ``since``."""
    return list(Move.objects.filter(table_id=table_id, seat=position, made_at__gte=since))


CLOCK_TAG = re.compile(r'<span class="clock"[^>]*>.*?</span>', re.S)


def without_countdown(board: str) -> str:
    return CLOCK_TAG.sub("", board)


# -- 3b. "Vuelvo" over the socket -------------------------------------------------------------


@pytest.mark.asyncio
async def test_back_frame_over_the_socket_gives_the_seat_back(manual_clock, settings):
    settings.POCHA_BOT_DELAY = 0.5
    table_id, (user,) = await db(new_table)
    tab = Browser(user, table_id)
    await tab.open()
    try:
        # Away while her page stays open (a socket arriving would give her the seat back by itself:
        # tests/live/test_coming_back.py).
        await tab.wait(lambda: bool(tab.board), "the first board")
        await db(go_away, table_id)
        await tab.wait(lambda: "away-line" in tab.board, "the away line")
        assert "El bot está jugando por ti." in tab.board and '"action": "back"' in tab.board
        seq = (await db(table_row, table_id)).seq
        await tab.wait(lambda: tab.seq == seq, "the current board")

        await tab.send({"action": "back", "seq": str(seq)})
        await tab.wait(lambda: tab.seq > seq, "the board after 'Vuelvo'")
        assert "away-line" not in tab.board
        seat = await db(seat_row, table_id, 0)
        assert (seat.timeouts, seat.away) == (0, False)
        await db(assert_next_turn_has_a_clock, table_id)
        table = await db(table_row, table_id)
        await tab.wait(lambda: tab.seq == table.seq, "the board at their turn")
        assert 'class="clock"' in tab.board and tab.game_moves()
    finally:
        await tab.close()


# -- 4. a dropped connection: grace, bot, reconnect, hand-back ------------------------------


@pytest.mark.asyncio
async def test_dropped_player_bot_takes_over_after_grace_and_hands_back(settings, celery_clock_worker):
    """Real clock: the in-process loop, or a Celery worker over Redis in services mode."""
    grace = 3.0  # long enough to look at the table before it runs out, even on a busy machine
    settings.POCHA_DISCONNECT_GRACE = grace
    settings.POCHA_BOT_DELAY = 0

    def setup() -> tuple[int, Any, Any]:
        model = get_user_model()
        ana = model.objects.create_user(username="ana", password=PASSWORD)
        bea = model.objects.create_user(username="bea", password=PASSWORD)
        table = actions.do_create_table(ana, 3)
        actions.do_take_seat(table.pk, bea)
        return table.pk, ana, bea

    table_id, ana, bea = await db(setup)
    tab_a, tab_b = Browser(ana, table_id), Browser(bea, table_id)
    await tab_a.open()
    await tab_b.open()
    reconnected: Browser | None = None
    closed: asyncio.Task[None] | None = None
    try:
        await tab_a.wait(lambda: '"action": "start"' in tab_a.board, "the start button")
        await tab_a.send({"action": "start", "seq": str(tab_a.seq)})
        await eventually(lambda: table_row(table_id).status == Table.Status.PLAYING, "the game to start")
        table = await play_until_turn(table_id, 0, {1: tab_b})
        seq = table.seq
        assert table.due_at == table.turn_deadline  # ana is here: her clock runs

        closing = await db(timezone.now)
        # Her socket closes.  Not awaited here: on Python 3.11 the Redis layer can lose the cancellation
        # of a consumer's pending receive, and the test communicator then waits out its timeout.
        closed = asyncio.get_running_loop().create_task(tab_a.close())
        # The seat is written first, then the table's due step moves (a moment later): wait for both.
        seat, table = await eventually(
            lambda: (
                (s := seat_row(table_id, 0)).sockets == 0
                and ((t := table_row(table_id)).seq != seq or t.due_at != t.turn_deadline)
                and (s, t)
            ),
            "ana's socket to count and her grace to start",
        )
        assert seat.disconnected_at is not None and seat.disconnected_at >= closing
        assert table.turn_seat == 0 and table.seq == seq, "the grace ran out before the test could look"
        # the bot takes over within the grace, unless her own clock runs out sooner
        assert table.due_at == min(table.turn_deadline, seat.disconnected_at + timedelta(seconds=grace))
        assert table.due_at == seat.disconnected_at + timedelta(seconds=grace)
        assert table.seq == seq  # presence is not a move
        await tab_b.wait(lambda: "juega el bot por ana" in tab_b.board, "bea to see who plays for ana")

        table = await eventually(
            lambda: (t := table_row(table_id)).seq > seq and t, "the bot to play for ana", timeout=grace + 15
        )
        (bot_move,) = await db(rows_since, table_id, 0, seat.disconnected_at)
        assert bot_move.by_bot and not bot_move.by_clock
        assert bot_move.made_at >= seat.disconnected_at + timedelta(seconds=grace)

        # the table moves on by itself until bea has to decide (or ana again, with the bot at once)
        await eventually(lambda: table_row(table_id).turn_seat == 1, "bea's turn")
        table = await db(table_row, table_id)
        await tab_b.wait(lambda: tab_b.seq == table.seq, "bea's board to catch up")

        reconnected = Browser(ana, table_id)
        await reconnected.open()
        seat = await eventually(lambda: (s := seat_row(table_id, 0)).sockets == 1 and s, "ana's socket to count")
        assert seat.disconnected_at is None
        await reconnected.wait(
            lambda: reconnected.seq == table.seq and "juega el bot por ana" not in reconnected.board,
            "ana's page after reconnecting",
        )
        fresh = await db(board_view.render_board, table_id, ana.pk, "es")
        assert fresh[0] == table.seq == (await db(table_row, table_id)).seq
        assert without_countdown(reconnected.board) == without_countdown(fresh[1])
        await tab_b.wait(lambda: "juega el bot por ana" not in tab_b.board, "bea to see ana back")

        # her next decision waits for her
        table = await play_until_turn(table_id, 0, {1: tab_b})
        assert table.turn_deadline is not None and table.due_at == table.turn_deadline
        assert table.turn_deadline > timezone.now() + timedelta(seconds=5)
        await reconnected.wait(lambda: reconnected.seq == table.seq, "ana's turn on her page")
        options = reconnected.game_moves()
        assert options
        await asyncio.sleep(grace + 0.5)
        assert (await db(table_row, table_id)).seq == table.seq  # nobody played for her
        before = await db(moves, table_id)
        await reconnected.send(options[0])
        await reconnected.wait(lambda: reconnected.seq > table.seq, "her move")
        played = new_moves(before, await db(moves, table_id))
        hers = [value for value in played.values() if value[0] == 0]  # bots may have moved after her
        assert len(hers) == 1 and hers[0][1] is False and hers[0][2] in (False, None), played
    finally:
        if closed is not None:
            await closed
        for tab in (tab_a, tab_b, reconnected):
            if tab is not None:
                await tab.close()


# -- 5. nobody plays: the clock alone finishes the game -------------------------------------


def assert_finished_and_consistent(table_id: int, humans: int) -> None:
    table = table_row(table_id)
    assert table.status == Table.Status.FINISHED
    assert table.due_at is None and table.turn_deadline is None
    record = check_the_log(table_id)
    assert len(record["rounds"]) == Round.objects.filter(table_id=table_id).count()
    decisions = moves(table_id)
    for position in range(humans):
        theirs = [value for value in decisions.values() if value[0] == position]
        # every bid, trump choice and card of theirs was the clock's or the bot's
        assert theirs and all(by_clock or by_bot for _seat, by_clock, by_bot in theirs), theirs
        assert any(by_bot for _seat, _clock, by_bot in theirs)
        # two clock-played turns in a row, then the bot at once for the rest of the game
        assert sum(1 for _seat, by_clock, _bot in theirs if by_clock) == 2
        seat = seat_row(table_id, position)
        assert (seat.timeouts, seat.away) == (2, True)


@pytest.mark.parametrize("humans", [1, 2])
def test_idle_people_game_finishes_by_the_sweeper_alone(manual_clock, humans):
    table_id, _users = new_table(3, humans, bid_seconds=0, card_seconds=0, trump_seconds=0)
    for _sweep in range(3000):
        if table_row(table_id).status == Table.Status.FINISHED:
            break
        if actions.sweep() == 0:
            time.sleep(0.001)
    assert_finished_and_consistent(table_id, humans)
    assert manual_clock and all(a[0] == table_id for a in manual_clock)


@pytest.mark.asyncio
async def test_idle_person_game_finishes_on_the_real_clock(settings, celery_clock_worker):
    """The in-process loop (or the Celery worker in services mode) drives every step of the game."""
    settings.POCHA_BOT_DELAY = 0
    if not settings.POCHA_CELERY_CLOCK:
        server_loop.bind_loop()  # as the ASGI application does on its first request
    table_id, _users = await db(new_table, 3, 1, bid_seconds=1, card_seconds=0, trump_seconds=0)
    await eventually(
        lambda: table_row(table_id).status == Table.Status.FINISHED, "the game to finish", timeout=120, every=0.2
    )
    await db(assert_finished_and_consistent, table_id, 1)


# -- 6. services mode: a Celery worker with beat, in its own process -------------------------


needs_services = pytest.mark.skipif(
    not django_settings.POCHA_CELERY_CLOCK,
    reason="services mode only: needs REDIS_URL (Celery worker + beat) and DATABASE_URL (PostgreSQL)",
)


class CeleryProcess:
    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@pytest.fixture
def celery_worker_with_beat(transactional_db, settings, tmp_path) -> Iterator[CeleryProcess]:
    """``celery -A pocha_site worker -B`` as a separate process against this test's database and Redis."""
    database = settings.DATABASES["default"]
    assert database["ENGINE"].endswith("postgresql"), "services mode expects PostgreSQL"
    auth = database["USER"] + (f":{database['PASSWORD']}" if database.get("PASSWORD") else "")
    url = f"postgres://{auth}@{database['HOST'] or '127.0.0.1'}:{database['PORT'] or 5432}/{database['NAME']}"
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "REDIS_URL": settings.REDIS_URL,
        "POCHA_BOT_DELAY": "0",
        "DJANGO_SETTINGS_MODULE": "pocha_site.settings",
        "PYTHONUNBUFFERED": "1",
    }
    worker = CeleryProcess(tmp_path / "celery.log")
    celery = Path(sys.executable).with_name("celery")
    command = [
        str(celery),
        "-A",
        "pocha_site",
        "worker",
        "-B",
        "--pool",
        "solo",
        "-l",
        "info",
        "-s",
        str(tmp_path / "beat-schedule"),
        "-n",
        f"clock-test-{os.getpid()}@%h",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    with open(worker.log_path, "wb") as log:
        worker.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        end = time.monotonic() + 60
        while "ready." not in worker.log or "beat: Starting" not in worker.log:
            assert worker.process.poll() is None, "celery exited:\n" + worker.log
            assert time.monotonic() < end, "celery did not start:\n" + worker.log
            time.sleep(0.2)
        yield worker
    finally:
        if worker.process.poll() is None:
            os.killpg(worker.process.pid, signal.SIGTERM)
            try:
                worker.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(worker.process.pid, signal.SIGKILL)
                worker.process.wait(timeout=10)
        print("---- celery worker + beat log ----\n" + worker.log[-20000:])


@needs_services
@pytest.mark.asyncio
async def test_services_expired_turn_is_played_by_the_worker_and_seen_by_the_client(celery_worker_with_beat, settings):
    settings.POCHA_BOT_DELAY = 0

    def setup() -> tuple[int, Any]:
        user = get_user_model().objects.create_user(username="carla", password=PASSWORD)
        table = actions.do_create_table(user, 3)
        Table.objects.filter(pk=table.pk).update(bid_seconds=1)
        return table.pk, user

    table_id, user = await db(setup)
    tab = Browser(user, table_id)
    await tab.open()
    try:
        await tab.wait(lambda: '"action": "start"' in tab.board, "the start button")
        await tab.send({"action": "start", "seq": str(tab.seq)})
        # the worker plays the bots until it is her turn to bid; she does nothing
        await tab.wait(lambda: bool(tab.game_moves()), "her first turn", timeout=30)
        seq = tab.seq
        table = await db(table_row, table_id)
        assert table.seq == seq and table.turn_seat == 0 and table.phase == "bidding"
        assert table.turn_deadline is not None and table.due_at == table.turn_deadline
        await tab.wait(lambda: tab.seq > seq, "the clock to play her turn", timeout=20)
        bid = await db(lambda: Move.objects.get(table_id=table_id, seat=0, kind=Move.Kind.BID))
        assert bid.by_clock and not bid.by_bot, celery_worker_with_beat.log[-5000:]
        seat = await db(seat_row, table_id, 0)
        assert seat.timeouts == 1
        assert "games.tasks.run_due" in celery_worker_with_beat.log
    finally:
        await tab.close()


@needs_services
@pytest.mark.asyncio
async def test_services_beat_sweeper_plays_a_turn_whose_task_was_lost(celery_worker_with_beat, settings):
    settings.POCHA_BOT_DELAY = 0
    table_id, _users = await db(new_table, prefix="lost")  # 30-second clocks: the armed task is far away
    table = await eventually(lambda: (t := table_row(table_id)).turn_seat == 0 and t, "her turn", timeout=30)
    assert table.turn_deadline > timezone.now() + timedelta(seconds=20)
    before = await db(moves, table_id)
    lost_at = time.monotonic()
    seq = await db(make_due, table_id, expire_turn=True)  # the clock ran out, and no task will come before 20 s
    table = await eventually(lambda: (t := table_row(table_id)).seq > seq and t, "the beat's sweep", timeout=15)
    assert time.monotonic() - lost_at < 15
    played = new_moves(before, await db(moves, table_id))
    mine = [value for value in played.values() if value[0] == 0]
    assert mine and mine[0][1] is True, played

    def a_sweep_moved_a_table() -> bool:  # the worker logs the sweep's count just after it commits
        swept = re.findall(
            r"Task games\.tasks\.sweep_due\[[^\]]+\] succeeded in [\d.]+s: (\d+)", celery_worker_with_beat.log
        )
        return any(int(n) > 0 for n in swept)

    end = time.monotonic() + 10
    while not a_sweep_moved_a_table():
        assert time.monotonic() < end, "no sweep moved a table:\n" + celery_worker_with_beat.log[-5000:]
        await asyncio.sleep(0.1)


@needs_services
@pytest.mark.asyncio
async def test_services_a_person_thinking_on_a_quiet_table_keeps_the_seat(settings, celery_clock_worker):
    """Nothing reaches her socket while she thinks for longer than the channel layer's 5-second wait for
    events: the socket stays open, she stays present, and the bot does not play for her."""
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_DISCONNECT_GRACE = 1.0

    def setup() -> tuple[int, Any]:
        user = get_user_model().objects.create_user(username="dora", password=PASSWORD)
        return actions.do_create_table(user, 3).pk, user

    table_id, user = await db(setup)
    tab = Browser(user, table_id)
    await tab.open()
    try:
        await tab.wait(lambda: '"action": "start"' in tab.board, "the start button")
        await tab.send({"action": "start", "seq": str(tab.seq)})
        await tab.wait(lambda: bool(tab.game_moves()), "her first turn", timeout=30)
        seq = tab.seq
        await asyncio.sleep(7)  # she thinks; the table is quiet
        assert not tab.closed and not tab.comm.future.done(), "her socket was dropped while she was thinking"
        seat = await db(seat_row, table_id, 0)
        assert seat.sockets == 1 and seat.disconnected_at is None
        assert (await db(table_row, table_id)).seq == seq  # nobody played for her
        await tab.send(tab.game_moves()[0])
        await tab.wait(lambda: tab.seq > seq, "her move")
        (move,) = await db(rows_since, table_id, 0, timezone.now() - timedelta(seconds=5))
        assert not move.by_bot and not move.by_clock
    finally:
        await tab.close()
