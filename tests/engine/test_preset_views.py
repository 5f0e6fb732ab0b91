"""``pocha-view/2``: the bot protocol's view of a table of another preset (``shared/VARIANTS.md``).

Every decision of a whole game of every preset is written as a view, read back strictly and written
again unchanged, with the same legal choices; an indias view never names the seat's own card; and
views broken in the ways the presets add are refused, saying what is wrong.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from games.engine import Phase, default_action
from games.engine.presets import Rules
from games.engine.protocol import FORMAT, FORMAT_2, answer, view_from_json, view_to_json
from games.engine.state import GameState
from games.engine.view import seat_view

PRESETS = {
    "indias": Rules.of("indias"),
    "se-dobla-frente": Rules.of("se-dobla", schedule="una-mas", forehead=True),
    "bazas": Rules.of("bazas"),
}


def decisions(rules: Rules, players: int, seed: int) -> Iterator[tuple[GameState, dict[str, Any]]]:
    """(game, view document) at every decision of a whole game (the fácil bot playing every seat)."""
    game = GameState.new(players, seed=seed, rules=rules)
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
            continue
        view = seat_view(game, game.turn, reasons=False)
        if not view.plays_hidden:
            yield game, view_to_json(view)
        game.apply(default_action(game))


@pytest.mark.parametrize("name", PRESETS)
def test_every_decision_of_a_game_reads_back_as_written(name: str) -> None:
    rules = PRESETS[name]
    kinds = set()
    for game, doc in decisions(rules, 4, seed=5):
        assert doc["format"] == FORMAT_2 and doc["rules"] == rules.as_json()
        text = json.loads(json.dumps(doc))
        view = view_from_json(text)
        assert view_to_json(view) == doc
        assert set(view.legal) == set(game.legal_actions())
        kinds.add((doc["round"]["kind"], doc["act"]))
        if doc["round"]["kind"] == "indias":  # everyone's card but your own
            own = str(game.hands[doc["seat"]][0])
            assert doc["hand"] == ["?"] and own not in json.dumps(doc)
            assert {card for _seat, card in doc["seen"]} == {
                str(game.hands[s][0]) for s in range(4) if s != doc["seat"]
            }
    if name == "indias":
        assert {("indias", "bid"), ("subastados", "bid"), ("subastados", "trump"), ("oros", "play")} <= kinds


def test_a_clasica_view_is_still_pocha_view_1() -> None:
    (_game, doc), *_ = list(decisions(Rules(), 4, seed=1))[:1]
    assert doc["format"] == FORMAT and "rules" not in doc and "kind" not in doc["round"]


def view_at(rules: Rules, want: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    for _game, doc in decisions(rules, 4, seed=5):
        if want(doc):
            return json.loads(json.dumps(doc))
    raise AssertionError("no such decision")


def changed(doc: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    other = copy.deepcopy(doc)
    target = other
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return other


def test_views_broken_in_the_ways_of_the_presets_are_refused() -> None:
    indias = PRESETS["indias"]
    blind = view_at(indias, lambda d: d["round"]["kind"] == "subastados" and d["act"] == "bid" and not d["bids"])
    trump = view_at(indias, lambda d: d["act"] == "trump")
    contract = view_at(indias, lambda d: d["round"]["kind"] == "subastados" and d["act"] == "bid" and d["bids"])
    own = view_at(indias, lambda d: d["round"]["kind"] == "indias")
    oros = view_at(indias, lambda d: d["round"]["kind"] == "oros" and d["act"] == "play")
    bazas = view_at(PRESETS["bazas"], lambda d: d["act"] == "play" and d["tricks"] and d["tricks"][-1]["cards"])
    card = next(c for _s, c in own["seen"])
    for doc, path, value, message in [
        (own, ["hand"], [card], "does not see its own card"),
        (own, ["seen"], own["seen"][:-1], "other seats"),
        (own, ["act"], "play", "without a choice"),
        (own, ["round", "kind"], "normal", "is a indias round"),
        (blind, ["trump_suit"], "o", "null while bidding blind"),
        (blind, ["blind_bids"], None, "must be a list"),
        (trump, ["act"], "bid", "act must be 'trump'"),
        (trump, ["legal"], ["o", "c", "e", "b", "S"], "not a suit"),
        (contract, ["blind_bids"], contract["blind_bids"][:-1], "bids must be empty"),
        (oros, ["trump_suit"], "c", "oros is trump"),
        (oros, ["trump_card"], "7c", "must be null in an oros round"),
        (oros, ["seen"], [[0, "1o"]], "seen must be empty"),
        (bazas, ["hand", 0], "1o", "not in the 4-player deck"),
        (bazas, ["rules"], {"preset": "bazas", "forehead": True}, "rules: the bazas preset has no options"),
        (bazas, ["players"], 8, "players must be from 3 to 7"),
        (bazas, ["format"], FORMAT, "unknown key"),
    ]:
        with pytest.raises(ValueError, match=message):
            view_from_json(changed(doc, path, value))


def test_the_bot_program_answers_a_preset_view_with_a_legal_choice() -> None:
    rng = random.Random(1)
    for name, rules in PRESETS.items():
        for n, (_game, doc) in enumerate(decisions(rules, 3, seed=2)):
            if n % 40:
                continue
            reply = answer(json.dumps(doc), "facil", rng)
            assert "error" not in reply, (name, reply)
            (key,) = [k for k in ("bid", "trump", "play") if k in reply]
            assert reply[key] in doc["legal"] and "info" not in reply
