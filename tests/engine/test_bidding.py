"""Bidding (el pedido): the range, the last bidder, auctions and who starts the play."""

import random

import pytest

from games.engine import (
    Bid,
    ChooseTrump,
    GameState,
    IllegalActionError,
    IllegalBidError,
    IllegalTrumpError,
    Phase,
    Suit,
    schedule,
)
from games.engine.rules import auction_winner, forbidden_last_bid

from .helpers import advance_to, full_deal, position

SIZES = [3, 4, 5, 6]


def bid_error(game, amount, seat=None):
    with pytest.raises(IllegalBidError) as info:
        game.apply(Bid(amount), seat=seat)
    return info.value


def test_bid_range_is_zero_to_the_cards_in_the_round():
    game = position(4, 3, ["1o 3o 12o", "11o 10o 7o", "6o 5o 1c", "3c 12c 11c"], "1e")
    assert game.legal_bids() == [0, 1, 2, 3]
    for bad in (-1, 4, 10):
        assert bid_error(game, bad).code == "bid_range"
    for bad in (True, 1.0, "1", None):
        error = bid_error(game, bad)
        assert error.code == "bid_range" and error.params == {"max": 3}
    game.apply(Bid(3))
    assert game.bids_made == [3]


@pytest.mark.parametrize("players", SIZES)
def test_last_bidder_may_not_make_the_bids_add_up_to_the_tricks(players):
    bidders = players if players < 6 else 5
    for spec in schedule(players):
        rng = random.Random(spec.number)
        samples = {tuple(rng.randint(0, spec.cards) for _ in range(bidders - 1)) for _ in range(300)}
        samples.add((0,) * (bidders - 1))
        for earlier in sorted(samples):
            forbidden = forbidden_last_bid(spec, list(earlier), bidders)
            if spec.is_auction:
                assert forbidden is None
                continue
            allowed = [n for n in range(spec.cards + 1) if n != forbidden]
            assert allowed, "the last bidder always has a legal bid"
            assert all(sum(earlier) + n != spec.cards for n in allowed)
            assert forbidden == (spec.cards - sum(earlier) if sum(earlier) <= spec.cards else None)
            # nobody before the last bidder is restricted
            for k in range(bidders - 1):
                assert forbidden_last_bid(spec, list(earlier[:k]), bidders) is None


def test_last_bidder_rule_in_a_game():
    game = position(4, 3, ["1o 3o 12o", "11o 10o 7o", "6o 5o 1c", "3c 12c 11c"], "1e", bids=[1, 0, 1])
    assert game.forbidden_bid() == 1
    assert game.legal_bids() == [0, 2, 3]
    err = bid_error(game, 1)
    assert err.code == "last_bidder_sum"
    assert err.params == {"n": 3, "bid": 1}
    assert str(err) == "last_bidder_sum n=3 bid=1"
    assert game.phase is Phase.BIDDING and game.bids_made == [1, 0, 1]
    game.apply(Bid(2))
    assert game.phase is Phase.PLAYING


def test_last_bidder_when_earlier_bids_already_exceed_the_tricks():
    game = position(4, 2, ["1o 3o", "11o 10o", "6o 5o", "3c 12c"], "1e", bids=[2, 2, 2])
    assert game.forbidden_bid() is None
    assert game.legal_bids() == [0, 1, 2]


def test_only_the_last_bidder_is_restricted():
    game = position(4, 1, ["1o", "11o", "6o", "3c"], "1e")
    for _ in range(3):
        assert game.forbidden_bid() is None
        assert game.legal_bids() == [0, 1]
        game.apply(Bid(0))
    assert game.legal_bids() == [0]  # 0+0+0+1 would be 1


@pytest.mark.parametrize("players", SIZES)
def test_auctions_have_no_last_bidder_restriction(players):
    hands, order = full_deal(players, 9)
    game = advance_to(players, 9)
    game.deal(hands, None)
    bidders = len(order)
    for amount in [8] + [0] * (bidders - 2):
        game.apply(Bid(amount))
    assert game.forbidden_bid() is None
    assert game.legal_bids() == list(range(9))
    game.apply(Bid(0))  # the bids add up to 8: allowed in an auction
    assert game.phase is Phase.CHOOSING_TRUMP


@pytest.mark.parametrize(
    "bids, winner_position",
    [
        ([2, 3, 3, 1], 1),
        ([3, 3, 3, 3], 0),
        ([0, 0, 0, 1], 3),
        ([1, 2, 1, 2], 1),
        ([0, 5, 8, 8], 2),
    ],
)
def test_auction_winner_is_the_highest_bid_ties_to_the_earlier_bidder(bids, winner_position):
    hands, order = full_deal(4, 9)
    game = advance_to(4, 9)
    game.deal(hands, None)
    for amount in bids:
        game.apply(Bid(amount))
    winner = order[winner_position]
    assert game.phase is Phase.CHOOSING_TRUMP
    assert game.auction_winner == winner == game.turn
    assert auction_winner(order, bids) == winner
    assert game.legal_actions() == [ChooseTrump(s) for s in (Suit.OROS, Suit.COPAS, Suit.ESPADAS, Suit.BASTOS)]
    for seat in range(4):
        if seat != winner:
            assert game.legal_actions(seat) == []
            with pytest.raises(IllegalActionError) as info:
                game.apply(ChooseTrump(Suit.COPAS), seat=seat)
            assert info.value.code == "not_your_turn"
    game.apply(ChooseTrump(Suit.ESPADAS), seat=winner)
    assert game.trump_suit is Suit.ESPADAS and game.trump_card is None
    assert game.phase is Phase.PLAYING
    assert game.turn == order[0]  # play starts at the dealer's left, not with the auction winner


def test_all_zero_auction_goes_to_the_first_bidder():
    for players in SIZES:
        hands, order = full_deal(players, 9)
        game = advance_to(players, 9)
        game.deal(hands, None)
        for _ in order:
            game.apply(Bid(0))
        assert game.auction_winner == order[0] == (game.dealer + 1) % players
        assert game.turn == order[0]
        game.apply(ChooseTrump(Suit.BASTOS))
        assert game.turn == order[0]


def test_auction_winner_function_ties():
    assert auction_winner((5, 0, 1, 2), [4, 4, 4, 4]) == 5
    assert auction_winner((2, 3, 0), [1, 4, 4]) == 3
    assert auction_winner((2, 3, 0), [0, 0, 0]) == 2


@pytest.mark.parametrize("players", SIZES)
def test_after_bidding_in_normal_rounds_play_starts_at_the_dealers_left(players):
    for first in range(players):
        game = GameState.new(players, seed=first, first_dealer=first)
        for _number in (1, 2):
            assert game.phase is Phase.BIDDING
            while game.phase is Phase.BIDDING:
                game.apply(Bid(game.legal_bids()[-1]))
            assert game.phase is Phase.PLAYING
            assert game.turn == (game.dealer + 1) % players == game.order[0]
            while game.phase is Phase.PLAYING:
                game.apply(game.legal_actions()[0])
            game.deal()


def test_trump_cannot_be_chosen_twice_or_outside_an_auction():
    game = position(4, 1, ["1o", "11o", "6o", "3c"], "1e")
    with pytest.raises(IllegalTrumpError):
        game.apply(ChooseTrump(Suit.OROS))
    hands, order = full_deal(4, 9)
    game = advance_to(4, 9)
    game.deal(hands, None)
    for _ in order:
        game.apply(Bid(1))
    game.apply(ChooseTrump(Suit.OROS))
    with pytest.raises(IllegalTrumpError):
        game.apply(ChooseTrump(Suit.COPAS))
    assert game.trump_suit is Suit.OROS


def test_resting_dealer_does_not_bid_at_six():
    game = position(6, 2, ["1o 3o", "11o 10o", "6o 5o", "3c 12c", "1e 3e"], "1b")
    dealer = game.dealer
    assert game.order == tuple((dealer + i) % 6 for i in range(1, 6))
    seen = []
    while game.phase is Phase.BIDDING:
        assert game.turn != dealer
        assert game.legal_actions(dealer) == []
        with pytest.raises(IllegalActionError) as info:
            game.apply(Bid(0), seat=dealer)
        assert info.value.code == "not_your_turn"
        seen.append(game.turn)
        game.apply(Bid(game.legal_bids()[-1]))
    assert seen == list(game.order)
    assert game.bids[dealer] is None
    assert len(game.bids_made) == 5


def test_last_bidder_rule_applies_to_the_fifth_active_bidder_at_six():
    game = position(6, 2, ["1o 3o", "11o 10o", "6o 5o", "3c 12c", "1e 3e"], "1b", bids=[0, 0, 1])
    assert game.forbidden_bid() is None  # the fourth of five bidders is free
    game.apply(Bid(0))
    assert game.turn == game.order[4] == (game.dealer - 1) % 6
    assert game.forbidden_bid() == 1
    assert game.legal_bids() == [0, 2]
    assert bid_error(game, 1).code == "last_bidder_sum"
    game.apply(Bid(2))
    assert game.phase is Phase.PLAYING
