"""Parts of the board that look the same on many boards, drawn once per look and language (as the seats are,
``games.read.seats``): the status section (``board_status()``), each card on the felt (``trick_card(t)``) and
the last trick behind its toggle (``last_trick_block(cards, winner)``).

The status section is the costliest part of a board to draw (its many translated sentences), and between
two moves it mostly looks the same to a viewer: whose turn it is changes, the rest waits for the next
round.  It is kept under the values it shows (``STATUS_FIELDS``), with a mark where the board's seq goes
(the seq changes at every move, the look does not), and the seq is put in when it is handed out.
``tests/live/test_seat_fragment.py`` checks each template against its key and each kept drawing against
one drawn afresh.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from django.utils.safestring import SafeString
from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from pocha_site.jinja2 import LANGUAGE, draw, language

#: Every name ``jinja2/games/_board_status.html`` reads from the board's context.  A name the template
#: comes to read must be added here, or statuses would be drawn stale (the test checks the template).
STATUS_FIELDS = (
    "auction",
    "auction_winner",
    "bidding",
    "bids_line",
    "blind_bidding",
    "blind_line",
    "bot_level",
    "bot_level_name",
    "bot_notice",
    "bots_allowed",
    "cancel_note",
    "cancel_words",
    "choosing",
    "code",
    "doubles",
    "fill_in",
    "house_rules",
    "i_am_away",
    "i_forfeited",
    "i_left",
    "is_private",
    "kind",
    "kind_name",
    "multiplier",
    "my_seat",
    "my_turn",
    "oob",
    "over",
    "plays_hidden",
    "pot",
    "practice",
    "round_phase",
    "seq",
    "size",
    "spectators",
    "stake",
    "status",
    "table",
    "tie_break",
    "tournament",
    "trump_card",
    "trump_suit",
    "turn_name",
    "view",
)

#: What the status reads of the table, and of the viewer's view of the game (``table.pk``, ``view.cards``…).
TableTag = namedtuple("TableTag", ["pk"])
ViewTag = namedtuple("ViewTag", ["cards", "number", "rounds"])

#: Where the seq goes in a kept status (a name on the board is escaped, so it cannot spell this).
SEQ = Markup("<pocha-seq>")

#: Drawings kept per process, of each kind: a process shows each table from a few viewers' sides.
KEPT = 8192


class Frozen(dict):  # type: ignore[type-arg]
    """A dict that can be part of a key (its values frozen too); the templates read it as the dict it was."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))


def freeze(value: Any) -> Any:
    """``value`` made hashable, reading the same in a template: dicts and lists, all the way down."""
    kind = type(value)
    if kind is dict:
        return Frozen({key: freeze(item) for key, item in value.items()})
    if kind is list or kind is tuple:
        return tuple([freeze(item) for item in value])
    return value


#: A name the board's context does not have (drawn as the template's undefined, as it would be on the board).
class _Missing:
    __slots__ = ()


MISSING = _Missing()


def _status_values(context: Context) -> tuple[Any, ...]:
    values = []
    for name in STATUS_FIELDS:
        value = context.get(name, MISSING)
        if value is MISSING:
            pass
        elif name == "table":
            value = TableTag(value.pk) if value is not None else None
        elif name == "view":
            value = ViewTag(value.cards, value.number, value.rounds) if value else None
        elif name == "my_seat":
            value = bool(value)
        elif name == "seq":
            value = SEQ
        else:
            value = freeze(value)
        values.append(value)
    return tuple(values)


@lru_cache(maxsize=KEPT)
def _status_drawn(lang: str | None, values: tuple[Any, ...]) -> SafeString:
    shown = {name: value for name, value in zip(STATUS_FIELDS, values) if value is not MISSING}
    return draw("games/_board_status.html", {**shown, LANGUAGE: lang})


@pass_context
def board_status(context: Context) -> SafeString:
    """The board's status section (the board's ``board_status()``), in the board's language."""
    drawn = _status_drawn(language(context), _status_values(context))
    return SafeString(drawn.replace(SEQ, str(int(context.get("seq") or 0))))  # (drawn escaped, a number)


#: Where a card's slot goes in a kept card on the felt (as in a kept seat, ``games.read.seats.SLOT``).
SLOT = Markup("<pocha-slot>")


@lru_cache(maxsize=KEPT)
def _card_drawn(lang: str | None, card: Frozen) -> SafeString:
    return draw("games/_trick_card.html", {"t": card, LANGUAGE: lang})


@pass_context
def trick_card(context: Context, card: dict[str, Any]) -> SafeString:
    """A card on the felt, its ``<li>`` (``games.read.board._felt``'s ``felt_cards``), kept without its
    slot (where its player sits as this viewer sees the table), which is filled in here."""
    drawn = _card_drawn(language(context), freeze({**card, "slot": SLOT}))
    return SafeString(drawn.replace(SLOT, str(int(card.get("slot") or 0))))  # (drawn escaped, a number)


@lru_cache(maxsize=KEPT)
def _last_trick_drawn(lang: str | None, cards: tuple[Any, ...], winner: Any) -> SafeString:
    return draw("games/_last_trick.html", {"last_trick": cards, "last_trick_winner": winner, LANGUAGE: lang})


@pass_context
def last_trick_block(context: Context, cards: Iterable[dict[str, Any]], winner: Any) -> SafeString:
    """The last trick, and the button that shows it."""
    return _last_trick_drawn(language(context), freeze(list(cards)), winner)


#: What the board's templates call (``games.read.board.draw_board``).
HELPERS = {"board_status": board_status, "trick_card": trick_card, "last_trick_block": last_trick_block}


def clear() -> None:
    """Forget every kept drawing (the tests compare kept drawings with fresh ones)."""
    for kept in (_status_drawn, _card_drawn, _last_trick_drawn):
        kept.cache_clear()
