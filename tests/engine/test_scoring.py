"""Scoring: points per round, the ×3 and ×2 multipliers, the resting dealer, totals and winners."""

import pytest

from games.engine import (
    ALL_CARDS,
    Bid,
    Card,
    ChooseTrump,
    GameState,
    Phase,
    Suit,
    deck_for,
    export_record,
    multiplier,
    play_game,
    points,
    replay,
    replay_line,
)
from games.engine.errors import IllegalDealError
from games.engine.rules import check_deal
from games.engine.schedule import schedule

from .helpers import advance_to, c, full_deal, play_out, position

FIVE_OF_BASTOS = Card.parse("5b")


@pytest.mark.parametrize("bid, won, expected", [(0, 0, 10), (2, 2, 20), (4, 4, 30), (3, 1, -10), (1, 4, -15)])
def test_points_table_from_the_rules(bid, won, expected):
    assert points(bid=bid, won=won) == expected


def test_points_formula_exact_or_five_per_trick_off():
    for bid in range(9):
        for won in range(9):
            expected = 10 + 5 * bid if won == bid else -5 * abs(bid - won)
            assert points(bid, won) == expected


def one_card_round(players, trump_card, bids=None):
    """Round 1: the first bidder leads the ace of espadas and takes the only trick."""
    leaders = ["1e", "3e", "12e", "11e", "10e"][: players if players < 6 else 5]
    bids = bids if bids is not None else [0] * len(leaders)
    game = position(players, 1, leaders, trump_card, bids=bids, plays=leaders)
    assert game.phase is Phase.ROUND_OVER
    return game, game.results[-1]


def by_order(game, result):
    return [result.points[seat] for seat in game.order]


def test_times_three_when_the_turned_card_is_the_five_of_bastos():
    game, result = one_card_round(4, "5b")
    assert result.trump_suit is Suit.BASTOS and result.multiplier == 3
    # the first bidder bid 0 and took the trick: -5 ×3; the others bid 0 and took none: +10 ×3
    assert by_order(game, result) == [-15, 30, 30, 30]
    assert sorted(game.totals) == [-15, 30, 30, 30]


def test_other_bastos_count_once():
    game, result = one_card_round(4, "7b")
    assert result.multiplier == 1
    assert by_order(game, result) == [-5, 10, 10, 10]


def test_times_two_when_oros_is_turned():
    game, result = one_card_round(5, "7o", bids=[1, 1, 0, 0, 0])
    assert result.trump_suit is Suit.OROS and result.multiplier == 2
    assert by_order(game, result) == [30, -10, 20, 20, 20]


@pytest.mark.parametrize("players", [4, 5, 6])
def test_times_three_in_the_eight_card_subida_round_when_the_last_card_dealt_is_the_five_of_bastos(players):
    hands, order = full_deal(players, 8, last_card=FIVE_OF_BASTOS)
    game = advance_to(players, 8)
    game.deal(hands, FIVE_OF_BASTOS)
    assert FIVE_OF_BASTOS in game.hands[order[-1]]
    play_out(game, until_round_end=True)
    result = game.results[-1]
    assert result.number == 8 and result.multiplier == 3
    for seat in order:
        assert result.points[seat] == 3 * points(result.bids[seat], result.tricks[seat])


def test_eight_card_round_with_the_five_of_bastos_in_a_hand_but_another_trump_card_is_not_tripled():
    hands, order = full_deal(4, 8, last_card=c("7b"))
    assert any(FIVE_OF_BASTOS in hand for hand in hands)
    game = advance_to(4, 8)
    game.deal(hands, c("7b"))
    play_out(game, until_round_end=True)
    assert game.results[-1].multiplier == 1


def auction_round(players, suit):
    hands, order = full_deal(players, 9)
    game = advance_to(players, 9)
    game.deal(hands, None)
    for _ in order:
        game.apply(Bid(2))
    game.apply(ChooseTrump(suit))
    play_out(game, until_round_end=True)
    return game, game.results[-1]


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_auctions_times_two_for_oros_chosen_never_times_three(players):
    game, result = auction_round(players, Suit.OROS)
    assert result.multiplier == 2 and result.auction_winner == game.order[0]
    for seat in game.order:
        assert result.points[seat] == 2 * points(2, result.tricks[seat])
    game, result = auction_round(players, Suit.BASTOS)  # the 5 of bastos is in a hand, not marking trump
    assert result.multiplier == 1
    game, result = auction_round(players, Suit.COPAS)
    assert result.multiplier == 1


def test_never_times_three_at_three_seats():
    assert FIVE_OF_BASTOS not in deck_for(3)
    assert not any(card.rank == 5 for card in deck_for(3))
    assert multiplier(3, FIVE_OF_BASTOS, Suit.BASTOS) == 1
    with pytest.raises(IllegalDealError):
        check_deal(3, schedule(3)[0], 0, [[c("1o")], [c("3o")], [c("12o")]], FIVE_OF_BASTOS)
    for seed in range(10):
        game = play_game(3, seed)
        assert all(r.multiplier in (1, 2) for r in game.results)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_multipliers_never_stack(players):
    for card in ALL_CARDS:
        for suit in Suit:
            factor = multiplier(players, card, suit)
            if card is FIVE_OF_BASTOS and players != 3:
                assert factor == 3
            elif suit is Suit.OROS:
                assert factor == 2
            else:
                assert factor == 1
        assert multiplier(players, card, card.suit) in (1, 2, 3)
    for suit in Suit:
        assert multiplier(players, None, suit) == (2 if suit is Suit.OROS else 1)


@pytest.mark.parametrize("trump_card, factor", [("7o", 2), ("5b", 3), ("7c", 1)])
def test_resting_dealer_scores_ten_unmultiplied(trump_card, factor):
    game, result = one_card_round(6, trump_card)
    dealer = game.dealer
    assert result.multiplier == factor
    assert result.points[dealer] == 10
    assert result.bids[dealer] is None and result.tricks[dealer] is None
    assert by_order(game, result) == [-5 * factor, 10 * factor, 10 * factor, 10 * factor, 10 * factor]


def test_resting_dealer_in_an_oros_auction():
    game, result = auction_round(6, Suit.OROS)
    assert result.multiplier == 2
    assert result.points[game.dealer] == 10


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_running_totals_are_the_sums_of_the_rounds(players):
    game = GameState.new(players, seed=players * 11)
    running = [0] * players
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        play_out(game, until_round_end=True)
        result = game.results[-1]
        for seat in range(players):
            running[seat] += result.points[seat]
            if players == 6 and seat == result.dealer:
                assert result.points[seat] == 10
            else:
                assert result.points[seat] == result.multiplier * points(result.bids[seat], result.tricks[seat])
        assert game.totals == running
    assert len(game.results) == len(schedule(players))
    assert game.winners() == [seat for seat in range(players) if game.totals[seat] == max(game.totals)]


def test_winners_only_when_the_game_is_over():
    game = GameState.new(4, seed=1)
    assert game.winners() is None
    play_out(game, until_round_end=True)
    assert game.winners() is None
    line, ok = replay_line(export_record(game))
    assert ok and line["complete"] is False and line["winners"] is None


def test_players_tied_on_the_highest_total_share_first_place():
    for seed in range(400):
        game = play_game(3, seed)
        best = max(game.totals)
        tied = [seat for seat, total in enumerate(game.totals) if total == best]
        if len(tied) > 1:
            break
    else:
        pytest.fail("no tied game among 400 self-played games")
    assert game.winners() == tied
    replayed = replay(export_record(game))
    assert replayed.game.winners() == tied
    line, ok = replay_line(export_record(game))
    assert ok and line["complete"] is True and line["winners"] == tied and line["totals"] == game.totals
