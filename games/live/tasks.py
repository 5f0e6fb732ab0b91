"""Celery tasks: the precise timer of each due step, the beat sweeper that catches lost ones, and the
beat sweeper of dead server processes' sockets (``games.live.presence``).

The tasks are registered as ``games.tasks.*``, not under this module's path, and must keep those names:
a timer queued by a server of one version is run by a worker of the next, which finds the task by name.  The worker imports this module through
``CELERY_IMPORTS`` (it is not an app's ``tasks`` module, which ``autodiscover_tasks`` would find)."""

from __future__ import annotations

from celery import shared_task

from games.live import presence
from games.study import worker
from games.table.actions import due
from games.tournaments import runner


@shared_task(name="games.tasks.run_due", ignore_result=True)
def run_due(table_id: int, seq: int) -> None:
    due.do_due(table_id, seq)


@shared_task(name="games.tasks.sweep_due", ignore_result=True)
def sweep_due() -> int:
    return due.sweep()


@shared_task(name="games.tasks.sweep_presence", ignore_result=True)
def sweep_presence() -> int:
    """The sockets of server processes not heard from for ``POCHA_PRESENCE_TTL`` seconds stop counting;
    seats whose presence drifted from their sockets are put right.  Returns how many rows were deleted."""
    return presence.sweep().rows


@shared_task(name="games.tasks.run_study", ignore_result=True)
def run_study() -> int:
    """Analyses and practice yardsticks waiting (``games.study.worker``), until none is: how many were done."""
    return worker.work()


@shared_task(name="games.tasks.sweep_study", ignore_result=True)
def sweep_study() -> int:
    """Beat's look for study work whose message was lost or whose worker died: done here, if any."""
    return worker.work() if worker.has_work() else 0


@shared_task(name="games.tasks.advance_tournament", ignore_result=True)
def advance_tournament(tournament_id: int) -> str:
    """One of the tournament's tables finished: its next game or its end, if due now."""
    return runner.advance(tournament_id)


@shared_task(name="games.tasks.sweep_tournaments", ignore_result=True)
def sweep_tournaments() -> int:
    """Beat's look at every tournament to start or playing (a start time passed, a late table, a lost
    message): each advanced if anything is due."""
    return runner.sweep()
