"""``seat(p, bot_level, bot_level_name)``: one player's seat on the felt of a game (``jinja2/games/_seat.html``),
drawn once per look.

A seat looks the same on many boards: every socket of a process draws the same table at each move, and
from one move to the next only the seats whose turn, bid, tricks or clock changed look different.  So
the drawing is kept, keyed on everything it shows (and the language), and most seats of most boards are
not drawn again.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.utils.safestring import SafeString
from django.utils.translation import get_language

from pocha_site.jinja2 import draw

#: What ``jinja2/games/_seat.html`` shows of a player (``selectors._game_context``'s players, with ``slot`` and
#: ``clock``).  A field the template comes to show must be added here, or seats would be drawn stale:
#: ``tests/live/test_seat_fragment.py`` checks the template against this list.
FIELDS = (
    "position",
    "slot",
    "name",
    "is_me",
    "is_bot",
    "is_turn",
    "is_dealer",
    "is_resting",
    "away",
    "offline",
    "bid",
    "tricks",
    "total",
    "clock",
)

#: Seats kept per process: a process shows each table's seats from a few viewers' sides.
KEPT = 8192


@lru_cache(maxsize=KEPT)
def _drawn(language: str | None, bot_level: Any, bot_level_name: str, values: tuple[Any, ...]) -> SafeString:
    player = dict(zip(FIELDS, values))
    context = {"p": player, "bot_level": bot_level, "bot_level_name": bot_level_name}
    return draw("games/_seat.html", context)


def seat(player: dict[str, Any], bot_level: Any, bot_level_name: Any) -> SafeString:
    """The seat's ``<li>``, in the active language (the board's ``seat()``)."""
    return _drawn(get_language(), bot_level, str(bot_level_name), tuple(player.get(name) for name in FIELDS))
