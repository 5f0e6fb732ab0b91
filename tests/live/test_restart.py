"""A real server killed with SIGKILL mid-game, started again on the same database: the game goes on
and ends with a record that replays to the stored totals, no move lost or played twice.

The server is ``daphne`` in a separate process in the one-command local mode (``support.server.sqlite_site``:
SQLite file, in-memory channel layer, in-process clock); the test talks to it as a browser would: HTTP with a
session cookie and CSRF, and a WebSocket (wsclient.py).
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from support.server import Daphne, sqlite_site

from benchmarks.load.wsclient import compose
from games.engine import replay
from games.engine.snapshot import load

from .wsclient import PASSWORD, Browser, WebSocket

SEQ = re.compile(r'data-board-seq="(\d+)"')
HX_VALS = re.compile(r"hx-vals='([^']*)'")
FLASH = re.compile(r'<div id="flash"[^>]*>(.*?)</div>', re.S)


class TableTab:
    """The table page's socket: the latest board, and the moves it offers."""

    def __init__(self, server: Daphne, browser: Browser, table_id: int) -> None:
        self.server = server
        self.browser = browser
        self.table_id = table_id
        self.board = ""
        self.flashes: list[str] = []
        self.ws: WebSocket | None = None

    async def open(self) -> None:
        headers = {"Origin": self.server.origin, "Cookie": f"sessionid={self.browser.cookie('sessionid')}"}
        self.ws = await WebSocket.connect(self.server.port, f"/ws/mesa/{self.table_id}/", headers)
        await self.next_board()

    @property
    def seq(self) -> int:
        match = SEQ.search(self.board)
        return int(match.group(1)) if match else -1

    @property
    def over(self) -> bool:
        return 'class="ranking"' in self.board

    def game_moves(self) -> list[dict[str, str]]:
        options = [json.loads(html.unescape(v)) for v in HX_VALS.findall(self.board)]
        return [o for o in options if o.get("action") in ("bid", "trump", "play")]

    async def next_board(self, timeout: float = 20) -> str:
        assert self.ws is not None
        while True:
            frame = await asyncio.wait_for(self.ws.recv(), timeout)
            assert frame is not None, "the server closed the socket:\n" + self.server.log[-5000:]
            flash = FLASH.search(frame)
            if flash and html.unescape(flash.group(1)).strip():
                self.flashes.append(html.unescape(flash.group(1)).strip())
            if SEQ.search(frame):
                self.board = compose(self.board, frame)  # as the page: a section left out stays
                return frame

    async def wait(self, predicate: Any, what: str, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while not predicate():
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}; last board:\n{self.board[:3000]}")
            try:
                await self.next_board(timeout=left)
            except TimeoutError:
                pass

    async def send(self, payload: dict[str, Any]) -> None:
        assert self.ws is not None
        await self.ws.send(payload)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None


class Me:
    """My moves: every one the server acknowledged, and the one in flight when the server died."""

    def __init__(self) -> None:
        self.acknowledged = 0
        self.in_flight = 0
        self.turn = 0

    async def play_turns(self, tab: TableTab, turns: int | None, *, kill_after_send: Daphne | None = None) -> None:
        """Play ``turns`` of my turns (None: to the end).  With ``kill_after_send``, the last move is sent
        and the server is killed at once, before its answer."""
        played = 0
        while not tab.over and (turns is None or played < turns):
            await tab.wait(lambda: tab.over or bool(tab.game_moves()), "my turn")
            if tab.over:
                break
            options = tab.game_moves()
            seq = tab.seq
            await tab.send(options[self.turn % len(options)])
            self.turn += 1
            played += 1
            if kill_after_send is not None and played == turns:
                kill_after_send.kill()
                self.in_flight += 1
                return
            await tab.wait(lambda: tab.seq > seq, "my move to land")
            self.acknowledged += 1


def read_table(database: Path, table_id: int) -> dict[str, Any]:
    """The stored game, straight from the SQLite file.  Opened for writing though it only reads: the server
    may have been killed with its write-ahead log open, and the first connection after that rebuilds the
    log's index, which a read-only one cannot ("attempt to write a readonly database")."""
    with closing(sqlite3.connect(database, timeout=20)) as db:
        status, state, seq, turn_seat, due_at = db.execute(
            "SELECT status, state, seq, turn_seat, due_at FROM games_table WHERE id = ?", (table_id,)
        ).fetchone()
        rounds = db.execute(
            "SELECT number, result FROM games_round WHERE table_id = ? ORDER BY number", (table_id,)
        ).fetchall()
        moves = db.execute(
            "SELECT seq, round, seat, kind, value, by_clock, by_bot FROM games_move WHERE table_id = ? ORDER BY seq",
            (table_id,),
        ).fetchall()
        seat = db.execute(
            "SELECT sockets, timeouts, away FROM games_seat WHERE table_id = ? AND position = 0", (table_id,)
        ).fetchone()
    return {
        "status": status,
        "state": json.loads(state),
        "seq": seq,
        "turn_seat": turn_seat,
        "due_at": due_at,
        "rounds": rounds,
        "moves": moves,
        "seat0": seat,
    }


@pytest.fixture
def server(tmp_path: Path) -> Any:
    server = sqlite_site(tmp_path)
    try:
        yield server
    finally:
        server.kill()
        print("---- server log ----\n" + server.log[-30000:])


async def test_server_killed_mid_game_resumes_and_finishes_consistently(server: Daphne) -> None:
    server.manage("migrate", "--no-input")
    server.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; "
        f"get_user_model().objects.create_user('rosa', password='{PASSWORD}')",
    )
    server.start()
    browser = Browser(server)
    browser.login("rosa")
    table_id = browser.create_table(3)
    me = Me()

    # first life: start with two bots, play some turns, and die right after sending a move
    tab = TableTab(server, browser, table_id)
    await tab.open()
    options = [o for o in HX_VALS.findall(tab.board) if '"start"' in o]
    assert options, tab.board[:3000]
    await tab.send(json.loads(html.unescape(options[0])))
    await me.play_turns(tab, 6)
    await me.play_turns(tab, 1, kill_after_send=server)
    await tab.close()
    killed_at = read_table(server.database, table_id)
    assert killed_at["status"] == "playing"

    # second life: the page comes back at the stored seq; play on, then die while the bots are due
    server.start()
    tab = TableTab(server, browser, table_id)
    await tab.open()
    assert tab.seq >= killed_at["seq"]
    await me.play_turns(tab, 6)
    while tab.game_moves():  # until my move lands and a bot is to play
        await me.play_turns(tab, 1)
    server.kill()  # the bot's step armed in memory (0.05 s after my move) most likely dies with the server
    await tab.close()
    second = read_table(server.database, table_id)
    assert second["status"] == "playing"
    print(
        "after the second kill: turn of seat",
        second["turn_seat"],
        "due",
        second["due_at"],
        "; seat 0 (sockets, timeouts, away) =",
        second["seat0"],
    )

    # third life: the sweeper (started by the first request) catches the lost steps; play to the end
    server.start()
    tab = TableTab(server, browser, table_id)
    await tab.open()
    assert tab.seq >= second["seq"]
    await me.play_turns(tab, None)
    assert tab.over
    assert not tab.flashes, tab.flashes  # no move of mine was refused
    await tab.close()

    _url, body = browser.get(f"/mesa/{table_id}/partida.json")
    record = json.loads(body)
    server.kill()
    stored = read_table(server.database, table_id)
    assert stored["status"] == "finished"

    # the record replays to the stored totals: the table's state and the rounds' results
    game = load(stored["state"])
    replayed = replay(record)
    assert replayed.game.is_over and game.is_over
    assert replayed.game.totals == game.totals
    points = [json.loads(result)["points"] for _number, result in stored["rounds"]]
    assert [sum(p[seat] for p in points) for seat in range(3)] == list(game.totals)

    # every move is stored once, in order, and the log's moves are the record's
    assert len(stored["rounds"]) == len(record["rounds"]) == len(game.schedule)
    seqs = [m[0] for m in stored["moves"]]
    assert seqs == sorted(set(seqs))
    for (number, _result), entry in zip(stored["rounds"], record["rounds"]):
        moves = [m for m in stored["moves"] if m[1] == number]
        assert [int(m[4]) for m in moves if m[3] == "b"] == entry["bids"]
        assert [m[4] for m in moves if m[3] == "p"] == entry["plays"]
        assert [m[4] for m in moves if m[3] == "t"] == ([entry["trump_suit"]] if "trump_suit" in entry else [])
    # my own decisions: every acknowledged one is there once; the one in flight at the kill at most once
    mine = sum(1 for m in stored["moves"] if m[2] == 0 and not m[5] and not m[6])
    assert me.acknowledged <= mine <= me.acknowledged + me.in_flight, (me.acknowledged, me.in_flight, mine)
    # nobody's clock ran out: every other move was a bot's
    for _seq, _round, seat, _kind, _value, by_clock, by_bot in stored["moves"]:
        assert not by_clock
        assert bool(by_bot) == (seat != 0)
