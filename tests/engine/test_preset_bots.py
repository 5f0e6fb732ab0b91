"""The searching bots (normal, difícil) under every preset (``shared/VARIANTS.md``): whole games played
legally by every level; the fast path's legal moves are the engine's; worlds dealt from the preset's deck
within what the play proves; an indias bid from the cards seen, never the seat's own; the subastados
stages; the preset's scoring in the search; the arena's ``--rules``.  (Longer runs: test_preset_bot_games.py.)
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.engine import Bid, Card, ChooseTrump, GameState, Phase, Play, Suit, default_action, seat_view
from games.engine.arena import run_arena
from games.engine.bot import hand_value
from games.engine.cli import main
from games.engine.infer import Sampler
from games.engine.levels import DIFICIL, FACIL, LEVELS, NORMAL, decide
from games.engine.presets import CLASICA, PLAYERS, Rules
from games.engine.rules import trick_winner
from games.engine.schedule import RoundKind
from games.engine.search import Search, hand_estimate
from games.engine.sim import CODE, FRENCH_DECK, SPANISH_DECK, SUIT_INDEX, deck_of, legal, legal_for, to_hand
from games.engine.view import SeatView

INDIAS = Rules.of("indias")
SE_DOBLA = Rules.of("se-dobla")
BAZAS = Rules.of("bazas")
FRENTE = Rules.of("se-dobla", schedule="una-mas", forehead=True)
RULES = {"clasica": CLASICA, "indias": INDIAS, "se-dobla": SE_DOBLA, "se-dobla-frente": FRENTE, "bazas": BAZAS}
WORLDS = 3  # a fixed number of worlds: the same decisions on any machine, and quick


def cards(text: str) -> list[Card]:
    return [Card.parse(x) for x in text.split()]


def advance_to(game: GameState, number: int) -> None:
    """Play every round before ``number`` with the fácil bot (dealt from the game's seed)."""
    while game.number < number - 1 or game.phase not in (Phase.ROUND_OVER, Phase.DEALING):
        if game.phase in (Phase.ROUND_OVER, Phase.DEALING):
            game.deal(seed=game.number)
        else:
            game.apply(default_action(game))
    assert game.next_spec is not None and game.next_spec.number == number


def first_round_of(rules: Rules, players: int, kind: RoundKind) -> int:
    return next(spec.number for spec in rules.schedule(players) if spec.kind is kind)


def views_of_a_game(rules: Rules, players: int, seed: int, levels: tuple[str, ...]) -> Iterator[tuple[SeatView, str]]:
    """A whole game of ``levels`` (by seat, in turn), every decision checked by the engine: yields each
    decision's view and level.  An indias card is played as it is (nobody's decision)."""
    game = GameState.new(players, seed=seed, rules=rules)
    rng = random.Random(seed)
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
            continue
        seat = game.turn
        assert seat is not None
        view = seat_view(game, seat, reasons=False)
        if view.plays_hidden:
            game.apply(default_action(game), seat)
            continue
        level = levels[seat % len(levels)]
        yield view, level
        action = decide(view, level, rng=rng, worlds=WORLDS)
        assert action in view.legal, (rules, view.phase, action)
        game.apply(action, seat)  # the engine's own check
    assert game.winners()


# -- whole games ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(RULES))
@pytest.mark.parametrize("size", ["fewest", "most"])
def test_every_level_plays_whole_games_of_every_preset_legally(name: str, size: str) -> None:
    rules = RULES[name]
    low, high = PLAYERS[rules.preset]
    players = low if size == "fewest" else high
    kinds: set[tuple[str, Phase]] = set()
    for view, level in views_of_a_game(rules, players, seed=7, levels=LEVELS):
        kinds.add((level, view.phase))
    for level in LEVELS:  # every level bid and played
        assert (level, Phase.BIDDING) in kinds and (level, Phase.PLAYING) in kinds


# -- the fast path against the engine ------------------------------------------------------------------------


ALL_RULES = [*RULES.values(), Rules.of("se-dobla", schedule="escalera")]


def check_fast_legal(rules: Rules, players: int, seed: int) -> int:
    """A random legal game: at every card to play, the fast path's legal moves are the engine's.  Returns how
    many positions were compared."""
    game = GameState.new(players, seed=seed, rules=rules)
    rng = random.Random(seed)
    fast = legal_for(rules)
    decode = deck_of(rules).cards
    checked = 0
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
            continue
        if game.phase is Phase.PLAYING:
            assert game.trump_suit is not None and game.turn is not None
            trump = SUIT_INDEX[game.trump_suit]
            trick = [CODE[p.card] for p in game.trick]
            led = trick[0] >> 4 if trick else -1
            best = trick[0] if trick else -1
            for x in trick[1:]:
                if (x >> 4 == best >> 4 and x > best) or (x >> 4 == trump and best >> 4 != trump):
                    best = x
            mine = sorted(decode[x] for x in fast(to_hand(game.hands[game.turn]), led, best, trump))
            assert mine == sorted(game.legal_cards())
            checked += 1
        game.apply(rng.choice(game.legal_actions()))
    return checked


@settings(max_examples=30, deadline=None, derandomize=True)
@given(rules=st.sampled_from(ALL_RULES), size=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_fast_legal_moves_are_the_engines_in_every_preset(rules: Rules, size: int, seed: int) -> None:
    low, high = PLAYERS[rules.preset]
    assert check_fast_legal(rules, low + size % (high - low + 1), seed) > 50


def test_the_presets_say_which_fast_legal_moves_apply() -> None:
    assert legal_for(CLASICA) is legal and legal_for(BAZAS) is legal
    assert legal_for(INDIAS) is not legal and legal_for(SE_DOBLA) is legal_for(INDIAS)
    assert deck_of(BAZAS) is FRENCH_DECK and deck_of(INDIAS) is deck_of(CLASICA) is SPANISH_DECK
    # espadas led and trumped with the king of oros: holding the 2 of oros and the 5 of copas
    hand, led, best, trump = to_hand(cards("2o 5c")), 2, CODE[Card.parse("12o")], 0
    assert sorted(legal(hand, led, best, trump)) == [CODE[Card.parse("2o")]]  # Clásica: the losing trump
    assert sorted(legal_for(INDIAS)(hand, led, best, trump)) == sorted(CODE[c] for c in cards("2o 5c"))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(french=st.booleans(), trump=st.integers(-1, 3), players=st.integers(3, 8), seed=st.integers(0, 2**32 - 1))
def test_the_fast_estimate_values_both_decks_as_the_facil_bot_does(
    french: bool, trump: int, players: int, seed: int
) -> None:
    deck = BAZAS.deck(4) if french else INDIAS.deck(4)
    coding = FRENCH_DECK if french else SPANISH_DECK
    hand = random.Random(seed).sample(deck, 1 + seed % 7)
    suit = coding.suits[trump] if trump >= 0 else None
    fast = hand_estimate(to_hand(hand), trump, players, len(hand), coding.ace)
    assert fast == pytest.approx(hand_value(hand, suit, players))


# -- the worlds -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["indias", "se-dobla", "bazas"])
def test_worlds_are_dealt_from_the_presets_deck_less_what_is_seen(name: str) -> None:
    rules = RULES[name]
    players = 5
    rng = random.Random(3)
    deck = {CODE[c] for c in rules.deck(players)}
    decode = deck_of(rules).cards
    checked = 0
    for view, _level in views_of_a_game(rules, players, seed=11, levels=(FACIL,)):
        if view.hidden or rng.random() > 0.1:
            continue
        me = view.seat
        assert me is not None
        seen = {CODE[c] for c in view.visible_cards()}
        world = Sampler(view).sample(rng)
        dealt = [x for seat in world for suit in seat for x in suit]
        assert len(dealt) == len(set(dealt))
        assert set(dealt) <= deck
        # no card in view is dealt to another seat but the trump card, when the round deals it last
        last_dealt = {CODE[view.trump_card]} if view.trump_card is not None else set()
        assert (set(dealt) - {CODE[c] for c in view.hand}) & seen <= last_dealt
        assert sorted(decode[x] for suit in world[me] for x in suit) == sorted(view.hand)
        for seat in range(players):
            assert sum(map(len, world[seat])) == view.hand_sizes[seat]
        checked += 1
    assert checked > 20


@cache
def before_the_indias_rounds() -> GameState:
    game = GameState(3, 2, rules=INDIAS)
    advance_to(game, first_round_of(INDIAS, 3, RoundKind.INDIAS))
    return game


def check_what_the_play_proves(rules: Rules, players: int, seed: int) -> int:
    """A random legal game: at every card played, each other seat's real hand lies within the limits its
    play so far proves to the seat to move (voids, no higher card, no trump that would have won).  Returns
    how many limits were checked."""
    game = GameState.new(players, seed=seed, rules=rules)
    rng = random.Random(seed)
    checked = 0
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
            continue
        if game.phase is Phase.PLAYING and game.spec is not None and game.spec.kind is not RoundKind.INDIAS:
            me = game.turn
            assert me is not None
            sampler = Sampler(seat_view(game, me, reasons=False))
            for seat in game.order:
                if seat != me:
                    for card in game.hands[seat]:
                        x = CODE[card]
                        assert x < sampler.limit[seat][x >> 4], (rules, seat, card)
                        checked += sampler.limit[seat][x >> 4] < 64
        game.apply(rng.choice(game.legal_actions()))
    return checked


@pytest.mark.parametrize("name", list(RULES))
def test_what_the_play_proves_holds_for_the_real_hands(name: str) -> None:
    assert check_what_the_play_proves(RULES[name], 4, seed=21) > 100


def indias_deal(others: dict[int, str], own: str, trump: str) -> tuple[GameState, int]:
    """The first indias round at three seats, dealt: the first bidder holds ``own``, the others (by place in
    the bidding order, 1 and 2) ``others``; ``trump`` turned.  Returns the game and the first bidder."""
    game = before_the_indias_rounds().copy()
    dealer = (game.first_dealer + game.number) % 3
    order = [(dealer + i) % 3 for i in (1, 2, 3)]
    hands = [[] for _ in range(3)]  # type: list[list[Card]]
    hands[order[0]] = cards(own)
    for place, card in others.items():
        hands[order[place]] = cards(card)
    game.deal(hands, Card.parse(trump))
    assert game.spec is not None and game.spec.kind is RoundKind.INDIAS and game.turn == order[0]
    return game, order[0]


def test_in_an_indias_round_the_worlds_draw_the_seats_own_card_and_know_the_others() -> None:
    game, me = indias_deal({1: "12b", 2: "6c"}, "1e", "7o")
    view = seat_view(game, me, reasons=False)
    sampler = Sampler(view)
    rng = random.Random(1)
    own = set()
    for _ in range(200):
        world = sampler.sample(rng)
        for seat in range(3):
            if seat != me:
                assert [x for suit in world[seat] for x in suit] == [CODE[game.hands[seat][0]]]
        mine = [x for suit in world[me] for x in suit]
        assert len(mine) == 1 and mine[0] not in {CODE[c] for c in cards("12b 6c 7o")}
        own.add(mine[0])
    assert len(own) > 20  # any of the cards it cannot see


def test_under_indias_rules_a_void_player_who_discards_may_still_hold_a_lower_trump() -> None:
    # Se dobla, round 4 at three seats, trump copas (the muestra 5c).  Oros led; the second seat (void) trumps
    # with the 7 of copas; the third seat, void in oros too, discards the sota of espadas: it holds no trump
    # above the 7 (it would have owed one), but a lower one it may (unlike Clásica, nobody owes a losing trump).
    game = GameState(3, 0, rules=SE_DOBLA)
    advance_to(game, 4)
    dealer = (game.first_dealer + 3) % 3
    order = [(dealer + i) % 3 for i in (1, 2, 3)]
    hands = [[] for _ in range(3)]  # type: list[list[Card]]
    for seat, hand in zip(order, ("1o 2e 3e 4e", "7c 5e 6e 7e", "2c 10e 11e 12e")):
        hands[seat] = cards(hand)
    game.deal(hands, Card.parse("5c"))
    for amount in (1, 1, 1):
        game.apply(Bid(amount))
    for card in ("1o", "7c", "10e"):
        game.apply(Play(Card.parse(card)))
    assert game.turn == order[1]  # the 7 of copas took it
    sampler = Sampler(seat_view(game, order[1], reasons=False))
    rng = random.Random(5)
    lower = 0
    for _ in range(300):
        trumps = sampler.sample(rng)[order[2]][1]
        assert all(x < CODE[Card.parse("7c")] for x in trumps), "a higher trump would have been owed"
        assert not sampler.sample(rng)[order[2]][0], "void in oros"
        lower += bool(trumps)
    assert lower > 30  # the 2, 4 or 6 of copas: possible


# -- indias bids --------------------------------------------------------------------------------------------


def share_that_wins(game: GameState, me: int) -> float:
    """Of the cards the first bidder cannot see, the share that would take the trick (worked out here)."""
    assert game.trump_card is not None and game.trump_suit is not None
    known = {game.trump_card} | {game.hands[s][0] for s in game.order if s != me}
    possible = [c for c in INDIAS.deck(3) if c not in known]
    trick = [game.hands[s][0] for s in game.order]
    wins = sum(trick_winner([c, *trick[1:]], game.trump_suit) == 0 for c in possible)
    return wins / len(possible)


@pytest.mark.parametrize(
    ("others", "expected"),
    [
        ({1: "1o", 2: "3o"}, 0),  # the two best trumps are out there: nothing of its own can win
        ({1: "2b", 2: "4b"}, 1),  # the first to play against the lowest bastos: anything of its own wins
        ({1: "12e", 2: "7c"}, None),  # some of its possible cards win, some lose: the same bid whichever it holds
    ],
)
def test_an_indias_bid_comes_from_the_cards_seen_never_the_seats_own(others: dict[int, str], expected: int) -> None:
    game, me = indias_deal(others, "6c", "7o")
    share = share_that_wins(game, me)
    view = seat_view(game, me, reasons=False)
    assert view.hand == () and view.hidden == 1
    known = {game.trump_card, *(game.hands[s][0] for s in range(3) if s != me)}
    possible = [c for c in INDIAS.deck(3) if c not in known]
    for level in (NORMAL, DIFICIL):
        answers = set()
        for own in possible[::3]:  # the same deal with another card of its own
            other, seat = indias_deal(others, str(own), "7o")
            assert seat == me and seat_view(other, me, reasons=False) == view
            answers.add(decide(seat_view(other, me, reasons=False), level, rng=random.Random(own.index), worlds=2))
        assert len(answers) == 1, (level, answers)
        (bid,) = answers
        if expected is not None:
            assert bid == Bid(expected) and share == expected
        else:
            assert 0 < share < 1
            # the bid worth more on average: 1 (+15 made, −5 missed) when the share is well above a half, 0 below
            assert bid == Bid(1 if share > 0.5 else 0)


def test_an_indias_bid_reads_what_the_earlier_bids_say_of_the_seats_own_card() -> None:
    # Three seats, trump oros (the 7 turned).  The first to bid and lead holds the ace of espadas, the last the
    # king of espadas; the second cannot see its own card, which takes the trick only if it is an oro.  The first
    # bidder sees it: bidding 0 with the ace of espadas led says it sees a trump; bidding 1, that it does not.
    for own in ("3o", "4o", "6b", "12c", "5e"):
        for first_bid, expected in ((0, 1), (1, 0)):
            game = before_the_indias_rounds().copy()
            dealer = (game.first_dealer + game.number) % 3
            order = [(dealer + i) % 3 for i in (1, 2, 3)]
            hands = [[] for _ in range(3)]  # type: list[list[Card]]
            for seat, card in zip(order, ("1e", own, "12e")):
                hands[seat] = cards(card)
            game.deal(hands, Card.parse("7o"))
            game.apply(Bid(first_bid))
            view = seat_view(game, order[1], reasons=False)
            assert view.hand == () and view.hidden == 1
            # difícil reads the bid (whichever card it holds); normal reads no bid: most of its cards lose
            assert decide(view, DIFICIL, rng=random.Random(1), worlds=2) == Bid(expected), (own, first_bid)
            assert decide(view, NORMAL, rng=random.Random(1), worlds=2) == Bid(0)


# -- subastados ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [NORMAL, DIFICIL])
def test_subastados_decisions_are_legal_at_every_stage(level: str) -> None:
    players = 4
    game = GameState(players, 1, seed=3, rules=INDIAS)
    start = first_round_of(INDIAS, players, RoundKind.SUBASTADOS)
    advance_to(game, start)
    stages = {"blind": 0, "trump": 0, "contract": 0, "play": 0}
    rng = random.Random(2)
    while not (game.number == start + players - 1 and game.phase is Phase.ROUND_OVER):
        if game.phase is Phase.ROUND_OVER:
            game.deal(seed=game.number)
            continue
        assert game.spec is not None and game.spec.kind is RoundKind.SUBASTADOS
        seat = game.turn
        assert seat is not None
        view = seat_view(game, seat, reasons=False)
        action = decide(view, level, rng=rng, worlds=WORLDS)
        assert action in view.legal
        if game.phase is Phase.CHOOSING_TRUMP:
            stages["trump"] += 1
            assert isinstance(action, ChooseTrump) and seat == game.auction_winner
        elif game.bidding_blind:
            stages["blind"] += 1
            assert isinstance(action, Bid) and view.forbidden_bid is None
            assert game.legal_bids() == list(range(game.spec.cards + 1))  # no last-bidder rule
        elif game.phase is Phase.BIDDING:
            stages["contract"] += 1
            assert isinstance(action, Bid) and game.trump_suit is not None
            assert action.amount != game.forbidden_bid()
        else:
            stages["play"] += 1
        game.apply(action, seat)
        if isinstance(action, ChooseTrump):
            assert game.trump_suit is action.suit and game.phase is Phase.BIDDING
    assert stages["blind"] == stages["contract"] == players * players
    assert stages["trump"] == players and stages["play"] > 0
    assert all(r.kind is RoundKind.SUBASTADOS for r in game.results[-players:])


def test_a_strong_hand_wins_the_blind_bid_and_chooses_its_suit() -> None:
    # The first subastados round at three seats (13 cards each): the first bidder holds the top nine oros.
    game = GameState(3, 1, rules=INDIAS)
    advance_to(game, first_round_of(INDIAS, 3, RoundKind.SUBASTADOS))
    dealer = (game.first_dealer + game.number) % 3
    order = [(dealer + i) % 3 for i in (1, 2, 3)]
    strong = cards("1o 3o 12o 11o 10o 7o 6o 5o 4o 1c 3c 12c 11c")
    rest = [c for c in INDIAS.deck(3) if c not in strong]
    hands = [[] for _ in range(3)]  # type: list[list[Card]]
    hands[order[0]], hands[order[1]], hands[order[2]] = strong, rest[:13], rest[13:]
    game.deal(hands, None)
    first = decide(seat_view(game, order[0], reasons=False), DIFICIL, rng=random.Random(1), worlds=8)
    assert first == Bid(13)  # the blind bid scores nothing: it buys the choice of trump
    game.apply(first)
    game.apply(Bid(2))
    game.apply(Bid(1))
    assert game.auction_winner == order[0]
    choice = decide(seat_view(game, order[0], reasons=False), DIFICIL, rng=random.Random(1), worlds=8)
    assert choice == ChooseTrump(Suit.OROS)  # its nine oros, and ×3


# -- the preset's scoring in the search ------------------------------------------------------------------------


def bidding_view(rules: Rules, players: int, number: int) -> SeatView:
    game = GameState(players, 0, seed=4, rules=rules)
    advance_to(game, number)
    game.deal(seed=99)
    assert game.turn is not None
    return seat_view(game, game.turn, reasons=False)


def test_the_search_scores_se_dobla_and_the_multipliers_as_the_engine_does() -> None:
    view = bidding_view(SE_DOBLA, 4, 4)  # 4 cards: winning all four doubles the points, made or missed
    assert view.cards == 4 and view.seat is not None
    search = Search(view, random.Random(1), 0.0, float("inf"))
    bids, me = [1, 1, 1, 1], view.seat
    bids[me] = 4
    assert search.utility(bids, [4 if s == me else 0 for s in range(4)]) == 2 * 30
    bids[me] = 3
    assert search.utility(bids, [4 if s == me else 0 for s in range(4)]) == 2 * -5
    assert search.utility(bids, [3 if s == me else 0 for s in range(4)]) == 25
    view = bidding_view(SE_DOBLA, 4, 3)
    assert view.cards == 3 and view.seat is not None
    three, me = Search(view, random.Random(1), 0.0, float("inf")), view.seat
    won = [3 if s == me else 0 for s in range(4)]
    assert three.utility([3 if s == me else 0 for s in range(4)], won) == 25  # no doubling under four cards
    assert three.utility([2 if s == me else 0 for s in range(4)], won) == -5
    indias = Search(bidding_view(INDIAS, 4, 3), random.Random(1), 0.0, float("inf"))
    assert [indias.factor(s) for s in range(4)] == [3, 2, 1, 1]  # oros ×3, copas ×2
    clasica = Search(bidding_view(CLASICA, 4, 3), random.Random(1), 0.0, float("inf"))
    assert [clasica.factor(s) for s in range(4)] == [2, 1, 1, 1]


def test_a_bazas_hand_of_the_top_trumps_bids_them_all() -> None:
    game = GameState(4, 0, rules=BAZAS)
    order = game.rules.active_order(0, 4)
    hands = [[] for _ in range(4)]  # type: list[list[Card]]
    deal = [cards("AS KS QS"), cards("2H 5D 9C"), cards("3H 6D 10C"), cards("4H 7D JC")]
    for seat, hand in zip(order, deal):
        hands[seat] = hand
    game.deal(hands, Card.parse("2S"))
    assert game.trump_suit is Suit.PICAS and game.turn == order[0]
    view = seat_view(game, order[0], reasons=False)
    for level in LEVELS:
        assert decide(view, level, rng=random.Random(1), worlds=8) == Bid(3), level
    for amount in (3, 0, 0, 1):
        game.apply(Bid(amount))
    assert decide(seat_view(game, order[0], reasons=False), DIFICIL, rng=random.Random(1), worlds=8) == Play(
        Card.parse("AS")
    )


# -- the arena ---------------------------------------------------------------------------------------------------


def test_the_arena_prints_a_block_per_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arena", "--a", "fácil", "--b", "fácil", "--players", "3", "--deals", "1", "--rules", "all"]) == 0
    out = capsys.readouterr().out
    blocks = out.split("== ")[1:]
    assert [b.split(",")[0] for b in blocks] == ["clasica", "indias", "se-dobla (sencillas)", "bazas"]
    for block in blocks:
        assert "3 players ==" in block.splitlines()[0]
        assert "score difference per hand (A − B in the same seat, same cards): +0.00 ± 0.00" in block
        assert "illegal actions: A 0, B 0" in block
        assert "fácil's cap 50 ms" in block


def test_the_arena_takes_se_dobla_options_and_refuses_what_is_not_a_preset(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["arena", "--a", "normal", "--b", "fácil", "--players", "3", "--deals", "1", "--seed", "4"]
    assert main([*argv, "--rules", "se-dobla", "--schedule", "una-mas", "--forehead"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("== se-dobla (una-mas, en la frente), 3 players ==")
    assert "illegal actions: A 0, B 0" in out and "normal's cap 40 ms" in out
    assert main([*argv, "--rules", "mus"]) == 2
    assert main([*argv, "--rules", "bazas", "--schedule", "dobles"]) == 2
    assert main(["arena", "--a", "fácil", "--b", "fácil", "--players", "8", "--rules", "bazas"]) == 2
    assert "played by 3 to 7, not 8; skipped" in capsys.readouterr().out


def test_arena_games_with_tie_breaks_compare_the_schedules_rounds() -> None:
    r = run_arena("fácil", "fácil", players=3, deals=2, seed=1, rules=INDIAS)
    regular = len(INDIAS.schedule(3))
    assert r["games"] == 6 and r["hands"] == 6 * regular
    assert r["diff_per_hand"] == 0 and r["illegal_a"] == r["illegal_b"] == 0
    assert r["rules"] == INDIAS
