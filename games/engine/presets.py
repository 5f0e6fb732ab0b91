"""The rule sets a table can be opened with (``shared/VARIANTS.md``): one immutable ``Rules`` value that says
everything a preset changes, which the engine reads instead of constants.

>>> rules = Rules.of("indias")
>>> len(rules.schedule(4)), rules.max_cards(4), [str(c) for c in rules.removed(7)]
(37, 10, ['2e', '2b', '2c', '2o', '4e'])
>>> [r.cards for r in Rules.of("se-dobla", schedule="una-mas").schedule(4)]
[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
>>> [r.cards for r in Rules.of("bazas").schedule(4)]
[3, 4, 5, 6, 7, 7, 7, 7, 6, 5, 4, 3]
>>> CLASICA.schedule(4) == schedule(4)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from .cards import ALL_CARDS, FRENCH_CARDS, Card, Suit, deck_for
from .schedule import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    RoundKind,
    RoundPhase,
    RoundSpec,
    TrumpMode,
    active_order,
    schedule,
)

#: The presets, in the order a host is offered them.
PRESETS: tuple[str, ...] = ("clasica", "indias", "se-dobla", "bazas")
#: Players each preset is played by (inclusive).
PLAYERS: dict[str, tuple[int, int]] = {
    "clasica": (MIN_PLAYERS, MAX_PLAYERS),
    "indias": (3, 8),
    "se-dobla": (3, 8),
    "bazas": (3, 7),
}
#: Se dobla's round schedules (the host's choice; ``sencillas`` by default).
SCHEDULES: tuple[str, ...] = ("sencillas", "dobles", "una-mas", "escalera")
#: The most players any preset seats.
MOST_PLAYERS = 8
#: Tie-break rounds at most, where a preset plays them.
TIE_BREAKS = 3

#: The order the indias deck loses cards in, as many as the table needs.
_INDIAS_REMOVAL = ("2e", "2b", "2c", "2o", "4e", "4b", "4c", "4o")


@dataclass(frozen=True, slots=True)
class Rules:
    """A preset and its options.  ``Rules()`` is Clásica, the game of ``RULES.md``."""

    preset: str = "clasica"
    #: se-dobla: how the rounds go (``SCHEDULES``)
    schedule_name: str = "sencillas"
    #: se-dobla: every one-card round is played as an indias round («en la frente»)
    forehead: bool = False
    #: Clásica (read at every round: no kinds of round, blind bids, se dobla or tie-breaks to look for)
    is_clasica: bool = field(init=False, compare=False, repr=False)
    #: A player void in the led suit must play a trump even when it cannot win the trick (Clásica, bazas);
    #: otherwise (indias, se-dobla) only a trump that would win is owed, and with none any card.  (Read at
    #: every card played.)
    losing_trump: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r} (one of {', '.join(PRESETS)})")
        if self.schedule_name not in SCHEDULES:
            raise ValueError(f"unknown schedule {self.schedule_name!r} (one of {', '.join(SCHEDULES)})")
        if self.preset != "se-dobla" and (self.schedule_name != "sencillas" or self.forehead):
            raise ValueError(f"the {self.preset} preset has no options")
        object.__setattr__(self, "is_clasica", self.preset == "clasica")
        object.__setattr__(self, "losing_trump", self.preset in ("clasica", "bazas"))

    @classmethod
    def of(cls, preset: str, *, schedule: str = "sencillas", forehead: bool = False) -> Rules:
        return cls(preset, schedule, forehead)

    # -- as data -------------------------------------------------------------------------------

    def as_json(self) -> dict[str, Any]:
        """``{"preset": ...}``, and se-dobla's options (the record's ``rules``)."""
        data: dict[str, Any] = {"preset": self.preset}
        if self.preset == "se-dobla":
            data.update(schedule=self.schedule_name, forehead=self.forehead)
        return data

    @classmethod
    def from_json(cls, data: object) -> Rules:
        """The rules ``as_json`` gave; ValueError for anything else."""
        if not isinstance(data, dict):
            raise ValueError("rules must be a JSON object")
        unknown = set(data) - {"preset", "schedule", "forehead"}
        if unknown:
            raise ValueError(f"unknown rules option {sorted(unknown)[0]!r}")
        preset = data.get("preset")
        schedule_name = data.get("schedule", "sencillas")
        forehead = data.get("forehead", False)
        if not isinstance(preset, str) or not isinstance(schedule_name, str) or not isinstance(forehead, bool):
            raise ValueError("rules: preset and schedule are names, forehead true or false")
        return cls(preset, schedule_name, forehead)

    # -- the table -----------------------------------------------------------------------------

    def check_players(self, players: object) -> int:
        low, high = PLAYERS[self.preset]
        if not isinstance(players, int) or isinstance(players, bool) or not low <= players <= high:
            raise ValueError(f"{self.preset} is played by {low} to {high}, not {players!r}")
        return players

    def deck(self, players: int) -> tuple[Card, ...]:
        """The cards in play at a table of ``players``."""
        return _deck(self.preset, players)

    def removed(self, players: int) -> tuple[Card, ...]:
        """The cards taken out of the full deck for ``players``, in the order they go."""
        deck = set(self.deck(players))
        full = FRENCH_CARDS if self.preset == "bazas" else ALL_CARDS
        if self.preset == "indias":
            return tuple(Card.parse(c) for c in _INDIAS_REMOVAL if Card.parse(c) not in deck)
        return tuple(c for c in full if c not in deck)

    def max_cards(self, players: int) -> int:
        """The biggest hand: M."""
        if self.preset == "clasica":
            return 8
        if self.preset == "bazas":
            return 7
        return 40 // players

    def rests_dealer(self, players: int) -> bool:
        """Clásica at six: the dealer sits each round out."""
        return self.preset == "clasica" and players == 6

    def active_order(self, dealer: int, players: int) -> tuple[int, ...]:
        return active_order(dealer, players, self.preset == "clasica")

    def schedule(self, players: int) -> tuple[RoundSpec, ...]:
        """Every round of a game (before any tie-break), in order."""
        self.check_players(players)
        if self.is_clasica:
            return schedule(players)
        return _schedule(self, players)

    def length(self, players: int) -> GameLength:
        """How much a game at ``players`` seats has to play, tie-break rounds aside (``GameLength``)."""
        return _length(self, players)

    def spec(self, players: int, number: int) -> RoundSpec:
        """Round ``number`` (from 1), a tie-break round past the schedule's end."""
        rounds = self.schedule(players)
        if number <= len(rounds):
            return rounds[number - 1]
        if not self.tie_breaks or number > len(rounds) + self.tie_breaks:
            raise ValueError(f"a {self.preset} game of {players} has {len(rounds)} rounds, not {number}")
        return self.tie_break(players, number)

    # -- trump, play and points ------------------------------------------------------------------

    @property
    def tie_breaks(self) -> int:
        """Tie-break rounds at most when the top score is shared at the end (0: the tie stands)."""
        return TIE_BREAKS if self.preset in ("indias", "se-dobla") else 0

    def tie_break(self, players: int, number: int) -> RoundSpec:
        cards = self.max_cards(players)
        deals_deck = cards * players == len(self.deck(players))
        if self.preset == "indias":
            return RoundSpec(number, RoundPhase.BAJADA, cards, RoundKind.DESEMPATE, TrumpMode.OROS, True, deals_deck)
        return RoundSpec(number, RoundPhase.BAJADA, cards, RoundKind.DESEMPATE, TrumpMode.MUESTRA, True, deals_deck)

    def multiplier(self, players: int, trump_card: Card | None, trump_suit: Suit) -> int:
        """The round's multiplier, for everyone."""
        if self.preset == "clasica":
            return clasica_multiplier(players, trump_card, trump_suit)
        if self.preset == "indias":
            return {Suit.COPAS: 2, Suit.OROS: 3}.get(trump_suit, 1)
        return 1

    def doubles(self, spec: RoundSpec) -> bool:
        """Se dobla: in a round of 4 or more cards, a player who wins every trick scores it ×2."""
        return self.preset == "se-dobla" and spec.cards >= 4


@dataclass(frozen=True, slots=True)
class GameLength:
    """What a whole game plays, tie-break rounds aside: its rounds, tricks and moves.

    ``moves`` counts every move a seat makes: each bid (a subastados round's blind bids too), each trump
    choice and each card (an indias card, which plays itself, too).  ``leads``: the tricks that are not a
    round's first, each led after the pause that shows the trick before it.

    >>> CLASICA.length(4)
    GameLength(rounds=19, tricks=96, moves=464, leads=77)
    """

    rounds: int
    tricks: int
    moves: int
    leads: int


CLASICA = Rules()
FIVE_OF_BASTOS = Card(5, Suit.BASTOS)


def clasica_multiplier(players: int, trump_card: Card | None, trump_suit: Suit) -> int:
    """Clásica: ×3 when the card marking trump is the 5 of bastos (never at 3 seats), ×2 for oros."""
    if trump_card is FIVE_OF_BASTOS and players != 3:
        return 3
    if trump_suit is Suit.OROS:
        return 2
    return 1


@cache
def _deck(preset: str, players: int) -> tuple[Card, ...]:
    if preset == "clasica":
        return deck_for(players)
    if preset == "bazas":
        return FRENCH_CARDS
    if preset == "se-dobla":
        return ALL_CARDS
    out = set(Card.parse(c) for c in _INDIAS_REMOVAL[: 40 - players * (40 // players)])
    return tuple(c for c in ALL_CARDS if c not in out)


@cache
def _schedule(rules: Rules, players: int) -> tuple[RoundSpec, ...]:
    m = rules.max_cards(players)
    deck = len(rules.deck(players))
    muestra = rules.preset == "se-dobla"
    turned = TrumpMode.MUESTRA if muestra else TrumpMode.TURNED
    rounds: list[tuple[RoundPhase, int, RoundKind, TrumpMode]] = []

    def normal(phase: RoundPhase, cards: int) -> None:
        kind = RoundKind.INDIAS if cards == 1 and rules.forehead else RoundKind.NORMAL
        rounds.append((phase, cards, kind, turned))

    up, down = RoundPhase.SUBIDA, RoundPhase.BAJADA
    if rules.preset == "indias":
        for _ in range(players):
            normal(up, 1)
        for n in range(2, m):
            normal(up, n)
        for _ in range(players):
            normal(up, m)
        for n in range(m - 1, 0, -1):
            normal(down, n)
        rounds += [(down, 1, RoundKind.INDIAS, TrumpMode.TURNED)] * players
        rounds += [(RoundPhase.SUBASTA, m, RoundKind.SUBASTADOS, TrumpMode.BLIND)] * players
        rounds += [(down, m, RoundKind.OROS, TrumpMode.OROS)] * players
    elif rules.preset == "bazas":
        for n in (3, 4, 5, 6):
            normal(up, n)
        for _ in range(players):
            normal(up, 7)
        for n in (6, 5, 4, 3):
            normal(down, n)
    elif rules.schedule_name == "escalera":
        for n in range(1, m + 1):
            for _ in range(players):
                normal(up, n)
    else:
        biggest = {"sencillas": players, "dobles": 2 * players, "una-mas": 2}[rules.schedule_name]
        for n in range(1, m):
            normal(up, n)
        for _ in range(biggest):
            normal(up, m)
        for n in range(m - 1, 0, -1):
            normal(down, n)
    return tuple(
        RoundSpec(
            number,
            phase,
            cards,
            kind,
            trump,
            trump is not TrumpMode.AUCTION,
            cards * players == deck,
        )
        for number, (phase, cards, kind, trump) in enumerate(rounds, start=1)
    )


@cache
def _length(rules: Rules, players: int) -> GameLength:
    rounds = rules.schedule(players)
    seats = len(rules.active_order(0, players))
    tricks = moves = 0
    for spec in rounds:
        tricks += spec.cards
        moves += seats * (2 if spec.is_blind else 1)  # the bids (subastados: the blind ones, then the contract)
        moves += 1 if spec.is_auction else 0  # the auction's winner chooses trump
        moves += seats * spec.cards  # the cards
    return GameLength(len(rounds), tricks, moves, tricks - len(rounds))
