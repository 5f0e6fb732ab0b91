"""The schedule of rounds, the dealer's rotation, who rests and who starts."""

import pytest

from games.engine import GameState, Phase, RoundPhase, active_order, dealer_of, schedule
from games.engine.schedule import last_receiver, resting_seat

from .helpers import play_out


@pytest.mark.parametrize("players, rounds", [(3, 18), (4, 19), (5, 20), (6, 21)])
def test_round_count_per_table_size(players, rounds):
    assert len(schedule(players)) == rounds


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_cards_per_round_climb_auction_descend(players):
    specs = schedule(players)
    assert [s.cards for s in specs] == [1, 2, 3, 4, 5, 6, 7, 8] + [8] * players + [7, 6, 5, 4, 3, 2, 1]
    assert [s.number for s in specs] == list(range(1, len(specs) + 1))


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_phases_per_round(players):
    specs = schedule(players)
    phases = [s.phase for s in specs]
    assert phases == [RoundPhase.SUBIDA] * 8 + [RoundPhase.SUBASTA] * players + [RoundPhase.BAJADA] * 7
    assert [s.is_auction for s in specs] == [p is RoundPhase.SUBASTA for p in phases]
    assert [s.is_normal for s in specs] == [p is not RoundPhase.SUBASTA for p in phases]
    # only the 8-card subida round has its trump card dealt into a hand
    assert [s.number for s in specs if s.trump_is_last_dealt] == [8]


@pytest.mark.parametrize("players", [2, 7, 0, True, "4"])
def test_schedule_rejects_other_table_sizes(players):
    with pytest.raises(ValueError):
        schedule(players)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_dealer_rotation(players):
    for first in range(players):
        dealers = [dealer_of(first, number, players) for number in range(1, len(schedule(players)) + 1)]
        assert dealers[0] == first
        assert all(b == (a + 1) % players for a, b in zip(dealers, dealers[1:]))


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_dealer_rotation_in_a_played_game(players):
    game = GameState(players, first_dealer=players - 1, seed=3)
    dealers = []
    while not game.is_over:
        game.deal()
        dealers.append(game.dealer)
        play_out(game, until_round_end=True)
    assert dealers == [(players - 1 + i) % players for i in range(len(schedule(players)))]


def test_resting_dealer_at_six():
    for dealer in range(6):
        order = active_order(dealer, 6)
        assert len(order) == 5
        assert dealer not in order
        assert resting_seat(dealer, 6) == dealer
        assert last_receiver(dealer, 6) == (dealer - 1) % 6


@pytest.mark.parametrize("players", [3, 4, 5])
def test_nobody_rests_at_three_to_five(players):
    for dealer in range(players):
        order = active_order(dealer, players)
        assert sorted(order) == list(range(players))
        assert resting_seat(dealer, players) is None
        assert last_receiver(dealer, players) == dealer


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_bidding_and_lead_start_at_the_dealers_left(players):
    for dealer in range(players):
        order = active_order(dealer, players)
        assert order[0] == (dealer + 1) % players
        assert all(b == (a + 1) % players for a, b in zip(order, order[1:]))
    game = GameState(players, first_dealer=1, seed=9)
    game.deal()
    assert game.dealer == 1 and game.phase is Phase.BIDDING and game.turn == 2 % players
