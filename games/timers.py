"""What is due and when: bots' moves and quick tables that fill with bots.

Every change stores ``Table.due_at``, the moment the table's next automatic step is due.
Two things act on it, both through ``actions.do_due(table_id, seq)``, which is idempotent
(compare-and-set on ``seq``):

* a precise timer armed after each commit — a Celery task with an ETA when
  ``POCHA_CELERY_CLOCK`` is on, else a ``call_later`` on the ASGI server's own event loop
  (a separate process cannot reach an in-memory channel layer).  A person's turn clock armed in a
  server process is always a ``call_later`` there, one per table, cancelled as soon as that process
  sees the table move on (``saw_seq``): their own move nearly always comes first, and a task per
  move cost the worker and PostgreSQL a second wave of work 30 s later.  So is the deal of the next
  round after a round's pause;
* a sweeper every couple of seconds (Celery beat, or a task on the same loop) that runs
  every overdue step a lost timer left behind — after a restart, for instance.  In services mode each
  ASGI process sweeps too (``games.presence.keep_alive``), the steps overdue by more than
  ``POCHA_SERVER_SWEEP_SLACK`` seconds, so that a dead worker or beat stalls no game.

``bind_loop`` also starts the process's presence beat (``games.presence``) in both modes.

A bot's turn takes thought (up to 600 ms for a difícil bot), and that thought never runs inside the
table's transaction, on the server's event loop, or on the one thread Channels gives the database
(``database_sync_to_async`` is thread-sensitive): ``do_due`` is three steps (``actions.prepare_due``,
``actions.think``, ``actions.apply_due``).  On the server's loop the two short database steps go to
the database thread and the thinking to a small pool of its own (``run_due_async``); the Celery
worker simply runs the three in a row.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

log = logging.getLogger(__name__)

SWEEP_SECONDS = 2.0
#: Threads that think for the bots in this process.  The thinking is pure Python, so more threads would
#: only share the same interpreter lock; two keep a slow decision from holding up every other table.
THINKING_THREADS = 2

_loop: asyncio.AbstractEventLoop | None = None
_sweeper: asyncio.Task[None] | None = None
_keeper: asyncio.Task[None] | None = None
_watcher: asyncio.Task[None] | None = None
_thinkers: ThreadPoolExecutor | None = None
_thinkers_lock = threading.Lock()
#: Steps (table, seq) being run on this loop: the timer and the sweeper finding the same step think once.
_running: set[tuple[int, int]] = set()


def celery_clock() -> bool:
    return bool(getattr(settings, "POCHA_CELERY_CLOCK", False))


def bind_loop() -> None:
    """Called from the ASGI application: remember the server's loop and start on it the process's
    presence beat, and (without Celery) the sweeper of overdue steps."""
    global _loop, _sweeper, _keeper, _watcher
    from games import capacity, presence

    loop = asyncio.get_running_loop()
    if _loop is not loop:
        _running.clear()  # steps left on a loop that is gone will never finish there
        _armed.clear()
        presence.forget_local()  # and its sockets are gone with it
        _loop, _sweeper, _keeper, _watcher = loop, None, None, None
    if _keeper is None or _keeper.done():
        _keeper = loop.create_task(presence.keep_alive(), context=contextvars.Context())
    if _watcher is None or _watcher.done():
        _watcher = loop.create_task(capacity.watch(), context=contextvars.Context())
    if not celery_clock() and (_sweeper is None or _sweeper.done()):
        _sweeper = loop.create_task(_sweep_forever(), context=contextvars.Context())


def arm(table_id: int, seq: int, due: datetime, *, person: bool = False, deal: bool = False) -> None:
    """Run ``do_due(table_id, seq)`` at ``due`` (called after commit).  ``person``: the step is a person's
    turn clock, which their own move nearly always beats: in a server process it is a timer on the
    process's own loop, cancelled as soon as the table moves on (no Celery task per move, no second wave
    of work when the clock would have run out); the sweepers play it if this process dies first.
    ``deal``: the next round's deal after the round's pause, a few queries with no thinking: in a server
    process it is a timer on its loop too (a Celery task cost more to queue and to receive than the deal
    itself); a bot's move, which thinks, still goes to the worker."""
    loop = _loop
    in_server = loop is not None and not loop.is_closed()
    if celery_clock() and not ((person or deal) and in_server):
        from games.tasks import run_due

        try:
            run_due.apply_async((table_id, seq), eta=due)
        except Exception:  # the broker is down: the move is saved, and the sweepers play the step when due
            log.warning(
                "table %s: the timer for seq %s could not be queued; the sweepers will play it",
                table_id,
                seq,
                exc_info=True,
            )
        return
    if loop is None or loop.is_closed():
        return  # no server loop in this process (a management command): the sweeper will catch it
    delay = max(0.0, (due - timezone.now()).total_seconds())
    # A fresh context: the caller's (a sync_to_async thread) would make the task look re-entrant to asgiref.
    loop.call_soon_threadsafe(_call_later, loop, delay, table_id, seq, context=contextvars.Context())


#: The timer armed on this loop for each table: (its seq, its handle).  One per table: a newer step
#: replaces it, and a change seen at a higher seq (``saw_seq``) cancels it.
_armed: dict[int, tuple[int, asyncio.TimerHandle]] = {}


def _call_later(loop: asyncio.AbstractEventLoop, delay: float, table_id: int, seq: int) -> None:
    armed = _armed.get(table_id)
    if armed is not None:
        if armed[0] > seq:
            return  # a newer step is armed already
        armed[1].cancel()

    def fire() -> None:
        if _armed.get(table_id, (None,))[0] == seq:
            del _armed[table_id]
        loop.create_task(run_due_async(table_id, seq), context=contextvars.Context())

    _armed[table_id] = (seq, loop.call_later(delay, fire, context=contextvars.Context()))


def saw_seq(table_id: int, seq: int) -> None:
    """The table is at ``seq`` (a change pushed to this process): a timer armed here for an earlier seq
    would find nothing to do, so it is cancelled now (on the loop)."""
    armed = _armed.get(table_id)
    if armed is not None and armed[0] < seq:
        armed[1].cancel()
        del _armed[table_id]


def thinking_pool() -> ThreadPoolExecutor:
    """The bots' own threads (neither the event loop nor the database thread)."""
    global _thinkers
    with _thinkers_lock:
        if _thinkers is None:
            _thinkers = ThreadPoolExecutor(max_workers=THINKING_THREADS, thread_name_prefix="pocha-bot")
        return _thinkers


async def run_due_async(table_id: int, seq: int) -> None:
    """``do_due`` on the server's loop: the two short transactions on the database thread, the bot's
    thinking in between on a thread of its own; the loop only waits."""
    from games.actions import Thinking, apply_due, prepare_due, think
    from games.hotpath import db

    key = (table_id, seq)
    if key in _running:
        return  # already on its way (its timer and the sweeper both found it)
    _running.add(key)
    try:
        step = await db(prepare_due, table_id, seq)
        if isinstance(step, Thinking):
            action = await asyncio.get_running_loop().run_in_executor(thinking_pool(), think, step)
            await db(apply_due, step, action)
    except Exception:
        log.exception("due step of table %s at seq %s failed", table_id, seq)
    finally:
        _running.discard(key)


def overdue_steps(limit: int = 500, slack: float = 0.0) -> list[tuple[int, int]]:
    """(table, seq) of every step whose time has come (``slack`` seconds ago at least), oldest first."""
    from games.models import Table

    return list(
        Table.objects.filter(due_at__lte=timezone.now() - timedelta(seconds=slack))
        .order_by("due_at")
        .values_list("pk", "seq")[:limit]
    )


def sweep() -> int:
    """Run every overdue step here and now (the Celery beat task, the tests); returns how many tables moved."""
    from games.actions import do_due

    moved = 0
    for table_id, seq in overdue_steps():
        try:
            if do_due(table_id, seq) is not None:
                moved += 1
        except Exception:
            log.exception("sweep of table %s failed", table_id)
    return moved


async def sweep_async(slack: float = 0.0) -> None:
    """One sweep on the server's loop: the overdue steps (by ``slack`` seconds at least) are looked up on
    the database thread, then each runs through ``run_due_async`` (so no bot thinks on the database
    thread here either)."""
    from games.hotpath import db

    overdue = await db(overdue_steps, slack=slack)
    await asyncio.gather(*(run_due_async(table_id, seq) for table_id, seq in overdue))


async def _sweep_forever() -> None:
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        try:
            await sweep_async()
        except Exception:
            log.exception("sweeper failed")
