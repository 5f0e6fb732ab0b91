"""People at a table of the stack, as browsers: HTTP with a session cookie and CSRF, and the table's
WebSocket (``tests/live/wsclient.py``), reopened whenever the server closes it, as the page does."""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from live.wsclient import Browser, WebSocket, compose

from .stack import Stack

SEQ = re.compile(r'data-board-seq="(\d+)"')
HX_VALS = re.compile(r"hx-vals='([^']*)'")
FLASH = re.compile(r'<div id="flash"[^>]*>(.*?)</div>', re.S)


@dataclass
class Timeline:
    """When each new seq of the table was first seen by anyone: the game's progress, to measure stalls."""

    seen: dict[int, float] = field(default_factory=dict)

    def saw(self, seq: int) -> None:
        self.seen.setdefault(seq, time.monotonic())

    def first_after(self, moment: float) -> float | None:
        later = [t for t in self.seen.values() if t > moment]
        return min(later) if later else None

    def longest_gap(self, start: float, end: float) -> float:
        """The longest time without progress between ``start`` and ``end``."""
        times = sorted([start, *(t for t in self.seen.values() if start < t < end), end])
        return max(b - a for a, b in zip(times, times[1:]))


class Person:
    """One person at the table with one tab open: plays a legal move whenever it is their turn, and opens
    the socket again (after a short wait, like the page) whenever the server closes it."""

    def __init__(self, stack: Stack, username: str, timeline: Timeline, think: float = 0.05) -> None:
        self.stack = stack
        #: seconds a person takes to move (a fast one): the game lasts long enough to watch it recover
        self.think = think
        self.username = username
        self.browser = Browser(stack)
        self.timeline = timeline
        self.table_id = 0
        self.ws: WebSocket | None = None
        self.board = ""
        self.flashes: list[str] = []
        self.turn = 0
        self.moves = 0
        #: (closed at, open again at) for every socket the server closed
        self.reconnects: list[tuple[float, float]] = []

    async def login(self) -> None:
        await asyncio.to_thread(self.browser.login, self.username)

    # -- the socket -----------------------------------------------------------------------------

    @property
    def seq(self) -> int:
        match = SEQ.search(self.board)
        return int(match.group(1)) if match else -1

    @property
    def over(self) -> bool:
        return 'class="ranking"' in self.board

    def options(self) -> list[dict[str, Any]]:
        return [json.loads(html.unescape(v)) for v in HX_VALS.findall(self.board)]

    def game_moves(self) -> list[dict[str, Any]]:
        return [o for o in self.options() if o.get("action") in ("bid", "trump", "play")]

    @property
    def client_port(self) -> int:
        assert self.ws is not None
        return self.ws.local_port

    async def open(self, table_id: int, timeout: float = 30) -> None:
        """Open the table's socket and read the first board, trying again until the site takes it."""
        self.table_id = table_id
        end = time.monotonic() + timeout
        while True:
            try:
                headers = {"Origin": self.stack.origin, "Cookie": f"sessionid={self.browser.cookie('sessionid')}"}
                self.ws = await WebSocket.connect(self.stack.port, f"/ws/mesa/{table_id}/", headers)
                await self.next_board(timeout=10)
                return
            except (OSError, AssertionError, asyncio.IncompleteReadError, TimeoutError, SocketClosed) as error:
                await self.drop()
                if time.monotonic() > end:
                    raise AssertionError(f"{self.username} could not open the table's socket: {error!r}") from error
                await asyncio.sleep(0.5)

    async def drop(self) -> None:
        if self.ws is not None:
            ws, self.ws = self.ws, None
            try:
                await asyncio.wait_for(ws.close(), 2)
            except (OSError, TimeoutError):
                pass

    async def close(self) -> None:
        await self.drop()

    async def next_board(self, timeout: float) -> str:
        """The next board; SocketClosed when the server closes the socket."""
        assert self.ws is not None
        while True:
            frame = await asyncio.wait_for(self.ws.recv(), timeout)
            if frame is None:
                raise SocketClosed
            flash = FLASH.search(frame)
            match = SEQ.search(frame)
            if match:
                self.board = compose(self.board, frame)
                self.timeline.saw(int(match.group(1)))
            if flash and html.unescape(flash.group(1)).strip():
                self.flashes.append(html.unescape(flash.group(1)).strip())
                return self.board  # a move refused: the caller looks at the turn again
            if match:
                return frame

    async def send(self, payload: dict[str, Any]) -> None:
        assert self.ws is not None
        await self.ws.send(payload)

    async def wait(self, predicate: Any, what: str, timeout: float = 60) -> None:
        """Read boards until ``predicate()``; a closed socket is opened again (as the page does)."""
        end = time.monotonic() + timeout
        while not predicate():
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{self.username} timed out waiting for {what}; last board:\n{self.board[:2000]}")
            try:
                if self.ws is None:
                    await self.open(self.table_id)
                    continue
                await self.next_board(timeout=left)
            except TimeoutError:
                pass
            except (SocketClosed, OSError, asyncio.IncompleteReadError):
                await self.reopen()

    async def reopen(self) -> None:
        """The server closed the socket (or it is gone): open it again after a short wait, as the page does."""
        closed_at = time.monotonic()
        await self.drop()
        await asyncio.sleep(0.2)
        await self.open(self.table_id)
        self.reconnects.append((closed_at, time.monotonic()))

    # -- playing --------------------------------------------------------------------------------

    async def play_to_the_end(self, timeout: float = 240) -> None:
        end = time.monotonic() + timeout
        while not self.over:
            await self.wait(lambda: self.over or bool(self.game_moves()), "my turn", timeout=end - time.monotonic())
            if self.over:
                break
            await asyncio.sleep(self.think)
            options = self.game_moves()
            seq, reconnects, flashes = self.seq, len(self.reconnects), len(self.flashes)
            try:
                await self.send(options[self.turn % len(options)])
            except (OSError, AssertionError):
                # the socket is gone (the client refuses to send on a closed one): open it again, and look
                # at the turn again on the board it brings
                await self.reopen()
                continue
            self.turn += 1

            def landed_or_lost(seq: int = seq, reconnects: int = reconnects, flashes: int = flashes) -> bool:
                # landed; or the socket was opened again (the move may have died with the old one) and it
                # is still my turn; or the server refused it (said why): then look at the turn again
                return (
                    self.seq > seq
                    or len(self.flashes) > flashes
                    or (len(self.reconnects) > reconnects and bool(self.game_moves()))
                )

            await self.wait(landed_or_lost, "my move to land", timeout=end - time.monotonic())
            if self.seq > seq:
                self.moves += 1


class SocketClosed(Exception):
    pass
