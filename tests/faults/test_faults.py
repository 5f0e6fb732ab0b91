"""Faults in a running services-mode site (issue 11): each test plays a whole staked game of two people
(socket clients playing legal moves) and a bot on the stack of ``conftest.py``, and does one thing to it
mid-game that happens in production:

* Redis killed and started again 5 s later (everything in it lost: queued timers, channel groups);
* the Celery worker killed with SIGKILL (supervisord starts it again);
* PostgreSQL dropping every connection of the site (``pg_terminate_backend``, as a restart would);
* the ASGI process holding a person's socket killed with SIGKILL (their page reconnects to the other).

Then: the game finishes; the record replays to the stored totals and matches the stored moves, each
stored once; no clock ran out for anyone (nobody was left stuck for a turn's 30 s); the chips ledger
balances; every seat's presence is right within seconds; the processes that were not hit are still the
same ones; and the stall the fault caused is measured, printed and bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from games.engine import replay
from games.engine.snapshot import load

from .conftest import PEOPLE, services_only
from .game import Person, Timeline
from .stack import Stack

pytestmark = services_only

SIZE = 3
STAKE = 100
#: The fault strikes once the table's seq reaches this (a few rounds into the game).
TRIGGER_SEQ = 45
#: Seconds within which presence must be right again (TTL 3 s, beat 1 s, sweeps every 1-2 s).
PRESENCE_WITHIN = 12.0
#: Seconds the game may stand still after the fault is over (what "a few seconds" means here).
RECOVERY_WITHIN = 8.0


@dataclass
class Fault:
    name: str
    started: float = 0.0
    ended: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)
    #: what goes on after the fault as such is over (a killed process being restarted), awaited later
    pending: list[asyncio.Task[None]] = field(default_factory=list)


FaultAction = Callable[[Stack, list[Person], Fault], Awaitable[None]]


async def play_game(
    stack: Stack, names: list[str], action: FaultAction, fault: Fault
) -> tuple[int, list[Person], Timeline, float]:
    """Two people and a bot play a whole staked game; ``action`` strikes at ``TRIGGER_SEQ``."""
    timeline = Timeline()
    people = [Person(stack, name, timeline) for name in names]
    for person in people:
        await person.login()
    host, guest = people
    table_id = await asyncio.to_thread(host.browser.create_table, SIZE, STAKE)
    await host.open(table_id)
    await guest.open(table_id)
    assert f"/mesa/{table_id}/sentarse/" in guest.board, "no seat offered:\n" + guest.board[:3000]
    await asyncio.to_thread(guest.browser.post, f"/mesa/{table_id}/sentarse/", f"/mesa/{table_id}/", {})
    await host.wait(
        lambda: f">{guest.username}<" in host.board and any(o.get("action") == "start" for o in host.options()),
        "the guest seated",
    )
    await host.send(next(o for o in host.options() if o.get("action") == "start"))
    began = time.monotonic()
    ids = await asyncio.to_thread(user_ids, stack, names)

    async def strike() -> None:
        while max(timeline.seen, default=0) < TRIGGER_SEQ:
            if all(p.over for p in people):
                raise AssertionError("the game ended before the fault")
            await asyncio.sleep(0.02)
        fault.started = time.monotonic()
        await action(stack, people, fault)
        fault.ended = time.monotonic()
        # while the game goes on: each person's seat counts their one open socket again
        took = await wait_presence(stack, table_id, {uid: 1 for uid in ids.values()}, "after the fault")
        fault.notes["presence_right_after"] = f"{took:.1f}s"
        for task in fault.pending:
            await task

    await asyncio.wait_for(asyncio.gather(*(p.play_to_the_end() for p in people), strike()), 300)
    return table_id, people, timeline, began


def stall_report(fault: Fault, timeline: Timeline, began: float) -> dict[str, float]:
    """How long the game stood still: before the fault (the normal pace), across it, and after it ended."""
    end = max(timeline.seen.values())
    before = sorted(t for t in timeline.seen.values() if began <= t <= fault.started)
    gaps = [b - a for a, b in zip(before, before[1:])] or [0.0]
    next_progress = timeline.first_after(fault.ended)
    return {
        "normal_gap_median": statistics.median(gaps),
        "normal_gap_max": max(gaps),
        "fault_seconds": fault.ended - fault.started,
        "longest_stall": timeline.longest_gap(fault.started, min(end, fault.ended + 60)),
        "after_fault_to_progress": (next_progress - fault.ended) if next_progress else float("nan"),
        "game_seconds": end - began,
    }


def user_ids(stack: Stack, names: list[str]) -> dict[str, int]:
    rows = stack.sql("SELECT username, id FROM auth_user WHERE username = ANY(%s)", (names,))
    return {name: uid for name, uid in rows}


def seats(stack: Stack, table_id: int) -> list[tuple[Any, ...]]:
    return stack.sql(
        "SELECT position, user_id, is_bot, sockets, disconnected_at FROM games_seat "
        "WHERE table_id = %s ORDER BY position",
        (table_id,),
    )


async def wait_presence(stack: Stack, table_id: int, expected: dict[int, int], what: str) -> float:
    """Wait until each person's seat counts ``expected[user_id]`` sockets (and is marked disconnected
    exactly when that is 0), while the game is played (a finished game's seats keep their last presence);
    returns the seconds it took."""
    start = time.monotonic()
    while True:
        rows = await asyncio.to_thread(seats, stack, table_id)
        ((status,),) = await asyncio.to_thread(stack.sql, "SELECT status FROM games_table WHERE id = %s", (table_id,))
        assert status == "playing", f"the game ended before the presence was right {what}: {rows}"
        people = {
            user_id: (sockets, disconnected_at) for _p, user_id, is_bot, sockets, disconnected_at in rows if not is_bot
        }
        right = all(
            people.get(uid, (None, None))[0] == count and (people[uid][1] is None) == (count > 0)
            for uid, count in expected.items()
        )
        if right:
            return time.monotonic() - start
        if time.monotonic() - start > PRESENCE_WITHIN:
            raise AssertionError(
                f"presence not right {what} after {PRESENCE_WITHIN}s: seats (position, user, bot, "
                f"sockets, disconnected_at) = {rows}, expected sockets {expected}"
            )
        await asyncio.sleep(0.25)


async def wait_no_sockets(stack: Stack, table_id: int) -> float:
    start = time.monotonic()
    while True:
        ((count,),) = await asyncio.to_thread(
            stack.sql, "SELECT COUNT(*) FROM games_watcher WHERE table_id = %s", (table_id,)
        )
        if count == 0:
            return time.monotonic() - start
        assert time.monotonic() - start < PRESENCE_WITHIN, f"{count} sockets still counted at the table"
        await asyncio.sleep(0.25)


def check_record(stack: Stack, table_id: int, record: dict[str, Any]) -> None:
    """The game is over, the record replays to the stored totals, and the log's moves are the record's,
    each once and in order; no clock ran out for anybody."""
    ((status, state),) = stack.sql("SELECT status, state FROM games_table WHERE id = %s", (table_id,))
    assert status == "finished", status
    state = json.loads(state) if isinstance(state, str) else state
    game = load(state)
    replayed = replay(record)
    assert game.is_over and replayed.game.is_over
    assert replayed.game.totals == game.totals
    rounds = stack.sql("SELECT number, result FROM games_round WHERE table_id = %s ORDER BY number", (table_id,))
    results = [json.loads(r) if isinstance(r, str) else r for _number, r in rounds]
    assert [sum(r["points"][seat] for r in results) for seat in range(SIZE)] == list(game.totals)
    assert len(rounds) == len(record["rounds"]) == len(game.schedule)
    moves = stack.sql(
        "SELECT seq, round, kind, value, by_clock, seat, by_bot, made_at FROM games_move WHERE table_id = %s "
        "ORDER BY seq",
        (table_id,),
    )
    assert len({m[0] for m in moves}) == len(moves)
    for (number, _result), entry in zip(rounds, record["rounds"]):
        mine = [m for m in moves if m[1] == number]
        assert [int(m[3]) for m in mine if m[2] == "b"] == entry["bids"]
        assert [m[3] for m in mine if m[2] == "p"] == entry["plays"]
    clocked = [m for m in moves if m[4]]
    assert not clocked, "a clock ran out: someone was stuck; the moves around it (seq, round, kind, value, " + (
        "by_clock, seat, by_bot, made_at):\n"
        + "\n".join(repr(m) for m in moves if any(abs(m[0] - c[0]) <= 4 for c in clocked))
    )


def check_chips(stack: Stack, table_id: int) -> None:
    """Every chip accounted for: the ledger sums to zero, the pot is empty, and the site's own audit."""
    ((total,),) = stack.sql("SELECT COALESCE(SUM(amount), 0) FROM accounts_entry")
    assert total == 0, f"the ledger sums to {total}"
    pots = stack.sql("SELECT balance FROM accounts_account WHERE table_id = %s", (table_id,))
    assert pots == [(0,)], f"the table's pot: {pots}"
    payouts = stack.sql(
        "SELECT COUNT(*) FROM accounts_transaction WHERE table_id = %s AND kind = 'payout'", (table_id,)
    )
    assert payouts[0][0] >= 1, "the pot was never paid out"
    stack.manage("check_chips")


async def run_fault(
    stack: Stack, names: list[str], action: FaultAction, fault: Fault, untouched: tuple[str, ...]
) -> None:
    pids = {name: stack.pid(name) for name in ("worker", "beat", *stack.asgi_names())}
    table_id, people, timeline, began = await play_game(stack, names, action, fault)
    try:
        report = stall_report(fault, timeline, began)
        print(
            f"\n[{fault.name}] "
            + ", ".join(f"{k} {v:.2f}s" for k, v in report.items())
            + "".join(f", {k} {v}" for k, v in fault.notes.items())
            + f", moves {[p.moves for p in people]}, reconnects {[len(p.reconnects) for p in people]}"
        )
        around = sorted((t - fault.started, seq) for seq, t in timeline.seen.items() if -0.2 < t - fault.started < 40)
        print(
            f"[{fault.name}] seqs first seen from the fault on (s, seq): "
            + ", ".join(f"{t:.2f} {q}" for t, q in around[:12])
        )

        _url, body = await asyncio.to_thread(people[0].browser.get, f"/mesa/{table_id}/partida.json")
        check_record(stack, table_id, json.loads(body))
        check_chips(stack, table_id)
        assert not any(p.flashes for p in people), [p.flashes for p in people]

        # supervision: everything running; what the fault did not hit is the same process as before
        states = stack.states()
        assert all(state == "RUNNING" for state in states.values()), stack.ctl("status")
        for name in untouched:
            assert stack.pid(name) == pids[name], f"{name} was restarted: it should have survived the fault"
        assert not stack.grep_logs("Unrecoverable error"), stack.grep_logs("Unrecoverable error")

        # no socket left counted once the pages are closed (a killed process's too: they expire)
        for person in people:
            await person.close()
        took = await wait_no_sockets(stack, table_id)
        print(f"[{fault.name}] no socket counted {took:.1f}s after the pages closed")

        # the stall: the fault's own length and a few seconds more
        assert report["longest_stall"] <= report["fault_seconds"] + RECOVERY_WITHIN, report
    finally:
        for person in people:
            await person.close()


# -- the faults --------------------------------------------------------------------------------------


async def redis_restart(stack: Stack, people: list[Person], fault: Fault) -> None:
    await asyncio.to_thread(stack.kill_redis)
    await asyncio.sleep(5)
    await asyncio.to_thread(stack.start_redis)


async def worker_killed(stack: Stack, people: list[Person], fault: Fault) -> None:
    pid = stack.pid("worker")
    os.killpg(pid, signal.SIGKILL)  # the worker and its pool: supervisord gave it a process group
    new_pid, seconds = await asyncio.to_thread(stack.wait_running, "worker", pid)
    fault.notes["worker_back_after"] = f"{seconds:.1f}s"


async def database_connections_dropped(stack: Stack, people: list[Person], fault: Fault) -> None:
    dropped = await asyncio.to_thread(stack.terminate_connections)
    fault.notes["connections_dropped"] = dropped
    assert dropped > 0


async def asgi_process_killed(stack: Stack, people: list[Person], fault: Fault) -> None:
    """SIGKILL for the process holding the first person's socket; the fault is over for them once their
    page has connected again (to the other process).  Their old socket's row, left behind by the dead
    process, must then stop counting within the presence time-to-live."""
    person = people[0]
    name = await asyncio.to_thread(stack.process_holding, person.client_port)
    pid = stack.pid(name)
    reconnects = len(person.reconnects)
    os.kill(pid, signal.SIGKILL)
    fault.notes["killed"] = name

    async def restarted() -> None:
        _new_pid, seconds = await asyncio.to_thread(stack.wait_running, name, pid)
        fault.notes["restarted_after"] = f"{seconds:.1f}s"

    fault.pending.append(asyncio.create_task(restarted()))
    end = time.monotonic() + 15
    while len(person.reconnects) == reconnects:
        assert time.monotonic() < end, f"{person.username}'s socket on the killed process was not closed"
        assert not person.over, "the game ended before the page reconnected"
        await asyncio.sleep(0.02)
    closed, opened = person.reconnects[-1]
    fault.notes["reconnected_in"] = f"{opened - closed:.2f}s"


async def test_redis_killed_and_restarted(stack: Stack) -> None:
    """Redis gone for 5 s and back empty: the worker and beat carry on (same processes), the timers lost
    with Redis are swept, and the pages whose channel groups were lost are closed and reconnect."""
    await run_fault(stack, PEOPLE[0:2], redis_restart, Fault("redis restart"), untouched=("worker", "beat"))


async def test_worker_killed(stack: Stack) -> None:
    await run_fault(stack, PEOPLE[2:4], worker_killed, Fault("worker SIGKILL"), untouched=("beat",))


async def test_database_connections_dropped(stack: Stack) -> None:
    names = ("worker", "beat", *stack.asgi_names())
    await run_fault(stack, PEOPLE[4:6], database_connections_dropped, Fault("pg_terminate_backend"), untouched=names)


async def test_asgi_process_killed(stack: Stack) -> None:
    """Last: with the presence of a killed process's sockets expiring by its heartbeat (issue 11)."""
    await run_fault(stack, PEOPLE[6:8], asgi_process_killed, Fault("ASGI SIGKILL"), untouched=("worker", "beat"))


def test_stack_is_supervised(stack: Stack) -> None:
    """After all that, every process is up and the site answers; `make up` again changes nothing."""
    assert all(state == "RUNNING" for state in stack.states().values()), stack.ctl("status")
    assert stack.get("/") == 200
    pids = {name: stack.pid(name) for name in stack.states()}
    assert "already running" in stack.up()
    assert {name: stack.pid(name) for name in stack.states()} == pids


def test_each_asgi_process_also_serves_a_port_of_its_own(stack: Stack) -> None:
    """With ASGI_OWN_PORTS (deploy/asgi.sh), process n answers on the n-th port as well as on the shared
    one, and a connection to that port is held by that process and no other: a proxy in front can send
    every socket of a table to one process (README, operator part)."""
    for n, port in enumerate(stack.own_ports):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)  # the request not ended yet
            assert held_by(stack, conn.getsockname()[1], port) == f"asgi:asgi{n}"
            conn.sendall(b"Connection: close\r\n\r\n")
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]


def held_by(stack: Stack, client_port: int, server_port: int, timeout: float = 10) -> str:
    """The ASGI process holding the connection, once one has accepted it (until then it has no inode)."""
    end = time.monotonic() + timeout
    while True:
        try:
            return stack.process_holding(client_port, server_port)
        except AssertionError:
            if time.monotonic() > end:
                raise
            time.sleep(0.05)
