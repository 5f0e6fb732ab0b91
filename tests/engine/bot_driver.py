#!/usr/bin/env python3
"""An independent referee for pocha-bot/1 bots (``shared/BOT-PROTOCOL.md``).

It deals random games of La Pocha with its own plain implementation of the rules (``shared/RULES.md``)
— it does not import ``games.engine`` at all, so it checks the engine's bot against a second reading
of the rules — writes a ``pocha-view/1`` document for every decision, sends it to a bot program,
checks every answer against its own legality rules and times it.  It can also slip malformed lines
in between the views and check that each gets an ``{"error": ...}`` line and the bot goes on.

    python tests/engine/bot_driver.py --level normal --games 2 --players 4 --seed 1
    python tests/engine/bot_driver.py --command "python my_bot.py" --players 3 4 5 6 --garbage-every 7

Cards are strings in the game's notation (``1o``, ``12b``); seats are 0..N-1.
"""

from __future__ import annotations

import argparse
import copy
import json
import queue
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

# -- the rules, read plainly from RULES.md -------------------------------------------------------------

SUIT_LETTERS = ("o", "c", "e", "b")  # oros, copas, espadas, bastos
RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
# strongest first: 1 > 3 > 12 > 11 > 10 > 7 > 6 > 5 > 4 > 2
STRONGEST_FIRST = (1, 3, 12, 11, 10, 7, 6, 5, 4, 2)
REMOVED = {3: (2, 4, 5, 6), 4: (2, 4), 5: (), 6: ()}


def suit_of(card: str) -> str:
    return card[-1]


def rank_of(card: str) -> int:
    return int(card[:-1])


def power(card: str) -> int:
    """Bigger is stronger within a suit."""
    return len(STRONGEST_FIRST) - STRONGEST_FIRST.index(rank_of(card))


def table_deck(players: int) -> list[str]:
    return [f"{rank}{suit}" for suit in SUIT_LETTERS for rank in RANKS if rank not in REMOVED[players]]


def game_rounds(players: int) -> list[tuple[str, int]]:
    """(phase, cards) of every round: climb 1..8, one 8-card auction per player, descend 7..1."""
    return [("subida", n) for n in range(1, 9)] + [("subasta", 8)] * players + [("bajada", n) for n in range(7, 0, -1)]


def seats_in_play(dealer: int, players: int) -> list[int]:
    """From the dealer's left round to the dealer; at six the dealer rests."""
    seats = [(dealer + k) % players for k in range(1, players + 1)]
    return seats[:-1] if players == 6 else seats


def allowed_bids(cards: int, phase: str, bids_so_far: Sequence[int], bidders: int) -> list[int]:
    choices = list(range(cards + 1))
    last = len(bids_so_far) == bidders - 1
    if phase != "subasta" and last:
        # the last bidder may not make the bids add up to the number of tricks
        banned = cards - sum(bids_so_far)
        choices = [n for n in choices if n != banned]
    return choices


def allowed_cards(hand: Sequence[str], on_table: Sequence[str], trump: str) -> list[str]:
    """What may be played from ``hand`` onto the cards already in the trick."""
    if not on_table:
        return list(hand)
    led = suit_of(on_table[0])
    of_led = [c for c in hand if suit_of(c) == led]
    if of_led:
        # asistir; montar unless somebody void in the led suit has trumped (fallado)
        fallado = led != trump and any(suit_of(c) == trump for c in on_table)
        if fallado:
            return of_led
        top = max(power(c) for c in on_table if suit_of(c) == led)
        beating = [c for c in of_led if power(c) > top]
        return beating if beating else of_led
    my_trumps = [c for c in hand if suit_of(c) == trump]
    if my_trumps:
        # fallar; contrafallar when a trump is on the table and can be beaten
        trumps_down = [power(c) for c in on_table if suit_of(c) == trump]
        if trumps_down:
            beating = [c for c in my_trumps if power(c) > max(trumps_down)]
            return beating if beating else my_trumps
        return my_trumps
    return list(hand)


def taker(on_table: Sequence[str], trump: str) -> int:
    """Index of the card that takes a complete trick: the highest trump, else the highest of the led suit."""
    trumps = [i for i, c in enumerate(on_table) if suit_of(c) == trump]
    candidates = trumps if trumps else [i for i, c in enumerate(on_table) if suit_of(c) == suit_of(on_table[0])]
    return max(candidates, key=lambda i: power(on_table[i]))


def round_factor(players: int, phase: str, trump_card: str | None, trump: str) -> int:
    if phase != "subasta" and trump_card == "5b" and players != 3:
        return 3
    return 2 if trump == "o" else 1


def score(bid: int, won: int) -> int:
    return 10 + 5 * bid if bid == won else -5 * abs(bid - won)


# -- talking to a bot ----------------------------------------------------------------------------------

ACTION_KEYS = {"bid": "bid", "trump": "trump", "play": "play"}  # act -> the answer's key


@dataclass
class Answer:
    game: int
    round: int
    players: int
    act: str
    seat: int
    legal_count: int
    wall_ms: float  # from writing the view to reading the answer
    bot_ms: float | None  # the thinking time the bot reported
    problem: str | None  # None: a legal, well-formed answer
    reply: Any


@dataclass
class Report:
    command: list[str]
    answers: list[Answer] = field(default_factory=list)
    garbage: list[tuple[str, Any]] = field(default_factory=list)  # (kind of bad line, the bot's reply)
    games: int = 0
    returncode: int | None = None
    stderr: str = ""

    @property
    def illegal(self) -> list[Answer]:
        return [a for a in self.answers if a.problem is not None and a.problem.startswith("illegal")]

    @property
    def errors(self) -> list[Answer]:
        return [a for a in self.answers if a.problem is not None and not a.problem.startswith("illegal")]

    @property
    def garbage_not_refused(self) -> list[tuple[str, Any]]:
        return [
            (kind, reply)
            for kind, reply in self.garbage
            if not (
                isinstance(reply, dict)
                and set(reply) == {"error"}
                and isinstance(reply["error"], str)
                and reply["error"]
            )
        ]

    @property
    def max_ms(self) -> float:
        return max((a.wall_ms for a in self.answers), default=0.0)

    @property
    def max_bot_ms(self) -> float:
        return max((a.bot_ms for a in self.answers if a.bot_ms is not None), default=0.0)

    def summary(self) -> str:
        times = sorted(a.wall_ms for a in self.answers)
        mean = sum(times) / len(times) if times else 0.0
        p95 = times[int(0.95 * (len(times) - 1))] if times else 0.0
        acts = {act: sum(1 for a in self.answers if a.act == act) for act in ("bid", "trump", "play")}
        lines = [
            f"bot: {' '.join(self.command)}",
            f"games: {self.games}  answers: {len(self.answers)} "
            f"(bid {acts['bid']}, trump {acts['trump']}, play {acts['play']})",
            f"illegal: {len(self.illegal)}  errors: {len(self.errors)}  "
            f"bad lines refused: {len(self.garbage) - len(self.garbage_not_refused)}/{len(self.garbage)}",
            f"ms (round trip): max {self.max_ms:.1f}  mean {mean:.1f}  p95 {p95:.1f}  "
            f"(reported by the bot: max {self.max_bot_ms:.1f})",
            f"exit status: {self.returncode}",
        ]
        for a in (self.illegal + self.errors)[:5]:
            lines.append(f"  game {a.game} round {a.round} seat {a.seat} {a.act}: {a.problem}")
        for kind, reply in self.garbage_not_refused[:5]:
            lines.append(f"  bad line {kind!r} got {reply!r}")
        return "\n".join(lines)


class BotProcess:
    """A bot program on the other end of two pipes; one line out, one line back."""

    def __init__(self, command: Sequence[str], timeout: float, cwd: Path = REPO) -> None:
        self.timeout = timeout
        self.stderr_file = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr_file, cwd=str(cwd)
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.dead = False

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def ask(self, text: str) -> tuple[Any, float, str | None]:
        """Send one line; (the reply parsed, round-trip ms, None) or (raw reply, ms, what went wrong)."""
        assert self.proc.stdin is not None
        started = time.perf_counter()
        try:
            self.proc.stdin.write(text.encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except OSError:
            self.dead = True
            return None, 0.0, "the bot has exited"
        try:
            line = self.lines.get(timeout=self.timeout)
        except queue.Empty:
            self.dead = True  # answers would go out of step: give up on this bot
            return None, (time.perf_counter() - started) * 1000, f"no answer within {self.timeout} s"
        ms = (time.perf_counter() - started) * 1000
        if line is None:
            self.dead = True
            return None, ms, "the bot has exited"
        try:
            return json.loads(line), ms, None
        except ValueError:
            return line, ms, "the answer is not JSON"

    def close(self) -> tuple[int | None, str]:
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            code: int | None = self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        self.reader.join(timeout=2)
        self.stderr_file.seek(0)
        err = self.stderr_file.read().decode("utf-8", "replace")
        self.stderr_file.close()
        return code, err


def check_reply(reply: Any, view: dict[str, Any]) -> tuple[Any, str | None]:
    """The choice in a bot's reply to ``view``, and what is wrong with the reply (None: it is legal)."""
    if not isinstance(reply, dict):
        return None, f"the answer is not a JSON object: {reply!r:.80}"
    if "error" in reply:
        return None, f"the bot refused a valid view: {reply['error']!r:.300}"
    key = ACTION_KEYS[view["act"]]
    if key not in reply:
        return None, f"the answer lacks {key!r}: {reply!r:.80}"
    unexpected = set(reply) - {key, "ms", "info"}
    if unexpected:
        return None, f"the answer has unexpected keys {sorted(unexpected)}"
    if "ms" in reply and (not isinstance(reply["ms"], (int, float)) or isinstance(reply["ms"], bool)):
        return None, f"ms must be a number: {reply['ms']!r:.40}"
    if "info" in reply and not isinstance(reply["info"], str):
        return None, "info must be text"
    choice = reply[key]
    wanted_type = int if key == "bid" else str
    if type(choice) is not wanted_type or choice not in view["legal"]:
        return None, f"illegal: {key} {choice!r:.40} is not among {view['legal']}"
    return choice, None


# -- malformed lines -----------------------------------------------------------------------------------


def _not_in_deck(view: dict[str, Any]) -> str:
    bad = copy.deepcopy(view)
    removed = REMOVED[view["players"]]
    stranger = f"{removed[0]}o" if removed else "8o"  # at 5 and 6 every card is in the deck: not a card
    if bad["hand"]:
        bad["hand"][0] = stranger
    else:
        bad["hand"] = [stranger]
    return json.dumps(bad)


def _empty_legal(view: dict[str, Any]) -> str:
    bad = copy.deepcopy(view)
    bad["legal"] = []
    return json.dumps(bad)


def _other_seat(view: dict[str, Any]) -> str:
    bad = copy.deepcopy(view)
    others = [s for s in seats_in_play(view["round"]["dealer"], view["players"]) if s != view["seat"]]
    bad["seat"] = others[0]
    return json.dumps(bad)


def _truncated(view: dict[str, Any]) -> str:
    text = json.dumps(view)
    return text[: len(text) // 2]


def _unknown_format(view: dict[str, Any]) -> str:
    bad = copy.deepcopy(view)
    bad["format"] = "pocha-view/9"
    return json.dumps(bad)


GARBAGE: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("not JSON", lambda view: "this is not JSON {"),
    ("10,000 nested brackets", lambda view: "[" * 10_000 + "]" * 10_000),
    ("card not in the deck", _not_in_deck),
    ("empty legal", _empty_legal),
    ("seat not to move", _other_seat),
    ("JSON number", lambda view: "42"),
    ("truncated view", _truncated),
    ("unknown format", _unknown_format),
    ("JSON list", lambda view: json.dumps([view])),
]


# -- whole games ---------------------------------------------------------------------------------------


def bot_command(
    level: str, *, seed: int | None = None, budget_ms: float | None = None, python: str = sys.executable
) -> list[str]:
    """The command line of the engine's own bot at ``level``."""
    command = [python, "-m", "games.engine", "bot", "--level", level]
    if seed is not None:
        command += ["--seed", str(seed)]
    if budget_ms is not None:
        command += ["--budget-ms", str(budget_ms)]
    return command


class _Enough(Exception):
    """The run has consulted the bot as often as it was asked to."""


def drive(
    command: Sequence[str],
    *,
    players: int | Sequence[int] = 4,
    games: int = 1,
    seed: int = 1,
    rounds: Sequence[int] | None = None,
    sample: float = 1.0,
    max_decisions: int | None = None,
    garbage_every: int | None = None,
    timeout: float = 10.0,
) -> Report:
    """Play ``games`` random games at each table size in ``players`` with ``command``'s bot in every seat.

    ``rounds``: round numbers in which the bot is consulted (default all); ``sample``: the chance it is
    consulted at each decision of those rounds; other decisions the driver makes itself (a random legal
    choice).  ``max_decisions``: stop once the bot has answered that many views.  ``garbage_every``:
    before every n-th view, send a malformed line first (and check it is refused)."""
    rng = random.Random(seed)
    sizes = [players] if isinstance(players, int) else list(players)
    report = Report(command=list(command))
    bot = BotProcess(command, timeout)
    try:
        # wait until the bot reads its input (process start and imports are not thinking time)
        reply, _, _ = bot.ask("0")
        report.garbage.append(("warm-up JSON number", reply))
        garbage_turn = 0
        asked = 0

        def decide(view: dict[str, Any], game: int) -> Any:
            nonlocal asked, garbage_turn
            consult = (
                not bot.dead
                and (rounds is None or view["round"]["number"] in rounds)
                and (sample >= 1.0 or rng.random() < sample)
            )
            if not consult:
                return rng.choice(view["legal"])
            if garbage_every and (asked + 1) % garbage_every == 0:
                kind, make = GARBAGE[garbage_turn % len(GARBAGE)]
                garbage_turn += 1
                bad_reply, _, trouble = bot.ask(make(view))
                report.garbage.append((kind, bad_reply if trouble is None else trouble))
            reply, ms, trouble = bot.ask(json.dumps(view))
            choice, problem = (None, trouble) if trouble else check_reply(reply, view)
            bot_ms = reply.get("ms") if isinstance(reply, dict) and isinstance(reply.get("ms"), (int, float)) else None
            report.answers.append(
                Answer(
                    game,
                    view["round"]["number"],
                    view["players"],
                    view["act"],
                    view["seat"],
                    len(view["legal"]),
                    ms,
                    bot_ms,
                    problem,
                    reply,
                )
            )
            asked += 1
            if max_decisions is not None and asked >= max_decisions:
                raise _Enough
            return choice if problem is None else view["legal"][0]  # the default for a bad answer

        game_number = 0
        try:
            for size in sizes:
                for _ in range(games):
                    game_number += 1
                    play_game(size, rng, lambda view, g=game_number: decide(view, g))
                    report.games += 1
        except _Enough:
            pass
    finally:
        report.returncode, report.stderr = bot.close()
    return report


def play_game(players: int, rng: random.Random, decide: Callable[[dict[str, Any]], Any]) -> list[int]:
    """Deal and play one whole game; ``decide(view)`` makes every decision.  The final scores."""
    first_dealer = rng.randrange(players)
    scores = [0] * players
    for number, (phase, cards) in enumerate(game_rounds(players), start=1):
        dealer = (first_dealer + number - 1) % players
        seats = seats_in_play(dealer, players)
        deck = table_deck(players)
        rng.shuffle(deck)
        hands: dict[int, list[str]] = {seat: [] for seat in seats}
        dealt = 0
        for _ in range(cards):  # one card at a time from the dealer's left
            for seat in seats:
                hands[seat].append(deck[dealt])
                dealt += 1
        trump_card: str | None = None
        if phase == "subida" and cards == 8:
            trump_card = deck[dealt - 1]  # the last card dealt, kept by its receiver
        elif phase != "subasta":
            trump_card = deck[dealt]  # turned up, nobody's
        trump: str | None = suit_of(trump_card) if trump_card else None
        bids: list[list[int]] = []
        winner_of_auction: int | None = None
        tricks: list[dict[str, Any]] = []

        def view(seat: int, act: str, legal: list[Any]) -> dict[str, Any]:
            return {
                "format": "pocha-view/1",
                "players": players,
                "seat": seat,
                "scores": list(scores),
                "round": {
                    "number": number,
                    "phase": phase,
                    "cards": cards,
                    "dealer": dealer,
                    "resting": dealer if players == 6 else None,
                },
                "hand": list(hands[seat]),
                "trump_card": trump_card,
                "trump_suit": trump,
                "multiplier": round_factor(players, phase, trump_card, trump) if trump else None,
                "bids": [list(b) for b in bids],
                "auction_winner": winner_of_auction,
                "tricks": copy.deepcopy(tricks),
                "act": act,
                "legal": legal,
            }

        for seat in seats:
            legal = allowed_bids(cards, phase, [b for _, b in bids], len(seats))
            bids.append([seat, decide(view(seat, "bid", legal))])
        if phase == "subasta":
            best = 0
            for k in range(1, len(bids)):
                if bids[k][1] > bids[best][1]:  # a tie stays with the earlier bidder
                    best = k
            winner_of_auction = bids[best][0]
            trump = decide(view(winner_of_auction, "trump", list(SUIT_LETTERS)))
        assert trump is not None
        won = dict.fromkeys(seats, 0)
        leader = seats[0]
        for _ in range(cards):
            trick: dict[str, Any] = {"leader": leader, "cards": [], "winner": None}
            start = seats.index(leader)
            for k in range(len(seats)):
                seat = seats[(start + k) % len(seats)]
                card = decide(view(seat, "play", allowed_cards(hands[seat], trick["cards"], trump)))
                hands[seat].remove(card)
                trick["cards"].append(card)
                if k == 0:
                    tricks.append(trick)  # a trick shows once its first card is down
            leader = seats[(start + taker(trick["cards"], trump)) % len(seats)]
            trick["winner"] = leader
            won[leader] += 1
        factor = round_factor(players, phase, trump_card, trump)
        for seat in range(players):
            if seat in won:
                bid = next(b for s, b in bids if s == seat)
                scores[seat] += factor * score(bid, won[seat])
            else:
                scores[seat] += 10  # the resting dealer, never multiplied
    return scores


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="drive a pocha-bot/1 bot through whole random games")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--level", default="normal", help="the engine's bot at this level")
    who.add_argument("--command", help="any other pocha-bot/1 program (a command line)")
    parser.add_argument("--games", type=int, default=1, help="games at each table size")
    parser.add_argument("--players", type=int, nargs="+", default=[4], choices=(3, 4, 5, 6))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget-ms", type=float, default=None)
    parser.add_argument("--rounds", help="consult the bot only in these rounds (e.g. 8,9,20)")
    parser.add_argument("--sample", type=float, default=1.0, help="chance of consulting the bot at a decision")
    parser.add_argument("--max-decisions", type=int, default=None)
    parser.add_argument("--garbage-every", type=int, default=None, help="a malformed line before every n-th view")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for an answer")
    args = parser.parse_args(argv)
    if args.command:
        import shlex

        command = shlex.split(args.command)
    else:
        command = bot_command(args.level, seed=args.seed, budget_ms=args.budget_ms)
    rounds = [int(n) for n in args.rounds.split(",")] if args.rounds else None
    report = drive(
        command,
        players=args.players,
        games=args.games,
        seed=args.seed,
        rounds=rounds,
        sample=args.sample,
        max_decisions=args.max_decisions,
        garbage_every=args.garbage_every,
        timeout=args.timeout,
    )
    print(report.summary())
    if report.stderr.strip():
        print("bot stderr:\n" + report.stderr[-2000:], file=sys.stderr)
    bad = report.illegal or report.errors or report.garbage_not_refused or report.returncode != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
