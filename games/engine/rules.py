"""The rules of La Pocha as pure functions: dealing, bids, what may be played, tricks, points.

>>> from games.engine.cards import Card, Suit
>>> points(bid=2, won=2)
20
>>> points(bid=1, won=4)
-15
>>> [str(c) for c in legal_plays([Card.parse("3c"), Card.parse("5c"), Card.parse("1o")],
...                              [Card.parse("12c")], Suit.ESPADAS)]
['3c']
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from .cards import Card, Suit
from .errors import IllegalDealError, IllegalPlayError, Rule
from .presets import CLASICA, Rules, clasica_multiplier
from .presets import FIVE_OF_BASTOS as FIVE_OF_BASTOS  # (re-exported: the rule lives with the presets)
from .schedule import RoundSpec, TrumpMode

RESTING_POINTS = 10
#: Clásica's multiplier (the rule lives with the presets).
multiplier = clasica_multiplier


def points(bid: int, won: int) -> int:
    """Unmultiplied points for one player and round: exact +10+5×bid, else −5 per trick off."""
    if won == bid:
        return 10 + 5 * bid
    return -5 * abs(bid - won)


def forbidden_last_bid(spec: RoundSpec, bids_so_far: Sequence[int], bidders: int) -> int | None:
    """The one number the last bidder may not say in a normal round, else None."""
    if not spec.restricts_last_bidder or len(bids_so_far) != bidders - 1:
        return None
    forbidden = spec.cards - sum(bids_so_far)
    return forbidden if 0 <= forbidden <= spec.cards else None


def auction_winner(order: Sequence[int], bids: Sequence[int]) -> int:
    """Highest bid wins; a tie goes to whoever bid earlier (all zeros: the first bidder)."""
    best = 0
    for i in range(1, len(bids)):
        if bids[i] > bids[best]:
            best = i
    return order[best]


def trick_winner(cards: Sequence[Card], trump: Suit) -> int:
    """Index in ``cards`` (played in order) of the card that takes the trick."""
    best = 0
    best_card = cards[0]
    for i in range(1, len(cards)):
        card = cards[i]
        if card.suit is best_card.suit:
            if card.strength > best_card.strength:
                best, best_card = i, card
        elif card.suit is trump:
            best, best_card = i, card
        # a card of a third suit (or the led suit once trumped) never takes it
    return best


def legal_plays(hand: Sequence[Card], trick: Sequence[Card], trump: Suit, losing_trump: bool = True) -> list[Card]:
    """The cards of ``hand`` that may be played on ``trick`` (cards so far, in order).  ``losing_trump``
    (Clásica, bazas): a player void in the led suit who cannot overtrump must still play a trump;
    without it (indias, se-dobla) only a trump that would win is owed, and with none any card."""
    if not trick:
        return list(hand)
    led = trick[0].suit
    follow = [c for c in hand if c.suit is led]
    if follow:
        if led is not trump and any(c.suit is trump for c in trick):
            return follow  # someone fallado: any card of the led suit will do
        top = max(c.strength for c in trick if c.suit is led)
        higher = [c for c in follow if c.strength > top]
        return higher or follow
    trumps = [c for c in hand if c.suit is trump]
    if trumps:
        on_table = [c.strength for c in trick if c.suit is trump]
        if on_table:
            top = max(on_table)
            higher = [c for c in trumps if c.strength > top]
            if higher or losing_trump:
                return higher or trumps
            return list(hand)
        return trumps
    return list(hand)


def may_play(card: Card, hand: Sequence[Card], trick: Sequence[Card], trump: Suit, losing_trump: bool = True) -> bool:
    """``card in legal_plays(hand, trick, trump)`` for a ``card`` of ``hand``, without building the list.

    Replaying and checking call this once per card played, so it scans instead of allocating.
    """
    if not trick:
        return True
    led = trick[0].suit
    suit = card.suit
    if suit is led:
        top = 0
        for c in trick:
            if c.suit is led:
                if c.strength > top:
                    top = c.strength
            elif c.suit is trump:
                return True  # someone fallado: any card of the led suit will do
        if card.strength > top:
            return True
        for c in hand:
            if c.suit is led and c.strength > top:
                return False  # could montar and did not
        return True
    for c in hand:
        if c.suit is led:
            return False  # could asistir and did not
    if suit is trump:
        top = 0
        for c in trick:
            if c.suit is trump and c.strength > top:
                top = c.strength
        if card.strength > top:
            return True
        for c in hand:
            if c.suit is trump and c.strength > top:
                return False  # could contrafallar and did not
        return True
    if losing_trump:
        for c in hand:
            if c.suit is trump:
                return False  # could fallar and did not
        return True
    top = 0
    for c in trick:
        if c.suit is trump and c.strength > top:
            top = c.strength
    for c in hand:
        if c.suit is trump and c.strength > top:
            return False  # could fallar with a trump that wins (all that is owed here) and did not
    return True


def explain_illegal(
    card: Card, hand: Sequence[Card], trick: Sequence[Card], trump: Suit, losing_trump: bool = True
) -> IllegalPlayError | None:
    """Why ``card`` may not be played now (an error to raise or show), or None if it may.

    The rules of play (asistir, montar, fallar, contrafallar) come with the suit led, the trump
    suit and, as ``legal``, the cards that may be played instead."""
    if card not in hand:
        return IllegalPlayError(Rule.NOT_IN_HAND, {"card": str(card)})
    if may_play(card, hand, trick, trump, losing_trump):
        return None
    legal = legal_plays(hand, trick, trump, losing_trump)
    led = trick[0].suit
    params = {"suit": led.value, "trump": trump.value, "legal": " ".join(str(c) for c in legal)}
    if legal[0].suit is led:
        return IllegalPlayError(Rule.MUST_BEAT if card.suit is led else Rule.MUST_FOLLOW_SUIT, params)
    if legal[0].suit is trump:
        return IllegalPlayError(Rule.MUST_OVERTRUMP if card.suit is trump else Rule.MUST_TRUMP, params)
    # unreachable: with neither led suit nor trump every card is legal
    return IllegalPlayError(Rule.CANNOT_PLAY, {"card": str(card)})


@dataclass(frozen=True, slots=True)
class Deal:
    """What chance decides in a round: each seat's hand (``()`` for the resting dealer) and the trump card."""

    hands: tuple[tuple[Card, ...], ...]
    trump_card: Card | None


def deal(players: int, spec: RoundSpec, dealer: int, rng: random.Random, rules: Rules = CLASICA) -> Deal:
    """Shuffle the table's deck and deal one card at a time from the dealer's left.

    In normal rounds the next card is turned for trump; in the 8-card subida round
    the last card dealt marks trump and stays in its receiver's hand; auctions turn nothing.
    Se dobla shows the deck's last card (la muestra), the last dealt when the round deals them all.
    """
    deck = list(rules.deck(players))
    rng.shuffle(deck)
    order = rules.active_order(dealer, players)
    hands: list[list[Card]] = [[] for _ in range(players)]
    position = 0
    for _ in range(spec.cards):
        for seat in order:
            hands[seat].append(deck[position])
            position += 1
    trump_card: Card | None
    if not spec.turns_a_card:
        trump_card = None
    elif spec.trump_is_last_dealt:
        trump_card = deck[position - 1]
    elif spec.trump_mode is TrumpMode.MUESTRA:
        trump_card = deck[-1]
    else:
        trump_card = deck[position]
    return Deal(tuple(tuple(h) for h in hands), trump_card)


@cache
def _deck_indices(preset: str, players: int) -> frozenset[int]:
    """The table's deck as card indices: small ints hash and compare faster than cards."""
    return frozenset(card.index for card in Rules(preset).deck(players))


def check_deal(
    players: int,
    spec: RoundSpec,
    dealer: int,
    hands: Sequence[Sequence[Card]],
    trump_card: Card | None,
    rules: Rules = CLASICA,
) -> None:
    """Raise IllegalDealError unless these hands and trump card can come from a deal of ``spec``."""
    if len(hands) != players:
        raise IllegalDealError(Rule.HAND_COUNT, {"n": players, "got": len(hands)})
    in_deck = _deck_indices(rules.preset, players)
    active = rules.active_order(dealer, players)
    seen: set[int] = set()  # indices of the cards dealt so far
    for seat, hand in enumerate(hands):
        want = spec.cards if seat in active else 0
        if len(hand) != want:
            raise IllegalDealError(Rule.HAND_SIZE, {"seat": seat, "n": want, "got": len(hand)})
        for card in hand:
            index = card.index
            if index not in in_deck:
                raise IllegalDealError(Rule.NOT_IN_DECK, {"card": str(card), "players": players})
            if index in seen:
                raise IllegalDealError(Rule.DUPLICATE_CARD, {"card": str(card)})
            seen.add(index)
    if not spec.turns_a_card:
        if trump_card is not None:
            code = Rule.AUCTION_TRUMP_CARD if spec.is_auction else Rule.NO_CARD_TURNED
            raise IllegalDealError(code, {"card": str(trump_card)})
        return
    if trump_card is None:
        raise IllegalDealError(Rule.NO_TRUMP_CARD)
    if trump_card.index not in in_deck:
        raise IllegalDealError(Rule.NOT_IN_DECK, {"card": str(trump_card), "players": players})
    if spec.trump_is_last_dealt:
        receiver = active[-1]
        if trump_card not in hands[receiver]:
            raise IllegalDealError(Rule.TRUMP_NOT_LAST_DEALT, {"card": str(trump_card), "seat": receiver})
    elif trump_card.index in seen:
        raise IllegalDealError(Rule.TRUMP_IN_HAND, {"card": str(trump_card)})
