"""Keeping the rankings: the periods in Madrid time, and the per-period totals written when a game ends.

``record_game`` runs inside the transaction of a game's last move (``games.table.actions.lifecycle.on_finish``), right
after the pot is paid, so a ranking never shows a game whose chips have not moved, nor misses one
that has.  Only finished public quick games count; private tables and bots never do.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.db.models import IntegerField, Subquery

from leaderboard.models import PeriodScore

MADRID = ZoneInfo("Europe/Madrid")
ALL_TIME = date(2000, 1, 1)
PERIODS = (PeriodScore.Period.WEEK, PeriodScore.Period.MONTH, PeriodScore.Period.ALL)


def period_start(period: str, moment: datetime) -> date:
    """The first day (in Madrid) of the ``period`` that contains ``moment``."""
    day = moment.astimezone(MADRID).date()
    if period == PeriodScore.Period.WEEK:
        return day - timedelta(days=day.weekday())
    if period == PeriodScore.Period.MONTH:
        return day.replace(day=1)
    return ALL_TIME


def next_start(period: str, start: date) -> date | None:
    """The first day of the period after the one starting on ``start`` (None for all time)."""
    if period == PeriodScore.Period.WEEK:
        return start + timedelta(days=7)
    if period == PeriodScore.Period.MONTH:
        return (start.replace(day=28) + timedelta(days=4)).replace(day=1)
    return None


def previous_start(period: str, start: date) -> date | None:
    if period == PeriodScore.Period.WEEK:
        return start - timedelta(days=7)
    if period == PeriodScore.Period.MONTH:
        return (start - timedelta(days=1)).replace(day=1)
    return None


def madrid_midnight(day: date) -> datetime:
    """00:00 in Madrid on ``day`` (an aware datetime; daylight saving is the zone's business)."""
    return datetime.combine(day, time(0), tzinfo=MADRID)


def is_final(period: str, start: date, now: datetime) -> bool:
    """A past period's ranking no longer changes."""
    end = next_start(period, start)
    return end is not None and now >= madrid_midnight(end)


class _Count(Subquery):
    """``(SELECT COUNT(*) FROM (subquery))``: a count usable as an expression."""

    template = "(SELECT COUNT(*) FROM (%(subquery)s) AS counted)"
    output_field = IntegerField()


def position_of(row: PeriodScore) -> int:
    """1 + how many rank above ``row`` in its period: more chips, or as many reached earlier (or, reached
    at the very same moment — two winners splitting a pot — by a lower user id).

    Three counts in one query rather than one count of an OR: the first two are ranges of the ranking
    index, counted from the index alone (index-only scans); only the last, rare tie needs the table.
    One count of the OR makes PostgreSQL read every row of the period from the table, which for a place far
    down a big ranking is several times slower (``make bench-ranking`` times the pages on such a ranking).
    """
    period = PeriodScore.objects.filter(period=row.period, start=row.start)
    more_chips = period.filter(net__gt=row.net)
    tied_earlier = period.filter(net=row.net, reached_at__lt=row.reached_at)
    tied_same_moment = period.filter(net=row.net, reached_at=row.reached_at, user_id__lt=row.user_id)
    counts = (
        PeriodScore.objects.filter(pk=row.pk)
        .values_list(*(_Count(rows.values("net")) for rows in (more_chips, tied_earlier, tied_same_moment)))
        .first()
    )
    if counts is None:  # a row not saved (or deleted meanwhile): the same counts, one by one
        counts = (more_chips.count(), tied_earlier.count(), tied_same_moment.count())
    return sum(counts) + 1


def record_game(results: Iterable[tuple[int, int, bool]], when: datetime) -> None:
    """Add one finished quick game to each player's week, month and all-time totals.

    ``results``: (user id, net chips, won) for every person seated; the caller leaves out bots and
    games that do not count.  The best position is kept only while the period's net is above 0.  Rows are locked in user order, then period order, so two games ending
    at once never wait on each other in a cycle.
    """
    for user_id, net, won in sorted(results):
        for period in PERIODS:
            row, created = PeriodScore.objects.select_for_update().get_or_create(
                user_id=user_id, period=period, start=period_start(period, when), defaults={"reached_at": when}
            )
            row.games += 1
            row.wins += 1 if won else 0
            if net:
                row.net += net
                row.reached_at = when
            row.save(update_fields=["games", "wins", "net", "reached_at"])
            if row.net <= 0:
                # A place is a feat only when ahead: everyone who played is ranked, so whoever played alone, or
                # lost least, is first with a loss (the profile claims no place from such a period either).
                continue
            position = position_of(row)
            if row.best_position is None or position < row.best_position:
                PeriodScore.objects.filter(pk=row.pk).update(best_position=position)
