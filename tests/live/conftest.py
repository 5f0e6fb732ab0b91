"""Live-table fixtures: with the Celery clock on (services mode), a real Celery worker runs the due steps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections
from django.db.backends.signals import connection_created


class WorkerLog:
    def __init__(self) -> None:
        self.tasks: list[str] = []


@pytest.fixture
def celery_clock_worker(settings) -> Iterator[WorkerLog | None]:
    """A Celery worker (in a thread of this process, against Redis) when the Celery clock is on."""
    if not settings.POCHA_CELERY_CLOCK:
        yield None
        return
    from celery.contrib.testing.worker import start_worker
    from celery.signals import task_postrun
    from django.db import connections

    from pocha_site.celery import app

    log = WorkerLog()

    def after_task(sender: Any = None, **kwargs: Any) -> None:
        log.tasks.append(sender.name if sender is not None else "?")
        connections.close_all()  # the worker thread's connection would keep the test database busy

    task_postrun.connect(after_task, weak=False)
    app.conf.task_always_eager = False
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
            yield log
    finally:
        task_postrun.disconnect(after_task)


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
    from games import hotpath, presence

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


@pytest.fixture
def commits_without_fsync() -> Iterator[None]:
    """Durability is not what the live tests are about, and waiting for the disk at every commit makes
    a whole game several times slower.  Commits skip that wait (SQLite ``synchronous=OFF``, PostgreSQL
    ``synchronous_commit=off``); locking and isolation are unchanged."""

    def no_fsync(sender: Any, connection: Any, **kwargs: Any) -> None:
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute("PRAGMA synchronous=OFF")
            elif connection.vendor == "postgresql":
                cursor.execute("SET synchronous_commit TO OFF")

    connection_created.connect(no_fsync)
    for conn in connections.all():
        if conn.connection is not None and not conn.in_atomic_block:
            no_fsync(None, conn)
    yield
    connection_created.disconnect(no_fsync)
