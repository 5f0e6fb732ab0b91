"""Typed errors raised by the engine: which rule was broken, and with what, never prose.

An error carries a stable code (a ``Rule``) and its parameters: suit letters (``"o"``), card
codes (``"12b"``), seats and numbers.  Wording it is the caller's business: the site says it
to players in their language (``games/table/rule_words.py``); ``describe()`` gives a plain English
line for the command-line tools (record replays, bot logs) and for developers.

>>> error = IllegalPlayError(Rule.MUST_FOLLOW_SUIT, {"suit": "o", "trump": "b", "legal": "3o 12o"})
>>> error.code, dict(error.params)
(<Rule.MUST_FOLLOW_SUIT: 'must_follow_suit'>, {'suit': 'o', 'trump': 'b', 'legal': '3o 12o'})
>>> str(error)
"must_follow_suit suit=o trump=b legal='3o 12o'"
>>> error.describe()
'must follow suit: play coins (3o 12o)'
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

from .cards import Suit

#: A parameter of a rule: a suit letter, a card code, space-separated card codes, a seat, a number.
Param = str | int


class Rule(str, enum.Enum):
    """Every rule the engine can say was broken.  The values are stable snake_case codes.

    The parameters each code comes with are listed beside it (``legal``: the cards that may be
    played instead, as space-separated card codes in display order)."""

    # whose turn, and what may be done now (IllegalActionError)
    NO_TURN = "no_turn"  # nobody is to move (between rounds, or the game is over)
    NOT_YOUR_TURN = "not_your_turn"  # seat: who asked; turn: the seat to move
    NOT_DEALING = "not_dealing"  # a deal while a round is being played
    GAME_OVER = "game_over"  # a deal once every round is played
    UNKNOWN_ACTION = "unknown_action"  # not a Bid, ChooseTrump or Play
    # bids (IllegalBidError)
    NOT_BIDDING = "not_bidding"
    BID_RANGE = "bid_range"  # max: the cards in the round (bids go from 0 to max)
    LAST_BIDDER_SUM = "last_bidder_sum"  # n: the cards in the round; bid: the bid refused
    # trump choice (IllegalTrumpError)
    NOT_CHOOSING_TRUMP = "not_choosing_trump"
    NOT_A_SUIT = "not_a_suit"
    # cards (IllegalPlayError)
    NOT_PLAYING_CARDS = "not_playing_cards"  # a card while bidding or choosing trump
    NOT_IN_HAND = "not_in_hand"  # card
    MUST_FOLLOW_SUIT = "must_follow_suit"  # asistir; suit: the suit led; trump; legal
    MUST_BEAT = "must_beat"  # montar; suit: the suit led (trump when trump was led); trump; legal
    MUST_TRUMP = "must_trump"  # fallar; suit: the suit led; trump; legal
    MUST_OVERTRUMP = "must_overtrump"  # contrafallar; suit: the suit led; trump; legal
    CANNOT_PLAY = "cannot_play"  # card (never raised: every other refusal of a card is named above)
    # deals (IllegalDealError)
    HAND_COUNT = "hand_count"  # n: hands wanted (the players); got
    HAND_SIZE = "hand_size"  # seat; n: cards wanted; got
    NOT_IN_DECK = "not_in_deck"  # card; players
    DUPLICATE_CARD = "duplicate_card"  # card
    AUCTION_TRUMP_CARD = "auction_trump_card"  # card: the card given as trump in an auction round
    NO_CARD_TURNED = "no_card_turned"  # card: the card given as trump in an oros round (trump is oros)
    NO_TRUMP_CARD = "no_trump_card"
    TRUMP_NOT_LAST_DEALT = "trump_not_last_dealt"  # card; seat: the last receiver, who must hold it
    TRUMP_IN_HAND = "trump_in_hand"  # card: the turned card, found in a hand

    def __str__(self) -> str:
        return self.value


#: Every code, for callers that word them (a test checks each one is worded).
CODES: frozenset[str] = frozenset(rule.value for rule in Rule)

# The plain English rendering, for developers and the command-line tools only.  ``{suit}`` and
# ``{trump}`` are written as suit names; a missing parameter shows as ``?``.
_PLAIN: dict[Rule, str] = {
    Rule.NO_TURN: "nobody is to move now",
    Rule.NOT_YOUR_TURN: "it is not seat {seat}'s turn: seat {turn} is to move",
    Rule.NOT_DEALING: "it is not time to deal",
    Rule.GAME_OVER: "the game is over",
    Rule.UNKNOWN_ACTION: "unknown action",
    Rule.NOT_BIDDING: "bids are not being made now",
    Rule.BID_RANGE: "the bid must be from 0 to {max}",
    Rule.LAST_BIDDER_SUM: "last bidder: the bids may not add up to {n}, so the bid may not be {bid}",
    Rule.NOT_CHOOSING_TRUMP: "trump is not being chosen now",
    Rule.NOT_A_SUIT: "that is not a suit",
    Rule.NOT_PLAYING_CARDS: "cards are not being played now",
    Rule.NOT_IN_HAND: "{card} is not in the hand",
    Rule.MUST_FOLLOW_SUIT: "must follow suit: play {suit} ({legal})",
    Rule.MUST_BEAT: "must beat the highest card: play a higher card of {suit} ({legal})",
    Rule.MUST_TRUMP: "void in {suit}: must play a trump ({legal})",
    Rule.MUST_OVERTRUMP: "must overtrump: play a higher trump ({legal})",
    Rule.CANNOT_PLAY: "cannot play {card}",
    Rule.HAND_COUNT: "expected {n} hands, got {got}",
    Rule.HAND_SIZE: "seat {seat} must hold {n} cards, holds {got}",
    Rule.NOT_IN_DECK: "{card} is not in the {players}-player deck",
    Rule.DUPLICATE_CARD: "{card} is dealt twice",
    Rule.AUCTION_TRUMP_CARD: "no trump card is turned in an auction round (given: {card})",
    Rule.NO_CARD_TURNED: "no card is turned in this round: trump is oros (given: {card})",
    Rule.NO_TRUMP_CARD: "the trump card is missing",
    Rule.TRUMP_NOT_LAST_DEALT: "the trump card ({card}) must be the last card dealt, in seat {seat}'s hand",
    Rule.TRUMP_IN_HAND: "the turned trump card {card} is in a hand",
}


class _Plain(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def describe(code: str, params: Mapping[str, Param]) -> str:
    """``code`` with ``params`` in plain English: for logs and the command-line tools, not for players."""
    try:
        template = _PLAIN[Rule(code)]
    except ValueError:
        return _developer(code, params)  # not a rule of this engine: say it as it came
    words = _Plain({key: str(value) for key, value in params.items()})
    for key in ("suit", "trump"):
        if key in words:
            try:
                words[key] = Suit.parse(words[key]).name_en
            except ValueError:
                pass  # not a suit letter: shown as given
    return template.format_map(words)


def _developer(code: str, params: Mapping[str, Param]) -> str:
    parts = [str(code)]
    for key, value in params.items():
        text = str(value)
        parts.append(f"{key}={text!r}" if isinstance(value, str) and (not text or " " in text) else f"{key}={text}")
    return " ".join(parts)


class PochaError(ValueError):
    """Base class: something was asked of the engine that the rules do not allow.

    ``code`` says which rule (a ``Rule``), ``params`` with what (a read-only mapping of plain
    values: suit letters, card codes, seats, numbers).  ``str(error)`` is the code and its
    parameters (``must_follow_suit suit=o ...``); ``describe()`` is a plain English line.
    """

    kind: ClassVar[str] = "error"

    code: Rule
    params: Mapping[str, Param]

    def __init__(self, code: Rule | str, params: Mapping[str, Param] | None = None) -> None:
        rule = Rule(code)
        values = dict(params) if params is not None else {}
        super().__init__(rule.value, values)  # the arguments that rebuild it (pickling, copying)
        self.code = rule
        self.params = MappingProxyType(values)

    def __reduce__(self) -> tuple[type[PochaError], tuple[str, dict[str, Param]]]:
        return (type(self), (self.code.value, dict(self.params)))

    def __str__(self) -> str:
        return _developer(self.code.value, self.params)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code.value!r}, {dict(self.params)!r})"

    def describe(self) -> str:
        """The rule broken, in plain English (command-line tools, logs; players get ``games/table/rule_words.py``)."""
        return describe(self.code.value, self.params)

    def as_json(self) -> dict[str, object]:
        """``{"code": ..., "params": {...}}``: what a client needs to word the error itself."""
        return {"code": self.code.value, "params": dict(self.params)}


class IllegalActionError(PochaError):
    """An action that is not legal now: wrong turn, wrong phase, or against a rule of play."""

    kind = "action"


class IllegalBidError(IllegalActionError):
    kind = "bid"


class IllegalTrumpError(IllegalActionError):
    kind = "trump"


class IllegalPlayError(IllegalActionError):
    kind = "play"


class IllegalDealError(PochaError):
    """Hands or trump card that cannot come from a deal of this round."""

    kind = "deal"
