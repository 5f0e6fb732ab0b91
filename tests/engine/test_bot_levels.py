"""The bot levels: the classic blunders, bots that see only their seat, budgets and search parts."""

from __future__ import annotations

import random
import time

import pytest

from games.engine import Bid, Card, ChooseTrump, GameState, Phase, Play, default_action, seat_view
from games.engine.infer import Sampler
from games.engine.levels import BUDGETS, DIFICIL, FACIL, LEVELS, NORMAL, bot_action, decide, parse_level
from games.engine.schedule import active_order, dealer_of
from games.engine.search import exact
from games.engine.sim import CARD, CODE, SUIT_INDEX, copy_hands, legal, random_playout, to_hand

WORLDS = 40  # a fixed number of worlds: the same decision on any machine


def c(text: str) -> Card:
    return Card.parse(text)


def at_round(
    players: int, number: int, hands_in_order: list[list[str]], trump_card: str | None, first_dealer: int = 0
) -> GameState:
    """A real game at round ``number``, dealt ``hands_in_order`` (the first to bid first)."""
    game = GameState(players, first_dealer, seed=5)
    while game.number < number - 1:
        game.deal()
        while game.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
            game.apply(default_action(game))
    order = active_order(dealer_of(first_dealer, number, players), players)
    hands: list[list[Card]] = [[] for _ in range(players)]
    for seat, hand in zip(order, hands_in_order):
        hands[seat] = [c(x) for x in hand]
    game.deal(hands=hands, trump_card=c(trump_card) if trump_card else None)
    return game


def decision(game: GameState, level: str, seed: int = 1) -> object:
    return bot_action(game, level, rng=random.Random(seed), worlds=WORLDS)


# -- the classic blunders ----------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_holding_the_ace_of_trump_it_does_not_bid_0_when_1_is_forbidden(level: str) -> None:
    # Round 2 (two cards) at four; trump copas (the turned 7 of copas).  The last bidder holds the
    # ace of trump (a sure trick) and the ace of oros; the others bid 0, 1, 0, so 1 is forbidden.
    game = at_round(4, 2, [["5e", "6b"], ["3e", "12b"], ["10e", "11b"], ["1c", "1o"]], "7c")
    for amount in (0, 1, 0):
        game.apply(Bid(amount))
    assert game.forbidden_bid() == 1
    assert decision(game, level) == Bid(2), "bid 0 with the ace of trump is a sure miss"


@pytest.mark.parametrize("level", LEVELS)
def test_needing_every_trick_it_leads_its_highest_trump(level: str) -> None:
    # Round 3 at four, trump espadas (turned 6e).  The first seat bid 3 holding 1e, 12e and 1o; the
    # 3 of espadas is out: leading the king would have to be overtaken by it, the ace draws it.
    game = at_round(4, 3, [["1e", "12e", "1o"], ["3e", "7c", "5c"], ["10c", "11c", "3o"], ["5o", "6o", "7o"]], "6e")
    for amount in (3, 0, 0, 1):
        game.apply(Bid(amount))
    assert game.phase is Phase.PLAYING and game.turn == game.order[0]
    assert decision(game, level) == Play(c("1e"))


@pytest.mark.parametrize("level", LEVELS)
def test_having_made_its_bid_it_sheds_winners(level: str) -> None:
    # Round 3 at four, trump bastos.  Bids 1, 0, 0, 1; the first seat leads the 12 of oros, the second
    # (void in oros) trumps.  The third seat (bid 0, nothing won) must follow oros but cannot win: it
    # gets rid of its ace of oros now, instead of being left to take a trick with it later.
    game = at_round(4, 3, [["12o", "7o", "3c"], ["1b", "5c", "6c"], ["1o", "5o", "7e"], ["11o", "10c", "12c"]], "6b")
    for amount in (1, 0, 0, 1):
        game.apply(Bid(amount))
    game.apply(Play(c("12o")))
    game.apply(Play(c("1b")))
    me = game.turn
    assert me == game.order[2]
    assert decision(game, level) == Play(c("1o"))


@pytest.mark.parametrize("level", LEVELS)
def test_it_never_ducks_when_the_rules_force_it_to_overtake(level: str) -> None:
    # The 7 of copas led and nobody trumped: holding the ace and the 5 of copas, the rules force the ace
    # (montar), even to a seat that bid 0 and would love to duck.
    game = at_round(4, 2, [["7c", "3e"], ["1c", "5c"], ["10o", "11o"], ["12b", "6b"]], "7o")
    for amount in (1, 0, 0, 0):
        game.apply(Bid(amount))
    game.apply(Play(c("7c")))
    assert game.legal_cards() == [c("1c")]
    assert decision(game, level) == Play(c("1c"))
    # and in a whole game, every decision of every level goes through the engine's own check
    rng = random.Random(3)
    full = GameState.new(4, seed=11)
    while not full.is_over:
        if full.phase is Phase.ROUND_OVER:
            full.deal()
            continue
        action = bot_action(full, level, rng=rng, worlds=3)
        full.apply(action)  # raises on anything illegal


# -- a bot sees only its seat ------------------------------------------------------------------


def _replay_with(game: GameState, hands: list[list[Card]]) -> GameState:
    """The same game, with the current round dealt ``hands`` instead: every earlier round, bid, trump
    and card played this round goes through the engine's checks again (so the new deal must be
    consistent with everything played)."""
    other = GameState(game.players, game.first_dealer)
    deals = [log.hands for log in game.log[:-1]] + [tuple(map(tuple, hands))]
    for log, dealt in zip(game.log, deals):
        other.deal(hands=dealt, trump_card=log.trump_card)
        for amount in log.bids:
            other.apply(Bid(amount))
        if log.trump_suit is not None and log.trump_card is None:
            other.apply(ChooseTrump(log.trump_suit))
        for card in log.plays:
            other.apply(Play(card))
    return other


def test_a_bots_choice_does_not_change_when_the_hidden_hands_are_reshuffled() -> None:
    rng = random.Random(8)
    checked = changed = 0
    for game_seed in range(6):
        game = GameState.new(4, seed=100 + game_seed)
        steps = 0
        while not game.is_over and checked < 30:
            if game.phase is Phase.ROUND_OVER:
                game.deal()
                continue
            steps += 1
            if steps % 17 == 0 and game.phase is Phase.PLAYING and len(game.hands[game.turn]) > 1:
                me = game.turn
                view = seat_view(game, me, reasons=False)
                # hidden hands drawn again, consistent with the view; the engine re-checks the whole round
                world = Sampler(view).sample(rng)
                played = game.log[-1].plays
                hands = []
                for seat in range(game.players):
                    if seat == me:
                        hands.append(list(game.log[-1].hands[me]))
                        continue
                    now = [CARD[x] for suit in world[seat] for x in suit]
                    hands.append(now + [p.card for p in view.played if p.seat == seat])
                other = _replay_with(game, hands)
                changed += other.hands != game.hands
                assert seat_view(other, me, reasons=False) == view
                for level in LEVELS:
                    assert bot_action(other, level, rng=random.Random(4), worlds=6) == bot_action(
                        game, level, rng=random.Random(4), worlds=6
                    )
                assert played == other.log[-1].plays
                checked += 1
            game.apply(default_action(game))
    assert checked >= 20 and changed >= checked - 3  # the other hands really were different


def test_worlds_respect_what_the_play_proves() -> None:
    # Trump bastos.  Seat order[1] did not follow oros and did not trump (so: no oros, no bastos);
    # seat order[2] followed oros under the king without beating it (so: no oro above the king).
    game = at_round(4, 3, [["12o", "7o", "3c"], ["5c", "6c", "7e"], ["11o", "5o", "10e"], ["1o", "1b", "12c"]], "6b")
    for amount in (1, 0, 1, 0):
        game.apply(Bid(amount))
    game.apply(Play(c("12o")))
    game.apply(Play(c("7e")))
    game.apply(Play(c("5o")))
    me = game.turn
    sampler = Sampler(seat_view(game, me, reasons=False))
    second, third = game.order[1], game.order[2]
    rng = random.Random(2)
    for _ in range(300):
        world = sampler.sample(rng)
        assert not world[second][0] and not world[second][3], "void in oros and in trumps"
        assert all(x < CODE[c("12o")] for x in world[third][0]), "no oro above the king"
        assert world[me] == to_hand(game.hands[me])
        assert sum(len(s) for s in world[second]) == 2 and sum(len(s) for s in world[third]) == 2
        seen = {x for seat in world for s in seat for x in s}
        assert CODE[c("6b")] not in seen, "the turned card belongs to nobody"


def test_the_eight_card_subida_trump_card_is_in_its_receivers_hand() -> None:
    game = GameState.new(4, seed=21)
    while game.number < 8:
        while game.phase is not Phase.ROUND_OVER:
            game.apply(default_action(game))
        game.deal()
    receiver = game.order[-1]
    me = game.order[0]
    assert game.trump_card in game.hands[receiver]
    sampler = Sampler(seat_view(game, me, reasons=False))
    for _ in range(50):
        world = sampler.sample(random.Random(_))
        assert CODE[game.trump_card] in world[receiver][CODE[game.trump_card] >> 4]


# -- the fast path and the exact search agree with the engine -----------------------------------


def test_fast_legal_plays_agree_with_the_engine() -> None:
    rng = random.Random(5)
    for seed in range(40):
        game = GameState.new(4, seed=seed)
        while not game.is_over:
            if game.phase is Phase.ROUND_OVER:
                game.deal()
                continue
            if game.phase is Phase.PLAYING:
                trump = SUIT_INDEX[game.trump_suit]
                trick = [CODE[p.card] for p in game.trick]
                led = trick[0] >> 4 if trick else -1
                best = trick[0] if trick else -1
                for x in trick[1:]:
                    if (x >> 4 == best >> 4 and x > best) or (x >> 4 == trump and best >> 4 != trump):
                        best = x
                mine = sorted(CARD[x] for x in legal(to_hand(game.hands[game.turn]), led, best, trump))
                assert mine == sorted(game.legal_cards())
            game.apply(game.legal_actions()[rng.randrange(len(game.legal_actions()))])


def test_random_playout_deals_every_trick() -> None:
    game = GameState.new(5, seed=3)
    while game.number < 8:
        while game.phase is not Phase.ROUND_OVER:
            game.apply(default_action(game))
        game.deal()
    hands = [to_hand(h) for h in game.hands]
    won = [0] * 5
    random_playout(copy_hands(hands), game.order, game.order[0], (), CODE[game.trump_card] >> 4, won)
    assert sum(won) == 8


def test_exact_search_takes_what_is_there() -> None:
    # Two cards each at three; trump oros.  Seat 0 holds both top oros and bid 2: it takes both.
    hands = [to_hand([c("1o"), c("3o")]), to_hand([c("12c"), c("7c")]), to_hand([c("11e"), c("10e")])]
    nxt = {0: 1, 1: 2, 2: 0}
    result = exact(hands, nxt, 0, [], 0, [0, 0, 0], [2, 0, 0], 3)
    assert result == (2, 0, 0)


# -- levels and budgets ------------------------------------------------------------------------


def test_level_names() -> None:
    assert parse_level("Difícil") == DIFICIL and parse_level("fácil") == FACIL and parse_level("normal") == NORMAL
    with pytest.raises(ValueError):
        parse_level("imposible")


def test_a_forced_move_is_played_at_once_and_the_cap_holds() -> None:
    game = at_round(4, 2, [["7c", "3e"], ["1c", "5c"], ["10o", "11o"], ["12b", "6b"]], "7o")
    for amount in (1, 0, 0, 0):
        game.apply(Bid(amount))
    game.apply(Play(c("7c")))
    view = seat_view(game, game.turn, reasons=False)
    started = time.perf_counter()
    assert decide(view, DIFICIL) == Play(c("1c"))
    assert time.perf_counter() - started < 0.05  # nothing searched for a single legal card
    # a 1 ms target still stops at the hard cap with a legal answer, whatever the machine
    fresh = GameState.new(4, seed=2)
    while fresh.number < 8:
        while fresh.phase is not Phase.ROUND_OVER:
            fresh.apply(default_action(fresh))
        fresh.deal()
    view = seat_view(fresh, fresh.turn, reasons=False)
    assert decide(view, DIFICIL, budget_ms=1) in view.legal
    assert BUDGETS[DIFICIL][1] <= 1000 and BUDGETS[NORMAL][1] <= 50
