"""Replay speed: the engine against a straightforward implementation of the same rules.

``python -m games.engine bench --games N --seed S`` self-plays N games at each table size
(3, 4, 5 and 6 seats) with the default player, adds the sample records of ``shared/records``
when they are there, checks that the engine and the reference (``benchmarks/reference_pocha.py``,
loaded by path: the engine imports nothing from outside itself and the standard library) give
the same line for every record and for an altered copy of each, then times both replays,
interleaved in this process, and prints records/s, plays/s and the ratio.
"""

from __future__ import annotations

import copy
import gc
import importlib.util
import json
import random
import statistics
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Sequence

from .bot import play_game
from .record import export_record, replay_line

SEATS: tuple[int, ...] = (3, 4, 5, 6)
REPEATS = 5
ROOT = Path(__file__).resolve().parents[2]
REFERENCE_PATH = ROOT / "benchmarks" / "reference_pocha.py"
SAMPLES_DIR = ROOT.parent / "shared" / "records"

Record = dict[str, Any]
Line = dict[str, Any]


def load_reference(path: Path = REFERENCE_PATH) -> ModuleType | None:
    """The reference implementation as a module, or None when its file is missing."""
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location("reference_pocha", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sample_records(directory: Path = SAMPLES_DIR) -> list[Any]:
    """The records of ``directory/*.json`` (not the ``.expected.json`` answers); one document or JSON Lines."""
    records: list[Any] = []
    if not directory.is_dir():
        return records
    for path in sorted(directory.glob("*.json")):
        if path.name.endswith(".expected.json"):
            continue
        text = path.read_text(encoding="utf-8")
        try:
            records.append(json.loads(text))
        except ValueError:
            records.extend(json.loads(line) for line in text.splitlines() if line.strip())
    return records


def comparable(line: Line) -> str:
    """What must agree: the whole line of a replayed record; where and what kind for a rejected one
    (the two implementations word their messages differently)."""
    error = line.get("error")
    if isinstance(error, dict):
        return json.dumps({"error": {key: error.get(key) for key in ("round", "kind", "index")}})
    return json.dumps(line, ensure_ascii=False)


def altered(record: Record, rng: random.Random) -> Record:
    """A copy of ``record`` with one thing changed (plays swapped or replaced, a bid changed,
    a round cut short or a card dealt twice), usually breaking a rule somewhere."""
    other = copy.deepcopy(record)
    rounds = other.get("rounds")
    if not isinstance(rounds, list) or not rounds or not isinstance(rounds[0], dict):
        return other
    entry = rounds[rng.randrange(len(rounds))]
    if not isinstance(entry, dict):
        return other
    plays, bids, hands = entry.get("plays"), entry.get("bids"), entry.get("hands")
    what = rng.randrange(5)
    if what == 0 and isinstance(plays, list) and len(plays) >= 2:
        i, j = sorted(rng.sample(range(len(plays)), 2))
        plays[i], plays[j] = plays[j], plays[i]
    elif what == 1 and isinstance(plays, list) and plays:
        plays[rng.randrange(len(plays))] = rng.choice(["1o", "3c", "12e", "5b", "7o", "2c", "xx"])
    elif what == 2 and isinstance(bids, list) and bids:
        bids[rng.randrange(len(bids))] = rng.randrange(10)
    elif what == 3 and isinstance(plays, list) and plays:
        del plays[rng.randrange(len(plays)):]
    elif isinstance(hands, list):
        held = [hand for hand in hands if isinstance(hand, list) and hand]
        if len(held) >= 2:
            held[0][0] = held[1][-1]
    return other


def _plays(record: Any) -> int:
    """Cards played in ``record`` (what plays/s counts)."""
    if not isinstance(record, dict) or not isinstance(record.get("rounds"), list):
        return 0
    return sum(len(entry["plays"]) for entry in record["rounds"]
               if isinstance(entry, dict) and isinstance(entry.get("plays"), list))


def _time_once(replay: Callable[[Any], object], records: Sequence[Any]) -> float:
    gc.collect()
    started = time.perf_counter()
    for record in records:
        replay(record)
    return time.perf_counter() - started


def _engine_line(record: Any) -> Line:
    return replay_line(record)[0]


def run_bench(games: int, seed: int) -> int:
    """Self-play, check engine against reference, time both; 1 if they disagree on any record."""
    # self-play: the records to replay, and the default player's speed
    records: list[Any] = []
    decisions = 0
    started = time.perf_counter()
    for players in SEATS:
        for i in range(games):
            game = play_game(players, seed + i)
            decisions += sum(len(log.bids) + len(log.plays) + (log.trump_card is None) for log in game.log)
            records.append(export_record(game))
    elapsed = time.perf_counter() - started
    played = games * len(SEATS)
    print(f"selfplay: {played} games ({games} at each of {'/'.join(map(str, SEATS))} seats) in {elapsed:.3f} s")
    if played:
        print(f"selfplay: {played / elapsed:.1f} games/s, {decisions} decisions, "
              f"{1000 * elapsed / max(1, decisions):.4f} ms/decision (default player and engine)")
    samples = sample_records()
    records += samples
    plays = sum(_plays(r) for r in records)
    print(f"records: {len(records)} ({played} self-play, {len(samples)} samples from {SAMPLES_DIR}), "
          f"{plays} plays")
    if not records:
        print("bench: nothing to replay")
        return 0

    reference = load_reference()
    timed: list[tuple[str, Callable[[Any], object]]] = [("engine", _engine_line)]
    status = 0
    if reference is None:
        print(f"reference: {REFERENCE_PATH} is missing; timing the engine alone")
    else:
        ref_line: Callable[[Any], Line] = reference.replay_line
        rng = random.Random(seed)
        checked = records + [altered(r, rng) for r in records if isinstance(r, dict)]
        differ = 0
        rejected = 0
        for record in checked:
            mine, theirs = _engine_line(record), ref_line(record)
            rejected += "error" in mine
            if comparable(mine) != comparable(theirs):
                differ += 1
                if differ <= 3:
                    print(f"DIFFER engine:    {comparable(mine)[:300]}")
                    print(f"       reference: {comparable(theirs)[:300]}")
        print(f"check: engine and reference agree on {len(checked) - differ} of {len(checked)} records "
              f"({len(records)} as recorded, {len(checked) - len(records)} altered; {rejected} rejected; "
              f"a rejection must name the same round, kind and index)")
        if differ:
            print(f"check: FAILED, {differ} records differ")
            status = 1
        timed.append(("reference", ref_line))

    times: dict[str, list[float]] = {name: [] for name, _ in timed}
    for _ in range(REPEATS):
        for name, replay in timed:   # interleaved, so drift in machine speed hits both alike
            times[name].append(_time_once(replay, records))
    print(f"replay: {len(records)} records, best and median of {REPEATS} interleaved runs")
    for name, _ in timed:
        best, median = min(times[name]), statistics.median(times[name])
        print(f"  {name:<10} {len(records) / best:9.1f} records/s  {plays / best:10.0f} plays/s"
              f"  (median {len(records) / median:.1f} records/s)")
    if "reference" in times:
        best_ratio = min(times["reference"]) / min(times["engine"])
        median_ratio = statistics.median(times["reference"]) / statistics.median(times["engine"])
        print(f"ratio engine/reference: {best_ratio:.2f}x (best), {median_ratio:.2f}x (median)")
    return status
