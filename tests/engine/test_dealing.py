"""Dealing: seeded and reproducible, the right sizes, where the trump card goes, and check_deal."""

import random

import pytest

from games.engine import GameState, IllegalActionError, IllegalDealError, Phase, deck_for, schedule
from games.engine.rules import check_deal, deal
from games.engine.schedule import active_order, dealer_of

from .helpers import advance_to, c, cs, full_deal, play_out

SIZES = [3, 4, 5, 6]


def all_deals(game):
    """The (hands, trump card) of every round of a game played out by the default player."""
    play_out(game)
    return [(log.hands, log.trump_card) for log in game.log]


@pytest.mark.parametrize("players", SIZES)
def test_same_seed_same_deal(players):
    a = GameState.new(players, seed=2024)
    b = GameState.new(players, seed=2024)
    assert a.first_dealer == b.first_dealer
    assert a.hands == b.hands and a.trump_card == b.trump_card
    assert all_deals(a) == all_deals(b)


@pytest.mark.parametrize("players", SIZES)
def test_different_seeds_deal_differently(players):
    deals = {tuple(map(tuple, GameState.new(players, seed=seed, first_dealer=0).log[0].hands)) for seed in range(20)}
    # one card each in round 1: twenty seeds cannot plausibly all give one deal
    assert len(deals) > 10
    later = [all_deals(GameState.new(players, seed=seed, first_dealer=0))[8] for seed in (1, 2)]
    assert later[0] != later[1]


def test_deal_with_an_explicit_seed_is_reproducible():
    a = GameState(4, 0)
    b = GameState(4, 0)
    assert a.deal(seed=77) == b.deal(seed=77)
    with pytest.raises(ValueError):
        GameState(4, 0).deal()  # no seed and no hands


@pytest.mark.parametrize("players", SIZES)
def test_every_hand_has_the_rounds_size(players):
    game = GameState.new(players, seed=5)
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        spec = game.spec
        resting = game.dealer if players == 6 else None
        for seat, hand in enumerate(game.hands):
            assert len(hand) == (0 if seat == resting else spec.cards)
        assert set(card for hand in game.hands for card in hand) <= set(deck_for(players))
        play_out(game, until_round_end=True)


@pytest.mark.parametrize("players", SIZES)
def test_deal_order_one_card_at_a_time_from_the_dealers_left(players):
    spec = schedule(players)[4]  # 5 cards
    for dealer in range(players):
        the_deal = deal(players, spec, dealer, random.Random(dealer))
        deck = list(deck_for(players))
        random.Random(dealer).shuffle(deck)
        order = active_order(dealer, players)
        for i in range(spec.cards):
            for j, seat in enumerate(order):
                assert the_deal.hands[seat][i] == deck[i * len(order) + j]
        assert the_deal.trump_card == deck[spec.cards * len(order)]  # the next card is turned


@pytest.mark.parametrize("players", SIZES)
def test_normal_rounds_trump_card_is_in_no_hand(players):
    for seed in range(5):
        game = GameState.new(players, seed=seed)
        play_out(game)
        for spec, log in zip(game.schedule, game.log):
            if spec.is_normal and not spec.trump_is_last_dealt:
                assert log.trump_card is not None
                assert all(log.trump_card not in hand for hand in log.hands)
                assert log.trump_card in deck_for(players)


@pytest.mark.parametrize("players", SIZES)
def test_subida_eight_card_round_trump_is_last_card_dealt_in_last_receivers_hand(players):
    for seed in range(6):
        game = advance_to(players, 8, first_dealer=seed % players, seed=seed)
        game.deal()
        assert game.spec.number == 8 and game.spec.cards == 8
        receiver = game.dealer if players < 6 else (game.dealer - 1) % players
        assert game.trump_card in game.hands[receiver]
        assert game.hands[receiver][-1] == game.trump_card  # dealt last
        assert game.trump_suit is game.trump_card.suit
        assert sum(len(h) for h in game.hands) == len(deck_for(players))  # the deck is exhausted
    spec = schedule(players)[7]
    for dealer in range(players):
        the_deal = deal(players, spec, dealer, random.Random(dealer))
        deck = list(deck_for(players))
        random.Random(dealer).shuffle(deck)
        assert the_deal.trump_card == deck[-1]


@pytest.mark.parametrize("players", SIZES)
def test_auctions_have_no_trump_card(players):
    game = advance_to(players, 9)
    for number in range(9, 9 + players):
        game.deal()
        assert game.spec.is_auction and game.spec.number == number
        assert game.trump_card is None and game.trump_suit is None
        assert game.phase is Phase.BIDDING
        play_out(game, until_round_end=True)
    assert all(log.trump_card is None for log in game.log[8 : 8 + players])


# -- check_deal ---------------------------------------------------------------------------------

SPEC4 = schedule(4)


def hands4(*texts):
    return [cs(t) for t in texts]


def test_check_deal_accepts_a_possible_deal():
    # round 2 at 4 seats, dealer 1
    check_deal(4, SPEC4[1], 1, hands4("1o 3o", "12o 11o", "10o 7o", "6o 5o"), c("1c"))


def assert_deal_error(rule, *args, **params):
    """``check_deal(*args)`` refuses with the code ``rule`` and exactly ``params``."""
    with pytest.raises(IllegalDealError) as info:
        check_deal(*args)
    assert info.value.code == rule
    assert dict(info.value.params) == params
    return info.value


def test_check_deal_rejects_wrong_hand_sizes():
    short = hands4("1o 3o", "12o", "10o 7o", "6o 5o")
    assert_deal_error("hand_size", 4, SPEC4[1], 1, short, c("1c"), seat=1, n=2, got=1)
    long = hands4("1o 3o 1e", "12o 11o", "10o 7o", "6o 5o")
    assert_deal_error("hand_size", 4, SPEC4[1], 1, long, c("1c"), seat=0, n=2, got=3)
    assert_deal_error("hand_count", 4, SPEC4[1], 1, hands4("1o 3o", "12o 11o", "10o 7o"), c("1c"), n=4, got=3)
    five = hands4("1o 3o", "12o 11o", "10o 7o", "6o 5o", "1e 3e")
    assert_deal_error("hand_count", 4, SPEC4[1], 1, five, c("1c"), n=4, got=5)


def test_check_deal_rejects_a_duplicate_card():
    twice = hands4("1o 3o", "12o 11o", "10o 7o", "6o 1o")
    assert_deal_error("duplicate_card", 4, SPEC4[1], 1, twice, c("1c"), card="1o")
    same_hand = hands4("1o 1o", "12o 11o", "10o 7o", "6o 5o")
    assert_deal_error("duplicate_card", 4, SPEC4[1], 1, same_hand, c("1c"), card="1o")


def test_check_deal_rejects_a_card_not_in_the_tables_deck():
    a_two = hands4("1o 3o", "12o 11o", "10o 7o", "6o 2o")
    assert_deal_error("not_in_deck", 4, SPEC4[1], 1, a_two, c("1c"), card="2o", players=4)
    good = hands4("1o 3o", "12o 11o", "10o 7o", "6o 5o")
    assert_deal_error("not_in_deck", 4, SPEC4[1], 1, good, c("4c"), card="4c", players=4)  # the trump card
    spec3 = schedule(3)[0]
    assert_deal_error("not_in_deck", 3, spec3, 0, hands4("1o", "5c", "3e"), c("1c"), card="5c", players=3)  # no 5s
    check_deal(3, spec3, 0, hands4("1o", "7c", "3e"), c("1c"))


def test_check_deal_rejects_a_resting_dealer_with_cards():
    spec6 = schedule(6)[0]
    good = [[], cs("1o"), cs("3o"), cs("12o"), cs("11o"), cs("10o")]
    check_deal(6, spec6, 0, good, c("1c"))
    bad = [cs("7o"), cs("1o"), cs("3o"), cs("12o"), cs("11o"), []]
    assert_deal_error("hand_size", 6, spec6, 0, bad, c("1c"), seat=0, n=0, got=1)


def test_check_deal_rejects_a_trump_card_in_a_hand_in_a_normal_round():
    good = hands4("1o 3o", "12o 11o", "10o 7o", "6o 5o")
    assert_deal_error("trump_in_hand", 4, SPEC4[1], 1, good, c("12o"), card="12o")
    assert_deal_error("no_trump_card", 4, SPEC4[1], 1, good, None)
    bajada = SPEC4[-1]
    assert_deal_error("trump_in_hand", 4, bajada, 0, hands4("1o", "12o", "10o", "6o"), c("6o"), card="6o")


@pytest.mark.parametrize("players", SIZES)
def test_check_deal_eight_card_round_trump_card_must_be_in_the_last_receivers_hand(players):
    spec = schedule(players)[7]
    dealer = dealer_of(0, 8, players)
    hands, order = full_deal(players, 8)
    last = order[-1]
    check_deal(players, spec, dealer, hands, hands[last][3])  # anywhere in the last receiver's hand
    other = order[0]
    wrong = hands[other][0]
    assert_deal_error("trump_not_last_dealt", players, spec, dealer, hands, wrong, card=str(wrong), seat=last)
    assert_deal_error("no_trump_card", players, spec, dealer, hands, None)


@pytest.mark.parametrize("players", SIZES)
def test_check_deal_rejects_a_trump_card_in_an_auction(players):
    spec = schedule(players)[8]
    dealer = dealer_of(0, 9, players)
    hands, order = full_deal(players, 9)
    check_deal(players, spec, dealer, hands, None)
    turned = hands[order[-1]][0]
    assert_deal_error("auction_trump_card", players, spec, dealer, hands, turned, card=str(turned))


def test_game_deal_with_bad_hands_changes_nothing():
    game = GameState(4, 1)
    with pytest.raises(IllegalDealError):
        game.deal(hands4("1o", "12o", "10o", "10o"), c("1c"))
    assert game.phase is Phase.DEALING and game.number == 0 and game.log == []
    game.deal(hands4("1o", "12o", "10o", "7o"), c("1c"))
    assert game.phase is Phase.BIDDING and game.turn == 2
    with pytest.raises(IllegalActionError) as info:
        game.deal(hands4("1o", "12o", "10o", "7o"), c("1c"))  # a round is in progress
    assert info.value.code == "not_dealing" and info.value.params == {}
