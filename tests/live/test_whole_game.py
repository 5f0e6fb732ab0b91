"""A person plays whole games against bots through the real WebSocket consumer and database."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from games import actions
from games.engine import replay
from games.models import Bid, Play, Round, Table
from games.selectors import game_state

from .helpers import Player, make_user, wait_for

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


@pytest.mark.parametrize("size", [3, 4, 5, 6])
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
    game = game_state(table)
    assert game is not None and game.is_over
    rounds = await database_sync_to_async(Round.objects.filter(table=table).count)()
    assert rounds == len(game.schedule)
    # the record exported from the database replays to the same totals
    await database_sync_to_async(client.force_login)(user)
    response = await database_sync_to_async(client.get)(f"/mesa/{table.pk}/partida.json")
    assert response.status_code == 200
    record = json.loads(response.content)
    replayed = replay(record)
    assert replayed.game.totals == game.totals
    assert replayed.game.is_over
    # and the normalised rows hold every bid and card
    bids = await database_sync_to_async(Bid.objects.filter(round__table=table).count)()
    plays = await database_sync_to_async(Play.objects.filter(round__table=table).count)()
    assert bids == sum(len(r["bids"]) for r in record["rounds"])
    assert plays == sum(len(r["plays"]) for r in record["rounds"])
