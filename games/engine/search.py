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

Every preset (``view.rules``): the playouts and the exact search follow the preset's play obligations
(``sim.legal_for``), the French deck is valued from its ace as the Spanish one is, and points are the
engine's (``rules.points``, the round's multiplier from ``Rules.multiplier``, ×2 for winning every trick
where *se dobla*).  An indias bid is the best bid over every card the seat's own may be (all the others
are seen, and the play is forced).  In subastados the blind bid weighs choosing the trump oneself
against leaving it to whoever else would win the auction; the winner's trump is the suit whose contract
(everyone bidding again) scores best, multiplier included.

Each decision's options are tried by an ``evaluate_*`` method (``Evaluation``): the bot keeps the best of its
totals; asked to, the method also keeps what every option led to in every world (the tricks taken, the bids),
which ``analysis`` scores in points alone to judge a finished game's decisions with the bot's own eyes.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from .actions import Action, Bid, ChooseTrump, Play
from .bot import AUCTION_TRUMP_SHARE, BID_BIAS, SIDE_VALUE, TRUMP_VALUE
from .cards import Card
from .infer import CODE_SUIT, Sampler
from .rules import auction_winner, points
from .schedule import RoundPhase
from .sim import CODE, Deck, Hand, LegalFn, beats, copy_hands, deck_of, legal, legal_for
from .state import Phase
from .view import SeatView

# The fácil bot's chance that a card takes a trick, by strength (10 = ace .. 1 = the 2), indexed for codes.
_TRUMP_VALUE = tuple(TRUMP_VALUE.get(strength, 0.0) for strength in range(11))
_SIDE_VALUE = tuple(SIDE_VALUE.get(strength, 0.0) for strength in range(11))
# The same by the deck's ace: the French deck (ace 13) valued from its top, its 4, 3 and 2 of trump as
# the fácil bot values them (a quarter of a trick).
_VALUES: dict[int, tuple[tuple[float, ...], tuple[float, ...]]] = {
    10: (_TRUMP_VALUE, _SIDE_VALUE),
    13: (
        tuple(TRUMP_VALUE.get(strength - 3, 0.25 if strength else 0.0) for strength in range(14)),
        tuple(SIDE_VALUE.get(strength - 3, 0.0) for strength in range(14)),
    ),
}

#: Weight of the leading opponent's points against one's own: bids and cards play for one's own score,
#: the auction winner's trump also to break the leader's bid.
LEADER_WEIGHT = 0.0
TRUMP_LEADER_WEIGHT = 0.3
#: Bidding also values hitting the number for itself (points, as if one more 10 for an exact bid):
#: the expected score alone leans to the higher of two close bids, which pays more when made.
EXACT_BONUS = 8.0
#: How far (in tricks) a player's bid strays from what its hand is worth, in the worlds' weights.
BID_SIGMA = 0.7
#: Indias: a player bids 1 when about this share of the cards it cannot see would take the trick (the fácil
#: bot above a half, the searching bots a little below), give or take this much (a logistic's scale).
INDIAS_SHARE = 0.47
INDIAS_SLOPE = 0.07
#: Exact search when every hand holds at most this many cards (by table size; 2 at seven and eight).
EXACT_CARDS = {3: 3, 4: 2, 5: 2, 6: 2}


def _weight(c: int, trump: int) -> int:
    return (c & 15) + (20 if c >> 4 == trump else 0)


def hand_estimate(hand: Hand, trump: int, players: int, cards: int, ace: int = 10) -> float:
    """Expected tricks of a hand of codes (``trump`` -1: unknown), the fácil bot's quick estimate; ``ace``:
    the strength of the deck's top card (``Deck.ace``)."""
    trump_value, side_value = _VALUES[ace]
    crowd = 1.0 - 0.06 * (players - 3)
    length_penalty = max(0.4, 1.0 - 0.06 * (cards - 1))
    total = 0.0
    trumps = len(hand[trump]) if trump >= 0 else 0
    for suit in range(4):
        cs = hand[suit]
        if suit == trump:
            for c in cs:
                total += trump_value[c & 15]
            total += 0.15 * max(0, len(cs) - 2)
            continue
        for pos, c in enumerate(cs):
            value = side_value[c & 15]
            if pos > 0 and c & 15 < ace:
                value *= 0.8
            if len(cs) >= 5:
                value *= 0.6
            total += value * crowd * length_penalty
        if trump >= 0 and not cs:
            total += 0.25 * min(trumps, 2) * (cards / 8)
    return total


def best_trump(hand: Hand, players: int, cards: int, ace: int = 10) -> int:
    return max(range(4), key=lambda s: (hand_estimate(hand, s, players, cards, ace), len(hand[s]), -s))


def one_card_wins(c: int, trump: int, players: int, ace: int = 10) -> bool:
    """The fácil rule for a one-card hand: a high trump or, at four or fewer, a side ace."""
    return (c & 15) >= ace - 2 if c >> 4 == trump else ((c & 15) >= ace and players <= 4)


def heuristic_bid(
    hand: Hand, trump: int, players: int, cards: int, auction: bool, forbidden: int | None, ace: int = 10
) -> int:
    if auction:
        estimate = (
            AUCTION_TRUMP_SHARE * hand_estimate(hand, best_trump(hand, players, cards, ace), players, cards, ace)
            + (1 - AUCTION_TRUMP_SHARE) * hand_estimate(hand, -1, players, cards, ace)
            - BID_BIAS
        )
    else:
        estimate = hand_estimate(hand, trump, players, cards, ace) - BID_BIAS
    if cards == 1:
        c = next(x for s in hand for x in s)
        estimate = 1.0 if one_card_wins(c, trump, players, ace) else 0.0
    options = [n for n in range(cards + 1) if n != forbidden]
    return min(options, key=lambda n: (abs(n - estimate), n))


# -- the playout policy ---------------------------------------------------------------------


def _lead(h: Hand, need: int, trump: int, ace: int = 10) -> int:
    if need > 0:
        if h[trump] and need >= len(h[0]) + len(h[1]) + len(h[2]) + len(h[3]):
            return h[trump][0]
        for s in range(4):
            if s != trump and h[s] and h[s][0] & 15 == ace:
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
    legal: LegalFn = legal,
    ace: int = 10,
) -> None:
    """Every player follows the policy from here to the end of the round; adds the tricks to ``won``.
    ``legal``: the preset's play obligations (``sim.legal_for``); ``ace``: the deck's top strength."""
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
            c = _lead(h, need, trump, ace)
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
    legal: LegalFn = legal,
    doubled_at: int = -1,
) -> tuple[int, ...]:
    """Max^n to the end of the round: the final tricks of each seat when each plays for its own points.
    ``legal``: the preset's play obligations; ``doubled_at``: the tricks that double a player's points
    (se dobla: every trick of the round; -1: none)."""
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
            result = exact(hands, nxt, winner, trick, trump, won, bids, size, legal, doubled_at)
            won[winner] -= 1
            trick.extend(saved)
        else:
            result = exact(hands, nxt, nxt[seat], trick, trump, won, bids, size, legal, doubled_at)
        trick.pop()
        suit = h[c >> 4]
        suit.append(c)
        suit.sort(reverse=True)
        value = points(bids[seat], result[seat]) if bids[seat] >= 0 else 0
        if result[seat] == doubled_at:
            value *= 2
        if value > best_value:
            best_value, best_result = value, result
    assert best_result is not None
    return best_result


def _takes(trick: Sequence[int], trump: int) -> int:
    """The place in ``trick`` (codes in the order played) of the card that takes it."""
    best, top = 0, trick[0]
    for i in range(1, len(trick)):
        if beats(trick[i], top, trump):
            best, top = i, trick[i]
    return best


def _share_that_wins(trick: Sequence[int], place: int, cards: Sequence[int], trump: int) -> float:
    """Indias: the share of ``cards`` that would take ``trick`` played at ``place`` (the rest as they are)."""
    before = list(trick[:place])
    after = trick[place + 1 :]
    top = before[_takes(before, trump)] if before else -1
    wins = 0
    for y in cards:
        if top >= 0 and not beats(y, top, trump):
            continue
        for c in after:
            if beats(c, y, trump):
                break
        else:
            wins += 1
    return wins / len(cards) if cards else 0.0


# -- decisions ------------------------------------------------------------------------------

OptionT = TypeVar("OptionT")  # an option: a card's code, a bid, a suit's code
OutcomeT = TypeVar("OutcomeT")  # what an option led to in one world


@dataclass(slots=True)
class Evaluation(Generic[OptionT, OutcomeT]):
    """One decision's options tried over the worlds drawn: ``totals``, the bot's weighted sums by option (the
    bot picks the best), and, when kept (``keep``), the raw outcome of every option in every world, with the
    world's weight, for whoever scores them otherwise (``analysis``).  ``bids``: the bids the outcomes were
    played with, when every world and option shares them (a card played, a trump chosen)."""

    options: list[OptionT]
    totals: list[float]
    bids: list[int] | None = None
    weights: list[float] = field(default_factory=list)
    outcomes: list[list[OutcomeT]] = field(default_factory=list)

    def keep(self, weight: float, row: list[OutcomeT]) -> None:
        self.weights.append(weight)
        self.outcomes.append(row)


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
        rules = view.rules
        self.rules = rules
        self.deck: Deck = deck_of(rules)
        self.ace = self.deck.ace
        self.legal: LegalFn = legal_for(rules)
        # se dobla: winning every trick of a round of 4 or more cards doubles the points (made or missed)
        self.doubled_at = view.cards if rules.doubles(rules.spec(view.players, view.number)) else -1
        self.sampler = Sampler(view, read_play=read_play)
        self.size = len(view.order)
        self.nxt = {view.order[i]: view.order[(i + 1) % self.size] for i in range(self.size)}
        others = [s for s in view.order if s != self.me]
        # the opponent whose points count against ours: the best total among the others
        self.leader = max(others, key=lambda s: (view.totals[s], -s)) if others else None
        self.worlds = 0
        # Who has bid what tells about their hands: a world where a 0-bidder holds three aces is unlikely.
        # (Clásica's subasta: bids made before trump is chosen; subastados' contract is bid knowing it.)
        auction = view.round_phase is RoundPhase.SUBASTA and view.blind_bids is None
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
        ace = self.ace
        misfit = 0.0
        for seat, bid, played in self.bidders:
            hand = [list(x) for x in world[seat]]
            for c in played:
                hand[c >> 4].append(c)
            if view.cards == 1:  # the fácil rule for one card: a high trump or, at four or fewer, a side ace
                x = next(x for suit in hand for x in suit)
                est = 1.0 if one_card_wins(x, self.bid_trump, view.players, ace) else 0.0
            elif self.auction:
                est = (
                    AUCTION_TRUMP_SHARE
                    * hand_estimate(
                        hand, best_trump(hand, view.players, view.cards, ace), view.players, view.cards, ace
                    )
                    + (1 - AUCTION_TRUMP_SHARE) * hand_estimate(hand, -1, view.players, view.cards, ace)
                    - BID_BIAS
                )
            else:
                est = hand_estimate(hand, self.bid_trump, view.players, view.cards, ace) - BID_BIAS
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
        if won[self.me] == self.doubled_at:
            mine *= 2
        if self.leader is None or leader_weight == 0:
            return mine
        theirs = points(bids[self.leader], won[self.leader])
        if won[self.leader] == self.doubled_at:
            theirs *= 2
        return mine - leader_weight * theirs

    def factor(self, trump: int) -> int:
        """The round's multiplier with ``trump`` chosen (no card turned), as the engine scores it."""
        return self.rules.multiplier(self.view.players, None, self.deck.suits[trump])

    # -- playing a card ---------------------------------------------------------------------

    def play(self) -> Card:
        found = self.evaluate_play()
        best = max(range(len(found.options)), key=lambda i: (found.totals[i], -i))
        return self.deck.cards[found.options[best]]

    def evaluate_play(self, keep: bool = False) -> Evaluation[int, Sequence[int]]:
        """Every legal card (codes) played in every world drawn: the bot's totals (its utility, weighted) and,
        with ``keep``, each world's weight and the tricks every seat ends the round with after each card."""
        view = self.view
        trump = CODE_SUIT[view.trump_suit.value] if view.trump_suit is not None else 0
        candidates = [CODE[a.card] for a in view.legal if isinstance(a, Play)]
        bids = [b if b is not None else -1 for b in view.bids]
        trick = [(p.seat, CODE[p.card]) for p in view.trick]
        cards_left = len(view.hand)
        use_exact = cards_left <= self.exact_cards
        legal_fn, ace, doubled_at = self.legal, self.ace, self.doubled_at
        totals = [0.0] * len(candidates)
        found: Evaluation[int, Sequence[int]] = Evaluation(candidates, totals, bids)
        while self.more():
            world, weight = self.sample()
            row: list[Sequence[int]] | None = [] if keep else None
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
                    result = exact(hands, self.nxt, nxt_seat, now, trump, won, bids, self.size, legal_fn, doubled_at)
                    totals[i] += weight * self.utility(bids, result)
                    if row is not None:
                        row.append(result)
                else:
                    playout(hands, self.nxt, nxt_seat, now, trump, won, bids, self.size, legal_fn, ace)
                    totals[i] += weight * self.utility(bids, won)
                    if row is not None:
                        row.append(won)
            if row is not None:
                found.keep(weight, row)
        return found

    # -- bidding ----------------------------------------------------------------------------

    def bid(self) -> int:
        view = self.view
        if view.blind_bids is not None and view.trump_suit is None:
            return self.blind_bid()
        found = self.evaluate_bid()
        best = max(range(len(found.options)), key=lambda i: (found.totals[i], -i))
        return found.options[best]

    def evaluate_bid(self, keep: bool = False) -> Evaluation[int, tuple[list[int], list[int], int]]:
        """Every legal bid (a normal round's, a subasta's or subastados' contract) in every world drawn, the
        later bidders bidding what their drawn hands are worth: the bot's totals (its points, the auction's
        multiplier and ``EXACT_BONUS`` included, weighted) and, with ``keep``, each world's weight and, for
        each bid, everyone's bids, the tricks everyone takes and the trump (a subasta's: its winner's)."""
        view = self.view
        auction = view.round_phase is RoundPhase.SUBASTA and view.blind_bids is None
        options = [a.amount for a in view.legal if isinstance(a, Bid)]
        cards = view.cards
        players = view.players
        order = view.order
        my_pos = order.index(self.me)
        later = order[my_pos + 1 :]
        made = [view.bids[s] for s in order[:my_pos]]
        fixed_trump = CODE_SUIT[view.trump_suit.value] if view.trump_suit is not None else -1
        legal_fn, ace = self.legal, self.ace
        totals = [0.0] * len(options)
        found: Evaluation[int, tuple[list[int], list[int], int]] = Evaluation(options, totals)
        while self.more():
            world, weight = self.sample()
            row: list[tuple[list[int], list[int], int]] | None = [] if keep else None
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
                    x = heuristic_bid(world[s], fixed_trump, players, cards, auction, forbidden, ace)
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
                    trump = best_trump(world[winner], players, cards, ace)
                    factor = self.factor(trump)
                hands = copy_hands(world)
                won = [0] * players
                playout(hands, self.nxt, order[0], [], trump, won, bids, self.size, legal_fn, ace)
                totals[i] += weight * (factor * self.utility(bids, won) + EXACT_BONUS * (won[self.me] == b))
                if row is not None:
                    row.append((bids, won, trump))
            if row is not None:
                found.keep(weight, row)
        return found

    def _contract_bids(self, world: list[Hand], trump: int, mine: float | None = None) -> list[int]:
        """Subastados: the contract everyone bids in ``world`` knowing ``trump``, in order, the last bidder
        restricted: what each hand is worth (the fácil estimate), this seat ``mine`` tricks if given."""
        view = self.view
        players, cards, ace = view.players, view.cards, self.ace
        bids = [-1] * players
        so_far = 0
        last = len(view.order) - 1
        for k, s in enumerate(view.order):
            forbidden = cards - so_far if k == last else None
            if s == self.me and mine is not None:
                x = min((n for n in range(cards + 1) if n != forbidden), key=lambda n: (abs(n - mine), n))
            else:
                x = heuristic_bid(world[s], trump, players, cards, False, forbidden, ace)
            bids[s] = x
            so_far += x
        return bids

    def contracts(self, leader_weight: float = LEADER_WEIGHT) -> list[tuple[list[Hand], float, list[float]]]:
        """Subastados, before the trump is chosen: each world drawn, its weight and the points (the multiplier
        included) this seat scores in the contract with each suit as trump.

        In two passes over the same worlds: the first (half the time) finds how many tricks this seat takes
        with each trump, everyone bidding what their hands are worth; in the second this seat bids that
        many (as its own search will, knowing the trump) and the others as before."""
        view = self.view
        ace, legal_fn = self.ace, self.legal
        half = self.started + (self.target - self.started) / 2
        drawn: list[tuple[list[Hand], float]] = []
        tricks = [0.0] * 4
        weights = 0.0
        while self.more() and (len(drawn) < self.min_worlds or time.perf_counter() < half):
            world, weight = self.sample()
            for suit in range(4):
                won = [0] * view.players
                bids = self._contract_bids(world, suit)
                playout(copy_hands(world), self.nxt, view.order[0], [], suit, won, bids, self.size, legal_fn, ace)
                tricks[suit] += weight * won[self.me]
            drawn.append((world, weight))
            weights += weight
        mine = [t / weights if weights > 0 else None for t in tricks]
        values: list[tuple[list[Hand], float, list[float]]] = []
        for world, weight in drawn:
            if values and time.perf_counter() >= self.deadline:
                break
            row: list[float] = []
            for suit in range(4):
                won = [0] * view.players
                bids = self._contract_bids(world, suit, mine[suit])
                playout(copy_hands(world), self.nxt, view.order[0], [], suit, won, bids, self.size, legal_fn, ace)
                row.append(self.factor(suit) * self.utility(bids, won, leader_weight))
            values.append((world, weight, row))
        return values

    def blind_bid(self) -> int:
        """Subastados' blind bid: it scores nothing and only says who chooses trump, so the choice is between
        bidding the most (choosing the trump oneself, unless an earlier seat bid as much) and the least
        (leaving it to the others' auction), by the contract each leads to."""
        view = self.view
        options = [a.amount for a in view.legal if isinstance(a, Bid)]
        high, low = max(options), min(options)
        order = view.order
        my_pos = order.index(self.me)
        blind = view.blind_bids or ()
        earlier = [blind[s] or 0 for s in order[:my_pos]]
        if any(b >= high for b in earlier):
            return low  # an earlier seat already holds the auction
        values = self.contracts()
        if not values:
            return high
        choose = [sum(weight * row[suit] for _world, weight, row in values) for suit in range(4)]
        mine = max(range(4), key=lambda s: (choose[s], -s))  # the trump this seat would choose
        leave = 0.0
        for world, weight, row in values:
            leave += weight * row[self.blind_trump(world, earlier, low, mine)]
        return high if choose[mine] >= leave else low

    def blind_trump(self, world: list[Hand], earlier: Sequence[int], bid: int, mine: int) -> int:
        """Subastados: the trump the contract is played with in ``world`` when this seat bids ``bid`` blind
        after the ``earlier`` blind bids (in order), the later seats bidding what their hands are worth:
        ``mine`` if this seat wins the auction, else the suit the winner's hand is best in."""
        view = self.view
        players, cards, ace, order = view.players, view.cards, self.ace, view.order
        later = [heuristic_bid(world[s], -1, players, cards, True, None, ace) for s in order[len(earlier) + 1 :]]
        winner = auction_winner(order, [*earlier, bid, *later])
        return mine if winner == self.me else best_trump(world[winner], players, cards, ace)

    def indias_bid(self) -> int:
        """An indias bid: every other card is seen and the play is forced, so the seat's own card decides
        the trick.  Each card it may be (the deck less what is seen) is weighed, and the bid with the best
        expected points (and exact bids) over them is made.  Nothing here looks at the seat's own card.

        The earlier bidders saw it, though: reading the bids (difícil), a card is weighed by how likely it
        makes each earlier bid, its bidder bidding 1 when most of the cards it cannot see would take the
        trick (``INDIAS_SHARE``, give or take ``INDIAS_SLOPE``)."""
        found = self.evaluate_indias()
        return found.options[max(range(len(found.options)), key=lambda i: (found.totals[i], -i))]

    def evaluate_indias(self, keep: bool = False) -> Evaluation[int, int]:
        """``indias_bid``'s look at every card the seat's own may be: the bot's totals for each legal bid and,
        with ``keep``, each card's weight and the tricks (0 or 1) the seat takes with it, once per world
        (the same for every bid)."""
        view = self.view
        assert view.trump_suit is not None
        trump = CODE_SUIT[view.trump_suit.value]
        options = [a.amount for a in view.legal if isinstance(a, Bid)]
        seen = {p.seat: CODE[p.card] for p in view.seen}
        order = view.order
        position = order.index(self.me)
        # the cards this seat's own may be: the sampler's unseen ones (the deck less every card in view)
        possible = list(self.sampler.unseen)
        earlier = [(k, b) for k, s in enumerate(order[:position]) if (b := view.bids[s]) is not None]
        if not self.bidders:
            earlier = []
        totals = [0.0] * len(options)
        found: Evaluation[int, int] = Evaluation(options, totals)
        for x in possible:
            table = [x if s == self.me else seen[s] for s in order]
            weight = 1.0
            for k, b in earlier:
                # the bidder at place k sees every card but its own, which may be any of these
                theirs = [y for y in possible if y != x]
                theirs.append(table[k])
                share = _share_that_wins(table, k, theirs, trump)
                likely = 1.0 / (1.0 + math.exp(-(share - INDIAS_SHARE) / INDIAS_SLOPE))
                weight *= likely if b >= 1 else 1.0 - likely
            won = 1 if _takes(table, trump) == position else 0
            for i, b in enumerate(options):
                totals[i] += weight * (points(b, won) + EXACT_BONUS * (won == b))
            if keep:
                found.keep(weight, [won] * len(options))
        return found

    # -- choosing trump ---------------------------------------------------------------------

    def choose_trump(self) -> int:
        view = self.view
        if view.blind_bids is not None:  # subastados: the contract is bid after the choice
            totals = [0.0] * 4
            for _world, weight, row in self.contracts(TRUMP_LEADER_WEIGHT):
                for suit in range(4):
                    totals[suit] += weight * row[suit]
            return max(range(4), key=lambda s: (totals[s], -s))
        found = self.evaluate_trump()
        return max(range(4), key=lambda s: (found.totals[s], -s))

    def evaluate_trump(self, keep: bool = False) -> Evaluation[int, list[int]]:
        """A subasta's winner (Clásica's auction: the bids made) trying every suit (codes 0..3) in every world
        drawn: the bot's totals (its points, the multiplier and ``TRUMP_LEADER_WEIGHT`` of the leader's
        included, weighted) and, with ``keep``, each world's weight and the tricks everyone takes with each
        trump.  (Subastados' choice is ``contracts``': everyone bids again.)"""
        view = self.view
        totals = [0.0] * 4
        bids = [b if b is not None else 0 for b in view.bids]
        found: Evaluation[int, list[int]] = Evaluation([0, 1, 2, 3], totals, bids)
        legal_fn, ace = self.legal, self.ace
        while self.more():
            world, weight = self.sample()
            row: list[list[int]] | None = [] if keep else None
            for suit in range(4):
                hands = copy_hands(world)
                won = [0] * view.players
                playout(hands, self.nxt, view.order[0], [], suit, won, bids, self.size, legal_fn, ace)
                totals[suit] += weight * self.factor(suit) * self.utility(bids, won, TRUMP_LEADER_WEIGHT)
                if row is not None:
                    row.append(won)
            if row is not None:
                found.keep(weight, row)
        return found


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
        return Bid(search.indias_bid() if view.hidden else search.bid())
    if view.phase is Phase.CHOOSING_TRUMP:
        return ChooseTrump(search.deck.suits[search.choose_trump()])
    if view.phase is Phase.PLAYING:
        if view.plays_hidden:
            raise ValueError("an indias card is played without a choice, by whoever holds the game")
        return Play(search.play())
    raise ValueError(f"nobody decides anything in phase {view.phase}")
