"""The default player: always legal, sensible trump, the last-bidder rule, and plays to its bid."""

import random

import pytest

from games.engine import (
    Bid,
    ChooseTrump,
    GameState,
    Phase,
    Play,
    Suit,
    deck_for,
    default_action,
    play_game,
    trick_winner,
)
from games.engine.bot import best_suit

from .helpers import advance_to, c, cs, exact_bid_rate, order_for, play_out, position, random_choice


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_default_action_is_always_legal(players):
    decisions = 0
    for seed in range(8):
        game = GameState.new(players, seed=1000 + seed)
        while not game.is_over:
            if game.phase is Phase.ROUND_OVER:
                game.deal()
            action = default_action(game)
            assert action in game.legal_actions()
            game.apply(action, seat=game.turn)  # the checked path
            decisions += 1
        assert len(game.results) == len(game.schedule)
    assert decisions > 8 * 100


def test_default_action_outside_a_decision_raises():
    game = position(4, 1, ["1e", "3e", "12e", "11e"], "7c", bids=[1, 1, 1, 1], plays=["1e", "3e", "12e", "11e"])
    assert game.phase is Phase.ROUND_OVER
    with pytest.raises(ValueError):
        default_action(game)


def auction_with(players, winner_hand):
    """The first auction round with ``winner_hand`` for the first bidder, everyone bidding 0 (so it wins)."""
    game = advance_to(players, 9)
    order = order_for(players, 9)
    rest = [card for card in deck_for(players) if card not in set(winner_hand)]
    hands = [[] for _ in range(players)]
    hands[order[0]] = list(winner_hand)
    for i, seat in enumerate(order[1:]):
        hands[seat] = rest[i * 8 : (i + 1) * 8]
    game.deal(hands, None)
    for _ in order:
        game.apply(Bid(0))
    assert game.phase is Phase.CHOOSING_TRUMP and game.turn == order[0]
    return game


@pytest.mark.parametrize(
    "hand, suit",
    [
        ("1e 3e 12e 11e 7e 5c 6o 7b", Suit.ESPADAS),
        ("1o 3o 12o 10o 6o 7c 5e 11b", Suit.OROS),
        ("1b 3b 12b 11b 10b 7b 6c 5e", Suit.BASTOS),
        ("3c 12c 11c 10c 7e 6e 5o 6b", Suit.COPAS),
    ],
)
def test_chooses_the_trump_suit_it_holds_most_strength_in(hand, suit):
    game = auction_with(4, cs(hand))
    assert default_action(game) == ChooseTrump(suit)
    assert best_suit(cs(hand), 4) is suit


def test_trump_choice_prefers_strength_over_length():
    # four small espadas against the three top bastos
    hand = cs("7e 6e 5e 4e 1b 3b 12b 2c")
    assert best_suit(hand, 5) is Suit.BASTOS
    game = auction_with(5, hand)
    assert default_action(game) == ChooseTrump(Suit.BASTOS)


def test_respects_the_last_bidder_rule():
    # with the ace of trump alone it would bid 1 ...
    first = position(4, 1, ["1o", "3e", "12e", "11e"], "7o")
    assert default_action(first) == Bid(1)
    # ... but as last bidder after three zeros, 1 is forbidden
    last = position(4, 1, ["3e", "12e", "11e", "1o"], "7o", bids=[0, 0, 0])
    assert last.forbidden_bid() == 1
    assert default_action(last) == Bid(0)


def test_respects_the_last_bidder_rule_in_every_game():
    for players in (3, 4, 5, 6):
        for seed in range(3):
            game = play_game(players, 500 + seed)
            for spec, result in zip(game.schedule, game.results):
                if spec.is_normal:
                    assert sum(b for b in result.bids if b is not None) != spec.cards


def test_needing_a_trick_as_last_player_it_plays_the_cheapest_winning_card():
    game = position(
        4, 3, ["7c 1e 5b", "6c 1o 5e", "10c 12e 11b", "1c 12c 5c"], "7o", bids=[1, 0, 0, 1], plays=["7c", "6c", "10c"]
    )
    assert game.turn == game.order[3] and game.bids[game.turn] - game.tricks[game.turn] == 1
    action = default_action(game)
    trick = [p.card for p in game.trick]
    assert trick_winner(trick + [action.card], Suit.OROS) == 3
    assert action == Play(c("12c"))  # the 12 is enough; the ace is kept


def test_needing_a_trick_as_last_player_it_trumps_when_void():
    game = position(
        4, 3, ["7c 1e 5b", "6c 1o 5e", "10c 12e 11b", "5o 3o 12b"], "7o", bids=[1, 0, 0, 1], plays=["7c", "6c", "10c"]
    )
    action = default_action(game)
    assert action.card.suit is Suit.OROS
    assert trick_winner([p.card for p in game.trick] + [action.card], Suit.OROS) == 3
    assert action == Play(c("5o"))


def test_once_its_bid_is_made_it_leads_its_weakest_card():
    game = position(4, 3, ["1c 7e 5b", "6c 1o 5e", "10c 12e 11b", "3c 12c 5c"], "7o", bids=[0, 1, 1, 0])
    assert default_action(game) == Play(c("5b"))


def test_once_its_bid_is_made_it_avoids_winning_when_a_later_player_can_overtake():
    # the bot bid 0 and must beat the 7: the 10 leaves the trick to the 12 behind it; the ace would take it
    game = position(4, 3, ["7c 1e 5b", "1c 10c 5e", "12c 12e 11b", "3o 5c 6b"], "7o", bids=[1, 0, 1, 0], plays=["7c"])
    bot = game.turn
    assert default_action(game) == Play(c("10c"))
    game.apply(default_action(game))
    while len(game.trick) > 0:
        game.apply(default_action(game))
    assert game.last_trick_winner != bot and game.tricks[bot] == 0


def test_once_its_bid_is_made_it_sheds_its_highest_losing_card():
    # someone trumped: any copa loses, so it gets rid of the ace
    game = position(
        4, 3, ["7c 1e 5b", "5o 1o 5e", "1c 10c 12e", "3o 5c 6b"], "7o", bids=[1, 1, 0, 0], plays=["7c", "5o"]
    )
    assert default_action(game) == Play(c("1c"))


def test_while_it_needs_tricks_it_wins_firmly_in_the_middle():
    game = position(4, 3, ["7c 1e 5b", "1c 10c 5e", "12c 12e 11b", "3o 5c 6b"], "7o", bids=[0, 2, 1], plays=[])
    game.apply(Bid(1))
    game.apply(Play(c("7c")))
    assert default_action(game) == Play(c("1c"))


def test_beats_a_random_player_at_bidding_exactly():
    rates = {}
    for players in (3, 4, 5, 6):
        bot_games = [play_game(players, 7000 + seed) for seed in range(8)]
        rng = random.Random(players)
        random_games = [
            play_out(GameState.new(players, seed=7000 + seed), random_choice(rng), checked=False) for seed in range(8)
        ]
        rates[players] = (exact_bid_rate(bot_games), exact_bid_rate(random_games))
    overall_bot = sum(b for b, _ in rates.values()) / 4
    overall_random = sum(r for _, r in rates.values()) / 4
    assert overall_bot > overall_random + 0.05, rates
    for players, (bot_rate, random_rate) in rates.items():
        assert bot_rate > random_rate, (players, rates)
