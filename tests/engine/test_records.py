"""Game records (pocha-record/1): the shared samples, export and replay, and the RECORD.md example."""

import copy
import json
from pathlib import Path

import pytest

from games.engine import FORMAT, GameState, RecordError, export_record, load_game, play_game, replay, replay_line

from .helpers import play_out

REPO = Path(__file__).resolve().parents[2]
#: The repository's copy of the shared sample records (tests/fixtures/README.md): without them the tests
#: fail (the parametrized one at collection: an empty parameter set fails, see pyproject.toml).
RECORDS = REPO / "tests" / "fixtures" / "records"
SAMPLES = sorted(p for p in RECORDS.glob("*.json") if not p.name.endswith(".expected.json"))

DOC_EXAMPLE = {
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


def expected_for(path: Path) -> dict:
    return json.loads(path.with_name(path.name[: -len(".json")] + ".expected.json").read_text(encoding="utf-8"))


def test_shared_samples_exist_in_pairs():
    assert len(SAMPLES) >= 6
    for path in SAMPLES:
        assert path.with_name(path.stem + ".expected.json").is_file()


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_shared_sample_replays_to_its_expected_line(path):
    record = json.loads(path.read_text(encoding="utf-8"))
    expected = expected_for(path)
    line, ok = replay_line(record)
    json.dumps(line)  # the line is JSON
    if "error" in expected:
        assert not ok
        got = line["error"]
        assert {k: got[k] for k in ("round", "kind", "index")} == expected["error"]
        assert isinstance(got["message"], str) and got["message"]
        with pytest.raises(RecordError):
            replay(record)
    else:
        assert ok
        assert line == expected


def test_complete_shared_samples_export_back_to_themselves():
    for path in SAMPLES:
        record = json.loads(path.read_text(encoding="utf-8"))
        if "error" in expected_for(path):
            continue
        assert export_record(load_game(record)) == record


def test_record_md_example_line():
    line, ok = replay_line(DOC_EXAMPLE)
    assert ok
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


def test_record_md_example_with_plays_swapped_is_an_error_at_play_2():
    record = copy.deepcopy(DOC_EXAMPLE)
    record["rounds"][0]["plays"] = ["7b", "3c", "1e", "12o"]
    line, ok = replay_line(record)
    assert not ok
    assert {k: line["error"][k] for k in ("round", "kind", "index")} == {"round": 1, "kind": "play", "index": 2}
    assert "1e" in line["error"]["message"]


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_self_play_records_replay_to_the_same_totals(players):
    for seed in range(3):
        game = play_game(players, seed)
        record = export_record(game)
        assert record["format"] == FORMAT
        assert record["players"] == list(game.names) and record["first_dealer"] == game.first_dealer
        assert len(record["rounds"]) == len(game.schedule)
        json.loads(json.dumps(record))
        line, ok = replay_line(json.loads(json.dumps(record)))
        assert ok
        assert line["totals"] == game.totals
        assert line["complete"] is True and line["winners"] == game.winners()
        assert line["rounds"] == [r.as_json() for r in game.results]
        assert export_record(load_game(record)) == record


def test_export_writes_bids_in_bidding_order_and_trump_suit_in_auctions_only():
    game = play_game(4, 7)
    record = export_record(game)
    for spec, entry, result in zip(game.schedule, record["rounds"], game.results):
        order = [(result.dealer + i) % 4 for i in range(1, 5)]
        assert entry["bids"] == [result.bids[seat] for seat in order]
        if spec.is_auction:
            assert entry["trump_card"] is None and entry["trump_suit"] == result.trump_suit.value
        else:
            assert "trump_suit" not in entry and entry["trump_card"][-1] == result.trump_suit.value
        assert len(entry["plays"]) == spec.cards * 4
        assert sorted(entry["plays"]) == sorted(card for hand in entry["hands"] for card in hand)


def test_a_partial_record_stops_after_whole_rounds():
    game = GameState.new(5, seed=3)
    for _ in range(4):
        play_out(game, until_round_end=True)
        game.deal()
    game.apply(game.legal_actions()[0])  # round 5 has started
    record = export_record(game)
    assert len(record["rounds"]) == 4
    line, ok = replay_line(record)
    assert ok and line["complete"] is False and line["winners"] is None
    assert line["totals"] == game.totals
    current = export_record(game, include_current=True)
    assert len(current["rounds"]) == 5
    line, ok = replay_line(current)  # the round in progress is incomplete
    assert not ok and line["error"]["round"] == 5
