"""The benchmark's reference implementation and the engine replay records alike.

``benchmarks/reference_pocha.py`` is the yardstick of ``python -m games.engine bench``; a yardstick
that disagrees with the engine would time something else, so here the two replay the same records
and must print the same lines (for rejected records: the same round, kind and index).
"""

import json
import random
from pathlib import Path

import pytest

from games.engine import export_record, play_game, replay_line
from games.engine.bench import REFERENCE_PATH, SAMPLES_DIR, altered, comparable, load_reference, sample_records

reference = load_reference()
pytestmark = pytest.mark.skipif(reference is None, reason=f"{REFERENCE_PATH} is missing")


def engine_line(record):
    return replay_line(record)[0]


def self_play_records():
    return [export_record(play_game(players, seed)) for players in (3, 4, 5, 6) for seed in (11, 12)]


@pytest.mark.skipif(not SAMPLES_DIR.is_dir(), reason="no shared sample records")
def test_samples_agree_with_the_expected_answers():
    checked = 0
    for path in sorted(Path(SAMPLES_DIR).glob("*.json")):
        if path.name.endswith(".expected.json"):
            continue
        expected = json.loads(path.with_name(path.name[: -len(".json")] + ".expected.json").read_text())
        record = json.loads(path.read_text())
        for line in (engine_line(record), reference.replay_line(record)):
            if "error" in expected:
                assert {k: line["error"][k] for k in ("round", "kind", "index")} == expected["error"], path.name
            else:
                assert line == expected, path.name
        checked += 1
    assert checked >= 1


def test_self_play_records_replay_identically():
    for record in self_play_records():
        mine, theirs = engine_line(record), reference.replay_line(record)
        assert "error" not in mine
        assert json.dumps(mine) == json.dumps(theirs)
        assert mine["complete"] is True and len(mine["rounds"]) == len(record["rounds"])


def test_broken_records_are_rejected_at_the_same_place():
    rng = random.Random(5)
    records = self_play_records() + sample_records()
    rejected = 0
    for record in records:
        for _ in range(5):
            broken = altered(record, rng)
            mine, theirs = engine_line(broken), reference.replay_line(broken)
            assert comparable(mine) == comparable(theirs)
            rejected += "error" in mine
    assert rejected > len(records)  # most alterations break a rule: the error paths are compared too


@pytest.mark.parametrize("record, where", [
    ([], (1, "deal", 0)),
    ({"format": "pocha-record/2", "players": ["a", "b", "c"], "first_dealer": 0, "rounds": []}, (1, "deal", 0)),
    ({"format": "pocha-record/1", "players": ["a", "b"], "first_dealer": 0, "rounds": []}, (1, "deal", 0)),
    ({"format": "pocha-record/1", "players": ["a", "b", "c"], "first_dealer": 3, "rounds": []}, (1, "deal", 0)),
    ({"format": "pocha-record/1", "players": ["a", "b", "c"], "first_dealer": 0, "rounds": [7]}, (1, "deal", 0)),
])
def test_malformed_headers(record, where):
    for line in (engine_line(record), reference.replay_line(record)):
        assert (line["error"]["round"], line["error"]["kind"], line["error"]["index"]) == where


def test_empty_game():
    record = {"format": "pocha-record/1", "players": ["a", "b", "c", "d"], "first_dealer": 2, "rounds": []}
    assert engine_line(record) == reference.replay_line(record) == {
        "rounds": [], "totals": [0, 0, 0, 0], "complete": False, "winners": None}


def test_bench_command_checks_and_times(capsys):
    from games.engine import bench

    assert bench.run_bench(1, 3) == 0
    out = capsys.readouterr().out
    assert "check: engine and reference agree on" in out and "FAILED" not in out
    assert "ratio engine/reference:" in out and "games/s" in out and "ms/decision" in out


def test_bench_without_the_reference_times_the_engine_alone(capsys, monkeypatch, tmp_path):
    from games.engine import bench

    monkeypatch.setattr(bench, "REFERENCE_PATH", tmp_path / "missing.py")
    monkeypatch.setattr(bench, "SAMPLES_DIR", tmp_path / "no-samples")
    assert bench.run_bench(1, 3) == 0
    out = capsys.readouterr().out
    assert "is missing; timing the engine alone" in out
    assert "engine" in out and "ratio" not in out and "check:" not in out


def test_bench_fails_when_the_reference_disagrees(capsys, monkeypatch, tmp_path):
    from games.engine import bench

    source = REFERENCE_PATH.read_text()
    assert "return 10 + 5 * bid" in source  # the exact-bid score, which we now get wrong
    wrong = tmp_path / "reference_pocha.py"
    wrong.write_text(source.replace("return 10 + 5 * bid", "return 11 + 5 * bid"))
    monkeypatch.setattr(bench, "REFERENCE_PATH", wrong)
    assert bench.run_bench(1, 3) == 1
    assert "check: FAILED" in capsys.readouterr().out
