"""What one seat may see: the only thing a player (or a page rendered for one) is given.

A seat view holds the seat's own hand, the trump card (turned, or in the 8-card subida
round the last card dealt, which is shown to everyone), the bids, the cards on the
table, the last trick, tricks won, scores, whose turn it is and the seat's own legal
actions — and no other seat's unplayed card.

An indias round (``shared/VARIANTS.md``) turns that around: a seat sees every other seat's card
(``seen``) and never its own until it is played (``hidden``: how many of its own cards it holds
unseen; its ``hand`` is empty).  Its one card is played without a choice, so the view offers no
``Play`` that would name it: ``plays_hidden`` says it is that seat's turn to play it.  A spectator
sees no unplayed card in any round.
"""

from __future__ import annotations

from dataclasses import dataclass

from .actions import Action, Play
from .cards import Card, Suit, sort_hand
from .errors import IllegalPlayError
from .presets import CLASICA, Rules
from .schedule import RoundKind, RoundPhase
from .state import GameState, Phase, RoundResult, TrickPlay


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: int | None  # None: a spectator
    players: int
    names: tuple[str, ...]
    phase: Phase
    number: int  # round number from 1 (0 before the first deal)
    rounds: int  # rounds in the game
    round_phase: RoundPhase | None
    cards: int  # cards per hand this round
    dealer: int
    resting: int | None
    order: tuple[int, ...]  # seats holding cards, in bidding order
    turn: int | None
    hand: tuple[Card, ...]  # own hand, in display order
    hand_sizes: tuple[int, ...]  # how many cards each seat still holds
    trump_card: Card | None
    trump_suit: Suit | None
    multiplier: int | None
    bids: tuple[int | None, ...]
    forbidden_bid: int | None  # the last bidder's forbidden number, while bidding
    auction_winner: int | None
    trick: tuple[TrickPlay, ...]
    last_trick: tuple[TrickPlay, ...]
    last_trick_winner: int | None
    played: tuple[TrickPlay, ...]  # every card played this round, in order (public knowledge)
    tricks: tuple[int, ...]
    totals: tuple[int, ...]
    results: tuple[RoundResult, ...]
    winners: tuple[int, ...] | None
    legal: tuple[Action, ...]  # own legal actions, empty unless it is this seat's turn
    reasons: dict[Card, IllegalPlayError]  # own cards that may not be played now, and why
    kind: RoundKind = RoundKind.NORMAL  # the round's kind (the presets other than Clásica)
    seen: tuple[TrickPlay, ...] = ()  # indias: the other seats' unplayed cards
    hidden: int = 0  # indias: own cards held and not seen
    blind_bids: tuple[int | None, ...] | None = None  # subastados: the blind bids
    rules: Rules = CLASICA  # the table's preset

    @property
    def plays_hidden(self) -> bool:
        """Indias: this seat is to play the card it cannot see (no choice: the server plays it)."""
        return self.my_turn and self.phase is Phase.PLAYING and self.hidden > 0

    @property
    def my_turn(self) -> bool:
        return self.seat is not None and self.turn == self.seat

    def visible_cards(self) -> set[Card]:
        """Every card this view shows (for secrecy checks)."""
        shown = set(self.hand)
        if self.trump_card is not None:
            shown.add(self.trump_card)
        shown.update(p.card for p in self.trick)
        shown.update(p.card for p in self.last_trick)
        shown.update(p.card for p in self.played)
        shown.update(p.card for p in self.seen)
        return shown


def seat_view(game: GameState, seat: int | None, *, reasons: bool = True) -> SeatView:
    """Everything ``seat`` may see of ``game`` (``None``: what a spectator may see).
    ``reasons=False`` leaves out why each unplayable card is refused (a bot does not need it)."""
    playing = game.spec is not None
    factor = None
    if playing and game.trump_suit is not None:
        factor = game.rules.multiplier(game.players, game.trump_card, game.trump_suit)
    mine = seat is not None and game.turn == seat
    winners = game.winners()
    indias = game.spec is not None and game.spec.kind is RoundKind.INDIAS
    hand = tuple(sort_hand(game.hands[seat])) if seat is not None else ()
    seen: tuple[TrickPlay, ...] = ()
    hidden = 0
    if indias:
        hidden, hand = len(hand), ()
        if seat is not None:
            seen = tuple(TrickPlay(other, card) for other in game.order if other != seat for card in game.hands[other])
    return SeatView(
        seat=seat,
        players=game.players,
        names=game.names,
        phase=game.phase,
        number=game.number,
        rounds=len(game.schedule),
        round_phase=game.spec.phase if game.spec else None,
        cards=game.spec.cards if game.spec else 0,
        dealer=game.dealer,
        resting=game.resting,
        order=game.order,
        turn=game.turn,
        hand=hand,
        hand_sizes=tuple(len(h) for h in game.hands),
        trump_card=game.trump_card,
        trump_suit=game.trump_suit,
        multiplier=factor,
        bids=tuple(game.bids),
        forbidden_bid=game.forbidden_bid() if mine else None,
        auction_winner=game.auction_winner,
        trick=tuple(game.trick),
        last_trick=game.last_trick,
        last_trick_winner=game.last_trick_winner,
        played=_round_plays(game),
        tricks=tuple(game.tricks),
        totals=tuple(game.totals),
        results=tuple(game.results),
        winners=tuple(winners) if winners is not None else None,
        legal=_legal(game, seat) if mine and not (indias and game.phase is Phase.PLAYING) else (),
        reasons=game.play_reasons(seat) if reasons and mine and seat is not None and not indias else {},
        kind=game.spec.kind if game.spec is not None else RoundKind.NORMAL,
        seen=seen,
        hidden=hidden,
        blind_bids=tuple(game.blind_bids) if game.blind_bids is not None else None,
        rules=game.rules,
    )


def _legal(game: GameState, seat: int | None) -> tuple[Action, ...]:
    """The seat's legal actions; cards in display order, so that the view does not depend on the
    order the cards were dealt in."""
    if game.phase is Phase.PLAYING:
        return tuple(Play(card) for card in sort_hand(game.legal_cards(seat)))
    return tuple(game.legal_actions(seat))


def _round_plays(game: GameState) -> tuple[TrickPlay, ...]:
    """Every (seat, card) played so far this round, in order: the log has the cards, the order of
    play the seats (each trick is led by the previous one's winner)."""
    if game.spec is None or not game.log:
        return ()
    from .rules import trick_winner
    from .state import _TRICK_PLAYS

    plays = game.log[-1].plays
    trump = game.trump_suit
    out: list[TrickPlay] = []
    order = game.order
    size = len(order)
    leader = order[0]
    for start in range(0, len(plays), size):
        cards = plays[start : start + size]
        at = order.index(leader)
        seats = [order[(at + i) % size] for i in range(len(cards))]
        out.extend(_TRICK_PLAYS[seat][card.index] for seat, card in zip(seats, cards))
        if len(cards) == size and trump is not None:
            leader = seats[trick_winner(cards, trump)]
    return tuple(out)
