"""The three kinds of decision a player makes: a bid, a trump choice, a card.

>>> parse_action("play 12b")
Play(card=Card.parse('12b'))
>>> str(Bid(3))
'bid 3'
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import Card, Suit


@dataclass(frozen=True, slots=True)
class Bid:
    amount: int

    def __str__(self) -> str:
        return f"bid {self.amount}"


@dataclass(frozen=True, slots=True)
class ChooseTrump:
    suit: Suit

    def __str__(self) -> str:
        return f"trump {self.suit.value}"


@dataclass(frozen=True, slots=True)
class Play:
    card: Card

    def __str__(self) -> str:
        return f"play {self.card}"


Action = Bid | ChooseTrump | Play


def parse_action(text: str) -> Action:
    """Parse ``bid N``, ``trump S`` or ``play CARD``; ValueError otherwise."""
    parts = text.split() if isinstance(text, str) else []
    if len(parts) == 2:
        verb, arg = parts
        if verb == "bid" and arg.isdigit() and len(arg) <= 2:
            return Bid(int(arg))
        if verb == "trump":
            return ChooseTrump(Suit.parse(arg))
        if verb == "play":
            return Play(Card.parse(arg))
    raise ValueError(f"not an action: {text!r}")
