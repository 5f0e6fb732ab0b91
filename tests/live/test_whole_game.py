"""A person plays whole games against bots through the real WebSocket consumer and database."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from games.models import Round, Table
from games.table import actions

from .helpers import Player, check_the_log, make_user, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture(autouse=True)
def fast_bots(settings, celery_clock_worker):
    settings.POCHA_BOT_DELAY = 0


async def play_to_the_end(player: Player) -> None:
    """Make the first offered move whenever it is our turn, until the final ranking shows."""
    moves = 0
    while "ranking" not in player.board:
        options = player.game_moves()
        if options:
            choice = dict(options[moves % len(options)])
            await player.send(choice)
            moves += 1
        await wait_for(lambda: player.game_moves() != options or "ranking" in player.board, player, timeout=15)
    assert moves > 0


@pytest.mark.parametrize("size", [3, pytest.param(4, marks=pytest.mark.smoke), 5, 6])  # 4 in make test
async def test_whole_game_against_bots(size, client, settings, celery_clock_worker):
    """Bots are driven by the in-process clock, or by a real Celery worker over Redis in services mode."""
    user = await make_user(f"ana{size}")
    table = await database_sync_to_async(actions.do_create_table)(user, size)
    player = Player(user, table.pk)
    assert await player.connect()
    await player.send({"action": "start", "seq": player.seq})
    await wait_for(lambda: "seat-score" in player.board, player)
    await play_to_the_end(player)
    await player.close()

    table = await database_sync_to_async(Table.objects.get)(pk=table.pk)
    assert table.status == Table.Status.FINISHED
    if settings.POCHA_CELERY_CLOCK:  # services mode: every bot move came through the Celery worker
        assert celery_clock_worker.tasks.count("games.tasks.run_due") >= 18 * (size - 1)
    # the record downloaded is the one the log gives, and the log agrees with everything derived from it
    record = await database_sync_to_async(check_the_log)(table.pk)
    await database_sync_to_async(client.force_login)(user)
    response = await database_sync_to_async(client.get)(f"/mesa/{table.pk}/partida.json")
    assert response.status_code == 200
    assert json.loads(response.content) == record
    assert len(record["rounds"]) == await database_sync_to_async(Round.objects.filter(table=table).count)()
