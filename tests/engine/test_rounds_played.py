"""Games of only some rounds of the schedule (a tournament's deals): ``spread_rounds``, ``GameState.of_rounds``
and ``rounds_played``, their snapshots, their records (``pocha-record/2`` with ``rounds_played``) replayed
in process and by the command line, the analysis of such a game, and the bots playing them."""

from __future__ import annotations

import copy
import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import (
    GameState,
    IllegalActionError,
    Phase,
    default_action,
    export_record,
    play_game,
    replay,
    replay_line,
    seat_view,
    spread_rounds,
)
from games.engine.analysis import analyse_game, analyse_round, play_round, rounds_in, schedule_number
from games.engine.levels import LEVELS, decide
from games.engine.presets import CLASICA, PLAYERS, SCHEDULES, Rules
from games.engine.protocol import view_from_json, view_to_json
from games.engine.record import FORMAT, FORMAT_2, load_game
from games.engine.rules import points
from games.engine.schedule import dealer_of
from games.engine.snapshot import dump, load

REPO = Path(__file__).resolve().parents[2]

#: Every rules variant a table may have (``games.models._RULES_BY_KEY``).
EVERY_RULES = [
    CLASICA,
    Rules.of("indias"),
    Rules.of("bazas"),
    *(Rules.of("se-dobla", schedule=name, forehead=f) for name in SCHEDULES for f in (False, True)),
]
GAMES = [(rules, n) for rules in EVERY_RULES for n in range(PLAYERS[rules.preset][0], PLAYERS[rules.preset][1] + 1)]


def name(rules: Rules, players: int) -> str:
    options = f"-{rules.schedule_name}{'-frente' if rules.forehead else ''}" if rules.preset == "se-dobla" else ""
    return f"{rules.preset}{options}-{players}"


def total(rules: Rules, players: int) -> int:
    return len(rules.schedule(players))


def random_game(
    rules: Rules, players: int, rounds: tuple[int, ...], seed: int, first_dealer: int | None = None
) -> GameState:
    """A game of ``rounds`` dealt from per-round seeds (``seed`` + its number) and played by random legal
    moves, every step checked, to its end."""
    rng = random.Random(seed)
    dealer = rng.randrange(players) if first_dealer is None else first_dealer
    game = GameState.of_rounds(rules, [f"J{i}" for i in range(players)], dealer, rounds)
    assert game.phase is Phase.DEALING and game.rounds_played == rounds and game.practice_round is None
    for k, number in enumerate(rounds):
        assert game.next_spec == rules.schedule(players)[number - 1]
        game.deal(seed=seed + number)
        assert game.number == number and game.dealer == dealer_of(dealer, number, players)
        assert game.spec is not None and game.spec.cards == rules.schedule(players)[number - 1].cards
        assert all(len(game.hands[s]) == game.spec.cards for s in game.order)
        while game.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
            game.apply(rng.choice(game.legal_actions()))
        last = k == len(rounds) - 1
        assert game.phase is (Phase.GAME_OVER if last else Phase.ROUND_OVER)
        assert (game.next_spec is None) == last
    return game


def finish(game: GameState, *, seed: int = 0) -> GameState:
    """Play ``game`` to its end by the default player, dealing from seeds."""
    while not game.is_over:
        if game.phase in (Phase.DEALING, Phase.ROUND_OVER):
            game.deal(seed=seed + game.number)
        else:
            game.apply(default_action(game))
    return game


def chosen_game(rules: Rules, players: int, rounds: tuple[int, ...], first_dealer: int = 1) -> GameState:
    return finish(GameState.of_rounds(rules, players, first_dealer, rounds), seed=77)


# -- spread_rounds -------------------------------------------------------------------------------------------


def test_spread_rounds_values() -> None:
    assert spread_rounds(19, 2) == (5, 15)
    assert spread_rounds(19, 1) == (10,)
    assert spread_rounds(19, 3) == (4, 10, 16)
    assert spread_rounds(37, 4) == (5, 14, 24, 33)
    assert spread_rounds(12, 6) == (2, 4, 6, 8, 10, 12)
    for deals in (0, -1, 19, 20, 100):
        assert spread_rounds(19, deals) == tuple(range(1, 20))
    assert spread_rounds(1, 1) == (1,)


@given(total_=st.integers(1, 200), deals=st.integers(-3, 210))
def test_spread_rounds_is_the_formula_and_a_valid_choice(total_: int, deals: int) -> None:
    got = spread_rounds(total_, deals)
    if deals <= 0 or deals >= total_:
        assert got == tuple(range(1, total_ + 1))
    else:
        assert got == tuple(1 + math.floor((i + 0.5) * total_ / deals) for i in range(deals))
        assert len(got) == deals
    assert all(1 <= n <= total_ for n in got) and all(a < b for a, b in zip(got, got[1:]))


# -- the game ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("rules", "players"), GAMES, ids=[name(r, p) for r, p in GAMES])
def test_random_games_of_chosen_rounds_end_after_them(rules: Rules, players: int) -> None:
    rounds_total = total(rules, players)
    picks = random.Random(players).sample(range(1, rounds_total + 1), 3)
    for seed, rounds in enumerate((spread_rounds(rounds_total, 2), tuple(sorted(picks)), (rounds_total,))):
        game = random_game(rules, players, rounds, seed)
        assert [r.number for r in game.results] == list(rounds)
        specs = rules.schedule(players)
        for result, number in zip(game.results, rounds, strict=True):
            assert result.dealer == dealer_of(game.first_dealer, number, players)
            assert result.cards == specs[number - 1].cards and result.kind is specs[number - 1].kind
        assert game.totals == [sum(r.points[s] for r in game.results) for s in range(players)]
        assert len(game.schedule) == rounds_total  # never a tie-break round
        assert game.winners() is not None
        with pytest.raises(IllegalActionError):
            game.deal(seed=1)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(rules=st.sampled_from(EVERY_RULES), size=st.integers(0, 5), data=st.data())
def test_any_choice_of_rounds_plays_legally(rules: Rules, size: int, data: st.DataObject) -> None:
    low, high = PLAYERS[rules.preset]
    players = low + size % (high - low + 1)
    rounds_total = total(rules, players)
    chosen = data.draw(st.sets(st.integers(1, rounds_total), min_size=1, max_size=4))
    seed = data.draw(st.integers(0, 2**32))
    game = random_game(rules, players, tuple(sorted(chosen)), seed)
    assert [r.number for r in game.results] == sorted(chosen) and game.is_over


def test_of_rounds_refuses_a_bad_choice() -> None:
    for bad in ([], [0], [20], [5, 5], [15, 5], [1.0], [True], "5", None, [5, "15"]):
        with pytest.raises(ValueError):
            GameState.of_rounds(CLASICA, 4, 0, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):  # a tie-break round is not a round of the schedule
        GameState.of_rounds(Rules.of("indias"), 4, 0, [total(Rules.of("indias"), 4) + 1])
    assert GameState.of_rounds(CLASICA, 4, 0, range(1, 20)).rounds_played == tuple(range(1, 20))


def test_the_games_own_seed_deals_too() -> None:
    games = [GameState.of_rounds(CLASICA, 5, 2, (3, 9), seed=8) for _ in range(2)]
    for game in games:
        game.deal()
        assert game.number == 3 and len(game.hands[0]) == 3
    assert games[0].log[0].hands == games[1].log[0].hands
    with pytest.raises(ValueError, match="no seed"):  # without one: given hands, or deal(seed=...)
        GameState.of_rounds(CLASICA, 5, 2, (3, 9)).deal()


def test_same_seeds_same_hands_and_results_as_the_whole_game() -> None:
    for rules in EVERY_RULES:
        players = PLAYERS[rules.preset][0] + 1
        whole = finish(GameState(players, 2, rules=rules), seed=500)  # round n dealt from seed 500 + n - 1
        rounds_total = total(rules, players)
        rounds = spread_rounds(rounds_total, 3)
        game = GameState.of_rounds(rules, players, 2, rounds)
        for number in rounds:
            game.deal(seed=500 + number - 1)
            log = whole.log[number - 1]
            assert game.log[-1].hands == log.hands and game.log[-1].trump_card == log.trump_card
            assert game.dealer == whole.results[number - 1].dealer
            while game.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
                game.apply(default_action(game))
        # the same deals, the same decisions: the same rounds, scored from 0
        record = export_record(whole)
        chosen = {
            **record,
            "format": FORMAT_2,
            "rules": rules.as_json(),
            "rounds_played": list(rounds),
            "rounds": [{"kind": whole.schedule[n - 1].kind.value, **record["rounds"][n - 1]} for n in rounds],
        }
        replayed = load_game(chosen)
        assert replayed.is_over and replayed.results == [whole.results[n - 1] for n in rounds]
        assert replayed.totals == [sum(whole.results[n - 1].points[s] for n in rounds) for s in range(players)]


def test_a_tie_after_the_last_chosen_round_plays_no_tie_break() -> None:
    rules = Rules.of("indias")
    last = total(rules, 4)
    for rounds in ((last,), (3, last)):
        game = GameState.of_rounds(rules, 4, 0, rounds)
        while True:
            if game.phase in (Phase.DEALING, Phase.ROUND_OVER):
                game.deal(seed=4)
            elif sum(len(h) for h in game.hands) == 1 and game.number == last:
                break
            else:
                game.apply(default_action(game))
        ahead = game.copy()
        ahead.apply(default_action(ahead))
        gained = ahead.results[-1].points
        game.totals = [100 - p for p in gained]  # everyone on 100 after the last card
        game.apply(default_action(game))
        assert game.totals == [100] * 4 and game.winners() == [0, 1, 2, 3]
        assert game.phase is Phase.GAME_OVER and len(game.schedule) == last


# -- snapshots -----------------------------------------------------------------------------------------------


def test_snapshots_round_trip_mid_game() -> None:
    for rules, players, rounds in ((CLASICA, 6, (5, 15)), (Rules.of("indias"), 4, (2, 26, 30, 35))):
        game = GameState.of_rounds(rules, players, 3, rounds)
        fresh = dump(game)
        assert fresh["rounds_played"] == list(rounds) and "practice_round" not in fresh
        assert dump(load(fresh)) == fresh and load(fresh).rounds_played == rounds
        steps = 0
        while not game.is_over:
            if game.phase in (Phase.DEALING, Phase.ROUND_OVER):
                game.deal(seed=steps)
            else:
                game.apply(default_action(game))
            steps += 1
            if steps % 7 and game.phase is not Phase.ROUND_OVER:
                continue
            for history in (True, False):
                data = dump(game, history=history)
                assert data["rounds_played"] == list(rounds)
                restored = load(json.loads(json.dumps(data)))
                assert restored.rounds_played == rounds and restored.practice_round is None
                assert dump(restored, history=history) == data
                assert restored.next_spec == game.next_spec
                # the restored game goes on as the original does
                other, ahead = restored, game.copy()
                assert ahead.rounds_played == rounds
                for _ in range(12):
                    if ahead.is_over:
                        break
                    if ahead.phase in (Phase.DEALING, Phase.ROUND_OVER):
                        ahead.deal(seed=99)
                        other.deal(seed=99)
                    else:
                        action = default_action(ahead)
                        ahead.apply(action)
                        other.apply(action)
                assert dump(other, history=False) == dump(ahead, history=False)
        assert [r.number for r in game.results] == list(rounds)
        done = dump(game)
        assert load(done).is_over and dump(load(done)) == done


def test_a_whole_games_record_and_snapshot_are_unchanged() -> None:
    for game in (play_game(4, 5), finish(GameState(4, 1, rules=Rules.of("se-dobla")), seed=3)):
        assert game.rounds_played is None
        record = export_record(game)
        assert "rounds_played" not in record and "rounds_played" not in json.dumps(record)
        assert record["format"] == (FORMAT if game.rules.is_clasica else FORMAT_2)
        keys = ["format", "players", "first_dealer", "rounds"]
        assert list(record) == (keys if game.rules.is_clasica else ["format", "rules", *keys[1:]])
        if game.rules.is_clasica:
            assert all("kind" not in entry for entry in record["rounds"])
        for history in (True, False):
            data = dump(game, history=history)
            assert "rounds_played" not in data and "practice_round" not in data
            assert load(data).rounds_played is None
    practice = GameState.practice(CLASICA, ["a", "b", "c", "d"], 0, 7)
    assert practice.rounds_played == (7,) and practice.practice_round == 7
    assert "rounds_played" not in dump(practice) and dump(practice)["practice_round"] == 7
    with pytest.raises(ValueError, match="no record"):
        export_record(practice)


# -- records -------------------------------------------------------------------------------------------------


def test_the_record_of_a_game_of_chosen_rounds() -> None:
    game = chosen_game(CLASICA, 4, (5, 15))
    record = export_record(game)
    assert list(record) == ["format", "rules", "rounds_played", "players", "first_dealer", "rounds"]
    assert record["format"] == FORMAT_2 and record["rules"] == {"preset": "clasica"}
    assert record["rounds_played"] == [5, 15] and len(record["rounds"]) == 2
    assert [entry["kind"] for entry in record["rounds"]] == ["normal", "normal"]
    assert [len(entry["hands"][0]) for entry in record["rounds"]] == [5, 5]
    line = replay(record).as_json()
    assert line["totals"] == game.totals and line["complete"] and line["winners"] == game.winners()
    assert [r["number"] for r in line["rounds"]] == [5, 15]
    # a record that stops after a whole round: not complete
    part = replay({**record, "rounds": record["rounds"][:1]}).as_json()
    assert not part["complete"] and part["winners"] is None and part["totals"] == list(game.results[0].points)
    assert replay({**record, "rounds": []}).as_json()["totals"] == [0, 0, 0, 0]
    # the kinds of an indias game's rounds, and the round in progress
    indias = Rules.of("indias")
    kinds = [spec.kind.value for spec in indias.schedule(5)]
    rounds = (kinds.index("indias") + 1, kinds.index("subastados") + 1, kinds.index("oros") + 1)
    game = GameState.of_rounds(indias, 5, 0, rounds)
    finish(game, seed=5)
    record = export_record(game)
    assert [entry["kind"] for entry in record["rounds"]] == ["indias", "subastados", "oros"]
    assert "blind_bids" in record["rounds"][1]
    assert replay(record).as_json()["totals"] == game.totals
    going = GameState.of_rounds(indias, 5, 0, rounds)
    going.deal(seed=1)
    going.apply(default_action(going))
    current = export_record(going, include_current=True)
    assert current["rounds"][0]["kind"] == "indias" and export_record(going)["rounds"] == []


def errors(record: dict[str, Any]) -> dict[str, Any]:
    line, ok = replay_line(record)
    assert not ok, line
    return dict(line["error"])


def test_broken_records_are_refused_where_they_break() -> None:
    record = export_record(chosen_game(CLASICA, 4, (5, 15)))
    assert replay_line(record)[1]
    for bad in ([15, 5], [5, 5], [], [0, 15], [5, 20], ["5", 15], [5.0, 15], [True, 15], None, "5,15", {"5": 15}):
        error = errors({**record, "rounds_played": bad})
        assert (error["round"], error["kind"], error["index"]) == (1, "deal", 0)
        assert error["message"].startswith("rounds_played: "), error
    error = errors({**record, "format": FORMAT})  # rounds_played is pocha-record/2's
    assert (error["round"], error["kind"]) == (1, "deal") and "rounds_played" in error["message"]
    # a card changed: the second round's first play is a card of another seat
    broken = copy.deepcopy(record)
    entry = broken["rounds"][1]
    first, leader = entry["plays"][0], (dealer_of(record["first_dealer"], 15, 4) + 1) % 4
    other = next(c for s, hand in enumerate(entry["hands"]) if s != leader for c in hand)
    entry["plays"][0] = other
    error = errors(broken)
    assert (error["round"], error["kind"], error["index"]) == (2, "play", 0) and other in error["message"]
    assert first != other
    # a hand that is not the round's: round 14 deals 6 cards, not 5
    error = errors({**record, "rounds_played": [5, 14]})
    assert (error["round"], error["kind"], error["index"]) == (2, "deal", 0)
    # the wrong kind, and a round past the chosen ones
    wrong = copy.deepcopy(record)
    wrong["rounds"][0]["kind"] = "oros"
    error = errors(wrong)
    assert (error["round"], error["kind"]) == (1, "deal") and "round 5 is a normal round" in error["message"]
    longer = {**record, "rounds": [*record["rounds"], record["rounds"][1]]}
    error = errors(longer)
    assert (error["round"], error["kind"], error["index"]) == (3, "deal", 0) and "only 2 rounds" in error["message"]


def run_replay(*args: str, stdin: str | None = None) -> tuple[int, list[dict[str, Any]]]:
    proc = subprocess.run(
        [sys.executable, "-m", "games.engine", "replay", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()]


def test_the_command_line_replays_them(tmp_path: Path) -> None:
    games = [
        chosen_game(CLASICA, 4, spread_rounds(19, 2)),
        chosen_game(CLASICA, 6, (1, 8, 21)),
        chosen_game(Rules.of("indias"), 3, spread_rounds(total(Rules.of("indias"), 3), 3)),
        chosen_game(Rules.of("se-dobla", schedule="escalera", forehead=True), 5, (1, 2, 40)),
        chosen_game(Rules.of("bazas"), 7, (9,)),
    ]
    records = [export_record(game) for game in games]
    path = tmp_path / "games.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, lines = run_replay(str(path))
    assert code == 0 and len(lines) == len(games)
    for line, game in zip(lines, games, strict=True):
        assert line["totals"] == game.totals and line["complete"] is True and line["winners"] == game.winners()
        assert [r["number"] for r in line["rounds"]] == list(game.rounds_played or ())
    broken = copy.deepcopy(records[0])
    broken["rounds_played"] = [15, 5]
    one = tmp_path / "one.json"
    one.write_text(json.dumps(broken, indent=2), encoding="utf-8")
    code, lines = run_replay(str(one))
    assert code == 1 and lines[0]["error"]["round"] == 1 and "rounds_played" in lines[0]["error"]["message"]


# -- the analysis ---------------------------------------------------------------------------------------------


def test_the_analysis_of_a_game_of_chosen_rounds() -> None:
    record = export_record(chosen_game(CLASICA, 4, (5, 15)))
    assert rounds_in(record) == 2 and schedule_number(record, 2) == 15
    analysed = analyse_game(record, seed=3, worlds=2)
    assert [a.number for a in analysed] == [1, 2]
    assert [a.as_json() for a in analysed] == [analyse_round(record, n, seed=3, worlds=2).as_json() for n in (1, 2)]
    for analysis, entry in zip(analysed, record["rounds"], strict=True):
        assert len(analysis.decisions) == len(entry["bids"]) + len(entry["plays"])
    with pytest.raises(ValueError):
        analyse_round(record, 3, seed=3, worlds=2)
    # the round played again is round 15 of the schedule, dealt as it was
    result = play_round(record, 2, ["dificil", "normal", "facil", "dificil"], seed=1, worlds=2)
    assert sum(t for t in result["tricks"] if t is not None) == 5
    for bid, tricks, got in zip(result["bids"], result["tricks"], result["points"], strict=True):
        assert got == result["multiplier"] * points(bid, tricks)
    # a preset's subastados round
    indias = Rules.of("indias")
    kinds = [spec.kind.value for spec in indias.schedule(4)]
    record = export_record(chosen_game(indias, 4, (kinds.index("indias") + 1, kinds.index("subastados") + 1)))
    analysed = analyse_game(record, seed=1, worlds=2)
    assert len(analysed) == 2 and any(d.kind == "blind_bid" for d in analysed[1].decisions)
    result = play_round(record, 2, ["dificil"] * 4, seed=1, worlds=2)
    assert sum(result["tricks"]) == indias.max_cards(4)


# -- the bots ------------------------------------------------------------------------------------------------

#: Every preset at its fewest and most players; se dobla's options at one size each (its fewest, «en la frente»
#: at its most).
BOT_GAMES = [
    (rules, players)
    for rules in EVERY_RULES
    for players in PLAYERS[rules.preset]
    if rules.preset != "se-dobla" or players == PLAYERS["se-dobla"][1 if rules.forehead else 0]
]


@pytest.mark.parametrize(("rules", "players"), BOT_GAMES, ids=[name(r, p) for r, p in BOT_GAMES])
def test_every_level_plays_games_of_chosen_rounds_legally(rules: Rules, players: int) -> None:
    rounds_total = total(rules, players)
    deals = 1 if rules.preset == "se-dobla" else 2
    rounds = spread_rounds(rounds_total, deals)
    game = GameState.of_rounds(rules, players, players - 1, rounds)
    rng = random.Random(players)
    levels_seen: set[str] = set()
    while not game.is_over:
        if game.phase in (Phase.DEALING, Phase.ROUND_OVER):
            game.deal(seed=rng.getrandbits(32))
            continue
        seat = game.turn
        assert seat is not None
        view = seat_view(game, seat, reasons=False)
        if view.plays_hidden:  # an indias card: nobody's decision
            game.apply(default_action(game), seat)
            continue
        assert view.number in rounds and view.rules == rules
        level = LEVELS[seat % len(LEVELS)]
        levels_seen.add(level)
        action = decide(view, level, rng=rng, worlds=3)
        assert action in view.legal, (level, view.phase, action)
        # what a bot program is sent: the same decision from the protocol's view
        back = view_from_json(view_to_json(view))
        assert back.number == view.number and back.legal == view.legal and back.hand == view.hand
        game.apply(action, seat)
    assert [r.number for r in game.results] == list(rounds) and game.winners()
    assert levels_seen == set(LEVELS)
    assert replay(export_record(game)).as_json()["totals"] == game.totals
