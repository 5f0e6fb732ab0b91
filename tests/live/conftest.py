"""Live-table fixtures: with the Celery clock on (services mode), a real Celery worker runs the due steps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


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
async def close_server_thread_connections() -> Any:
    """Close the database connections the consumers' worker thread kept open (persistent connections
    would keep PostgreSQL's test database busy at teardown)."""
    yield
    from channels.db import database_sync_to_async
    from django.db import connections

    await database_sync_to_async(connections.close_all)()


@pytest.fixture(autouse=True)
def fresh_channel_layer() -> Iterator[None]:
    """Each test gets its own channel layer object.  Every test runs on a new event loop, and a Redis
    layer left with a receive still pending on a finished test's loop (a consumer whose cancellation
    was lost) refuses every later receive ("bound to a different event loop")."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()
