"""The site's ASGI server (Daphne) in a subprocess: the one harness of every test that talks to a real
server over TCP as a browser would.

* ``sqlite_site(workdir)``: the one-command local mode (its own migrated SQLite file, in-memory channel
  layer, in-process clock, fast bots): the browser tests (``tests/browser``), the restart tests
  (``tests/live/test_restart.py``, ``test_chips_restart.py``).
* ``Daphne(workdir, env)``: any environment, e.g. a second and third server on the services-mode suite's
  own PostgreSQL database and Redis (``suite_services``: ``tests/live/test_presence.py``,
  ``tests/live/test_hub_hosts.py``).
* The fault tests' whole supervised stack (``tests/faults/stack.py``) takes its ports, its environment and
  its ``manage.py`` runs from here too.

Every server gets a free port of its own (so pytest-xdist workers never share one), runs in a process
group of its own (``kill`` is a real SIGKILL of everything it started), and logs to a file in its
``workdir`` (a test's own ``tmp_path``: nothing is shared between workers).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
BIN = Path(sys.executable).parent
START_TIMEOUT = 60.0
LOG_TAIL_CHARS = 20_000

#: Settings a server in a subprocess never inherits from the suite's own environment (the suite may run
#: in services mode, or in a shell with production settings): each harness sets what it needs.
DROPPED = frozenset(
    {
        "DATABASE_URL",
        "REDIS_URL",
        "DEBUG",
        "SECRET_KEY",
        "ALLOWED_HOSTS",
        "CSRF_TRUSTED_ORIGINS",
        "HTTPS",
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_HSTS_PRELOAD",
        "SECURE_PROXY_SSL_HEADER",
        "TRUSTED_PROXIES",
        "PORT",
        "BIND",
        "ASGI_PROCESSES",
        "POCHA_VAR",
        "POCHA_BIN",
        "POCHA_ROOT",
    }
)

#: No pause for people to read a trick or a round's result, on the server or in the page (the card-room
#: tests ask for the real pace).
FAST_PACE = {"POCHA_TRICK_PAUSE": "0", "POCHA_ROUND_PAUSE": "0", "POCHA_TRICK_HOLD": "0"}

#: A test server on a shared, busy machine is never «Sala llena» (tests/live/test_capacity.py sheds load).
NO_SHEDDING = {
    "POCHA_SHED_LOOP_LAG": "0",
    "POCHA_SHED_DB_WAIT": "0",
    "POCHA_SHED_CPU": "0",
    "POCHA_SHED_MOVE_TIME": "0",
    "POCHA_SHED_HTTP_WAIT": "0",
}


class ServerError(RuntimeError):
    pass


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def child_env(
    settings: Mapping[str, str], dropped: frozenset[str] = DROPPED, dropped_prefixes: tuple[str, ...] = ()
) -> dict[str, str]:
    """The suite's environment without ``dropped`` (nor any name starting with one of ``dropped_prefixes``),
    with ``settings`` on top."""
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith(dropped_prefixes)}
    # the site's settings with the suite's fast password hasher (``support/site_settings.py``)
    path = os.pathsep.join(p for p in (str(TESTS), env.get("PYTHONPATH", "")) if p)
    env.update({"DJANGO_SETTINGS_MODULE": "support.site_settings", "PYTHONPATH": path, "PYTHONUNBUFFERED": "1"})
    env.update(settings)
    return env


#: A line of Daphne's access log for a static file (a page's every card face asks for its deck's SVG again).
STATIC_REQUEST = re.compile(r'^\S+ - - \[[^]]*\] "GET /static/')


def read_tail(path: Path, chars: int = LOG_TAIL_CHARS, *, skip_static: bool = False) -> str:
    """The last ``chars`` characters of the log at ``path``; ``skip_static``: of its lines that are not
    requests for static files (which fill a browser test's log)."""
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        return f"(no log: {error})"
    if skip_static:
        text = "".join(line for line in text.splitlines(keepends=True) if not STATIC_REQUEST.match(line))
    return text[-chars:]


def run(command: list[str], env: Mapping[str, str], timeout: float = 300, log: Path | None = None) -> str:
    """Run ``command`` in the project folder; what it printed, or ServerError (with it) if it failed."""
    done = subprocess.run(
        command, cwd=ROOT, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout
    )
    output = done.stdout.decode(errors="replace")
    if log is not None:
        with log.open("a", encoding="utf-8") as file:
            file.write(f"$ {' '.join(command)}\n{output}\n")
    if done.returncode != 0:
        raise ServerError(f"{' '.join(command)} failed ({done.returncode}):\n{output[-LOG_TAIL_CHARS:]}")
    return output


def manage(env: Mapping[str, str], *args: str, timeout: float = 300, log: Path | None = None) -> str:
    """``manage.py ARGS`` with ``env``; what it printed (stripped)."""
    return run([sys.executable, "manage.py", *args], env, timeout, log).strip()


def answers(url: str, timeout: float = 2) -> bool:
    """The site at ``url`` serves its home page (200)."""
    try:
        with urllib.request.urlopen(url + "/", timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:  # URLError, refused or reset connections and timeouts are all OSErrors
        return False


class Daphne:
    """``daphne pocha_site.asgi:application`` on 127.0.0.1, started, stopped and killed at will.

    The port is chosen once (a restart comes back on the same one); the log (``log_path``) collects every
    life of the server and the ``manage.py`` runs made through ``manage``."""

    def __init__(self, workdir: Path, env: Mapping[str, str], *, log_name: str = "server.log") -> None:
        self.workdir = workdir
        self.env = dict(env)
        self.log_path = workdir / log_name
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        #: the SQLite file it serves, for ``sqlite_site``
        self.database: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    origin = url

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, chars: int = LOG_TAIL_CHARS, *, skip_static: bool = False) -> str:
        return read_tail(self.log_path, chars, skip_static=skip_static)

    def manage(self, *args: str, timeout: float = 300) -> str:
        """A management command against this server's database; what it printed."""
        return manage(self.env, *args, timeout=timeout, log=self.log_path)

    def command(self) -> list[str]:
        daphne = BIN / "daphne"
        launcher = [str(daphne)] if daphne.exists() else [sys.executable, "-m", "daphne"]
        return [*launcher, "-b", "127.0.0.1", "-p", str(self.port), "pocha_site.asgi:application"]

    def launch(self) -> None:
        """Start the process (not waiting for it to answer: ``wait_ready``)."""
        assert self.process is None or self.process.poll() is not None, "already running"
        with self.log_path.open("ab") as log:
            log.write(f"\n==== starting daphne on port {self.port} ====\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                self.command(),
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        """Up and serving its home page (its loop bound: the first request starts its beat and sweeps)."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while not answers(self.url):
            if self.process.poll() is not None:
                raise ServerError(f"daphne exited ({self.process.returncode}):\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise ServerError(f"daphne did not answer within {timeout:.0f} s:\n{self.log_tail()}")
            time.sleep(0.2)

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Launch and wait until it serves.  The first start takes another free port when the one chosen
        was taken meanwhile (by another worker of the suite); a restart keeps its port."""
        first = self.process is None
        for attempt in range(3 if first else 1):
            self.launch()
            try:
                self.wait_ready(timeout)
                return
            except ServerError:
                assert self.process is not None
                exited = self.process.poll() is not None
                self.kill()
                if not (first and exited) or attempt == 2:
                    raise
                self.port = free_port()

    def kill(self) -> None:
        """SIGKILL to the whole process group: no shutdown code runs, timers armed in memory are lost."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
            with self.log_path.open("ab") as log:
                log.write(b"\n==== killed (SIGKILL) ====\n")

    def stop(self) -> None:
        """SIGTERM (Daphne closes its sockets), then SIGKILL after 10 s."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def suite_services(settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a server on the services-mode suite's own PostgreSQL database (this worker's test
    database, which a transactional test shares with it) and Redis (this worker's database number), with
    no load shedding and no pauses for people; ``settings``: more variables."""
    import urllib.parse

    from django.conf import settings as suite

    database = suite.DATABASES["default"]
    if not database["ENGINE"].endswith("postgresql") or not suite.REDIS_URL:
        raise ServerError("a server on the suite's services needs the suite in services mode (PostgreSQL, Redis)")
    user = urllib.parse.quote(database.get("USER") or "")
    password = urllib.parse.quote(database.get("PASSWORD") or "")
    credentials = f"{user}:{password}@" if password else f"{user}@" if user else ""
    host = f"{database.get('HOST') or '127.0.0.1'}:{database.get('PORT') or 5432}"
    return child_env(
        {
            "DATABASE_URL": f"postgres://{credentials}{host}/{database['NAME']}",
            "REDIS_URL": str(suite.REDIS_URL),
            **NO_SHEDDING,
            **FAST_PACE,
            **(settings or {}),
        }
    )


def sqlite_site(
    workdir: Path,
    *,
    pace: bool = False,
    migrate: bool = False,
    copy_of: Path | None = None,
    settings: Mapping[str, str] | None = None,
) -> Daphne:
    """The one-command local mode on ``workdir/pocha.sqlite3`` (not started): in-memory channel layer and
    in-process clock (no ``REDIS_URL``, even when the suite runs in services mode), DEBUG on (WhiteNoise
    serves static/ without collectstatic), bots that think 50 ms, no load shedding, and no pauses for
    people unless ``pace``.  ``migrate``: the file is migrated now; ``copy_of``: the file starts as a
    copy of that one (``migrated_sqlite``'s, say).  ``settings``: more variables."""
    env = child_env({})
    for name in FAST_PACE:
        env.pop(name, None)
    env.update(
        {
            "DATABASE_URL": f"sqlite:///{workdir / 'pocha.sqlite3'}",
            "DEBUG": "true",
            "POCHA_BOT_DELAY": "0.05",
            **NO_SHEDDING,
            **({} if pace else FAST_PACE),
            **(settings or {}),
        }
    )
    server = Daphne(workdir, env)
    server.database = workdir / "pocha.sqlite3"
    if copy_of is not None:
        shutil.copyfile(copy_of, server.database)
    if migrate:
        server.manage("migrate", "--no-input", timeout=180)
    return server


def migrated_sqlite(workdir: Path) -> Path:
    """A freshly migrated SQLite file in ``workdir`` (migrating takes seconds: copy it for each server)."""
    database = workdir / "migrated.sqlite3"
    manage(child_env({"DATABASE_URL": f"sqlite:///{database}"}), "migrate", "--no-input", timeout=180)
    return database
