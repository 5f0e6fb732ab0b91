"""A whole services-mode site in subprocesses, started the way operators start it (``deploy/pocha.sh up``,
that is ``make up``): its own redis-server on a free port, a fresh PostgreSQL database, two Daphne
processes sharing one port (supervisord's ``fcgi-program``), a Celery worker and beat, all supervised.
Its ports, its environment and its commands come from the suite's one server harness (``support.server``).

The faults are done to it from outside, as they happen in production: a process killed with SIGKILL,
Redis killed and started again, every PostgreSQL connection terminated.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import psycopg
from support.server import BIN, ROOT, ServerError, child_env, free_port, run

CONF = ROOT / "deploy" / "supervisord.conf"

#: Fast games: bots think 50 ms, no pause after a trick or a round, presence expires in 3 s.
FAST = {
    "POCHA_BOT_DELAY": "0.05",
    "POCHA_TRICK_PAUSE": "0",
    "POCHA_ROUND_PAUSE": "0",
    "POCHA_TRICK_HOLD": "0",
    "POCHA_PRESENCE_TTL": "3",
    "POCHA_PRESENCE_BEAT": "1",
    "POCHA_DISCONNECT_GRACE": "5",
    # the signals that read a busy shared machine as a full server (a fault test is not a load test)
    "POCHA_SHED_CPU": "0",
    "POCHA_SHED_MOVE_TIME": "0",
    "POCHA_SHED_HTTP_WAIT": "0",
}


def stack_database_name(url: str) -> str:
    """A database of its own on the server of ``url``: ``<name>_faults_<pid>`` (``pocha_faults_1234``)."""
    base = urllib.parse.urlsplit(url).path.lstrip("/") or "pocha"
    if "faults" not in base:
        base += "_faults"
    return f"{base}_{os.getpid()}"


def with_database(url: str, name: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


class Stack:
    def __init__(self, workdir: Path, database_url: str) -> None:
        self.workdir = workdir
        self.var = workdir / "var"
        self.logs = self.var / "log"
        self.server_url = database_url
        self.database = stack_database_name(database_url)
        self.database_url = with_database(database_url, self.database)
        self.redis_port = free_port()
        self.port = free_port()
        #: each ASGI process's own port as well (deploy/asgi.sh), for a proxy that routes a table to one process
        self.own_ports = [free_port(), free_port()]
        self.redis: subprocess.Popen[bytes] | None = None
        self.env = child_env(
            {
                **FAST,
                # `make up`'s own settings, as deploy/pocha.sh sets them for the processes it starts: the
                # accounts made here with ``manage`` must be hashed as its servers check them
                "DJANGO_SETTINGS_MODULE": "pocha_site.settings",
                "DATABASE_URL": self.database_url,
                "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
                "DEBUG": "false",
                "SECRET_KEY": secrets.token_urlsafe(50),
                "ALLOWED_HOSTS": "127.0.0.1,localhost",
                "BIND": "127.0.0.1",
                "PORT": str(self.port),
                "ASGI_PROCESSES": "2",
                "ASGI_OWN_PORTS": ",".join(str(port) for port in self.own_ports),
                "CELERY_CONCURRENCY": "2",
                "POCHA_VAR": str(self.var),
                "POCHA_BIN": str(BIN),
                # its own collected files: the checkout's staticfiles/ is read by the other tiers' test
                # processes (WhiteNoise scans it), and another stack's collectstatic would race them
                "STATIC_ROOT": str(self.var / "static"),
            }
        )

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- Redis ----------------------------------------------------------------------------------

    def start_redis(self) -> None:
        server = shutil.which("redis-server")
        assert server, "redis-server is not installed: the fault tests need it (apt-get install redis-server)"
        assert self.redis is None or self.redis.poll() is not None
        log = open(self.workdir / "redis.log", "ab")  # noqa: SIM115 (the process keeps it)
        # No persistence: a Redis that comes back has lost everything (queued tasks, channel groups).
        self.redis = subprocess.Popen(
            [
                server,
                "--port",
                str(self.redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        end = time.monotonic() + 20
        while not self.redis_answers():
            assert self.redis.poll() is None, "redis-server exited:\n" + self.tail(self.workdir / "redis.log")
            assert time.monotonic() < end, "redis-server did not answer"
            time.sleep(0.05)

    def redis_answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.redis_port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill_redis(self) -> None:
        if self.redis is not None and self.redis.poll() is None:
            self.redis.send_signal(signal.SIGKILL)
            self.redis.wait(timeout=10)

    # -- PostgreSQL -----------------------------------------------------------------------------

    def admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(with_database(self.server_url, "postgres"), autocommit=True)

    def create_database(self) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.database}"')

    def drop_database(self) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    def terminate_connections(self) -> int:
        """Every connection to the stack's database dropped by the server, as a PostgreSQL restart or a
        failover would: returns how many."""
        with self.admin() as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (self.database,),
            ).fetchall()
        return sum(1 for (done,) in rows if done)

    def sql(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            return conn.execute(query, params).fetchall()

    # -- the site -------------------------------------------------------------------------------

    def run(self, *args: str, timeout: float = 240) -> str:
        try:
            return run(list(args), self.env, timeout)
        except ServerError as error:
            raise AssertionError(f"{error}\n{self.log_tails()}") from None

    def up(self) -> str:
        output = self.run(str(ROOT / "deploy" / "pocha.sh"), "up")
        # the files were collected into this stack's own folder (STATIC_ROOT), not the checkout's
        assert (Path(self.env["STATIC_ROOT"]) / "staticfiles.json").is_file(), output
        return output

    def down(self) -> None:
        subprocess.run(
            [str(ROOT / "deploy" / "pocha.sh"), "down"],
            cwd=ROOT,
            env=self.env,
            timeout=120,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def manage(self, *args: str) -> str:
        return self.run(sys.executable, "manage.py", *args)

    def ctl(self, *args: str) -> str:
        done = subprocess.run(
            [str(BIN / "supervisorctl"), "-c", str(CONF), *args],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=30,
        )
        return done.stdout.decode(errors="replace")

    def pid(self, name: str) -> int:
        out = self.ctl("pid", name).strip()
        assert out.isdigit() and int(out) > 0, f"{name} is not running: {out!r}\n{self.ctl('status')}"
        return int(out)

    def states(self) -> dict[str, str]:
        return {line.split()[0]: line.split()[1] for line in self.ctl("status").splitlines() if line.strip()}

    def wait_running(self, name: str, other_than: int, timeout: float = 30) -> tuple[int, float]:
        """Wait until supervisord has ``name`` RUNNING with a pid other than ``other_than``: (pid, seconds)."""
        start = time.monotonic()
        while True:
            out = self.ctl("pid", name).strip()
            if out.isdigit() and int(out) not in (0, other_than) and self.states().get(name) == "RUNNING":
                return int(out), time.monotonic() - start
            assert time.monotonic() - start < timeout, f"{name} was not restarted:\n{self.ctl('status')}"
            time.sleep(0.2)

    def asgi_names(self) -> list[str]:
        return sorted(name for name in self.states() if name.startswith("asgi:"))

    def process_holding(self, client_port: int, server_port: int | None = None) -> str:
        """The supervisord name of the ASGI process that holds the connection from ``client_port`` (to the
        shared port, or to ``server_port``)."""
        inode = server_socket_inode(server_port or self.port, client_port)
        for name in self.asgi_names():
            pid = self.pid(name)
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                        return name
                except OSError:
                    continue
        raise AssertionError(f"no ASGI process holds the connection from port {client_port}")

    def get(self, path: str) -> int:
        try:
            with urllib.request.urlopen(self.origin + path, timeout=5) as response:
                return int(response.status)
        except OSError:
            return 0

    # -- logs -----------------------------------------------------------------------------------

    @staticmethod
    def tail(path: Path, chars: int = 6000) -> str:
        try:
            return path.read_text(errors="replace")[-chars:]
        except OSError as error:
            return f"({error})"

    def log_tails(self, chars: int = 6000) -> str:
        parts = []
        for path in sorted(self.logs.glob("*.log")) if self.logs.exists() else []:
            parts.append(f"---- {path.name} ----\n{self.tail(path, chars)}")
        return "\n".join(parts)

    def grep_logs(self, pattern: str) -> list[str]:
        found = []
        regex = re.compile(pattern)
        for path in sorted(self.logs.glob("*.log")) if self.logs.exists() else []:
            for line in path.read_text(errors="replace").splitlines():
                if regex.search(line):
                    found.append(f"{path.name}: {line}")
        return found


def server_socket_inode(server_port: int, client_port: int) -> int:
    """The inode of the server's end of the TCP connection 127.0.0.1:client_port -> 127.0.0.1:server_port."""
    wanted_local, wanted_remote = f"{server_port:04X}", f"{client_port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], int(fields[9])
            if local.rsplit(":", 1)[1] == wanted_local and remote.rsplit(":", 1)[1] == wanted_remote and inode:
                return inode
    raise AssertionError(f"no connection from port {client_port} to {server_port}")
