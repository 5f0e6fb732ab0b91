"""Two bots over the same deals, duplicate format: is the candidate really better?

``python -m games.engine arena --a difícil --b fácil --players 4 --deals 20 --seed 1``

Every deal is a whole game (the real round schedule) dealt from one seed.  It is played once with
the field (B) in every seat, the *baseline*, and once more for each seat with the candidate (A)
in that seat and B in the others.  The deals are the same whatever anyone plays, so the candidate's
points in a seat are compared with what B scored in that seat on the same cards: the difference
per hand (round) is the candidate's edge, with a 95 % interval taken over the games (a game's
rounds are not independent of one another).  Also printed: full-game win rates (a shared first
place counts as a share), each side's exact-bid rate, decision times (p50/p95/max per side) and
illegal actions — every action goes through ``GameState.apply``, the engine's check; an outside
bot's illegal or missing answer is counted and replaced by the fácil move.

A side is a level (``fácil``, ``normal``, ``difícil``) or ``exec:COMMAND``, a program speaking
pocha-bot/1 (``shared/BOT-PROTOCOL.md``).

Every preset (``shared/VARIANTS.md``): ``--rules indias`` (or ``se-dobla`` with ``--schedule`` and
``--forehead``, ``bazas``, ``clasica``; ``all`` for each in turn) plays the games under those rules and
prints a block of figures per preset.  The score difference counts the schedule's rounds (a tie-break
round is played only in the games that tie, so it has no counterpart in the others); an indias card,
played without a choice, is no decision.  Decision times are shown against the level's hard cap.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .actions import Action
from .levels import BUDGETS, LEVEL_NAMES, decide, parse_level
from .presets import CLASICA, PLAYERS, PRESETS, Rules
from .state import GameState, Phase
from .view import SeatView, seat_view


class Player(Protocol):
    name: str

    def act(self, view: SeatView, rng: random.Random) -> tuple[Action | None, str]: ...

    def close(self) -> None: ...


class LevelPlayer:
    def __init__(self, level: str) -> None:
        self.level = parse_level(level)
        self.name = LEVEL_NAMES[self.level]
        from . import search  # noqa: F401  (loaded now: importing it is no decision's time)

    def act(self, view: SeatView, rng: random.Random) -> tuple[Action | None, str]:
        return decide(view, self.level, rng=rng), ""

    def close(self) -> None:
        pass


class ExecPlayer:
    def __init__(self, command: str) -> None:
        from .protocol import ProtocolBot

        self.bot = ProtocolBot(command)
        self.name = f"exec:{command}"

    def act(self, view: SeatView, rng: random.Random) -> tuple[Action | None, str]:
        return self.bot.decide(view)

    def close(self) -> None:
        self.bot.close()


def make_player(spec: str) -> Player:
    if spec.startswith("exec:"):
        return ExecPlayer(spec[5:])
    return LevelPlayer(spec)


@dataclass
class Side:
    bids: int = 0
    exact: int = 0
    times: list[float] = field(default_factory=list)
    illegal: int = 0


@dataclass
class GameResult:
    deal: int
    seat: int | None  # the candidate's seat; None for the baseline
    points: list[list[int]]  # by round, by seat
    totals: list[int]
    winners: list[int]
    sides: dict[str, Side]


def play_one(
    players: int, deal_seed: int, seat_of_a: int | None, a: Player, b: Player, rules: Rules = CLASICA
) -> GameResult:
    """One game of the deal ``deal_seed`` under ``rules``: A in ``seat_of_a`` (None: nowhere), B elsewhere."""
    from .bot import default_action

    game = GameState.new(players, seed=deal_seed, rules=rules)
    sides = {"a": Side(), "b": Side()}
    rngs = [random.Random(deal_seed * 10 + seat) for seat in range(players)]
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
            continue
        seat = game.turn
        assert seat is not None
        key = "a" if seat == seat_of_a else "b"
        player = a if key == "a" else b
        view = seat_view(game, seat, reasons=False)
        if view.plays_hidden:  # an indias card: played as it is, nobody's decision
            game.apply(default_action(game), seat)
            continue
        started = time.perf_counter()
        action, _why = player.act(view, rngs[seat])
        sides[key].times.append(time.perf_counter() - started)
        if action is None or not game.is_legal(action, seat):
            sides[key].illegal += 1
            action = default_action(game)
        game.apply(action, seat)  # the engine's check, every time
    for result in game.results:
        for seat, bid in enumerate(result.bids):
            if bid is None:
                continue
            side = sides["a" if seat == seat_of_a else "b"]
            side.bids += 1
            side.exact += bid == result.tricks[seat]
    winners = game.winners() or []
    return GameResult(deal_seed, seat_of_a, [list(r.points) for r in game.results], list(game.totals), winners, sides)


Job = tuple[int, int, int | None, str, str, dict[str, Any]]


def _job(args: Job) -> GameResult:
    players, deal_seed, seat, spec_a, spec_b, rules = args
    a, b = make_player(spec_a), make_player(spec_b)
    try:
        return play_one(players, deal_seed, seat, a, b, Rules.from_json(rules))
    finally:
        a.close()
        b.close()


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[k]


def _interval(values: Sequence[float]) -> tuple[float, float]:
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, float("inf")
    return mean, 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def run_arena(
    spec_a: str, spec_b: str, players: int, deals: int, seed: int, jobs: int = 1, rules: Rules = CLASICA
) -> dict[str, Any]:
    rules.check_players(players)
    regular = len(rules.schedule(players))  # the rounds every game plays (tie-breaks only where tied)
    deal_seeds = [seed * 100_003 + k for k in range(deals)]
    as_json = rules.as_json()
    work: list[Job] = []
    for d in deal_seeds:
        work.append((players, d, None, spec_a, spec_b, as_json))
        work.extend((players, d, seat, spec_a, spec_b, as_json) for seat in range(players))
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            results = pool.map(_job, work, chunksize=1)
    else:
        results = [_job(w) for w in work]
    baseline = {r.deal: r for r in results if r.seat is None}
    per_game: list[float] = []  # candidate minus baseline, per hand, one value per game
    hands: list[float] = []
    a_wins = b_wins = 0.0
    a_side, b_side = Side(), Side()
    for r in results:
        for key, side in (("a", a_side), ("b", b_side)):
            s = r.sides[key]
            side.bids += s.bids
            side.exact += s.exact
            side.times += s.times
            side.illegal += s.illegal
        if r.seat is None:
            continue
        base = baseline[r.deal]
        diffs = [r.points[n][r.seat] - base.points[n][r.seat] for n in range(regular)]
        hands += diffs
        per_game.append(statistics.fmean(diffs))
        if r.seat in r.winners:
            a_wins += 1 / len(r.winners)
        if r.seat in base.winners:
            b_wins += 1 / len(base.winners)
    games = len(per_game)
    mean, half = _interval(per_game)
    return {
        "a": spec_a,
        "b": spec_b,
        "rules": rules,
        "players": players,
        "deals": deals,
        "games": games,
        "hands": len(hands),
        "diff_per_hand": mean,
        "ci95": half,
        "win_rate_a": a_wins / games,
        "win_rate_b_same_seat": b_wins / games,
        "exact_a": a_side.exact / max(1, a_side.bids),
        "exact_b": b_side.exact / max(1, b_side.bids),
        "bids_a": a_side.bids,
        "bids_b": b_side.bids,
        "time_a": (_percentile(a_side.times, 0.5), _percentile(a_side.times, 0.95), max(a_side.times, default=0.0)),
        "time_b": (_percentile(b_side.times, 0.5), _percentile(b_side.times, 0.95), max(b_side.times, default=0.0)),
        "decisions_a": len(a_side.times),
        "decisions_b": len(b_side.times),
        "illegal_a": a_side.illegal,
        "illegal_b": b_side.illegal,
    }


def preset_rules(preset: str, schedule: str = "sencillas", forehead: bool = False) -> list[Rules]:
    """The rules ``--rules`` names: one preset, or ``all`` of them in turn (se dobla's options go to se dobla
    alone); ValueError for anything else."""
    names = PRESETS if preset == "all" else (preset,)
    if preset != "all" and preset not in PRESETS:
        raise ValueError(f"unknown rules {preset!r} (one of {', '.join(PRESETS)} or all)")
    if preset not in ("all", "se-dobla") and (schedule != "sencillas" or forehead):
        raise ValueError("--schedule and --forehead are se-dobla's options")
    return [
        Rules.of(name, schedule=schedule, forehead=forehead) if name == "se-dobla" else Rules.of(name) for name in names
    ]


def rules_name(rules: Rules) -> str:
    """``indias``, ``se-dobla (escalera, en la frente)``..."""
    if rules.preset != "se-dobla":
        return rules.preset
    return f"se-dobla ({rules.schedule_name}{', en la frente' if rules.forehead else ''})"


def cmd_arena(
    spec_a: str,
    spec_b: str,
    players: int,
    deals: int,
    seed: int,
    jobs: int = 1,
    preset: str | None = None,
    schedule: str = "sencillas",
    forehead: bool = False,
) -> int:
    """Print the arena's figures; ``preset`` None: Clásica as ever, otherwise a block per preset (``all``: each)."""
    try:
        for spec in (spec_a, spec_b):
            if not spec.startswith("exec:"):
                parse_level(spec)
        every = preset_rules(preset or "clasica", schedule, forehead)
    except ValueError as error:
        print(f"arena: {error}")
        return 2
    played = 0
    for rules in every:
        low, high = PLAYERS[rules.preset]
        if not low <= players <= high:
            print(f"== {rules_name(rules)}: played by {low} to {high}, not {players}; skipped ==")
            continue
        if preset is not None:
            print(f"== {rules_name(rules)}, {players} players ==")
        _print_arena(spec_a, spec_b, players, deals, seed, jobs, rules)
        played += 1
    return 0 if played else 2


def _cap(spec: str) -> str:
    if spec.startswith("exec:"):
        return ""
    level = parse_level(spec)
    return f"; {LEVEL_NAMES[level]}'s cap {BUDGETS[level][1]:.0f} ms"


def _print_arena(spec_a: str, spec_b: str, players: int, deals: int, seed: int, jobs: int, rules: Rules) -> None:
    started = time.perf_counter()
    r = run_arena(spec_a, spec_b, players, deals, seed, jobs, rules)
    elapsed = time.perf_counter() - started

    def ms(t: tuple[float, float, float]) -> str:
        return f"p50 {1000 * t[0]:.1f} ms, p95 {1000 * t[1]:.1f} ms, max {1000 * t[2]:.1f} ms"

    print(
        f"arena: A = {spec_a}, B = {spec_b}; {players} players, {deals} deals (seed {seed}), "
        f"{r['games']} games with A rotated through every seat + {deals} baseline games of B; {elapsed:.0f} s"
    )
    print(
        f"score difference per hand (A − B in the same seat, same cards): {r['diff_per_hand']:+.2f} "
        f"± {r['ci95']:.2f} (95 % interval over {r['games']} games, {r['hands']} hands)"
    )
    print(
        f"full-game win rate: A {100 * r['win_rate_a']:.1f} %, B in the same seats {100 * r['win_rate_b_same_seat']:.1f} %"
    )
    print(
        f"exact-bid rate: A {100 * r['exact_a']:.1f} % ({r['bids_a']} bids), B {100 * r['exact_b']:.1f} % "
        f"({r['bids_b']} bids)"
    )
    print(f"decision time A: {ms(r['time_a'])} ({r['decisions_a']} decisions{_cap(spec_a)})")
    print(f"decision time B: {ms(r['time_b'])} ({r['decisions_b']} decisions{_cap(spec_b)})")
    print(f"illegal actions: A {r['illegal_a']}, B {r['illegal_b']}")
