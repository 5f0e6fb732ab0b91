"""Celery tasks: the precise timer of each due step, the beat sweeper that catches lost ones, and the
beat sweeper of dead server processes' sockets (``games.presence``)."""

from __future__ import annotations

from celery import shared_task

from games import timers


@shared_task(ignore_result=True)
def run_due(table_id: int, seq: int) -> None:
    from games.actions import do_due

    do_due(table_id, seq)


@shared_task(ignore_result=True)
def sweep_due() -> int:
    return timers.sweep()


@shared_task(ignore_result=True)
def sweep_presence() -> int:
    """The sockets of server processes not heard from for ``POCHA_PRESENCE_TTL`` seconds stop counting;
    seats whose presence drifted from their sockets are put right.  Returns how many rows were deleted."""
    from games import presence

    return presence.sweep().rows
