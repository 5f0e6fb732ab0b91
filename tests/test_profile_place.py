"""A profile claims a place in a ranking only when it means something (issue 43): the rankings place everyone who
played a period by their net chips, so whoever played alone, or lost least, is «1.º» with a loss.  The best
position is kept only while the period's net is above 0 (``leaderboard.scores.record_game``, which every finished
quick game goes through), and the profile claims none from a period the person came out of behind
(``games.read.profiles.chip_stats``)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from django.utils.formats import date_format
from live.helpers import person

from games.read.profiles import chip_stats
from leaderboard.models import PeriodScore
from leaderboard.scores import record_game

pytestmark = pytest.mark.django_db


def best_line(user: Any, viewer: Any, language: str = "es") -> str:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(viewer)
    page = client.get(f"/jugador/{user.username}/").content.decode()
    match = re.search(r'<p id="best-position">(.*?)</p>', page, re.S)
    assert match
    return " ".join(re.sub(r"<[^>]+>", "", match.group(1)).split())


def test_losing_every_game_alone_in_the_ranking_claims_no_place() -> None:
    now = timezone.now()
    ana, bea = person("ana"), person("bea")
    for _ in range(3):  # three games lost, alone in this week's, month's and all-time rankings
        record_game([(ana.pk, -100, False)], now)
    rows = PeriodScore.objects.filter(user=ana)
    assert {(r.net, r.games, r.wins) for r in rows} == {(-300, 3, 0)} and len(rows) == 3
    assert not rows.filter(best_position__isnull=False).exists()  # first of one, with a loss: not kept
    assert chip_stats(ana.pk, now)["best"] is None
    assert best_line(ana, ana) == "Mejor puesto alcanzado: todavía ninguno"
    assert best_line(ana, bea, "en") == "Best position reached: none yet"

    # a winner's place is claimed; and the loser who then wins back into the black claims her place then
    record_game([(bea.pk, 200, True)], now)
    assert best_line(bea, ana).startswith("Mejor puesto alcanzado: 1.º en la clasificación ")
    record_game([(ana.pk, 400, True)], now)  # +100 in each period, behind bea's +200: 2nd
    assert set(PeriodScore.objects.filter(user=ana).values_list("net", "best_position")) == {(100, 2)}
    assert best_line(ana, ana).startswith("Mejor puesto alcanzado: 2.º en la clasificación")


def test_a_place_kept_before_is_not_claimed_from_a_period_ended_behind() -> None:
    """Rows kept before the rule (a best position measured at a loss) claim nothing while the net is not above 0."""
    now = timezone.now()
    ana = person("ana")
    record_game([(ana.pk, 100, True)], now)
    assert set(PeriodScore.objects.filter(user=ana).values_list("best_position", flat=True)) == {1}
    assert chip_stats(ana.pk, now)["best"] is not None
    PeriodScore.objects.filter(user=ana).update(net=-300)
    assert chip_stats(ana.pk, now)["best"] is None
    assert best_line(ana, ana) == "Mejor puesto alcanzado: todavía ninguno"
    PeriodScore.objects.filter(user=ana, period=PeriodScore.Period.MONTH).update(net=50)
    best = chip_stats(ana.pk, now)["best"]
    assert (best.position, best.period) == (1, PeriodScore.Period.MONTH)
    month = date_format(timezone.localtime(now).date(), "YEAR_MONTH_FORMAT")  # «diciembre de 2026»
    assert best_line(ana, ana) == f"Mejor puesto alcanzado: 1.º en la clasificación del mes de {month}"
