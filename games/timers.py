"""What is due and when: bots' moves and quick tables that fill with bots.

Every change stores ``Table.due_at``, the moment the table's next automatic step is due.
Two things act on it, both through ``actions.do_due(table_id, seq)``, which is idempotent
(compare-and-set on ``seq``):

* a precise timer armed after each commit — a Celery task with an ETA when
  ``POCHA_CELERY_CLOCK`` is on, else a ``call_later`` on the ASGI server's own event loop
  (a separate process cannot reach an in-memory channel layer);
* a sweeper every couple of seconds (Celery beat, or a task on the same loop) that runs
  every overdue step a lost timer left behind — after a restart, for instance.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from datetime import datetime

from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

log = logging.getLogger(__name__)

SWEEP_SECONDS = 2.0

_loop: asyncio.AbstractEventLoop | None = None
_sweeper: asyncio.Task[None] | None = None


def celery_clock() -> bool:
    return bool(getattr(settings, "POCHA_CELERY_CLOCK", False))


def bind_loop() -> None:
    """Called from the ASGI application: remember the server's loop and start the sweeper on it."""
    global _loop, _sweeper
    if celery_clock():
        return
    loop = asyncio.get_running_loop()
    if _loop is loop and _sweeper is not None and not _sweeper.done():
        return
    _loop = loop
    _sweeper = loop.create_task(_sweep_forever())


def arm(table_id: int, seq: int, due: datetime) -> None:
    """Run ``do_due(table_id, seq)`` at ``due`` (called after commit)."""
    if celery_clock():
        from games.tasks import run_due

        run_due.apply_async((table_id, seq), eta=due)
        return
    loop = _loop
    if loop is None or loop.is_closed():
        return  # no server loop in this process (a management command): the sweeper will catch it
    delay = max(0.0, (due - timezone.now()).total_seconds())
    # A fresh context: the caller's (a sync_to_async thread) would make the task look re-entrant to asgiref.
    loop.call_soon_threadsafe(_call_later, loop, delay, table_id, seq, context=contextvars.Context())


def _call_later(loop: asyncio.AbstractEventLoop, delay: float, table_id: int, seq: int) -> None:
    loop.call_later(delay, lambda: loop.create_task(run_due_async(table_id, seq), context=contextvars.Context()),
                    context=contextvars.Context())


async def run_due_async(table_id: int, seq: int) -> None:
    from games.actions import do_due

    try:
        await database_sync_to_async(do_due)(table_id, seq)
    except Exception:
        log.exception("due step of table %s at seq %s failed", table_id, seq)


def sweep() -> int:
    """Run every overdue step; returns how many tables moved."""
    from games.actions import do_due
    from games.models import Table

    moved = 0
    overdue = list(Table.objects.filter(due_at__lte=timezone.now()).values_list("pk", "seq")[:500])
    for table_id, seq in overdue:
        try:
            if do_due(table_id, seq) is not None:
                moved += 1
        except Exception:
            log.exception("sweep of table %s failed", table_id)
    return moved


async def _sweep_forever() -> None:
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        try:
            await database_sync_to_async(sweep)()
        except Exception:
            log.exception("sweeper failed")
