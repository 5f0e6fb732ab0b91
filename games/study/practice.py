"""«Juega esta mano»'s yardstick: what difícil makes of the person's seat on the practice table's deal.

The practice table itself is a table write (``games.table.actions.practice``).  Once it exists, the worker
plays the same round of the same deal again from scratch, difícil in the person's seat and bots of the
table's level in the others (``games.engine.analysis.play_round``, seeded by the table: the same table
gives the same yardstick), and keeps that seat's bid, tricks and points on the table.  The board's end
of the hand compares the three: the person now, the person in the game, and difícil.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from games.engine import analysis as engine_analysis
from games.engine import levels
from games.models import Table
from games.study.analyses import Compute, direct
from games.table import events, history

log = logging.getLogger(__name__)

#: Worlds for each decision of the yardstick's round (None: each level's own fixed number, difícil's about what
#: it reaches in its thinking time; seeded, so the same every time).
BASELINE_WORLDS: int | None = None


def _waiting() -> Q:
    """Practice tables whose yardstick is missing: never started, or started by a worker gone quiet."""
    cutoff = (timezone.now() - timedelta(seconds=float(settings.POCHA_ANALYSIS_STALE))).isoformat()
    return Q(practice_of__isnull=False, practice_round__isnull=False) & (
        Q(practice_baseline__isnull=True) | Q(practice_baseline__working__lt=cutoff)
    )


def has_work() -> bool:
    return Table.objects.filter(_waiting()).exclude(status=Table.Status.CANCELLED).exists()


def claim() -> Table | None:
    """A practice table without its yardstick, now this worker's (compare-and-set on the field)."""
    for _attempt in range(5):
        row = (
            Table.objects.filter(_waiting())
            .exclude(status=Table.Status.CANCELLED)
            .order_by("pk")
            .values_list("pk", "practice_baseline")
            .first()
        )
        if row is None:
            return None
        pk, before = row
        mark = {"working": timezone.now().isoformat()}
        # (a JSON field's None in a filter means JSON's null, not a missing value: ask for that explicitly)
        same = Q(practice_baseline__isnull=True) if before is None else Q(practice_baseline=before)
        won = Table.objects.filter(same, pk=pk).update(practice_baseline=mark)
        if won:
            return Table.objects.get(pk=pk)
    return None


def record_round(record: dict[str, Any], number: int) -> int:
    """Which of the record's rounds (from 1) is round ``number`` of the schedule (a practice table's
    ``practice_round``): the same, but in a game of some rounds of the schedule (a tournament's deals, the
    record's ``rounds_played``) its place among them (ValueError if the game did not play it)."""
    chosen = record.get("rounds_played")
    return number if chosen is None else list(chosen).index(number) + 1


def run(table: Table, compute: Compute = direct) -> dict[str, Any] | None:
    """Play difícil's round in the person's seat and keep its result on the table; the result."""
    source = table.practice_of
    assert source is not None and table.practice_round is not None and table.practice_seat is not None
    record = history.record(source)
    if record is None:
        Table.objects.filter(pk=table.pk).update(practice_baseline={"error": "no record"})
        return None
    seat = table.practice_seat
    seat_levels = [table.bot_level] * table.size
    seat_levels[seat] = levels.DIFICIL
    try:
        played = compute(
            engine_analysis.play_round,
            record,
            record_round(record, table.practice_round),
            seat_levels,
            seed=table.seed if table.seed is not None else table.pk,
            worlds=BASELINE_WORLDS,
        )
    except Exception as error:
        log.exception("the yardstick of practice table %s failed", table.pk)
        Table.objects.filter(pk=table.pk).update(practice_baseline={"error": f"{type(error).__name__}"})
        return None
    result = {"bid": played["bids"][seat], "tricks": played["tricks"][seat], "points": played["points"][seat]}
    Table.objects.filter(pk=table.pk).update(practice_baseline=result)
    events.emit(events.Redraw(table.pk))  # a board already at the end of the hand shows it
    return result
