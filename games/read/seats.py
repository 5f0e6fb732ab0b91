"""``seat(p, bot_level, bot_level_name)``: one player's seat on the felt of a game (``jinja2/games/_seat.html``),
drawn once per look; and ``hand_card(c, seq)``, a card of the viewer's hand (``jinja2/games/_hand_card.html``).

A seat looks the same on many boards: every socket of a process draws the same table at each move, and
from one move to the next only the seats whose turn, bid, tricks or clock changed look different.  So
the drawing is kept, keyed on everything it shows (and the language), and most seats of most boards are
not drawn again.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString
from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from pocha_site.jinja2 import LANGUAGE, draw, language

#: What ``jinja2/games/_seat.html`` shows of a player (``games.read.board._players``, with the ``clock`` that
#: ``board._add_clock`` sets).  A field the template comes to show must be added here, or seats would be drawn stale:
#: ``tests/live/test_seat_fragment.py`` checks the template against this list.
FIELDS = (
    "position",
    "slot",
    "name",
    "level",
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
    "blind_bid",
    "clock",
)

#: Seats kept per process: a process shows each table's seats from a few viewers' sides.
KEPT = 8192


#: Where the clock's seconds go in a kept seat (a name on the board is escaped, so it cannot spell this).
CLOCK = Markup("<pocha-clock>")
_AT_CLOCK = FIELDS.index("clock")
#: Where the seat's slot goes (its place around the felt as this viewer sees it: their own seat at the
#: bottom).  Kept without it, a seat that changed is drawn once for every viewer who is not its player,
#: not once for each of their places around it.
SLOT = Markup("<pocha-slot>")
_AT_SLOT = FIELDS.index("slot")


@lru_cache(maxsize=KEPT)
def _drawn(lang: str | None, bot_level: Any, bot_level_name: str, values: tuple[Any, ...]) -> SafeString:
    player = dict(zip(FIELDS, values))
    context = {"p": player, "bot_level": bot_level, "bot_level_name": bot_level_name, LANGUAGE: lang}
    return draw("games/_seat.html", context)


@pass_context
def seat(context: Context, player: dict[str, Any], bot_level: Any, bot_level_name: Any) -> SafeString:
    """The seat's ``<li>``, in the board's language (the board's ``seat()``).  The seat whose turn it is
    shows its clock's seconds, a number that changes every second: it is kept with a mark where the
    seconds go, filled in here, so that a running clock does not make the seat look new at every move.
    Its slot (where it sits as this viewer sees the table) is filled in the same way."""
    values = [player.get(name) for name in FIELDS]
    clock = values[_AT_CLOCK]
    if clock is not None:
        values[_AT_CLOCK] = CLOCK
    values[_AT_SLOT] = SLOT
    drawn = _drawn(language(context), bot_level, str(bot_level_name), tuple(values))
    drawn = drawn.replace(SLOT, str(int(player.get("slot") or 0)))
    if clock is not None:
        drawn = drawn.replace(CLOCK, escape(str(clock)))
    return SafeString(drawn)  # (drawn escaped; a slot and seconds are numbers)


#: What ``jinja2/games/_hand_card.html`` shows of a card in the viewer's hand (``games.read.board._hand``);
#: it has no text of its own to translate (the name and the reason come translated).
CARD_FIELDS = ("code", "name", "face", "playable", "reason")


@lru_cache(maxsize=KEPT)
def _card_drawn(values: tuple[Any, ...], seq: int | None) -> SafeString:
    return draw("games/_hand_card.html", {"c": dict(zip(CARD_FIELDS, values)), "seq": seq})


def hand_card(card: dict[str, Any], seq: int) -> SafeString:
    """A card of the viewer's hand, its ``<li>`` (the board's ``hand_card()``), drawn once per look: a card
    that cannot be played looks the same at every seq, and most of a late hand is such cards; a playable
    one carries the seq its move is made at."""
    playable = bool(card.get("playable"))
    return _card_drawn(tuple(card.get(name) for name in CARD_FIELDS), seq if playable else None)
