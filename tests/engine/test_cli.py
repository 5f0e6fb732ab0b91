"""``python -m games.engine replay``: exit codes, JSON Lines, standard input, several files, bad input."""

import copy
import json
import subprocess
import sys
from pathlib import Path

from games.engine import export_record, play_game, replay_line

REPO = Path(__file__).resolve().parents[2]


def run(*args, stdin=None):
    proc = subprocess.run(
        [sys.executable, "-m", "games.engine", "replay", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    return proc.returncode, lines, proc.stderr


def good(players=4, seed=1):
    return export_record(play_game(players, seed))


def broken(players=4, seed=1):
    record = good(players, seed)
    record["rounds"][2]["bids"][0] = 99
    return record


def write(path, *records, pretty=False):
    if pretty:
        assert len(records) == 1
        path.write_text(json.dumps(records[0], indent=2), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def test_one_good_record_exit_0(tmp_path):
    record = good()
    code, lines, _ = run(write(tmp_path / "a.json", record, pretty=True))
    assert code == 0
    assert lines == [replay_line(record)[0]]


def test_a_rejected_record_exit_1(tmp_path):
    code, lines, _ = run(write(tmp_path / "bad.json", broken(), pretty=True))
    assert code == 1
    assert len(lines) == 1
    assert lines[0]["error"]["round"] == 3 and lines[0]["error"]["kind"] == "bid" and lines[0]["error"]["index"] == 0


def test_json_lines_several_records_one_line_each_in_order(tmp_path):
    records = [good(3, 1), broken(4, 2), good(5, 3), good(6, 4)]
    code, lines, _ = run(write(tmp_path / "many.jsonl", *records))
    assert code == 1
    assert lines == [replay_line(r)[0] for r in records]
    assert [("error" in line) for line in lines] == [False, True, False, False]
    assert [len(line["totals"]) for line in lines if "totals" in line] == [3, 5, 6]


def test_standard_input_dash():
    records = [good(4, 5), good(3, 6)]
    code, lines, _ = run("-", stdin="".join(json.dumps(r) + "\n" for r in records))
    assert code == 0
    assert lines == [replay_line(r)[0] for r in records]


def test_not_json_exit_2_and_no_crash(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("this is not a record\n{ nor this", encoding="utf-8")
    code, lines, err = run(str(bad))
    assert code == 2
    assert lines == []
    assert "notes.txt" in err


def test_not_json_among_several_files_still_replays_the_others(tmp_path):
    first = write(tmp_path / "first.json", good(4, 1))
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe not utf-8 \x00")
    last = write(tmp_path / "last.json", good(5, 2))
    code, lines, _ = run(first, str(bad), last)
    assert code == 2
    assert lines == [replay_line(good(4, 1))[0], replay_line(good(5, 2))[0]]


def test_empty_input_and_missing_file_exit_2(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("", encoding="utf-8")
    assert run(str(empty))[0] == 2
    assert run(str(tmp_path / "missing.json"))[0] == 2
    assert run("-", stdin="")[0] == 2


def test_several_files_in_order(tmp_path):
    a = write(tmp_path / "a.json", good(3, 1), pretty=True)
    b = write(tmp_path / "b.jsonl", good(4, 2), broken(6, 3))
    c = write(tmp_path / "c.json", good(6, 4))
    code, lines, _ = run(a, b, c)
    assert code == 1
    assert lines == [replay_line(r)[0] for r in (good(3, 1), good(4, 2), broken(6, 3), good(6, 4))]


def test_json_that_is_not_a_record_is_an_error_line_not_a_crash(tmp_path):
    inputs = ["42", "[]", "null", '"pocha"', '{"format": "pocha-record/1"}', "[1, 2, 3]\n{}"]
    for i, text in enumerate(inputs):
        path = tmp_path / f"odd{i}.json"
        path.write_text(text, encoding="utf-8")
        code, lines, _ = run(str(path))
        assert code == 1, text
        assert lines and all(set(line) == {"error"} for line in lines)
        assert all(line["error"]["kind"] == "deal" and line["error"]["round"] == 1 for line in lines)


def test_deeply_nested_json_does_not_crash(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100000 + "]" * 100000, encoding="utf-8")
    code, lines, _ = run(str(path))
    assert code in (1, 2)


def test_partial_record_line(tmp_path):
    record = good(5, 9)
    partial = copy.deepcopy(record)
    partial["rounds"] = partial["rounds"][:9]
    code, lines, _ = run(write(tmp_path / "p.json", partial))
    assert code == 0
    assert lines[0]["complete"] is False and lines[0]["winners"] is None and len(lines[0]["rounds"]) == 9
