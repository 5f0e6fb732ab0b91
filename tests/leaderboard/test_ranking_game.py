"""Whole games through ``games.table.actions``: a staked quick game moves its players' rankings by exactly the
chips the ledger moved; a private game and the bots never appear; the kept totals equal a rebuild."""

from __future__ import annotations

import pytest
from django.db.models import Sum
from live.helpers import play_to_the_end

from accounts.models import Entry
from games.models import Seat, Table
from games.read.rankings import rebuild_ranking_totals
from games.table import actions
from leaderboard import scores
from leaderboard.models import PeriodScore

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def bots_without_pauses(settings):
    settings.POCHA_BOT_DELAY = 0


def fill_with_bots_now(table: Table) -> None:
    """The quick table's wait is over: the clock's step fills it with bots and starts."""
    from datetime import timedelta

    from django.utils import timezone

    Table.objects.filter(pk=table.pk).update(due_at=timezone.now() - timedelta(seconds=1))
    table = Table.objects.get(pk=table.pk)
    assert actions.do_due(table.pk, table.seq) is not None


def kept_totals() -> dict:
    return {
        (r.user_id, r.period, r.start): {"net": r.net, "games": r.games, "wins": r.wins}
        for r in PeriodScore.objects.all()
    }


def test_a_staked_quick_game_then_a_private_one(client, django_user_model):
    human = django_user_model.objects.create_user(username="jugadora", password="x-cuarenta-bazas")

    table = actions.do_quick_play(human, 3, 100)
    fill_with_bots_now(table)
    table = play_to_the_end(table.pk)
    assert table.status == Table.Status.FINISHED
    seat = Seat.objects.get(table=table, user=human)
    net = seat.winnings - 100
    # what the ledger says this game did to her chips
    assert Entry.objects.filter(transaction__table=table, account__user=human).aggregate(s=Sum("amount"))["s"] == net

    rows = PeriodScore.objects.filter(user=human)
    assert {r.period for r in rows} == {"week", "month", "all"}
    for row in rows:
        assert (row.net, row.games, row.wins) == (net, 1, 1 if seat.place == 1 else 0)
        assert row.start == scores.period_start(row.period, table.finished_at)
    # bots never rank
    assert PeriodScore.objects.exclude(user=human).count() == 0
    assert kept_totals() == rebuild_ranking_totals()

    # A private game at 100 a seat, with bots, played to the end: it changes her chips, not her ranking.
    private = actions.do_create_private_table(human, 3, 100, True)
    actions.do_start(private.pk, human)
    private = play_to_the_end(private.pk)
    assert private.status == Table.Status.FINISHED and not private.is_public
    assert Entry.objects.filter(transaction__table=private, account__user=human).exists()
    assert [(r.net, r.games) for r in PeriodScore.objects.filter(user=human)] == [(net, 1)] * 3
    assert kept_totals() == rebuild_ranking_totals()

    # The page shows her row with that net, signed, and her games and wins.
    from accounts.templatetags.chips import format_chips

    signed = format_chips(net, "es")
    signed = signed if signed.startswith("−") or signed == "0" else "+" + signed
    client.force_login(human)
    for url in ["/clasificacion/", "/clasificacion/mes/", "/clasificacion/siempre/"]:
        html = client.get(url).content.decode()
        assert '<a href="/jugador/jugadora/">jugadora</a>' in html
        assert f"Tu puesto: <strong>1</strong> · {signed} fichas" in html
        assert "Bot " not in html
