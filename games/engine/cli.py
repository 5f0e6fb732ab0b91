"""The engine's commands.

``replay FILE...``  one JSON line per record (see RECORD.md); exit 0, 1 (a record broke a rule)
                    or 2 (an input is not JSON).
``selfplay``        full games among default players; prints speed and exact-bid rate.
``bench``           replay speed on self-played records.
``rollouts``        simulation speed: random 4-player 8-card hands a second.
``bot``             a bot over the pocha-bot/1 protocol (``shared/BOT-PROTOCOL.md``).
``arena``           two bots over the same deals, duplicate format (``--rules``: a preset, or all).
``analyse``         a whole game's analysis (``analysis.py``) on one process: per-round and total time, the
                    decisions, the marks and a hash of the result (equal for two runs of one seed).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

from .record import export_record, replay_line


def _records(text: str) -> Iterator[Any]:
    """One JSON document, or JSON Lines; ValueError when it is neither."""
    try:
        yield json.loads(text)
        return
    except ValueError:
        pass
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError("empty input")
    parsed = [json.loads(line) for line in lines]  # raises ValueError on the first bad line
    yield from parsed


def cmd_replay(files: Sequence[str]) -> int:
    status = 0
    out = sys.stdout
    for name in files:
        try:
            if name == "-":
                text = sys.stdin.read()
            else:
                with open(name, encoding="utf-8") as handle:
                    text = handle.read()
            records = list(_records(text))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
            print(f"replay: cannot read {name} as JSON: {error}", file=sys.stderr)
            status = 2
            continue
        for record in records:
            line, ok = replay_line(record)
            if not ok and status == 0:
                status = 1
            try:
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
            except BrokenPipeError:
                return status
    try:
        out.flush()
    except BrokenPipeError:
        pass
    return status


def cmd_selfplay(players: int, games: int, seed: int, out: str | None) -> int:
    from .bot import play_game

    started = time.perf_counter()
    plays = exact = bids = 0
    handle = open(out, "w", encoding="utf-8") if out else None
    try:
        for i in range(games):
            game = play_game(players, seed + i)
            for result in game.results:
                for seat, bid in enumerate(result.bids):
                    if bid is None:
                        continue
                    bids += 1
                    exact += bid == result.tricks[seat]
                plays += result.cards * (players if players < 6 else 5)
            if handle:
                handle.write(json.dumps(export_record(game)) + "\n")
    finally:
        if handle:
            handle.close()
    elapsed = time.perf_counter() - started
    print(f"selfplay: {games} games of {players} in {elapsed:.3f} s")
    print(f"games/s: {games / elapsed:.1f}")
    print(f"plays/s: {plays / elapsed:.0f}")
    print(f"decisions: {plays + bids}  ms/decision: {1000 * elapsed / max(1, plays + bids):.3f}")
    print(f"exact-bid rate: {exact / max(1, bids):.3f} ({exact}/{bids})")
    return 0


def cmd_bench(games: int, seed: int) -> int:
    from .bench import run_bench

    return run_bench(games, seed)


def cmd_analyse(players: int, seed: int, worlds: int | None, record_file: str | None, rules_name: str | None) -> int:
    """Self-play a game among fácil bots (``--rules``: a preset; or load ``--record``) and analyse it whole."""
    import hashlib

    from .analysis import DEFAULT_WORLDS, analyse_round, rounds_in, summary
    from .bot import default_action
    from .presets import Rules
    from .state import GameState, Phase

    if record_file is not None:
        with open(record_file, encoding="utf-8") as handle:
            record = json.load(handle)
    else:
        rules = Rules.of(rules_name) if rules_name else Rules()
        game = GameState.new(players, seed=seed, rules=rules)
        while not game.is_over:
            if game.phase is Phase.ROUND_OVER:
                game.deal()
            else:
                game.apply(default_action(game))
        record = export_record(game)
    worlds = DEFAULT_WORLDS if worlds is None else worlds
    total_rounds = rounds_in(record)
    print(f"analyse: {len(record['players'])} seats, {total_rounds} rounds, {worlds} worlds a decision, seed {seed}")
    started = time.perf_counter()
    rounds = []
    for number in range(1, total_rounds + 1):
        at = time.perf_counter()
        analysed = analyse_round(record, number, seed=seed, worlds=worlds)
        rounds.append(analysed)
        made = sum(1 for d in analysed.decisions if not d.forced)
        print(
            f"  round {number:2}: {time.perf_counter() - at:6.2f} s  {len(analysed.decisions):3} decisions ({made} chosen)"
        )
    elapsed = time.perf_counter() - started
    decisions = [d for r in rounds for d in r.decisions]
    chosen = [d for d in decisions if not d.forced]
    marks = {name: sum(1 for d in decisions if d.mark == name) for name in ("imprecision", "error", "blunder")}
    digest = hashlib.sha256(
        json.dumps([r.as_json() for r in rounds], sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    print(
        f"total: {elapsed:.2f} s  decisions: {len(decisions)} ({len(chosen)} chosen, {len(decisions) - len(chosen)} forced)"
    )
    print(f"ms per chosen decision: {1000 * elapsed / max(1, len(chosen)):.1f}")
    print("marks: " + ", ".join(f"{name} {n}" for name, n in marks.items()))
    for seat in summary(rounds, len(record["players"]))["seats"]:
        print(f"  seat {seat['seat']}: accuracy {seat['accuracy']}%, loss {seat['loss']}, marks {seat['marks']}")
    print(f"hash: {digest[:16]}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m games.engine", description="La Pocha rules engine")
    sub = parser.add_subparsers(dest="command", required=True)
    p_replay = sub.add_parser("replay", help="replay and check game records")
    p_replay.add_argument("files", nargs="+", metavar="FILE", help="a record file, JSON Lines, or - for stdin")
    p_self = sub.add_parser("selfplay", help="full games among default players")
    p_self.add_argument("--players", type=int, default=4, choices=(3, 4, 5, 6))
    p_self.add_argument("--games", type=int, default=100)
    p_self.add_argument("--seed", type=int, default=1)
    p_self.add_argument("--out", help="write each game's record to this JSON Lines file")
    p_bench = sub.add_parser("bench", help="replay speed, and its ratio to a plain independent reference")
    p_bench.add_argument("--games", type=int, default=50)
    p_bench.add_argument("--seed", type=int, default=1)
    p_roll = sub.add_parser("rollouts", help="simulation speed: random hands to the end of the round")
    p_roll.add_argument("--players", type=int, default=4, choices=(3, 4, 5, 6))
    p_roll.add_argument("--cards", type=int, default=8)
    p_roll.add_argument("--seconds", type=float, default=2.0)
    p_roll.add_argument("--seed", type=int, default=1)
    p_bot = sub.add_parser("bot", help="answer pocha-bot/1 views on standard input")
    p_bot.add_argument("--level", default="normal")
    p_bot.add_argument("--budget-ms", type=float, default=None)
    p_bot.add_argument("--seed", type=int, default=None)
    p_arena = sub.add_parser("arena", help="two bots over the same deals, the candidate in every seat")
    p_arena.add_argument("--a", required=True, help="candidate: a level, or exec:COMMAND for a pocha-bot/1 program")
    p_arena.add_argument("--b", required=True, help="field: a level, or exec:COMMAND")
    p_arena.add_argument("--players", type=int, default=4, choices=range(3, 9), metavar="{3..8}")
    p_arena.add_argument("--deals", type=int, default=10, help="games dealt (each played once per seat)")
    p_arena.add_argument("--seed", type=int, default=1)
    p_arena.add_argument("--jobs", type=int, default=1, help="processes (decision times are per process)")
    p_arena.add_argument(
        "--rules", default=None, help="the preset: clasica, indias, se-dobla, bazas, or all (a block each)"
    )
    p_arena.add_argument(
        "--schedule", default="sencillas", help="se-dobla's rounds: sencillas, dobles, una-mas, escalera"
    )
    p_arena.add_argument("--forehead", action="store_true", help="se-dobla: one-card rounds played as indias")
    p_analyse = sub.add_parser("analyse", help="a whole game's analysis on one process: time, marks, a hash")
    p_analyse.add_argument("--players", type=int, default=4, choices=range(3, 9), metavar="{3..8}")
    p_analyse.add_argument("--seed", type=int, default=1, help="the self-played game's deal and the analysis")
    p_analyse.add_argument("--worlds", type=int, default=None, help="worlds a decision (default: DEFAULT_WORLDS)")
    p_analyse.add_argument("--record", default=None, help="analyse this record file instead of a self-played game")
    p_analyse.add_argument("--rules", default=None, help="the self-played game's preset (default clasica)")
    args = parser.parse_args(argv)
    if args.command == "rollouts":
        from .sim import cmd_rollouts

        return cmd_rollouts(args.players, args.cards, args.seconds, args.seed)
    if args.command == "bot":
        from .protocol import cmd_bot

        return cmd_bot(args.level, args.budget_ms, args.seed)
    if args.command == "arena":
        from .arena import cmd_arena

        return cmd_arena(
            args.a, args.b, args.players, args.deals, args.seed, args.jobs, args.rules, args.schedule, args.forehead
        )
    if args.command == "analyse":
        return cmd_analyse(args.players, args.seed, args.worlds, args.record, args.rules)
    if args.command == "replay":
        return cmd_replay(args.files)
    if args.command == "selfplay":
        return cmd_selfplay(args.players, args.games, args.seed, args.out)
    return cmd_bench(args.games, args.seed)
