"""The next round's deal, after a round's pause, is a timer on the server process's own loop in services
mode (like a person's turn clock), not a Celery task; a bot's move still goes to the worker, and outside a
server process (a management command, the worker itself) every step is a task."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from games.engine import Phase, default_action
from games.engine.snapshot import load
from games.live import timers
from games.live.tasks import run_due
from games.models import Seat, Table
from games.table import actions

from .helpers import seated_table


@pytest.fixture
def queued(settings, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """The Celery clock on, and what would be queued to the worker recorded instead."""
    settings.POCHA_CELERY_CLOCK = True
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(run_due, "apply_async", lambda args, **kwargs: calls.append(tuple(args)))
    return calls


@pytest.mark.asyncio
async def test_in_a_server_process_a_deal_is_a_timer_on_its_loop_and_a_bots_move_a_task(queued) -> None:
    loop = asyncio.get_running_loop()
    saved = timers._loop
    timers._loop = loop
    try:
        soon = timezone.now() + timedelta(seconds=30)
        timers.arm(9001, 12, soon, deal=True)
        timers.arm(9002, 5, soon, person=True)
        timers.arm(9003, 7, soon)  # a bot's move (or away, or a table to fill)
        await asyncio.sleep(0)  # call_soon_threadsafe: the timers are set on the loop's next turn
        assert queued == [(9003, 7)]
        assert timers._armed[9001][0] == 12 and timers._armed[9002][0] == 5 and 9003 not in timers._armed
        timers.saw_seq(9001, 13)  # the table moved on (someone dealt it): the timer goes
        assert 9001 not in timers._armed
    finally:
        for _seq, handle in timers._armed.values():
            handle.cancel()
        timers._armed.clear()
        timers._loop = saved


def test_outside_a_server_process_a_deal_is_a_task(queued) -> None:
    saved = timers._loop
    timers._loop = None
    try:
        timers.arm(9001, 12, timezone.now() + timedelta(seconds=3), deal=True)
    finally:
        timers._loop = saved
    assert queued == [(9001, 12)]


@pytest.mark.django_db(transaction=True)
def test_the_end_of_a_round_arms_its_deal_as_a_deal(settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through ``do_action``: the commit that ends a round (its pause asked for) arms the deal with
    ``deal=True`` and no person's clock; the moves before it arm a person's clock, and nothing before it
    is a deal."""
    settings.POCHA_ROUND_PAUSE = 5
    armed: list[tuple[int, dict[str, Any]]] = []
    monkeypatch.setattr(timers, "arm", lambda table_id, seq, due, **kw: armed.append((seq, kw)))
    table_id, _users = seated_table(4, 4, prefix="reparto")
    while (table := Table.objects.get(pk=table_id)).phase != Phase.ROUND_OVER.value:
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        actions.do_action(table_id, seat.user, default_action(load(table.state)), table.seq)
    assert armed[-1] == (table.seq, {"person": False, "deal": True})
    assert table.due_at is not None and table.due_at > timezone.now()
    assert not any(kw["deal"] for _seq, kw in armed[:-1])
    assert [kw for _seq, kw in armed[-5:-1]] == [{"person": True, "deal": False}] * 4  # the round's moves
