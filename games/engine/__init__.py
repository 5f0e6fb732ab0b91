"""La Pocha's rules engine: pure Python, standard library only.

>>> from games.engine import GameState, default_action, Phase
>>> game = GameState.new(4, seed=1)
>>> while not game.is_over:
...     if game.phase is Phase.ROUND_OVER:
...         _ = game.deal()
...     else:
...         game.apply(default_action(game))
>>> len(game.results)
19
"""

from .actions import Action, Bid, ChooseTrump, Play, parse_action
from .bot import default_action, play_game
from .cards import ALL_CARDS, SUITS, Card, Suit, deck_for, sort_hand
from .errors import (
    IllegalActionError,
    IllegalBidError,
    IllegalDealError,
    IllegalPlayError,
    IllegalTrumpError,
    PochaError,
    Rule,
)
from .record import FORMAT, RecordError, export_record, load_game, replay, replay_line
from .rules import legal_plays, multiplier, points, trick_winner
from .schedule import RoundPhase, RoundSpec, active_order, dealer_of, schedule, spread_rounds
from .state import GameState, Phase, RoundResult, TrickPlay
from .view import SeatView, seat_view

__all__ = [
    "ALL_CARDS",
    "FORMAT",
    "SUITS",
    "Action",
    "Bid",
    "Card",
    "ChooseTrump",
    "GameState",
    "IllegalActionError",
    "IllegalBidError",
    "IllegalDealError",
    "IllegalPlayError",
    "IllegalTrumpError",
    "Phase",
    "Play",
    "PochaError",
    "RecordError",
    "RoundPhase",
    "RoundResult",
    "RoundSpec",
    "Rule",
    "SeatView",
    "Suit",
    "TrickPlay",
    "active_order",
    "dealer_of",
    "deck_for",
    "default_action",
    "export_record",
    "legal_plays",
    "load_game",
    "multiplier",
    "parse_action",
    "play_game",
    "points",
    "replay",
    "replay_line",
    "schedule",
    "seat_view",
    "sort_hand",
    "spread_rounds",
    "trick_winner",
]
