"""Cards: notation, strength, the deck per table size, interning."""

import copy
import pickle

import pytest

from games.engine import ALL_CARDS, SUITS, Card, Suit, deck_for, trick_winner
from games.engine.cards import RANKS, STRENGTH_ORDER


def test_there_are_forty_distinct_cards():
    assert len(ALL_CARDS) == 40
    assert len({(card.rank, card.suit) for card in ALL_CARDS}) == 40
    assert {card.rank for card in ALL_CARDS} == {1, 2, 3, 4, 5, 6, 7, 10, 11, 12}
    assert {card.suit for card in ALL_CARDS} == set(SUITS) == {Suit.OROS, Suit.COPAS, Suit.ESPADAS, Suit.BASTOS}
    assert sorted(card.index for card in ALL_CARDS) == list(range(40))


@pytest.mark.parametrize("card", ALL_CARDS, ids=str)
def test_notation_round_trips_for_every_card(card):
    text = str(card)
    assert text == f"{card.rank}{card.suit.value}"
    assert Card.parse(text) is card
    assert eval(repr(card), {"Card": Card}) is card  # the repr is evaluable
    assert Card(card.rank, card.suit) is card


def test_notation_examples():
    assert str(Card(1, Suit.OROS)) == "1o"
    assert str(Card(12, Suit.BASTOS)) == "12b"
    assert str(Card(10, Suit.COPAS)) == "10c"
    assert Card.parse("5b").rank == 5 and Card.parse("5b").suit is Suit.BASTOS
    assert Card.parse("11e").suit is Suit.ESPADAS


@pytest.mark.parametrize(
    "text", ["0o", "8c", "9e", "13b", "1x", "", None, "o1", "1O", " 1o", "1o ", "01o", "1", "b", 12, 1.5, ["1o"], b"1o"]
)
def test_bad_notation_raises_value_error(text):
    with pytest.raises(ValueError):
        Card.parse(text)


@pytest.mark.parametrize("rank, suit", [(0, Suit.OROS), (8, Suit.COPAS), (13, Suit.BASTOS), (1, "x"), (1, None)])
def test_bad_constructor_raises_value_error(rank, suit):
    with pytest.raises(ValueError):
        Card(rank, suit)


def test_suit_parse():
    assert [Suit.parse(letter) for letter in "oceb"] == list(SUITS)
    for bad in ("x", "", None, "O", "oros"):
        with pytest.raises(ValueError):
            Suit.parse(bad)


def test_strength_order_is_1_3_12_11_10_7_6_5_4_2():
    assert STRENGTH_ORDER == (1, 3, 12, 11, 10, 7, 6, 5, 4, 2)
    for suit in SUITS:
        in_suit = [card for card in ALL_CARDS if card.suit is suit]
        ranked = sorted(in_suit, key=lambda card: -card.strength)
        assert [card.rank for card in ranked] == [1, 3, 12, 11, 10, 7, 6, 5, 4, 2]
        for stronger, weaker in zip(ranked, ranked[1:]):
            assert stronger.beats_in_suit(weaker)
            assert not weaker.beats_in_suit(stronger)
            # and the trick goes to the stronger whichever is played first
            assert trick_winner([stronger, weaker], Suit.OROS if suit is not Suit.OROS else Suit.COPAS) == 0
            assert trick_winner([weaker, stronger], Suit.OROS if suit is not Suit.OROS else Suit.COPAS) == 1


def test_beats_in_suit_needs_the_same_suit():
    assert not Card.parse("1o").beats_in_suit(Card.parse("2c"))
    assert not Card.parse("1o").beats_in_suit(Card.parse("1o"))
    assert Card.parse("3c").beats_in_suit(Card.parse("12c"))


@pytest.mark.parametrize(
    "players, removed, size",
    [
        (3, {2, 4, 5, 6}, 24),
        (4, {2, 4}, 32),
        (5, set(), 40),
        (6, set(), 40),
    ],
)
def test_deck_size_and_removed_ranks_per_table_size(players, removed, size):
    deck = deck_for(players)
    assert len(deck) == size == len(set(deck))
    assert {card.rank for card in deck} == set(RANKS) - removed
    for card in ALL_CARDS:
        assert (card in deck) == (card.rank not in removed)
    for suit in SUITS:  # ranks are removed from every suit alike
        assert sum(1 for card in deck if card.suit is suit) == size // 4


@pytest.mark.parametrize("players", [0, 1, 2, 7, 8, -1])
def test_deck_for_other_table_sizes_raises(players):
    with pytest.raises(ValueError):
        deck_for(players)


def test_cards_are_interned_and_survive_pickling_and_copying():
    for card in ALL_CARDS:
        assert pickle.loads(pickle.dumps(card)) is card
        assert copy.copy(card) is card
        assert copy.deepcopy(card) is card
    hand = [Card.parse("1o"), Card.parse("5b")]
    assert all(a is b for a, b in zip(pickle.loads(pickle.dumps(hand)), hand))
    assert hash(Card.parse("7c")) == hash(Card(7, Suit.COPAS))


def test_cards_are_immutable():
    card = Card.parse("1o")
    with pytest.raises(AttributeError):
        card.rank = 3  # type: ignore[misc]
    assert card.rank == 1


def test_card_names_in_both_languages_differ():
    card = Card.parse("1o")
    assert card.name_es == "as de oros"
    assert card.name_en == "ace of coins"
    assert Card.parse("12b").name_es == "rey de bastos"
