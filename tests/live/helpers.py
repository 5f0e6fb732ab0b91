"""Driving a table through the real consumer: a logged-in WebSocket client that reads its own fragments."""

from __future__ import annotations

import asyncio
import html
import json
import re
from typing import Any

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from benchmarks.load.wsclient import compose
from pocha_site.asgi import application

HX_VALS = re.compile(r"hx-vals='([^']*)'")
SEQ = re.compile(r'data-board-seq="(\d+)"')


@database_sync_to_async
def make_user(name: str) -> Any:
    return get_user_model().objects.create_user(username=name, password="cuarenta-bazas-2025")


@database_sync_to_async
def session_cookie(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


class BoardReader:
    """What a test client reads off the last board it was sent: its seq and the moves it offers."""

    board: str

    @property
    def seq(self) -> int:
        match = SEQ.search(self.board)
        return int(match.group(1)) if match else -1

    def options(self) -> list[dict[str, str]]:
        """The moves the current board offers (every enabled ws-send control)."""
        return [json.loads(html.unescape(v)) for v in HX_VALS.findall(self.board)]

    def game_moves(self) -> list[dict[str, str]]:
        return [o for o in self.options() if o.get("action") in ("bid", "trump", "play")]


class Player(BoardReader):
    """One browser tab at a table: every frame it receives is kept in ``frames``."""

    def __init__(self, user: Any, table_id: int, language: str = "es") -> None:
        self.user = user
        self.table_id = table_id
        self.language = language
        self.frames: list[str] = []
        self.board = ""
        self.comm: WebsocketCommunicator | None = None

    async def connect(self, origin: bytes = b"http://testserver") -> bool:
        cookie = await session_cookie(self.user)
        headers = [
            (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}; django_language={self.language}".encode()),
            (b"origin", origin),
            (b"host", b"testserver"),
        ]
        self.comm = WebsocketCommunicator(application, f"/ws/mesa/{self.table_id}/", headers=headers)
        connected, _ = await self.comm.connect(timeout=5)
        if connected:
            await self.receive()
        return bool(connected)

    async def receive(self, timeout: float = 5) -> str:
        assert self.comm is not None
        # Not comm.receive_from: its timeout cancels the consumer, and wait_for() retries after one.
        message = await next_message(self.comm, timeout)
        assert message["type"] == "websocket.send", message
        frame = message["text"]
        self.frames.append(frame)
        if SEQ.search(frame):
            self.board = compose(self.board, frame)  # the page: a section left out stays
        return frame

    async def drain(self, quiet: float = 0.05) -> None:
        assert self.comm is not None
        while not await self.comm.receive_nothing(timeout=quiet):
            await self.receive()

    async def send(self, payload: dict[str, Any] | str) -> None:
        assert self.comm is not None
        await self.comm.send_to(text_data=payload if isinstance(payload, str) else json.dumps(payload))

    async def close(self) -> None:
        if self.comm is not None:
            await self.comm.disconnect()


@database_sync_to_async
def table_row(table_id: int) -> str:
    """The table as the database has it: a board behind it means a push that never came (a change made
    by another process, say), a board at it a step nobody played."""
    from games.models import Table

    row = Table.objects.filter(pk=table_id).values("seq", "status", "phase", "turn_seat", "due_at").first()
    return f"the database has table {table_id} as {row}"


async def wait_for(predicate: Any, player: Player, timeout: float = 10) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        left = end - loop.time()
        if left <= 0:
            raise AssertionError(
                f"timed out waiting; {await table_row(player.table_id)}; last board (seq {player.seq}):\n"
                + player.board[:3000]
            )
        try:
            await player.receive(timeout=min(left, 1))
        except TimeoutError:
            pass


# -- background-read tabs, tables seated in one call, fingerprints -------------------------

FLASH = re.compile(r'<div id="flash"[^>]*>(.*?)</div>', re.S)
#: seconds between two checks of a tab's wait when none of its frames comes
RECHECK = 0.1


async def next_message(comm: WebsocketCommunicator, timeout: float) -> dict[str, Any]:
    """The application's next message, or asyncio.TimeoutError.

    Unlike ``receive_output``, a timeout here leaves the consumer running (asgiref's own
    helper cancels the application when it times out).
    """
    if comm.future.done():
        comm.future.result()
    async with asyncio.timeout(timeout):
        return await comm.output_queue.get()


def flash_message(frame: str) -> str | None:
    """The text of a frame's flash area (``""`` when cleared), or None if the frame has none."""
    match = FLASH.search(frame)
    return html.unescape(match.group(1)).strip() if match else None


def is_board(frame: str) -> bool:
    return SEQ.search(frame) is not None


class Tab(BoardReader):
    """One browser tab whose frames are read in the background as they come.

    ``frames`` keeps every text frame in order; ``closed`` the close code once the server closed
    the socket; ``refused`` the code when the handshake was refused.  ``activity`` (shared by the
    tabs of a test if given) is set on every frame, so a driver can wait for "anything happened".
    """

    def __init__(self, user: Any, table_id: int, language: str = "es", activity: asyncio.Event | None = None) -> None:
        self.user = user
        self.table_id = table_id
        self.language = language
        self.activity = activity or asyncio.Event()
        self.frames: list[str] = []
        self.board = ""  # the board as the page shows it (``compose``)
        self.closed: int | None = None
        self.refused: int | None = None
        self.comm: WebsocketCommunicator | None = None
        self._reader: asyncio.Task[None] | None = None
        self._arrived = asyncio.Event()  # this tab's own wake-up, so waiters never steal each other's

    async def open(self, origin: bytes = b"http://testserver", path: str | None = None) -> bool:
        headers = [(b"origin", origin), (b"host", b"testserver")]
        cookies = f"django_language={self.language}"
        if self.user is not None:
            cookie = await session_cookie(self.user)
            cookies = f"{settings.SESSION_COOKIE_NAME}={cookie}; " + cookies
        headers.append((b"cookie", cookies.encode()))
        self.comm = WebsocketCommunicator(application, path or f"/ws/mesa/{self.table_id}/", headers=headers)
        self.closed = None
        connected, code = await self.comm.connect(timeout=5)
        if not connected:
            self.refused = code
            return False
        self._reader = asyncio.get_running_loop().create_task(self._read())
        return True

    async def _read(self) -> None:
        assert self.comm is not None
        while True:
            message = await next_message(self.comm, 3600)
            if message["type"] == "websocket.close":
                self.closed = message.get("code", 1000)
                self._arrived.set()
                self.activity.set()
                return
            text = message.get("text")
            if text is not None:
                self.frames.append(text)
                if is_board(text):
                    self.board = compose(self.board, text)  # the page: a section left out stays
            self._arrived.set()
            self.activity.set()

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):
                pass
            self._reader = None
        if self.comm is not None and self.closed is None:
            await self.comm.disconnect()
        self.comm = None

    async def send(self, payload: dict[str, Any] | list[Any] | str) -> None:
        assert self.comm is not None
        await self.comm.send_to(text_data=payload if isinstance(payload, str) else json.dumps(payload))

    async def send_bytes(self, data: bytes) -> None:
        assert self.comm is not None
        await self.comm.send_to(bytes_data=data)

    @property
    def boards(self) -> list[str]:
        return [f for f in self.frames if is_board(f)]

    @property
    def over(self) -> bool:
        return 'class="ranking"' in self.board

    def flashes(self, since: int = 0) -> list[str]:
        """The error messages received in frames[since:] (frames that are only a flash)."""
        return [m for f in self.frames[since:] if not is_board(f) and (m := flash_message(f))]

    async def wait_for(self, predicate: Any, timeout: float = 10) -> None:
        """Until ``predicate()``, checked as this tab's frames come and at least every ``RECHECK`` s: it may
        read other tabs too, whose frames do not wake this one."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not predicate():
            left = end - loop.time()
            if left <= 0:
                raise AssertionError(f"timed out waiting; {len(self.frames)} frames, last board:\n{self.board[:3000]}")
            self._arrived.clear()
            if predicate():
                return
            try:
                async with asyncio.timeout(min(left, RECHECK)):
                    await self._arrived.wait()
            except TimeoutError:
                pass


def person(name: str) -> Any:
    """A user who logs in by session only (synchronous): no password to hash, which costs ~0.3 s each."""
    return get_user_model().objects.create_user(username=name, password=None)


def play_to_the_end(table_id: int, max_steps: int = 5000) -> Any:
    """Every remaining move (synchronous): people play their default at once, bots (and seats left to the
    bot) when due — which is at once with ``POCHA_BOT_DELAY = 0``.  Returns the finished table."""
    from games.engine import default_action
    from games.engine.snapshot import load
    from games.models import Seat, Table
    from games.table import actions

    for _ in range(max_steps):
        table = Table.objects.get(pk=table_id)
        if table.status != Table.Status.PLAYING:
            return table
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        if seat.is_bot or seat.away or seat.left:
            assert actions.do_due(table.pk, table.seq) is not None, "a bot's move was not due"
        else:
            actions.do_action(table.pk, seat.user, default_action(load(table.state)), table.seq)
    raise AssertionError("the game did not end")


def seated_table(size: int, humans: int, *, prefix: str = "p") -> tuple[int, list[Any]]:
    """A table of ``size`` with ``humans`` people seated at positions 0..humans-1 (synchronous).

    When every seat is a person, the last one sitting starts the game (no bots, no clock).
    Returns the table id and the users in seat order.
    """
    from games.table import actions

    users = [person(f"{prefix}{i}") for i in range(humans)]
    table = actions.do_create_table(users[0], size)
    for user in users[1:]:
        actions.do_take_seat(table.pk, user)
    return table.pk, users


def table_fingerprint(table_id: int) -> dict[str, Any]:
    """Everything a refused request must leave as it was (synchronous)."""
    from games.models import Move, Round, Seat, Table

    table = Table.objects.get(pk=table_id)
    return {
        "seq": table.seq,
        "status": table.status,
        "phase": table.phase,
        "turn_seat": table.turn_seat,
        "round_number": table.round_number,
        "state": table.state,
        "rounds": list(Round.objects.filter(table_id=table_id).values_list("number", "result")),
        "moves": list(Move.objects.filter(table_id=table_id).values_list("seq", "seat", "kind", "value")),
        "seats": list(Seat.objects.filter(table_id=table_id).values_list("position", "user_id", "is_bot")),
    }


def check_the_log(table_id: int) -> dict[str, Any]:
    """A finished game's log against everything derived from it (synchronous): its record replays through
    the engine's checks to the totals the table's state reached move by move and the seats were settled
    with, to every round's kept result, and the engine's own export of that replay is the record again; a
    state rebuilt from the log is the table's state.  Returns the record."""
    from games.engine import export_record, replay
    from games.models import Move, Round, Seat, Table
    from games.table import history

    table = Table.objects.get(pk=table_id)
    assert table.status == Table.Status.FINISHED
    record = history.record(table)
    assert record is not None
    replayed = replay(record).game
    assert replayed.is_over
    assert replayed.totals == table.state["totals"]
    assert replayed.totals == [s.final_total for s in Seat.objects.filter(table=table).order_by("position")]
    kept = list(Round.objects.filter(table=table).order_by("number").values_list("result", flat=True))
    assert kept == [r.as_json() for r in replayed.results]
    assert export_record(replayed) == record
    assert history.current_state(history.rebuild(table)) == table.state
    decisions = sum(len(r["bids"]) + len(r["plays"]) + ("trump_suit" in r) for r in record["rounds"])
    assert Move.objects.filter(table=table).count() == decisions
    return record


async def settle(tabs: list[Tab], table_id: int, quiet: float = 0.1) -> int:
    """Wait until the table stops moving by itself (sockets opening count as changes), every tab shows
    its latest ``seq`` and no tab was sent anything for ``quiet`` seconds (a redraw at the same seq, such
    as a new spectator's count, may still be on its way); returns that seq."""
    from games.models import Table

    def current() -> int:
        return Table.objects.only("seq").get(pk=table_id).seq

    seq = await database_sync_to_async(current)()
    while True:
        for tab in tabs:
            await tab.wait_for(lambda tab=tab: tab.seq >= seq)
        sent = sum(len(tab.frames) for tab in tabs)
        await asyncio.sleep(quiet)
        now = await database_sync_to_async(current)()
        if now == seq and sum(len(tab.frames) for tab in tabs) == sent:
            return seq
        seq = now
