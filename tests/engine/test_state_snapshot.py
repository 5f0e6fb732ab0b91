"""The engine's snapshot (``games.engine.snapshot``): whole, and as the server's table row keeps it
(``history=False``: the round in play, the totals and the last round's result).

A game carried from move to move through the small snapshot alone — dumped, loaded, one move, dumped
again — stays the game played straight through: the same seat views at every step, the same totals and
results; and the small snapshot of a six-seat game never passes 2 KB of JSON.
"""

from __future__ import annotations

import json

import pytest

from games.engine import GameState, Phase, default_action, seat_view
from games.engine.snapshot import dump, load

LIMIT = 2048  # bytes of JSON the table row may hold at any point of a game


def small(game: GameState) -> GameState:
    return load(json.loads(json.dumps(dump(game, history=False))))


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_a_game_carried_through_the_small_snapshot_is_the_same_game(players: int) -> None:
    straight = GameState.new(players, seed=40 + players)
    carried = small(straight)
    biggest = 0
    while not straight.is_over:
        if straight.phase in (Phase.DEALING, Phase.ROUND_OVER):
            seed = 1000 * players + straight.number
            straight.deal(seed=seed)
            carried.deal(seed=seed)
        else:
            action = default_action(straight)
            straight.apply(action)
            carried.apply(action)
        text = json.dumps(dump(carried, history=False))
        biggest = max(biggest, len(text.encode()))
        carried = load(json.loads(text))
        for seat in (None, *range(players)):
            mine, theirs = seat_view(carried, seat), seat_view(straight, seat)
            assert mine.results == theirs.results[-1:]  # the last round's result only
            assert mine.hand == theirs.hand and mine.legal == theirs.legal and mine.totals == theirs.totals
            assert mine.trick == theirs.trick and mine.played == theirs.played and mine.phase is theirs.phase
    assert carried.is_over and carried.totals == straight.totals
    assert carried.winners() == straight.winners()
    assert carried.results == straight.results[-1:]
    assert biggest <= LIMIT, f"{players} seats: the table's state reached {biggest} bytes"


def test_the_small_snapshot_keeps_no_history_and_no_names() -> None:
    game = GameState(["Ana", "Bea", "Carla", "Dora"], 0, seed=5)
    while game.number < 4 or game.phase is not Phase.PLAYING:
        if game.phase in (Phase.DEALING, Phase.ROUND_OVER):
            game.deal()
        else:
            game.apply(default_action(game))
    data = dump(game, history=False)
    assert "names" not in data and data["players"] == 4
    assert len(data["log"]) == 1 and len(data["results"]) == 1 and data["results"][0]["number"] == 3
    whole = dump(game)
    assert whole["names"] == ["Ana", "Bea", "Carla", "Dora"] and len(whole["log"]) == 4
    assert load(whole).names == ("Ana", "Bea", "Carla", "Dora")
    assert load(data).names == ("P1", "P2", "P3", "P4")
