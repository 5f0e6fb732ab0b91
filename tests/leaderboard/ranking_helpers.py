"""Building rankings quickly: users and period rows written directly, and a clock the views can read."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model
from django.utils import timezone

from leaderboard.models import PeriodScore

UTC = ZoneInfo("UTC")
MADRID = ZoneInfo("Europe/Madrid")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def madrid(*args: int, fold: int = 0) -> datetime:
    return datetime(*args, tzinfo=MADRID, fold=fold)


def make_users(prefix: str, n: int) -> list:
    """``n`` users in one insert (no welcome grant: the rankings do not read wallets)."""
    User = get_user_model()
    User.objects.bulk_create([User(username=f"{prefix}{i:03d}", password="!") for i in range(n)])
    return list(User.objects.filter(username__startswith=prefix).order_by("username"))


def add_scores(rows: list[tuple], period: str, start: date) -> None:
    """``rows``: (user, net, games, wins, reached_at)."""
    PeriodScore.objects.bulk_create(
        [
            PeriodScore(user=user, period=period, start=start, net=net, games=games, wins=wins, reached_at=reached)
            for user, net, games, wins, reached in rows
        ]
    )


def freeze(monkeypatch, moment: datetime) -> None:
    """What ``timezone.now()`` answers from now on, for the views and for ``record_game``'s callers."""
    monkeypatch.setattr(timezone, "now", lambda: moment)
