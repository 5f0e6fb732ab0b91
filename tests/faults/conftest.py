"""The fault tests' stack: one for the package (starting it takes some seconds; the browser test and the
fault tests share it), a fresh game per test.

They run in services mode (``make test-services``: ``DATABASE_URL`` is PostgreSQL) and are skipped
otherwise.  In services mode a missing tool (redis-server, PostgreSQL) fails them: it is not a reason to
skip the tests that check the site survives its services."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from live.wsclient import PASSWORD

from .stack import Stack

DATABASE_URL = os.environ.get("DATABASE_URL", "")
SERVICES = DATABASE_URL.startswith(("postgres://", "postgresql://"))
#: People for the games (each test seats two of them); created once with the stack.
PEOPLE = [f"faults{n}" for n in range(1, 11)]

services_only = pytest.mark.skipif(
    not SERVICES, reason="fault tests need PostgreSQL and Redis: run them with make test-services"
)


@pytest.fixture(scope="package")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    workdir: Path = tmp_path_factory.mktemp("faults")
    stack = Stack(workdir, DATABASE_URL)
    print(f"\nstack: {stack.origin}, redis on {stack.redis_port}, database {stack.database}, files in {workdir}")
    stack.create_database()
    try:
        stack.start_redis()
        print(stack.up())
        stack.manage(
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model; User = get_user_model()\n"
            f"for name in {PEOPLE!r}: User.objects.create_user(name, password={PASSWORD!r})",
        )
        yield stack
    finally:
        stack.down()
        stack.kill_redis()
        # What the faults made the processes log (connection errors are expected): each error once, counted.
        errors = Counter(
            line.split(": ", 1)[0] + ": " + line.split(": ", 1)[1][:160]
            for line in stack.grep_logs(r"^[\w.]+(Error|Exception|Unrecoverable)\b|CRITICAL")
        )
        print(f"---- errors in the stack's logs ({stack.logs}) ----")
        for line, count in errors.most_common(25):
            print(f"{count:5d} × {line}")
        stack.drop_database()
