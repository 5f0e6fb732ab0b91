"""Past one machine: three ASGI processes on three ports (three "hosts" sharing the suite's PostgreSQL
database and Redis), each hearing the events of the tables its sockets show and no others
(``games.live.hub``: a Redis channel per table).

Four tables: a game whose four seats sit on the three processes (two on the first, one on each other),
played to the end through the sockets, and three more, each shown by one process only, whose players make
some moves meanwhile.  Each process's counts (``/servidor/eventos.json``, for staff) are checked against
what went over each table's channel, which this test process hears too (it subscribes to the four tables
through the same hub): a process receives every event of its tables and none of the others'.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings as django_settings
from support.server import Daphne, suite_services

from benchmarks.load.wsclient import compose
from games.live import hub, timers
from games.models import Table

from .helpers import RECHECK, person, seated_table, session_cookie
from .wsclient import WebSocket

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(900),
    pytest.mark.skipif(not timers.celery_clock(), reason="services mode only (PostgreSQL, Redis)"),
]

SEQ = re.compile(r'data-board-seq="(\d+)"')
HX_VALS = re.compile(r"hx-vals='([^']*)'")
FLASH = re.compile(r'<div id="flash"[^>]*>(.*?)</div>', re.S)
TALK = re.compile(r'<div id="talk-event" data-talk-seat="(\d+)" data-talk-phrase="([a-z]+)"')
#: Moves made at each table shown by one process only (the shared game is played to the end).
SIDE_MOVES = 40


class Socket:
    """One table socket on one server process, its frames read in the background as they come."""

    def __init__(self, name: str, server: Daphne, table_id: int, cookie: str) -> None:
        self.name = name
        self.server = server
        self.table_id = table_id
        self.cookie = cookie
        self.ws: WebSocket | None = None
        self.frames: list[str] = []
        #: the seq of every frame that carries one, in the order received
        self.seqs: list[int] = []
        self.board = ""
        self.closed = False
        self.arrived = asyncio.Event()
        self.reader: asyncio.Task[None] | None = None

    async def open(self) -> None:
        headers = {"Origin": self.server.url, "Cookie": f"{django_settings.SESSION_COOKIE_NAME}={self.cookie}"}
        self.ws = await WebSocket.connect(self.server.port, f"/ws/mesa/{self.table_id}/", headers)
        self.reader = asyncio.get_running_loop().create_task(self._read())
        await self.wait_for(lambda: bool(self.board), "its first board")

    async def _read(self) -> None:
        assert self.ws is not None
        while True:
            frame = await self.ws.recv()
            if frame is None:
                self.closed = True
                self.arrived.set()
                return
            self.frames.append(frame)
            match = SEQ.search(frame)
            if match:  # a board (a refusal's flash alone carries no seq)
                self.seqs.append(int(match.group(1)))
                self.board = compose(self.board, frame)  # as the page: a section left out stays
            self.arrived.set()

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)
        if self.ws is not None:
            await self.ws.close()

    @property
    def seq(self) -> int:
        return self.seqs[-1] if self.seqs else -1

    @property
    def over(self) -> bool:
        return 'class="ranking"' in self.board

    def game_moves(self) -> list[dict[str, Any]]:
        options = [json.loads(html.unescape(v)) for v in HX_VALS.findall(self.board)]
        return [o for o in options if o.get("action") in ("bid", "trump", "play")]

    def flashes(self) -> int:
        return sum(1 for f in self.frames if (m := FLASH.search(f)) and html.unescape(m.group(1)).strip())

    def talk(self) -> list[tuple[int, str]]:
        return [(int(m.group(1)), m.group(2)) for f in self.frames if (m := TALK.search(f))]

    async def wait_for(self, predicate: Any, what: str, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while not predicate():
            if self.closed:
                raise AssertionError(f"{self.name}: the server closed the socket waiting for {what}")
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{self.name}: timed out waiting for {what}; last board:\n{self.board[:2000]}")
            self.arrived.clear()
            if predicate():
                return
            try:
                async with asyncio.timeout(min(left, RECHECK)):  # a predicate may read other sockets too
                    await self.arrived.wait()
            except TimeoutError:
                pass

    async def play(self, done: Any) -> int:
        """Play this seat's turns (the options in turn) until ``done()`` (a condition on this socket's own
        boards: each seat stops when its own board shows the end); the moves that landed."""
        landed = turn = 0
        while not done():
            await self.wait_for(lambda: done() or bool(self.game_moves()), "its turn", timeout=120)
            if done():
                break
            options, seq, flashes = self.game_moves(), self.seq, self.flashes()
            assert self.ws is not None
            await self.ws.send(options[turn % len(options)])
            turn += 1
            await self.wait_for(lambda: self.seq > seq or self.flashes() > flashes, "its move to land")
            landed += self.seq > seq
        return landed


class Heard:
    """A listener of this test process's hub: counts the events that went over a table's channel."""

    def __init__(self) -> None:
        self.events = 0

    def deliver(self, event: dict[str, Any]) -> None:
        self.events += 1


def fetch_stats(server: Daphne, cookie: str) -> dict[str, Any]:
    request = urllib.request.Request(
        server.url + "/servidor/eventos.json",
        headers={"Cookie": f"{django_settings.SESSION_COOKIE_NAME}={cookie}"},
    )
    with urllib.request.urlopen(request, timeout=15) as response:
        data = json.loads(response.read())
    data["by_table"] = {int(table): count for table, count in data["by_table"].items()}
    return data


def staff(name: str) -> Any:
    user = person(name)
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


def refused_to(server: Daphne, cookie: str | None) -> int:
    headers = {"Cookie": f"{django_settings.SESSION_COOKIE_NAME}={cookie}"} if cookie else {}
    request = urllib.request.Request(server.url + "/servidor/eventos.json", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


@pytest.mark.asyncio
async def test_services_three_processes_hear_only_the_tables_they_show(settings, tmp_path):
    """Each process receives exactly the events of the tables it shows (the game and its own table), and
    the game spread over the three plays to the end with every seat's boards in order."""
    prefix = f"pocha-hosts-{uuid.uuid4().hex[:8]}"
    settings.POCHA_HUB_CHANNEL = prefix  # this process and the servers on the same channels
    env = suite_services({"POCHA_HUB_CHANNEL": prefix, "POCHA_BOT_DELAY": "0"})
    servers = [Daphne(tmp_path, env, log_name=f"host{i + 1}.log") for i in range(3)]
    game, game_users = await database_sync_to_async(seated_table)(4, 4, prefix="tres")
    side = [await database_sync_to_async(seated_table)(4, 4, prefix=f"solo{i}") for i in range(3)]
    admin = await database_sync_to_async(staff)("operadora")
    admin_cookie = await session_cookie(admin)
    nobody_cookie = await session_cookie(await database_sync_to_async(person)("curiosa"))

    heard = {table: Heard() for table in (game, *(table for table, _users in side))}
    sockets: list[Socket] = []
    loop = asyncio.get_running_loop()
    try:
        for table, listener in heard.items():
            await hub.register(table, listener)
        for server in servers:
            server.launch()
        for server in servers:
            await loop.run_in_executor(None, server.wait_ready)

        # the shared game: seats 0 and 1 on the first process, 2 on the second, 3 on the third
        hosts_of_seats = [servers[0], servers[0], servers[1], servers[2]]
        players = [
            Socket(f"seat {i} on host {servers.index(host) + 1}", host, game, await session_cookie(user))
            for i, (user, host) in enumerate(zip(game_users, hosts_of_seats, strict=True))
        ]
        # each other table on one process only
        side_players = [
            [
                Socket(f"table {table} seat {i} on host {n + 1}", servers[n], table, await session_cookie(user))
                for i, user in enumerate(users)
            ]
            for n, (table, users) in enumerate(side)
        ]
        sockets = [*players, *(s for group in side_players for s in group)]
        for s in sockets:
            await s.open()
        shown = {n: {game, side[n][0]} for n in range(3)}  # each process: the game, and its own table

        await quiet(heard, servers, admin_cookie)
        start = {n: await loop.run_in_executor(None, fetch_stats, servers[n], admin_cookie) for n in range(3)}
        heard_at_start = {table: listener.events for table, listener in heard.items()}
        for n in range(3):  # before any move: each process has subscribed to its own tables alone
            assert set(start[n]["by_table"]) == shown[n], start[n]
            assert start[n]["subscribed"] == sorted(shown[n]), start[n]
        # the counts are for staff only
        assert await loop.run_in_executor(None, refused_to, servers[0], None) == 404
        assert await loop.run_in_executor(None, refused_to, servers[0], nobody_cookie) == 404

        # a phrase said on the second process reaches every seat, on every process
        talk_before = {s.name: len(s.talk()) for s in sockets}
        await players[2].ws.send({"action": "say", "value": "suerte"})  # type: ignore[union-attr]
        for s in players:
            await s.wait_for(lambda s=s: len(s.talk()) > talk_before[s.name], "the phrase")
            assert s.talk()[-1] == (2, "suerte"), s.name

        async def side_table(group: list[Socket]) -> int:
            start_seq = max(s.seq for s in group)
            counts = await asyncio.gather(*(s.play(lambda s=s: s.seq >= start_seq + SIDE_MOVES) for s in group))
            return sum(counts)

        results = await asyncio.gather(
            *(s.play(lambda s=s: s.over) for s in players), *(side_table(g) for g in side_players)
        )
        game_moves, side_moves = sum(results[:4]), results[4:]
        final = await database_sync_to_async(lambda: Table.objects.get(pk=game))()
        assert final.status == Table.Status.FINISHED
        for s in players:
            await s.wait_for(lambda s=s: s.seq >= final.seq, "the final board")

        end = await quiet(heard, servers, admin_cookie, start, heard_at_start, shown)
        # what this process heard at that moment: closing the sockets below sends events of its own (the
        # seats going), after the processes' counts were read
        heard_at_end = {table: listener.events for table, listener in heard.items()}
    except BaseException:
        for n, server in enumerate(servers):
            print(f"---- host {n + 1} ----\n{server.log_tail(5000)}")
        raise
    finally:
        for s in sockets:
            await s.close()
        for table, listener in heard.items():
            hub.unregister(table, listener)
        for server in servers:
            server.kill()

    # every seat's boards in order: no socket was ever sent an older seq than one it had
    for s in sockets:
        backwards = [(a, b) for a, b in zip(s.seqs, s.seqs[1:]) if b < a]
        assert not backwards, f"{s.name} went back: {backwards[:5]}"
    for s in players:
        assert s.over and s.seq == final.seq, s.name
    # no phrase of the game reached a socket of another table
    assert all(s.talk() == [] for group in side_players for s in group)

    report = events_report(end, start, heard_at_end, heard_at_start, shown)
    print(report)
    for n in range(3):
        got = end[n]
        assert set(got["by_table"]) == shown[n], report
        assert got["unshown"] - start[n]["unshown"] == 0, report
        own = sum(heard_at_end[t] - heard_at_start[t] for t in shown[n])
        assert got["received"] - start[n]["received"] == own, report
        for table in shown[n]:
            assert got["by_table"][table] - start[n]["by_table"][table] == heard_at_end[table] - heard_at_start[table]
    # the game and the other tables did move while being counted
    assert heard_at_end[game] - heard_at_start[game] >= game_moves > 100, report
    for (table, _users), moves in zip(side, side_moves, strict=True):
        assert heard_at_end[table] - heard_at_start[table] >= moves >= SIDE_MOVES, report


async def quiet(
    heard: dict[int, Heard],
    servers: list[Daphne],
    cookie: str,
    start: dict[int, dict[str, Any]] | None = None,
    heard_at_start: dict[int, int] | None = None,
    shown: dict[int, set[int]] | None = None,
    timeout: float = 60,
) -> dict[int, dict[str, Any]]:
    """Each process's counts once nothing moves any more: twice the same, and this process heard nothing
    in between (and, with ``start``, once every process has received what went over its tables'
    channels since then: an event still on its way is waited for, not taken for a missing one)."""
    loop = asyncio.get_running_loop()
    end = time.monotonic() + timeout
    last: dict[int, dict[str, Any]] | None = None
    while True:
        before = {table: h.events for table, h in heard.items()}
        now = {n: await loop.run_in_executor(None, fetch_stats, server, cookie) for n, server in enumerate(servers)}
        same = last is not None and all(
            now[n]["received"] == last[n]["received"] and now[n]["by_table"] == last[n]["by_table"] for n in now
        )
        caught_up = (
            start is None
            or heard_at_start is None
            or shown is None
            or all(
                now[n]["by_table"].get(t, 0) - start[n]["by_table"].get(t, 0) == heard[t].events - heard_at_start[t]
                for n in now
                for t in shown[n]
            )
        )
        if same and caught_up and before == {table: h.events for table, h in heard.items()}:
            return now
        if time.monotonic() > end:
            return now  # the assertions say what differs
        last = now
        await asyncio.sleep(0.3)


def events_report(
    end: dict[int, dict[str, Any]],
    start: dict[int, dict[str, Any]],
    heard_at_end: dict[int, int],
    heard_at_start: dict[int, int],
    shown: dict[int, set[int]],
) -> str:
    """Events received per process against the events of its own tables, over the game."""
    lines = ["events received per process (over the game) against the events of its own tables:"]
    for n in sorted(end):
        received = end[n]["received"] - start[n]["received"]
        own = {t: heard_at_end[t] - heard_at_start[t] for t in sorted(shown[n])}
        by_table = {
            t: end[n]["by_table"].get(t, 0) - start[n]["by_table"].get(t, 0) for t in sorted(end[n]["by_table"])
        }
        lines.append(
            f"  host {n + 1}: received {received} (by table {by_table}, unshown "
            f"{end[n]['unshown'] - start[n]['unshown']}); its tables' events {sum(own.values())} {own}; "
            f"all tables' events {sum(count - heard_at_start[t] for t, count in heard_at_end.items())}"
        )
    return "\n".join(lines)
