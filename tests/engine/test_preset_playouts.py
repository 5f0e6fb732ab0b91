"""Random legal games of every preset and table size (property-based): each ends after its schedule's
rounds (and at most three tie-break rounds, played only while the top score is shared), and its record
replays to the same totals in the engine and in the independent reference (``benchmarks/reference_presets.py``)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import Phase
from games.engine.presets import PLAYERS, Rules
from games.engine.record import export_record, replay_line
from games.engine.state import GameState

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import reference_presets  # noqa: E402

RULES = [
    Rules.of("indias"),
    *(
        Rules.of("se-dobla", schedule=s, forehead=f)
        for s in ("sencillas", "dobles", "una-mas", "escalera")
        for f in (False, True)
    ),
    Rules.of("bazas"),
]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(rules=st.sampled_from(RULES), size=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_random_legal_games_end_with_their_schedule_and_replay(rules: Rules, size: int, seed: int) -> None:
    low, high = PLAYERS[rules.preset]
    players = low + size % (high - low + 1)
    game = GameState.new(players, seed=seed, rules=rules)
    rng = random.Random(seed)
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        else:
            game.apply(rng.choice(game.legal_actions()))
    base = len(rules.schedule(players))
    assert base <= len(game.results) <= base + rules.tie_breaks
    running = [0] * players
    for number, result in enumerate(game.results, start=1):
        running = [t + p for t, p in zip(running, result.points)]
        if number >= base and number < len(game.results):  # a tie-break follows only a shared top score
            assert running.count(max(running)) > 1
    assert running == game.totals
    record = json.loads(json.dumps(export_record(game)))
    line, ok = replay_line(record)
    assert ok and line["totals"] == game.totals and line["complete"]
    assert reference_presets.replay_line(record) == line
