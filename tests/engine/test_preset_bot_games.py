"""The searching bots under every preset, at length (the ``slow`` tier): whole games of every preset, option
and table size by every level; the fast path's legal moves and what the play proves, over many random
games; the bots thinking against the clock (their real budgets, not a fixed number of worlds)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import GameState, Phase, default_action, seat_view
from games.engine.levels import DIFICIL, LEVELS, NORMAL, decide
from games.engine.presets import CLASICA, PLAYERS, SCHEDULES, Rules

from .test_preset_bots import check_fast_legal, check_what_the_play_proves, views_of_a_game

EVERY_RULES = [
    CLASICA,
    Rules.of("indias"),
    *(Rules.of("se-dobla", schedule=s, forehead=f) for s in SCHEDULES for f in (False, True)),
    Rules.of("bazas"),
]
GAMES = [
    (rules, players)
    for rules in EVERY_RULES
    for players in range(PLAYERS[rules.preset][0], PLAYERS[rules.preset][1] + 1)
]


def name(rules: Rules, players: int) -> str:
    options = f"-{rules.schedule_name}{'-frente' if rules.forehead else ''}" if rules.preset == "se-dobla" else ""
    return f"{rules.preset}{options}-{players}"


@pytest.mark.parametrize(("rules", "players"), GAMES, ids=[name(r, p) for r, p in GAMES])
def test_every_level_plays_every_preset_option_and_size_legally(rules: Rules, players: int) -> None:
    decisions = {level: 0 for level in LEVELS}
    for _view, level in views_of_a_game(rules, players, seed=players, levels=LEVELS):
        decisions[level] += 1
    assert all(decisions.values())


@settings(max_examples=60, deadline=None, derandomize=True)
@given(rules=st.sampled_from(EVERY_RULES), size=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_what_the_play_proves_holds_in_random_games(rules: Rules, size: int, seed: int) -> None:
    low, high = PLAYERS[rules.preset]
    assert check_what_the_play_proves(rules, low + size % (high - low + 1), seed) > 20


@settings(max_examples=150, deadline=None, derandomize=True)
@given(rules=st.sampled_from(EVERY_RULES), size=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_fast_legal_moves_in_many_more_random_games(rules: Rules, size: int, seed: int) -> None:
    low, high = PLAYERS[rules.preset]
    assert check_fast_legal(rules, low + size % (high - low + 1), seed) > 50


@pytest.mark.parametrize("rules", [r for r in EVERY_RULES if not r.forehead or r.schedule_name == "escalera"])
def test_the_bots_thinking_against_the_clock_play_legally(rules: Rules) -> None:
    # the levels' own budgets (normal's), difícil on a short one: what the server runs, without fixed worlds
    players = 5
    game = GameState.new(players, seed=8, rules=rules)
    rng = random.Random(8)
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
            continue
        seat = game.turn
        assert seat is not None
        view = seat_view(game, seat, reasons=False)
        if view.plays_hidden:
            game.apply(default_action(game), seat)
            continue
        if seat % 2:
            action = decide(view, NORMAL, rng=rng)
        else:
            action = decide(view, DIFICIL, rng=rng, budget_ms=3)
        assert action in view.legal
        game.apply(action, seat)
    assert game.winners()
