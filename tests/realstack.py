"""The site served the way ``make up`` serves it, for the tests of the client's address, the login limits
and the URLs "through the real stack": Daphne started with the very command of ``deploy/supervisord.conf``
(``daphne --fd 0 ...``, on a listening socket opened beforehand, as supervisord hands it over), in a
subprocess, on the suite's own test database (the tests that use it are transactional, so the server sees
what they write), and a plain HTTP client with cookies that never follows redirects.

The server keeps its counters in its own memory (no ``REDIS_URL``) and checks passwords with the fast MD5
hasher (``support/site_settings.py``, through ``child_env``), so a hundred logins take a second or two.
``bare_stack`` and ``proxied_stack`` are fixtures: a test module imports them by name.
"""

from __future__ import annotations

import http.cookiejar
import shlex
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.server import child_env

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
START_TIMEOUT = 60.0

#: Every setting of the site's own comes from the test (the suite's environment may hold any).
DROPPED_PREFIXES = ("POCHA_", "EMAIL_")


def _supervised_line(key: str) -> str:
    conf = (ROOT / "deploy" / "supervisord.conf").read_text()
    section = conf[conf.index("[fcgi-program:asgi]") :].split("\n[", 1)[0]
    line = next(line for line in section.splitlines() if line.startswith(f"{key}="))
    return line.removeprefix(f"{key}=")


def supervised_command() -> list[str]:
    """The ASGI processes' command line in ``deploy/supervisord.conf``, as supervisord runs it for the first
    process (``deploy/asgi.sh 0``, which runs Daphne from ``$POCHA_BIN``: ``serving`` sets it)."""
    line = _supervised_line("command").replace("%(ENV_POCHA_ROOT)s", str(ROOT)).replace("%(process_num)d", "0")
    return shlex.split(line)


def asgi_daphne_lines() -> list[str]:
    """The lines of ``deploy/asgi.sh`` that run Daphne (the command ``supervised_command`` runs)."""
    return [line.strip() for line in (ROOT / "deploy" / "asgi.sh").read_text().splitlines() if "/daphne" in line]


def supervised_environment() -> dict[str, str]:
    """The settings ``deploy/supervisord.conf`` gives the ASGI processes (``POCHA_CONN_MAX_AGE="0"``)."""
    pairs = (item.split("=", 1) for item in shlex.split(_supervised_line("environment").replace(",", " ")))
    return {name: value for name, value in pairs}


def suite_database_url() -> str:
    """The URL of the database the suite's tests run on (SQLite file, or PostgreSQL in services mode)."""
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = urllib.parse.quote(db.get("USER") or "")
    password = urllib.parse.quote(db.get("PASSWORD") or "")
    credentials = f"{user}:{password}@" if password else f"{user}@" if user else ""
    return f"postgres://{credentials}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


@dataclass
class Stack:
    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-20_000:]
        except OSError as error:
            return f"(no log: {error})"

    def client(self) -> Client:
        return Client(self.url)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class Client:
    """A browser of sorts: keeps cookies, sends the CSRF token with every POST, follows no redirect."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirects)

    def _open(self, request: urllib.request.Request) -> tuple[int, str]:
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.status, response.read().decode(errors="replace")
        except urllib.error.HTTPError as error:  # 3xx (not followed), 4xx, 5xx
            return error.code, error.read().decode(errors="replace")

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
        return self._open(urllib.request.Request(self.url + path, headers=headers or {}))

    def csrf_token(self) -> str:
        token = next((c.value for c in self.cookies if c.name == "csrftoken"), None)
        if token is None:
            self.get("/accounts/login/")
            token = next(c.value for c in self.cookies if c.name == "csrftoken")
        return str(token)

    def post(self, path: str, data: dict[str, str], headers: dict[str, str] | None = None) -> tuple[int, str]:
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": self.csrf_token()}).encode()
        request = urllib.request.Request(self.url + path, data=body, headers=headers or {}, method="POST")
        return self._open(request)


def clear_of_a_window_turn(window: int, needed: float = 15.0) -> None:
    """Wait, if need be, until the rate limiter's next window of ``window`` seconds is at least ``needed``
    seconds away.  The server's windows are fixed (``pocha_site.ratelimit``) and its clock cannot stand
    still as the suite's does: attempts that straddle the turn of a window are counted afresh after it."""
    left = window - time.time() % window
    if left < needed:
        time.sleep(left + 0.2)


def _serving(url: str, process: subprocess.Popen[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url + "/", timeout=5) as response:
                if response.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


@contextmanager
def serving(workdir: Path, **settings: str) -> Iterator[Stack]:
    """The supervised command serving the suite's test database on a free port, with these settings in its
    environment (``TRUSTED_PROXIES="127.0.0.1"`` for a proxy on this machine); stopped on the way out."""
    env = child_env(
        {
            "DATABASE_URL": suite_database_url(),
            "DEBUG": "true",  # static files from static/, no collectstatic
            **supervised_environment(),
            "POCHA_BIN": str(BIN),  # deploy/asgi.sh's Daphne
            **settings,
        },
        dropped_prefixes=DROPPED_PREFIXES,
    )
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    log_path = workdir / "asgi.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            supervised_command(), cwd=ROOT, env=env, stdin=listener.fileno(), stdout=log, stderr=subprocess.STDOUT
        )
    listener.close()  # the server holds its own copy, as fd 0
    stack = Stack(url=f"http://127.0.0.1:{port}", process=process, log_path=log_path)
    try:
        if not _serving(stack.url, process, START_TIMEOUT):
            raise RuntimeError("the supervised Daphne command did not serve:\n" + stack.log())
        yield stack
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


# -- the two servers, one start each per test module ---------------------------------------------------
#
# A server here runs the site's own clock on the suite's test database: while it lives, its sweeper plays
# every overdue step in that database, a later live test's bots included, and its pushes reach none of
# that test's sockets (the game stalls).  So each lives only as long as the module that uses it: pytest
# stops it before the worker's next module starts.


@pytest.fixture(scope="module")
def bare_stack(django_db_setup: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """`make up` on a bare machine: no TRUSTED_PROXIES.  Its counters live as long as it does: each test
    uses addresses and names of its own."""
    with serving(tmp_path_factory.mktemp("bare")) as stack:
        yield stack


@pytest.fixture(scope="module")
def proxied_stack(django_db_setup: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The same behind nginx on this machine (the test plays nginx): TRUSTED_PROXIES=127.0.0.1, and two
    sign-ups an hour per address."""
    with serving(tmp_path_factory.mktemp("proxied"), TRUSTED_PROXIES="127.0.0.1", POCHA_SIGNUP_LIMIT="2") as stack:
        yield stack
