"""The reasonable default player: used for bots, for turn timeouts and for away players.

Always legal, a few milliseconds a decision at most, and sensible: it bids the tricks
its hand can expect, chooses the trump suit it is strongest in, and plays to make
its bid exactly — taking tricks while it needs them and shedding winners once it has them.
"""

from __future__ import annotations

from collections.abc import Sequence

from .actions import Action, Bid, ChooseTrump, Play
from .cards import SUITS, Card, Suit
from .rules import trick_winner
from .schedule import RoundPhase
from .state import GameState, Phase
from .view import SeatView, seat_view

# Chance that a card takes a trick, by strength (10 = ace .. 1 = the 2), as trump and as a side suit.
TRUMP_VALUE = {10: 1.0, 9: 0.95, 8: 0.8, 7: 0.7, 6: 0.6, 5: 0.5, 4: 0.45, 3: 0.4, 2: 0.35, 1: 0.3}
SIDE_VALUE = {10: 0.85, 9: 0.55, 8: 0.3, 7: 0.15, 6: 0.05}


def hand_value(hand: Sequence[Card], trump: Suit | None, players: int) -> float:
    """Expected tricks of ``hand`` with ``trump`` (None: unknown), a quick estimate."""
    if not hand:
        return 0.0
    by_suit: dict[Suit, list[Card]] = {s: [] for s in SUITS}
    for card in hand:
        by_suit[card.suit].append(card)
    crowd = 1.0 - 0.06 * (players - 3)  # more players, fewer tricks for each side card
    length_penalty = max(0.4, 1.0 - 0.06 * (len(hand) - 1))
    total = 0.0
    for suit, cards in by_suit.items():
        if suit is trump:
            for card in cards:
                total += TRUMP_VALUE[card.strength]
            total += 0.15 * max(0, len(cards) - 2)
            continue
        for rank_pos, card in enumerate(sorted(cards, key=lambda c: -c.strength)):
            value = SIDE_VALUE.get(card.strength, 0.0)
            if rank_pos > 0 and card.strength < 10:
                value *= 0.8
            if len(cards) >= 5:
                value *= 0.6  # long side suits get trumped
            total += value * crowd * length_penalty
        if trump is not None and not cards:
            trumps = len(by_suit[trump])
            total += 0.25 * min(trumps, 2) * (len(hand) / 8)  # a void lets small trumps take tricks
    return total


def best_suit(hand: Sequence[Card], players: int) -> Suit:
    """The suit that makes this hand strongest as trump (ties: more cards, then suit order)."""

    def score(suit: Suit) -> tuple[float, int, int]:
        return (hand_value(hand, suit, players), sum(1 for c in hand if c.suit is suit), -SUITS.index(suit))

    return max(SUITS, key=score)


#: Bids come out this much below the raw estimate, and in an auction (where only the winner chooses
#: trump) a hand is valued a little under half as if its best suit were trump.  Both are set on
#: self-play at four seats, where the bot makes its bid exactly more often with them than with neither.
BID_BIAS = 0.5
AUCTION_TRUMP_SHARE = 0.45


def bid_estimate(hand: Sequence[Card], trump: Suit | None, players: int, auction: bool) -> float:
    """The tricks the fácil bot expects from ``hand``."""
    if auction:
        best = hand_value(hand, best_suit(hand, players), players)
        return AUCTION_TRUMP_SHARE * best + (1 - AUCTION_TRUMP_SHARE) * hand_value(hand, None, players) - BID_BIAS
    return hand_value(hand, trump, players) - BID_BIAS


def choose_bid(view: SeatView) -> int:
    hand = view.hand
    estimate = bid_estimate(hand, view.trump_suit, view.players, view.round_phase is RoundPhase.SUBASTA)
    if view.cards == 1:
        estimate = 1.0 if _one_card_wins(view, hand[0]) else 0.0
    legal = [a.amount for a in view.legal if isinstance(a, Bid)]
    target = estimate
    return min(legal, key=lambda n: (abs(n - target), n))


def _one_card_wins(view: SeatView, card: Card) -> bool:
    if card.suit is view.trump_suit:
        return card.strength >= 8
    return card.strength >= 10 and view.players <= 4


def choose_trump(view: SeatView) -> Suit:
    return best_suit(view.hand, view.players)


def choose_card(view: SeatView) -> Card:
    seat = view.seat
    assert seat is not None and view.trump_suit is not None
    legal = [a.card for a in view.legal if isinstance(a, Play)]
    if len(legal) == 1:
        return legal[0]
    trump = view.trump_suit
    bid = view.bids[seat] or 0
    need = bid - view.tricks[seat]
    trick = [p.card for p in view.trick]
    last_to_play = len(trick) == len(view.order) - 1

    def weight(card: Card) -> int:
        return card.strength + (20 if card.suit is trump else 0)

    if not trick:
        if need > 0:
            trumps = [c for c in legal if c.suit is trump]
            if trumps and need >= len(view.hand):
                return max(trumps, key=weight)  # every trick needed: draw the trumps, the highest first
            side_aces = [c for c in legal if c.suit is not trump and c.strength == 10]
            if side_aces:
                return side_aces[0]
            return max(legal, key=weight)
        return min(legal, key=weight)
    winners = [c for c in legal if trick_winner(trick + [c], trump) == len(trick)]
    losers = [c for c in legal if c not in winners]
    if need > 0:
        if winners:
            # last to play: the cheapest winner is enough; otherwise win firmly
            return min(winners, key=weight) if last_to_play else max(winners, key=weight)
        return min(legal, key=weight)
    if losers:
        return max(losers, key=weight)  # shed the highest card that still loses
    if not last_to_play:
        return min(winners, key=weight)  # made the bid: leave room for a later player to overtake
    return max(winners, key=weight)  # forced to take: get rid of the strongest


def view_action(view: SeatView) -> Action:
    """The fácil bot: the reasonable default for the seat whose view this is, from that view alone."""
    if view.phase is Phase.BIDDING:
        return Bid(choose_bid(view))
    if view.phase is Phase.CHOOSING_TRUMP:
        return ChooseTrump(choose_trump(view))
    if view.phase is Phase.PLAYING:
        return Play(choose_card(view))
    raise ValueError(f"nobody decides anything in phase {view.phase}")


def default_action(game: GameState) -> Action:
    """The reasonable default (the fácil bot) for the seat to move, from what that seat may see."""
    if game.turn is None:
        raise ValueError(f"nobody decides anything in phase {game.phase}")
    return view_action(seat_view(game, game.turn, reasons=False))


def play_game(players: int, seed: int) -> GameState:
    """A whole game among default players, dealt from ``seed``."""
    game = GameState.new(players, seed=seed)
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        else:
            game.apply_unchecked(default_action(game))
    return game
