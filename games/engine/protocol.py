"""pocha-bot/1: our bots over standard input and output, and outside bots hosted by us.

The contract is ``shared/BOT-PROTOCOL.md``.  A *view* (``pocha-view/1``) is one JSON document that
says everything one seat may know when it must act; the answer is one JSON line.

A table of another preset (``shared/VARIANTS.md``) is viewed as ``pocha-view/2``: ``pocha-view/1`` plus
``rules`` (the record's), the round's ``kind`` in ``round``, ``blind_bids`` (subastados: the blind bids
as ``[seat, amount]`` pairs in bidding order, ``bids`` being then the contract's; ``null`` in any other
round) and ``seen`` (indias rounds: the other seats' cards as ``[seat, card]`` pairs; ``[]`` otherwise),
where ``hand`` holds the seat's own unseen card as ``"?"``.  An indias card is played without a choice,
so no view asks for it.

* ``view_to_json`` writes a ``SeatView`` as a view document; ``view_from_json`` checks a document
  strictly (ValueError saying what is wrong) and rebuilds the ``SeatView`` the bots read.
* ``cmd_bot`` is ``python -m games.engine bot``: one answer line per view line, never dying on bad input.
* ``ProtocolBot`` runs an outside program that speaks the protocol, for the arena and the server.

>>> from games.engine.state import GameState
>>> from games.engine.view import seat_view
>>> game = GameState.new(4, seed=3)
>>> doc = view_to_json(seat_view(game, game.turn))
>>> doc["format"], doc["act"], doc["seat"] == game.turn
('pocha-view/1', 'bid', True)
>>> view_to_json(view_from_json(doc)) == doc
True
"""

from __future__ import annotations

import json
import math
import os
import queue
import random
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

from .actions import Action, Bid, ChooseTrump, Play
from .cards import FRENCH_SUITS, SUITS, Card, Suit, sort_hand
from .presets import CLASICA, PLAYERS, Rules
from .rules import auction_winner as rules_auction_winner
from .rules import forbidden_last_bid, legal_plays, trick_winner
from .schedule import RoundKind, RoundSpec, TrumpMode
from .state import Phase, TrickPlay
from .view import SeatView

FORMAT = "pocha-view/1"
#: The presets other than Clásica.
FORMAT_2 = "pocha-view/2"
#: An indias round's own card, unseen.
UNSEEN = "?"

_VIEW_KEYS = (
    "format",
    "players",
    "seat",
    "scores",
    "round",
    "hand",
    "trump_card",
    "trump_suit",
    "multiplier",
    "bids",
    "auction_winner",
    "tricks",
    "act",
    "legal",
)
_VIEW_KEYS_2 = (*_VIEW_KEYS, "rules", "blind_bids", "seen")
_ROUND_KEYS = ("number", "phase", "cards", "dealer", "resting")
_ROUND_KEYS_2 = (*_ROUND_KEYS, "kind")
_TRICK_KEYS = ("leader", "cards", "winner")
_ACTS: dict[Phase, str] = {Phase.BIDDING: "bid", Phase.CHOOSING_TRUMP: "trump", Phase.PLAYING: "play"}
_PHASES: dict[str, Phase] = {act: phase for phase, act in _ACTS.items()}


# -- writing a view ------------------------------------------------------------------------------------


def view_to_json(view: SeatView) -> dict[str, Any]:
    """The ``pocha-view/1`` document of ``view`` (``pocha-view/2`` for a preset other than Clásica), which
    must be its seat's turn to act."""
    seat = view.seat
    act = _ACTS.get(view.phase)
    if seat is None or act is None or view.turn != seat or not view.legal or view.round_phase is None:
        raise ValueError("a pocha-view/1 document is written for the seat that must act now")
    bids = [[s, view.bids[s]] for s in view.order if view.bids[s] is not None]
    tricks: list[dict[str, Any]] = []
    size = len(view.order)
    for start in range(0, len(view.played), size):
        plays = view.played[start : start + size]
        winner: int | None = None
        if len(plays) == size and view.trump_suit is not None:
            winner = plays[trick_winner([p.card for p in plays], view.trump_suit)].seat
        tricks.append({"leader": plays[0].seat, "cards": [str(p.card) for p in plays], "winner": winner})
    doc: dict[str, Any] = {
        "format": FORMAT,
        "players": view.players,
        "seat": seat,
        "scores": list(view.totals),
        "round": {
            "number": view.number,
            "phase": view.round_phase.value,
            "cards": view.cards,
            "dealer": view.dealer,
            "resting": view.resting,
        },
        "hand": [str(c) for c in view.hand] + [UNSEEN] * view.hidden,
        "trump_card": str(view.trump_card) if view.trump_card is not None else None,
        "trump_suit": view.trump_suit.value if view.trump_suit is not None else None,
        "multiplier": view.multiplier,
        "bids": bids,
        "auction_winner": view.auction_winner,
        "tricks": tricks,
        "act": act,
        "legal": [_action_json(a) for a in view.legal],
    }
    if view.rules.is_clasica:
        return doc
    doc["format"] = FORMAT_2
    doc["rules"] = view.rules.as_json()
    doc["round"]["kind"] = view.kind.value
    blind = view.blind_bids
    doc["blind_bids"] = None if blind is None else [[s, blind[s]] for s in view.order if blind[s] is not None]
    doc["seen"] = [[p.seat, str(p.card)] for p in view.seen]
    return doc


def _action_json(action: Action) -> int | str:
    if isinstance(action, Bid):
        return action.amount
    if isinstance(action, ChooseTrump):
        return action.suit.value
    return str(action.card)


def answer_json(action: Action) -> dict[str, Any]:
    """The answer line for ``action``: ``{"bid": 2}``, ``{"trump": "o"}`` or ``{"play": "3c"}``."""
    if isinstance(action, Bid):
        return {"bid": action.amount}
    if isinstance(action, ChooseTrump):
        return {"trump": action.suit.value}
    return {"play": str(action.card)}


# -- reading a view ------------------------------------------------------------------------------------


def _short(value: object) -> str:
    """``repr`` of a value from the input, cut short (the input may be huge)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_null_or(value: object, expected: int | None) -> bool:
    """``value`` is exactly ``expected``: null for None, else that whole number (not true, not 2.0)."""
    if expected is None:
        return value is None
    return _is_int(value) and value == expected


def _int(value: object, what: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{what} must be a whole number, not {_kind(value)} ({_short(value)})")
    if not low <= value <= high:
        raise ValueError(f"{what} must be from {low} to {high}, not {value}")
    return value


def _list(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a list, not {_kind(value)}")
    return value


def _object(value: object, what: str, keys: Sequence[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be an object, not {_kind(value)}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise ValueError(f"{what} lacks {', '.join(repr(k) for k in missing)}")
    unknown = sorted(str(k) for k in value if k not in keys)
    if unknown:
        raise ValueError(f"{what} has unknown key(s) {', '.join(_short(k) for k in unknown[:5])}")
    return value


def _suit(value: object, what: str, suits: tuple[Suit, ...] = SUITS) -> Suit:
    """``value`` as a suit of the table's deck (the Spanish suits but at a bazas table)."""
    letters = ", ".join(s.value for s in suits)
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a suit letter ({letters}), not {_kind(value)}")
    try:
        suit = Suit.parse(value)
    except ValueError:
        suit = None
    if suit is None or suit not in suits:
        raise ValueError(f"{what}: {_short(value)} is not a suit ({letters})")
    return suit


@dataclass(frozen=True, slots=True)
class _Round:
    """What a view's header and ``round`` object fix, checked: the table, the seat and its round."""

    players: int
    seat: int
    specs: tuple[RoundSpec, ...]
    spec: RoundSpec
    number: int
    cards: int
    dealer: int
    resting: int | None
    order: tuple[int, ...]  # seats holding cards, in bidding order
    deck: frozenset[Card]
    rules: Rules = CLASICA

    @property
    def suits(self) -> tuple[Suit, ...]:
        return FRENCH_SUITS if self.rules.preset == "bazas" else SUITS

    @property
    def bidding_blind(self) -> bool:
        """Subastados before the trump is chosen: the blind bids and the trump choice."""
        return self.spec.is_blind

    def card(self, value: object, what: str) -> Card:
        """``value`` as a card of this table's deck."""
        if not isinstance(value, str):
            raise ValueError(f"{what} must be a card such as '3c', not {_kind(value)}")
        try:
            parsed = Card.parse(value)
        except ValueError:
            raise ValueError(f"{what}: {_short(value)} is not a card") from None
        if parsed not in self.deck:
            raise ValueError(f"{what}: {parsed} is not in the {self.players}-player deck")
        return parsed


@dataclass(frozen=True, slots=True)
class _Tricks:
    """The round's play as a view's ``tricks`` gives it, checked trick by trick."""

    played: tuple[TrickPlay, ...]  # every card, in order
    won: tuple[int, ...]  # tricks won, by seat
    current: tuple[TrickPlay, ...]  # the trick in progress
    last_trick: tuple[TrickPlay, ...]
    last_winner: int | None
    leader: int  # who leads the next trick (or led the one in progress)


def view_from_json(doc: object) -> SeatView:
    """The seat view a ``pocha-view/1`` document describes.

    Checks it strictly: ValueError, saying what is wrong, for anything malformed (unknown format or
    key, wrong types, a card that is not in this table's deck, a card in two places) or inconsistent
    with the rules (a seat that is not the one to act, a hand of the wrong size, tricks won by the
    wrong seat, ``legal`` other than the rules' legal choices...).  Earlier rounds are not part of a
    view, so the rebuilt view has no ``results``; names are ``P1``, ``P2``...

    The parts are read one after another, each checked against those read before it."""
    second = isinstance(doc, dict) and doc.get("format") == FORMAT_2
    view = _object(doc, "the view", _VIEW_KEYS_2 if second else _VIEW_KEYS)
    if view["format"] not in (FORMAT, FORMAT_2):
        raise ValueError(f"unknown format {_short(view['format'])}: expected {FORMAT!r} or {FORMAT_2!r}")
    rules = CLASICA
    if second:
        try:
            rules = Rules.from_json(view["rules"])
        except ValueError as error:
            raise ValueError(f"rules: {error}") from None
        if rules.is_clasica:
            raise ValueError(f"a clasica table is viewed as {FORMAT}")
    low, high = PLAYERS[rules.preset]
    players = _int(view["players"], "players", low, high)
    seat = _int(view["seat"], "seat", 0, players - 1)
    totals = _read_scores(view["scores"], players)
    rnd = _read_round(view["round"], players, seat, rules)
    act = _read_act(view["act"])
    if rnd.spec.kind is RoundKind.INDIAS and act == "play":
        raise ValueError("an indias card is played without a choice: no view asks for it")
    hand, hidden = _read_hand(view["hand"], rnd)
    trump_card, trump_suit = _read_trump(view["trump_card"], view["trump_suit"], rnd)
    amounts = _read_bids(view["bids"], rnd)
    blind = _read_blind_bids(view["blind_bids"], rnd) if second else None
    _check_bidding_stage(rnd, act, amounts, blind, trump_suit)
    winner = _read_auction(view["auction_winner"], rnd, act, amounts, blind, trump_suit)
    factor = _read_multiplier(view["multiplier"], rnd, trump_card, trump_suit)
    tricks = _read_tricks(view["tricks"], rnd, act, trump_suit)
    seen = _read_seen(view["seen"], rnd) if second else ()
    _check_each_card_in_one_place(rnd, hand, tricks.played, trump_card, seen)
    _check_turn(rnd, act, amounts, blind, winner, tricks, len(hand) + hidden)
    contract = not (rnd.spec.is_blind and trump_suit is None)
    forbidden = forbidden_last_bid(rnd.spec, amounts, len(rnd.order)) if act == "bid" and contract else None
    legal = _read_legal(view["legal"], rnd, act, forbidden, hand, tricks.current, trump_suit)
    bids_by_seat: list[int | None] = [None] * players
    for who, amount in zip(rnd.order, amounts):
        bids_by_seat[who] = amount
    blind_by_seat: list[int | None] | None = None
    if blind is not None:
        blind_by_seat = [None] * players
        for who, amount in zip(rnd.order, blind):
            blind_by_seat[who] = amount
    hand_sizes = [0] * players
    for s in rnd.order:
        hand_sizes[s] = rnd.cards - sum(1 for p in tricks.played if p.seat == s)
    return SeatView(
        seat=seat,
        players=players,
        names=tuple(f"P{i + 1}" for i in range(players)),
        phase=_PHASES[act],
        number=rnd.number,
        rounds=max(len(rnd.specs), rnd.number),
        round_phase=rnd.spec.phase,
        cards=rnd.cards,
        dealer=rnd.dealer,
        resting=rnd.resting,
        order=rnd.order,
        turn=seat,
        hand=tuple(sort_hand(hand)),
        hand_sizes=tuple(hand_sizes),
        trump_card=trump_card,
        trump_suit=trump_suit,
        multiplier=factor,
        bids=tuple(bids_by_seat),
        forbidden_bid=forbidden,
        auction_winner=winner,
        trick=tricks.current,
        last_trick=tricks.last_trick,
        last_trick_winner=tricks.last_winner,
        played=tricks.played,
        tricks=tricks.won,
        totals=totals,
        results=(),
        winners=None,
        legal=legal,
        reasons={},
        kind=rnd.spec.kind,
        seen=seen,
        hidden=hidden,
        blind_bids=tuple(blind_by_seat) if blind_by_seat is not None else None,
        rules=rules,
    )


def _read_scores(value: object, players: int) -> tuple[int, ...]:
    """``scores``: one whole number a seat."""
    scores = _list(value, "scores")
    if len(scores) != players:
        raise ValueError(f"scores must have {players} entries (one a seat), not {len(scores)}")
    return tuple(_int(s, f"scores[{i}]", -(10**9), 10**9) for i, s in enumerate(scores))


def _read_round(value: object, players: int, seat: int, rules: Rules = CLASICA) -> _Round:
    """``round``: a round of the schedule at ``players`` seats, in which ``seat`` holds cards (a tie-break
    round past the schedule, where the preset plays them)."""
    rnd = _object(value, "round", _ROUND_KEYS if rules.is_clasica else _ROUND_KEYS_2)
    specs = rules.schedule(players)
    number = _int(rnd["number"], "round.number", 1, len(specs) + rules.tie_breaks)
    spec = rules.spec(players, number)
    if not rules.is_clasica and rnd["kind"] != spec.kind.value:
        raise ValueError(f"round {number} of a {players}-player game is a {spec.kind} round, not {_short(rnd['kind'])}")
    if rnd["phase"] != spec.phase.value:
        raise ValueError(
            f"round {number} of a {players}-player game is a {spec.phase.value} round, not {_short(rnd['phase'])}"
        )
    cards = _int(rnd["cards"], "round.cards", 1, rules.max_cards(players))
    if cards != spec.cards:
        raise ValueError(f"round {number} of a {players}-player game deals {spec.cards} cards, not {cards}")
    dealer = _int(rnd["dealer"], "round.dealer", 0, players - 1)
    rests = rules.rests_dealer(players)
    resting = dealer if rests else None
    if not _is_null_or(rnd["resting"], resting):
        wanted = f"the dealer ({dealer})" if rests else "null"
        raise ValueError(f"round.resting must be {wanted}, not {_short(rnd['resting'])}")
    order = rules.active_order(dealer, players)
    if seat not in order:
        raise ValueError(f"seat {seat} is the resting dealer: it has nothing to decide")
    deck = frozenset(rules.deck(players))
    return _Round(players, seat, specs, spec, number, cards, dealer, resting, order, deck, rules)


def _read_act(value: object) -> str:
    """``act``: ``bid``, ``trump`` or ``play``."""
    if not isinstance(value, str) or value not in _PHASES:
        raise ValueError(f"act must be 'bid', 'trump' or 'play', not {_short(value)}")
    return value


def _read_hand(value: object, rnd: _Round) -> tuple[list[Card], int]:
    """``hand``: cards of the deck, no more than the round deals (how many is checked with the turn); in
    an indias round the seat's own card, unseen (``"?"``).  The cards, and how many are unseen."""
    hand_list = _list(value, "hand")
    if len(hand_list) > rnd.cards:
        raise ValueError(f"the hand holds {len(hand_list)} cards, more than the round's {rnd.cards}")
    if rnd.spec.kind is RoundKind.INDIAS:
        if any(v != UNSEEN for v in hand_list):
            raise ValueError(f"in an indias round the seat does not see its own card: hand must be [{UNSEEN!r}]")
        return [], len(hand_list)
    return [rnd.card(v, f"hand[{i}]") for i, v in enumerate(hand_list)], 0


def _read_trump(card_value: object, suit_value: object, rnd: _Round) -> tuple[Card | None, Suit | None]:
    """``trump_card`` (turned in normal rounds only) and ``trump_suit`` (the card's suit, if turned)."""
    trump_card: Card | None = None
    if rnd.spec.is_auction:
        if card_value is not None:
            raise ValueError("trump_card must be null in an auction round (no card is turned)")
    elif not rnd.spec.turns_a_card:
        if card_value is not None:
            raise ValueError("trump_card must be null in an oros round (no card is turned)")
    else:
        if card_value is None:
            raise ValueError(f"trump_card is missing: round {rnd.number} is a normal round")
        trump_card = rnd.card(card_value, "trump_card")
    trump_suit = None if suit_value is None else _suit(suit_value, "trump_suit", rnd.suits)
    if trump_card is not None and trump_suit is not trump_card.suit:
        raise ValueError(f"trump_suit must be {trump_card.suit.value}, the suit of the trump card {trump_card}")
    if rnd.spec.trump_mode is TrumpMode.OROS and trump_suit is not Suit.OROS:
        raise ValueError("trump_suit must be o: oros is trump in this round")
    return trump_card, trump_suit


def _read_bids(value: object, rnd: _Round, what: str = "bids") -> list[int]:
    """``bids`` (or ``blind_bids``): [seat, amount] pairs in bidding order; the amounts."""
    pairs = _list(value, what)
    order = rnd.order
    if len(pairs) > len(order):
        raise ValueError(f"{len(pairs)} {what}, but only {len(order)} seats bid")
    amounts: list[int] = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError(f"{what}[{i}] must be a [seat, amount] pair, not {_short(pair)}")
        who = _int(pair[0], f"{what}[{i}] seat", 0, rnd.players - 1)
        if who != order[i]:
            raise ValueError(
                f"{what}[{i}] is by seat {who}, but seat {order[i]} bids {_ordinal(i)} (the dealer is {rnd.dealer})"
            )
        amounts.append(_int(pair[1], f"{what}[{i}] amount", 0, rnd.cards))
    return amounts


def _read_blind_bids(value: object, rnd: _Round) -> list[int] | None:
    """``blind_bids`` (pocha-view/2): subastados' blind bids, null in any other round."""
    if not rnd.spec.is_blind:
        if value is not None:
            raise ValueError("blind_bids must be null: only subastados rounds have blind bids")
        return None
    return _read_bids(value, rnd, "blind_bids")


def _check_bidding_stage(
    rnd: _Round, act: str, amounts: Sequence[int], blind: Sequence[int] | None = None, trump_suit: Suit | None = None
) -> None:
    """``act`` is a bid while, and only while, someone has still to bid; the last bidder's rule held.
    Subastados: the blind bids, then the trump choice, then the contract's bids."""
    if blind is not None:
        if len(blind) < len(rnd.order) or trump_suit is None:
            if amounts:
                raise ValueError("bids must be empty until the blind bids are over and the trump is chosen")
            if len(blind) < len(rnd.order) and act != "bid":
                raise ValueError(f"act is {act!r} but the blind bidding is not over")
            if len(blind) < len(rnd.order) and trump_suit is not None:
                raise ValueError("trump_suit must be null while bidding blind")
            if len(blind) == len(rnd.order) and act != "trump":
                raise ValueError(
                    f"act must be 'trump': the blind bids are over, and the trump is not chosen (not {act!r})"
                )
            return
    complete = len(amounts) == len(rnd.order)
    if act == "bid" and complete:
        raise ValueError("act is 'bid' but every seat has bid")
    if act != "bid" and not complete:
        raise ValueError(f"act is {act!r} but the bidding is not over")
    if rnd.spec.restricts_last_bidder and complete and sum(amounts) == rnd.cards:
        raise ValueError(f"the bids add up to {rnd.cards}, which the last bidder may not make them do")


def _read_auction(
    value: object,
    rnd: _Round,
    act: str,
    amounts: Sequence[int],
    blind: Sequence[int] | None = None,
    trump_suit: Suit | None = None,
) -> int | None:
    """``auction_winner`` (once an auction's bidding is over, else null), and trump chosen only by that
    winner, after the bidding: the winner."""
    auction = blind if blind is not None else amounts
    complete = len(auction) == len(rnd.order)
    winner = rules_auction_winner(rnd.order, auction) if rnd.spec.is_auction and complete else None
    if not _is_null_or(value, winner):
        raise ValueError(f"auction_winner must be {_json_text(winner)}, not {_short(value)}")
    if blind is not None:
        if act == "trump" and trump_suit is not None:
            raise ValueError("act is 'trump' but trump_suit is already chosen")
    elif rnd.spec.is_auction:
        if act == "trump" and trump_suit is not None:
            raise ValueError("act is 'trump' but trump_suit is already chosen")
        if act == "bid" and trump_suit is not None:
            raise ValueError("trump_suit must be null while bidding blind in an auction round")
        if act == "play" and trump_suit is None:
            raise ValueError("trump_suit is missing: the auction winner has chosen it")
    elif act == "trump":
        raise ValueError("trump is chosen only in auction rounds")
    return winner


def _read_multiplier(value: object, rnd: _Round, trump_card: Card | None, trump_suit: Suit | None) -> int | None:
    """``multiplier``: the round's factor once trump is known, else null."""
    factor = rnd.rules.multiplier(rnd.players, trump_card, trump_suit) if trump_suit is not None else None
    if not _is_null_or(value, factor):
        raise ValueError(f"multiplier must be {_json_text(factor)}, not {_short(value)}")
    return factor


def _read_tricks(value: object, rnd: _Round, act: str, trump_suit: Suit | None) -> _Tricks:
    """``tricks``: the round's tricks in order, each led by the right seat and won by the right one."""
    trick_list = _list(value, "tricks")
    if act != "play" and trick_list:
        raise ValueError(f"no card is played before the bidding is over, yet tricks holds {len(trick_list)}")
    order, players, cards = rnd.order, rnd.players, rnd.cards
    size = len(order)
    played: list[TrickPlay] = []
    won = [0] * players
    current: list[TrickPlay] = []
    last_trick: tuple[TrickPlay, ...] = ()
    last_winner: int | None = None
    leader = order[0]
    if len(trick_list) > cards:
        raise ValueError(f"{len(trick_list)} tricks in a round of {cards}")
    for t, item in enumerate(trick_list):
        trick = _object(item, f"tricks[{t}]", _TRICK_KEYS)
        given_leader = _int(trick["leader"], f"tricks[{t}].leader", 0, players - 1)
        if given_leader != leader:
            why = "the dealer's left leads the first trick" if t == 0 else "the winner of the trick before leads"
            raise ValueError(f"tricks[{t}] must be led by seat {leader} ({why}), not {given_leader}")
        trick_cards = _list(trick["cards"], f"tricks[{t}].cards")
        if len(trick_cards) > size:
            raise ValueError(f"tricks[{t}] must hold at most {size} cards, not {len(trick_cards)}")
        start = order.index(leader)
        plays = [
            TrickPlay(order[(start + i) % size], rnd.card(v, f"tricks[{t}].cards[{i}]"))
            for i, v in enumerate(trick_cards)
        ]
        played.extend(plays)
        assert trump_suit is not None  # act == "play"
        if len(plays) == size:
            winner = plays[trick_winner([p.card for p in plays], trump_suit)].seat
            if not _is_null_or(trick["winner"], winner):
                raise ValueError(f"tricks[{t}] is won by seat {winner}, not {_short(trick['winner'])}")
            won[winner] += 1
            last_trick, last_winner, leader = tuple(plays), winner, winner
        else:
            if t != len(trick_list) - 1:
                raise ValueError(f"tricks[{t}] is not complete, yet another trick follows it")
            if trick["winner"] is not None:
                raise ValueError(f"tricks[{t}] is in progress: its winner must be null, not {_short(trick['winner'])}")
            current = plays
    if act == "play" and len(played) == size * cards:
        raise ValueError(f"all {cards} tricks are played: nobody is to act")
    return _Tricks(tuple(played), tuple(won), tuple(current), last_trick, last_winner, leader)


def _read_seen(value: object, rnd: _Round) -> tuple[TrickPlay, ...]:
    """``seen`` (pocha-view/2): in an indias round, every other seat's card, in bidding order."""
    items = _list(value, "seen")
    if rnd.spec.kind is not RoundKind.INDIAS:
        if items:
            raise ValueError("seen must be empty: only in indias rounds are the other seats' cards seen")
        return ()
    others = [s for s in rnd.order if s != rnd.seat]
    if len(items) != len(others):
        raise ValueError(f"seen must hold the cards of the {len(others)} other seats, not {len(items)}")
    out = []
    for i, pair in enumerate(items):
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError(f"seen[{i}] must be a [seat, card] pair, not {_short(pair)}")
        who = _int(pair[0], f"seen[{i}] seat", 0, rnd.players - 1)
        if who != others[i]:
            raise ValueError(f"seen[{i}] must be seat {others[i]}'s card, not seat {who}'s")
        out.append(TrickPlay(who, rnd.card(pair[1], f"seen[{i}] card")))
    return tuple(out)


def _check_each_card_in_one_place(
    rnd: _Round,
    hand: Sequence[Card],
    played: Sequence[TrickPlay],
    trump_card: Card | None,
    others: Sequence[TrickPlay] = (),
) -> None:
    """No card both in the hand, played, seen and turned; a trump card dealt last is with its receiver."""
    seen: dict[Card, str] = {}
    places = [(c, "the hand") for c in hand] + [(p.card, f"seat {p.seat}'s play") for p in played]
    places += [(p.card, f"seat {p.seat}'s card") for p in others]
    if trump_card is not None and not rnd.spec.trump_is_last_dealt:
        places.append((trump_card, "the turned trump card"))
    for c, where in places:
        if c in seen:
            raise ValueError(f"{c} is in two places: {seen[c]} and {where}")
        seen[c] = where
    if trump_card is not None and rnd.spec.trump_is_last_dealt:
        seat = rnd.seat
        receiver = rnd.order[-1]
        holder = next((p.seat for p in played if p.card is trump_card), None)
        if holder is not None and holder != receiver:
            raise ValueError(
                f"the trump card {trump_card} was dealt last, to seat {receiver}, yet seat {holder} played it"
            )
        if seat == receiver and holder is None and trump_card not in hand:
            raise ValueError(
                f"the trump card {trump_card} was dealt last, to this seat ({seat}), "
                f"but it is neither in the hand nor played"
            )
        if seat != receiver and trump_card in hand:
            raise ValueError(f"the trump card {trump_card} was dealt last, to seat {receiver}, not to this seat")


def _check_turn(
    rnd: _Round,
    act: str,
    amounts: Sequence[int],
    blind: Sequence[int] | None,
    auction_winner: int | None,
    tricks: _Tricks,
    holding: int,
) -> None:
    """The view's seat is the one to act, holding (``holding``, seen or not) as many cards as it has not
    played."""
    order, seat, cards = rnd.order, rnd.seat, rnd.cards
    current = tricks.current
    if act == "bid" and blind is not None and len(blind) < len(order):
        to_move = order[len(blind)]
    elif act == "bid":
        to_move = order[len(amounts)]
    elif act == "trump":
        assert auction_winner is not None
        to_move = auction_winner
    elif current:
        to_move = order[(order.index(current[0].seat) + len(current)) % len(order)]
    else:
        to_move = tricks.leader
    if seat != to_move:
        raise ValueError(f"it is not seat {seat}'s turn: seat {to_move} is to {act}")
    held = cards - sum(1 for p in tricks.played if p.seat == seat)
    if holding != held:
        raise ValueError(f"seat {seat} must hold {held} cards ({cards} dealt, {cards - held} played), not {holding}")


def _read_legal(
    value: object,
    rnd: _Round,
    act: str,
    forbidden: int | None,
    hand: Sequence[Card],
    current: Sequence[TrickPlay],
    trump_suit: Suit | None,
) -> tuple[Action, ...]:
    """``legal``: exactly the choices the rules allow now, each once, in any order."""
    legal_list = _list(value, "legal")
    if not legal_list:
        raise ValueError("legal is empty: there is nothing to choose from")
    legal: list[Action] = []
    expected: set[Action]
    if act == "bid":
        legal = [Bid(_int(v, f"legal[{i}]", 0, rnd.cards)) for i, v in enumerate(legal_list)]
        expected = {Bid(n) for n in range(rnd.cards + 1) if n != forbidden}
    elif act == "trump":
        legal = [ChooseTrump(_suit(v, f"legal[{i}]", rnd.suits)) for i, v in enumerate(legal_list)]
        expected = {ChooseTrump(s) for s in rnd.suits}
    else:
        assert trump_suit is not None
        legal = [Play(rnd.card(v, f"legal[{i}]")) for i, v in enumerate(legal_list)]
        played = [p.card for p in current]
        expected = {Play(c) for c in legal_plays(hand, played, trump_suit, rnd.rules.losing_trump)}
    if len(set(legal)) != len(legal):
        raise ValueError("legal lists a choice twice")
    extra = [a for a in legal if a not in expected]
    if extra:
        raise ValueError(f"legal lists {_json_text(_action_json(extra[0]))}, which the rules do not allow now")
    missing = sorted(_json_text(_action_json(a)) for a in expected if a not in set(legal))
    if missing:
        raise ValueError(f"legal leaves out {', '.join(missing)}, which the rules allow now")
    return tuple(legal)


def _ordinal(i: int) -> str:
    return {0: "first", 1: "second", 2: "third", 3: "fourth", 4: "fifth"}.get(i, f"number {i + 1}")


def _json_text(value: object) -> str:
    return json.dumps(value)


# -- the bot program -----------------------------------------------------------------------------------


def answer(line: str | bytes, level: str, rng: random.Random, budget_ms: float | None = None) -> dict[str, Any]:
    """The answer to one input line: an action with ``ms`` (and ``info`` when something was odd),
    or ``{"error": ...}`` when the line is not a valid view.  Never raises (short of MemoryError)."""
    from .levels import decide

    started = time.perf_counter()
    try:
        text = line.decode("utf-8-sig") if isinstance(line, bytes) else line
        view = view_from_json(json.loads(text))
    except RecursionError:
        return {"error": "not JSON: nested too deeply"}
    except UnicodeDecodeError:
        return {"error": "not UTF-8 text"}
    except json.JSONDecodeError as error:
        return {"error": f"not JSON: {error}"}
    except ValueError as error:
        return {"error": f"not a {FORMAT} view: {error}"}
    except Exception as error:  # the input must never kill the loop
        return {"error": f"cannot read this view ({type(error).__name__}: {error})"}
    info: str | None = None
    try:
        action: Action | None = decide(view, level, rng=rng, budget_ms=budget_ms)
    except Exception as error:  # a bug in a bot must not cost the caller a move
        action = None
        info = f"the {level} bot failed ({type(error).__name__}: {error}); played the first legal choice"
    if action not in view.legal:
        if info is None:
            info = f"the {level} bot chose {_short(action)}, which is not legal; played the first legal choice"
        action = view.legal[0]
    assert action is not None
    out = answer_json(action)
    out["ms"] = round((time.perf_counter() - started) * 1000.0, 2)
    if info is not None:
        out["info"] = info
    return out


def cmd_bot(level: str, budget_ms: float | None, seed: int | None) -> int:
    """``python -m games.engine bot``: answer every view line on standard input, flushing each answer.

    Blank lines are ignored; a malformed line gets ``{"error": ...}`` and the loop goes on; exit 0 at
    the end of the input (2 for a bad level or budget)."""
    from .levels import parse_level

    try:
        level = parse_level(level)
        if budget_ms is not None and not (math.isfinite(budget_ms) and budget_ms > 0):
            raise ValueError(f"--budget-ms must be a positive number of milliseconds, not {budget_ms}")
    except ValueError as error:
        print(f"bot: {error}", file=sys.stderr)
        return 2
    rng = random.Random(seed)
    out = sys.stdout
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        reply = answer(raw, level, rng, budget_ms)
        try:
            out.write(json.dumps(reply) + "\n")
            out.flush()
        except BrokenPipeError:
            # the caller went away: nothing left to answer (and keep the exit flush quiet)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, out.fileno())
            return 0
    return 0


# -- hosting an outside bot ----------------------------------------------------------------------------

_LINE_LIMIT = 1 << 20  # an answer longer than this is not an answer
_TOO_LONG = b"\x00too long"


class ProtocolBot:
    """An outside program that speaks pocha-bot/1, started from a command line.

    ``decide(view)`` sends the view and waits (at most ``timeout`` seconds) for one answer line.
    It returns ``(action, info)`` for a legal answer (``info``: the bot's free text, or ``""``) and
    ``(None, reason)`` when the answer is late, malformed, an error, illegal, or the program died;
    the caller then plays the default for that seat.  A late answer is skipped when it arrives,
    so answers never go out of step with views.  ``last_ms``: the last round trip, wall clock;
    ``last_reported_ms``: the thinking time the bot reported, if it did."""

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float = 5.0,
        cwd: str | None = None,
        stderr: IO[bytes] | int | None = subprocess.DEVNULL,
    ) -> None:
        args = shlex.split(command) if isinstance(command, str) else list(command)
        if not args:
            raise ValueError("an empty command line")
        self.command = args
        self.timeout = timeout
        self.last_ms: float | None = None
        self.last_reported_ms: float | None = None
        self._owed = 0  # answers still to come for views already sent (late answers to skip)
        self._exited = False
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._proc: subprocess.Popen[bytes] = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=cwd
        )
        self._reader = threading.Thread(target=self._read, name=f"pocha-bot {args[0]}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stdout = self._proc.stdout
        assert stdout is not None
        try:
            while True:
                line = stdout.readline(_LINE_LIMIT)
                if not line:
                    break
                if not line.endswith(b"\n") and len(line) >= _LINE_LIMIT:
                    while True:  # skip the rest of the overlong line
                        more = stdout.readline(_LINE_LIMIT)
                        if not more or more.endswith(b"\n"):
                            break
                    self._lines.put(_TOO_LONG)
                elif line.strip():
                    self._lines.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self._lines.put(None)

    def decide(self, view: SeatView) -> tuple[Action | None, str]:
        self.last_ms = self.last_reported_ms = None
        if self._exited:
            return None, self._exit_reason()
        data = (json.dumps(view_to_json(view)) + "\n").encode("utf-8")
        started = time.perf_counter()
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            stdin.flush()
        except (OSError, ValueError):
            self._exited = True
            return None, self._exit_reason()
        self._owed += 1
        deadline = started + self.timeout
        line = b""
        while self._owed:
            try:
                item = self._lines.get(timeout=max(0.0, deadline - time.perf_counter()))
            except queue.Empty:
                return None, f"no answer within {self.timeout:g} s"
            if item is None:
                self._exited = True
                return None, self._exit_reason()
            self._owed -= 1
            line = item
        self.last_ms = (time.perf_counter() - started) * 1000.0
        return self._parse(line, view)

    def _exit_reason(self) -> str:
        try:
            code = self._proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "the bot closed its output"
        return f"the bot has exited (status {code})"

    def _parse(self, line: bytes, view: SeatView) -> tuple[Action | None, str]:
        if line is _TOO_LONG:
            return None, f"an answer longer than {_LINE_LIMIT} bytes"
        try:
            doc = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            return None, f"not a JSON answer: {_short(line[:200])}"
        if not isinstance(doc, dict):
            return None, f"the answer must be a JSON object, not {_kind(doc)}"
        if "error" in doc:
            return None, f"the bot refused the view: {_short(doc['error'])}"
        ms = doc.get("ms")
        if isinstance(ms, (int, float)) and not isinstance(ms, bool) and math.isfinite(ms):
            self.last_reported_ms = float(ms)
        kinds = [k for k in ("bid", "trump", "play") if k in doc]
        if len(kinds) != 1:
            return None, f"the answer must hold exactly one of bid, trump or play: {_short(doc)}"
        value = doc[kinds[0]]
        action: Action
        try:
            if kinds[0] == "bid":
                if not _is_int(value):
                    raise ValueError(f"a bid must be a whole number, not {_short(value)}")
                action = Bid(value)
            elif kinds[0] == "trump":
                action = ChooseTrump(Suit.parse(value))
            else:
                action = Play(Card.parse(value))
        except ValueError as error:
            return None, f"malformed answer: {error}"
        if action not in view.legal:
            return None, f"illegal answer: {action}"
        info = doc.get("info")
        return action, info if isinstance(info, str) else ""

    def close(self, grace: float = 2.0) -> None:
        """End the program: close its input (it exits at end of input), kill it if it lingers
        more than ``grace`` seconds."""
        stdin = self._proc.stdin
        if stdin is not None:
            try:
                stdin.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=1.0)
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._exited = True

    def __enter__(self) -> ProtocolBot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
