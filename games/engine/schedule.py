"""The rounds of a game, the dealer's rotation and who plays each round.

>>> [r.cards for r in schedule(4)]
[1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 8, 8, 7, 6, 5, 4, 3, 2, 1]
>>> len(schedule(6))
21
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cache

MIN_PLAYERS = 3
MAX_PLAYERS = 6
MAX_CARDS = 8


class RoundPhase(str, enum.Enum):
    SUBIDA = "subida"
    SUBASTA = "subasta"
    BAJADA = "bajada"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class RoundSpec:
    """One round of the schedule: its number (from 1), stage and cards per hand."""

    number: int
    phase: RoundPhase
    cards: int

    @property
    def is_auction(self) -> bool:
        return self.phase is RoundPhase.SUBASTA

    @property
    def is_normal(self) -> bool:
        """Subida and bajada rounds: trump is turned and the last bidder is restricted."""
        return self.phase is not RoundPhase.SUBASTA

    @property
    def trump_is_last_dealt(self) -> bool:
        """The 8-card subida round: the deck runs out, the last card dealt marks trump."""
        return self.phase is RoundPhase.SUBIDA and self.cards == MAX_CARDS


def check_players(players: int) -> None:
    if not isinstance(players, int) or isinstance(players, bool) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"La Pocha is played by 3 to 6, not {players!r}")


@cache
def schedule(players: int) -> tuple[RoundSpec, ...]:
    """Every round of a game at a table of ``players`` seats, in order."""
    check_players(players)
    specs: list[tuple[RoundPhase, int]] = []
    specs += [(RoundPhase.SUBIDA, n) for n in range(1, MAX_CARDS + 1)]
    specs += [(RoundPhase.SUBASTA, MAX_CARDS)] * players
    specs += [(RoundPhase.BAJADA, n) for n in range(MAX_CARDS - 1, 0, -1)]
    return tuple(RoundSpec(i + 1, phase, cards) for i, (phase, cards) in enumerate(specs))


def dealer_of(first_dealer: int, number: int, players: int) -> int:
    """The seat that deals round ``number`` (from 1)."""
    return (first_dealer + number - 1) % players


def resting_seat(dealer: int, players: int) -> int | None:
    """At six, the dealer rests; elsewhere nobody does."""
    return dealer if players == 6 else None


@cache
def active_order(dealer: int, players: int) -> tuple[int, ...]:
    """Seats holding cards, in dealing/bidding order: from the dealer's left round to the last."""
    order = tuple((dealer + i) % players for i in range(1, players + 1))
    if players == 6:
        order = order[:-1]
    return order


def last_receiver(dealer: int, players: int) -> int:
    """The seat that gets the last card dealt: the dealer, or at six the dealer's right."""
    return active_order(dealer, players)[-1]
