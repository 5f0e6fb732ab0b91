"""A bot's analysis of every decision of a finished game: what each choice was worth, and what was best.

Each decision of a record (a blind bid, a bid, a trump choice, a card) is looked at from the deciding seat's
view only (``seat_view``: what that seat could see then, never another seat's unplayed card), with the
searching bot's own evaluation (``search.Search``: worlds drawn consistently with the view, every legal
option played out in each).  Each option is scored in **expected points** for that seat in that round, as
the engine scores them (the round's multiplier and se dobla's doubling included) and nothing else: not the
bot's taste for exact bids (``EXACT_BONUS``), nor the leader's points.

* a card: the seat's points at the end of the round after it (an exact search in the last tricks, as the
  bot does);
* a bid (a normal round's, a subasta's, subastados' contract): the later bidders bid what their drawn
  hands are worth, the subasta's winner chooses the trump its hand is best in;
* an indias bid: over every card the seat's own may be, weighed as the bot weighs them (the earlier bids);
* a trump choice: the points with each suit (subastados: everyone bidding the contract again);
* a blind bid (subastados): who wins the auction after it (the later seats bidding what their hands are
  worth), the trump then chosen (this seat's best, or the suit the winner's hand is best in) and the
  contract's points with it.

The *loss* of a decision is the expected points of the best option less the played one's; its *margin*
the 95% half-width of that estimate (the same worlds serve every option, so the difference is measured
world by world: 1.96 weighted standard errors of it).  A loss is marked (``MARKS``) only when it is beyond
its margin, so the luck of the worlds drawn never marks a decision.  A forced decision (one legal option)
is not searched: loss 0, never marked, its expected points 0.0 (not computed).  Indias cards are played
by nobody's choice: they are left out.

Rounds are counted as the record holds them, from 1 (``rounds_in``, ``analyse_round``'s and ``play_round``'s
``number``, ``RoundAnalysis.number``, ``Decision.round``): in a game of only some rounds of the schedule
(``GameState.of_rounds``, the record's ``rounds_played``) the record's second round of ``[5, 15]`` is number 2
here, round 15 of the schedule (``schedule_number``).

Every search draws a fixed number of worlds from a generator seeded by (``seed``, round, kind, index)
only: the same record and seed give the same analysis on any machine, in any order of the rounds, in one
process or many (no clock decides anything).

>>> from games.engine.bot import play_game
>>> from games.engine.record import export_record
>>> record = export_record(play_game(4, 3))
>>> rounds_in(record)
19
>>> first = analyse_round(record, 1, seed=1, worlds=8)
>>> [d.kind for d in first.decisions]
['bid', 'bid', 'bid', 'bid', 'play', 'play', 'play', 'play']
>>> RoundAnalysis.from_json(first.as_json()).as_json() == first.as_json()
True
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .actions import Action, Bid, ChooseTrump, Play
from .cards import Card, Suit
from .levels import DIFICIL, NORMAL, NORMAL_WORLDS, decide, parse_level
from .presets import CLASICA, Rules
from .record import FORMAT_2, replay
from .rules import points
from .schedule import RoundPhase
from .search import Search
from .state import GameState, Phase
from .view import SeatView, seat_view

#: Marks by expected loss (points), the largest first: a decision gets the first it reaches, if its loss is
#: beyond its margin.
MARKS: tuple[tuple[str, float], ...] = (("blunder", 10.0), ("error", 5.0), ("imprecision", 2.0))
#: Worlds drawn per decision: a whole four-seat Clásica game (464 decisions, some 280 not forced) analyses in
#: 60-75 s on one process of a two-core machine (``python -m games.engine analyse``); longer games take longer
#: (six seats about 110 s, indias at four, 37 rounds, about 210 s), a round at a time in any process.
DEFAULT_WORLDS = 1000
#: Accuracy of a decision: 100 × exp(−loss / ACCURACY_SCALE) percent (a loss of 10 points: 37%).
ACCURACY_SCALE = 10.0
#: ``play_round``'s worlds a decision by level (fácil searches nothing): normal's most, and about what difícil
#: reaches in its own time budget (a fixed number, so that a seed gives the same round on any machine).
PRACTICE_WORLDS: dict[str, int] = {NORMAL: NORMAL_WORLDS, DIFICIL: 300}
#: The half-width of a 95% interval, in standard errors.
Z95 = 1.96

KINDS = ("blind_bid", "bid", "trump", "play")


@dataclass(frozen=True)
class Decision:
    """One decision of a round and what the analysis makes of it (points: the seat's, in that round)."""

    round: int  # round number from 1
    kind: str  # "blind_bid" | "bid" | "trump" | "play"
    index: int  # in the round's record: blind_bids[i], bids[i], 0 for the trump, plays[i]
    seat: int
    played: str  # the action in the engine's notation: a bid "2", a suit letter "o", a card "1o"
    best: str  # the option with the highest expected points (ties: the played one, then the first)
    expected_played: float
    expected_best: float
    loss: float  # expected_best - expected_played, >= 0
    margin: float  # 95% half-width of the loss estimate; 0 when forced or played == best
    forced: bool
    mark: str | None  # "blunder" | "error" | "imprecision" | None
    options: tuple[tuple[str, float], ...]  # every legal option and its expected points, in legal order

    def as_json(self) -> dict[str, Any]:
        """Plain JSON (points rounded to 2 decimals)."""
        return {
            "round": self.round,
            "kind": self.kind,
            "index": self.index,
            "seat": self.seat,
            "played": self.played,
            "best": self.best,
            "expected_played": _round(self.expected_played),
            "expected_best": _round(self.expected_best),
            "loss": _round(self.loss),
            "margin": _round(self.margin),
            "forced": self.forced,
            "mark": self.mark,
            "options": [[name, _round(value)] for name, value in self.options],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        """The decision ``as_json`` gave (KeyError, TypeError or ValueError if it is not one)."""
        kind = str(data["kind"])
        if kind not in KINDS:
            raise ValueError(f"not a kind of decision: {kind!r}")
        mark = data["mark"]
        if mark is not None and mark not in {name for name, _ in MARKS}:
            raise ValueError(f"not a mark: {mark!r}")
        return cls(
            round=int(data["round"]),
            kind=kind,
            index=int(data["index"]),
            seat=int(data["seat"]),
            played=str(data["played"]),
            best=str(data["best"]),
            expected_played=float(data["expected_played"]),
            expected_best=float(data["expected_best"]),
            loss=float(data["loss"]),
            margin=float(data["margin"]),
            forced=bool(data["forced"]),
            mark=mark,
            options=tuple((str(name), float(value)) for name, value in data["options"]),
        )


@dataclass(frozen=True)
class RoundAnalysis:
    """Every decision of one round, and by seat the bid the analysis prefers and the points lost."""

    number: int
    par_bids: tuple[int | None, ...]  # by seat: the best (contract) bid at its bidding moment; None resting
    loss: tuple[float, ...]  # by seat: the sum of its decisions' losses
    decisions: tuple[Decision, ...]  # in the order they were made (indias cards left out)

    def as_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "par_bids": list(self.par_bids),
            "loss": [_round(x) for x in self.loss],
            "decisions": [d.as_json() for d in self.decisions],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RoundAnalysis:
        """The round ``as_json`` gave (KeyError, TypeError or ValueError if it is not one)."""
        return cls(
            number=int(data["number"]),
            par_bids=tuple(None if b is None else int(b) for b in data["par_bids"]),
            loss=tuple(float(x) for x in data["loss"]),
            decisions=tuple(Decision.from_json(d) for d in data["decisions"]),
        )


def _round(value: float) -> float:
    return round(float(value), 2) + 0.0  # (+ 0.0: no -0.0)


# -- the record -------------------------------------------------------------------------------


def rounds_in(record: dict[str, Any]) -> int:
    """How many rounds ``record`` holds (it is replayed and checked first: RecordError if it is broken)."""
    return len(replay(record).game.results)


def _rules(record: dict[str, Any]) -> Rules:
    return Rules.from_json(record["rules"]) if record.get("format") == FORMAT_2 else CLASICA


def schedule_number(record: dict[str, Any], number: int) -> int:
    """The number in the schedule of the record's ``number``-th round (the same number but in a game of
    chosen rounds, ``rounds_played``)."""
    chosen = record.get("rounds_played")
    return number if chosen is None else int(chosen[number - 1])


def _game_before(record: dict[str, Any], number: int) -> GameState:
    """The record checked, and replayed to the end of the round before ``number`` (ValueError if the record
    has no round ``number``)."""
    rounds = rounds_in(record)
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= rounds:
        raise ValueError(f"the record holds rounds 1 to {rounds}, not {number!r}")
    return replay({**record, "rounds": record["rounds"][: number - 1]}).game


def _deal(game: GameState, entry: dict[str, Any]) -> None:
    hands = [[Card.parse(c) for c in hand] for hand in entry["hands"]]
    trump = entry.get("trump_card")
    game.deal(hands, Card.parse(trump) if trump is not None else None)


def _next_step(game: GameState, entry: dict[str, Any]) -> tuple[str, int, Action]:
    """The decision due in ``game`` (its kind and index in the record's round) and the action the record
    says was taken."""
    if game.phase is Phase.BIDDING:
        if game.bidding_blind:
            blind = game.log[-1].blind_bids
            assert blind is not None
            return "blind_bid", len(blind), Bid(int(entry["blind_bids"][len(blind)]))
        index = len(game.bids_made)
        return "bid", index, Bid(int(entry["bids"][index]))
    if game.phase is Phase.CHOOSING_TRUMP:
        return "trump", 0, ChooseTrump(Suit.parse(entry["trump_suit"]))
    if game.phase is Phase.PLAYING:
        index = len(game.log[-1].plays)
        return "play", index, Play(Card.parse(entry["plays"][index]))
    raise ValueError(f"no decision is due in phase {game.phase}")


def _check_worlds(worlds: int) -> None:
    if not isinstance(worlds, int) or isinstance(worlds, bool) or worlds < 1:
        raise ValueError(f"worlds must be a whole number from 1, not {worlds!r}")


def derived_seed(seed: int, number: int, kind: str, index: int) -> int:
    """The seed of one decision's search: from these four alone (the same on any machine and process)."""
    digest = hashlib.sha256(f"pocha-analysis/{seed}/{number}/{kind}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# -- one decision ------------------------------------------------------------------------------


def _name(action: Action) -> str:
    if isinstance(action, Bid):
        return str(action.amount)
    if isinstance(action, ChooseTrump):
        return action.suit.value
    return str(action.card)


def _search(view: SeatView, rng: random.Random, worlds: int) -> Search:
    """The difícil bot's search (reading the bids and the play), exactly ``worlds`` worlds, no clock."""
    return Search(view, rng, math.inf, math.inf, min_worlds=worlds, max_worlds=worlds)


def evaluate(view: SeatView, rng: random.Random, worlds: int) -> tuple[list[str], list[float], list[list[float]]]:
    """The legal options of ``view``'s seat (in legal order, by name), and per world drawn its weight and the
    points each option scores the seat in the round (multiplier and doubling included)."""
    search = _search(view, rng, worlds)
    names = [_name(a) for a in view.legal]
    me = search.me
    multiplier = view.multiplier or 1
    values: list[list[float]]
    if view.phase is Phase.PLAYING:
        played = search.evaluate_play(keep=True)
        bids = played.bids
        assert bids is not None
        values = [[multiplier * search.utility(bids, won, 0.0) for won in row] for row in played.outcomes]
        return names, played.weights, values
    if view.phase is Phase.CHOOSING_TRUMP:
        codes = [search.deck.suits.index(a.suit) for a in view.legal if isinstance(a, ChooseTrump)]
        if view.blind_bids is not None:  # subastados: the contract is bid after the choice
            rows = search.contracts(0.0)
            return names, [w for _, w, _ in rows], [[row[s] for s in codes] for _, _, row in rows]
        chosen = search.evaluate_trump(keep=True)
        bids = chosen.bids
        assert bids is not None
        values = [[search.factor(s) * search.utility(bids, row[s], 0.0) for s in codes] for row in chosen.outcomes]
        return names, chosen.weights, values
    amounts = [a.amount for a in view.legal if isinstance(a, Bid)]
    if view.blind_bids is not None and view.trump_suit is None:  # subastados' blind bid
        order = view.order
        blind = view.blind_bids
        earlier = [blind[s] or 0 for s in order[: order.index(me)]]
        rows = search.contracts(0.0)
        totals = [sum(w * row[s] for _, w, row in rows) for s in range(4)]
        mine = max(range(4), key=lambda s: (totals[s], -s))  # the trump this seat would choose
        values = [[row[search.blind_trump(world, earlier, b, mine)] for b in amounts] for world, _, row in rows]
        return names, [w for _, w, _ in rows], values
    if view.hidden:  # indias: every card the seat's own may be
        cards = search.evaluate_indias(keep=True)
        values = [[multiplier * points(b, won) for b, won in zip(amounts, row)] for row in cards.outcomes]
        return names, cards.weights, values
    bid = search.evaluate_bid(keep=True)
    auction = view.round_phase is RoundPhase.SUBASTA and view.blind_bids is None
    values = [
        [(search.factor(trump) if auction else multiplier) * search.utility(bids, won, 0.0) for bids, won, trump in row]
        for row in bid.outcomes
    ]
    return names, bid.weights, values


def _decision(view: SeatView, action: Action, number: int, kind: str, index: int, seed: int, worlds: int) -> Decision:
    assert view.seat is not None
    played = _name(action)
    if len(view.legal) <= 1:
        return Decision(
            number, kind, index, view.seat, played, played, 0.0, 0.0, 0.0, 0.0, True, None, ((played, 0.0),)
        )
    rng = random.Random(derived_seed(seed, number, kind, index))
    names, weights, values = evaluate(view, rng, worlds)
    assert values, "no world was drawn"
    if sum(weights) <= 0:  # every world impossible by the bids: count them alike
        weights = [1.0] * len(values)
    total = sum(weights)
    expected = [sum(w * row[i] for w, row in zip(weights, values)) / total for i in range(len(names))]
    mine = names.index(played)
    top = max(expected)
    best = mine if expected[mine] == top else expected.index(top)
    loss = max(0.0, expected[best] - expected[mine])
    margin = 0.0
    if best != mine:
        diffs = [row[best] - row[mine] for row in values]
        mean = sum(w * d for w, d in zip(weights, diffs)) / total
        n = len(diffs)
        if n > 1:
            spread = sum((w * (d - mean)) ** 2 for w, d in zip(weights, diffs))
            margin = Z95 * math.sqrt(spread * n / (n - 1)) / total
        else:
            margin = loss  # one world: no measure of the noise, so no mark
    mark = None
    if loss - margin > 0:
        mark = next((name for name, threshold in MARKS if loss >= threshold), None)
    return Decision(
        round=number,
        kind=kind,
        index=index,
        seat=view.seat,
        played=played,
        best=names[best],
        expected_played=expected[mine],
        expected_best=expected[best],
        loss=loss,
        margin=margin,
        forced=False,
        mark=mark,
        options=tuple(zip(names, expected)),
    )


# -- rounds and games --------------------------------------------------------------------------


def _analyse(game: GameState, entry: dict[str, Any], number: int, seed: int, worlds: int) -> RoundAnalysis:
    """Round ``number`` of the record (``entry``) from its deal, ``game`` at the end of the round before
    (played on to the round's end)."""
    _deal(game, entry)
    decisions: list[Decision] = []
    while game.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
        seat = game.turn
        assert seat is not None
        kind, index, action = _next_step(game, entry)
        view = seat_view(game, seat, reasons=False)
        if not view.plays_hidden:  # an indias card is nobody's choice
            decisions.append(_decision(view, action, number, kind, index, seed, worlds))
        game.apply(action, seat)
    par: list[int | None] = [None] * game.players
    loss = [0.0] * game.players
    for d in decisions:
        loss[d.seat] += d.loss
        if d.kind == "bid":
            par[d.seat] = int(d.best)
    return RoundAnalysis(number, tuple(par), tuple(loss), tuple(decisions))


def analyse_round(record: dict[str, Any], number: int, *, seed: int, worlds: int = DEFAULT_WORLDS) -> RoundAnalysis:
    """Every decision of round ``number`` (from 1) of ``record``, each from its seat's view, searched with
    ``worlds`` worlds from generators seeded by ``seed`` (RecordError if the record is broken, ValueError if
    it has no such round)."""
    _check_worlds(worlds)
    game = _game_before(record, number)
    return _analyse(game, record["rounds"][number - 1], number, seed, worlds)


def analyse_game(
    record: dict[str, Any],
    *,
    seed: int,
    worlds: int = DEFAULT_WORLDS,
    progress: Callable[[int, int], None] | None = None,
) -> list[RoundAnalysis]:
    """``analyse_round`` for every round of ``record``, in order (the same results); ``progress(done,
    total)`` after each round."""
    _check_worlds(worlds)
    total = rounds_in(record)
    game = replay({**record, "rounds": []}).game
    out: list[RoundAnalysis] = []
    for number in range(1, total + 1):
        out.append(_analyse(game, record["rounds"][number - 1], number, seed, worlds))
        if progress is not None:
            progress(number, total)
    return out


# -- figures ------------------------------------------------------------------------------------


def accuracy(decisions: Iterable[Decision]) -> float | None:
    """The accuracy of ``decisions``, in percent: the mean of 100 × exp(−loss / ACCURACY_SCALE) over the
    decisions not forced; None when every one was forced (or there is none)."""
    scores = [100.0 * math.exp(-d.loss / ACCURACY_SCALE) for d in decisions if not d.forced]
    return sum(scores) / len(scores) if scores else None


def summary(rounds: Sequence[RoundAnalysis], players: int) -> dict[str, Any]:
    """By seat: its decisions not forced, their accuracy and average loss, the total loss and the marks."""
    seats: list[dict[str, Any]] = []
    for seat in range(players):
        mine = [d for r in rounds for d in r.decisions if d.seat == seat]
        chosen = [d for d in mine if not d.forced]
        figure = accuracy(chosen)
        loss = sum(d.loss for d in mine)
        marks = {name: 0 for name in ("imprecision", "error", "blunder")}
        for d in chosen:
            if d.mark is not None:
                marks[d.mark] += 1
        seats.append(
            {
                "seat": seat,
                "decisions": len(chosen),
                "accuracy": None if figure is None else _round(figure),
                "average_loss": _round(sum(d.loss for d in chosen) / len(chosen)) if chosen else None,
                "loss": _round(loss),
                "marks": marks,
            }
        )
    return {"seats": seats}


# -- a round played again -----------------------------------------------------------------------


def play_round(
    record: dict[str, Any], number: int, seat_levels: Sequence[str], *, seed: int, worlds: int | None = None
) -> dict[str, Any]:
    """Round ``number`` of ``record``'s game played again from its deal, as a practice game
    (``GameState.practice`` of that round of the schedule: ``schedule_number``), each seat by the bot of
    ``seat_levels[seat]`` (``levels.decide``; an indias card played as the server plays it).  ``worlds``: the
    worlds of every search (None: ``PRACTICE_WORLDS``, by level); the generators are seeded from ``seed`` alone,
    so the same call gives the same round.
    By seat: ``bids``, ``tricks`` and ``points`` (None for a resting dealer's bid and tricks), and the round's
    ``trump_suit`` and ``multiplier``."""
    _game_before(record, number)  # the record checked, and the round in it
    players = len(record["players"])
    if len(seat_levels) != players:
        raise ValueError(f"a level for each of the {players} seats, not {len(seat_levels)}")
    game = GameState.practice(
        _rules(record), record["players"], record["first_dealer"], schedule_number(record, number)
    )
    _deal(game, record["rounds"][number - 1])
    step = 0
    while game.phase is not Phase.GAME_OVER:
        seat = game.turn
        assert seat is not None
        view = seat_view(game, seat, reasons=False)
        if view.plays_hidden:  # an indias card: played as it is, nobody's decision
            action: Action = Play(game.hands[seat][0])
        else:
            rng = random.Random(derived_seed(seed, number, "practice", step))
            level = parse_level(seat_levels[seat])
            action = decide(view, level, rng=rng, worlds=PRACTICE_WORLDS.get(level) if worlds is None else worlds)
        game.apply(action, seat)
        step += 1
    result = game.results[-1]
    return {
        "bids": list(result.bids),
        "tricks": list(result.tricks),
        "points": list(result.points),
        "trump_suit": result.trump_suit.value,
        "multiplier": result.multiplier,
    }


# -- a duplicate tournament's par ------------------------------------------------------------------


def play_deals(
    rules: dict[str, Any],
    players: int,
    first_dealer: int,
    rounds: Sequence[int],
    seeds: Sequence[int],
    *,
    level: str = DIFICIL,
    seed: int = 0,
    worlds: int | None = None,
) -> list[list[int]]:
    """The chosen ``rounds`` of a game (``GameState.of_rounds``) dealt from ``seeds`` (one per round, as the
    tables dealt them) and played by the bot of ``level`` in every seat: each round's points by seat, in
    order — a duplicate tournament's par.  Seeded from ``seed`` alone: the same call, the same par."""
    if len(seeds) != len(rounds):
        raise ValueError(f"a seed for each of the {len(rounds)} rounds, not {len(seeds)}")
    game = GameState.of_rounds(Rules.from_json(rules), players, first_dealer, rounds)
    parsed = parse_level(level)
    step = 0
    for round_seed in seeds:
        game.deal(seed=round_seed)
        while game.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
            seat = game.turn
            assert seat is not None
            view = seat_view(game, seat, reasons=False)
            if view.plays_hidden:  # an indias card: played as it is, nobody's decision
                action: Action = Play(game.hands[seat][0])
            else:
                rng = random.Random(derived_seed(seed, game.number, "par", step))
                action = decide(view, parsed, rng=rng, worlds=PRACTICE_WORLDS.get(parsed) if worlds is None else worlds)
            game.apply(action, seat)
            step += 1
    return [list(result.points) for result in game.results]
