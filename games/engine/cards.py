"""Cards, suits and the decks of La Pocha: the Spanish 40 and, for the ``bazas`` preset, the French 52.

Cards are small immutable values written in the game's notation: rank then
suit letter (``1o``, ``12b``; French ``AS``, ``10H``, ``QD``).  There are only 92 of them, so every
card is interned: ``Card(1, Suit.OROS) is Card.parse("1o")``.

>>> Card.parse("12b")
Card.parse('12b')
>>> str(Card(3, Suit.COPAS))
'3c'
>>> Card.parse("1o").beats_in_suit(Card.parse("3o"))
True
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import ClassVar

RANKS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
#: Strongest first, within any suit.
STRENGTH_ORDER: tuple[int, ...] = (1, 3, 12, 11, 10, 7, 6, 5, 4, 2)
_STRENGTH: dict[int, int] = {rank: len(STRENGTH_ORDER) - i for i, rank in enumerate(STRENGTH_ORDER)}

#: Ranks removed from the 40-card deck, by number of players at the table.
REMOVED_RANKS: dict[int, frozenset[int]] = {
    3: frozenset({2, 4, 5, 6}),
    4: frozenset({2, 4}),
    5: frozenset(),
    6: frozenset(),
}

RANK_NAMES_ES: dict[int, str] = {1: "as", 10: "sota", 11: "caballo", 12: "rey"}
RANK_NAMES_EN: dict[int, str] = {1: "ace", 10: "jack", 11: "knight", 12: "king"}

#: The French deck (``bazas``): ranks 2..10, then J 11, Q 12, K 13, A 14, which is also their strength
#: order.  Written ``2``..``10``, ``J``, ``Q``, ``K``, ``A`` before the suit letter (``10H``, ``QD``, ``AS``).
FRENCH_RANKS: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
_FRENCH_TEXT: dict[int, str] = {11: "J", 12: "Q", 13: "K", 14: "A"}
FRENCH_RANK_NAMES_ES: dict[int, str] = {11: "jota", 12: "reina", 13: "rey", 14: "as"}
FRENCH_RANK_NAMES_EN: dict[int, str] = {11: "jack", 12: "queen", 13: "king", 14: "ace"}


class Suit(str, enum.Enum):
    """The four Spanish suits and the four French ones (``bazas``), valued by their notation letter:
    lower case for the Spanish deck, upper case for the French."""

    OROS = "o"
    COPAS = "c"
    ESPADAS = "e"
    BASTOS = "b"
    PICAS = "S"
    CORAZONES = "H"
    DIAMANTES = "D"
    TREBOLES = "C"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, text: str) -> Suit:
        """Parse a suit letter (``o``, ``c``, ``e``, ``b``); ValueError otherwise."""
        try:
            return _SUIT_BY_LETTER[text]
        except (KeyError, TypeError):
            raise ValueError(f"not a suit: {text!r}") from None

    @property
    def name_es(self) -> str:
        """Plural Spanish name: ``oros``."""
        return _SUIT_NAMES_ES[self]

    @property
    def name_en(self) -> str:
        return _SUIT_NAMES_EN[self]


SUITS: tuple[Suit, ...] = (Suit.OROS, Suit.COPAS, Suit.ESPADAS, Suit.BASTOS)
#: The French deck's suits, in display order.
FRENCH_SUITS: tuple[Suit, ...] = (Suit.PICAS, Suit.CORAZONES, Suit.DIAMANTES, Suit.TREBOLES)
_SUIT_BY_LETTER: dict[str, Suit] = {s.value: s for s in (*SUITS, *FRENCH_SUITS)}
_SUIT_NAMES_ES: dict[Suit, str] = {
    Suit.OROS: "oros",
    Suit.COPAS: "copas",
    Suit.ESPADAS: "espadas",
    Suit.BASTOS: "bastos",
    Suit.PICAS: "picas",
    Suit.CORAZONES: "corazones",
    Suit.DIAMANTES: "diamantes",
    Suit.TREBOLES: "tréboles",
}
_SUIT_NAMES_EN: dict[Suit, str] = {
    Suit.OROS: "coins",
    Suit.COPAS: "cups",
    Suit.ESPADAS: "swords",
    Suit.BASTOS: "clubs",
    Suit.PICAS: "spades",
    Suit.CORAZONES: "hearts",
    Suit.DIAMANTES: "diamonds",
    Suit.TREBOLES: "clubs",
}
_SUIT_ORDER: dict[Suit, int] = {s: i for i, s in enumerate((*SUITS, *FRENCH_SUITS))}


class Card:
    """One card.  Interned: construct with ``Card(rank, suit)`` or ``Card.parse``."""

    __slots__ = ("rank", "suit", "strength", "index", "_text")
    _table: ClassVar[dict[tuple[int, Suit], Card]] = {}
    _by_text: ClassVar[dict[str, Card]] = {}

    rank: int
    suit: Suit
    #: 1 (the 2) .. 10 (the ace): higher beats lower within a suit.
    strength: int
    #: 0..39 for the Spanish deck, 40..91 for the French one: dense, for arrays and bitsets.
    index: int
    _text: str

    def __new__(cls, rank: int, suit: Suit) -> Card:
        try:
            return cls._table[(rank, suit)]
        except (KeyError, TypeError):
            raise ValueError(f"not a card: rank {rank!r} suit {suit!r}") from None

    @classmethod
    def _make(cls, rank: int, suit: Suit, index: int) -> Card:
        card = object.__new__(cls)
        object.__setattr__(card, "rank", rank)
        object.__setattr__(card, "suit", suit)
        object.__setattr__(card, "strength", _STRENGTH[rank])
        object.__setattr__(card, "index", index)
        object.__setattr__(card, "_text", f"{rank}{suit.value}")
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[type[Card], tuple[int, Suit]]:
        return (Card, (self.rank, self.suit))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``1o`` .. ``12b`` (Spanish) or ``2S`` .. ``AC`` (French); raise ValueError for anything else."""
        try:
            return cls._by_text[text]
        except (KeyError, TypeError):
            raise ValueError(f"not a card: {text!r}") from None

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card.parse({self._text!r})"

    def __hash__(self) -> int:
        return self.index

    def __eq__(self, other: object) -> bool:
        # Cards are interned, so equal means identical.  Spelled out because a class with
        # ``__lt__`` otherwise compares through a much slower generic path, and every card
        # played is looked up in (and removed from) a hand.
        if other.__class__ is Card:
            return self is other
        return NotImplemented

    def __lt__(self, other: Card) -> bool:
        """Display order: by suit (oros, copas, espadas, bastos), then strength descending."""
        return _sort_key(self) < _sort_key(other)

    def beats_in_suit(self, other: Card) -> bool:
        """True when both are of one suit and this one is stronger."""
        return self.suit is other.suit and self.strength > other.strength

    @property
    def is_french(self) -> bool:
        return self.index >= len(ALL_CARDS)

    @property
    def name_es(self) -> str:
        """``3 de copas``, ``as de oros``; ``reina de corazones``, ``10 de picas``."""
        names = FRENCH_RANK_NAMES_ES if self.is_french else RANK_NAMES_ES
        return f"{names.get(self.rank, str(self.rank))} de {self.suit.name_es}"

    @property
    def name_en(self) -> str:
        names = FRENCH_RANK_NAMES_EN if self.is_french else RANK_NAMES_EN
        return f"{names.get(self.rank, str(self.rank))} of {self.suit.name_en}"


def _sort_key(card: Card) -> tuple[int, int]:
    return (_SUIT_ORDER[card.suit], -card.strength)


for _si, _suit in enumerate(SUITS):
    for _ri, _rank in enumerate(RANKS):
        _card = Card._make(_rank, _suit, _si * 10 + _ri)
        Card._table[(_rank, _suit)] = _card
        Card._by_text[str(_card)] = _card

#: All forty Spanish cards, in index order (0..39).
ALL_CARDS: tuple[Card, ...] = tuple(sorted(Card._table.values(), key=lambda c: c.index))

for _si, _suit in enumerate(FRENCH_SUITS):
    for _ri, _rank in enumerate(FRENCH_RANKS):
        _card = object.__new__(Card)
        for _name, _value in (
            ("rank", _rank),
            ("suit", _suit),
            ("strength", _rank - 1),  # 1 (the 2) .. 13 (the ace)
            ("index", len(ALL_CARDS) + _si * 13 + _ri),
            ("_text", f"{_FRENCH_TEXT.get(_rank, str(_rank))}{_suit.value}"),
        ):
            object.__setattr__(_card, _name, _value)
        Card._table[(_rank, _suit)] = _card
        Card._by_text[str(_card)] = _card

#: Every card by its notation (``"12b"``, ``"QD"``): ``Card.parse`` as a plain lookup, for hot loops.
CARDS_BY_TEXT: Mapping[str, Card] = MappingProxyType(Card._by_text)

#: The 52 French cards (``bazas``), in index order (40..91).
FRENCH_CARDS: tuple[Card, ...] = tuple(
    sorted((c for c in Card._table.values() if c.index >= len(ALL_CARDS)), key=lambda c: c.index)
)
#: Every card of both decks, in index order: ``EVERY_CARD[card.index] is card``.
EVERY_CARD: tuple[Card, ...] = ALL_CARDS + FRENCH_CARDS


def deck_for(players: int) -> tuple[Card, ...]:
    """The cards in play at a table of ``players`` seats (24, 32, 40 or 40).

    >>> [len(deck_for(n)) for n in (3, 4, 5, 6)]
    [24, 32, 40, 40]
    """
    try:
        removed = REMOVED_RANKS[players]
    except KeyError:
        raise ValueError(f"La Pocha is played by 3 to 6, not {players}") from None
    return tuple(c for c in ALL_CARDS if c.rank not in removed)


def sort_hand(cards: Iterable[Card]) -> list[Card]:
    """Cards in display order: grouped by suit, strongest first."""
    return sorted(cards, key=_sort_key)
