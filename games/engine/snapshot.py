"""A game state as plain JSON data, and back: how the server stores a live game in one row.

The snapshot holds the whole state, hidden hands included: it is for the server's
storage only, never for a player (players get ``view.seat_view``).  The game's random
generator is not kept: a restored game is dealt with explicit seeds (``deal(seed=...)``).

>>> from games.engine.state import GameState
>>> game = GameState.new(5, seed=3)
>>> restored = load(dump(game))
>>> dump(restored) == dump(game)
True
"""

from __future__ import annotations

from typing import Any

from .cards import Card, Suit
from .presets import Rules
from .state import GameState, Phase, RoundLog, RoundResult, TrickPlay

VERSION = 1


def _cards(cards: Any) -> list[str]:
    return [str(c) for c in cards]


def _parse(cards: list[str]) -> list[Card]:
    return [Card.parse(c) for c in cards]


def _opt_card(text: str | None) -> Card | None:
    return None if text is None else Card.parse(text)


def _opt_suit(text: str | None) -> Suit | None:
    return None if text is None else Suit.parse(text)


def dump(game: GameState, *, history: bool = True) -> dict[str, Any]:
    """Everything needed to go on with ``game``, as JSON-ready data.  ``history=False`` leaves out what
    the next move does not need: the earlier rounds (their results but the last one, its scoreboard line
    and the result shown between rounds, and their logs but the round in play's) and the players' names
    (the count only: loaded, they are ``P1``, ``P2``…).  The game goes on the same, but its record, its
    results but the last and its names must come from elsewhere (the server's log and seats).  A game of chosen
    rounds (``GameState.of_rounds``) keeps its ``rounds_played``, a practice game its ``practice_round``; a whole
    game's snapshot has neither."""
    results = game.results if history else game.results[-1:]
    logs = game.log if history else game.log[-1:]
    extra: dict[str, Any] = {}
    if not game.rules.is_clasica:  # (a Clásica game's snapshot is as it always was)
        extra["rules"] = game.rules.as_json()
        extra["tie_breaks"] = len(game.schedule) - len(game.rules.schedule(game.players))
        extra["blind_bids"] = game.blind_bids
    if game.practice_round is not None:  # (a whole game's snapshot is as it always was)
        extra["practice_round"] = game.practice_round
    elif game.rounds_played is not None:
        extra["rounds_played"] = list(game.rounds_played)
    return {
        "v": VERSION,
        **extra,
        **({"names": list(game.names)} if history else {"players": game.players}),
        "first_dealer": game.first_dealer,
        "phase": game.phase.value,
        "number": game.number,
        "hands": [_cards(h) for h in game.hands],
        "trump_card": None if game.trump_card is None else str(game.trump_card),
        "trump_suit": None if game.trump_suit is None else game.trump_suit.value,
        "bids": list(game.bids),
        "bids_made": list(game.bids_made),
        "auction_winner": game.auction_winner,
        "trick": [[p.seat, str(p.card)] for p in game.trick],
        "last_trick": [[p.seat, str(p.card)] for p in game.last_trick],
        "last_trick_winner": game.last_trick_winner,
        "tricks": list(game.tricks),
        "totals": list(game.totals),
        "turn": game.turn,
        "results": [r.as_json() for r in results],
        "log": [
            {
                "hands": [_cards(h) for h in r.hands],
                "trump_card": None if r.trump_card is None else str(r.trump_card),
                "bids": list(r.bids),
                "trump_suit": None if r.trump_suit is None else r.trump_suit.value,
                "plays": _cards(r.plays),
                "seed": r.seed,
                **({"blind_bids": list(r.blind_bids)} if r.blind_bids is not None else {}),
            }
            for r in logs
        ],
    }


def load(data: dict[str, Any]) -> GameState:
    """The game a ``dump`` describes (ValueError if it is not one)."""
    if data.get("v") != VERSION:
        raise ValueError(f"unknown snapshot version {data.get('v')!r}")
    players = data["names"] if "names" in data else int(data["players"])
    rules = Rules.from_json(data["rules"]) if "rules" in data else Rules()
    game = GameState(players if isinstance(players, int) else list(players), int(data["first_dealer"]), rules=rules)
    practice = data.get("practice_round")
    if practice is not None:
        game.practice_round = int(practice)
    elif data.get("rounds_played") is not None:
        game.rounds_played = game.check_rounds(data["rounds_played"])
    tie_breaks = int(data.get("tie_breaks", 0))
    if tie_breaks:
        base = len(game.schedule)
        game.schedule = (*game.schedule, *(rules.tie_break(game.players, base + i + 1) for i in range(tie_breaks)))
    game.phase = Phase(data["phase"])
    game.number = int(data["number"])
    if game.number:
        game.spec = game.schedule[game.number - 1]
        game.dealer = (game.first_dealer + game.number - 1) % game.players
        game.order = rules.active_order(game.dealer, game.players)
        game._next = {seat: game.order[(i + 1) % len(game.order)] for i, seat in enumerate(game.order)}
    game.hands = [_parse(h) for h in data["hands"]]
    game.trump_card = _opt_card(data["trump_card"])
    game.trump_suit = _opt_suit(data["trump_suit"])
    game.bids = list(data["bids"])
    game.bids_made = list(data["bids_made"])
    blind = data.get("blind_bids")
    game.blind_bids = None if blind is None else list(blind)
    game.auction_winner = data["auction_winner"]
    game.trick = [TrickPlay(seat, Card.parse(card)) for seat, card in data["trick"]]
    game.last_trick = tuple(TrickPlay(seat, Card.parse(card)) for seat, card in data["last_trick"])
    game.last_trick_winner = data["last_trick_winner"]
    game.tricks = list(data["tricks"])
    game.totals = list(data["totals"])
    game.turn = data["turn"]
    game.results = [RoundResult.from_json(r) for r in data["results"]]
    game.log = [
        RoundLog(
            tuple(tuple(_parse(h)) for h in r["hands"]),
            _opt_card(r["trump_card"]),
            list(r["bids"]),
            _opt_suit(r["trump_suit"]),
            _parse(r["plays"]),
            r.get("seed"),
            None if r.get("blind_bids") is None else list(r["blind_bids"]),
        )
        for r in data["log"]
    ]
    return game
