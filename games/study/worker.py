"""Where the analyses and the practice yardsticks are worked out: never on a request or a socket.

With Redis, the Celery worker does it (``games.live.tasks.run_study``, sent when work is queued, and beat's
``sweep_study``, which catches a lost message and a worker that died mid-analysis).  Without it (the
embedded mode), a thread of the server process waits for work (``wake``) and hands each round's search to
a process of its own, so that the server's event loop never waits on the searching.

``work`` is the one loop both run: the practice yardsticks first (a few seconds each, and a person is at
that table now), then the analyses, oldest first.

A worker that dies mid-job (killed, its machine gone) leaves its claim behind; the next worker that looks
takes the job up again once its claimer has been silent for ``POCHA_ANALYSIS_STALE`` seconds (10).  So a
live worker must never be silent that long, however long a search takes: ``beating`` runs each search away
from the job's own thread (in a thread, or the process of its own), and the job's thread signs the job's
life every fifth of that time while it waits (an analysis's ``beat_at``; the «working» mark of a yardstick
or a par), through its own database connection.  A worker that finds its claim taken stops signing (and an
analysis stops at its next round: its writes are compare-and-sets on its claim).  Beat's ``sweep_study``
(every 2 s), a Celery worker that starts (``pocha_site.celery``) and, without Redis, the server's thread
(every ``IDLE_LOOK`` seconds) look for such jobs; a server that starts without Redis takes up at once the
jobs its previous run left (``release_held``).
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from games.models import Analysis, Table, Tournament
from games.study import analyses, par, practice
from games.study.analyses import Compute, direct
from games.table.actions import practice as practice_actions

log = logging.getLogger(__name__)


def has_work() -> bool:
    return practice.has_work() or par.has_work() or analyses.has_work()


#: A job held with no sign of life at all (taken up at once).
NEVER = datetime.min.replace(tzinfo=UTC)


def next_takeover() -> float | None:
    """Seconds from now until the first job held by a worker now falls silent long enough to be taken up (0
    if one already has): None if no worker holds one.  A worker that starts looks then, for the jobs its dead
    predecessor held."""
    signs: list[datetime] = []
    for beat_at in Analysis.objects.filter(status=Analysis.Status.RUNNING).values_list("beat_at", flat=True):
        signs.append(beat_at or NEVER)
    held = [
        *Table.objects.filter(practice_baseline__has_key="working").values_list("practice_baseline", flat=True),
        *Tournament.objects.filter(par__has_key="working").values_list("par", flat=True),
    ]
    for mark in held:
        try:
            signs.append(datetime.fromisoformat(mark["working"]))
        except (TypeError, ValueError):
            signs.append(NEVER)
    if not signs:
        return None
    silent_for = (timezone.now() - min(signs)).total_seconds()
    return max(0.0, float(settings.POCHA_ANALYSIS_STALE) - silent_for)


def work(compute: Compute = direct) -> int:
    """Everything waiting, until nothing is: how many jobs were done.  Every waiting yardstick before each
    analysis (an analysis takes a minute; a yardstick, for a person at that table now, seconds).  Each job's
    searching runs while the job signs its life (``beating``)."""
    done = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pocha-search") as searcher:
        while True:
            while (table := practice.claim()) is not None:
                practice.run(table, beating(compute, practice_mark(table).touch, searcher))
                done += 1
            while (tournament := par.claim()) is not None:
                par.run(tournament, beating(compute, par_mark(tournament).touch, searcher))
                done += 1
            analysis = analyses.claim()
            if analysis is None:
                return done
            analyses.run(analysis, beating(compute, functools.partial(analyses.touch, analysis), searcher))
            done += 1


def beat_every() -> float:
    """Seconds between a working job's signs of life: a fifth of the silence after which it is taken up."""
    return max(0.05, float(settings.POCHA_ANALYSIS_STALE) / 5)


def beating(compute: Compute, touch: Callable[[], bool], searcher: ThreadPoolExecutor) -> Compute:
    """``compute``, run on ``searcher``'s thread while this thread calls ``touch`` (the job's sign of life,
    through this thread's database connection) every ``beat_every`` seconds until the search is done.  Once
    ``touch`` says the job is no longer this worker's, it is not called again (the search's result is still
    returned: the job's own writes are compare-and-sets, or the same result twice)."""
    alive = True

    def computed(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        nonlocal alive
        future: Future[Any] = searcher.submit(compute, function, *args, **kwargs)
        while not wait([future], timeout=beat_every(), return_when=FIRST_COMPLETED).done:
            if alive:
                try:
                    alive = touch()
                except Exception:
                    log.warning("a study job could not sign its life; it tries again", exc_info=True)
                if not alive:
                    log.warning("a study job was taken up by another worker; this one stops signing it")
        return future.result()

    return computed


class _Mark:
    """A practice yardstick's or a par's «working» mark (``practice.claim``, ``par.claim``: the time of the
    claim, in the job's JSON field), renewed while the job runs by ``renew`` (``renew(last, mark)``: a
    compare-and-set on the mark last written, ``practice_actions.renew_baseline_mark`` or ``par.renew_mark``)."""

    def __init__(self, mark: Any, renew: Callable[[Any, dict[str, str]], bool]) -> None:
        self.mark = mark
        self.renew = renew

    def touch(self) -> bool:
        mark = {"working": timezone.now().isoformat()}
        if not self.renew(self.mark, mark):
            return False
        self.mark = mark
        return True


def practice_mark(table: Table) -> _Mark:
    """The «working» mark of the practice yardstick ``table`` holds as claimed (``practice.claim``)."""
    return _Mark(table.practice_baseline, functools.partial(practice_actions.renew_baseline_mark, table.pk))


def par_mark(tournament: Tournament) -> _Mark:
    """The «working» mark of the par ``tournament`` holds as claimed (``par.claim``)."""
    return _Mark(tournament.par, functools.partial(par.renew_mark, tournament.pk))


# -- the embedded mode: a thread, and a process for the searching ---------------------------------

_wake = threading.Event()
_thread: threading.Thread | None = None
_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None

#: Seconds the thread sleeps between looks when nobody wakes it (a request in another process, or a job whose
#: worker died and falls silent: taken up at most this long after ``POCHA_ANALYSIS_STALE``).
IDLE_LOOK = 2.0


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


def release_held() -> int:
    """Every job held by a worker made free to be taken up at once: how many.  For a server that starts
    without Redis: it alone works out the site's jobs (a site without Redis is served by one process), so a
    job held now was left by its previous life, killed mid-way.  (Were another process working one out, it
    would lose its claim and stop at its next write: the claims are compare-and-sets.)"""
    freed = Analysis.objects.filter(status=Analysis.Status.RUNNING).update(beat_at=None)
    long_ago = {"working": NEVER.isoformat()}
    freed += practice_actions.release_baseline_marks(long_ago)
    freed += par.release_marks(long_ago)
    return freed


def _run_forever(release: bool) -> None:
    if release:
        try:
            if freed := release_held():
                log.warning("%s study job(s) left mid-way by this server's previous run: taken up again", freed)
        except Exception:
            log.exception("the jobs left by a previous run could not be freed; they are taken up once silent")
        finally:
            close_old_connections()
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


def start(release: bool = True) -> None:
    """Start the embedded worker's thread (once per process) and have it look now.  A server starting
    (``games.live.loop.bind_loop``) first frees the jobs its previous run held (``release_held``)."""
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run_forever, args=(release,), name="pocha-study", daemon=True)
            _thread.start()
    _wake.set()


def wake() -> None:
    """Work was queued: the embedded worker looks now (starting it if need be, in a process that is not a
    server's too: a command's, which frees nothing)."""
    start(release=False)
