"""Replay speed: the engine against a plain, independent implementation of the same rules.

``python -m games.engine bench --games N --seed S`` self-plays N games at each table size
(3, 4, 5 and 6 seats) with the default player, adds the sample records (the repository's copy of
``shared/records`` in ``tests/fixtures/records``), checks that the engine and the reference (``benchmarks/reference_pocha.py``,
loaded by path: the engine imports nothing from outside itself and the standard library) give
the same line for every record and for an altered copy of each, then times both replays,
interleaved in this process, and prints records/s, plays/s and the ratio of their speeds.

The reference is what a careful engineer writes plainly (each card string parsed once into a small
tuple, hands as sets, no micro-optimisation), so the ratio says how the engine's replay compares
with a plain reading of the rules: above 1 the engine is faster, below 1 slower.  It is not a
claim of a speed-up: the engine replays no faster than the plain reading (figures in the README).
"""

from __future__ import annotations

import copy
import gc
import importlib.util
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .bot import play_game
from .record import export_record, replay_line

SEATS: tuple[int, ...] = (3, 4, 5, 6)
REPEATS = 5
ROOT = Path(__file__).resolve().parents[2]
REFERENCE_PATH = ROOT / "benchmarks" / "reference_pocha.py"
SAMPLES_DIR = ROOT / "tests" / "fixtures" / "records"  # the repository's copy of shared/records

Record = dict[str, Any]
Line = dict[str, Any]


def load_reference(path: Path | None = None) -> ModuleType | None:
    """The reference implementation (default ``REFERENCE_PATH``) as a module, or None when its file is missing."""
    path = REFERENCE_PATH if path is None else path
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("reference_pocha", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sample_records(directory: Path | None = None) -> list[Any]:
    """The records of ``directory/*.json`` (default ``SAMPLES_DIR``; not the ``.expected.json``
    answers), each file one document or JSON Lines; a file that is neither is skipped."""
    directory = SAMPLES_DIR if directory is None else directory
    records: list[Any] = []
    if not directory.is_dir():
        return records
    for path in sorted(directory.glob("*.json")):
        if path.name.endswith(".expected.json"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
            try:
                records.append(json.loads(text))
            except ValueError:
                records.extend([json.loads(line) for line in text.splitlines() if line.strip()])
        except (OSError, ValueError):
            continue
    return records


def comparable(line: Line) -> str:
    """What must agree: the whole line of a replayed record; where and what kind for a rejected one
    (the two implementations word their messages differently)."""
    error = line.get("error")
    if isinstance(error, dict):
        return json.dumps({"error": {key: error.get(key) for key in ("round", "kind", "index")}})
    return json.dumps(line, ensure_ascii=False)


def altered(record: Record, rng: random.Random) -> Record:
    """A copy of ``record`` with one thing changed, usually breaking a rule somewhere: two plays
    swapped (often a player playing one of their own later cards early, which tests asistir,
    montar, fallar and contrafallar), a play replaced, a bid changed, a round cut short or a card
    dealt twice."""
    other = copy.deepcopy(record)
    rounds = other.get("rounds")
    if not isinstance(rounds, list) or not rounds or not isinstance(rounds[0], dict):
        return other
    entry = rounds[rng.randrange(len(rounds))]
    if not isinstance(entry, dict):
        return other
    plays, bids, hands = entry.get("plays"), entry.get("bids"), entry.get("hands")
    what = rng.randrange(6)
    if what <= 1 and isinstance(plays, list) and len(plays) >= 2:
        i = rng.randrange(len(plays) - 1)
        later = list(range(i + 1, len(plays)))
        if what == 0 and isinstance(hands, list):  # the same player's later card
            own = [hand for hand in hands if isinstance(hand, list) and plays[i] in hand]
            later = [j for j in later if own and plays[j] in own[0]] or later
        j = rng.choice(later)
        plays[i], plays[j] = plays[j], plays[i]
    elif what == 2 and isinstance(plays, list) and plays:
        plays[rng.randrange(len(plays))] = rng.choice(["1o", "3c", "12e", "5b", "7o", "2c", "xx"])
    elif what == 3 and isinstance(bids, list) and bids:
        bids[rng.randrange(len(bids))] = rng.randrange(10)
    elif what == 4 and isinstance(plays, list) and plays:
        del plays[rng.randrange(len(plays)) :]
    elif isinstance(hands, list):
        held = [hand for hand in hands if isinstance(hand, list) and hand]
        if len(held) >= 2:
            held[0][0] = held[1][-1]
    return other


def _plays(record: Any) -> int:
    """Cards played in ``record`` (what plays/s counts)."""
    if not isinstance(record, dict) or not isinstance(record.get("rounds"), list):
        return 0
    return sum(
        len(entry["plays"])
        for entry in record["rounds"]
        if isinstance(entry, dict) and isinstance(entry.get("plays"), list)
    )


def _time_once(replay: Callable[[Any], object], records: Sequence[Any]) -> float:
    gc.collect()
    started = time.perf_counter()
    for record in records:
        replay(record)
    return time.perf_counter() - started


def _engine_line(record: Any) -> Line:
    return replay_line(record)[0]


def self_play(games: int, seed: int) -> list[Record]:
    """``games`` records at each table size, from seeds ``seed``, ``seed + 1``...; prints the default player's speed."""
    records: list[Record] = []
    decisions = 0
    started = time.perf_counter()
    for players in SEATS:
        for i in range(games):
            game = play_game(players, seed + i)
            decisions += sum(len(log.bids) + len(log.plays) + (log.trump_card is None) for log in game.log)
            records.append(export_record(game))
    elapsed = time.perf_counter() - started
    print(f"selfplay: {len(records)} games ({games} at each of {'/'.join(map(str, SEATS))} seats) in {elapsed:.3f} s")
    if records:
        print(
            f"selfplay: {len(records) / elapsed:.1f} games/s, {decisions} decisions, "
            f"{1000 * elapsed / max(1, decisions):.4f} ms/decision (default player and engine)"
        )
    return records


def check(records: Sequence[Any], reference_line: Callable[[Any], Line], seed: int) -> int:
    """Replay ``records`` and an altered copy of each with both; print the outcome; how many differ."""
    rng = random.Random(seed)
    checked = list(records) + [altered(r, rng) for r in records if isinstance(r, dict)]
    differ = rejected = 0
    for number, record in enumerate(checked):
        mine = _engine_line(record)
        try:
            theirs = reference_line(record)
        except Exception as error:  # a crash in the reference is a difference, not the end of the check
            theirs = {"crash": repr(error)}
        rejected += "error" in mine
        ours, other = comparable(mine), comparable(theirs)
        if ours != other:
            differ += 1
            if differ <= 3:
                at = next((i for i, (x, y) in enumerate(zip(ours, other)) if x != y), min(len(ours), len(other)))
                start = max(0, at - 80)
                print(f"DIFFER record {number}, from character {at}:")
                print(f"  engine:    ...{ours[start : at + 80]}")
                print(f"  reference: ...{other[start : at + 80]}")
    print(
        f"check: engine and reference agree on {len(checked) - differ} of {len(checked)} records "
        f"({len(records)} as recorded, {len(checked) - len(records)} altered; {rejected} rejected; "
        f"a rejection must name the same round, kind and index)"
    )
    if differ:
        print(f"check: FAILED, {differ} records differ")
    return differ


def run_bench(games: int, seed: int) -> int:
    """Self-play, check engine against reference, time both; 1 if they disagree on any record."""
    records: list[Any] = list(self_play(games, seed))
    samples = sample_records()
    records += samples
    plays = sum(_plays(r) for r in records)
    print(
        f"records: {len(records)} ({len(records) - len(samples)} self-play, {len(samples)} samples "
        f"from {SAMPLES_DIR}), {plays} plays"
    )
    if not records:
        print("bench: nothing to replay")
        return 0

    status = 0
    timed: list[tuple[str, Callable[[Any], object]]] = [("engine", _engine_line)]
    reference = load_reference()
    if reference is None:
        print(f"reference: {REFERENCE_PATH} is missing; timing the engine alone")
    else:
        reference_line: Callable[[Any], Line] = reference.replay_line
        if check(records, reference_line, seed):
            status = 1
        timed.append(("reference", reference_line))

    times: dict[str, list[float]] = {name: [] for name, _ in timed}
    for repeat in range(REPEATS):
        # interleaved, in alternating order, so drift in machine speed hits both alike
        for name, replay in timed if repeat % 2 == 0 else timed[::-1]:
            times[name].append(_time_once(replay, records))
    print(f"replay: {len(records)} records, best and median of {REPEATS} interleaved runs")
    for name, _ in timed:
        best, median = min(times[name]), statistics.median(times[name])
        print(
            f"  {name:<10} {len(records) / best:9.1f} records/s  {plays / best:10.0f} plays/s"
            f"  (median {len(records) / median:.1f} records/s)"
        )
    if "reference" in times:
        best_ratio = min(times["reference"]) / min(times["engine"])
        median_ratio = statistics.median(times["reference"]) / statistics.median(times["engine"])
        print(f"ratio engine/reference: {best_ratio:.2f}x (best), {median_ratio:.2f}x (median)")
        print(
            f"  (the engine's replay speed over that of {REFERENCE_PATH.name}, a plain, independent reading "
            f"of the rules; above 1 the engine is faster, below 1 slower)"
        )
    return status
