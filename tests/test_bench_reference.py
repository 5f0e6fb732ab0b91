"""The benchmark's reference implementation and the engine replay records alike.

``benchmarks/reference_pocha.py`` is the yardstick of ``python -m games.engine bench``: a plain,
independent reading of the rules.  A yardstick that disagrees with the engine would time something
else, so here the two replay the same records and must print the same lines (for rejected records:
the same round, kind and index).  The reference file and the sample records are required: when either
is missing these tests fail rather than skip.  The samples are the repository's copy of the shared ones
(``tests/fixtures/records``): the bench's own default, ``shared/records`` beside the repository, may be
absent (a fresh clone), so every test here points the bench at the copy.
"""

import ast
import copy
import json
import random
from pathlib import Path

import pytest

from games.engine import export_record, play_game, replay_line
from games.engine.bench import REFERENCE_PATH, altered, comparable, load_reference, sample_records

SAMPLES_DIR = Path(__file__).resolve().parent / "fixtures" / "records"


@pytest.fixture(scope="module")
def reference():
    module = load_reference()
    assert module is not None, f"the benchmark reference {REFERENCE_PATH} is missing"
    return module


def test_the_bench_reads_the_records_in_the_repository():
    """``python -m games.engine bench`` needs nothing beside the repository: its samples are these."""
    from games.engine import bench

    assert bench.SAMPLES_DIR.resolve() == SAMPLES_DIR


@pytest.fixture(scope="module")
def samples():
    paths = sorted(p for p in SAMPLES_DIR.glob("*.json") if not p.name.endswith(".expected.json"))
    assert paths, f"the sample records are missing from {SAMPLES_DIR}"
    return paths


def engine_line(record):
    return replay_line(record)[0]


def where(line):
    error = line["error"]
    return error["round"], error["kind"], error["index"]


def self_play_records():
    return [export_record(play_game(players, seed)) for players in (3, 4, 5, 6) for seed in (11, 12)]


# -- the reference is independent and reads cards once --------------------------------------


def test_the_reference_does_not_import_the_engine(reference):
    tree = ast.parse(REFERENCE_PATH.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"json", "sys", "typing"}, imported
    assert "games" not in imported


def test_the_reference_card_table(reference):
    assert len(reference.CARDS) == 40
    five = reference.CARDS["5b"]
    assert (five.suit, five.text) == ("b", "5b")
    # strength within a suit: 1 > 3 > 12 > 11 > 10 > 7 > 6 > 5 > 4 > 2
    order = ["1o", "3o", "12o", "11o", "10o", "7o", "6o", "5o", "4o", "2o"]
    strengths = [reference.CARDS[text].strength for text in order]
    assert strengths == sorted(strengths, reverse=True) and len(set(strengths)) == 10
    assert [len(reference.DECKS[n]) for n in (3, 4, 5, 6)] == [24, 32, 40, 40]
    assert reference.parse_card("12b") is reference.CARDS["12b"]  # the same object: parsed once, looked up
    for bad in ("8o", "1x", "", "o1", 12, None, ["1o"], {"1": "o"}):
        assert reference.parse_card(bad) is None


# -- agreement with the engine ----------------------------------------------------------------


def test_samples_agree_with_the_expected_answers(reference, samples):
    for path in samples:
        expected = json.loads(path.with_name(path.name[: -len(".json")] + ".expected.json").read_text())
        record = json.loads(path.read_text())
        for line in (engine_line(record), reference.replay_line(record)):
            if "error" in expected:
                assert {k: line["error"][k] for k in ("round", "kind", "index")} == expected["error"], path.name
            else:
                assert line == expected, path.name
    assert len(samples) >= 6  # 3, 4, 5 (partial) and 6 players, an illegal bid and an illegal play


def test_sample_records_load_for_the_bench(samples):
    assert len(sample_records(SAMPLES_DIR)) == len(sample_records()) == len(samples)


def test_self_play_records_replay_identically(reference):
    for record in self_play_records():
        mine, theirs = engine_line(record), reference.replay_line(record)
        assert "error" not in mine
        assert json.dumps(mine) == json.dumps(theirs)
        assert mine["complete"] is True and len(mine["rounds"]) == len(record["rounds"])


def test_broken_records_are_rejected_at_the_same_place(reference, samples):
    rng = random.Random(5)
    records = self_play_records() + sample_records()
    rejected = 0
    seen = set()
    for record in records:
        for _ in range(5):
            broken = altered(record, rng)
            mine, theirs = engine_line(broken), reference.replay_line(broken)
            assert comparable(mine) == comparable(theirs)
            if "error" in mine:
                rejected += 1
                seen.add(mine["error"]["kind"])
    assert rejected > len(records)  # most alterations break a rule: the error paths are compared too
    assert seen >= {"deal", "bid", "play"}, seen


def test_resting_dealer_scores_ten_at_six(reference):
    record = export_record(play_game(6, 21))
    line = reference.replay_line(record)
    assert line == engine_line(record)
    for result in line["rounds"]:
        dealer = result["dealer"]
        assert result["bids"][dealer] is None and result["tricks"][dealer] is None
        assert result["points"][dealer] == 10  # never multiplied
    assert any(result["multiplier"] > 1 for result in line["rounds"])


def test_the_eight_card_subida_trump_card_stays_in_the_last_hand(reference):
    for players in (4, 6):
        record = export_record(play_game(players, 31))
        entry = record["rounds"][7]  # round 8: 8 cards
        order = [(7 + record["first_dealer"] + i) % players for i in range(1, players + 1)]
        last = order[-1] if players < 6 else order[-2]  # at six the dealer rests
        assert entry["trump_card"] in entry["hands"][last]
        assert reference.replay_line(record) == engine_line(record)
        moved = copy.deepcopy(record)
        other = next(seat for seat, hand in enumerate(moved["rounds"][7]["hands"]) if hand and seat != last)
        moved["rounds"][7]["trump_card"] = moved["rounds"][7]["hands"][other][0]
        assert where(engine_line(moved)) == where(reference.replay_line(moved)) == (8, "deal", 0)


def test_auction_ties_go_to_the_earlier_bidder(reference):
    record = export_record(play_game(4, 41))
    record["rounds"] = record["rounds"][:9]  # round 9 is the first auction
    dealer = (record["first_dealer"] + 8) % 4
    order = [(dealer + i) % 4 for i in range(1, 5)]
    for bids, winner in (([0, 0, 0, 0], order[0]), ([1, 3, 3, 0], order[1]), ([2, 2, 5, 5], order[2])):
        record["rounds"][8]["bids"] = bids  # no last-bidder restriction in auctions
        mine, theirs = engine_line(record), reference.replay_line(record)
        assert mine == theirs
        assert mine["rounds"][8]["auction_winner"] == winner


# Hand-made rounds of a 4-player game (ranks 2 and 4 are out).  Round 1 is a fixed one-card round;
# round 2 is dealt by seat 1, so seat 2 bids first and leads, then seats 3, 0 and 1.
ROUND_1 = {
    "hands": [["1o"], ["3o"], ["12o"], ["11o"]],
    "trump_card": "10c",
    "bids": [0, 0, 0, 0],
    "plays": ["3o", "12o", "11o", "1o"],
}


def two_rounds(hands, trump_card, plays, bids=(0, 2, 0, 1)):
    return {
        "format": "pocha-record/1",
        "players": ["ana", "bea", "carla", "dani"],
        "first_dealer": 0,
        "rounds": [ROUND_1, {"hands": hands, "trump_card": trump_card, "bids": list(bids), "plays": plays}],
    }


PLAIN = [["1e", "5e"], ["6b", "7b"], ["12c", "6e"], ["3c", "5c"]]
CASES = {
    # montar: seat 3 holds the 3 of copas, which beats the 12 led, so must play it
    "montar kept": (two_rounds(PLAIN, "7o", ["12c", "3c", "1e", "6b", "5c", "5e", "7b", "6e"]), None),
    "montar broken": (two_rounds(PLAIN, "7o", ["12c", "5c", "1e", "6b", "3c", "5e", "7b", "6e"]), (2, "play", 1)),
    # fallar: seat 0, void in copas, holds a trump and must play it
    "fallar broken": (
        two_rounds([["1o", "5e"], ["6b", "7b"], ["12c", "6e"], ["3c", "5c"]], "7o", ["12c", "3c", "5e", "6b"]),
        (2, "play", 2),
    ),
    # contrafallar: seat 1, void in copas, can beat seat 0's 6 of oros with the 12 and must
    "contrafallar broken": (
        two_rounds([["6o", "5e"], ["12o", "5o"], ["12c", "6e"], ["3c", "5c"]], "7o", ["12c", "3c", "6o", "5o"]),
        (2, "play", 3),
    ),
    # once someone has fallado, following suit with any copa will do: no need to montar
    "no montar after fallar": (
        two_rounds(
            [["3c", "5c"], ["6b", "7b"], ["12c", "6e"], ["6o", "7e"]],
            "10o",
            ["12c", "6o", "5c", "6b", "7e", "3c", "7b", "6e"],
        ),
        None,
    ),
    # trump led: following suit is playing trump, and beating the highest if you can
    "trump led, beat it": (
        two_rounds([["1e", "5e"], ["6b", "7b"], ["6o", "6e"], ["12o", "5o"]], "7o", ["6o", "5o"]),
        (2, "play", 1),
    ),
    # the 5 of bastos turned: x3
    "x3": (two_rounds(PLAIN, "5b", ["12c", "3c", "1e", "6b", "7b", "6e", "5c", "5e"]), None),
    "last bidder": (two_rounds(PLAIN, "7o", [], bids=(0, 1, 0, 1)), (2, "bid", 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_hand_made_rounds(reference, name):
    record, expected = CASES[name]
    mine, theirs = engine_line(record), reference.replay_line(record)
    if expected is None:
        assert "error" not in mine, mine
        assert mine == theirs
    else:
        assert where(mine) == where(theirs) == expected


def test_hand_made_scores(reference):
    record, _ = CASES["montar kept"]  # oros turned: x2; seat 3 bid 2 and took both tricks
    line = reference.replay_line(record)
    assert line == engine_line(record)
    second = line["rounds"][1]
    assert (second["dealer"], second["trump_suit"], second["multiplier"]) == (1, "o", 2)
    assert second["bids"] == [0, 1, 0, 2] and second["tricks"] == [0, 0, 0, 2]
    assert second["points"] == [20, -10, 20, 40]
    record, _ = CASES["x3"]  # seat 1 trumps the first trick and leads the second
    second = reference.replay_line(record)["rounds"][1]
    assert second["multiplier"] == 3 and second["tricks"] == [0, 2, 0, 0]
    assert second["points"] == [30, -15, 30, -30]


def test_the_record_format_example(reference):
    """The worked example of shared/RECORD.md."""
    record = {
        "format": "pocha-record/1",
        "players": ["ana", "bea", "carla", "dani"],
        "first_dealer": 2,
        "rounds": [
            {
                "hands": [["3c"], ["12o"], ["1e"], ["7b"]],
                "trump_card": "5o",
                "bids": [1, 0, 0, 1],
                "plays": ["7b", "3c", "12o", "1e"],
            }
        ],
    }
    line = reference.replay_line(record)
    assert line == engine_line(record)
    assert line == {
        "rounds": [
            {
                "number": 1,
                "phase": "subida",
                "cards": 1,
                "dealer": 2,
                "trump_suit": "o",
                "multiplier": 2,
                "auction_winner": None,
                "bids": [0, 0, 1, 1],
                "tricks": [0, 1, 0, 0],
                "points": [20, -10, -10, -10],
            }
        ],
        "totals": [20, -10, -10, -10],
        "complete": False,
        "winners": None,
    }
    record["rounds"][0]["plays"] = ["7b", "3c", "1e", "12o"]
    assert where(reference.replay_line(record)) == where(engine_line(record)) == (1, "play", 2)


@pytest.mark.parametrize(
    "record, expected",
    [
        ([], (1, "deal", 0)),
        ({"format": "pocha-record/2", "players": ["a", "b", "c"], "first_dealer": 0, "rounds": []}, (1, "deal", 0)),
        ({"format": "pocha-record/1", "players": ["a", "b"], "first_dealer": 0, "rounds": []}, (1, "deal", 0)),
        ({"format": "pocha-record/1", "players": ["a", "b", "c"], "first_dealer": 3, "rounds": []}, (1, "deal", 0)),
        ({"format": "pocha-record/1", "players": ["a", "b", "c"], "first_dealer": True, "rounds": []}, (1, "deal", 0)),
        ({"format": "pocha-record/1", "players": ["a", "b", "c"], "first_dealer": 0, "rounds": [7]}, (1, "deal", 0)),
        (
            {
                "format": "pocha-record/1",
                "players": ["a", "b", "c"],
                "first_dealer": 0,
                "rounds": [{"hands": [[["1o"]], ["3o"], ["12o"]], "trump_card": "1c", "bids": [], "plays": []}],
            },
            (1, "deal", 0),
        ),
    ],
)
def test_malformed_records(reference, record, expected):
    for line in (engine_line(record), reference.replay_line(record)):
        assert where(line) == expected


def test_empty_game(reference):
    record = {"format": "pocha-record/1", "players": ["a", "b", "c", "d"], "first_dealer": 2, "rounds": []}
    assert (
        engine_line(record)
        == reference.replay_line(record)
        == {"rounds": [], "totals": [0, 0, 0, 0], "complete": False, "winners": None}
    )


# -- the bench command --------------------------------------------------------------------------


def test_bench_command_checks_and_times(capsys, reference, samples):
    from games.engine import bench

    assert bench.run_bench(1, 3) == 0
    out = capsys.readouterr().out
    assert f"{len(samples)} samples" in out
    assert "check: engine and reference agree on" in out and "FAILED" not in out
    assert "ratio engine/reference:" in out and "games/s" in out and "ms/decision" in out
    assert "plain, independent reading" in out and "above 1 the engine is faster, below 1 slower" in out
    ratio = float(out.split("ratio engine/reference: ")[1].split("x")[0])
    assert ratio > 0


def test_bench_without_the_reference_times_the_engine_alone(capsys, monkeypatch, tmp_path):
    from games.engine import bench

    monkeypatch.setattr(bench, "REFERENCE_PATH", tmp_path / "missing.py")
    monkeypatch.setattr(bench, "SAMPLES_DIR", tmp_path / "no-samples")
    assert bench.run_bench(1, 3) == 0
    out = capsys.readouterr().out
    assert "is missing; timing the engine alone" in out
    assert "engine" in out and "ratio" not in out and "check:" not in out


def test_bench_fails_when_the_reference_disagrees(capsys, monkeypatch, tmp_path, reference):
    from games.engine import bench

    source = REFERENCE_PATH.read_text()
    assert "return 10 + 5 * bid" in source  # the exact-bid score, which we now get wrong
    wrong = tmp_path / "reference_pocha.py"
    wrong.write_text(source.replace("return 10 + 5 * bid", "return 11 + 5 * bid"))
    monkeypatch.setattr(bench, "REFERENCE_PATH", wrong)
    assert bench.run_bench(1, 3) == 1
    assert "check: FAILED" in capsys.readouterr().out
