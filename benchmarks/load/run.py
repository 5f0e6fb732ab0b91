"""Open-loop load against a running La Pocha (``make up``): T tables of four people, one legal move per
table every P seconds on average, move -> all-four-seats latency, lost and refused moves, socket errors,
and the server's CPU and PostgreSQL transactions per move (issue 12).  See benchmarks/load/README.md.

    PORT=8600 DATABASE_URL=postgres://postgres@127.0.0.1:5432/pocha_load REDIS_URL=redis://127.0.0.1:6379/9 \
    POCHA_VAR=/tmp/pocha_load_var .venv/bin/python benchmarks/load/run.py --tables 30 --period 3 --duration 40

Setup goes straight through Django (same DATABASE_URL, REDIS_URL and SECRET_KEY as the stack: the key is read
from $POCHA_VAR/secret_key unless SECRET_KEY is set): fresh accounts each run, a database session for each,
and T public 4-seat tables created and filled with ``games.table.actions`` (so they start), their turn clocks set
to 30000 s so the clock never plays.  At the end every table of the run is called off (``do_admin_cancel``)
before the sockets close, so no bot plays the abandoned games on into the next run.

Other modes (README): ``--mode bare`` runs the same driver against a minimal Channels server of its own
(benchmarks/load/bare, started and stopped here), ``--compare`` runs that and then the project with the same
load and gives the ratios, ``--advance-rounds K`` plays K whole rounds of every table before the window, and
``--ramp`` opens the tables over HTTP during the run at ``--ramp-rate`` tables/s and counts admissions and
refusals, and ``--tournament PLAYERS`` runs a free duplicate tournament's tables beside the quick ones (figures
for each and together) with sockets on the tournament's page, and measures how long its standings take to
show each deal that ends.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import html
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import time
import urllib.parse
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.load.wsclient import WebSocket, compose  # noqa: E402 (the one client of the tool and the tests)

SEQ = re.compile(rb'data-board-seq="(\d+)"')
HX_VALS = re.compile(r"hx-vals='([^']*)'")
FLASH = re.compile(rb'<div id="flash"[^>]*>(.*?)</div>', re.S)
GAME_ACTIONS = ("bid", "trump", "play")
CLOCK_SECONDS = 30000  # PositiveSmallIntegerField: at most 32767
TICK = os.sysconf("SC_CLK_TCK")
PROJECT_WS_PATH = "/ws/mesa/{table}/"
BARE_WS_PATH = "/ws/bare/{table}/{seat}/"
ROLES = ("daphne", "celery_worker", "celery_beat")
STATUS = re.compile(rb'data-status="(\w+)"')
#: The last round's result on a board (``#round-result``, shown from the round's last trick to the next deal).
ROUND_RESULT = re.compile(rb'id="round-result" data-round="(\d+)"')
TOURNAMENT_WS_PATH = "/ws/torneo/{tournament}/"


# -- the server's processes and PostgreSQL ------------------------------------------------------------


def _stat(pid: int) -> tuple[int, int] | None:
    """(utime + stime in ticks, ppid) of a process, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = text[text.rindex(")") + 2 :].split()
    # rest[0] is field 3 (state): utime is field 14, stime 15, ppid 4
    return int(rest[11]) + int(rest[12]), int(rest[1])


def _postmaster_ticks(pid: int) -> int:
    """The postmaster's own CPU plus that of every child it has reaped (``cutime`` + ``cstime``): the
    backends that ended, whole, however short they lived (a sample every 0.5 s misses most of them)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    rest = text[text.rindex(")") + 2 :].split()
    return sum(int(v) for v in rest[11:15])  # utime, stime, cutime, cstime


def _started(pid: int) -> int | None:
    """When a process started, in clock ticks since boot (field 22 of /proc/PID/stat), or None if gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text[text.rindex(")") + 2 :].split()[19])


def _uptime_ticks() -> float:
    return float(Path("/proc/uptime").read_text().split()[0]) * TICK


def _children(parents: set[int]) -> set[int]:
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st and st[1] in parents:
                found.add(int(entry))
    return found


def stack_env() -> dict[str, str]:
    """The environment `make up` gives supervisord (for supervisorctl to find the same one)."""
    env = dict(os.environ)
    env.setdefault("POCHA_ROOT", str(ROOT))
    env.setdefault("POCHA_BIN", str(ROOT / ".venv/bin"))
    env.setdefault("POCHA_VAR", str(ROOT / "var"))
    for name, value in {"BIND": "127.0.0.1", "PORT": "8000", "ASGI_PROCESSES": "2", "CELERY_CONCURRENCY": "2"}.items():
        env.setdefault(name, value)
    return env


def own_ports(env: dict[str, str]) -> list[int]:
    """The ASGI processes' own ports (``ASGI_OWN_PORTS``, deploy/asgi.sh), one for each process."""
    ports = [int(p) for p in env.get("ASGI_OWN_PORTS", "").split(",") if p.strip()]
    if not ports or len(ports) != int(env.get("ASGI_PROCESSES", "2")):
        raise SystemExit("--affinity: the stack must be up with ASGI_OWN_PORTS, one port for each ASGI process")
    return ports


def table_port(table_id: int, ports: list[int]) -> int:
    """The one process's port that every socket of ``table_id`` uses (as the README's nginx routes it)."""
    return ports[table_id % len(ports)]


def supervised_pids(
    conf: Path = ROOT / "deploy/supervisord.conf", env: dict[str, str] | None = None
) -> dict[str, list[int]]:
    """The stack's processes by role, from supervisorctl (with the same POCHA_VAR as `make up`; or the bare
    stack's config and environment)."""
    env = env or stack_env()
    out = subprocess.run(
        [env.get("POCHA_BIN", str(ROOT / ".venv/bin")) + "/supervisorctl", "-c", str(conf), "status"],
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    roles: dict[str, list[int]] = {role: [] for role in ROLES}
    for line in out.splitlines():
        match = re.match(r"(\S+)\s+RUNNING\s+pid (\d+)", line)
        if not match:
            continue
        name, pid = match.group(1), int(match.group(2))
        if name.startswith("asgi"):
            roles["daphne"].append(pid)
        elif name == "worker":
            roles["celery_worker"] += [pid, *_children({pid})]  # the prefork pool
        elif name == "beat":
            roles["celery_beat"].append(pid)
    return roles


class Postgres:
    def __init__(self, url: str) -> None:
        import dj_database_url
        import psycopg

        db = dj_database_url.parse(url)
        self.name = db["NAME"]
        params = {
            k: v
            for k, v in {"host": db["HOST"], "port": db["PORT"], "user": db["USER"], "password": db["PASSWORD"]}.items()
            if v
        }
        self.conn = psycopg.connect(dbname=db["NAME"], autocommit=True, **params)
        self.own = self.conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        self.postmaster = _stat(self.own)[1]  # type: ignore[index]  # the parent of every backend

    def backends(self) -> list[int]:
        rows = self.conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [self.name]
        ).fetchall()
        return [r[0] for r in rows]

    def counters(self) -> dict[str, int]:
        self.conn.execute("SELECT pg_stat_clear_snapshot()")
        row = self.conn.execute(
            "SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted"
            " FROM pg_stat_database WHERE datname = %s",
            [self.name],
        ).fetchone()
        keys = (
            "xact_commit",
            "xact_rollback",
            "tup_returned",
            "tup_fetched",
            "tup_inserted",
            "tup_updated",
            "tup_deleted",
        )
        counters = dict(zip(keys, map(int, row)))
        # Bytes PostgreSQL has written to its write-ahead log so far (the whole cluster's: run nothing else)
        high, low = self.conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0].split("/")
        counters["wal_bytes"] = (int(high, 16) << 32) + int(low, 16)
        # The tables' own counters: the table row's updates and how many of them were HOT (rewritten in
        # their page, no index touched), and the rows each table's sequential scans read
        for name, updates, hot, seq_read in self.conn.execute(
            "SELECT relname, n_tup_upd, n_tup_hot_upd, seq_tup_read FROM pg_stat_user_tables"
        ).fetchall():
            counters[f"seq_read:{name}"] = int(seq_read or 0)
            if name == "games_table":
                counters["table_updates"], counters["table_hot_updates"] = int(updates), int(hot)
        return counters

    def row_sizes(self, table_ids: list[int]) -> dict[str, int]:
        """The tables' rows as PostgreSQL stores them (``pg_column_size``: compressed, TOAST pointers
        counted as such) and their engine state as JSON text, mean and max in bytes."""
        row = self.conn.execute(
            "SELECT avg(pg_column_size(t.*))::int, max(pg_column_size(t.*)), avg(pg_column_size(t.state))::int,"
            " max(pg_column_size(t.state)), avg(octet_length(t.state::text))::int, max(octet_length(t.state::text))"
            " FROM games_table t WHERE t.id = ANY(%s)",
            [table_ids],
        ).fetchone()
        keys = ("row_mean", "row_max", "state_stored_mean", "state_stored_max", "state_json_mean", "state_json_max")
        return {k: int(v) for k, v in zip(keys, row) if v is not None}


@dataclass
class Snapshot:
    at: float
    cpu: dict[str, dict[int, int]]  # role -> pid -> ticks
    pg: dict[str, int]
    pg_at: float = 0.0  # when ``pg`` was read (later than ``at`` at a window's end: see ``settle_pg``)
    pg_reads: int = 1  # the tool's own reads of the counters it took (each is two transactions)
    machine: tuple[int, int] = (0, 0)  # the whole machine's busy and total ticks so far (``machine_ticks``)


def machine_ticks(stat: str | None = None) -> tuple[int, int]:
    """The machine's CPU time so far, every core and every process (Redis, the kernel, this tool
    included), from the first line of ``/proc/stat``: (busy ticks, all ticks); idle and iowait are not busy."""
    fields = [int(x) for x in (stat or Path("/proc/stat").read_text()).split("\n", 1)[0].split()[1:]]
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is inside user)
    return total - fields[3] - fields[4], total


def machine_busy(a: tuple[int, int], b: tuple[int, int]) -> float:
    """The share of the machine's CPU (all cores) that was busy between two ``machine_ticks``."""
    total = b[1] - a[1]
    return round((b[0] - a[0]) / total, 3) if total > 0 else 0.0


def snapshot(pg: Postgres, roles: dict[str, list[int]]) -> Snapshot:
    roles = {**roles, "postgres_backends": pg.backends()}
    cpu = {role: {pid: st[0] for pid in pids if (st := _stat(pid))} for role, pids in roles.items()}
    cpu["postgres_ended"] = {pg.postmaster: _postmaster_ticks(pg.postmaster)}
    at = time.monotonic()
    return Snapshot(at, cpu, pg.counters(), at, machine=machine_ticks())


def hot_fraction(before: dict[str, int], after: dict[str, int]) -> float | None:
    """The share of the table rows' updates between two reads of the counters that were HOT (None: no
    update, or a database without the project's tables)."""
    if "table_updates" not in before or "table_updates" not in after:
        return None
    updates = after["table_updates"] - before["table_updates"]
    if updates <= 0:
        return None
    return round((after["table_hot_updates"] - before["table_hot_updates"]) / updates, 3)


#: PostgreSQL 15 sends an idle backend's statistics (pg_stat_database's counters) up to ~10 s late, so the
#: counters are read this long after a burst (the sockets opening) or the end of a window.
PG_FLUSH_S = 11.0


async def settle_pg(pg: Postgres, s: Snapshot) -> None:
    """Read the PostgreSQL counters of the window-end snapshot ``s`` again once every backend has sent them
    (the CPU stays as read at ``s.at``)."""
    await asyncio.sleep(max(0.0, s.at + PG_FLUSH_S - time.monotonic()))
    s.pg, s.pg_at, s.pg_reads = pg.counters(), time.monotonic(), s.pg_reads + 1


def cpu_delta(a: Snapshot, b: Snapshot) -> dict[str, float]:
    """Seconds of CPU per role between two snapshots (processes present in both)."""
    return {
        role: sum(b.cpu[role][pid] - a.cpu[role][pid] for pid in a.cpu[role] if pid in b.cpu.get(role, {})) / TICK
        for role in a.cpu
    }


class CpuTracker:
    """The roles' CPU over a window, sampled every ``period`` s from ``start()`` to ``stop()``: a process
    that starts inside the window counts from zero and one that ends counts up to its last sample (during a
    ramp PostgreSQL starts and ends a backend for each HTTP request, which two snapshots would not see).
    The PostgreSQL backends are listed again at every sample.  What no sample saw (backends that ended
    between samples: a connection per Celery task, per HTTP request, and the postmaster's forks) is
    ``postgres_ended``: the postmaster's own CPU and its reaped children's, less what the samples had
    counted of the backends that ended."""

    def __init__(self, pg: Postgres, roles: dict[str, list[int]], period: float = 0.5) -> None:
        self.pg, self.roles, self.period = pg, roles, period
        self.first: dict[tuple[str, int, int], int] = {}
        self.last: dict[tuple[str, int, int], int] = {}
        self.t0 = 0.0
        self.postmaster0 = 0
        self.seen: set[tuple[str, int, int]] = set()  # the keys the latest sample found alive
        self._task: asyncio.Task[None] | None = None

    def sample(self) -> None:
        self.seen = set()
        for role, pids in {**self.roles, "postgres_backends": self.pg.backends()}.items():
            for pid in pids:
                st, started = _stat(pid), _started(pid)
                if st is None or started is None:
                    continue
                key = (role, pid, started)  # a pid used again is another process
                if key not in self.first:
                    self.first[key] = 0 if started >= self.t0 else st[0]
                self.last[key] = st[0]
                self.seen.add(key)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.period)
            self.sample()

    def start(self) -> CpuTracker:
        self.t0 = _uptime_ticks()
        self.postmaster0 = _postmaster_ticks(self.pg.postmaster)
        self.sample()
        self._task = asyncio.create_task(self._run())
        return self

    def stop(self) -> dict[str, float]:
        """Seconds of CPU per role over the window (the last sample taken now)."""
        if self._task is not None:
            self._task.cancel()
        self.sample()
        postmaster = _postmaster_ticks(self.pg.postmaster) - self.postmaster0
        seconds = {role: 0.0 for role in (*self.roles, "postgres_backends", "postgres_ended")}
        for key, ticks in self.last.items():
            seconds[key[0]] += (ticks - self.first[key]) / TICK
            if key[0] == "postgres_backends" and key not in self.seen:
                # ended: its whole life is in the postmaster's reaped figure; the samples counted it
                # from ``first`` to ``last``, and before ``first`` it was outside the window
                postmaster -= ticks
        seconds["postgres_ended"] = max(0, postmaster) / TICK
        return seconds


# -- a small HTTP/1.1 client (the ramp's requests; one connection per request) ---------------------------


@dataclass
class Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def cookies(self) -> dict[str, str]:
        found = {}
        for k, v in self.headers:
            if k.lower() == "set-cookie":
                name, _, value = v.split(";", 1)[0].partition("=")
                found[name.strip()] = value.strip().strip('"')
        return found


def _dechunk(body: bytes) -> bytes:
    out, rest = b"", body
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out, rest = out + rest[:size], rest[size + 2 :]
    return out


async def http_request(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes = b"", timeout: float = 30.0
) -> Response:
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    try:
        lines = [
            f"{method} {path} HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Connection: close",
            f"Content-Length: {len(body)}",
            *(f"{k}: {v}" for k, v in headers.items()),
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    head, _, content = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parsed = [(k.strip(), v.strip()) for k, _, v in (h.partition(":") for h in header_lines)]
    response = Response(int(status_line.split()[1]), parsed, content)
    if (response.header("Transfer-Encoding") or "").lower() == "chunked":
        response.body = _dechunk(content)
    return response


def flashed_messages(cookie: str) -> str:
    """The text of Django's ``messages`` cookie (signed, not encrypted: read without the key)."""
    try:
        data = cookie.replace("\\\\", "\\").split(":", 1)[0]
        compressed = data.startswith(".")
        raw = base64.urlsafe_b64decode(data.lstrip(".") + "=" * (-len(data.lstrip(".")) % 4))
        if compressed:
            raw = zlib.decompress(raw)
        texts: list[str] = []

        def walk(value: Any) -> None:
            if isinstance(value, list):
                if value and value[0] == "__json_message" and len(value) > 3:
                    texts.append(str(value[3]))
                else:
                    for item in value:
                        walk(item)

        walk(json.loads(raw))
        return " / ".join(texts) or "?"
    except (ValueError, zlib.error):
        return "?"


# -- the load --------------------------------------------------------------------------------------


@dataclass
class Stats:
    offered: int = 0  # scheduled move times inside the window
    sent: int = 0
    completed: int = 0
    lost: int = 0
    refused: int = 0
    busy: int = 0  # the table's previous move had not reached all four seats yet
    no_move: int = 0  # nobody at the table had a move on their latest board (a pause between rounds)
    socket_errors: int = 0
    latencies: list[float] = field(default_factory=list)
    #: when each completed move was sent (time.monotonic()), beside its latency: the report's timeline
    sent_at: list[float] = field(default_factory=list)
    refusals: dict[str, int] = field(default_factory=dict)
    boards: int = 0  # frames with a board received in the window, and their bytes
    board_bytes: int = 0


def percentile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile of ``values`` (seconds) in ms, nearest rank below, as the tool has always taken it."""
    ordered = sorted(values)
    if not ordered:
        return None
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def moves_report(st: Stats, duration: float, elapsed: float) -> dict[str, Any]:
    """The moves' figures of a window (or of one group of its tables): rates, counts, latency."""
    lat = st.latencies
    return {
        "offered_moves_per_s": round(st.offered / duration, 2),
        "sent_moves_per_s": round(st.sent / elapsed, 2) if elapsed else None,
        "completed_moves_per_s": round(st.completed / elapsed, 2) if elapsed else None,
        "offered": st.offered,
        "sent": st.sent,
        "completed": st.completed,
        "lost": st.lost,
        "refused": st.refused,
        "refusals": st.refusals,
        "skipped_busy": st.busy,
        "skipped_no_move": st.no_move,
        "socket_errors": st.socket_errors,
        "latency_ms": {
            "p50": percentile(lat, 0.50),
            "p95": percentile(lat, 0.95),
            "p99": percentile(lat, 0.99),
            "max": round(1000 * max(lat), 1) if lat else None,
            "mean": round(1000 * statistics.mean(lat), 1) if lat else None,
        },
        "board_bytes_mean": round(st.board_bytes / st.boards) if st.boards else None,
        "latency_timeline": timeline(st),
    }


def samples(st: Stats, start: float) -> list[list[float]]:
    """Every completed move (``--samples``): seconds from the window's ``start`` to its send, and its latency
    in ms; to cut a long window into parts afterwards."""
    return [[round(sent - start, 3), round(1000 * latency, 1)] for sent, latency in zip(st.sent_at, st.latencies)]


#: Seconds per step of the report's latency timeline.
TIMELINE_STEP = 5.0


def timeline(st: Stats) -> list[dict[str, Any]]:
    """The window's moves by when they were sent, in steps of ``TIMELINE_STEP`` seconds from the first:
    for each step the moves completed and their p50 / p95 / max ms.  A tail spread over every step is
    queueing; one packed into a step or two is a stall (a collection, a checkpoint, a burst of clocks)."""
    if not st.sent_at:
        return []
    first = min(st.sent_at)
    steps: dict[int, list[float]] = {}
    for sent, latency in zip(st.sent_at, st.latencies):
        steps.setdefault(int((sent - first) // TIMELINE_STEP), []).append(latency)
    return [
        {
            "from_s": round(step * TIMELINE_STEP),
            "moves": len(values),
            "p50": percentile(values, 0.50),
            "p95": percentile(values, 0.95),
            "max": round(1000 * max(values), 1),
        }
        for step, values in sorted(steps.items())
    ]


def next_gap(rng: random.Random, period: float, spacing: str) -> float:
    """Seconds from a table's move to its next: exponential with mean P (``exp``), or P ±20 % (``fixed``)."""
    return rng.expovariate(1 / period) if spacing == "exp" else period * rng.uniform(0.8, 1.2)


def move_times(seed: int, period: float, spacing: str) -> Iterator[float]:
    """A table's move times, in seconds from the window's start, without end.  The tables together offer
    T / P moves a second from the window's first second on, as they do later: each table's moves are laid
    out from ten periods before the window (a stationary phase; with exponential gaps the first move is
    simply one more gap away).  A first move uniform over [0, P] followed by exponential gaps, as the tool
    had it until 2026-12-04, offered 1.5 T / P a second over the first P seconds (rising to 2 T / P at P):
    a burst at every window's start that the server then spent seconds working off."""
    rng = random.Random(seed)
    at = -10 * period - rng.uniform(0, period)
    while True:
        at += next_gap(rng, period, spacing)
        if at >= 0:
            yield at


@dataclass
class Pending:
    seq: int
    sent: float
    mover: int
    stats: tuple[Stats, ...]  # the phase it was sent in (the ramp has two), and its table's group's
    #: The round whose result the mover's board showed when the move was sent (``finished_round``).
    result_before: int | None = None
    seen: set[int] = field(default_factory=set)
    deal_end: bool = False  # a board after it showed a round's result that was not up before: it ended a deal


class Seat:
    def __init__(self, table: Table, position: int, cookie: str) -> None:
        self.table, self.position, self.cookie = table, position, cookie
        self.ws: WebSocket | None = None
        self.board = b""
        self.seq = -1

    def moves(self) -> list[dict[str, Any]]:
        options = [json.loads(html.unescape(v)) for v in HX_VALS.findall(self.board.decode("utf-8", "replace"))]
        return [o for o in options if o.get("action") in GAME_ACTIONS]


def finished_round(board: bytes, deals: tuple[int, ...] = ()) -> int | None:
    """The round whose result a board shows (``#round-result``, up from the round's last trick to the next
    deal), or, on a finished game's board (``data-over="1"``, which shows the final ranking instead), the
    game's last round (the last of ``deals``, a tournament game's rounds); None otherwise."""
    match = ROUND_RESULT.search(board)
    if match:
        return int(match.group(1))
    if deals and b'data-over="1"' in board:
        return deals[-1]
    return None


class Table:
    def __init__(
        self,
        run: Run,
        table_id: int,
        cookies: list[str],
        *,
        kind: str = "quick",
        number: int | None = None,
        deals: tuple[int, ...] = (),
    ) -> None:
        self.run, self.id = run, table_id
        self.seats = [Seat(self, i, c) for i, c in enumerate(cookies)]
        self.pending: Pending | None = None
        #: quick, or tournament (then its number in the tournament and the rounds its game plays)
        self.kind, self.number, self.deals = kind, number, deals
        self.group: Stats | None = run.groups.get(kind)

    def counters(self) -> tuple[Stats, ...]:
        """Where this table's moves count: the run's (phase's) figures, and its group's if the run has groups."""
        return (self.run.stats,) if self.group is None else (self.run.stats, self.group)

    def on_board(self, seat: Seat, seq: int) -> None:
        p = self.pending
        if p is not None and seq > p.seq:
            if self.kind == "tournament" and not p.deal_end:
                shown = finished_round(seat.board, self.deals)
                if shown is not None and shown != p.result_before:
                    p.deal_end = True
                    self.run.on_deal_end(self, shown, p.sent)
            p.seen.add(seat.position)
            if len(p.seen) == len(self.seats):
                self.pending = None
                if self.run.measuring:
                    for st in p.stats:
                        st.completed += 1
                        st.latencies.append(time.monotonic() - p.sent)
                        st.sent_at.append(p.sent)

    def on_flash(self, seat: Seat, text: str) -> None:
        p = self.pending
        if p is not None and p.mover == seat.position and not p.seen:
            self.pending = None
            if self.run.measuring:
                for st in p.stats:
                    st.refused += 1
                    st.refusals[text] = st.refusals.get(text, 0) + 1


class Run:
    def __init__(
        self,
        args: argparse.Namespace,
        tables: list[tuple[int, list[str]]],
        *,
        port: int | None = None,
        ws_path: str = PROJECT_WS_PATH,
        rounds: Callable[[], list[int]] | None = None,
        groups: tuple[str, ...] = (),
    ) -> None:
        self.args = args
        self.port = port or args.port
        self.ws_path = ws_path
        self.rounds = rounds  # the tables' round numbers now (read around the window), if asked for
        self.stats = Stats()
        #: Figures kept apart by the tables' kind as well (``--tournament``: tournament, quick).
        self.groups = {kind: Stats() for kind in groups}
        self.measuring = False
        self.stop = False
        self.end = float("inf")  # no move is offered at or after this time
        self.window_start = float("inf")
        self.elapsed = 0.0  # the measured window's length, once over
        self.deal_ends: list[DealEnd] = []
        self.tables = [Table(self, tid, cookies) for tid, cookies in tables]
        self.origin = f"http://127.0.0.1:{self.port}"
        #: ``--affinity``: the ASGI processes' own ports; each table's sockets go to one of them (``port_for``).
        self.own_ports = own_ports(stack_env()) if getattr(args, "affinity", False) and port is None else []

    def port_for(self, table_id: int) -> int:
        """Where a socket of the table connects: the port every process shares (the kernel then gives each
        connection to any of them), or, with ``--affinity``, one process's own port chosen by the table, as a
        proxy in front that routes by table does (README, operator part)."""
        return table_port(table_id, self.own_ports) if self.own_ports else self.port

    def on_deal_end(self, table: Table, round_number: int, sent: float) -> None:
        """A move sent at ``sent`` ended the deal ``round_number`` at a tournament table."""
        deal = table.deals.index(round_number) + 1 if round_number in table.deals else 0
        ordinal = len(self.deal_ends) + 1
        self.deal_ends.append(DealEnd(int(table.number or 0), deal, round_number, sent, ordinal))

    async def open(self, seat: Seat, sem: asyncio.Semaphore) -> None:
        port = self.port_for(seat.table.id)
        headers = {"Origin": f"http://127.0.0.1:{port}"}
        if seat.cookie:
            headers["Cookie"] = f"sessionid={seat.cookie}"
        async with sem:
            for attempt in range(5):
                try:
                    seat.ws = await WebSocket.connect(
                        port, self.ws_path.format(table=seat.table.id, seat=seat.position), headers
                    )
                    return
                except (OSError, ConnectionError, TimeoutError) as error:
                    for st in seat.table.counters():
                        st.socket_errors += 1
                    print(f"connect table {seat.table.id} seat {seat.position}: {error!r}", file=sys.stderr)
                    await asyncio.sleep(0.5 * (attempt + 1))

    async def read(self, seat: Seat) -> None:
        while not self.stop:
            if seat.ws is None:
                await asyncio.sleep(1)
                await self.open(seat, asyncio.Semaphore(1))
                continue
            frame = await seat.ws.recv(decode=False)
            if frame is None:
                if not self.stop:
                    for st in seat.table.counters():
                        st.socket_errors += 1
                    print(f"table {seat.table.id} seat {seat.position}: socket closed by the server", file=sys.stderr)
                seat.ws = None
                continue
            match = SEQ.search(frame)
            if match:
                seq = int(match.group(1))
                if self.measuring:
                    for st in seat.table.counters():
                        st.boards += 1
                        st.board_bytes += len(frame)
                if seq >= seat.seq:
                    seat.seq, seat.board = seq, compose(seat.board, frame)
                seat.table.on_board(seat, seq)
            flash = FLASH.search(frame)
            if flash:
                text = re.sub(r"<[^>]+>", "", html.unescape(flash.group(1).decode("utf-8", "replace"))).strip()
                if text:
                    seat.table.on_flash(seat, text)

    async def drive(self, table: Table, start: float) -> None:
        """Open loop: move times fixed in advance on the clock (exponential gaps, mean P), until ``self.end``."""
        rng = random.Random(table.id)  # the moves' choices (the times have their own generator)
        for offset in move_times(table.id, self.args.period, self.args.spacing):
            at = start + offset
            if at >= self.end:
                break
            await asyncio.sleep(max(0.0, at - time.monotonic()))
            if at >= self.end:  # (the ramp sets the end while its tables wait)
                break
            for st in table.counters():
                st.offered += 1
            await self.move(table, rng)

    async def move(self, table: Table, rng: random.Random) -> None:
        p = table.pending
        counters = table.counters()
        if p is not None:
            if time.monotonic() - p.sent > self.args.lost_after:
                table.pending = None
                for st in p.stats:
                    st.lost += 1
            else:
                for st in counters:
                    st.busy += 1
                return
        seq = max(s.seq for s in table.seats)
        movers = [s for s in table.seats if s.seq == seq and s.ws is not None and s.moves()]
        if not movers:
            for st in counters:
                st.no_move += 1
            return
        seat = movers[0]
        choice = rng.choice(seat.moves())
        before = finished_round(seat.board, table.deals)
        table.pending = Pending(seq, time.monotonic(), seat.position, counters, result_before=before)
        try:
            await seat.ws.send(choice)  # type: ignore[union-attr]
            for st in counters:
                st.sent += 1
        except (OSError, ConnectionError, RuntimeError):
            table.pending = None
            for st in counters:
                st.socket_errors += 1

    async def drain(self) -> None:
        """The last moves get up to lost_after to land; the rest are lost."""
        drain_end = time.monotonic() + self.args.lost_after
        while any(t.pending for t in self.tables) and time.monotonic() < drain_end:
            await asyncio.sleep(0.05)
        for t in self.tables:
            if t.pending is not None:
                for st in t.pending.stats:
                    st.lost += 1
                t.pending = None

    async def first_boards(self, tables: list[Table], timeout: float = 30) -> int:
        """Wait for every seat's first board; how many are still missing."""
        deadline = time.monotonic() + timeout
        while any(s.seq < 0 for t in tables for s in t.seats) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        return sum(s.seq < 0 for t in tables for s in t.seats)

    async def main(self, pg: Postgres, roles: dict[str, list[int]]) -> tuple[dict[str, Any], list[asyncio.Task[None]]]:
        sem = asyncio.Semaphore(16)
        t0 = time.monotonic()
        await asyncio.gather(*(self.open(s, sem) for t in self.tables for s in t.seats))
        readers = [asyncio.create_task(self.read(s)) for t in self.tables for s in t.seats]
        connect_s = time.monotonic() - t0
        missing = await self.first_boards(self.tables)
        analysed = await asyncio.to_thread(analyse_after_connect, pg, self.args.vacuum)
        await asyncio.sleep(PG_FLUSH_S)  # the connections' work done, and counted by PostgreSQL
        # idle: sockets open, nobody moving
        idle0 = snapshot(pg, roles)
        await asyncio.sleep(self.args.idle)
        idle1 = snapshot(pg, roles)
        rounds0 = self.rounds() if self.rounds else []
        # the measured window
        self.measuring = True
        rusage0 = resource.getrusage(resource.RUSAGE_SELF)
        s0 = snapshot(pg, roles)
        tracker = CpuTracker(pg, roles).start()
        start = self.window_start = time.monotonic()
        started_at = time.time()  # the window's wall-clock start, to line it up with the server's logs
        print(f"window: from {started_at:.3f} for {self.args.duration:g} s", file=sys.stderr, flush=True)
        self.end = start + self.args.duration
        await asyncio.gather(*(self.drive(t, start) for t in self.tables))
        await self.drain()
        elapsed = self.elapsed = time.monotonic() - start
        self.measuring = False
        await asyncio.sleep(1.5)
        s1 = snapshot(pg, roles)
        cpu = tracker.stop()
        rusage1 = resource.getrusage(resource.RUSAGE_SELF)
        await settle_pg(pg, s1)
        self.stop = True
        report = self.report(self.stats, self.args.duration, idle0, idle1, s0, s1, elapsed, rusage0, rusage1, cpu)
        report["analyse_after_connect_s"] = analysed
        report = {**report, "connect_s": round(connect_s, 1), "seats_without_first_board": missing}
        report["window_started_at"] = datetime.fromtimestamp(started_at, UTC).isoformat(timespec="milliseconds")
        if self.args.samples:
            report["samples"] = samples(self.stats, start)
        if self.ws_path == PROJECT_WS_PATH:
            report["table_row_bytes"] = pg.row_sizes([t.id for t in self.tables])
        if self.rounds:
            rounds1 = self.rounds()
            report["rounds_at_window_start"] = {"min": min(rounds0), "max": max(rounds0)}
            report["rounds_at_window_end"] = {"min": min(rounds1), "max": max(rounds1)}
        return report, readers

    def report(
        self,
        st: Stats,
        duration: float,
        idle0: Snapshot,
        idle1: Snapshot,
        s0: Snapshot,
        s1: Snapshot,
        elapsed: float,
        r0: resource.struct_rusage,
        r1: resource.struct_rusage,
        cpu: dict[str, float],
    ) -> dict[str, Any]:
        """``cpu``: seconds per role over the window (``CpuTracker``)."""
        idle_cpu = cpu_delta(idle0, idle1)
        idle_s = idle1.at - idle0.at
        xacts = (s1.pg["xact_commit"] + s1.pg["xact_rollback"]) - (s0.pg["xact_commit"] + s0.pg["xact_rollback"])
        xacts -= 3 + 2 * (s1.pg_reads - 1)  # this tool's own statistics reads between the snapshots
        n = max(st.completed, 1)
        window = s1.at - s0.at
        pg_window = s1.pg_at - s0.pg_at
        idle_xacts = (
            (idle1.pg["xact_commit"] + idle1.pg["xact_rollback"])
            - (idle0.pg["xact_commit"] + idle0.pg["xact_rollback"])
            - 3
        )
        idle_xact_rate = max(0, idle_xacts) / idle_s
        tuples = {k: s1.pg[k] - s0.pg[k] for k in s0.pg if k.startswith("tup_")}
        seq_read = {k.partition(":")[2]: s1.pg.get(k, 0) - s0.pg[k] for k in s0.pg if k.startswith("seq_read:")}
        wal = s1.pg["wal_bytes"] - s0.pg["wal_bytes"]
        idle_wal_rate = max(0, idle1.pg["wal_bytes"] - idle0.pg["wal_bytes"]) / idle_s
        moves = moves_report(st, duration, elapsed)
        return {
            "tables": len(self.tables),
            "sockets": 4 * len(self.tables),
            "period_s": self.args.period,
            "spacing": self.args.spacing,
            "clock_seconds": self.args.clock_seconds,
            "window_s": round(elapsed, 1),
            "connect_s": None,
            "seats_without_first_board": None,
            **{k: v for k, v in moves.items() if k != "board_bytes_mean"},
            "cpu_ms_per_move": {role: round(1000 * sec / n, 2) for role, sec in cpu.items()},
            "cpu_ms_per_move_net_of_idle": {
                role: round(1000 * (sec - idle_cpu[role] / idle_s * window) / n, 2) for role, sec in cpu.items()
            },
            "cpu_s_total": {role: round(sec, 2) for role, sec in cpu.items()},
            "cpu_busy_fraction_idle": {role: round(sec / idle_s, 3) for role, sec in idle_cpu.items()},
            "pg_transactions_per_move": round(xacts / n, 2),
            "pg_transactions_per_move_net_of_idle": round((xacts - idle_xact_rate * pg_window) / n, 2),
            "pg_transactions_per_s_idle": round(idle_xact_rate, 1),
            "pg_tuples_per_move": {k: round(v / n, 1) for k, v in tuples.items()},
            "pg_wal_bytes_per_move": round(wal / n),
            "pg_table_hot_update_fraction": hot_fraction(s0.pg, s1.pg),
            "pg_seq_rows_per_move": {k: round(v / n, 1) for k, v in sorted(seq_read.items()) if v > 0},
            "pg_wal_bytes_per_move_net_of_idle": round((wal - idle_wal_rate * pg_window) / n),
            "machine_busy_fraction": machine_busy(s0.machine, s1.machine),
            "machine_busy_fraction_idle": machine_busy(idle0.machine, idle1.machine),
            "machine_cpu_ms_per_move": round(1000 * (s1.machine[0] - s0.machine[0]) / TICK / n, 2),
            "load_tool_cpu_ms_per_move": round(
                1000 * ((r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)) / n, 2
            ),
            "loadavg_after": Path("/proc/loadavg").read_text().split()[:3],
            "board_bytes_mean": moves["board_bytes_mean"],
        }

    async def close_all(self, readers: list[asyncio.Task[None]]) -> None:
        self.stop = True
        for t in self.tables:
            for s in t.seats:
                if s.ws is not None:
                    await s.ws.close()
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)


# -- a tournament beside the quick tables (``--tournament``) ---------------------------------------------


@dataclass(frozen=True)
class DealEnd:
    """A deal that ended at a tournament table: the move that ended it was sent at ``sent`` (monotonic)."""

    table: int  # the table's number in the tournament (``Table.tournament_number``)
    deal: int  # which of its game's deals (from 1; 0 if the round is not one of them)
    round: int  # the round of the schedule
    sent: float
    #: How many deals the tournament's tables had finished with this one, in the order the tool saw them end.
    ordinal: int = 0


@dataclass(frozen=True)
class StandingsPush:
    """A frame the tournament's page received: when, and which deals it shows finished (``standings_shown``):
    by table (its number -> deals finished there) or in all (the tables' finished deals summed), or None
    when the frame does not say."""

    at: float
    played: dict[int, int] | None = None
    total: int | None = None
    size: int = 0


#: A pushed tournament page's standings (``templates/games/_tournament_live.html``): its section, a line (the
#: entrant's name in ``data-name``) and a line's cells: place, name, score, deals played, points.
_STANDINGS = re.compile(rb'<section id="tournament-standings".*?</section>', re.S)
_LINE = re.compile(rb'<tr\b[^>]*\bdata-name="([^"]*)"[^>]*>(.*?)</tr>', re.S)
#: A line's deals played: its cell of class ``played`` (``games/_tournament_live.html``).
_PLAYED = re.compile(rb'<td\b[^>]*\bclass="[^"]*\bplayed\b[^"]*"[^>]*>\s*(\d+)\s*</td>', re.S)


def standings_lines(frame: bytes) -> dict[str, int] | None:
    """Each standings line's deals played, by the entrant's name, as a frame of the tournament's page shows
    them; None if the frame has no standings (a bot's line may share its name with another bot's: the most
    played is kept, which is all the matching needs)."""
    section = _STANDINGS.search(frame)
    if section is None:
        return None
    lines: dict[str, int] = {}
    for line in _LINE.finditer(section.group(0)):
        played = _PLAYED.search(line.group(2))
        if played is not None:
            name = html.unescape(line.group(1).decode("utf-8", "replace"))
            lines[name] = max(lines.get(name, 0), int(played.group(1)))
    return lines or None


def standings_shown(frame: bytes, at: float, table_of: dict[str, int], seats: int = 4) -> StandingsPush:
    """What a frame of the tournament's page shows of the deals finished: by table when its lines are the
    people the tool seated (``table_of``: a person's name -> their table's number; a table's deals played
    are those of its people's lines); else, from every line, the deals the tables have finished in all (each
    counts once for each of a table's ``seats``); else nothing (the push matches only by time)."""
    lines = standings_lines(frame)
    if lines is None:
        return StandingsPush(at, size=len(frame))
    played: dict[int, int] = {}
    for name, count in lines.items():
        number = table_of.get(name)
        if number is not None:
            played[number] = max(played.get(number, 0), count)
    if played:
        return StandingsPush(at, played=played, size=len(frame))
    return StandingsPush(at, total=sum(lines.values()) // seats, size=len(frame))


def first_reflecting(end: DealEnd, pushes: list[StandingsPush]) -> float | None:
    """Seconds from the send of the move that ended a deal to the first push received after it that shows
    that deal: when the push says how many deals each table has finished, the first whose count for the
    deal's table reaches the deal; when it says only how many the tables have finished in all, the first
    whose count reaches the deal's ``ordinal``; when it says neither, simply the first push after the send.
    None: no push did."""
    for push in pushes:
        if push.at < end.sent:
            continue
        if push.played is not None:
            if push.played.get(end.table, 0) >= end.deal:
                return push.at - end.sent
        elif push.total is not None:
            if push.total >= end.ordinal:
                return push.at - end.sent
        else:
            return push.at - end.sent
    return None


def matched_by(pushes: list[StandingsPush]) -> str:
    """How ``first_reflecting`` matched these pushes to the deals (the README's words)."""
    kinds = {"table" if p.played is not None else "total" if p.total is not None else "time" for p in pushes}
    names = {
        "table": "the deals finished by table that each push shows (exact)",
        "total": "the deals finished in all that each push shows, against the order the tool saw the deals end",
        "time": "the first push after the move (the pushes do not say which deals they show)",
    }
    if not kinds:
        return "no push"
    return " / ".join(names[k] for k in ("table", "total", "time") if k in kinds)


def showing(ends: list[DealEnd]) -> list[DealEnd]:
    """The deal ends that make their deal shown: a tournament's standings count a deal only once every table
    of the game has finished it (its deals are secret until then: ``games.read.tournaments``), so of the ends
    of one deal only the last one seen (the last table to finish it) can be reflected by a push; the earlier
    ones wait for it, which is the game's pace, not the page's delay.  (Ends of rounds that are none of the
    deals, ``deal`` 0, are kept as they are.)"""
    last: dict[int, float] = {}
    for end in ends:
        if end.deal:
            last[end.deal] = max(last.get(end.deal, end.sent), end.sent)
    return [end for end in ends if not end.deal or end.sent == last[end.deal]]


def standings_delays(
    ends: list[DealEnd], watchers: list[list[StandingsPush]], within: float, origin: float = 0.0
) -> dict[str, Any]:
    """The standings' delay of each deal end that makes its deal shown (``showing``: the last table to finish
    it), for every socket on the tournament's page (``watchers``: the pushes each received, in order): ``all`` until the last socket had a push showing it (the page's
    counterpart of move -> all seats), ``first`` until the first one did; ``no_push_within``: deal ends that
    some socket had not been shown within ``within`` seconds (never, or later).  ``ends`` lists each deal
    end with its send time from ``origin`` (the window's start) and its delays."""
    every: list[float] = []
    first: list[float] = []
    late = 0
    listed = []
    for end in showing(ends):
        found = [first_reflecting(end, pushes) for pushes in watchers]
        known = [d for d in found if d is not None]
        if not found or len(known) < len(found) or max(known) > within:
            late += 1
        if found and len(known) == len(found):
            every.append(max(known))
        if known:
            first.append(min(known))
        listed.append(
            {
                "table": end.table,
                "deal": end.deal,
                "round": end.round,
                "sent_s": round(end.sent - origin, 3),
                "delay_ms": [None if d is None else round(1000 * d, 1) for d in found],
            }
        )

    def summary(values: list[float]) -> dict[str, float | int | None]:
        return {
            "count": len(values),
            "p50": percentile(values, 0.50),
            "p95": percentile(values, 0.95),
            "max": round(1000 * max(values), 1) if values else None,
        }

    return {
        "deal_ends": len(listed),
        "matched_by": matched_by([p for pushes in watchers for p in pushes if p.at >= origin]),
        "within_s": within,
        "no_push_within": late,
        "delay_ms_all_sockets": summary(every),
        "delay_ms_first_socket": summary(first),
        "ends": listed,
    }


def fake_address(n: int) -> str:
    """A distinct made-up address for the ``n``-th person (10.x.y.z, from 10.0.0.1): the one-address rule
    (no two people of one address at one table) never binds."""
    n += 1
    return f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


@dataclass
class TournamentSetup:
    id: int
    players: int
    deals: tuple[int, ...]  # the rounds of the schedule its game plays
    tables: list[tuple[int, int, list[str]]]  # (table id, its number in the tournament, the cookies by seat)
    table_of: dict[str, int]  # each person's name -> their table's number (the page's standings name them)
    watchers: list[str]  # the session cookies of the sockets on the tournament's page
    moderator: Any
    setup_s: float = 0.0
    par_s: float | None = None  # how long the worker took to play the deals' par after the start


class Watcher:
    """A socket on the tournament's page: every frame it receives, timestamped."""

    def __init__(self, cookie: str) -> None:
        self.cookie = cookie
        self.ws: WebSocket | None = None
        self.pushes: list[StandingsPush] = []
        self.errors = 0


class TournamentRun(Run):
    """The quick tables and a tournament's tables under the one open-loop driver (figures for all and by
    kind), and sockets on the tournament's page whose pushes give the standings' delay after each deal."""

    def __init__(self, args: argparse.Namespace, quick: list[tuple[int, list[str]]], tour: TournamentSetup) -> None:
        super().__init__(args, quick, groups=("tournament", "quick"))
        self.tour = tour
        self.tables += [
            Table(self, tid, cookies, kind="tournament", number=number, deals=tour.deals)
            for tid, number, cookies in tour.tables
        ]
        self.watchers = [Watcher(cookie) for cookie in tour.watchers]
        self.watch_path = TOURNAMENT_WS_PATH.format(tournament=tour.id)

    async def open_watcher(self, w: Watcher) -> None:
        headers = {"Origin": self.origin, "Cookie": f"sessionid={w.cookie}"}
        for attempt in range(5):
            try:
                w.ws = await WebSocket.connect(self.port, self.watch_path, headers)
                return
            except (OSError, ConnectionError, TimeoutError) as error:
                w.errors += 1
                print(f"connect {self.watch_path}: {error!r}", file=sys.stderr)
                await asyncio.sleep(0.5 * (attempt + 1))

    async def watch(self, w: Watcher) -> None:
        while not self.stop:
            if w.ws is None:
                await asyncio.sleep(1)
                await self.open_watcher(w)
                continue
            frame = await w.ws.recv(decode=False)
            at = time.monotonic()
            if frame is None:
                if not self.stop:
                    w.errors += 1
                    print(f"{self.watch_path}: socket closed by the server", file=sys.stderr)
                w.ws = None
                continue
            if isinstance(frame, str):
                frame = frame.encode()
            w.pushes.append(standings_shown(frame, at, self.tour.table_of))

    async def main(self, pg: Postgres, roles: dict[str, list[int]]) -> tuple[dict[str, Any], list[asyncio.Task[None]]]:
        await asyncio.gather(*(self.open_watcher(w) for w in self.watchers))
        watching = [asyncio.create_task(self.watch(w)) for w in self.watchers]
        report, readers = await super().main(pg, roles)
        report["mode"] = "tournament"
        report["tournament"] = self.tournament_report()
        report["quick"] = self.group_report("quick")
        return report, readers + watching

    def group_report(self, kind: str) -> dict[str, Any]:
        tables = sum(t.kind == kind for t in self.tables)
        return {
            "tables": tables,
            "sockets": 4 * tables,
            **moves_report(self.groups[kind], self.args.duration, self.elapsed),
        }

    def tournament_report(self) -> dict[str, Any]:
        ends = [e for e in self.deal_ends if self.window_start <= e.sent < self.end]
        in_window = [[p for p in w.pushes if p.at >= self.window_start] for w in self.watchers]
        pushes = [p for w in in_window for p in w]
        return {
            "id": self.tour.id,
            "players": self.tour.players,
            "deals": list(self.tour.deals),
            "setup_s": round(self.tour.setup_s, 1),
            "par_s": None if self.tour.par_s is None else round(self.tour.par_s, 1),
            "page_sockets": len(self.watchers),
            "page_socket_errors": sum(w.errors for w in self.watchers),
            "pushes_in_window_per_socket": [len(w) for w in in_window],
            "push_bytes_mean": round(statistics.mean(p.size for p in pushes)) if pushes else None,
            "deal_ends_by_deal": {str(d): sum(e.deal == d for e in ends) for d in range(1, len(self.tour.deals) + 1)},
            "standings": standings_delays(ends, in_window, self.args.standings_within, self.window_start),
            **self.group_report("tournament"),
        }

    async def close_all(self, readers: list[asyncio.Task[None]]) -> None:
        self.stop = True
        for w in self.watchers:
            if w.ws is not None:
                await w.ws.close()
        await super().close_all(readers)


# -- the ramp: tables opened over HTTP during the run -------------------------------------------------------

FULL = "Sala llena"


@dataclass
class Admission:
    """What happened to one table the ramp tried to open."""

    outcome: str = "failed"  # admitted, refused (503 «Sala llena»), failed
    table_id: int | None = None  # once created (a table refused at a seat is created, and cancelled at the end)
    step: str = ""  # where it was refused or failed: home, create, sit1..sit3, sockets, start
    detail: str = ""
    seconds: float = 0.0  # from the first request to the fourth seat taken


class RampRun(Run):
    """``--ramp``: T groups of four people; at ``--ramp-rate`` groups/s one of them opens a table over HTTP
    (GET /, POST /mesas/nueva/, three POST /mesa/<id>/sentarse/); an admitted table's four sockets open and
    it joins the open-loop driver at once.  Two phases are measured: during the ramp (until every attempt
    has ended) and ``--duration`` s after it."""

    def __init__(self, args: argparse.Namespace, people: list[list[str]]) -> None:
        super().__init__(args, [])
        self.people = people
        self.admissions: list[Admission] = []
        self.readers: list[asyncio.Task[None]] = []
        self.drivers: list[asyncio.Task[None]] = []
        self.sem = asyncio.Semaphore(16)

    def post_headers(self, cookie: str, csrf: str) -> dict[str, str]:
        return {
            "Cookie": f"sessionid={cookie}; csrftoken={csrf}",
            "X-CSRFToken": csrf,
            "Origin": self.origin,
            "Referer": self.origin + "/",
            "Content-Type": "application/x-www-form-urlencoded",
        }

    @staticmethod
    def refused(response: Response) -> bool:
        return response.status == 503 and FULL.encode() in response.body

    @staticmethod
    def describe(response: Response) -> str:
        if response.status in (301, 302, 303):
            text = f"{response.status} -> {response.header('Location')}"
            if "messages" in response.cookies():
                text += f" ({flashed_messages(response.cookies()['messages'])})"
            return text
        body = re.sub(rb"<[^>]+>", b" ", response.body[:2000]).decode("utf-8", "replace")
        return f"{response.status} {' '.join(body.split())[:120]}"

    async def admit(self, cookies: list[str]) -> Admission:
        result = Admission()
        self.admissions.append(result)
        t0 = time.monotonic()
        step = "home"
        try:
            home = await http_request(self.port, "GET", "/", {"Cookie": f"sessionid={cookies[0]}"})
            if home.status != 200:
                return self.outcome(result, step, home)
            csrf = home.cookies().get("csrftoken")
            if not csrf:
                result.step, result.detail = step, "no csrftoken cookie"
                return result
            step = "create"
            body = urllib.parse.urlencode({"size": 4, "stake": 0}).encode()
            created = await http_request(self.port, "POST", "/mesas/nueva/", self.post_headers(cookies[0], csrf), body)
            match = re.fullmatch(r"/mesa/(\d+)/", created.header("Location") or "")
            if created.status != 302 or not match:
                return self.outcome(result, step, created)
            result.table_id = table_id = int(match.group(1))
            for i, cookie in enumerate(cookies[1:], 1):
                step = f"sit{i}"
                sat = await http_request(
                    self.port, "POST", f"/mesa/{table_id}/sentarse/", self.post_headers(cookie, csrf), b""
                )
                if sat.status != 302 or sat.header("Location") != f"/mesa/{table_id}/" or "messages" in sat.cookies():
                    return self.outcome(result, step, sat)
        except (OSError, ConnectionError, TimeoutError, ValueError, IndexError) as error:
            result.step, result.detail = step, repr(error)
            return result
        result.seconds = time.monotonic() - t0
        # the fourth seat started the game: four sockets, then the table joins the driver
        table = Table(self, table_id, cookies)
        self.tables.append(table)
        await asyncio.gather(*(self.open(s, self.sem) for s in table.seats))
        self.readers += [asyncio.create_task(self.read(s)) for s in table.seats]
        if await self.first_boards([table], timeout=15):
            result.step, result.detail = "sockets", "no first board on every seat within 15 s"
            return result
        status = STATUS.search(table.seats[0].board)
        if not status or status.group(1) != b"playing":
            result.step, result.detail = "start", f"the table is {status.group(1).decode() if status else '?'}"
            return result
        result.outcome = "admitted"
        self.drivers.append(asyncio.create_task(self.drive(table, time.monotonic())))
        return result

    def outcome(self, result: Admission, step: str, response: Response) -> Admission:
        result.step = step
        if self.refused(response):
            result.outcome, result.detail = "refused", f"503 {FULL}"
        else:
            result.detail = self.describe(response)
        return result

    async def main(self, pg: Postgres, roles: dict[str, list[int]]) -> tuple[dict[str, Any], list[asyncio.Task[None]]]:
        # idle: the stack with no table of this run and no socket
        idle0 = snapshot(pg, roles)
        await asyncio.sleep(self.args.idle)
        idle1 = snapshot(pg, roles)
        self.measuring = True
        ramp_stats = self.stats
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        s0 = snapshot(pg, roles)
        tracker = CpuTracker(pg, roles).start()
        start = time.monotonic()
        attempts = []
        for i, cookies in enumerate(self.people):
            await asyncio.sleep(max(0.0, start + i / self.args.ramp_rate - time.monotonic()))
            attempts.append(asyncio.create_task(self.admit(cookies)))
        await asyncio.gather(*attempts)
        ramp_s = time.monotonic() - start
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        s1 = snapshot(pg, roles)
        cpu_during = tracker.stop()
        tracker = CpuTracker(pg, roles).start()
        # after the ramp: the admitted tables go on for --duration s
        self.stats = after_stats = Stats()
        window_start = time.monotonic()
        self.end = window_start + self.args.duration
        await asyncio.gather(*self.drivers)
        await self.drain()
        elapsed = time.monotonic() - window_start
        self.measuring = False
        await asyncio.sleep(1.5)
        s2 = snapshot(pg, roles)
        cpu_after = tracker.stop()
        r2 = resource.getrusage(resource.RUSAGE_SELF)
        await settle_pg(pg, s2)
        self.stop = True
        during = self.report(ramp_stats, ramp_s, idle0, idle1, s0, s1, ramp_s, r0, r1, cpu_during)
        after = self.report(after_stats, self.args.duration, idle0, idle1, s1, s2, elapsed, r1, r2, cpu_after)
        for phase in (during, after):
            phase["clock_seconds"] = "site default"
        counts = {k: sum(a.outcome == k for a in self.admissions) for k in ("admitted", "refused", "failed")}
        failures: dict[str, int] = {}
        refused_at: dict[str, int] = {}
        for a in self.admissions:
            if a.outcome == "failed":
                key = f"{a.step}: {a.detail}"
                failures[key] = failures.get(key, 0) + 1
            elif a.outcome == "refused":
                refused_at[a.step] = refused_at.get(a.step, 0) + 1
        admit_s = sorted(a.seconds for a in self.admissions if a.outcome == "admitted")

        def pct(q: float) -> float | None:
            return round(1000 * admit_s[min(len(admit_s) - 1, int(q * len(admit_s)))], 1) if admit_s else None

        report = {
            "mode": "ramp",
            "tables_tried": len(self.admissions),
            "tables_admitted": counts["admitted"],
            "tables_refused_sala_llena": counts["refused"],
            "refused_at_step": refused_at,
            "tables_failed": counts["failed"],
            "failures": failures,
            "ramp_rate_tables_per_s": self.args.ramp_rate,
            "ramp_s": round(ramp_s, 1),
            "admit_ms": {"p50": pct(0.5), "p95": pct(0.95), "max": round(1000 * admit_s[-1], 1) if admit_s else None},
            "clock": "the site's default turn clocks (tables made over HTTP: 30 s to bid or play, 20 s for trump)",
            "during_ramp": during,
            "after_ramp": after,
        }
        return report, self.readers

    def created_tables(self) -> list[int]:
        return [a.table_id for a in self.admissions if a.table_id is not None]


# -- the bare stack ----------------------------------------------------------------------------------------


class BareStack:
    """benchmarks/load/bare under its own supervisord: BARE_PROCESSES Daphne processes sharing one port."""

    conf = HERE / "bare/supervisord.conf"

    def __init__(self, port: int, database_url: str, redis_url: str, var: Path, processes: int = 2) -> None:
        self.port, self.database_url, self.redis_url, self.var = port, database_url, redis_url, var
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "SECRET_KEY")},
            "BARE_DIR": str(HERE),
            "BARE_BIN": str(ROOT / ".venv/bin"),
            "BARE_VAR": str(var),
            "BIND": "127.0.0.1",
            "BARE_PORT": str(port),
            "BARE_PROCESSES": str(processes),
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "DJANGO_SETTINGS_MODULE": "bare.settings",
            "PYTHONPATH": str(HERE),
            "PYTHONUNBUFFERED": "1",
        }

    def ctl(self, *command: str) -> str:
        return subprocess.run(
            [str(ROOT / ".venv/bin/supervisorctl"), "-c", str(self.conf), *command],
            env=self.env,
            capture_output=True,
            text=True,
        ).stdout

    def supervisord_pid(self) -> int | None:
        out = self.ctl("pid").strip()
        return int(out) if out.isdigit() else None

    def answers(self) -> bool:
        try:
            response = asyncio.run(http_request(self.port, "GET", "/", {}, timeout=3))
        except (OSError, TimeoutError, ValueError, IndexError):
            return False
        return response.status == 200

    def start(self, timeout: float = 60) -> None:
        (self.var / "log").mkdir(parents=True, exist_ok=True)
        if self.supervisord_pid() is not None:  # left over from an interrupted run
            self.stop()
        if self.answers():
            raise SystemExit(f"something already answers on port {self.port}: choose another --bare-port")
        subprocess.run([str(ROOT / ".venv/bin/supervisord"), "-c", str(self.conf)], env=self.env, check=True)
        end = time.monotonic() + timeout
        while not (self.answers() and all(" RUNNING " in line for line in self.ctl("status").splitlines())):
            if time.monotonic() > end:
                self.stop()
                raise SystemExit(f"the bare stack did not come up on port {self.port}; logs in {self.var / 'log'}")
            time.sleep(0.5)

    def roles(self) -> dict[str, list[int]]:
        return supervised_pids(self.conf, self.env)

    def stop(self) -> None:
        pid = self.supervisord_pid()
        if pid is None:
            return
        self.ctl("shutdown")
        end = time.monotonic() + 60
        while Path(f"/proc/{pid}").exists() and time.monotonic() < end:
            time.sleep(0.3)


def bare_database_url(url: str) -> str:
    """The project's DATABASE_URL with ``_bare`` after the database name (its own database: the bare run's
    PostgreSQL counters and backends are then its own, not the idle project stack's)."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/") + "_bare"))


def make_bare_tables(url: str, count: int, start_seq: int = 0) -> list[tuple[int, list[str]]]:
    """Create the bare database and its tables if missing, empty them, and add ``count`` tables."""
    import dj_database_url
    import psycopg
    from psycopg import sql

    sys.path.insert(0, str(HERE))
    from bare import schema

    db = dj_database_url.parse(url)
    params = {
        k: v
        for k, v in {"host": db["HOST"], "port": db["PORT"], "user": db["USER"], "password": db["PASSWORD"]}.items()
        if v
    }
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db["NAME"]]).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db["NAME"])))
    with psycopg.connect(dbname=db["NAME"], autocommit=True, **params) as conn:
        for statement in schema.CREATE:
            conn.execute(statement)
        conn.execute(schema.RESET)
        rows = conn.execute(
            f"INSERT INTO {schema.TABLE} (seq, turn) SELECT %s, 0 FROM generate_series(1, %s) RETURNING id",
            [start_seq, count],
        ).fetchall()
    return [(row[0], [""] * 4) for row in rows]


# -- setup through Django -----------------------------------------------------------------------------


def django_setup(args: argparse.Namespace) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pocha_site.settings")
    os.environ.setdefault("DEBUG", "false")
    if not os.environ.get("SECRET_KEY"):
        os.environ["SECRET_KEY"] = (Path(os.environ.get("POCHA_VAR", ROOT / "var")) / "secret_key").read_text().strip()
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def make_people(count: int, prefix: str = "ld") -> tuple[list[list[tuple[Any, str]]], Any]:
    """``count`` groups of four fresh accounts, each with a database session (its key is the cookie), and a
    moderator to call the tables off at the end (names ``<prefix><time>_<group>_<seat>``)."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    users = get_user_model()
    tag = f"{prefix}{int(time.time()) % 10**7}"
    moderator = users.objects.create_user(f"{tag}_mod", password=None, is_staff=True, is_superuser=True)
    groups = []
    for t in range(count):
        group = []
        for s in range(4):
            user = users.objects.create_user(f"{tag}_{t}_{s}", password=None)
            session = SessionStore()
            session[SESSION_KEY] = str(user.pk)
            session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            group.append((user, session.session_key))
        groups.append(group)
    return groups, moderator


def make_tables(
    count: int, clock: int = CLOCK_SECONDS
) -> tuple[list[tuple[int, list[str]]], Any, dict[int, list[Any]]]:
    """``count`` started tables (and their people, by seat)."""
    from games.models import Table as TableRow
    from games.table import actions

    groups, moderator = make_people(count)
    tables, people = [], {}
    for group in groups:
        users = [user for user, _cookie in group]
        row = actions.do_create_table(users[0], 4)
        TableRow.objects.filter(pk=row.pk).update(bid_seconds=clock, card_seconds=clock, trump_seconds=clock)
        for person in users[1:]:
            actions.do_take_seat(row.pk, person)
        assert TableRow.objects.get(pk=row.pk).status == TableRow.Status.PLAYING
        tables.append((row.pk, [cookie for _user, cookie in group]))
        people[row.pk] = users
    return tables, moderator, people


def make_tournament(players: int, deals: int, clock: int, watchers: int, par_wait: float) -> TournamentSetup:
    """A free duplicate tournament of ``players`` fresh people (tables of 4, ``deals`` deals a game, the turn
    clocks at ``clock`` s), every one registered through ``entries.register`` from an address of their own,
    then started as the runner does when its time comes (``starts_at`` now, ``runner.advance``): its tables
    are created and dealt.  Then the worker plays the deals' par (the start queues it); the run waits for it,
    up to ``par_wait`` s, so that the window measures the games and not that one-off work."""
    from django.utils import timezone

    from games.models import Seat as SeatRow
    from games.models import Table as TableRow
    from games.models import Tournament
    from games.tournaments import entries, runner

    t0 = time.monotonic()
    groups, moderator = make_people(players // 4, prefix="lt")
    people = [pair for group in groups for pair in group]
    now = timezone.now()
    tournament = Tournament.objects.create(
        name=f"Prueba de carga {moderator.username}",
        format=Tournament.Format.DUPLICATE,
        size=4,
        places=players,
        deals=deals,
        entry_fee=0,
        prizes="",
        registration_opens_at=now - timedelta(minutes=1),
        starts_at=now + timedelta(hours=1),
        bid_seconds=clock,
        card_seconds=clock,
        created_by=moderator,
    )
    for n, (user, _cookie) in enumerate(people):
        entries.register(user, tournament.pk, fake_address(n))
    Tournament.objects.filter(pk=tournament.pk).update(starts_at=timezone.now())
    outcome = runner.advance(tournament.pk)
    if outcome != "started":
        raise SystemExit(f"tournament {tournament.pk} did not start: {outcome}")
    rows = list(TableRow.objects.filter(tournament_id=tournament.pk).order_by("tournament_number"))
    # (a tournament has no trump clock of its own: its tables take the site's; the clock asked for instead)
    TableRow.objects.filter(tournament_id=tournament.pk).update(trump_seconds=clock)
    cookie_of = {user.pk: cookie for user, cookie in people}
    tables, table_of = [], {}
    for row in rows:
        assert row.status == TableRow.Status.PLAYING, (row.pk, row.status)
        seats = {
            position: (user_id, name)
            for position, user_id, name in SeatRow.objects.filter(table=row).values_list("position", "user_id", "name")
        }
        number = int(row.tournament_number or 0)
        tables.append((row.pk, number, [cookie_of[seats[p][0]] for p in range(row.size)]))
        table_of.update({name: number for _user_id, name in seats.values()})
    setup_s = time.monotonic() - t0
    print(
        f"setup: tournament {tournament.pk}, {players} people registered, {len(rows)} tables started in {setup_s:.1f} s",
        file=sys.stderr,
    )
    par_s = None
    t1 = time.monotonic()
    while time.monotonic() - t1 < par_wait:
        # (``{"working": …}`` while the worker plays it; ``points`` once done, ``error`` if it failed)
        par = Tournament.objects.filter(pk=tournament.pk).values_list("par", flat=True).first() or {}
        if "points" in par or "error" in par:
            par_s = time.monotonic() - t1
            print(f"setup: the worker played the par in {par_s:.1f} s ({', '.join(par)})", file=sys.stderr)
            break
        time.sleep(0.5)
    else:
        if par_wait > 0:
            print(f"setup: no par after {par_wait:.0f} s; the window starts anyway", file=sys.stderr)
    return TournamentSetup(
        id=tournament.pk,
        players=players,
        deals=tuple(int(n) for n in rows[0].deals or ()),
        tables=tables,
        table_of=table_of,
        watchers=[people[n % len(people)][1] for n in range(watchers)],
        moderator=moderator,
        setup_s=setup_s,
        par_s=par_s,
    )


def end_tournament(tour: TournamentSetup) -> str:
    """Call off the tournament's tables still running (no bot plays them on), then let the runner see that
    every table is over: the tournament ends (finished), and no sweep looks at it again.  Its status."""
    from games.models import Table as TableRow
    from games.models import Tournament
    from games.tournaments import runner

    running = TableRow.objects.filter(
        tournament_id=tour.id, status__in=(TableRow.Status.WAITING, TableRow.Status.PLAYING)
    ).values_list("pk", flat=True)
    cancel_tables(list(running), tour.moderator)
    runner.advance(tour.id)
    return str(Tournament.objects.filter(pk=tour.id).values_list("status", flat=True).first())


def set_clocks(table_ids: list[int], seconds: int) -> None:
    """Give the tables ``seconds`` per decision from their next one on (``games.table.clock`` gives every
    engine change a fresh clock of the table's seconds).  The decision under way keeps the far-off deadline
    of the setup: a clock re-armed here would run out for every table at once while the sockets connect,
    and play hundreds of moves that nobody offered; from the window's first move at a table on, that table
    runs on the clock asked for, as a table of the site does."""
    from games.models import Table as TableRow

    TableRow.objects.filter(pk__in=table_ids).update(bid_seconds=seconds, card_seconds=seconds, trump_seconds=seconds)


def advance_rounds(people: dict[int, list[Any]], rounds: int, seed: int = 1) -> None:
    """Play ``rounds`` whole rounds of every table through the server's own code: ``do_action`` with a random
    legal move (from the engine's seat view) for the seat to move, and ``do_due`` for each next deal (its
    due time set to now).  Nobody watches yet and the turn clocks are far off, so the pushes and timers of
    the intermediate steps are skipped here; the last step's timer is armed as the server would."""
    from django.utils import timezone

    from games.engine import Phase
    from games.engine.snapshot import load
    from games.engine.view import seat_view
    from games.live import push, timers
    from games.models import Seat as SeatRow
    from games.models import Table as TableRow
    from games.table import actions

    rng = random.Random(seed)
    arm, table_changed = timers.arm, push.table_changed
    timers.arm = lambda *args, **kwargs: None  # type: ignore[assignment]
    push.table_changed = lambda *args, **kwargs: None  # type: ignore[assignment]
    t0 = time.monotonic()
    moves = 0
    try:
        for done, (table_id, users) in enumerate(people.items(), 1):
            by_position = {
                seat.position: next(u for u in users if u.pk == seat.user_id)
                for seat in SeatRow.objects.filter(table_id=table_id)
            }
            while True:
                row = TableRow.objects.get(pk=table_id)
                if row.status != TableRow.Status.PLAYING:
                    raise SystemExit(f"table {table_id} is {row.status} after {row.round_number - 1} rounds")
                if row.phase == Phase.ROUND_OVER.value:
                    TableRow.objects.filter(pk=table_id).update(due_at=timezone.now())
                    actions.do_due(table_id, row.seq)
                    continue
                if row.round_number > rounds:
                    break
                view = seat_view(load(row.state), row.turn_seat, reasons=False)
                actions.do_action(table_id, by_position[row.turn_seat], rng.choice(view.legal), row.seq)
                moves += 1
            if row.due_at is not None:
                arm(table_id, row.seq, row.due_at)
            if done % 10 == 0 or done == len(people):
                print(
                    f"advance: {done}/{len(people)} tables at round {rounds + 1} ({moves} moves, "
                    f"{time.monotonic() - t0:.0f} s)",
                    file=sys.stderr,
                )
    finally:
        timers.arm, push.table_changed = arm, table_changed  # type: ignore[assignment]


def cancel_tables(tables: list[int], moderator: Any) -> None:
    from games.table import actions

    for tid in tables:
        try:
            actions.do_admin_cancel(tid, moderator, "fin de la prueba de carga")
        except actions.ActionError:
            pass


def table_rounds(pg: Postgres, table_ids: list[int]) -> Callable[[], list[int]]:
    def rounds() -> list[int]:
        rows = pg.conn.execute("SELECT round_number FROM games_table WHERE id = ANY(%s)", [table_ids]).fetchall()
        return [r[0] for r in rows]

    return rounds


# -- output ------------------------------------------------------------------------------------------------


def print_table(r: dict[str, Any]) -> None:
    lat = r["latency_ms"]
    cpu = r["cpu_ms_per_move"]
    rows = [
        ("tables / sockets", f"{r['tables']} / {r['sockets']}"),
        (
            "offered / sent / completed moves/s",
            f"{r['offered_moves_per_s']} / {r['sent_moves_per_s']} / {r['completed_moves_per_s']}",
        ),
        ("moves offered, sent, completed", f"{r['offered']}, {r['sent']}, {r['completed']}"),
        ("latency p50 / p95 / p99 / max ms", f"{lat['p50']} / {lat['p95']} / {lat['p99']} / {lat['max']}"),
        (
            f"p95 ms by {TIMELINE_STEP:.0f} s of the window",
            " ".join(str(round(step["p95"])) for step in r.get("latency_timeline", [])),
        ),
        ("lost / refused / socket errors", f"{r['lost']} / {r['refused']} / {r['socket_errors']}"),
        ("skipped: table busy / no move on board", f"{r['skipped_busy']} / {r['skipped_no_move']}"),
        (
            "CPU ms/move daphne / worker / beat / pg / pg ended",
            f"{cpu['daphne']} / {cpu['celery_worker']} / {cpu['celery_beat']} / {cpu['postgres_backends']}"
            f" / {cpu.get('postgres_ended', '-')}",
        ),
        (
            "  same, net of the idle rate",
            " / ".join(
                str(r["cpu_ms_per_move_net_of_idle"][k])
                for k in ("daphne", "celery_worker", "celery_beat", "postgres_backends", "postgres_ended")
            ),
        ),
        (
            "PG transactions per move (net of idle)",
            f"{r['pg_transactions_per_move']} ({r['pg_transactions_per_move_net_of_idle']})",
        ),
        (
            "PG WAL bytes per move (net of idle)",
            f"{r['pg_wal_bytes_per_move']} ({r['pg_wal_bytes_per_move_net_of_idle']})",
        ),
        ("load tool CPU ms/move", f"{r['load_tool_cpu_ms_per_move']}"),
        (
            "machine: CPU ms/move, busy share (idle before)",
            f"{r.get('machine_cpu_ms_per_move')}, {r.get('machine_busy_fraction')} ({r.get('machine_busy_fraction_idle')})",
        ),
        ("table row updates that were HOT", f"{r.get('pg_table_hot_update_fraction')}"),
        (
            "rows read by sequential scans per move",
            ", ".join(f"{k} {v}" for k, v in (r.get("pg_seq_rows_per_move") or {}).items()) or "none",
        ),
    ]
    if "table_row_bytes" in r:
        b = r["table_row_bytes"]
        rows.append(
            (
                "table row / its state stored / as JSON, mean (max) B",
                f"{b['row_mean']} ({b['row_max']}) / {b['state_stored_mean']} ({b['state_stored_max']})"
                f" / {b['state_json_mean']} ({b['state_json_max']})",
            )
        )
    if "rounds_at_window_start" in r:
        a, b = r["rounds_at_window_start"], r["rounds_at_window_end"]
        rows.append(("rounds at window start / end (min-max)", f"{a['min']}-{a['max']} / {b['min']}-{b['max']}"))
    width = max(len(a) for a, _ in rows)
    for a, b in rows:
        print(f"{a:<{width}}  {b}")


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def server_cpu_ms(r: dict[str, Any], key: str = "cpu_ms_per_move") -> float:
    """Daphne + Celery worker + beat + PostgreSQL (backends, and those that ended unseen with the
    postmaster's own), ms of CPU per completed move."""
    return round(sum(r[key].values()), 2)


def compare(bare: dict[str, Any], project: dict[str, Any]) -> dict[str, Any]:
    """project / bare, and capacity estimates from CPU per move (see the README)."""
    cores = os.cpu_count() or 1

    def capacity(r: dict[str, Any]) -> dict[str, float | None]:
        total, daphne = server_cpu_ms(r), r["cpu_ms_per_move"]["daphne"]
        return {
            "all_cores_moves_per_s": round(1000 * cores / total, 1) if total else None,
            "daphne_processes_moves_per_s": round(1000 * r["processes"]["daphne"] / daphne, 1) if daphne else None,
        }

    cap_bare, cap_project = capacity(bare), capacity(project)
    return {
        "latency_project_over_bare": {
            q: _ratio(project["latency_ms"][q], bare["latency_ms"][q]) for q in ("p50", "p95", "p99")
        },
        "cpu_ms_per_move": {
            "bare": {"daphne": bare["cpu_ms_per_move"]["daphne"], "server": server_cpu_ms(bare)},
            "project": {"daphne": project["cpu_ms_per_move"]["daphne"], "server": server_cpu_ms(project)},
        },
        "cpu_per_move_project_over_bare": {
            "daphne": _ratio(project["cpu_ms_per_move"]["daphne"], bare["cpu_ms_per_move"]["daphne"]),
            "postgres_backends": _ratio(
                project["cpu_ms_per_move"]["postgres_backends"], bare["cpu_ms_per_move"]["postgres_backends"]
            ),
            "server": _ratio(server_cpu_ms(project), server_cpu_ms(bare)),
            "server_net_of_idle": _ratio(
                server_cpu_ms(project, "cpu_ms_per_move_net_of_idle"),
                server_cpu_ms(bare, "cpu_ms_per_move_net_of_idle"),
            ),
        },
        "pg_transactions_per_move_project_over_bare": _ratio(
            project["pg_transactions_per_move"], bare["pg_transactions_per_move"]
        ),
        "capacity_estimate": {"cores": cores, "bare": cap_bare, "project": cap_project},
        "capacity_ratio_bare_over_project": {
            k: _ratio(cap_bare[k], cap_project[k]) for k in ("all_cores_moves_per_s", "daphne_processes_moves_per_s")
        },
    }


def print_compare(c: dict[str, Any]) -> None:
    lat, cpu, cap = c["latency_project_over_bare"], c["cpu_per_move_project_over_bare"], c["capacity_estimate"]
    ratio = c["capacity_ratio_bare_over_project"]
    rows = [
        ("latency project/bare p50 / p95 / p99", f"{lat['p50']} / {lat['p95']} / {lat['p99']}"),
        (
            "CPU ms/move daphne bare / project",
            f"{c['cpu_ms_per_move']['bare']['daphne']} / {c['cpu_ms_per_move']['project']['daphne']}",
        ),
        (
            "CPU ms/move server bare / project",
            f"{c['cpu_ms_per_move']['bare']['server']} / {c['cpu_ms_per_move']['project']['server']}",
        ),
        ("CPU/move project/bare daphne / server", f"{cpu['daphne']} / {cpu['server']}"),
        ("PG transactions/move project/bare", f"{c['pg_transactions_per_move_project_over_bare']}"),
        (
            f"capacity moves/s, {cap['cores']} cores: bare / project",
            f"{cap['bare']['all_cores_moves_per_s']} / {cap['project']['all_cores_moves_per_s']}",
        ),
        (
            "capacity moves/s, Daphne-bound: bare / project",
            f"{cap['bare']['daphne_processes_moves_per_s']} / {cap['project']['daphne_processes_moves_per_s']}",
        ),
        (
            "capacity ratio bare/project (cores / Daphne)",
            f"{ratio['all_cores_moves_per_s']} / {ratio['daphne_processes_moves_per_s']}",
        ),
    ]
    width = max(len(a) for a, _ in rows)
    for a, b in rows:
        print(f"{a:<{width}}  {b}")


def print_tournament(r: dict[str, Any]) -> None:
    t, q = r["tournament"], r["quick"]
    print(f"-- all tables ({r['tables']})")
    print_table(r)
    rows = []
    for name, g in (("tournament", t), ("quick", q)):
        lat = g["latency_ms"]
        rows.append(
            (
                f"{name}: tables / completed moves/s",
                f"{g['tables']} / {g['completed_moves_per_s']}",
            )
        )
        rows.append((f"{name}: p50 / p95 / p99 / max ms", f"{lat['p50']} / {lat['p95']} / {lat['p99']} / {lat['max']}"))
        rows.append((f"{name}: lost / refused / socket errors", f"{g['lost']} / {g['refused']} / {g['socket_errors']}"))
    st = t["standings"]
    every, first = st["delay_ms_all_sockets"], st["delay_ms_first_socket"]
    rows += [
        ("tournament: deal ends in the window (by deal)", f"{st['deal_ends']} ({t['deal_ends_by_deal']})"),
        (
            f"standings delay, all {t['page_sockets']} page sockets: n / p50 / p95 / max ms",
            f"{every['count']} / {every['p50']} / {every['p95']} / {every['max']}",
        ),
        (
            "standings delay, first socket: n / p50 / p95 / max ms",
            f"{first['count']} / {first['p50']} / {first['p95']} / {first['max']}",
        ),
        (f"deal ends with no push within {st['within_s']} s", f"{st['no_push_within']}"),
        ("matched by", st["matched_by"]),
        (
            "pushes per page socket in the window / mean bytes",
            f"{t['pushes_in_window_per_socket']} / {t['push_bytes_mean']}",
        ),
        ("tournament setup s / par s / status after", f"{t['setup_s']} / {t['par_s']} / {t.get('status_after_run')}"),
    ]
    width = max(len(a) for a, _ in rows)
    for a, b in rows:
        print(f"{a:<{width}}  {b}")


def print_ramp(r: dict[str, Any]) -> None:
    print(
        f"ramp: {r['tables_tried']} tables tried at {r['ramp_rate_tables_per_s']}/s in {r['ramp_s']} s: "
        f"{r['tables_admitted']} admitted, {r['tables_refused_sala_llena']} refused (503 {FULL}"
        f"{', at ' + str(r['refused_at_step']) if r['refused_at_step'] else ''}), {r['tables_failed']} failed"
    )
    for text, n in r["failures"].items():
        print(f"  failed {n}x: {text}")
    a = r["admit_ms"]
    print(f"admission (first request to fourth seat) p50 / p95 / max ms: {a['p50']} / {a['p95']} / {a['max']}")
    print(f"-- during the ramp ({r['ramp_s']} s; CPU includes the HTTP requests)")
    print_table(r["during_ramp"])
    print(f"-- after the ramp ({r['after_ramp']['window_s']} s)")
    print_table(r["after_ramp"])


# -- the modes ---------------------------------------------------------------------------------------------


async def finish(run: Run, readers: list[asyncio.Task[None]], cancel: Callable[[], None] | None) -> None:
    if cancel is not None:  # call the tables off while the sockets are still open (no bot takes over)
        await asyncio.to_thread(cancel)
        await asyncio.sleep(0.5)
    await run.close_all(readers)


def vacuum_after_setup(pg: Postgres, when: str) -> float | None:
    """``VACUUM (ANALYZE)`` the database after the setup (``--vacuum``: ``auto`` does it when the server's
    autovacuum is off); the seconds it took, or None.  The setup updates every table's row once per move
    (93,750 times for 375 tables brought to round 11): a server with autovacuum on vacuums and analyses that
    as it goes, while one with it off (this machine's PostgreSQL, configured for CI) leaves the dead rows
    and the planner's statistics as they were: the first two minutes after such a setup gave a p95 about
    three times that of a window after a vacuum (benchmarks/load/README.md, fourteenth session)."""
    return _instead_of_autovacuum(pg, when, "VACUUM (ANALYZE)", "setup: database vacuumed and analysed")


def analyse_after_connect(pg: Postgres, when: str) -> float | None:
    """``ANALYZE`` once the sockets are open and have their first boards, under the same condition as
    ``vacuum_after_setup``; the seconds it took, or None.  Each socket is a row of ``games_watcher``: the
    vacuum after the setup left the planner's statistics saying that table is empty, and a plan made on
    them reads every socket's row where an index finds a table's four (the seats and spectators read at
    every move: 1,879 rows a move at 750 tables).  A server with autovacuum on analyses a table once a
    tenth of it has changed, within a minute (``autovacuum_naptime``)."""
    return _instead_of_autovacuum(pg, when, "ANALYZE", "connect: database analysed again")


def _instead_of_autovacuum(pg: Postgres, when: str, statement: str, done: str) -> float | None:
    """Run ``statement`` unless ``when`` is ``no``, or ``auto`` and the server's autovacuum is on (it does
    that work itself); the seconds it took (said on stderr after ``done``), or None."""
    if when == "no" or (when == "auto" and pg.conn.execute("SHOW autovacuum").fetchone()[0] == "on"):
        return None
    t0 = time.monotonic()
    pg.conn.execute(statement)
    took = round(time.monotonic() - t0, 1)
    print(f"{done} in {took} s", file=sys.stderr)
    return took


def measured_stack(args: argparse.Namespace) -> tuple[Postgres, dict[str, list[int]], float | None]:
    """The running stack's database, vacuumed after the setup (``vacuum_after_setup``), and its processes;
    with the vacuum's seconds (or None) for the report."""
    pg = Postgres(os.environ["DATABASE_URL"])
    vacuumed = vacuum_after_setup(pg, args.vacuum)
    roles = supervised_pids()
    if not roles["daphne"]:
        print("warning: no daphne process found through supervisorctl (is POCHA_VAR the stack's?)", file=sys.stderr)
    return pg, roles, vacuumed


def run_project(args: argparse.Namespace) -> dict[str, Any]:
    django_setup(args)
    from django.db import connection

    t0 = time.monotonic()
    # Tables brought to a later round first play their earlier rounds with clocks that never run out (the
    # setup takes minutes, and a clock playing meanwhile would race it); the clocks asked for take over from
    # each table's next decision (set_clocks).
    setup_clock = CLOCK_SECONDS if args.advance_rounds else args.clock_seconds
    tables, moderator, people = make_tables(args.tables, setup_clock)
    print(f"setup: {args.tables} tables started in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    if args.advance_rounds:
        advance_rounds(people, args.advance_rounds)
        if args.clock_seconds != setup_clock:
            set_clocks([tid for tid, _cookies in tables], args.clock_seconds)
    connection.close()
    pg, roles, vacuumed = measured_stack(args)
    rounds = table_rounds(pg, [tid for tid, _cookies in tables]) if args.advance_rounds else None
    run = Run(args, tables, rounds=rounds)

    async def go() -> dict[str, Any]:
        report, readers = await run.main(pg, roles)
        await finish(run, readers, lambda: cancel_tables([tid for tid, _c in tables], moderator))
        return report

    report = asyncio.run(go())
    if args.advance_rounds:
        report["advance_rounds"] = args.advance_rounds
    report["vacuum_after_setup_s"] = vacuumed
    report["processes"] = {k: len(v) for k, v in roles.items()}
    # each table's sockets on one process's own port (--affinity), or all through the port they share
    report["affinity_ports"] = run.own_ports
    return report


def run_tournament(args: argparse.Namespace) -> dict[str, Any]:
    """``--tournament PLAYERS`` beside ``--tables`` quick tables: both sets driven at once (README)."""
    django_setup(args)
    from django.db import connection

    t0 = time.monotonic()
    quick, moderator, _people = make_tables(args.tables, args.clock_seconds) if args.tables else ([], None, {})
    print(f"setup: {args.tables} quick tables started in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    tour = make_tournament(
        args.tournament, args.tournament_deals, args.clock_seconds, args.tournament_watchers, args.par_wait
    )
    connection.close()
    pg, roles, vacuumed = measured_stack(args)
    run = TournamentRun(args, quick, tour)
    ended: dict[str, str] = {}

    def cancel() -> None:
        if quick:
            cancel_tables([tid for tid, _c in quick], moderator)
        ended["status"] = end_tournament(tour)

    async def go() -> dict[str, Any]:
        report, readers = await run.main(pg, roles)
        await finish(run, readers, cancel)
        return report

    report = asyncio.run(go())
    report["tournament"]["status_after_run"] = ended.get("status")
    report["vacuum_after_setup_s"] = vacuumed
    report["processes"] = {k: len(v) for k, v in roles.items()}
    return report


def run_bare(args: argparse.Namespace) -> dict[str, Any]:
    url = args.bare_database_url or bare_database_url(os.environ["DATABASE_URL"])
    redis_url = args.bare_redis_url or os.environ["REDIS_URL"]
    var = Path(args.bare_var or Path(os.environ.get("POCHA_VAR", ROOT / "var")) / "bare")
    # with --advance-rounds K, the bare tables start K rounds in (32 moves a round): the same scoreboard size
    tables = make_bare_tables(url, args.tables, start_seq=32 * args.advance_rounds)
    stack = BareStack(args.bare_port, url, redis_url, var)
    t0 = time.monotonic()
    stack.start()
    try:
        print(f"bare stack up on port {args.bare_port} in {time.monotonic() - t0:.1f} s", file=sys.stderr)
        pg = Postgres(url)
        vacuumed = vacuum_after_setup(pg, args.vacuum)
        roles = stack.roles()
        run = Run(args, tables, port=args.bare_port, ws_path=BARE_WS_PATH)

        async def go() -> dict[str, Any]:
            report, readers = await run.main(pg, roles)
            await finish(run, readers, None)
            return report

        report = asyncio.run(go())
        pg.conn.close()
    finally:
        stack.stop()
    report["stack"] = "bare"
    report["clock_seconds"] = None  # no clock
    report["vacuum_after_setup_s"] = vacuumed
    report["processes"] = {k: len(v) for k, v in roles.items()}
    return report


def run_ramp(args: argparse.Namespace) -> dict[str, Any]:
    django_setup(args)
    from django.db import connection

    t0 = time.monotonic()
    groups, moderator = make_people(args.tables)
    print(f"setup: {4 * args.tables} people with sessions in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    connection.close()
    pg, roles, vacuumed = measured_stack(args)
    run = RampRun(args, [[cookie for _user, cookie in group] for group in groups])

    async def go() -> dict[str, Any]:
        report, readers = await run.main(pg, roles)
        await finish(run, readers, lambda: cancel_tables(run.created_tables(), moderator))
        return report

    report = asyncio.run(go())
    report["vacuum_after_setup_s"] = vacuumed
    report["processes"] = {k: len(v) for k, v in roles.items()}
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8000)))
    parser.add_argument("--tables", type=int, default=30, help="tables (with --ramp: tables to try)")
    parser.add_argument("--period", type=float, default=3.0, help="mean seconds between moves at a table")
    parser.add_argument("--spacing", choices=("exp", "fixed"), default="exp", help="exponential gaps, or P ±20%%")
    parser.add_argument("--duration", type=float, default=40.0, help="seconds of the measured window")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds of idle measurement before the window")
    parser.add_argument("--lost-after", type=float, default=10.0)
    parser.add_argument(
        "--clock-seconds",
        type=int,
        default=CLOCK_SECONDS,
        help="each table's bid/card/trump seconds (default 30000: the clock never plays; 30 is the site's default,"
        " whose deadline tasks then run in the worker 30 s after each move)",
    )
    parser.add_argument("--json", help="also write the report here")
    parser.add_argument(
        "--vacuum",
        choices=("auto", "yes", "no"),
        default="auto",
        help="VACUUM (ANALYZE) the database after the setup, before the sockets open (auto: if autovacuum is off)",
    )
    parser.add_argument(
        "--samples", action="store_true", help="the report lists every completed move's send time and latency"
    )
    parser.add_argument(
        "--mode", choices=("project", "bare"), default="project", help="the stack to load (bare: started here)"
    )
    parser.add_argument("--compare", action="store_true", help="the bare stack, then the project, and the ratios")
    parser.add_argument(
        "--affinity",
        action="store_true",
        help="every socket of a table to the same ASGI process, through the processes' own ports (the stack up"
        " with ASGI_OWN_PORTS), as a proxy routing by table would; default: all through the shared port",
    )
    parser.add_argument("--bare-port", type=int, help="the bare stack's port (default --port + 1)")
    parser.add_argument("--bare-database-url", help="default: DATABASE_URL's database name + _bare")
    parser.add_argument("--bare-redis-url", help="default: REDIS_URL (the bare channel layer's prefix is 'bare')")
    parser.add_argument("--bare-var", help="the bare supervisord's pid, socket and logs (default $POCHA_VAR/bare)")
    parser.add_argument(
        "--advance-rounds",
        type=int,
        default=0,
        metavar="K",
        help="play K whole rounds of every table in setup (0-18), so the window plays round K+1 on",
    )
    parser.add_argument("--ramp", action="store_true", help="open the tables over HTTP during the run")
    parser.add_argument("--ramp-rate", type=float, default=10.0, help="tables tried per second (--ramp)")
    parser.add_argument(
        "--tournament",
        type=int,
        default=0,
        metavar="PLAYERS",
        help="also a free duplicate tournament of PLAYERS people (a multiple of 4, at least 8), tables of 4,"
        " driven beside the --tables quick tables",
    )
    parser.add_argument(
        "--tournament-deals", type=int, default=4, metavar="D", help="deals each tournament table plays (default 4)"
    )
    parser.add_argument(
        "--tournament-watchers", type=int, default=2, metavar="W", help="sockets on the tournament's page (default 2)"
    )
    parser.add_argument(
        "--standings-within", type=float, default=5.0, help="a deal end with no push showing it within this is late"
    )
    parser.add_argument(
        "--par-wait", type=float, default=600.0, help="seconds to wait for the worker's par after the start (0: none)"
    )
    args = parser.parse_args()
    if args.bare_port is None:
        args.bare_port = args.port + 1
    if not 0 <= args.advance_rounds <= 18:
        parser.error("--advance-rounds: 0 to 18 (a 4-seat game has 19 rounds)")
    if args.affinity and (args.compare or args.mode == "bare" or args.ramp or args.tournament):
        parser.error("--affinity: the project's tables alone (not with --compare, --mode bare, --ramp, --tournament)")
    if args.ramp and (args.compare or args.mode == "bare" or args.advance_rounds):
        parser.error("--ramp works alone (not with --compare, --mode bare or --advance-rounds)")
    if args.ramp and args.clock_seconds != CLOCK_SECONDS:
        parser.error("--ramp uses the site's default clocks (tables made over HTTP): no --clock-seconds")
    if args.tournament:
        if args.tournament < 8 or args.tournament % 4 or args.tournament > 32767:
            parser.error("--tournament: a multiple of 4, at least 8 (a duplicate tournament has two tables or more)")
        if args.ramp or args.compare or args.mode == "bare" or args.advance_rounds:
            parser.error("--tournament works with --tables only (not --ramp, --compare, --mode bare, --advance-rounds)")
        if not 0 <= args.tournament_deals <= 32767 or args.tournament_watchers < 1:
            parser.error("--tournament-deals: 0 (the whole game) or more; --tournament-watchers: 1 or more")

    if args.compare:
        bare = run_bare(args)
        project = run_project(args)
        ratios = compare(bare, project)
        print("== bare stack")
        print_table(bare)
        print("== project")
        print_table(project)
        print("== project / bare")
        print_compare(ratios)
        report: dict[str, Any] = {"mode": "compare", "bare": bare, "project": project, "ratios": ratios}
    elif args.mode == "bare":
        report = run_bare(args)
        print_table(report)
    elif args.ramp:
        report = run_ramp(args)
        print_ramp(report)
    elif args.tournament:
        report = run_tournament(args)
        print_tournament(report)
    else:
        report = run_project(args)
        print_table(report)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
