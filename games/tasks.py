"""Celery tasks: the precise timer of each due step, and the beat sweeper that catches lost ones."""

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
