"""The real ASGI server (Daphne) in a subprocess, for the browser tests.

It runs against its own migrated SQLite file, with the in-process clock (``REDIS_URL`` is removed,
even when the suite runs in services mode) and fast bots. Everything it prints goes to a log file.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0
LOG_TAIL_CHARS = 20_000
# Settings the server must not inherit from the suite's environment.
DROPPED = {"REDIS_URL", "DATABASE_URL", "SECRET_KEY", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS", "DEBUG"}


class ServerError(RuntimeError):
    pass


@dataclass
class LiveServer:
    url: str
    log_path: Path
    process: subprocess.Popen[bytes]
    env: dict[str, str]

    def manage(self, *args: str) -> str:
        """Run a management command against this server's database; returns what it printed."""
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=300,
        )
        if done.returncode != 0:
            raise ServerError(f"manage.py {' '.join(args)} failed:\n{done.stdout.decode(errors='replace')}")
        return done.stdout.decode().strip()

    def log_tail(self) -> str:
        return read_tail(self.log_path)

    def stop(self) -> None:
        stop(self.process)


def read_tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
    except OSError as error:
        return f"(no server log: {error})"


# The browser tests that play whole games do not wait for people to read each trick (no pause on the
# server, no hold in the page); the card-room tests ask for the real pace (``start(..., pace=True)``).
FAST_PACE = {"POCHA_TRICK_PAUSE": "0", "POCHA_ROUND_PAUSE": "0", "POCHA_TRICK_HOLD": "0"}


def server_env(database_file: Path, pace: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED and k not in FAST_PACE}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "pocha_site.settings",
            "DATABASE_URL": f"sqlite:///{database_file}",
            "DEBUG": "true",  # WhiteNoise serves the static files straight from static/, no collectstatic
            "POCHA_BOT_DELAY": "0.05",
            "POCHA_QUICK_WAIT": "1",
            "PYTHONUNBUFFERED": "1",
            # one game on a shared machine: never «Sala llena» (tests/live/test_capacity.py sheds load)
            "POCHA_SHED_LOOP_LAG": "0",
            "POCHA_SHED_DB_WAIT": "0",
            "POCHA_SHED_CPU": "0",
            "POCHA_SHED_MOVE_TIME": "0",
            "POCHA_SHED_HTTP_WAIT": "0",
        }
    )
    if not pace:
        env.update(FAST_PACE)
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def daphne_command(port: int) -> list[str]:
    daphne = Path(sys.executable).parent / "daphne"
    launcher = [str(daphne)] if daphne.exists() else [sys.executable, "-m", "daphne"]
    return [*launcher, "-b", "127.0.0.1", "-p", str(port), "pocha_site.asgi:application"]


def wait_until_serving(url: str, process: subprocess.Popen[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url + "/", timeout=5) as response:
                if response.status == 200:
                    return True
        except OSError:  # URLError, refused or reset connections and timeouts are all OSErrors
            pass
        time.sleep(0.2)
    return False


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def start(workdir: Path, pace: bool = False) -> LiveServer:
    """Migrate a fresh SQLite file in ``workdir``, then serve the site with Daphne on a free port.
    ``pace``: the table's real pauses (a trick held up, a round's result) instead of none."""
    env = server_env(workdir / "browser.sqlite3", pace)
    log_path = workdir / "server.log"
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=180,
    )
    log_path.write_bytes(b"$ manage.py migrate --no-input\n" + migrate.stdout)
    if migrate.returncode != 0:
        raise ServerError("manage.py migrate failed:\n" + read_tail(log_path))
    for _attempt in range(3):  # another process may take the free port before Daphne binds it
        port = free_port()
        command = daphne_command(port)
        with log_path.open("ab") as log:
            log.write(f"\n$ {' '.join(command)}\n".encode())
            log.flush()
            process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        url = f"http://127.0.0.1:{port}"
        if wait_until_serving(url, process, START_TIMEOUT):
            return LiveServer(url=url, log_path=log_path, process=process, env=env)
        stop(process)
    raise ServerError("the Daphne server did not start:\n" + read_tail(log_path))
