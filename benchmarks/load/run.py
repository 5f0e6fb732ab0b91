"""Open-loop load against a running La Pocha (``make up``): T tables of four people, one legal move per
table every P seconds on average, move -> all-four-seats latency, lost and refused moves, socket errors,
and the server's CPU and PostgreSQL transactions per move (issue 12).  See benchmarks/load/README.md.

    PORT=8600 DATABASE_URL=postgres://postgres@127.0.0.1:5432/pocha_load REDIS_URL=redis://127.0.0.1:6379/9 \
    POCHA_VAR=/tmp/pocha_load_var .venv/bin/python benchmarks/load/run.py --tables 30 --period 3 --duration 40

Setup goes straight through Django (same DATABASE_URL, REDIS_URL and SECRET_KEY as the stack: the key is read
from $POCHA_VAR/secret_key unless SECRET_KEY is set): fresh accounts each run, a database session for each,
and T public 4-seat tables created and filled with ``games.actions`` (so they start), their turn clocks set
to 30000 s so the clock never plays.  At the end every table of the run is called off (``do_admin_cancel``)
before the sockets close, so no bot plays the abandoned games on into the next run.
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
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SEQ = re.compile(rb'data-board-seq="(\d+)"')
HX_VALS = re.compile(r"hx-vals='([^']*)'")
FLASH = re.compile(rb'<div id="flash"[^>]*>(.*?)</div>', re.S)
GAME_ACTIONS = ("bid", "trump", "play")
CLOCK_SECONDS = 30000  # PositiveSmallIntegerField: at most 32767
TICK = os.sysconf("SC_CLK_TCK")


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


def _children(parents: set[int]) -> set[int]:
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st and st[1] in parents:
                found.add(int(entry))
    return found


def supervised_pids() -> dict[str, list[int]]:
    """The stack's processes by role, from supervisorctl (with the same POCHA_VAR as `make up`)."""
    env = dict(os.environ)
    env.setdefault("POCHA_ROOT", str(ROOT))
    env.setdefault("POCHA_BIN", str(ROOT / ".venv/bin"))
    env.setdefault("POCHA_VAR", str(ROOT / "var"))
    for name, value in {"BIND": "127.0.0.1", "PORT": "8000", "ASGI_PROCESSES": "2", "CELERY_CONCURRENCY": "2"}.items():
        env.setdefault(name, value)
    out = subprocess.run(
        [env["POCHA_BIN"] + "/supervisorctl", "-c", str(ROOT / "deploy/supervisord.conf"), "status"],
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    roles: dict[str, list[int]] = {"daphne": [], "celery_worker": [], "celery_beat": []}
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
        return dict(zip(keys, map(int, row)))


@dataclass
class Snapshot:
    at: float
    cpu: dict[str, dict[int, int]]  # role -> pid -> ticks
    pg: dict[str, int]


def snapshot(pg: Postgres, roles: dict[str, list[int]]) -> Snapshot:
    roles = {**roles, "postgres_backends": pg.backends()}
    cpu = {role: {pid: st[0] for pid in pids if (st := _stat(pid))} for role, pids in roles.items()}
    return Snapshot(time.monotonic(), cpu, pg.counters())


def cpu_delta(a: Snapshot, b: Snapshot) -> dict[str, float]:
    """Seconds of CPU per role between two snapshots (processes present in both)."""
    return {
        role: sum(b.cpu[role][pid] - a.cpu[role][pid] for pid in a.cpu[role] if pid in b.cpu.get(role, {})) / TICK
        for role in a.cpu
    }


# -- the WebSocket client (after tests/live/wsclient.py) ---------------------------------------------


class WebSocket:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, port: int, path: str, headers: dict[str, str]) -> WebSocket:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, limit=2**22), 15)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            *(f"{k}: {v}" for k, v in headers.items()),
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        response = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 15)
        if b" 101 " not in response.split(b"\r\n", 1)[0] + b" ":
            writer.close()
            raise ConnectionError(f"handshake refused: {response[:200]!r}")
        return cls(reader, writer)

    async def _frame(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "big")).to_bytes(n, "big")
        self.writer.write(header + mask + masked)
        await self.writer.drain()

    async def send(self, payload: dict[str, Any]) -> None:
        await self._frame(0x1, json.dumps(payload).encode())

    async def recv(self) -> bytes | None:
        message = b""
        while True:
            try:
                first, second = await self.reader.readexactly(2)
                opcode, n = first & 0x0F, second & 0x7F
                if n == 126:
                    (n,) = struct.unpack("!H", await self.reader.readexactly(2))
                elif n == 127:
                    (n,) = struct.unpack("!Q", await self.reader.readexactly(8))
                payload = await self.reader.readexactly(n)  # the server does not mask
            except (asyncio.IncompleteReadError, ConnectionError):
                return None
            if opcode == 0x8:
                return None
            if opcode == 0x9:
                await self._frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            message += payload
            if first & 0x80:
                return message

    async def close(self) -> None:
        try:
            await self._frame(0x8, struct.pack("!H", 1000))
        except (ConnectionError, RuntimeError):
            pass
        self.writer.close()


# -- the load --------------------------------------------------------------------------------------


@dataclass
class Pending:
    seq: int
    sent: float
    mover: int
    seen: set[int] = field(default_factory=set)


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
    refusals: dict[str, int] = field(default_factory=dict)


class Seat:
    def __init__(self, table: Table, position: int, cookie: str) -> None:
        self.table, self.position, self.cookie = table, position, cookie
        self.ws: WebSocket | None = None
        self.board = b""
        self.seq = -1

    def moves(self) -> list[dict[str, Any]]:
        options = [json.loads(html.unescape(v)) for v in HX_VALS.findall(self.board.decode("utf-8", "replace"))]
        return [o for o in options if o.get("action") in GAME_ACTIONS]


class Table:
    def __init__(self, run: Run, table_id: int, cookies: list[str]) -> None:
        self.run, self.id = run, table_id
        self.seats = [Seat(self, i, c) for i, c in enumerate(cookies)]
        self.pending: Pending | None = None

    def on_board(self, seat: Seat, seq: int) -> None:
        p = self.pending
        if p is not None and seq > p.seq:
            p.seen.add(seat.position)
            if len(p.seen) == len(self.seats):
                self.pending = None
                if self.run.measuring:
                    self.run.stats.completed += 1
                    self.run.stats.latencies.append(time.monotonic() - p.sent)

    def on_flash(self, seat: Seat, text: str) -> None:
        p = self.pending
        if p is not None and p.mover == seat.position and not p.seen:
            self.pending = None
            if self.run.measuring:
                self.run.stats.refused += 1
                self.run.stats.refusals[text] = self.run.stats.refusals.get(text, 0) + 1


class Run:
    def __init__(self, args: argparse.Namespace, tables: list[tuple[int, list[str]]]) -> None:
        self.args = args
        self.stats = Stats()
        self.measuring = False
        self.stop = False
        self.tables = [Table(self, tid, cookies) for tid, cookies in tables]
        self.origin = f"http://127.0.0.1:{args.port}"

    async def open(self, seat: Seat, sem: asyncio.Semaphore) -> None:
        async with sem:
            for attempt in range(5):
                try:
                    seat.ws = await WebSocket.connect(
                        self.args.port,
                        f"/ws/mesa/{seat.table.id}/",
                        {"Origin": self.origin, "Cookie": f"sessionid={seat.cookie}"},
                    )
                    return
                except (OSError, ConnectionError, TimeoutError) as error:
                    self.stats.socket_errors += 1
                    print(f"connect table {seat.table.id} seat {seat.position}: {error!r}", file=sys.stderr)
                    await asyncio.sleep(0.5 * (attempt + 1))

    async def read(self, seat: Seat) -> None:
        while not self.stop:
            if seat.ws is None:
                await asyncio.sleep(1)
                await self.open(seat, asyncio.Semaphore(1))
                continue
            frame = await seat.ws.recv()
            if frame is None:
                if not self.stop:
                    self.stats.socket_errors += 1
                    print(f"table {seat.table.id} seat {seat.position}: socket closed by the server", file=sys.stderr)
                seat.ws = None
                continue
            match = SEQ.search(frame)
            if match:
                seq = int(match.group(1))
                if seq >= seat.seq:
                    seat.seq, seat.board = seq, frame
                seat.table.on_board(seat, seq)
            flash = FLASH.search(frame)
            if flash:
                text = re.sub(r"<[^>]+>", "", html.unescape(flash.group(1).decode("utf-8", "replace"))).strip()
                if text:
                    seat.table.on_flash(seat, text)

    async def drive(self, table: Table, start: float, end: float) -> None:
        """Open loop: move times fixed in advance on the clock (exponential gaps, mean P)."""
        rng = random.Random(table.id)
        at = start + rng.uniform(0, self.args.period)
        while at < end:
            await asyncio.sleep(max(0.0, at - time.monotonic()))
            self.stats.offered += 1
            await self.move(table, rng)
            at += (
                rng.expovariate(1 / self.args.period)
                if self.args.spacing == "exp"
                else self.args.period * rng.uniform(0.8, 1.2)
            )

    async def move(self, table: Table, rng: random.Random) -> None:
        p = table.pending
        if p is not None:
            if time.monotonic() - p.sent > self.args.lost_after:
                table.pending = None
                self.stats.lost += 1
            else:
                self.stats.busy += 1
                return
        seq = max(s.seq for s in table.seats)
        movers = [s for s in table.seats if s.seq == seq and s.ws is not None and s.moves()]
        if not movers:
            self.stats.no_move += 1
            return
        seat = movers[0]
        choice = rng.choice(seat.moves())
        table.pending = Pending(seq, time.monotonic(), seat.position)
        try:
            await seat.ws.send(choice)  # type: ignore[union-attr]
            self.stats.sent += 1
        except (OSError, ConnectionError, RuntimeError):
            table.pending = None
            self.stats.socket_errors += 1

    async def main(self, pg: Postgres, roles: dict[str, list[int]]) -> dict[str, Any]:
        sem = asyncio.Semaphore(16)
        t0 = time.monotonic()
        await asyncio.gather(*(self.open(s, sem) for t in self.tables for s in t.seats))
        readers = [asyncio.create_task(self.read(s)) for t in self.tables for s in t.seats]
        connect_s = time.monotonic() - t0
        # every seat's first board
        deadline = time.monotonic() + 30
        while any(s.seq < 0 for t in self.tables for s in t.seats) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        missing = sum(s.seq < 0 for t in self.tables for s in t.seats)
        await asyncio.sleep(2)
        # idle: sockets open, nobody moving
        idle0 = snapshot(pg, roles)
        await asyncio.sleep(self.args.idle)
        idle1 = snapshot(pg, roles)
        # the measured window
        self.measuring = True
        rusage0 = resource.getrusage(resource.RUSAGE_SELF)
        s0 = snapshot(pg, roles)
        start = time.monotonic()
        end = start + self.args.duration
        await asyncio.gather(*(self.drive(t, start, end) for t in self.tables))
        # drain: the last moves get up to lost_after to land
        drain_end = time.monotonic() + self.args.lost_after
        while any(t.pending for t in self.tables) and time.monotonic() < drain_end:
            await asyncio.sleep(0.05)
        for t in self.tables:
            if t.pending is not None:
                t.pending = None
                self.stats.lost += 1
        elapsed = time.monotonic() - start
        self.measuring = False
        await asyncio.sleep(1.5)  # PostgreSQL's statistics are flushed by each backend at most once a second
        s1 = snapshot(pg, roles)
        rusage1 = resource.getrusage(resource.RUSAGE_SELF)
        self.stop = True
        return self.report(connect_s, missing, idle0, idle1, s0, s1, elapsed, rusage0, rusage1), readers

    def report(self, connect_s, missing, idle0, idle1, s0, s1, elapsed, r0, r1) -> dict[str, Any]:  # noqa: ANN001
        st = self.stats
        lat = sorted(st.latencies)

        def pct(q: float) -> float | None:
            if not lat:
                return None
            return round(1000 * lat[min(len(lat) - 1, int(q * len(lat)))], 1)

        cpu = cpu_delta(s0, s1)
        idle_cpu = cpu_delta(idle0, idle1)
        idle_s = idle1.at - idle0.at
        xacts = (s1.pg["xact_commit"] + s1.pg["xact_rollback"]) - (s0.pg["xact_commit"] + s0.pg["xact_rollback"])
        xacts -= 3  # this tool's own statistics reads between the snapshots
        n = max(st.completed, 1)
        window = s1.at - s0.at
        idle_xacts = (
            (idle1.pg["xact_commit"] + idle1.pg["xact_rollback"])
            - (idle0.pg["xact_commit"] + idle0.pg["xact_rollback"])
            - 3
        )
        idle_xact_rate = max(0, idle_xacts) / idle_s
        tuples = {k: s1.pg[k] - s0.pg[k] for k in s0.pg if k.startswith("tup_")}
        return {
            "tables": len(self.tables),
            "sockets": 4 * len(self.tables),
            "period_s": self.args.period,
            "spacing": self.args.spacing,
            "clock_seconds": self.args.clock_seconds,
            "window_s": round(elapsed, 1),
            "connect_s": round(connect_s, 1),
            "seats_without_first_board": missing,
            "offered_moves_per_s": round(st.offered / self.args.duration, 2),
            "sent_moves_per_s": round(st.sent / elapsed, 2),
            "completed_moves_per_s": round(st.completed / elapsed, 2),
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
                "p50": pct(0.50),
                "p95": pct(0.95),
                "p99": pct(0.99),
                "max": round(1000 * lat[-1], 1) if lat else None,
                "mean": round(1000 * statistics.mean(lat), 1) if lat else None,
            },
            "cpu_ms_per_move": {role: round(1000 * sec / n, 2) for role, sec in cpu.items()},
            "cpu_ms_per_move_net_of_idle": {
                role: round(1000 * (sec - idle_cpu[role] / idle_s * window) / n, 2) for role, sec in cpu.items()
            },
            "cpu_s_total": {role: round(sec, 2) for role, sec in cpu.items()},
            "cpu_busy_fraction_idle": {role: round(sec / idle_s, 3) for role, sec in idle_cpu.items()},
            "pg_transactions_per_move": round(xacts / n, 2),
            "pg_transactions_per_move_net_of_idle": round((xacts - idle_xact_rate * window) / n, 2),
            "pg_transactions_per_s_idle": round(idle_xact_rate, 1),
            "pg_tuples_per_move": {k: round(v / n, 1) for k, v in tuples.items()},
            "load_tool_cpu_ms_per_move": round(
                1000 * ((r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)) / n, 2
            ),
            "loadavg_after": Path("/proc/loadavg").read_text().split()[:3],
        }


# -- setup through Django -----------------------------------------------------------------------------


def django_setup(args: argparse.Namespace) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pocha_site.settings")
    os.environ.setdefault("DEBUG", "false")
    if not os.environ.get("SECRET_KEY"):
        os.environ["SECRET_KEY"] = (Path(os.environ.get("POCHA_VAR", ROOT / "var")) / "secret_key").read_text().strip()
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def make_tables(count: int, clock: int = CLOCK_SECONDS) -> tuple[list[tuple[int, list[str]]], Any]:
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    from games import actions
    from games.models import Table as TableRow

    users = get_user_model()
    tag = f"ld{int(time.time()) % 10**7}"
    moderator = users.objects.create_user(f"{tag}_mod", password=None, is_staff=True, is_superuser=True)
    tables = []
    for t in range(count):
        people, cookies = [], []
        for s in range(4):
            user = users.objects.create_user(f"{tag}_{t}_{s}", password=None)
            session = SessionStore()
            session[SESSION_KEY] = str(user.pk)
            session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            people.append(user)
            cookies.append(session.session_key)
        row = actions.do_create_table(people[0], 4)
        TableRow.objects.filter(pk=row.pk).update(bid_seconds=clock, card_seconds=clock, trump_seconds=clock)
        for person in people[1:]:
            actions.do_take_seat(row.pk, person)
        assert TableRow.objects.get(pk=row.pk).status == TableRow.Status.PLAYING
        tables.append((row.pk, cookies))
    return tables, moderator


def cancel_tables(tables: list[tuple[int, list[str]]], moderator: Any) -> None:
    from games import actions

    for tid, _cookies in tables:
        try:
            actions.do_admin_cancel(tid, moderator, "fin de la prueba de carga")
        except actions.ActionError:
            pass


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
        ("lost / refused / socket errors", f"{r['lost']} / {r['refused']} / {r['socket_errors']}"),
        ("skipped: table busy / no move on board", f"{r['skipped_busy']} / {r['skipped_no_move']}"),
        (
            "CPU ms/move daphne / worker / beat / pg",
            f"{cpu['daphne']} / {cpu['celery_worker']} / {cpu['celery_beat']} / {cpu['postgres_backends']}",
        ),
        (
            "  same, net of the idle rate",
            " / ".join(
                str(r["cpu_ms_per_move_net_of_idle"][k])
                for k in ("daphne", "celery_worker", "celery_beat", "postgres_backends")
            ),
        ),
        (
            "PG transactions per move (net of idle)",
            f"{r['pg_transactions_per_move']} ({r['pg_transactions_per_move_net_of_idle']})",
        ),
        ("load tool CPU ms/move", f"{r['load_tool_cpu_ms_per_move']}"),
    ]
    width = max(len(a) for a, _ in rows)
    for a, b in rows:
        print(f"{a:<{width}}  {b}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8000)))
    parser.add_argument("--tables", type=int, default=30)
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
    args = parser.parse_args()

    django_setup(args)
    from django.db import connection

    t0 = time.monotonic()
    tables, moderator = make_tables(args.tables, args.clock_seconds)
    print(f"setup: {args.tables} tables started in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    connection.close()
    pg = Postgres(os.environ["DATABASE_URL"])
    roles = supervised_pids()
    if not roles["daphne"]:
        print("warning: no daphne process found through supervisorctl (is POCHA_VAR the stack's?)", file=sys.stderr)
    run = Run(args, tables)

    async def go() -> dict[str, Any]:
        report, readers = await run.main(pg, roles)
        # call the tables off while the sockets are still open (no bot takes over the abandoned games)
        await asyncio.to_thread(cancel_tables, tables, moderator)
        await asyncio.sleep(0.5)
        for t in run.tables:
            for s in t.seats:
                if s.ws is not None:
                    await s.ws.close()
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        return report

    report = asyncio.run(go())
    report["processes"] = {k: len(v) for k, v in roles.items()}
    print_table(report)
    print(json.dumps(report, indent=1, ensure_ascii=False))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
