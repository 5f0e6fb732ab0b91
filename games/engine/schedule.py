"""The rounds of a game, the dealer's rotation and who plays each round.

>>> [r.cards for r in schedule(4)]
[1, 2, 3, 4, 5, 6, 7, 8, 8, 8, 8, 8, 7, 6, 5, 4, 3, 2, 1]
>>> len(schedule(6))
21
>>> spread_rounds(19, 2)
(5, 15)
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


class RoundKind(str, enum.Enum):
    """What sort of round it is, beyond its stage (``shared/VARIANTS.md``): every Clásica round is
    ``normal``; the other presets add one-card ``indias`` rounds (everyone sees every card but their own),
    ``subastados`` (a blind bid, the winner's trump, then the contract bid), ``oros`` (trump oros) and the
    ``desempate`` rounds played after a tie."""

    NORMAL = "normal"
    INDIAS = "indias"
    SUBASTADOS = "subastados"
    OROS = "oros"
    DESEMPATE = "desempate"

    def __str__(self) -> str:
        return self.value


class TrumpMode(str, enum.Enum):
    """How a round's trump is set."""

    TURNED = "turned"  # the next card of the deck is turned; the last card dealt when the round deals it all
    MUESTRA = "muestra"  # the deck's last card is shown; the last card dealt when the round deals it all
    AUCTION = "auction"  # nothing turned: the highest bidder chooses after the bids (Clásica's subasta)
    BLIND = "blind"  # nothing turned: a blind bid, its winner chooses, then everyone bids again (subastados)
    OROS = "oros"  # nothing turned: trump is oros

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class RoundSpec:
    """One round of the schedule: its number (from 1), stage and cards per hand; for the presets other
    than Clásica also its kind, how trump is set, whether the last bidder is restricted and whether the
    round deals the whole deck (then a turned trump is the last card dealt)."""

    number: int
    phase: RoundPhase
    cards: int
    kind: RoundKind = RoundKind.NORMAL
    trump: TrumpMode | None = None  # None: Clásica's, by the stage
    last_bidder: bool | None = None  # None: Clásica's, by the stage
    deals_deck: bool | None = None  # None: Clásica's, the 8-card subida round

    @property
    def trump_mode(self) -> TrumpMode:
        if self.trump is not None:
            return self.trump
        return TrumpMode.AUCTION if self.phase is RoundPhase.SUBASTA else TrumpMode.TURNED

    @property
    def is_auction(self) -> bool:
        """Nothing is turned, and the highest bidder chooses trump (after a blind bid in subastados)."""
        if self.trump is None:
            return self.phase is RoundPhase.SUBASTA
        return self.trump is TrumpMode.AUCTION or self.trump is TrumpMode.BLIND

    @property
    def is_blind(self) -> bool:
        """Subastados: the auction's bids are blind and score nothing; the contract is bid after it."""
        return self.trump is TrumpMode.BLIND

    @property
    def is_normal(self) -> bool:
        """Subida and bajada rounds: trump is turned and the last bidder is restricted."""
        return self.phase is not RoundPhase.SUBASTA

    @property
    def restricts_last_bidder(self) -> bool:
        """The last-bidder rule holds for the contract's bids (never for an auction's)."""
        if self.last_bidder is not None:
            return self.last_bidder
        return self.phase is not RoundPhase.SUBASTA

    @property
    def trump_is_last_dealt(self) -> bool:
        """The deck runs out (Clásica: the 8-card subida round): the last card dealt marks trump."""
        if self.deals_deck is not None:
            return self.deals_deck and self.trump_mode in (TrumpMode.TURNED, TrumpMode.MUESTRA)
        return self.phase is RoundPhase.SUBIDA and self.cards == MAX_CARDS

    @property
    def turns_a_card(self) -> bool:
        """A card marks trump (turned, or the last dealt)."""
        return self.trump_mode in (TrumpMode.TURNED, TrumpMode.MUESTRA)


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


def spread_rounds(total: int, deals: int) -> tuple[int, ...]:
    """The numbers (from 1) of ``deals`` rounds spread evenly over a schedule of ``total`` rounds: the ``i``-th
    (from 0) is ``1 + floor((i + 0.5) * total / deals)``, the middle of its share of the schedule (a
    tournament's deals).  ``deals`` of 0 or less, or ``total`` or more: every round.

    >>> spread_rounds(19, 3), spread_rounds(12, 1), spread_rounds(5, 0)
    ((4, 10, 16), (7,), (1, 2, 3, 4, 5))
    """
    if deals <= 0 or deals >= total:
        return tuple(range(1, total + 1))
    # (2i + 1) * total // (2 * deals): the same floor in whole numbers
    return tuple(1 + (2 * i + 1) * total // (2 * deals) for i in range(deals))


def resting_seat(dealer: int, players: int) -> int | None:
    """At six, the dealer rests; elsewhere nobody does."""
    return dealer if players == 6 else None


@cache
def active_order(dealer: int, players: int, rest: bool = True) -> tuple[int, ...]:
    """Seats holding cards, in dealing/bidding order: from the dealer's left round to the last.
    ``rest``: Clásica's rule, the dealer rests at six (no other preset rests anyone)."""
    order = tuple((dealer + i) % players for i in range(1, players + 1))
    if players == 6 and rest:
        order = order[:-1]
    return order


def last_receiver(dealer: int, players: int) -> int:
    """The seat that gets the last card dealt: the dealer, or at six the dealer's right."""
    return active_order(dealer, players)[-1]
