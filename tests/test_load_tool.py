"""The load tool's socket side (``benchmarks/load/run.py`` on the one WebSocket client,
``benchmarks/load/wsclient.py``) against a real server: the suite's embedded one (``support.server``).

A person's table (``manage.py demo_table``: a quick table with bots, dealt), the person's session from
logging in over HTTP, then the tool's own ``Run``: it opens the seat's socket, reads its boards in the
background, makes a move the board offers and counts it completed when the next board arrives.  The
client's refusals and closings are checked on the same server.  Those tests are ``slow`` (a server in a
subprocess); the tests of the tool's pure functions (``--tournament``'s deal ends, its reading of the
tournament page's pushes and the standings' delays) need none and run in ``make test``."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from live.helpers import person
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# -- --tournament: pure functions, no server ---------------------------------------------------------


def a_board(seq: int, *, result: int | None = None, over: bool = False) -> bytes:
    """The parts of a board the tool reads: the seq, and the round's result or the final ranking."""
    controls = f'<div class="round-result" id="round-result" data-round="{result}">' if result is not None else ""
    return (
        f'<section id="board-status" data-board-seq="{seq}" data-status="playing" data-over="{"1" if over else ""}">'
        f'</section><section id="controls" class="controls" data-board-seq="{seq}">{controls}</section>'
    ).encode()


def test_a_deal_ends_when_a_board_shows_a_rounds_result_or_the_final_ranking() -> None:
    assert load_tool.finished_round(a_board(5)) is None
    assert load_tool.finished_round(a_board(6, result=3)) == 3
    # a finished game's board shows the ranking instead: its last deal, if the tool knows the deals
    assert load_tool.finished_round(a_board(90, over=True), (3, 8, 12, 17)) == 17
    assert load_tool.finished_round(a_board(90, over=True)) is None


@pytest.mark.parametrize("spacing", ["exp", "fixed"])
def test_the_tables_offer_t_over_p_moves_a_second_from_the_windows_first_second_on(spacing: str) -> None:
    # 4,000 tables at P = 3 s: about 4,000 moves in every 3 s of the window, the first 3 s too.  The first
    # move uniform over [0, P] before exponential gaps gave 1.5 times that in the first 3 s (a burst at
    # every window's start), and a uniform phase with P ±20 % gaps 1.05 times.
    tables, period = 4000, 3.0
    times = [
        t
        for table in range(tables)
        for t in itertools.takewhile(lambda t: t < 5 * period, load_tool.move_times(table, period, spacing))
    ]
    per_period = [sum(k * period <= t < (k + 1) * period for t in times) / tables for k in range(5)]
    assert all(0.95 < rate < 1.05 for rate in per_period), per_period


def test_the_timeline_gives_each_5_s_step_of_sends_its_moves_and_latencies() -> None:
    st = load_tool.Stats(sent_at=[100.0, 101.0, 106.0, 107.0, 112.0], latencies=[0.01, 0.02, 0.5, 0.1, 0.03])
    steps = load_tool.timeline(st)
    assert [(s["from_s"], s["moves"], s["max"]) for s in steps] == [(0, 2, 20.0), (5, 2, 500.0), (10, 1, 30.0)]
    assert steps[1]["p50"] == 500.0 and steps[1]["p95"] == 500.0  # nearest rank below, as for the window
    assert load_tool.timeline(load_tool.Stats()) == []


def test_the_samples_are_each_moves_send_from_the_windows_start_and_its_latency() -> None:
    st = load_tool.Stats(sent_at=[100.25, 103.5], latencies=[0.0123, 0.5])
    assert load_tool.samples(st, 100.0) == [[0.25, 12.3], [3.5, 500.0]]
    assert load_tool.samples(load_tool.Stats(), 100.0) == []


def test_the_made_up_addresses_are_distinct_and_valid() -> None:
    import ipaddress

    addresses = [load_tool.fake_address(n) for n in range(70_000)]
    assert len(set(addresses)) == len(addresses)
    assert addresses[0] == "10.0.0.1" and addresses[255] == "10.0.1.0"
    assert all(ipaddress.ip_address(a) in ipaddress.ip_network("10.0.0.0/8") for a in addresses)


def test_a_tournament_tables_moves_count_apart_and_its_deal_ends_are_recorded() -> None:
    """The driver's accounting without sockets: a move at a tournament table counts in the run's figures
    and in the tournament's, and the move after which the boards show a round's result ended that deal."""
    args = argparse.Namespace(port=1, period=1.0, spacing="fixed", lost_after=10.0, duration=1.0)
    run = load_tool.Run(args, [(1, ["a", "b", "c", "d"])], groups=("tournament", "quick"))
    tournament = load_tool.Table(run, 2, ["e", "f", "g", "h"], kind="tournament", number=7, deals=(3, 8, 12, 17))
    run.tables.append(tournament)
    quick = run.tables[0]
    assert quick.kind == "quick" and quick.counters() == (run.stats, run.groups["quick"])
    run.measuring = True
    for table, seq, result in ((quick, 10, 1), (tournament, 20, 3)):
        for seat in table.seats:
            seat.seq, seat.board = seq, a_board(seq)
        table.pending = load_tool.Pending(seq, 100.0, 0, table.counters(), result_before=None)
        for seat in table.seats:  # the board after the move, at every seat
            seat.seq, seat.board = seq + 1, a_board(seq + 1, result=result)
            table.on_board(seat, seq + 1)
        assert table.pending is None
    assert run.stats.completed == 2
    assert run.groups["quick"].completed == 1 and run.groups["tournament"].completed == 1
    # only the tournament's table's deal is recorded: the 1st of its game's deals (round 3), sent at 100 s
    assert run.deal_ends == [load_tool.DealEnd(table=7, deal=1, round=3, sent=100.0, ordinal=1)]
    # a move made while the result was already up (the board before showed it) ends nothing
    tournament.pending = load_tool.Pending(21, 101.0, 0, tournament.counters(), result_before=3)
    tournament.on_board(tournament.seats[0], 22)
    assert len(run.deal_ends) == 1


def test_the_standings_delay_is_to_the_first_push_that_shows_the_deal() -> None:
    Push, End = load_tool.StandingsPush, load_tool.DealEnd
    first_deal_at_3 = End(table=3, deal=1, round=3, sent=10.0, ordinal=1)
    # by table: the push at 10.1 does not show table 3's first deal yet, the one at 10.4 does
    by_table = [Push(9.0, {3: 0}), Push(10.1, {3: 0, 5: 1}), Push(10.4, {3: 1, 5: 1})]
    assert load_tool.first_reflecting(first_deal_at_3, by_table) == pytest.approx(0.4)
    # by the total: the second deal seen to end is shown once the tables' finished deals reach 2
    second = End(table=5, deal=1, round=3, sent=10.0, ordinal=2)
    in_all = [Push(10.2, total=1), Push(10.7, total=2)]
    assert load_tool.first_reflecting(second, in_all) == pytest.approx(0.7)
    # pushes that say nothing: the first after the send; none after it: None
    assert load_tool.first_reflecting(first_deal_at_3, [Push(9.9), Push(10.3)]) == pytest.approx(0.3)
    assert load_tool.first_reflecting(first_deal_at_3, [Push(9.9)]) is None

    # two sockets on the page: until both have it, and until the first; a deal one socket never saw is late
    ends = [first_deal_at_3, End(table=3, deal=2, round=8, sent=20.0, ordinal=2)]
    sockets = [
        [Push(10.2, {3: 1}), Push(20.3, {3: 2})],
        [Push(10.6, {3: 1})],
    ]
    report = load_tool.standings_delays(ends, sockets, within=5.0, origin=5.0)
    assert report["deal_ends"] == 2 and report["no_push_within"] == 1
    assert report["delay_ms_all_sockets"] == {"count": 1, "p50": 600.0, "p95": 600.0, "max": 600.0}
    assert report["delay_ms_first_socket"]["count"] == 2 and report["delay_ms_first_socket"]["max"] == 300.0
    assert report["ends"][1] == {"table": 3, "deal": 2, "round": 8, "sent_s": 15.0, "delay_ms": [300.0, None]}
    assert report["matched_by"].endswith("(exact)")
    # a deal is shown once every table has finished it: of its ends, only the last one seen is measured
    early, last = End(table=5, deal=1, round=3, sent=8.0, ordinal=1), End(table=3, deal=1, round=3, sent=10.0)
    assert load_tool.showing([early, last, End(table=5, deal=0, round=4, sent=9.0)]) == [
        last,
        End(table=5, deal=0, round=4, sent=9.0),
    ]
    waited = load_tool.standings_delays([early, last], [[Push(8.1, {3: 0, 5: 0}), Push(10.3, {3: 1, 5: 1})]], 5.0)
    assert waited["deal_ends"] == 1 and waited["delay_ms_all_sockets"]["max"] == 300.0
    # a push later than ``within`` counts in the delays, and as late
    slow = load_tool.standings_delays([first_deal_at_3], [[Push(16.0, {3: 1})]], within=5.0)
    assert slow["no_push_within"] == 1 and slow["delay_ms_all_sockets"]["max"] == 6000.0
    assert load_tool.standings_delays([], [[Push(1.0)]], within=5.0)["matched_by"].startswith("the first push")


@pytest.mark.django_db
def test_the_tool_reads_the_deals_played_from_the_tournament_pages_own_push(settings: Any) -> None:
    """The frame the tournament page's socket sends (``games.read.tournaments.render_live``), after one
    table has finished its first deal (nothing counted: the deal is secret until every table has played it),
    then both: the tool reads each table's deals played from the standings' lines (the people it seated, by
    name), or, for people it did not seat, the deals finished in all."""
    from django.utils import timezone

    from games.engine import default_action
    from games.engine.snapshot import load
    from games.models import Round, Seat, Table, Tournament
    from games.read import tournaments as pages
    from games.table import actions
    from games.tournaments import entries, runner

    settings.POCHA_BOT_DELAY = 30  # nothing plays by itself
    now = timezone.now()
    t = Tournament.objects.create(
        name="Carga",
        size=4,
        places=8,
        deals=2,
        entry_fee=0,
        registration_opens_at=now - timedelta(hours=1),
        starts_at=now + timedelta(hours=1),
    )
    for n in range(8):
        entries.register(person(f"carga{n}"), t.pk, load_tool.fake_address(n))
    Tournament.objects.filter(pk=t.pk).update(starts_at=timezone.now())
    assert runner.advance(t.pk) == "started"

    def first_deal(table: Table) -> None:
        while not Round.objects.filter(table=table, result__isnull=False).exists():
            row = Table.objects.get(pk=table.pk)
            seat = Seat.objects.select_related("user").get(table=row, position=row.turn_seat)
            actions.do_action(row.pk, seat.user, default_action(load(row.state)), row.seq)

    def frame_now() -> bytes:
        rows = pages.read_tournament(t.pk)
        assert rows is not None
        return pages.render_live(rows, None, "es").encode()

    first, second = Table.objects.filter(tournament=t).order_by("tournament_number")
    table_of = {
        name: number
        for name, number in Seat.objects.filter(table__tournament=t).values_list("name", "table__tournament_number")
    }
    first_deal(first)
    # the deal is secret until every table has played it: the standings count it at neither table yet
    frame = frame_now()
    assert load_tool.standings_lines(frame) == {name: 0 for name in table_of}
    assert load_tool.standings_shown(frame, 7.0, table_of).played == {1: 0, 2: 0}
    first_deal(second)
    frame = frame_now()

    assert load_tool.standings_lines(frame) == {name: 1 for name in table_of}
    push = load_tool.standings_shown(frame, 7.5, table_of)
    assert (push.at, push.played, push.total) == (7.5, {1: 1, 2: 1}, None) and push.size == len(frame)
    assert load_tool.standings_shown(frame, 7.5, {}).total == 2  # one deal finished at each of two tables of four
    assert load_tool.standings_shown(b"<section id='tournament-state'></section>", 1.0, table_of).played is None


class _Conn:
    """A connection that answers ``SHOW autovacuum`` and records what it was told."""

    def __init__(self, autovacuum: str) -> None:
        self.autovacuum = autovacuum
        self.statements: list[str] = []

    def execute(self, sql: str) -> argparse.Namespace:
        self.statements.append(sql)
        return argparse.Namespace(fetchone=lambda: (self.autovacuum,))


@pytest.mark.parametrize(
    ("when", "autovacuum", "vacuums"),
    [("auto", "off", True), ("auto", "on", False), ("yes", "on", True), ("no", "off", False)],
)
def test_the_database_is_vacuumed_after_the_setup_when_autovacuum_would_not(
    when: str, autovacuum: str, vacuums: bool
) -> None:
    pg = argparse.Namespace(conn=_Conn(autovacuum))
    took = load_tool.vacuum_after_setup(pg, when)  # type: ignore[arg-type]
    assert ("VACUUM (ANALYZE)" in pg.conn.statements) is vacuums
    assert (took is not None) is vacuums
    # and, under the same condition, analysed again once the sockets (each a watcher row) are open
    analysed = load_tool.analyse_after_connect(pg, when)  # type: ignore[arg-type]
    assert ("ANALYZE" in pg.conn.statements) is vacuums
    assert (analysed is not None) is vacuums


def test_the_share_of_hot_updates_is_the_table_rows_hot_updates_over_its_updates() -> None:
    before = {"table_updates": 1000, "table_hot_updates": 10}
    assert load_tool.hot_fraction(before, {"table_updates": 1400, "table_hot_updates": 310}) == 0.75
    assert load_tool.hot_fraction(before, {"table_updates": 1400, "table_hot_updates": 10}) == 0.0
    assert load_tool.hot_fraction(before, dict(before)) is None  # no update in between
    assert load_tool.hot_fraction({}, {}) is None  # the bare stack's database has no table rows


def test_the_machines_busy_share_counts_every_state_but_idle_and_iowait() -> None:
    # user nice system idle iowait irq softirq steal guest guest_nice (a 2-core machine's ticks)
    before = load_tool.machine_ticks("cpu  1000 0 500 8000 100 0 50 0 0 0\ncpu0 500 0 250 4000 50 0 25 0 0 0\n")
    after = load_tool.machine_ticks("cpu  1600 0 800 8500 100 0 100 0 0 0\ncpu0 800 0 400 4250 50 0 50 0 0 0\n")
    assert before == (1550, 9650) and after == (2500, 11100)
    assert load_tool.machine_busy(before, after) == round(950 / 1450, 3)
    assert load_tool.machine_busy(after, after) == 0.0
    busy, total = load_tool.machine_ticks()  # this machine's own
    assert 0 < busy < total


def test_with_affinity_every_socket_of_a_table_goes_to_one_process_and_the_tables_are_spread() -> None:
    env = {"ASGI_PROCESSES": "2", "ASGI_OWN_PORTS": "8611,8612"}
    ports = load_tool.own_ports(env)
    assert ports == [8611, 8612]
    assert {load_tool.table_port(t, ports) for t in (10, 12, 1000)} == {8611}
    assert {load_tool.table_port(t, ports) for t in (11, 13, 1001)} == {8612}
    args = argparse.Namespace(port=8600, affinity=True)
    old = dict(load_tool.os.environ)
    try:
        load_tool.os.environ.update(env)
        run = load_tool.Run(args, [(7, ["a"] * 4), (8, ["b"] * 4)])
    finally:
        load_tool.os.environ.clear()
        load_tool.os.environ.update(old)
    assert [run.port_for(t.id) for t in run.tables] == [8612, 8611]
    plain = load_tool.Run(argparse.Namespace(port=8600), [(7, ["a"] * 4)])
    assert plain.port_for(7) == 8600  # without it: the port every process shares


@pytest.mark.parametrize("value", ["", "8611", "8611,8612,8613"])
def test_affinity_needs_one_own_port_for_each_process(value: str) -> None:
    with pytest.raises(SystemExit, match="ASGI_OWN_PORTS"):
        load_tool.own_ports({"ASGI_PROCESSES": "2", "ASGI_OWN_PORTS": value})
