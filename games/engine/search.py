"""The searching bots (normal and difícil): determinized Monte Carlo over a seat's view.

Each decision draws worlds consistent with everything the seat has seen (``infer.Sampler``), plays
every candidate in each world to the end of the round with a goal-directed playout (each player
takes tricks while short of its bid and ducks once it has it), and keeps the candidate with the best
average.  With few cards left the playout becomes an exact search (max^n: each player maximises its
own points).  Bids are chosen by the expected score of each allowed bid (the later bidders bidding
what their drawn hands are worth); the auction winner's trump by the points it brings its own bid
and takes from the leader's.

Anytime: worlds are drawn until the target time (at least a few), never past the hard deadline;
the best candidate so far is played.  The same worlds serve every candidate, so their differences
are not drowned in the luck of the deal.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence

from .actions import Action, Bid, ChooseTrump, Play
from .bot import AUCTION_TRUMP_SHARE, BID_BIAS, SIDE_VALUE, TRUMP_VALUE
from .cards import SUITS, Card
from .infer import CODE_SUIT, Sampler
from .rules import points
from .schedule import RoundPhase
from .sim import CARD, CODE, Hand, beats, copy_hands, legal
from .state import Phase
from .view import SeatView

# The fácil bot's chance that a card takes a trick, by strength (10 = ace .. 1 = the 2), indexed for codes.
_TRUMP_VALUE = tuple(TRUMP_VALUE.get(strength, 0.0) for strength in range(11))
_SIDE_VALUE = tuple(SIDE_VALUE.get(strength, 0.0) for strength in range(11))

#: Weight of the leading opponent's points against one's own: bids and cards play for one's own score,
#: the auction winner's trump also to break the leader's bid.
LEADER_WEIGHT = 0.0
TRUMP_LEADER_WEIGHT = 0.3
#: Bidding also values hitting the number for itself (points, as if one more 10 for an exact bid):
#: the expected score alone leans to the higher of two close bids, which pays more when made.
EXACT_BONUS = 8.0
#: How far (in tricks) a player's bid strays from what its hand is worth, in the worlds' weights.
BID_SIGMA = 0.7
#: Exact search when every hand holds at most this many cards (by table size).
EXACT_CARDS = {3: 3, 4: 2, 5: 2, 6: 2}


def _weight(c: int, trump: int) -> int:
    return (c & 15) + (20 if c >> 4 == trump else 0)


def hand_estimate(hand: Hand, trump: int, players: int, cards: int) -> float:
    """Expected tricks of a hand of codes (``trump`` -1: unknown), the fácil bot's quick estimate."""
    crowd = 1.0 - 0.06 * (players - 3)
    length_penalty = max(0.4, 1.0 - 0.06 * (cards - 1))
    total = 0.0
    trumps = len(hand[trump]) if trump >= 0 else 0
    for suit in range(4):
        cs = hand[suit]
        if suit == trump:
            for c in cs:
                total += _TRUMP_VALUE[c & 15]
            total += 0.15 * max(0, len(cs) - 2)
            continue
        for pos, c in enumerate(cs):
            value = _SIDE_VALUE[c & 15]
            if pos > 0 and c & 15 < 10:
                value *= 0.8
            if len(cs) >= 5:
                value *= 0.6
            total += value * crowd * length_penalty
        if trump >= 0 and not cs:
            total += 0.25 * min(trumps, 2) * (cards / 8)
    return total


def best_trump(hand: Hand, players: int, cards: int) -> int:
    return max(range(4), key=lambda s: (hand_estimate(hand, s, players, cards), len(hand[s]), -s))


def heuristic_bid(hand: Hand, trump: int, players: int, cards: int, auction: bool, forbidden: int | None) -> int:
    if auction:
        estimate = (
            AUCTION_TRUMP_SHARE * hand_estimate(hand, best_trump(hand, players, cards), players, cards)
            + (1 - AUCTION_TRUMP_SHARE) * hand_estimate(hand, -1, players, cards)
            - BID_BIAS
        )
    else:
        estimate = hand_estimate(hand, trump, players, cards) - BID_BIAS
    if cards == 1:
        c = next(x for s in hand for x in s)
        wins = (c & 15) >= 8 if c >> 4 == trump else ((c & 15) >= 10 and players <= 4)
        estimate = 1.0 if wins else 0.0
    options = [n for n in range(cards + 1) if n != forbidden]
    return min(options, key=lambda n: (abs(n - estimate), n))


# -- the playout policy ---------------------------------------------------------------------


def _lead(h: Hand, need: int, trump: int) -> int:
    if need > 0:
        if h[trump] and need >= len(h[0]) + len(h[1]) + len(h[2]) + len(h[3]):
            return h[trump][0]
        for s in range(4):
            if s != trump and h[s] and h[s][0] & 15 == 10:
                return h[s][0]
        if h[trump]:
            return h[trump][0]
        return max((s[0] for s in h if s), key=lambda c: c & 15)
    low = [s[-1] for i, s in enumerate(h) if s and i != trump]
    if low:
        return min(low, key=lambda c: c & 15)
    return h[trump][-1]


def _follow(choices: list[int], need: int, best: int, trump: int, last: bool) -> int:
    winners = [c for c in choices if (c >> 4 == best >> 4 and c > best) or (c >> 4 == trump and best >> 4 != trump)]
    if need > 0:
        if winners:
            if last:
                return min(winners, key=lambda c: _weight(c, trump))
            return max(winners, key=lambda c: _weight(c, trump))
        return min(choices, key=lambda c: _weight(c, trump))
    if len(winners) < len(choices):
        return max((c for c in choices if c not in winners), key=lambda c: _weight(c, trump))
    if not last:
        return min(winners, key=lambda c: _weight(c, trump))
    return max(winners, key=lambda c: _weight(c, trump))


def playout(
    hands: list[Hand],
    nxt: dict[int, int],
    leader: int,
    trick: Sequence[tuple[int, int]],
    trump: int,
    won: list[int],
    bids: Sequence[int],
    size: int,
) -> None:
    """Every player follows the policy from here to the end of the round; adds the tricks to ``won``."""
    played = len(trick)
    led = best = best_seat = -1
    if played:
        led = trick[0][1] >> 4
        best_seat, best = trick[0]
        for seat, c in trick[1:]:
            if beats(c, best, trump):
                best_seat, best = seat, c
        seat = nxt[trick[-1][0]]
    else:
        seat = leader
    while True:
        h = hands[seat]
        need = bids[seat] - won[seat]
        if not played:
            if not (h[0] or h[1] or h[2] or h[3]):
                return
            c = _lead(h, need, trump)
            h[c >> 4].remove(c)
            led, best, best_seat = c >> 4, c, seat
            played = 1
            seat = nxt[seat]
            continue
        choices = legal(h, led, best, trump)
        c = choices[0] if len(choices) == 1 else _follow(choices, need, best, trump, played == size - 1)
        h[c >> 4].remove(c)
        if (c >> 4 == best >> 4 and c > best) or (c >> 4 == trump and best >> 4 != trump):
            best, best_seat = c, seat
        played += 1
        if played == size:
            won[best_seat] += 1
            seat = best_seat
            played = 0
        else:
            seat = nxt[seat]


def exact(
    hands: list[Hand],
    nxt: dict[int, int],
    seat: int,
    trick: list[tuple[int, int]],
    trump: int,
    won: list[int],
    bids: Sequence[int],
    size: int,
) -> tuple[int, ...]:
    """Max^n to the end of the round: the final tricks of each seat when each plays for its own points."""
    h = hands[seat]
    if not trick:
        if not (h[0] or h[1] or h[2] or h[3]):
            return tuple(won)
        choices = h[0] + h[1] + h[2] + h[3]
    else:
        best = trick[0][1]
        for _s, c in trick[1:]:
            if beats(c, best, trump):
                best = c
        choices = list(legal(h, trick[0][1] >> 4, best, trump))
    best_result: tuple[int, ...] | None = None
    best_value = -(10**9)
    for c in choices:
        h[c >> 4].remove(c)
        trick.append((seat, c))
        if len(trick) == size:
            winner, top = trick[0]
            for s, x in trick[1:]:
                if beats(x, top, trump):
                    winner, top = s, x
            saved = trick[:]
            trick.clear()
            won[winner] += 1
            result = exact(hands, nxt, winner, trick, trump, won, bids, size)
            won[winner] -= 1
            trick.extend(saved)
        else:
            result = exact(hands, nxt, nxt[seat], trick, trump, won, bids, size)
        trick.pop()
        suit = h[c >> 4]
        suit.append(c)
        suit.sort(reverse=True)
        value = points(bids[seat], result[seat]) if bids[seat] >= 0 else 0
        if value > best_value:
            best_value, best_result = value, result
    assert best_result is not None
    return best_result


# -- decisions ------------------------------------------------------------------------------


class Search:
    """One decision's search state: the view, the worlds' sampler and the clock."""

    def __init__(
        self,
        view: SeatView,
        rng: random.Random,
        target: float,
        deadline: float,
        min_worlds: int = 4,
        max_worlds: int = 400,
        *,
        read_bids: bool = True,
        read_play: bool = True,
        exact_cards: int | None = None,
    ) -> None:
        assert view.seat is not None
        self.view = view
        self.me = view.seat
        self.rng = rng
        self.started = time.perf_counter()
        self.target = self.started + target
        self.deadline = deadline
        self.min_worlds = min_worlds
        self.max_worlds = max_worlds
        self.exact_cards = EXACT_CARDS.get(view.players, 2) if exact_cards is None else exact_cards
        self.sampler = Sampler(view, read_play=read_play)
        self.size = len(view.order)
        self.nxt = {view.order[i]: view.order[(i + 1) % self.size] for i in range(self.size)}
        others = [s for s in view.order if s != self.me]
        # the opponent whose points count against ours: the best total among the others
        self.leader = max(others, key=lambda s: (view.totals[s], -s)) if others else None
        self.worlds = 0
        # Who has bid what tells about their hands: a world where a 0-bidder holds three aces is unlikely.
        auction = view.round_phase is RoundPhase.SUBASTA
        bid_trump = -1 if auction or view.trump_suit is None else CODE_SUIT[view.trump_suit.value]
        played_by: dict[int, list[int]] = {s: [] for s in others}
        for p in view.played:
            if p.seat in played_by:
                played_by[p.seat].append(CODE[p.card])
        self.bidders = [(s, b, played_by[s]) for s in others if (b := view.bids[s]) is not None] if read_bids else []
        self.bid_trump = bid_trump
        self.auction = auction

    def sample(self) -> tuple[list[Hand], float]:
        """A world and how likely the bids already made are in it (the fácil estimate, give or take a trick)."""
        world = self.sampler.sample(self.rng)
        self.worlds += 1
        if not self.bidders:
            return world, 1.0
        view = self.view
        misfit = 0.0
        for seat, bid, played in self.bidders:
            hand = [list(x) for x in world[seat]]
            for c in played:
                hand[c >> 4].append(c)
            if view.cards == 1:  # the fácil rule for one card: a high trump or, at four or fewer, a side ace
                x = next(x for suit in hand for x in suit)
                wins = (x & 15) >= 8 if x >> 4 == self.bid_trump else ((x & 15) >= 10 and view.players <= 4)
                est = 1.0 if wins else 0.0
            elif self.auction:
                est = (
                    AUCTION_TRUMP_SHARE
                    * hand_estimate(hand, best_trump(hand, view.players, view.cards), view.players, view.cards)
                    + (1 - AUCTION_TRUMP_SHARE) * hand_estimate(hand, -1, view.players, view.cards)
                    - BID_BIAS
                )
            else:
                est = hand_estimate(hand, self.bid_trump, view.players, view.cards) - BID_BIAS
            misfit += (bid - est) ** 2
        return world, math.exp(-misfit / (2 * BID_SIGMA**2))

    def more(self) -> bool:
        if self.worlds >= self.max_worlds:
            return False
        now = time.perf_counter()
        if now >= self.deadline:
            return False
        return self.worlds < self.min_worlds or now < self.target

    def utility(self, bids: Sequence[int], won: Sequence[int], leader_weight: float = LEADER_WEIGHT) -> float:
        mine = points(bids[self.me], won[self.me])
        if self.leader is None or leader_weight == 0:
            return mine
        return mine - leader_weight * points(bids[self.leader], won[self.leader])

    # -- playing a card ---------------------------------------------------------------------

    def play(self) -> Card:
        view = self.view
        trump = CODE_SUIT[view.trump_suit.value] if view.trump_suit is not None else 0
        candidates = [CODE[a.card] for a in view.legal if isinstance(a, Play)]
        bids = [b if b is not None else -1 for b in view.bids]
        trick = [(p.seat, CODE[p.card]) for p in view.trick]
        cards_left = len(view.hand)
        use_exact = cards_left <= self.exact_cards
        totals = [0.0] * len(candidates)
        while self.more():
            world, weight = self.sample()
            for i, c in enumerate(candidates):
                hands = copy_hands(world)
                won = list(view.tricks)
                hands[self.me][c >> 4].remove(c)
                now = trick + [(self.me, c)]
                if len(now) == self.size:
                    winner, top = now[0]
                    for s, x in now[1:]:
                        if beats(x, top, trump):
                            winner, top = s, x
                    won[winner] += 1
                    now, nxt_seat = [], winner
                else:
                    nxt_seat = self.nxt[self.me]
                if use_exact:
                    result = exact(hands, self.nxt, nxt_seat, now, trump, won, bids, self.size)
                    totals[i] += weight * self.utility(bids, result)
                else:
                    playout(hands, self.nxt, nxt_seat, now, trump, won, bids, self.size)
                    totals[i] += weight * self.utility(bids, won)
        best = max(range(len(candidates)), key=lambda i: (totals[i], -i))
        return CARD[candidates[best]]

    # -- bidding ----------------------------------------------------------------------------

    def bid(self) -> int:
        view = self.view
        auction = view.round_phase is RoundPhase.SUBASTA
        options = [a.amount for a in view.legal if isinstance(a, Bid)]
        cards = view.cards
        players = view.players
        order = view.order
        my_pos = order.index(self.me)
        later = order[my_pos + 1 :]
        made = [view.bids[s] for s in order[:my_pos]]
        fixed_trump = CODE_SUIT[view.trump_suit.value] if view.trump_suit is not None else -1
        totals = [0.0] * len(options)
        while self.more():
            world, weight = self.sample()
            for i, b in enumerate(options):
                bids = [-1] * players
                for s, x in zip(order[:my_pos], made):
                    bids[s] = x if x is not None else 0
                bids[self.me] = b
                so_far = sum(x for x in made if x is not None) + b
                for k, s in enumerate(later):
                    forbidden = None
                    if not auction and k == len(later) - 1:
                        forbidden = cards - so_far
                    x = heuristic_bid(world[s], fixed_trump, players, cards, auction, forbidden)
                    bids[s] = x
                    so_far += x
                trump = fixed_trump
                factor = 1
                if auction:
                    top = 0
                    for k in range(1, len(order)):
                        if bids[order[k]] > bids[order[top]]:
                            top = k
                    winner = order[top]
                    trump = best_trump(world[winner], players, cards)
                    factor = 2 if trump == 0 else 1
                hands = copy_hands(world)
                won = [0] * players
                playout(hands, self.nxt, order[0], [], trump, won, bids, self.size)
                totals[i] += weight * (factor * self.utility(bids, won) + EXACT_BONUS * (won[self.me] == b))
        best = max(range(len(options)), key=lambda i: (totals[i], -i))
        return options[best]

    # -- choosing trump ---------------------------------------------------------------------

    def choose_trump(self) -> int:
        view = self.view
        bids = [b if b is not None else 0 for b in view.bids]
        totals = [0.0] * 4
        while self.more():
            world, weight = self.sample()
            for suit in range(4):
                hands = copy_hands(world)
                won = [0] * view.players
                playout(hands, self.nxt, view.order[0], [], suit, won, bids, self.size)
                totals[suit] += weight * (2 if suit == 0 else 1) * self.utility(bids, won, TRUMP_LEADER_WEIGHT)
        return max(range(4), key=lambda s: (totals[s], -s))


def search_action(
    view: SeatView,
    rng: random.Random,
    target: float,
    deadline: float,
    min_worlds: int = 4,
    max_worlds: int = 400,
    *,
    read_bids: bool = True,
    read_play: bool = True,
    exact_cards: int | None = None,
) -> Action:
    """The searching bot's decision; ``read_bids``: weigh worlds by the bids made (difícil);
    ``read_play``: draw worlds within what the play proves (voids, no higher card);
    ``exact_cards``: search exactly from this many cards a hand (default by table size; 0: never)."""
    search = Search(
        view,
        rng,
        target,
        deadline,
        min_worlds,
        max_worlds,
        read_bids=read_bids,
        read_play=read_play,
        exact_cards=exact_cards,
    )
    if view.phase is Phase.BIDDING:
        return Bid(search.bid())
    if view.phase is Phase.CHOOSING_TRUMP:
        return ChooseTrump(SUITS[search.choose_trump()])
    if view.phase is Phase.PLAYING:
        return Play(search.play())
    raise ValueError(f"nobody decides anything in phase {view.phase}")
