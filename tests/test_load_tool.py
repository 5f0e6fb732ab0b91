"""The load tool's socket side (``benchmarks/load/run.py`` on the one WebSocket client,
``benchmarks/load/wsclient.py``) against a real server: the suite's embedded one (``support.server``).

A person's table (``manage.py demo_table``: a quick table with bots, dealt), the person's session from
logging in over HTTP, then the tool's own ``Run``: it opens the seat's socket, reads its boards in the
background, makes a move the board offers and counts it completed when the next board arrives.  The
client's refusals and closings are checked on the same server."""

from __future__ import annotations

import argparse
import asyncio
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from live.wsclient import PASSWORD, Browser
from support.server import Daphne, free_port, sqlite_site

from benchmarks.load import run as load_tool
from benchmarks.load.wsclient import WebSocket


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daphne]:
    server = sqlite_site(tmp_path_factory.mktemp("load-tool"), migrate=True)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def a_dealt_table(server: Daphne, username: str) -> tuple[int, str]:
    """A table whose first round is dealt, and the person's session cookie."""
    table_id = int(server.manage("demo_table", "--user", username, "--password", PASSWORD).splitlines()[-1])
    browser = Browser(server)
    browser.login(username)
    return table_id, browser.cookie("sessionid")


async def until(predicate: Callable[[], bool], timeout: float = 20) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def test_the_load_tool_opens_reads_and_moves(server: Daphne) -> None:
    table_id, cookie = a_dealt_table(server, "carga")
    args = argparse.Namespace(port=server.port, period=1.0, spacing="fixed", lost_after=10.0, duration=1.0)
    run = load_tool.Run(args, [(table_id, [cookie])])
    table = run.tables[0]
    seat = table.seats[0]

    async def go() -> None:
        await run.open(seat, asyncio.Semaphore(1))
        assert isinstance(seat.ws, WebSocket)
        reader = asyncio.create_task(run.read(seat))
        try:
            await until(lambda: seat.seq >= 0)  # the first board, read as bytes by the tool's patterns
            assert isinstance(seat.board, bytes) and b"data-board-seq" in seat.board
            await until(lambda: bool(seat.moves()))  # the bots play until it is the person's turn
            run.measuring = True
            await run.move(table, random.Random(1))
            assert run.stats.sent == 1 and table.pending is not None
            await until(lambda: table.pending is None)  # the board after the move came back
        finally:
            await run.close_all([reader])

    asyncio.run(go())
    assert run.stats.completed == 1 and len(run.stats.latencies) == 1
    assert run.stats.socket_errors == 0 and run.stats.refused == 0 and run.stats.lost == 0


def test_the_client_refuses_closes_and_reports_as_the_tool_expects(server: Daphne) -> None:
    table_id, cookie = a_dealt_table(server, "cliente")
    headers = {"Origin": server.origin, "Cookie": f"sessionid={cookie}"}

    async def go() -> None:
        # a page of another origin: the handshake is refused, as a ConnectionError
        with pytest.raises(ConnectionError, match="handshake refused"):
            await WebSocket.connect(server.port, f"/ws/mesa/{table_id}/", {**headers, "Origin": "http://evil.example"})
        # nothing listens: an OSError (ConnectionRefusedError), which the tool counts as a socket error
        with pytest.raises(OSError):
            await WebSocket.connect(free_port(), f"/ws/mesa/{table_id}/", headers, timeout=2)
        ws = await WebSocket.connect(server.port, f"/ws/mesa/{table_id}/", headers)
        first = await asyncio.wait_for(ws.recv(), 10)
        assert isinstance(first, str) and "data-board-seq" in first
        assert 0 < ws.local_port < 65536 and not ws.closed
        await ws.send({"action": "nothing-of-the-sort"})  # refused by the server, which says why
        assert isinstance(await asyncio.wait_for(ws.recv(decode=False), 10), bytes)
        await ws.close()
        assert ws.closed and await ws.recv() is None
        with pytest.raises(ConnectionError):
            await ws.send({"action": "bid", "bid": "0"})

    asyncio.run(go())


def test_the_tool_is_a_script_that_starts(tmp_path: Path) -> None:
    """``make bench-load`` runs the file as a script: its imports resolve from anywhere."""
    done = subprocess.run(
        [sys.executable, str(load_tool.HERE / "run.py"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "--tables" in done.stdout


@pytest.mark.django_db
def test_the_clocks_asked_for_take_over_from_each_tables_next_decision() -> None:
    """Tables set up with far-off clocks, then given the site's 30 s: the decision under way keeps its
    far-off deadline (no clock runs out at every table at once while the sockets connect), and the next
    decision, after a move, has 30 s."""
    from django.utils import timezone

    from games.engine.snapshot import load
    from games.engine.view import seat_view
    from games.models import Seat as SeatRow
    from games.models import Table as TableRow
    from games.table import actions

    tables, _moderator, people = load_tool.make_tables(1)
    table_id = tables[0][0]
    before = TableRow.objects.get(pk=table_id)
    assert before.turn_deadline is not None
    assert before.turn_deadline > timezone.now() + timedelta(hours=1)

    load_tool.set_clocks([table_id], 30)
    row = TableRow.objects.get(pk=table_id)
    assert (row.bid_seconds, row.card_seconds, row.trump_seconds) == (30, 30, 30)
    assert (row.turn_deadline, row.due_at) == (before.turn_deadline, before.due_at)

    seat = SeatRow.objects.get(table_id=table_id, position=row.turn_seat)
    user = next(u for u in people[table_id] if u.pk == seat.user_id)
    actions.do_action(table_id, user, seat_view(load(row.state), row.turn_seat, reasons=False).legal[0], row.seq)
    after = TableRow.objects.get(pk=table_id)
    assert after.seq > row.seq
    left = (after.turn_deadline - timezone.now()).total_seconds()
    assert 20 < left <= 30, left
