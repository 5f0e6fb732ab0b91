"""Records of the presets (``pocha-record/2``), against a second, independent reading of the rules.

``tests/fixtures/records/presets/`` holds a whole game of every preset and table size (se-dobla with
each of its schedules and with and without «en la frente»), and two that needed tie-break rounds, each
beside the line ``python -m games.engine replay`` prints for it (``.expected.json``).  They were
played with random legal moves; the expected lines were checked when they were made, and are checked
here again, against ``benchmarks/reference_presets.py``, a replay written from ``shared/VARIANTS.md``
alone that shares no code with the engine.  Copies broken in many ways are refused by both at the
same round, kind and index.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from games.engine.bench import altered
from games.engine.record import replay_line

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "fixtures" / "records" / "presets"
sys.path.insert(0, str(ROOT / "benchmarks"))
import reference_presets  # noqa: E402

NAMES = sorted(path.name.removesuffix(".json") for path in SAMPLES.glob("*.json") if ".expected" not in path.name)


def record_of(name: str) -> Any:
    return json.loads((SAMPLES / f"{name}.json").read_text(encoding="utf-8"))


def test_every_preset_and_size_has_a_sample() -> None:
    kinds = {(name.split("-")[0], int(name.split("p")[0].split("-")[-1])) for name in NAMES}
    wanted = (
        {("indias", n) for n in range(3, 9)} | {("se", n) for n in range(3, 9)} | {("bazas", n) for n in range(3, 8)}
    )
    assert wanted <= kinds, sorted(wanted - kinds)
    assert {"se-dobla-3p-desempate", "indias-4p-desempate"} <= set(NAMES)
    schedules = {record_of(n)["rules"].get("schedule") for n in NAMES if n.startswith("se-dobla")}
    assert schedules == {"sencillas", "dobles", "una-mas", "escalera"}


@pytest.mark.parametrize("name", NAMES)
def test_a_sample_replays_to_its_expected_line_here_and_in_the_reference(name: str) -> None:
    record = record_of(name)
    expected = json.loads((SAMPLES / f"{name}.expected.json").read_text(encoding="utf-8"))
    line, ok = replay_line(record)
    assert ok and line == expected
    assert reference_presets.replay_line(record) == expected
    assert expected["complete"] and expected["winners"]
    assert expected["totals"] == [
        sum(r["points"][seat] for r in expected["rounds"]) for seat in range(len(record["players"]))
    ]
    if name.endswith("desempate"):
        assert expected["rounds"][-1]["kind"] == "desempate"


def test_the_command_line_replays_every_sample() -> None:
    files = [str(SAMPLES / f"{name}.json") for name in NAMES]
    done = subprocess.run(
        [sys.executable, "-m", "games.engine", "replay", *files], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines == [json.loads((SAMPLES / f"{name}.expected.json").read_text(encoding="utf-8")) for name in NAMES]


def preset_breakage(record: Any, rng: random.Random) -> Any:
    """One thing the presets add, broken: a blind bid, the round's kind, a card turned in an oros round, a
    card of the other deck, a chosen suit of the other deck."""
    other = copy.deepcopy(record)
    rounds = other["rounds"]
    index = rng.randrange(len(rounds))
    entry = rounds[index]
    what = rng.randrange(5)
    if what == 0 and "blind_bids" in entry:
        entry["blind_bids"][rng.randrange(len(entry["blind_bids"]))] = rng.choice([-1, 99, "2", None])
    elif what == 1:
        entry["kind"] = rng.choice(["normal", "indias", "subastados", "oros", "desempate", "otra"])
    elif what == 2:
        entry["trump_card"] = rng.choice(["7c", "1o", "AS", None])
    elif what == 3 and entry["plays"]:
        entry["plays"][rng.randrange(len(entry["plays"]))] = rng.choice(["QH", "10S", "1o", "12b"])
    else:
        entry["trump_suit"] = rng.choice(["o", "S", "x", "c"])
    return other


def where(line: dict[str, Any]) -> Any:
    error = line.get("error")
    return (error["round"], error["kind"], error["index"]) if error else ("ok", line["totals"])


@pytest.mark.parametrize("name", NAMES)
def test_broken_copies_are_refused_at_the_same_place_as_the_reference(name: str) -> None:
    record = record_of(name)
    rng = random.Random(name)
    refused = 0
    for n in range(40):
        broken = altered(record, rng) if n % 2 else preset_breakage(record, rng)
        engine, _ok = replay_line(broken)
        assert where(engine) == where(reference_presets.replay_line(broken)), (name, n)
        refused += "error" in engine
    assert refused >= 20
