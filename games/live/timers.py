"""Timers: each table's next automatic step, run when it is due.

Every change stores ``Table.due_at``, the moment the table's next automatic step is due (a bot's move, a
person's clock running out, a quick table filling with bots, the next round's deal).  Two things act on
it, both through ``games.table.actions.due``, a compare-and-set on (table, seq) that does nothing when
the table has moved on:

* a precise timer armed after each commit (``arm``, from ``games.live.dispatch``): a Celery task with an
  ETA in services mode (``POCHA_CELERY_CLOCK``), else a ``call_later`` on the server process's own loop
  (a separate process cannot reach an in-memory channel layer).  A person's clock and the next deal are
  always a ``call_later`` in a server process, one per table, cancelled as soon as that process sees the
  table move on (``saw_seq``): the person's own move nearly always comes first, and a task per move
  would cost the worker and the database a second wave of work when the clock would have run out;
* sweepers that run every overdue step a lost timer left behind (after a restart, say): Celery beat,
  and every server process's loop (``games.live.loop``).

A bot's thought never runs inside the table's transaction, on the server's event loop, or on the one
thread Channels gives the database: ``run_due_async`` runs the two short database steps on a database
thread and the thinking on a small pool of its own; the Celery worker runs the three steps in a row.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from games.live import tasks
from games.live.hotpath import db
from games.study import worker
from games.table.actions import due as due_steps
from games.tournaments import runner

log = logging.getLogger(__name__)

SWEEP_SECONDS = 2.0
#: Threads that think for the bots in this process.  The thinking is pure Python, so more threads would
#: only share the same interpreter lock; two keep a slow decision from holding up every other table.
THINKING_THREADS = 2

#: The server process's event loop (``games.live.loop.bind_loop``); None in any other process.
_loop: asyncio.AbstractEventLoop | None = None
_thinkers: ThreadPoolExecutor | None = None
_thinkers_lock = threading.Lock()
#: Steps (table, seq) being run on this loop: the timer and the sweeper finding the same step think once.
_running: set[tuple[int, int]] = set()


def celery_clock() -> bool:
    return bool(settings.POCHA_CELERY_CLOCK)


def use_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Run this process's timers on ``loop`` from now on; the steps and timers of a previous loop (gone:
    the tests run one loop each) are forgotten."""
    global _loop
    if _loop is not loop:
        _running.clear()
        _armed.clear()
        _loop = loop


def arm(table_id: int, seq: int, due: datetime, *, person: bool = False, deal: bool = False) -> None:
    """Run ``do_due(table_id, seq)`` at ``due`` (called after commit).  ``person``: the step is a person's
    turn clock, which their own move nearly always beats: in a server process it is a timer on the
    process's own loop, cancelled as soon as the table moves on (no Celery task per move, no second wave
    of work when the clock would have run out); the sweepers play it if this process dies first.
    ``deal``: the next round's deal after the round's pause, a few queries with no thinking: in a server
    process it is a timer on its loop too (a Celery task costs more to queue and to receive than the deal
    itself); a bot's move, which thinks, goes to the worker."""
    loop = _loop
    in_server = loop is not None and not loop.is_closed()
    if celery_clock() and not ((person or deal) and in_server):
        try:
            tasks.run_due.apply_async((table_id, seq), eta=due)
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


def queue_study() -> None:
    """Analyses or a practice yardstick were queued (called after commit): the Celery worker is sent for,
    or, without Celery, this process's own analysis thread wakes (if it runs one, ``POCHA_ANALYSIS_THREAD``).
    A lost message costs nothing: beat's ``sweep_study`` finds the work within seconds."""
    if celery_clock():
        try:
            tasks.run_study.apply_async()
        except Exception:
            log.warning("the analysis worker could not be sent for; beat's sweep will find the work", exc_info=True)
    elif settings.POCHA_ANALYSIS_THREAD:
        worker.wake()


def advance_tournament(tournament_id: int) -> None:
    """One of the tournament's tables finished (called after commit): the tournament moves on now — in the
    Celery worker, or on a database thread of this server process.  A lost message costs a few seconds:
    the sweepers advance every playing tournament."""
    if celery_clock():
        try:
            tasks.advance_tournament.apply_async((tournament_id,))
        except Exception:
            log.warning("tournament %s: the worker could not be sent for; the sweep will", tournament_id, exc_info=True)
        return
    loop = _loop
    if loop is None or loop.is_closed():
        return  # no server loop here (a management command, a test): the sweep will
    loop.call_soon_threadsafe(_advance_soon, loop, tournament_id, context=contextvars.Context())


def _advance_soon(loop: asyncio.AbstractEventLoop, tournament_id: int) -> None:
    loop.create_task(advance_tournament_async(tournament_id), context=contextvars.Context())


async def advance_tournament_async(tournament_id: int) -> None:
    try:
        await db(runner.advance, tournament_id)
    except Exception:
        log.exception("tournament %s could not advance", tournament_id)


async def sweep_tournaments_async() -> None:
    """The server's own sweep of the tournaments (without Celery)."""
    await db(runner.sweep)


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
    key = (table_id, seq)
    if key in _running:
        return  # already on its way (its timer and the sweeper both found it)
    _running.add(key)
    try:
        step = await db(due_steps.prepare_due, table_id, seq)
        if isinstance(step, due_steps.Thinking):
            action = await asyncio.get_running_loop().run_in_executor(thinking_pool(), due_steps.think, step)
            await db(due_steps.apply_due, step, action)
    except Exception:
        log.exception("due step of table %s at seq %s failed", table_id, seq)
    finally:
        _running.discard(key)


async def sweep_async(slack: float = 0.0) -> None:
    """One sweep on the server's loop: the overdue steps (by ``slack`` seconds at least) are looked up on
    the database thread, then each runs through ``run_due_async`` (so no bot thinks on the database
    thread here either)."""
    overdue = await db(due_steps.overdue_steps, slack=slack)
    await asyncio.gather(*(run_due_async(table_id, seq) for table_id, seq in overdue))
