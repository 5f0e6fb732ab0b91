"""The fast path for simulation: one round as small ints, copied and played out thousands of times.

A card is a code ``suit * 16 + strength`` (suit 0..3 in ``SUITS`` order, strength 1 for the 2 up to
10 for the ace), so two cards of one suit compare as ints and ``code >> 4`` is the suit.  A seat's
hand is four lists of codes, one per suit, each strongest first, so "follow suit" is one index and
"beat the highest card" is a prefix.  Search (``search.py``) plays thousands of rounds to the end
from sampled worlds with these functions; ``GameState`` stays the checked, recorded path.

>>> from games.engine.cards import Card
>>> code(Card.parse("1o")), code(Card.parse("2b"))
(10, 49)
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

from .cards import ALL_CARDS, SUITS, Card, Suit, deck_for
from .schedule import MAX_CARDS, RoundSpec, active_order

Hand = list[list[int]]  # four lists of codes, one per suit, strongest first

SUIT_INDEX: dict[Suit, int] = {suit: i for i, suit in enumerate(SUITS)}
CODE: dict[Card, int] = {card: SUIT_INDEX[card.suit] * 16 + card.strength for card in ALL_CARDS}
CARD: dict[int, Card] = {value: card for card, value in CODE.items()}


def code(card: Card) -> int:
    return CODE[card]


def to_hand(cards: Sequence[Card]) -> Hand:
    hand: Hand = [[], [], [], []]
    for card in cards:
        c = CODE[card]
        hand[c >> 4].append(c)
    for suit in hand:
        suit.sort(reverse=True)
    return hand


def copy_hands(hands: Sequence[Hand]) -> list[Hand]:
    return [[s[:] for s in h] for h in hands]


def beats(card: int, best: int, trump: int) -> bool:
    """True when ``card`` played now takes the trick from ``best`` (the card winning it so far)."""
    suit = card >> 4
    if suit == best >> 4:
        return card > best
    return suit == trump


def legal(hand: Hand, led: int, best: int, trump: int) -> list[int]:
    """The codes ``hand`` may play on a trick led in suit ``led`` and won so far by ``best``
    (``led`` -1: leading, anything).  The list may be the hand's own: copy before changing it."""
    if led < 0:
        return hand[0] + hand[1] + hand[2] + hand[3]
    follow = hand[led]
    if follow:
        if best >> 4 == led and follow[0] > best:  # nobody has trumped and we can beat it: montar
            k = 1
            while k < len(follow) and follow[k] > best:
                k += 1
            return follow[:k]
        return follow
    trumps = hand[trump]
    if trumps:
        if best >> 4 == trump and trumps[0] > best:  # contrafallar when we can
            k = 1
            while k < len(trumps) and trumps[k] > best:
                k += 1
            return trumps[:k]
        return trumps
    return hand[0] + hand[1] + hand[2] + hand[3]


def random_playout(
    hands: list[Hand],
    order: Sequence[int],
    leader: int,
    trick: Sequence[tuple[int, int]],
    trump: int,
    won: list[int],
    rand: Callable[[], float] = random.random,
) -> None:
    """Play random legal cards from here to the end of the round; adds each trick to ``won``.

    ``trick``: the (seat, code) pairs already on the table (led by ``leader``); ``hands`` change."""
    size = len(order)
    nxt = {order[i]: order[(i + 1) % size] for i in range(size)}
    played = len(trick)
    if played:
        led = trick[0][1] >> 4
        best_seat, best = trick[0]
        for seat, c in trick[1:]:
            if (c >> 4 == best >> 4 and c > best) or (c >> 4 == trump and best >> 4 != trump):
                best_seat, best = seat, c
        seat = nxt[trick[-1][0]]
    else:
        seat = leader
    while True:
        if not played:
            h = hands[seat]
            cards = h[0] + h[1] + h[2] + h[3]
            if not cards:
                return
            c = cards[int(rand() * len(cards))]
            h[c >> 4].remove(c)
            led = c >> 4
            best_seat, best = seat, c
            played = 1
            seat = nxt[seat]
            continue
        h = hands[seat]
        follow = h[led]
        if follow:
            if best >> 4 == led and follow[0] > best:
                k = 1
                while k < len(follow) and follow[k] > best:
                    k += 1
                c = follow[int(rand() * k)]
                best_seat, best = seat, c
            else:
                c = follow[int(rand() * len(follow))]
            follow.remove(c)
        else:
            trumps = h[trump]
            if trumps:
                if best >> 4 == trump:
                    if trumps[0] > best:
                        k = 1
                        while k < len(trumps) and trumps[k] > best:
                            k += 1
                        c = trumps[int(rand() * k)]
                        best_seat, best = seat, c
                    else:
                        c = trumps[int(rand() * len(trumps))]
                else:
                    c = trumps[int(rand() * len(trumps))]
                    best_seat, best = seat, c
                trumps.remove(c)
            else:
                cards = h[0] + h[1] + h[2] + h[3]
                c = cards[int(rand() * len(cards))]
                h[c >> 4].remove(c)
        played += 1
        if played == size:
            won[best_seat] += 1
            seat = best_seat
            played = 0
        else:
            seat = nxt[seat]


def deal_codes(players: int, spec: RoundSpec, dealer: int, rng: random.Random) -> tuple[list[Hand], int]:
    """A random deal of ``spec`` as hands of codes and the trump suit (auctions: a random suit)."""
    deck = [CODE[c] for c in deck_for(players)]
    rng.shuffle(deck)
    order = active_order(dealer, players)
    hands: list[Hand] = [[[], [], [], []] for _ in range(players)]
    position = 0
    for _ in range(spec.cards):
        for seat in order:
            c = deck[position]
            hands[seat][c >> 4].append(c)
            position += 1
    for h in hands:
        for s in h:
            s.sort(reverse=True)
    if spec.is_auction:
        trump = rng.randrange(4)
    elif spec.trump_is_last_dealt:
        trump = deck[position - 1] >> 4
    else:
        trump = deck[position] >> 4
    return hands, trump


def cmd_rollouts(players: int, cards: int, seconds: float, seed: int) -> int:
    """Random hands played to the end of the round per second: the fast path, and for comparison the
    checked engine (``GameState.copy`` and ``legal_cards`` / ``apply_unchecked``) on the same deals."""
    from .actions import Play
    from .schedule import RoundPhase
    from .state import GameState, Phase

    if not 1 <= cards <= MAX_CARDS or players * cards + 1 > len(deck_for(players)) + (cards == MAX_CARDS):
        print(f"rollouts: {cards} cards at {players} players is not a round")
        return 2
    rng = random.Random(seed)
    spec = RoundSpec(cards, RoundPhase.SUBIDA, cards)
    deals = [deal_codes(players, spec, rng.randrange(players), rng) for _ in range(256)]
    order_of = [active_order(d, players) for d in range(players)]

    def fast(budget: float) -> tuple[int, float]:
        done = 0
        rand = random.Random(seed).random
        started = time.perf_counter()
        while True:
            for i, (hands, trump) in enumerate(deals):
                won = [0] * players
                random_playout(copy_hands(hands), order_of[i % players], order_of[i % players][0], (), trump, won, rand)
                done += 1
            elapsed = time.perf_counter() - started
            if elapsed >= budget:
                return done, elapsed

    def engine(budget: float) -> tuple[int, float]:
        # the same kind of work on GameState: a dealt round, copied, random legal cards to the end
        games = []
        for i in range(32):
            game = GameState.new(players, seed=seed + i)
            while game.number < cards:
                while game.phase is not Phase.ROUND_OVER:
                    game.apply_unchecked(game.legal_actions()[0])
                game.deal()
            while game.phase is Phase.BIDDING:
                game.apply_unchecked(game.legal_actions()[0])
            games.append(game)
        done = 0
        choose = random.Random(seed).choice
        started = time.perf_counter()
        while True:
            for game in games:
                g = game.copy()
                while g.phase is Phase.PLAYING:
                    g.apply_unchecked(Play(choose(g.legal_cards())))
                done += 1
            elapsed = time.perf_counter() - started
            if elapsed >= budget:
                return done, elapsed

    fast(0.2)
    n_fast, t_fast = fast(seconds)
    n_engine, t_engine = engine(seconds / 2)
    rate_fast, rate_engine = n_fast / t_fast, n_engine / t_engine
    print(f"rollouts: random {players}-player {cards}-card hands, copied and played to the end of the round, one core")
    print(f"rollouts: fast path (sim.py, int codes): {rate_fast:,.0f} hands/s ({n_fast} in {t_fast:.2f} s)")
    print(f"rollouts: GameState.copy + legal_cards:  {rate_engine:,.0f} hands/s ({n_engine} in {t_engine:.2f} s)")
    print(f"rollouts: fast path / GameState: {rate_fast / rate_engine:.2f}x")
    return 0
