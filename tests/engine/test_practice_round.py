"""Practice rounds («Juega esta mano»): one round of an earlier game, dealt again as it was, and over after it
(``GameState.practice``), its snapshots, its seat views, and ``analysis.play_round``."""

from __future__ import annotations

from typing import Any

import pytest

from games.engine import Card, ChooseTrump, GameState, Phase, Suit, default_action, export_record, seat_view
from games.engine.analysis import PRACTICE_WORLDS, play_round
from games.engine.errors import IllegalActionError, IllegalDealError
from games.engine.presets import CLASICA, Rules
from games.engine.record import replay
from games.engine.rules import points
from games.engine.schedule import RoundKind, dealer_of
from games.engine.snapshot import dump, load


def self_played(rules: Rules, players: int, seed: int) -> dict[str, Any]:
    game = GameState.new(players, seed=seed, rules=rules)
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        else:
            game.apply(default_action(game))
    return export_record(game)


@pytest.fixture(scope="module")
def clasica() -> dict[str, Any]:
    return self_played(CLASICA, 4, seed=31)


@pytest.fixture(scope="module")
def indias() -> dict[str, Any]:
    return self_played(Rules.of("indias"), 4, seed=32)


def rules_of(record: dict[str, Any]) -> Rules:
    return Rules.from_json(record["rules"]) if "rules" in record else CLASICA


def practice(record: dict[str, Any], number: int) -> GameState:
    """The practice game of round ``number`` of ``record``, dealt as it was."""
    game = GameState.practice(rules_of(record), record["players"], record["first_dealer"], number)
    entry = record["rounds"][number - 1]
    game.deal(
        [[Card.parse(c) for c in hand] for hand in entry["hands"]],
        Card.parse(entry["trump_card"]) if entry["trump_card"] else None,
    )
    return game


def replay_round(game: GameState, entry: dict[str, Any]) -> None:
    """The record's own decisions of the round, applied (checked) to ``game``."""
    for amount in entry.get("blind_bids") or []:
        game.bid(amount)
    if game.phase is Phase.CHOOSING_TRUMP:
        game.apply(ChooseTrump(Suit.parse(entry["trump_suit"])))
    for amount in entry["bids"]:
        game.bid(amount)
    if game.phase is Phase.CHOOSING_TRUMP:
        game.apply(ChooseTrump(Suit.parse(entry["trump_suit"])))
    for text in entry["plays"]:
        game.play(Card.parse(text))


@pytest.mark.parametrize("number", [1, 8, 10, 19])
def test_a_practice_round_is_the_rounds_deal_and_ends_after_it(clasica: dict[str, Any], number: int) -> None:
    original = replay(clasica).game
    game = practice(clasica, number)
    spec = CLASICA.schedule(4)[number - 1]
    assert game.practice_round == number and game.number == number
    assert game.spec == spec and game.dealer == dealer_of(clasica["first_dealer"], number, 4)
    assert game.dealer == original.results[number - 1].dealer
    assert [[str(c) for c in h] for h in game.hands] == clasica["rounds"][number - 1]["hands"]
    assert game.totals == [0, 0, 0, 0] and game.results == []
    assert game.phase is Phase.BIDDING and game.turn == game.order[0]
    # the same decisions give the same round, scored from 0
    replay_round(game, clasica["rounds"][number - 1])
    assert game.phase is Phase.GAME_OVER and game.turn is None
    assert len(game.results) == 1 and game.results[0] == original.results[number - 1]
    assert game.totals == list(original.results[number - 1].points)
    assert game.winners() is not None
    with pytest.raises(IllegalActionError):
        game.deal()
    with pytest.raises(ValueError, match="no record"):  # its one round is not a game's round 1
        export_record(game)


def test_only_the_schedules_rounds_may_be_practised(clasica: dict[str, Any]) -> None:
    for number in (0, 20, -1):
        with pytest.raises(ValueError):
            GameState.practice(CLASICA, clasica["players"], 0, number)
    game = GameState.practice(CLASICA, clasica["players"], 0, 5)
    with pytest.raises(ValueError):  # dealt only as given (a deal that is not round 5's is refused)
        game.deal()
    with pytest.raises(IllegalDealError):  # round 5 deals 5 cards
        game.deal([[Card.parse("1o")], [Card.parse("3o")], [Card.parse("12o")], [Card.parse("11o")]], Card.parse("7o"))


def test_the_last_round_of_a_preset_with_tie_breaks_ends_the_practice(indias: dict[str, Any]) -> None:
    last = len(Rules.of("indias").schedule(4))
    game = practice(indias, last)
    assert game.spec is not None and game.spec.kind is RoundKind.OROS
    replay_round(game, indias["rounds"][last - 1])
    assert game.phase is Phase.GAME_OVER  # however tied the totals: no tie-break round
    assert len(game.schedule) == last


def test_practice_rounds_of_indias_and_subastados(indias: dict[str, Any]) -> None:
    kinds = [entry["kind"] for entry in indias["rounds"]]
    original = replay(indias).game
    for kind in ("indias", "subastados"):
        number = kinds.index(kind) + 1
        game = practice(indias, number)
        assert game.spec is not None and game.spec.kind.value == kind
        view = seat_view(game, game.order[0])
        assert view.number == number and view.rounds == len(Rules.of("indias").schedule(4))
        if kind == "indias":
            assert view.hand == () and view.hidden == 1 and len(view.seen) == 3
        else:
            assert view.blind_bids == (None,) * 4 and len(view.hand) == game.spec.cards
        replay_round(game, indias["rounds"][number - 1])
        assert game.is_over and game.results[0] == original.results[number - 1]


def test_seat_views_of_a_practice_round(clasica: dict[str, Any]) -> None:
    game = practice(clasica, 12)
    for seat in range(4):
        view = seat_view(game, seat)
        assert view.number == 12 and view.rounds == 19 and view.cards == 8
        assert view.round_phase is not None and view.round_phase.value == "subasta"
        assert set(view.hand) == set(game.hands[seat])
        assert bool(view.legal) == (seat == game.turn)
    assert seat_view(game, None).hand == ()


def test_snapshots_round_trip(clasica: dict[str, Any], indias: dict[str, Any]) -> None:
    fresh = GameState.practice(CLASICA, clasica["players"], clasica["first_dealer"], 9)
    assert load(dump(fresh)).practice_round == 9 and dump(load(dump(fresh))) == dump(fresh)
    for record, number in ((clasica, 9), (indias, 2)):
        game = practice(record, number)
        data = dump(game)
        assert data["practice_round"] == number
        assert dump(load(data)) == data and load(data).practice_round == number
        entry = record["rounds"][number - 1]
        half = len(entry["plays"]) // 2
        replay_round(game, {**entry, "plays": entry["plays"][:half]})
        for history in (True, False):
            data = dump(game, history=history)
            restored = load(data)
            assert dump(restored, history=history) == data and restored.practice_round == number
        restored = load(dump(game))
        for text in entry["plays"][half:]:
            restored.play(Card.parse(text))
        assert restored.is_over and dump(load(dump(restored))) == dump(restored)
        assert restored.copy().practice_round == number


def test_a_whole_games_snapshot_is_unchanged() -> None:
    game = GameState.new(4, seed=3)
    assert game.practice_round is None
    keys = {
        *("v", "names", "first_dealer", "phase", "number", "hands", "trump_card", "trump_suit", "bids"),
        *("bids_made", "auction_winner", "trick", "last_trick", "last_trick_winner", "tricks", "totals", "turn"),
        *("results", "log"),
    }
    assert set(dump(game)) == keys
    assert "practice_round" not in dump(GameState.new(4, seed=3, rules=Rules.of("indias")))
    assert load(dump(game)).practice_round is None


# -- play_round -----------------------------------------------------------------------------------


def check_scores(result: dict[str, Any], record: dict[str, Any], number: int) -> None:
    rules = rules_of(record)
    spec = rules.spec(len(record["players"]), number)
    assert set(result) >= {"bids", "tricks", "points"}
    assert sum(t for t in result["tricks"] if t is not None) == spec.cards
    for bid, tricks, got in zip(result["bids"], result["tricks"], result["points"], strict=True):
        doubled = 2 if rules.doubles(spec) and tricks == spec.cards else 1
        assert got == result["multiplier"] * points(bid, tricks) * doubled


def test_play_round_plays_the_deal_again_and_scores_it(clasica: dict[str, Any]) -> None:
    levels = ["normal", "normal", "dificil", "facil"]
    first = play_round(clasica, 6, levels, seed=4, worlds=6)
    assert first == play_round(clasica, 6, levels, seed=4, worlds=6)
    check_scores(first, clasica, 6)
    subasta = play_round(clasica, 10, ["dificil"] * 4, seed=4, worlds=4)
    check_scores(subasta, clasica, 10)
    # by the levels' own fixed worlds (difícil's PRACTICE_WORLDS) when none are given
    assert PRACTICE_WORLDS["dificil"] >= 100
    one = play_round(clasica, 1, ["dificil", "normal", "fácil", "difícil"], seed=9)
    assert one == play_round(clasica, 1, ["dificil", "normal", "facil", "dificil"], seed=9)
    check_scores(one, clasica, 1)


def test_play_round_under_the_presets(indias: dict[str, Any]) -> None:
    kinds = [entry["kind"] for entry in indias["rounds"]]
    for kind in ("indias", "subastados"):
        number = kinds.index(kind) + 1
        result = play_round(indias, number, ["dificil", "normal", "facil", "dificil"], seed=1, worlds=3)
        check_scores(result, indias, number)
        assert all(b is not None for b in result["bids"])
    sedobla = self_played(Rules.of("se-dobla"), 3, seed=33)
    check_scores(play_round(sedobla, 5, ["dificil"] * 3, seed=2, worlds=3), sedobla, 5)


def test_play_round_refuses_what_it_cannot_play(clasica: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        play_round(clasica, 3, ["dificil"] * 3, seed=1, worlds=2)
    with pytest.raises(ValueError):
        play_round(clasica, 20, ["dificil"] * 4, seed=1, worlds=2)
    with pytest.raises(ValueError):
        play_round(clasica, 3, ["dificil", "normal", "experto", "facil"], seed=1, worlds=2)
