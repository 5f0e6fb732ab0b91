"""The lobby's forms and lists: which table sizes the chosen house rules are played by, and how long a game
lasts (``games.read.lengths``).

``{{ n|plays:rules }}``: whether ``rules`` (a ``Rules`` value) is played by ``n`` players.
``{% game_lengths as lengths %}``: ``{rules key: {size: "19 rondas · unos 15 min"}}`` for every rules key and
size, in the reader's language (the page's script shows the one chosen: ``static/js/lobby.js``).
``{% length_of rules n %}``: those words for one game; ``{{ table|game_length }}``: for a table.
"""

from __future__ import annotations

from typing import Any

from django import template

from games.engine.presets import PLAYERS, Rules
from games.models import RULES_KEYS, rules_of
from games.read.lengths import expected

register = template.Library()


@register.filter
def plays(players: Any, rules: Any) -> bool:
    if not isinstance(rules, Rules) or not isinstance(players, int):
        return False
    low, high = PLAYERS[rules.preset]
    return low <= players <= high


@register.simple_tag
def game_lengths() -> dict[str, dict[int, str]]:
    lengths: dict[str, dict[int, str]] = {}
    for key in RULES_KEYS:
        rules = rules_of(key)
        low, high = PLAYERS[rules.preset]
        lengths[key] = {n: str(expected(rules, n)) for n in range(low, high + 1)}
    return lengths


@register.simple_tag
def length_of(rules: Any, players: Any) -> str:
    """The words for a game of ``rules`` at ``players`` seats ("" for a size the rules are not played by)."""
    if not plays(players, rules):
        return ""
    return str(expected(rules, players))


@register.filter
def game_length(table: Any) -> str:
    if getattr(table, "deals", None):  # a tournament's table plays some of the schedule's rounds
        return ""
    try:
        return str(expected(table.game_rules, table.size))
    except (AttributeError, ValueError):
        return ""
