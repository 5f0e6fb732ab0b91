"""Random playouts (Hypothesis) at every table size, with invariants checked after every action."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engine import GameState, Phase, default_action, export_record, replay, seat_view

from .helpers import check_card_conservation


def check_invariants(game: GameState) -> None:
    check_card_conservation(game)
    order = game.order
    log = game.log[-1]
    # one card per active seat per trick, in turn from the leader
    seats = [p.seat for p in game.trick]
    assert len(seats) == len(set(seats)) < len(order)
    assert set(seats) <= set(order)
    for a, b in zip(seats, seats[1:]):
        assert order.index(b) == (order.index(a) + 1) % len(order)
    if game.last_trick:
        assert sorted(p.seat for p in game.last_trick) == sorted(order)
    done = len(log.plays) - len(game.trick)
    assert done % len(order) == 0
    assert sum(game.tricks) == done // len(order)
    if game.resting is not None:
        assert game.hands[game.resting] == [] and game.tricks[game.resting] == 0
        assert game.turn != game.resting
    # everyone still to play in this trick holds as many cards as the round has tricks left (or one more)
    tricks_left = game.spec.cards - done // len(order)
    for seat in order:
        assert len(game.hands[seat]) == tricks_left - (1 if seat in seats else 0)
    if game.phase in (Phase.ROUND_OVER, Phase.GAME_OVER):
        result = game.results[-1]
        assert result.number == game.number
        assert sum(t for t in result.tricks if t is not None) == game.spec.cards
        assert len(log.plays) == game.spec.cards * len(order)
        if game.spec.is_normal:
            assert sum(b for b in result.bids if b is not None) != game.spec.cards
        assert game.turn is None
    else:
        assert game.turn in order
    # no seat ever sees another seat's unplayed card
    played = set(log.plays)
    for seat in range(game.players):
        visible = seat_view(game, seat).visible_cards()
        assert visible <= set(game.hands[seat]) | {game.trump_card} | played
    assert seat_view(game, None).visible_cards() <= {game.trump_card} | played


def run_playout(players: int, seed: int, policy_seed: int, bot_share: float) -> None:
    game = GameState.new(players, seed=seed)
    unchecked = game.copy()  # the same game driven through apply_unchecked
    check_invariants(game)
    rng = random.Random(policy_seed)
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
            unchecked.deal()
            check_invariants(game)
        legal = game.legal_actions()
        action = default_action(game) if rng.random() < bot_share else rng.choice(legal)
        assert action in legal
        game.apply(action)
        unchecked.apply_unchecked(action)
        check_invariants(game)
        if game.phase is not Phase.PLAYING:
            assert unchecked.phase is game.phase and unchecked.totals == game.totals
    assert len(game.results) == len(game.schedule)
    assert export_record(game) == export_record(unchecked)
    assert game.results == unchecked.results and game.totals == unchecked.totals
    assert game.winners() == unchecked.winners()
    replayed = replay(export_record(game)).game
    assert replayed.is_over
    assert replayed.totals == game.totals
    assert replayed.results == game.results
    assert replayed.winners() == game.winners()
    assert sum(game.totals) == sum(sum(r.points) for r in game.results)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1), policy_seed=st.integers(0, 2**32 - 1), bot_share=st.sampled_from([0.0, 0.5, 1.0])
)
def test_random_playouts_keep_every_invariant(players, seed, policy_seed, bot_share):
    run_playout(players, seed, policy_seed, bot_share)
