"""What a seat can infer about the hidden hands, and worlds drawn consistently with it.

From a ``SeatView`` alone: the cards still unseen (not in this hand, not played this round, not the
turned trump card), how many each other seat holds, and the limits the play so far proves:

* a player who did not follow suit is void in it (``asistir``);
* void and did not trump means no trumps either (``fallar``);
* following below the highest card when nobody had trumped means no higher card of that suit
  (``montar``), and trumping below a trump already on the table means no higher trump
  (``contrafallar``);
* in a round that deals the whole deck (Clásica's 8-card subida round) the trump card is the last card
  dealt, in its receiver's hand until played.

Under every preset (``view.rules``): the unseen cards are those of the preset's deck (``Rules.deck``);
where a void player owes only a trump that would win (indias, se-dobla), a void player who did not trump
holds no trump higher than the trick's (none at all when nobody had trumped); in an indias round the
other seats' cards are seen and the seat's own is the one drawn.

``Sampler.sample`` deals the unseen cards to the other seats (and to the undealt stock) at random
within those limits: a *world*, one guess at the whole table the seat could be looking at.
"""

from __future__ import annotations

import random

from .sim import CODE, Hand, to_hand
from .view import SeatView

NO_LIMIT = 64  # above every code


class Sampler:
    """Worlds consistent with ``view`` (hands of codes for every seat; the viewer's own is its hand)."""

    def __init__(self, view: SeatView, *, read_play: bool = True) -> None:
        """``read_play=False``: only the seen cards are known; voids and limits are not read (normal)."""
        assert view.seat is not None
        self.view = view
        self.me = view.seat
        players = view.players
        self.trump = -1 if view.trump_suit is None else CODE_SUIT[view.trump_suit.value]
        self.limit: list[list[int]] = [[NO_LIMIT] * 4 for _ in range(players)]
        played_codes = {CODE[p.card] for p in view.played}
        mine = [CODE[c] for c in view.hand]
        self.my_hand = to_hand(view.hand)
        self.forced: list[list[int]] = [[] for _ in range(players)]
        rules = view.rules
        unseen = {CODE[c] for c in rules.deck(players)} - played_codes - set(mine)
        spec_last_dealt = rules.spec(players, view.number).trump_is_last_dealt
        if view.trump_card is not None:
            t = CODE[view.trump_card]
            if spec_last_dealt:
                receiver = view.order[-1]
                if receiver != self.me and t in unseen:
                    self.forced[receiver].append(t)
                    unseen.discard(t)
            else:
                unseen.discard(t)  # the turned card belongs to nobody
        for p in view.seen:  # indias: the other seats' cards are known
            c = CODE[p.card]
            self.forced[p.seat].append(c)
            unseen.discard(c)
        self.losing_trump = rules.losing_trump
        if read_play:
            self._read_play()
        self.others = [s for s in view.order if s != self.me]
        self.need = {s: view.hand_sizes[s] - len(self.forced[s]) for s in self.others}
        if view.hidden:  # indias: the seat's own card is the one not known
            self.others.append(self.me)
            self.need[self.me] = view.hidden - len(self.forced[self.me])
        self.unseen = sorted(unseen)
        self.stock = len(self.unseen) - sum(self.need.values())
        if self.stock < 0:
            raise ValueError("the view holds fewer unseen cards than the other hands")

        # the most constrained cards first
        def eligible(c: int) -> int:
            return sum(1 for s in self.others if c < self.limit[s][c >> 4]) + (self.stock > 0)

        self.unseen.sort(key=eligible)

    def _read_play(self) -> None:
        view = self.view
        trump = self.trump
        size = len(view.order)
        plays = view.played
        for start in range(0, len(plays), size):
            trick = plays[start : start + size]
            led = CODE[trick[0].card] >> 4
            best = CODE[trick[0].card]
            for p in trick[1:]:
                c = CODE[p.card]
                limit = self.limit[p.seat]
                suit = c >> 4
                if suit != led:
                    limit[led] = 0  # did not follow: void
                    if suit != trump and trump >= 0:
                        if self.losing_trump or best >> 4 != trump:
                            limit[trump] = 0  # void and did not trump: no trumps (none that would win)
                        else:
                            limit[trump] = min(limit[trump], best)  # no trump that would have won
                    elif suit == trump and best >> 4 == trump and c < best:
                        limit[trump] = min(limit[trump], best)  # did not overtrump: nothing higher
                elif best >> 4 == led and c < best:
                    limit[led] = min(limit[led], best)  # did not montar: nothing higher in the suit
                if (suit == best >> 4 and c > best) or (suit == trump and best >> 4 != trump):
                    best = c

    def sample(self, rng: random.Random, tries: int = 30) -> list[Hand]:
        """One world: every seat's hand as codes (the viewer's own, the others' drawn)."""
        for attempt in range(tries + 1):
            relaxed = attempt == tries  # contradictory limits (cannot happen in a legal game): ignore them
            hands = self._try(rng, relaxed)
            if hands is not None:
                return hands
        raise ValueError("no world fits this view")

    def _try(self, rng: random.Random, relaxed: bool) -> list[Hand] | None:
        view = self.view
        left = dict(self.need)
        stock = self.stock
        held: list[list[int]] = [list(f) for f in self.forced]
        others = self.others
        limit = self.limit
        rand = rng.random
        for c in self.unseen:
            suit = c >> 4
            total = stock
            for s in others:
                if left[s] and (relaxed or c < limit[s][suit]):
                    total += left[s]
            if total == 0:
                return None
            pick = rand() * total
            if pick < stock:
                stock -= 1
                continue
            pick -= stock
            for s in others:
                if left[s] and (relaxed or c < limit[s][suit]):
                    if pick < left[s]:
                        held[s].append(c)
                        left[s] -= 1
                        break
                    pick -= left[s]
            else:  # rounding at the very end
                return None
        world: list[Hand] = []
        for seat in range(view.players):
            if seat == self.me and not view.hidden:
                world.append([list(cards) for cards in self.my_hand])
            else:
                hand: Hand = [[], [], [], []]
                for c in held[seat]:
                    hand[c >> 4].append(c)
                for cards in hand:
                    cards.sort(reverse=True)
                world.append(hand)
        return world


#: A suit letter's index in its deck (``sim.SUIT_INDEX`` by letter): Spanish, then French.
CODE_SUIT = {"o": 0, "c": 1, "e": 2, "b": 3, "S": 0, "H": 1, "D": 2, "C": 3}
