"""The rankings recomputed from their sources: the ledger's chips and the finished games' seats.

The kept totals (``leaderboard.scores.record_game``, written as each game ends) must equal these; the
tests check it (``tests/leaderboard/test_ranking_game.py``)."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

from accounts.models import Entry
from games.models import Seat, Table
from leaderboard.scores import PERIODS, period_start


def rebuild_ranking_totals() -> dict[tuple[int, str, date], dict[str, Any]]:
    """Every (user, period, start) total recomputed from the ledger and the finished games' seats —
    what the kept rows must equal."""
    totals: dict[tuple[int, str, date], dict[str, Any]] = defaultdict(lambda: {"net": 0, "games": 0, "wins": 0})
    tables = {t.pk: t for t in Table.objects.filter(status=Table.Status.FINISHED, is_public=True, is_quick=True)}
    nets: dict[tuple[int, int], int] = defaultdict(int)
    for table_id, user_id, amount in Entry.objects.filter(
        transaction__table_id__in=tables, account__kind="user"
    ).values_list("transaction__table_id", "account__user_id", "amount"):
        nets[(table_id, user_id)] += amount
    for seat in Seat.objects.filter(table_id__in=tables, is_bot=False, user__isnull=False):
        table = tables[seat.table_id]
        assert table.finished_at is not None
        for period in PERIODS:
            total = totals[(seat.user_id, period, period_start(period, table.finished_at))]
            total["net"] += nets[(table.pk, seat.user_id)]
            total["games"] += 1
            total["wins"] += 1 if seat.place == 1 else 0
    return dict(totals)
