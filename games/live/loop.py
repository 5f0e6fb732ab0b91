"""What each server process runs on its event loop, besides its sockets: the presence beat and sweep, the
load-shedding watch, and (without Celery) the sweeper of overdue steps.

``bind_loop`` is called by the ASGI application at its first connection or request (``pocha_site.asgi``).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging

from django.conf import settings

from games.live import capacity, hotpath, hub, presence, timers
from games.models import Table
from games.study import worker

log = logging.getLogger(__name__)

_loop: asyncio.AbstractEventLoop | None = None
_sweeper: asyncio.Task[None] | None = None
_keeper: asyncio.Task[None] | None = None
_watcher: asyncio.Task[None] | None = None


def bind_loop() -> None:
    """Remember the server's loop and start on it the process's presence beat, its capacity watch and,
    without Celery, the sweeper of overdue steps (each once per loop)."""
    global _loop, _sweeper, _keeper, _watcher
    loop = asyncio.get_running_loop()
    if _loop is not loop:
        timers.use_loop(loop)
        presence.forget_local()  # a loop that is gone took its sockets with it
        _loop, _sweeper, _keeper, _watcher = loop, None, None, None
    if _keeper is None or _keeper.done():
        _keeper = loop.create_task(keep_alive(), context=contextvars.Context())
    if _watcher is None or _watcher.done():
        _watcher = loop.create_task(capacity.watch(), context=contextvars.Context())
    if not timers.celery_clock() and (_sweeper is None or _sweeper.done()):
        _sweeper = loop.create_task(_sweep_forever(), context=contextvars.Context())
    if not timers.celery_clock() and settings.POCHA_ANALYSIS_THREAD:
        worker.start()  # (once per process) the analyses and practice yardsticks queued, even before a restart


async def keep_alive() -> None:
    """The process's beat and sweep, forever.  In services mode it also plays the due steps overdue by
    more than ``POCHA_SERVER_SWEEP_SLACK`` seconds, so that no game waits on the Celery worker or beat
    alone (a due step is a compare-and-set on seq: two sweepers never play it twice).  At every beat, the
    tables shown here whose change never came are redrawn (``hub.catch_up``)."""
    loop = asyncio.get_running_loop()
    number = 0
    while True:
        try:
            found_gone = await loop.run_in_executor(presence.beat_thread(), presence.beat_on_own_thread)
            await hotpath.db(presence.after_beat, number, found_gone)
        except Exception:
            log.exception("presence beat failed")
        if timers.celery_clock():
            try:
                await timers.sweep_async(slack=float(settings.POCHA_SERVER_SWEEP_SLACK))
            except Exception:
                log.exception("server sweep of overdue steps failed")
        try:
            tables = hub.shown()
            if tables:
                hub.catch_up(await hotpath.db(table_seqs, tables))
        except Exception:
            log.exception("looking for tables whose change never came failed")
        number += 1
        await asyncio.sleep(float(settings.POCHA_PRESENCE_BEAT))


def table_seqs(tables: list[int]) -> dict[int, int]:
    """Each table's seq in the database (one read, on the process's beat)."""
    return dict(Table.objects.filter(pk__in=tables).values_list("pk", "seq"))


async def _sweep_forever() -> None:
    while True:
        await asyncio.sleep(timers.SWEEP_SECONDS)
        try:
            await timers.sweep_async()
        except Exception:
            log.exception("sweeper failed")
        try:
            await timers.sweep_tournaments_async()
        except Exception:
            log.exception("tournament sweep failed")
