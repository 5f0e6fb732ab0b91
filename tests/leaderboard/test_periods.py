"""Period boundaries in Madrid time: a week starts on Monday at 00:00, a month on the 1st at 00:00, whatever
the UTC offset of the day (+1 in winter, +2 in summer, changing on the last Sundays of March and October)."""

from __future__ import annotations

from datetime import date

import pytest
from ranking_helpers import freeze, madrid, make_users, utc

from leaderboard import scores
from leaderboard.models import PeriodScore

pytestmark = pytest.mark.django_db

WEEK, MONTH, ALL = PeriodScore.Period.WEEK, PeriodScore.Period.MONTH, PeriodScore.Period.ALL


@pytest.mark.parametrize(
    "moment, week, month",
    [
        # Sunday 23:59:59 and Monday 00:00 in Madrid (winter, UTC+1): Monday 30 November starts at 23:00 UTC.
        (utc(2026, 11, 29, 22, 59, 59), date(2026, 11, 23), date(2026, 11, 1)),
        (utc(2026, 11, 29, 23, 0, 0), date(2026, 11, 30), date(2026, 11, 1)),
        # The 1st of a winter month: 1 December starts at 23:00 UTC on 30 November.
        (utc(2026, 11, 30, 22, 59, 59), date(2026, 11, 30), date(2026, 11, 1)),
        (utc(2026, 11, 30, 23, 0, 0), date(2026, 11, 30), date(2026, 12, 1)),
        # Summer time begins on Sunday 29 March 2026 (02:00 -> 03:00): that Sunday ends at 22:00 UTC.
        # A fixed UTC+1 would put 22:30 UTC on Sunday 23:30, in the wrong week.
        (utc(2026, 3, 29, 21, 59, 59), date(2026, 3, 23), date(2026, 3, 1)),
        (utc(2026, 3, 29, 22, 0, 0), date(2026, 3, 30), date(2026, 3, 1)),
        (utc(2026, 3, 29, 22, 30, 0), date(2026, 3, 30), date(2026, 3, 1)),
        # ... and in summer 1 April starts at 22:00 UTC on 31 March.
        (utc(2026, 3, 31, 21, 59, 59), date(2026, 3, 30), date(2026, 3, 1)),
        (utc(2026, 3, 31, 22, 0, 0), date(2026, 3, 30), date(2026, 4, 1)),
        # Summer time ends on Sunday 25 October 2026 (03:00 -> 02:00): Monday 26 starts at 23:00 UTC.
        # A fixed UTC+2 would put 22:30 UTC on Monday 00:30, in the wrong week.
        (utc(2026, 10, 25, 22, 30, 0), date(2026, 10, 19), date(2026, 10, 1)),
        (utc(2026, 10, 25, 22, 59, 59), date(2026, 10, 19), date(2026, 10, 1)),
        (utc(2026, 10, 25, 23, 0, 0), date(2026, 10, 26), date(2026, 10, 1)),
        # The night of the change itself: 00:30 and 02:30 (twice) on Sunday 25 October are all that Sunday.
        (madrid(2026, 10, 25, 2, 30, fold=0), date(2026, 10, 19), date(2026, 10, 1)),
        (madrid(2026, 10, 25, 2, 30, fold=1), date(2026, 10, 19), date(2026, 10, 1)),
        # 1 November (winter again) starts at 23:00 UTC on 31 October; summer's +2 would say 22:00.
        (utc(2026, 10, 31, 22, 30, 0), date(2026, 10, 26), date(2026, 10, 1)),
        (utc(2026, 10, 31, 23, 0, 0), date(2026, 10, 26), date(2026, 11, 1)),
    ],
)
def test_period_start_follows_madrid_midnight(moment, week, month):
    assert scores.period_start(WEEK, moment) == week
    assert scores.period_start(MONTH, moment) == month
    assert scores.period_start(ALL, moment) == scores.ALL_TIME


def test_madrid_midnight_has_the_day_s_own_offset():
    assert scores.madrid_midnight(date(2026, 3, 30)) == utc(2026, 3, 29, 22)  # summer: +2
    assert scores.madrid_midnight(date(2026, 3, 29)) == utc(2026, 3, 28, 23)  # the change's day begins at +1
    assert scores.madrid_midnight(date(2026, 10, 26)) == utc(2026, 10, 25, 23)  # winter: +1
    assert scores.madrid_midnight(date(2026, 10, 25)) == utc(2026, 10, 24, 22)  # that day begins at +2


def test_neighbouring_periods():
    assert scores.next_start(WEEK, date(2026, 12, 28)) == date(2027, 1, 4)
    assert scores.previous_start(WEEK, date(2027, 1, 4)) == date(2026, 12, 28)
    assert scores.next_start(MONTH, date(2026, 12, 1)) == date(2027, 1, 1)
    assert scores.previous_start(MONTH, date(2026, 3, 1)) == date(2026, 2, 1)
    assert scores.next_start(MONTH, date(2028, 2, 1)) == date(2028, 3, 1)
    assert scores.next_start(ALL, scores.ALL_TIME) is None


@pytest.mark.parametrize(
    "last_moment_in, first_moment_after, period, start",
    [
        (utc(2026, 3, 29, 21, 59, 59), utc(2026, 3, 29, 22), WEEK, date(2026, 3, 23)),
        (utc(2026, 10, 25, 22, 59, 59), utc(2026, 10, 25, 23), WEEK, date(2026, 10, 19)),
        (utc(2026, 3, 31, 21, 59, 59), utc(2026, 3, 31, 22), MONTH, date(2026, 3, 1)),
        (utc(2026, 10, 31, 22, 59, 59), utc(2026, 10, 31, 23), MONTH, date(2026, 10, 1)),
    ],
)
def test_a_period_is_final_from_the_madrid_midnight_that_ends_it(last_moment_in, first_moment_after, period, start):
    assert not scores.is_final(period, start, last_moment_in)
    assert scores.is_final(period, start, first_moment_after)
    assert not scores.is_final(ALL, scores.ALL_TIME, first_moment_after)


def test_games_either_side_of_monday_midnight_count_in_their_own_weeks():
    """Two games a second apart, across Monday 00:00 in Madrid, in the autumn week of the clock change."""
    sunday_player, monday_player = make_users("borde", 2)
    scores.record_game([(sunday_player.pk, 300, True)], madrid(2026, 10, 25, 23, 59, 59))  # 22:59:59 UTC
    scores.record_game([(monday_player.pk, 100, True)], madrid(2026, 10, 26, 0, 0, 0))  # 23:00:00 UTC
    weeks = dict(PeriodScore.objects.filter(period=WEEK).values_list("user_id", "start"))
    assert weeks == {sunday_player.pk: date(2026, 10, 19), monday_player.pk: date(2026, 10, 26)}
    months = set(PeriodScore.objects.filter(period=MONTH).values_list("start", flat=True))
    assert months == {date(2026, 10, 1)}


def test_games_either_side_of_the_first_count_in_their_own_months():
    """31 March 23:59:59 and 1 April 00:00 in Madrid, two days after summer time began."""
    march, april = make_users("mes", 2)
    scores.record_game([(march.pk, -100, False)], madrid(2026, 3, 31, 23, 59, 59))
    scores.record_game([(april.pk, 500, True)], madrid(2026, 4, 1, 0, 0, 0))
    months = dict(PeriodScore.objects.filter(period=MONTH).values_list("user_id", "start"))
    assert months == {march.pk: date(2026, 3, 1), april.pk: date(2026, 4, 1)}
    assert set(PeriodScore.objects.filter(period=WEEK).values_list("start", flat=True)) == {date(2026, 3, 30)}
    assert PeriodScore.objects.filter(period=ALL).count() == 2


def test_the_page_turns_to_the_new_week_at_madrid_midnight(client, monkeypatch):
    sunday_player, monday_player = make_users("reloj", 2)
    scores.record_game([(sunday_player.pk, 300, True)], utc(2026, 3, 29, 21, 59, 59))  # Sunday 23:59:59 (+2)
    scores.record_game([(monday_player.pk, 100, True)], utc(2026, 3, 29, 22, 0, 0))  # Monday 00:00 (+2)

    freeze(monkeypatch, utc(2026, 3, 29, 21, 59, 59))  # Sunday 23:59:59: the week of the 23rd is on
    html = client.get("/clasificacion/").content.decode()
    assert "reloj000" in html and "reloj001" not in html
    assert "Periodo cerrado" not in html
    assert client.get("/clasificacion/semana/2026-03-30/").status_code == 404  # not yet begun

    freeze(monkeypatch, utc(2026, 3, 29, 22, 0, 0))  # Monday 00:00 in Madrid
    html = client.get("/clasificacion/").content.decode()
    assert "reloj001" in html and "reloj000" not in html
    past = client.get("/clasificacion/semana/2026-03-23/").content.decode()
    assert "reloj000" in past and "Periodo cerrado: esta clasificación ya es definitiva." in past


def test_the_page_turns_to_the_new_month_at_madrid_midnight_on_the_first(client, monkeypatch):
    october, november = make_users("otono", 2)
    scores.record_game([(october.pk, 300, True)], utc(2026, 10, 31, 22, 59, 59))  # 23:59:59 (+1)
    scores.record_game([(november.pk, 100, True)], utc(2026, 10, 31, 23, 0, 0))  # 1 November 00:00

    freeze(monkeypatch, utc(2026, 10, 31, 22, 59, 59))
    html = client.get("/clasificacion/mes/").content.decode()
    assert "otono000" in html and "otono001" not in html
    assert "Periodo cerrado" not in client.get("/clasificacion/mes/2026-10-01/").content.decode()
    assert client.get("/clasificacion/mes/2026-11-01/").status_code == 404

    freeze(monkeypatch, utc(2026, 10, 31, 23, 0, 0))
    html = client.get("/clasificacion/mes/").content.decode()
    assert "otono001" in html and "otono000" not in html
    past = client.get("/clasificacion/mes/2026-10-01/").content.decode()
    assert "otono000" in past and "Periodo cerrado: esta clasificación ya es definitiva." in past
