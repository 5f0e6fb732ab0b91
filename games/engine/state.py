"""The game as a state machine: whose turn it is, what they may do, and what follows.

>>> game = GameState.new(4, seed=7)
>>> game.phase
<Phase.BIDDING: 'bidding'>
>>> seat = game.turn
>>> game.apply(game.legal_actions()[0], seat=seat)
>>> game.turn == (seat + 1) % 4
True
"""

from __future__ import annotations

import enum
import random
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .actions import Action, Bid, ChooseTrump, Play
from .cards import EVERY_CARD, FRENCH_SUITS, SUITS, Card, Suit, sort_hand
from .errors import IllegalActionError, IllegalBidError, IllegalPlayError, IllegalTrumpError, Rule
from .presets import CLASICA, MOST_PLAYERS, Rules, clasica_multiplier
from .rules import (
    RESTING_POINTS,
    Deal,
    auction_winner,
    check_deal,
    deal,
    explain_illegal,
    forbidden_last_bid,
    legal_plays,
    may_play,
    points,
    trick_winner,
)
from .schedule import RoundKind, RoundPhase, RoundSpec, TrumpMode, dealer_of


class Phase(str, enum.Enum):
    DEALING = "dealing"  # before round 1 is dealt
    BIDDING = "bidding"
    CHOOSING_TRUMP = "choosing_trump"
    PLAYING = "playing"
    ROUND_OVER = "round_over"  # scored; the next deal is due
    GAME_OVER = "game_over"

    def __str__(self) -> str:
        return self.value


_PLAYING = Phase.PLAYING  # a module global is read faster than an enum member, once per card played


@dataclass(frozen=True, slots=True)
class RoundResult:
    """A scored round, by seat (``None`` bid and tricks for the resting dealer).  The presets other than
    Clásica add the round's ``kind``, the subastados' ``blind_bids`` and the seat whose points *se dobla*
    doubled (``doubled``); Clásica's results leave them out of their JSON."""

    number: int
    phase: RoundPhase
    cards: int
    dealer: int
    trump_suit: Suit
    multiplier: int
    auction_winner: int | None
    bids: tuple[int | None, ...]
    tricks: tuple[int | None, ...]
    points: tuple[int, ...]
    kind: RoundKind = RoundKind.NORMAL
    blind_bids: tuple[int | None, ...] | None = None
    doubled: int | None = None

    def as_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "number": self.number,
            "phase": self.phase.value,
            "cards": self.cards,
            "dealer": self.dealer,
            "trump_suit": self.trump_suit.value,
            "multiplier": self.multiplier,
            "auction_winner": self.auction_winner,
            "bids": list(self.bids),
            "tricks": list(self.tricks),
            "points": list(self.points),
        }
        if self.kind is not RoundKind.NORMAL:
            data["kind"] = self.kind.value
        if self.blind_bids is not None:
            data["blind_bids"] = list(self.blind_bids)
        if self.doubled is not None:
            data["doubled"] = self.doubled
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RoundResult:
        """The result ``as_json`` gave (KeyError or ValueError if it is not one)."""
        return cls(
            number=int(data["number"]),
            phase=RoundPhase(data["phase"]),
            cards=int(data["cards"]),
            dealer=int(data["dealer"]),
            trump_suit=Suit.parse(data["trump_suit"]),
            multiplier=int(data["multiplier"]),
            auction_winner=data["auction_winner"],
            bids=tuple(data["bids"]),
            tricks=tuple(data["tricks"]),
            points=tuple(data["points"]),
            kind=RoundKind(data.get("kind", "normal")),
            blind_bids=tuple(data["blind_bids"]) if data.get("blind_bids") is not None else None,
            doubled=data.get("doubled"),
        )


@dataclass(slots=True)
class RoundLog:
    """What happened in one round, as the game record writes it."""

    hands: tuple[tuple[Card, ...], ...]
    trump_card: Card | None
    bids: list[int]
    trump_suit: Suit | None
    plays: list[Card]
    seed: int | None = None
    #: subastados: the blind bids, in bidding order (``bids`` is then the contract)
    blind_bids: list[int] | None = None


@dataclass(frozen=True, slots=True)
class TrickPlay:
    seat: int
    card: Card


# Every (seat, card) a trick can hold, made once: immutable values, shared like the cards themselves.
_TRICK_PLAYS: tuple[tuple[TrickPlay, ...], ...] = tuple(
    tuple(TrickPlay(seat, card) for card in EVERY_CARD) for seat in range(MOST_PLAYERS)
)


class GameState:
    """One game of La Pocha.

    Chance steps (deals) come from ``deal()``: from the game's seeded generator, or
    given explicitly (replaying a record).  Decisions come through ``apply`` (checked)
    or ``apply_unchecked`` (the fast path for simulations that only pick legal actions).
    """

    def __init__(
        self, players: int | Sequence[str], first_dealer: int, seed: int | None = None, rules: Rules = CLASICA
    ) -> None:
        if isinstance(players, int):
            count = players
            names: tuple[str, ...] = tuple(f"P{i + 1}" for i in range(players)) if players > 0 else ()
        else:
            names = tuple(players)
            count = len(names)
        rules.check_players(count)
        if not isinstance(first_dealer, int) or isinstance(first_dealer, bool) or not 0 <= first_dealer < count:
            raise ValueError(f"first dealer must be a seat 0..{count - 1}, not {first_dealer!r}")
        self.players = count
        self.rules = rules
        self.names = names
        self.first_dealer = first_dealer
        self.seed = seed
        self._rng = random.Random(seed) if seed is not None else None
        self.schedule: tuple[RoundSpec, ...] = rules.schedule(count)
        self.phase = Phase.DEALING
        self.number = 0
        self.spec: RoundSpec | None = None
        self.dealer = -1
        self.order: tuple[int, ...] = ()
        self.hands: list[list[Card]] = [[] for _ in range(count)]
        self.trump_card: Card | None = None
        self.trump_suit: Suit | None = None
        self.bids: list[int | None] = [None] * count
        self.bids_made: list[int] = []
        #: subastados: the blind bids (None outside them); ``bids``/``bids_made`` are then the contract's
        self.blind_bids: list[int | None] | None = None
        self.auction_winner: int | None = None
        self.trick: list[TrickPlay] = []
        self.last_trick: tuple[TrickPlay, ...] = ()
        self.last_trick_winner: int | None = None
        self.tricks: list[int] = [0] * count
        self.totals: list[int] = [0] * count
        self.results: list[RoundResult] = []
        self.log: list[RoundLog] = []
        self.turn: int | None = None
        self._next: dict[int, int] = {}
        #: a game of some rounds of the schedule (``of_rounds``, ``practice``): their numbers, increasing; None
        #: for a whole game
        self.rounds_played: tuple[int, ...] | None = None
        #: a practice game (``practice``): its one round is another game's, played again (it has no record)
        self._practice = False

    # -- construction ------------------------------------------------------------------

    @classmethod
    def new(
        cls, players: int | Sequence[str], seed: int, first_dealer: int | None = None, rules: Rules = CLASICA
    ) -> GameState:
        """A game dealt from ``seed``: the same seed gives the same first dealer and deals."""
        count = players if isinstance(players, int) else len(players)
        rules.check_players(count)
        rng = random.Random(seed)
        if first_dealer is None:
            first_dealer = rng.randrange(count)
        game = cls(players, first_dealer, seed=rng.getrandbits(64), rules=rules)
        game.deal()
        return game

    @classmethod
    def of_rounds(
        cls,
        rules: Rules,
        names: int | Sequence[str],
        first_dealer: int,
        rounds: Sequence[int],
        *,
        seed: int | None = None,
    ) -> GameState:
        """A game of only ``rounds`` of the schedule (numbers from 1, increasing; a tournament's deals), each
        with the kind, cards, multiplier and dealer it has in a whole game of ``names`` under ``rules``
        whose first dealer is ``first_dealer``.  Totals start at 0; the game is over after the last of
        them (no tie-break).  ``number`` and ``schedule`` stay the whole game's (the round dealt second
        of ``(5, 15)`` is number 15); ``rounds_played`` holds the rounds.  Dealt as a whole game is: given
        hands, ``deal(seed=...)``, or from the generator of ``seed``."""
        game = cls(names, first_dealer, seed=seed, rules=rules)
        game.rounds_played = game.check_rounds(rounds)
        return game

    def check_rounds(self, rounds: object) -> tuple[int, ...]:
        """``rounds`` as the ``rounds_played`` of this game: a non-empty, strictly increasing sequence of
        round numbers of its schedule (ValueError otherwise)."""
        total = len(self.rules.schedule(self.players))
        if not isinstance(rounds, Sequence) or isinstance(rounds, str) or not rounds:
            raise ValueError(f"the rounds played must be a non-empty list of round numbers, not {rounds!r}")
        for number in rounds:
            if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= total:
                raise ValueError(f"a game of {self.players} has rounds 1 to {total}, not {number!r}")
        if any(a >= b for a, b in zip(rounds, rounds[1:])):
            raise ValueError(f"the rounds played must be in increasing order, each once: not {list(rounds)!r}")
        return tuple(rounds)

    @property
    def practice_round(self) -> int | None:
        """A practice game's one round (its number in the schedule); None for any other game."""
        return self.rounds_played[0] if self._practice and self.rounds_played else None

    @practice_round.setter
    def practice_round(self, number: int | None) -> None:
        if number is None:
            if self._practice:
                self.rounds_played = None
            self._practice = False
        else:
            self.rounds_played = (number,)
            self._practice = True

    @classmethod
    def practice(cls, rules: Rules, names: Sequence[str], first_dealer: int, number: int) -> GameState:
        """A game of one round: round ``number`` of the schedule of a game of ``names`` under ``rules`` whose
        first dealer was ``first_dealer`` (the same kind, cards and dealer), to be dealt by ``deal`` (its
        hands and trump card checked as usual), and over after it (no tie-break); totals start at 0.
        The rounds before it are not played: ``number`` and ``schedule`` stay the game's, and
        ``practice_round`` says which round it is.  A tie-break round cannot be practised."""
        game = cls(names, first_dealer, rules=rules)
        rounds = len(game.schedule)
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= rounds:
            raise ValueError(f"a game of {game.players} has rounds 1 to {rounds}, not {number!r}")
        game.practice_round = number
        return game

    def copy(self) -> GameState:
        other = GameState.__new__(GameState)
        for name in (
            "players",
            "rules",
            "names",
            "first_dealer",
            "seed",
            "schedule",
            "phase",
            "number",
            "spec",
            "dealer",
            "order",
            "trump_card",
            "trump_suit",
            "auction_winner",
            "last_trick",
            "last_trick_winner",
            "turn",
            "_next",
            "rounds_played",
            "_practice",
        ):
            setattr(other, name, getattr(self, name))
        other._rng = None
        if self._rng is not None:
            other._rng = random.Random()
            other._rng.setstate(self._rng.getstate())
        other.hands = [list(h) for h in self.hands]
        other.bids = list(self.bids)
        other.bids_made = list(self.bids_made)
        other.blind_bids = None if self.blind_bids is None else list(self.blind_bids)
        other.trick = list(self.trick)
        other.tricks = list(self.tricks)
        other.totals = list(self.totals)
        other.results = list(self.results)
        other.log = [
            RoundLog(
                r.hands,
                r.trump_card,
                list(r.bids),
                r.trump_suit,
                list(r.plays),
                r.seed,
                None if r.blind_bids is None else list(r.blind_bids),
            )
            for r in self.log
        ]
        return other

    # -- chance ------------------------------------------------------------------------

    @property
    def next_spec(self) -> RoundSpec | None:
        chosen = self.rounds_played
        if chosen is not None:  # the chosen round after the one last dealt (``number``), if any is left
            dealt = bisect_right(chosen, self.number) if self.number else 0
            return self.schedule[chosen[dealt] - 1] if dealt < len(chosen) else None
        return self.schedule[self.number] if self.number < len(self.schedule) else None

    def deal(
        self, hands: Sequence[Sequence[Card]] | None = None, trump_card: Card | None = None, *, seed: int | None = None
    ) -> Deal:
        """Start the next round.  Without ``hands``, deal at random from ``seed`` (or the game's
        generator); with them, check that they are a possible deal (IllegalDealError)."""
        if self.phase not in (Phase.DEALING, Phase.ROUND_OVER):
            raise IllegalActionError(Rule.NOT_DEALING)
        spec = self.next_spec
        if spec is None:
            raise IllegalActionError(Rule.GAME_OVER)
        dealer = dealer_of(self.first_dealer, spec.number, self.players)
        if hands is None:
            if seed is None:
                if self._rng is None:
                    raise ValueError("this game has no seed: give the hands or a seed")
                seed = self._rng.getrandbits(63)
            the_deal = deal(self.players, spec, dealer, random.Random(seed), self.rules)
        else:
            check_deal(self.players, spec, dealer, hands, trump_card, self.rules)
            the_deal = Deal(tuple(map(tuple, hands)), trump_card)
        self._start_round(spec, dealer, the_deal, seed)
        return the_deal

    def _start_round(self, spec: RoundSpec, dealer: int, the_deal: Deal, seed: int | None) -> None:
        self.number = spec.number
        self.spec = spec
        self.dealer = dealer
        self.order = self.rules.active_order(dealer, self.players)
        self._next = dict(zip(self.order, self.order[1:] + self.order[:1]))
        self.hands = list(map(list, the_deal.hands))
        self.trump_card = the_deal.trump_card
        self.trump_suit = the_deal.trump_card.suit if the_deal.trump_card is not None else None
        blind = False
        if not self.rules.is_clasica:
            if spec.trump_mode is TrumpMode.OROS:
                self.trump_suit = Suit.OROS
            blind = spec.is_blind
        self.bids = [None] * self.players
        self.bids_made = []
        self.blind_bids = [None] * self.players if blind else None
        self.auction_winner = None
        self.trick = []
        self.last_trick = ()
        self.last_trick_winner = None
        self.tricks = [0] * self.players
        self.log.append(RoundLog(the_deal.hands, the_deal.trump_card, [], None, [], seed, [] if blind else None))
        self.phase = Phase.BIDDING
        self.turn = self.order[0]

    # -- queries -----------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.GAME_OVER

    @property
    def resting(self) -> int | None:
        return self.dealer if self.spec is not None and self.rules.rests_dealer(self.players) else None

    @property
    def bidding_blind(self) -> bool:
        """Subastados' first bids: blind, no last-bidder rule, the highest chooses trump."""
        return self.blind_bids is not None and self.trump_suit is None

    def winners(self) -> list[int] | None:
        """Seats sharing the highest total once the game is over, else None."""
        if self.phase is not Phase.GAME_OVER:
            return None
        best = max(self.totals)
        return [seat for seat, total in enumerate(self.totals) if total == best]

    def forbidden_bid(self) -> int | None:
        """The bid the current (last) bidder may not make, if any."""
        if self.phase is not Phase.BIDDING or self.spec is None or self.bidding_blind:
            return None
        return forbidden_last_bid(self.spec, self.bids_made, len(self.order))

    def legal_bids(self) -> list[int]:
        if self.phase is not Phase.BIDDING or self.spec is None:
            return []
        forbidden = self.forbidden_bid()
        return [n for n in range(self.spec.cards + 1) if n != forbidden]

    def legal_cards(self, seat: int | None = None) -> list[Card]:
        if self.phase is not Phase.PLAYING or self.turn is None or (seat is not None and seat != self.turn):
            return []
        assert self.trump_suit is not None
        return legal_plays(
            self.hands[self.turn], [p.card for p in self.trick], self.trump_suit, self.rules.losing_trump
        )

    def legal_actions(self, seat: int | None = None) -> list[Action]:
        """What ``seat`` (default: whoever is to move) may do now; empty when it is not their turn."""
        if self.turn is None or (seat is not None and seat != self.turn):
            return []
        if self.phase is Phase.BIDDING:
            return [Bid(n) for n in self.legal_bids()]
        if self.phase is Phase.CHOOSING_TRUMP:
            return [ChooseTrump(s) for s in self.suits]
        if self.phase is Phase.PLAYING:
            return [Play(c) for c in self.legal_cards()]
        return []

    def is_legal(self, action: Action, seat: int | None = None) -> bool:
        try:
            self.check(action, seat)
        except IllegalActionError:
            return False
        return True

    def play_reasons(self, seat: int) -> dict[Card, IllegalPlayError]:
        """For each card of ``seat``'s hand that may not be played now, why not."""
        if self.trump_suit is None:
            return {}
        hand = self.hands[seat]
        if self.phase is not Phase.PLAYING or self.turn != seat:
            return {}
        trick = [p.card for p in self.trick]
        reasons: dict[Card, IllegalPlayError] = {}
        for card in hand:
            why = explain_illegal(card, hand, trick, self.trump_suit, self.rules.losing_trump)
            if why is not None:
                reasons[card] = why
        return reasons

    # -- decisions ---------------------------------------------------------------------

    def check(self, action: Action, seat: int | None = None) -> None:
        """Raise an IllegalActionError (its rule and parameters) unless ``seat`` may do ``action`` now."""
        if self.turn is None:
            raise IllegalActionError(Rule.NO_TURN)
        if seat is not None and seat != self.turn:
            raise IllegalActionError(Rule.NOT_YOUR_TURN, {"seat": seat, "turn": self.turn})
        if isinstance(action, Play):  # the commonest action first
            self._check_play(action.card)
        elif isinstance(action, Bid):
            self._check_bid(action.amount)
        elif isinstance(action, ChooseTrump):
            if self.phase is not Phase.CHOOSING_TRUMP:
                raise IllegalTrumpError(Rule.NOT_CHOOSING_TRUMP)
            if not isinstance(action.suit, Suit) or action.suit not in self.suits:
                raise IllegalTrumpError(Rule.NOT_A_SUIT)
        else:
            raise IllegalActionError(Rule.UNKNOWN_ACTION)

    def _check_play(self, card: Card) -> None:
        if self.phase is not Phase.PLAYING:
            raise IllegalPlayError(Rule.NOT_PLAYING_CARDS)
        assert self.turn is not None and self.trump_suit is not None
        why = explain_illegal(
            card, self.hands[self.turn], [p.card for p in self.trick], self.trump_suit, self.rules.losing_trump
        )
        if why is not None:
            raise why

    def _check_bid(self, amount: int) -> None:
        if self.phase is not Phase.BIDDING or self.spec is None:
            raise IllegalBidError(Rule.NOT_BIDDING)
        cards = self.spec.cards
        if not isinstance(amount, int) or isinstance(amount, bool) or not 0 <= amount <= cards:
            raise IllegalBidError(Rule.BID_RANGE, {"max": cards})
        # only the last bidder can be restricted
        if len(self.bids_made) == len(self.order) - 1 and amount == self.forbidden_bid():
            raise IllegalBidError(Rule.LAST_BIDDER_SUM, {"n": cards, "bid": amount})

    def apply(self, action: Action, seat: int | None = None) -> None:
        """Check then apply ``action`` for ``seat`` (default: whoever is to move)."""
        self.check(action, seat)
        self.apply_unchecked(action)

    def bid(self, amount: int) -> None:
        """Check then make ``amount`` the bid of the seat to move: ``apply(Bid(amount))`` without
        building the action (replaying a record)."""
        if self.turn is None:
            raise IllegalActionError(Rule.NO_TURN)
        self._check_bid(amount)
        self._bid(amount)

    def play(self, card: Card) -> None:
        """Check then play ``card`` for the seat to move: ``apply(Play(card))`` without building
        the action, for loops that play many cards (replaying a record)."""
        seat = self.turn
        trump = self.trump_suit
        if seat is not None and trump is not None and self.phase is _PLAYING:
            hand = self.hands[seat]
            trick = self.trick
            # leading, or holding one card, anything held may be played
            if card in hand and (
                not trick
                or len(hand) == 1
                or may_play(card, hand, [p.card for p in trick], trump, self.rules.losing_trump)
            ):
                self._play(card)
                return
        # refused: the full check says why
        if seat is None:
            raise IllegalActionError(Rule.NO_TURN)
        self._check_play(card)
        raise AssertionError(f"may_play and explain_illegal disagree on {card}")

    def apply_unchecked(self, action: Action) -> None:
        """Apply a legal action of the seat to move, without checking (for simulations)."""
        if isinstance(action, Play):
            self._play(action.card)
        elif isinstance(action, Bid):
            self._bid(action.amount)
        else:
            self._choose_trump(action.suit)

    def _bid(self, amount: int) -> None:
        seat = self.turn
        assert seat is not None and self.spec is not None
        if self.blind_bids is not None and self.trump_suit is None:  # subastados: the blind bids
            self.blind_bids[seat] = amount
            blind = self.log[-1].blind_bids
            assert blind is not None
            blind.append(amount)
            if len(blind) < len(self.order):
                self.turn = self._next[seat]
            else:
                self.auction_winner = auction_winner(self.order, blind)
                self.phase = Phase.CHOOSING_TRUMP
                self.turn = self.auction_winner
            return
        self.bids[seat] = amount
        self.bids_made.append(amount)
        self.log[-1].bids.append(amount)
        if len(self.bids_made) < len(self.order):
            self.turn = self._next[seat]
        elif self.spec.is_auction and not self.spec.is_blind:
            self.auction_winner = auction_winner(self.order, self.bids_made)
            self.phase = Phase.CHOOSING_TRUMP
            self.turn = self.auction_winner
        else:
            self.phase = Phase.PLAYING
            self.turn = self.order[0]

    def _choose_trump(self, suit: Suit) -> None:
        self.trump_suit = suit
        self.log[-1].trump_suit = suit
        # subastados: everyone bids again, knowing the trump; elsewhere the cards are played
        self.phase = Phase.BIDDING if self.blind_bids is not None else Phase.PLAYING
        self.turn = self.order[0]

    def _play(self, card: Card) -> None:
        seat = self.turn
        assert seat is not None and self.trump_suit is not None
        self.hands[seat].remove(card)
        self.log[-1].plays.append(card)
        trick = self.trick
        trick.append(_TRICK_PLAYS[seat][card.index])
        if len(trick) < len(self.order):
            self.turn = self._next[seat]
            return
        winner = trick[trick_winner([p.card for p in trick], self.trump_suit)].seat
        self.tricks[winner] += 1
        self.last_trick = tuple(self.trick)
        self.last_trick_winner = winner
        self.trick = []
        self.turn = winner
        if not self.hands[winner]:
            self._finish_round()

    def _finish_round(self) -> None:
        spec = self.spec
        assert spec is not None and self.trump_suit is not None
        if self.rules.is_clasica:
            factor = clasica_multiplier(self.players, self.trump_card, self.trump_suit)
        else:
            factor = self.rules.multiplier(self.players, self.trump_card, self.trump_suit)
        resting = self.resting
        doubled = None
        if not self.rules.is_clasica and self.rules.doubles(spec):
            doubled = next((seat for seat in self.order if self.tricks[seat] == spec.cards), None)
        round_points = []
        for seat in range(self.players):
            if seat == resting:
                round_points.append(RESTING_POINTS)
            else:
                bid = self.bids[seat]
                assert bid is not None
                round_points.append(factor * points(bid, self.tricks[seat]) * (2 if seat == doubled else 1))
        for seat, p in enumerate(round_points):
            self.totals[seat] += p
        self.results.append(
            RoundResult(
                number=spec.number,
                phase=spec.phase,
                cards=spec.cards,
                dealer=self.dealer,
                trump_suit=self.trump_suit,
                multiplier=factor,
                auction_winner=self.auction_winner,
                bids=tuple(self.bids),
                tricks=tuple(None if seat == resting else t for seat, t in enumerate(self.tricks)),
                points=tuple(round_points),
                kind=spec.kind,
                blind_bids=None if self.blind_bids is None else tuple(self.blind_bids),
                doubled=doubled,
            )
        )
        self.turn = None
        if self.rounds_played is not None:  # a game of chosen rounds ends with the last of them (no tie-break)
            self.phase = Phase.GAME_OVER if spec.number >= self.rounds_played[-1] else Phase.ROUND_OVER
            return
        if spec.number == len(self.schedule) and not self.rules.is_clasica and self._tie_break_due():
            self.schedule = (*self.schedule, self.rules.tie_break(self.players, spec.number + 1))
        self.phase = Phase.GAME_OVER if spec.number == len(self.schedule) else Phase.ROUND_OVER

    def _tie_break_due(self) -> bool:
        """The top score is shared after the last round, and the preset plays tie-break rounds (at most
        ``rules.tie_breaks`` of them)."""
        limit = self.rules.tie_breaks
        if not limit:
            return False
        played = len(self.schedule) - len(self.rules.schedule(self.players))
        best = max(self.totals)
        return played < limit and self.totals.count(best) > 1

    @property
    def suits(self) -> tuple[Suit, ...]:
        """The suits of this game's deck (the trump a subasta's winner may choose)."""
        return FRENCH_SUITS if self.rules.preset == "bazas" else SUITS

    def sorted_hand(self, seat: int) -> list[Card]:
        return sort_hand(self.hands[seat])
