"""Where the analyses and the practice yardsticks are worked out: never on a request or a socket.

With Redis, the Celery worker does it (``games.live.tasks.run_study``, sent when work is queued, and beat's
``sweep_study``, which catches a lost message and a worker that died mid-analysis).  Without it (the
embedded mode), a thread of the server process waits for work (``wake``) and hands each round's search to
a process of its own, so that the server's event loop never waits on the searching.

``work`` is the one loop both run: the practice yardsticks first (a few seconds each, and a person is at
that table now), then the analyses, oldest first.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from django.db import close_old_connections

from games.study import analyses, par, practice
from games.study.analyses import Compute, direct

log = logging.getLogger(__name__)


def has_work() -> bool:
    return practice.has_work() or par.has_work() or analyses.has_work()


def work(compute: Compute = direct) -> int:
    """Everything waiting, until nothing is: how many jobs were done.  Every waiting yardstick before each
    analysis (an analysis takes a minute; a yardstick, for a person at that table now, seconds)."""
    done = 0
    while True:
        while (table := practice.claim()) is not None:
            practice.run(table, compute)
            done += 1
        while (tournament := par.claim()) is not None:
            par.run(tournament, compute)
            done += 1
        analysis = analyses.claim()
        if analysis is None:
            return done
        analyses.run(analysis, compute)
        done += 1


# -- the embedded mode: a thread, and a process for the searching ---------------------------------

_wake = threading.Event()
_thread: threading.Thread | None = None
_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None

#: Seconds the thread sleeps between looks when nobody wakes it (a request in another process, say).
IDLE_LOOK = 5.0


def _in_process(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    global _pool
    if _pool is None:
        _pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    try:
        return _pool.submit(function, *args, **kwargs).result()
    except Exception as error:
        if type(error).__name__ == "BrokenProcessPool":  # the process died: a new one next time
            _pool = None
        raise


def _run_forever() -> None:
    while True:
        _wake.wait(IDLE_LOOK)
        _wake.clear()
        try:
            close_old_connections()
            if has_work():
                work(_in_process)
        except Exception:
            log.exception("the analysis worker failed; it looks again shortly")
        finally:
            close_old_connections()


def start() -> None:
    """Start the embedded worker's thread (once per process)."""
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run_forever, name="pocha-study", daemon=True)
            _thread.start()
    _wake.set()


def wake() -> None:
    """Work was queued: the embedded worker looks now (starting it if need be)."""
    start()
