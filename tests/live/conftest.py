"""Live-table fixtures: with the Celery clock on (services mode), a real Celery worker runs the due steps."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from typing import Any

import pytest


class WorkerLog:
    def __init__(self) -> None:
        self.tasks: list[str] = []


@pytest.fixture
def celery_clock_worker(settings) -> Iterator[WorkerLog | None]:
    """A Celery worker (in a thread of this process, against Redis) when the Celery clock is on.

    Its thread keeps its database connection from task to task, as a real worker's does (a connection
    opened for every step would cost a whole game seconds); a last task closes it before the worker
    stops, since an open one would keep the test database busy at teardown."""
    if not settings.POCHA_CELERY_CLOCK:
        yield None
        return
    from celery.contrib.testing.worker import start_worker
    from celery.signals import task_postrun

    from pocha_site.celery import app

    log = WorkerLog()

    def after_task(sender: Any = None, **kwargs: Any) -> None:
        log.tasks.append(sender.name if sender is not None else "?")

    task_postrun.connect(after_task, weak=False)
    app.conf.task_always_eager = False
    # The timers earlier tests armed with no worker running wait in the queue; their tables are gone, and
    # running them all first (a hundred or more in a long run) would hold this test's own for seconds.
    app.control.purge()
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
            try:
                yield log
            finally:
                closed = threading.Event()
                _close_worker_connections.delay(closed_events.register(closed))
                if not closed.wait(10):
                    warnings.warn("the test's Celery worker did not close its database connection", stacklevel=1)
    finally:
        task_postrun.disconnect(after_task)


class _Events:
    """Events a task run by the in-process worker sets, by number (a task's arguments must be JSON)."""

    def __init__(self) -> None:
        self._events: dict[int, threading.Event] = {}
        self._lock = threading.Lock()

    def register(self, event: threading.Event) -> int:
        with self._lock:
            number = len(self._events)
            self._events[number] = event
            return number

    def set(self, number: int) -> None:
        with self._lock:
            event = self._events.pop(number, None)
        if event is not None:
            event.set()


closed_events = _Events()


def _register_close_task() -> Any:
    from pocha_site.celery import app

    @app.task(name="tests.close_worker_connections", ignore_result=True)
    def close_worker_connections(number: int) -> None:
        from django.db import connections

        connections.close_all()
        closed_events.set(number)

    return close_worker_connections


_close_worker_connections = _register_close_task()


@pytest.fixture(autouse=True)
async def close_server_thread_connections(django_db_blocker: Any) -> Any:
    """Close the database connections the consumers' worker thread kept open (persistent connections
    would keep PostgreSQL's test database busy at teardown).  Unblocked: a test with no database of its
    own may follow one whose last socket work left a connection on that thread, and checking that
    connection before closing it is a database access pytest-django would refuse."""
    yield
    from channels.db import database_sync_to_async
    from django.db import connections

    with django_db_blocker.unblock():
        await database_sync_to_async(connections.close_all)()
    from games.live import hotpath, presence

    hotpath.shutdown()  # and those of the socket path's own database threads (PostgreSQL)
    presence.close_beat_connection()  # and the presence beat's thread


@pytest.fixture(autouse=True)
def fresh_channel_layer() -> Iterator[None]:
    """Each test gets its own channel layer object.  Every test runs on a new event loop, and a Redis
    layer left with a receive still pending on a finished test's loop (a consumer whose cancellation
    was lost) refuses every later receive ("bound to a different event loop")."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def _threads() -> str:
    import sys
    import threading
    import traceback

    names = {thread.ident: thread.name for thread in threading.enumerate()}
    parts = []
    for ident, frame in sys._current_frames().items():
        parts.append(f"--- thread {names.get(ident, '?')} ({ident})\n" + "".join(traceback.format_stack(frame)[-12:]))
    return "\n".join(parts)


def _services_state() -> str:
    """The database's sessions of the test database and the worker's Celery queue, as they are now."""
    from django.conf import settings
    from django.db import connection

    lines = []
    if connection.vendor == "postgresql":
        import psycopg

        db = connection.settings_dict
        try:
            with psycopg.connect(
                host=db["HOST"] or "127.0.0.1",
                port=db["PORT"] or 5432,
                user=db["USER"],
                password=db["PASSWORD"] or None,
                dbname="postgres",
                autocommit=True,
            ) as admin:
                rows = admin.execute(
                    "SELECT pid, state, wait_event_type, wait_event, now() - xact_start, left(query, 160) "
                    "FROM pg_stat_activity WHERE datname = %s",
                    (db["NAME"],),
                ).fetchall()
            lines += [f"pg: {row}" for row in rows]
        except Exception as error:  # noqa: BLE001 (a report, best effort)
            lines.append(f"pg: {error!r}")
    if settings.REDIS_URL:
        import redis

        try:
            client = redis.Redis.from_url(settings.REDIS_URL)
            lines.append(
                f"redis {settings.REDIS_URL}: celery queue {client.llen('celery')}, unacked {client.hlen('unacked')}"
            )
        except Exception as error:  # noqa: BLE001
            lines.append(f"redis: {error!r}")
    return "\n".join(lines)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A live test that fails reports what every thread of the process was doing, and in services mode the
    test database's sessions and the Celery queue (a stalled game is otherwise only "timed out waiting")."""
    report = yield
    if report.failed and report.when == "call":
        report.sections.append(("threads at the failure", _threads()))
        state = _services_state()
        if state:
            report.sections.append(("services at the failure", state))
    return report
