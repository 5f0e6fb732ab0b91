"""The arena: duplicate games, its figures, and outside bots over pocha-bot/1."""

from __future__ import annotations

import shlex
import sys

from games.engine.arena import GameResult, LevelPlayer, play_one, run_arena
from games.engine.cli import main


def test_a_bot_against_itself_scores_exactly_nothing() -> None:
    # Same deals, same (deterministic) player everywhere: every seat's game is the baseline again.
    r = run_arena("fácil", "fácil", players=4, deals=2, seed=3)
    assert r["games"] == 8 and r["hands"] == 8 * 19
    assert r["diff_per_hand"] == 0 and r["ci95"] == 0
    assert r["win_rate_a"] == r["win_rate_b_same_seat"]
    assert r["bids_a"] == 8 * 19 and r["bids_b"] == 8 * 19 * 3 + 2 * 4 * 19
    assert r["illegal_a"] == r["illegal_b"] == 0


def test_an_outside_bot_plays_through_the_protocol_like_the_same_level_inside() -> None:
    command = " ".join(map(shlex.quote, [sys.executable, "-m", "games.engine", "bot", "--level", "fácil"]))
    r = run_arena(f"exec:{command}", "fácil", players=3, deals=1, seed=5)
    assert r["illegal_a"] == 0 and r["decisions_a"] > 100
    assert r["diff_per_hand"] == 0  # the same decisions, through a pipe


def test_the_candidate_sits_in_every_seat_on_the_same_cards() -> None:
    a, b = LevelPlayer("normal"), LevelPlayer("fácil")
    results: list[GameResult] = [play_one(4, 77, seat, a, b) for seat in (None, 0, 1, 2, 3)]
    assert [r.seat for r in results] == [None, 0, 1, 2, 3]
    assert all(len(r.points) == 19 for r in results)
    # the candidate changed how the games went, seat by seat
    assert len({tuple(r.totals) for r in results}) > 1
    assert all(r.sides["a"].bids == (19 if r.seat is not None else 0) for r in results)


def test_the_arena_command_prints_its_figures(capsys) -> None:
    assert main(["arena", "--a", "normal", "--b", "fácil", "--players", "4", "--deals", "1", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    for needle in (
        "score difference per hand",
        "95 % interval",
        "full-game win rate",
        "exact-bid rate",
        "decision time A: p50",
        "p95",
        "max",
        "illegal actions: A 0, B 0",
    ):
        assert needle in out
    assert main(["arena", "--a", "imposible", "--b", "fácil"]) == 2


def test_an_outside_bots_illegal_answers_are_counted_and_replaced(tmp_path) -> None:
    liar = tmp_path / "liar.py"
    liar.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    view = json.loads(line)\n"
        "    answer = {'bid': 99} if view['act'] == 'bid' else {'play': '1o'} if view['act'] == 'play' else {'trump': 'x'}\n"
        "    print(json.dumps(answer), flush=True)\n"
    )
    command = " ".join(map(shlex.quote, [sys.executable, str(liar)]))
    r = run_arena(f"exec:{command}", "fácil", players=3, deals=1, seed=1)
    # a bid of 99 and the trump 'x' are never legal; the 1 of oros only sometimes
    assert 0 < r["illegal_a"] <= r["decisions_a"]
    assert r["illegal_a"] >= 18 * 3  # at least every bid of every game
    assert r["illegal_b"] == 0
