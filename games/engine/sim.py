"""The fast path for simulation: one round as small ints, copied and played out thousands of times.

A card is a code ``suit * 16 + strength`` (suit 0..3 in ``SUITS`` order, strength 1 for the 2 up to
10 for the ace), so two cards of one suit compare as ints and ``code >> 4`` is the suit.  A seat's
hand is four lists of codes, one per suit, each strongest first, so "follow suit" is one index and
"beat the highest card" is a prefix.  Search (``search.py``) plays thousands of rounds to the end
from sampled worlds with these functions; ``GameState`` stays the checked, recorded path.

The French deck (``bazas``) is coded the same way: suit 0..3 in ``FRENCH_SUITS`` order, strength 1
(the 2) to 13 (the ace).  A table plays one deck, so a code is read back through that deck's
``Deck.cards``.  What a void player owes depends on the preset: ``legal`` is Clásica's and bazas'
(any trump, a higher one if possible), ``legal_winning`` that of indias and se-dobla (only a trump
that would win; with none, any card); ``legal_for(rules)`` picks one.

>>> from games.engine.cards import Card
>>> code(Card.parse("1o")), code(Card.parse("2b")), code(Card.parse("AS")), code(Card.parse("2C"))
(10, 49, 13, 49)
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .cards import ALL_CARDS, EVERY_CARD, FRENCH_CARDS, FRENCH_SUITS, SUITS, Card, Suit, deck_for
from .presets import CLASICA, Rules
from .schedule import MAX_CARDS, RoundSpec, TrumpMode, active_order

Hand = list[list[int]]  # four lists of codes, one per suit, strongest first

#: A suit's index in its deck (0..3): the Spanish suits and the French ones.
SUIT_INDEX: dict[Suit, int] = {suit: i for i, suit in enumerate(SUITS)} | {s: i for i, s in enumerate(FRENCH_SUITS)}
CODE: dict[Card, int] = {card: SUIT_INDEX[card.suit] * 16 + card.strength for card in EVERY_CARD}
#: The Spanish cards by code (Clásica, indias, se-dobla); ``FRENCH_CARD`` the French ones.
CARD: dict[int, Card] = {CODE[card]: card for card in ALL_CARDS}
FRENCH_CARD: dict[int, Card] = {CODE[card]: card for card in FRENCH_CARDS}


@dataclass(frozen=True, slots=True)
class Deck:
    """How one deck's cards are coded: the card of each code, the suits by index and the ace's strength."""

    cards: Mapping[int, Card]
    suits: tuple[Suit, ...]
    #: the strength of the deck's top card (10 Spanish, 13 French): the bots value cards from the top
    ace: int


SPANISH_DECK = Deck(CARD, SUITS, 10)
FRENCH_DECK = Deck(FRENCH_CARD, FRENCH_SUITS, 13)


def deck_of(rules: Rules) -> Deck:
    """The coding of the deck ``rules`` play with."""
    return FRENCH_DECK if rules.preset == "bazas" else SPANISH_DECK


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


def legal_winning(hand: Hand, led: int, best: int, trump: int) -> list[int]:
    """``legal`` where a void player owes only a trump that would win (indias, se-dobla): with no trump on
    the table any trump, with one only a higher one, and with none of those any card."""
    if led < 0:
        return hand[0] + hand[1] + hand[2] + hand[3]
    follow = hand[led]
    if follow:
        if best >> 4 == led and follow[0] > best:
            k = 1
            while k < len(follow) and follow[k] > best:
                k += 1
            return follow[:k]
        return follow
    trumps = hand[trump]
    if trumps:
        if best >> 4 != trump:
            return trumps
        if trumps[0] > best:
            k = 1
            while k < len(trumps) and trumps[k] > best:
                k += 1
            return trumps[:k]
    return hand[0] + hand[1] + hand[2] + hand[3]


LegalFn = Callable[[Hand, int, int, int], list[int]]


def legal_for(rules: Rules) -> LegalFn:
    """The fast legal moves under ``rules``: ``legal`` where a void player must trump even to lose."""
    return legal if rules.losing_trump else legal_winning


def random_playout(
    hands: list[Hand],
    order: Sequence[int],
    leader: int,
    trick: Sequence[tuple[int, int]],
    trump: int,
    won: list[int],
    rand: Callable[[], float] = random.random,
    losing_trump: bool = True,
) -> None:
    """Play random legal cards from here to the end of the round; adds each trick to ``won``.

    ``trick``: the (seat, code) pairs already on the table (led by ``leader``); ``hands`` change.
    ``losing_trump`` False: a void player owes only a trump that would win (indias, se-dobla)."""
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
                    elif losing_trump:
                        c = trumps[int(rand() * len(trumps))]
                    else:  # no trump of ours would win: any card
                        cards = h[0] + h[1] + h[2] + h[3]
                        c = cards[int(rand() * len(cards))]
                else:
                    c = trumps[int(rand() * len(trumps))]
                    best_seat, best = seat, c
                h[c >> 4].remove(c)
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


def deal_codes(
    players: int, spec: RoundSpec, dealer: int, rng: random.Random, rules: Rules = CLASICA
) -> tuple[list[Hand], int]:
    """A random deal of ``spec`` under ``rules`` as hands of codes and the trump suit (auctions: a random
    suit; oros rounds: oros; se dobla's muestra: the deck's last card)."""
    deck = [CODE[c] for c in rules.deck(players)]
    rng.shuffle(deck)
    order = rules.active_order(dealer, players)
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
    if spec.trump_mode is TrumpMode.OROS:
        trump = 0
    elif spec.is_auction:
        trump = rng.randrange(4)
    elif spec.trump_is_last_dealt:
        trump = deck[position - 1] >> 4
    elif spec.trump_mode is TrumpMode.MUESTRA:
        trump = deck[-1] >> 4
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
