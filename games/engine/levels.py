"""The bot levels: fácil, normal and difícil, each a strategy over a seat's view (``SeatView``).

A bot never sees the game state, only what its seat may know; ``decide`` is the one entry point
the server, the arena and the bot protocol use.  Every level plays every preset (``view.rules``); an
indias card is no decision (``view.plays_hidden``: no legal action names it), so it is not asked for.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from .actions import Action
from .state import GameState, Phase
from .view import SeatView, seat_view

FACIL = "facil"
NORMAL = "normal"
DIFICIL = "dificil"
LEVELS: tuple[str, ...] = (FACIL, NORMAL, DIFICIL)
#: Spoken names (with the accent), as players read them.
LEVEL_NAMES: dict[str, str] = {FACIL: "fácil", NORMAL: "normal", DIFICIL: "difícil"}
_ALIASES: dict[str, str] = {"fácil": FACIL, "difícil": DIFICIL, "easy": FACIL, "medium": NORMAL, "hard": DIFICIL}

#: The most worlds a normal bot looks at for one decision.
NORMAL_WORLDS = 10
#: Per-decision budget (target, hard cap) in milliseconds.
BUDGETS: dict[str, tuple[float, float]] = {FACIL: (0.0, 50.0), NORMAL: (15.0, 40.0), DIFICIL: (150.0, 600.0)}


def parse_level(text: str) -> str:
    """``facil``/``fácil``, ``normal``, ``dificil``/``difícil`` (any case); ValueError otherwise."""
    key = str(text).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in LEVELS:
        raise ValueError(f"not a bot level: {text!r} (fácil, normal or difícil)")
    return key


def at_least_normal(level: str) -> str:
    """The level that plays for a person (their clock ran out, or they dropped): normal at least."""
    return DIFICIL if level == DIFICIL else NORMAL


def decide(
    view: SeatView,
    level: str,
    *,
    rng: random.Random | None = None,
    budget_ms: float | None = None,
    worlds: int | None = None,
) -> Action:
    """The bot of ``level``'s decision for ``view`` (it must be the view's seat's turn).

    ``budget_ms``: the target thinking time (default the level's); the search stops at its
    hard cap whatever happens and plays its best move so far.  A forced move is played at once.
    ``worlds``: search exactly this many sampled worlds (still within the hard cap) instead of
    thinking for a time, so that a seeded ``rng`` gives the same decision on any machine."""
    if not view.legal:
        raise ValueError("it is not this seat's turn")
    if len(view.legal) == 1:
        return view.legal[0]
    key = parse_level(level)
    strategy = _STRATEGIES[key]
    target, cap = BUDGETS[key]
    if budget_ms is not None:
        target = min(float(budget_ms), cap)
    deadline = time.perf_counter() + cap / 1000.0
    return strategy(view, rng or random.Random(), target / 1000.0, deadline, worlds)


def bot_action(
    game: GameState,
    level: str,
    *,
    rng: random.Random | None = None,
    budget_ms: float | None = None,
    worlds: int | None = None,
) -> Action:
    """``decide`` for the seat to move in ``game``, given only that seat's view."""
    if game.turn is None:
        raise ValueError(f"nobody decides anything in phase {game.phase}")
    return decide(seat_view(game, game.turn, reasons=False), level, rng=rng, budget_ms=budget_ms, worlds=worlds)


def _facil(view: SeatView, rng: random.Random, target: float, deadline: float, worlds: int | None) -> Action:
    from .bot import view_action

    return view_action(view)


def _search(
    view: SeatView, rng: random.Random, target: float, deadline: float, worlds: int | None, **options: Any
) -> Action:
    from .search import search_action

    if worlds is not None:
        return search_action(view, rng, 10.0, deadline, min_worlds=worlds, max_worlds=worlds, **options)
    return search_action(view, rng, target, deadline, **options)


def _normal(view: SeatView, rng: random.Random, target: float, deadline: float, worlds: int | None) -> Action:
    # it bids and chooses trump by a quick search (a few worlds, reading nothing from the bids) and
    # plays its cards as fácil does
    if view.phase is Phase.PLAYING:
        return _facil(view, rng, target, deadline, worlds)
    options: dict[str, Any] = {"read_bids": False, "read_play": False, "exact_cards": 0}
    if worlds is None:
        return _search(view, rng, target, deadline, None, max_worlds=NORMAL_WORLDS, **options)
    return _search(view, rng, target, deadline, worlds, **options)


def _dificil(view: SeatView, rng: random.Random, target: float, deadline: float, worlds: int | None) -> Action:
    return _search(view, rng, target, deadline, worlds)


_STRATEGIES: dict[str, Callable[[SeatView, random.Random, float, float, int | None], Action]] = {
    FACIL: _facil,
    NORMAL: _normal,
    DIFICIL: _dificil,
}
