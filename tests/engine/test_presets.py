"""The presets of ``shared/VARIANTS.md`` in the engine: hand-worked rounds of each, checked against the text.

Each test deals a round by hand (the earlier rounds of the game played with each seat's first legal
action), then plays it and checks what the page says: the decks, the schedules, the subastados' two
bids and trump choice, the oros round's ×3 and a copas round's ×2, *se dobla* won and missed, the
discards allowed under indias and se-dobla and the losing trump owed under bazas, the indias round's
views, and the tie-break rounds.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

import pytest

from games.engine import Bid, ChooseTrump, Phase, Play, default_action
from games.engine.cards import ALL_CARDS, FRENCH_CARDS, Card, Suit
from games.engine.errors import IllegalBidError, IllegalPlayError, Rule
from games.engine.presets import Rules
from games.engine.record import FORMAT_2, RecordError, export_record, replay
from games.engine.rules import legal_plays
from games.engine.schedule import RoundKind, TrumpMode
from games.engine.snapshot import dump, load
from games.engine.state import GameState
from games.engine.view import seat_view

INDIAS = Rules.of("indias")
BAZAS = Rules.of("bazas")
SE_DOBLA = Rules.of("se-dobla")


def cards(text: str) -> list[Card]:
    return [Card.parse(c) for c in text.split()]


def new_game(players: int, rules: Rules, first_dealer: int = 0) -> GameState:
    """A game before its first deal (each deal given, or dealt from a seed)."""
    return GameState(players, first_dealer, rules=rules)


def first_legal(game: GameState) -> None:
    game.apply(game.legal_actions()[0])


def advance_to(game: GameState, number: int) -> None:
    """Play every round before ``number`` with each seat's first legal action (dealt from the seed)."""
    while game.number < number - 1 or game.phase not in (Phase.ROUND_OVER, Phase.DEALING):
        if game.phase is Phase.ROUND_OVER or game.phase is Phase.DEALING:
            game.deal(seed=game.number)
        else:
            first_legal(game)
    assert game.next_spec is not None and game.next_spec.number == number


def deal(game: GameState, by_seat: dict[int, str], trump: str | None) -> None:
    """Deal round ``game.number + 1`` with these hands (seat -> cards) and trump card."""
    hands = [cards(by_seat.get(seat, "")) for seat in range(game.players)]
    game.deal(hands, Card.parse(trump) if trump else None)


def play_out(game: GameState) -> None:
    """The rest of the round, each seat playing its first legal card."""
    number = game.number
    while game.number == number and game.phase is Phase.PLAYING:
        first_legal(game)


# -- decks and schedules -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "biggest", "removed"),
    [
        (3, 13, "2e"),
        (4, 10, ""),
        (5, 8, ""),
        (6, 6, "2e 2b 2c 2o"),
        (7, 5, "2e 2b 2c 2o 4e"),
        (8, 5, ""),
    ],
)
def test_indias_deck_loses_the_2s_then_the_4s_one_by_one(players: int, biggest: int, removed: str) -> None:
    assert INDIAS.max_cards(players) == biggest
    assert [str(c) for c in INDIAS.removed(players)] == removed.split()
    deck = INDIAS.deck(players)
    assert len(deck) == players * biggest and not set(deck) & set(cards(removed))


def test_the_decks_of_se_dobla_and_bazas() -> None:
    assert SE_DOBLA.deck(3) == ALL_CARDS and [SE_DOBLA.max_cards(n) for n in range(3, 9)] == [13, 10, 8, 6, 5, 5]
    assert BAZAS.deck(7) == FRENCH_CARDS and len(FRENCH_CARDS) == 52
    assert [c.name_es for c in cards("AS KH QD JC 10S")] == [
        "as de picas",
        "rey de corazones",
        "reina de diamantes",
        "jota de tréboles",
        "10 de picas",
    ]
    assert Card.parse("AS").strength > Card.parse("KS").strength > Card.parse("2S").strength


def test_schedules_at_four_players() -> None:
    kinds = [(r.kind.value, r.cards) for r in INDIAS.schedule(4)]
    assert len(kinds) == 37
    assert kinds[:4] == [("normal", 1)] * 4 and kinds[4:12] == [("normal", n) for n in range(2, 10)]
    assert kinds[12:16] == [("normal", 10)] * 4 and kinds[16:25] == [("normal", n) for n in range(9, 0, -1)]
    assert kinds[25:] == [("indias", 1)] * 4 + [("subastados", 10)] * 4 + [("oros", 10)] * 4
    lengths = {
        name: len(Rules.of("se-dobla", schedule=name).schedule(4)) for name in ("sencillas", "dobles", "una-mas")
    }
    assert lengths == {"sencillas": 22, "dobles": 26, "una-mas": 20}
    escalera = [r.cards for r in Rules.of("se-dobla", schedule="escalera").schedule(4)]
    assert escalera == [n for n in range(1, 11) for _ in range(4)]
    forehead = Rules.of("se-dobla", forehead=True).schedule(4)
    assert {r.kind for r in forehead if r.cards == 1} == {RoundKind.INDIAS}
    assert [r.cards for r in BAZAS.schedule(4)] == [3, 4, 5, 6, 7, 7, 7, 7, 6, 5, 4, 3]
    with pytest.raises(ValueError):
        BAZAS.check_players(8)
    with pytest.raises(ValueError):
        Rules.of("bazas", schedule="dobles")


# -- indias: subastados, oros, copas ------------------------------------------------------------------------


def test_a_subastados_round_bids_blind_then_chooses_trump_then_bids_the_contract() -> None:
    game = new_game(3, INDIAS, 1)
    advance_to(game, 33)  # 3 + 11 + 3 + 12 rounds, then 3 indias: the first subastados round
    spec = game.next_spec
    assert spec is not None and spec.kind is RoundKind.SUBASTADOS and spec.cards == 13
    deck = list(INDIAS.deck(3))
    dealer = (game.first_dealer + 32) % 3
    order = [(dealer + i) % 3 for i in (1, 2, 3)]
    deal(game, {seat: " ".join(str(c) for c in deck[i::3]) for i, seat in enumerate(order)}, None)
    assert game.trump_card is None and game.trump_suit is None

    # the blind bids: no last-bidder rule (4 + 5 + 4 = 13 cards), the highest wins, a tie the earlier
    for amount in (4, 5):
        game.apply(Bid(amount))
    assert 4 in game.legal_bids() and game.forbidden_bid() is None
    game.apply(Bid(4))
    assert game.phase is Phase.CHOOSING_TRUMP and game.turn == order[1] == game.auction_winner
    assert game.legal_actions() == [ChooseTrump(s) for s in (Suit.OROS, Suit.COPAS, Suit.ESPADAS, Suit.BASTOS)]
    game.apply(ChooseTrump(Suit.COPAS))

    # everyone bids again, in the same order, knowing the trump: the contract, with the last-bidder rule
    assert game.phase is Phase.BIDDING and game.turn == order[0] and game.bids == [None] * 3
    game.apply(Bid(4))
    game.apply(Bid(4))
    assert game.forbidden_bid() == 5 and 5 not in game.legal_bids()
    with pytest.raises(IllegalBidError) as refused:
        game.apply(Bid(5))
    assert refused.value.code is Rule.LAST_BIDDER_SUM
    game.apply(Bid(3))
    play_out(game)
    result = game.results[-1]
    assert result.kind is RoundKind.SUBASTADOS and result.multiplier == 2  # copas ×2
    assert result.blind_bids is not None and [result.blind_bids[s] for s in order] == [4, 5, 4]
    for seat in order:  # the contract scores, ×2; the blind bids score nothing
        bid, won = result.bids[seat], result.tricks[seat]
        assert bid is not None and won is not None
        assert result.points[seat] == 2 * (10 + 5 * bid if bid == won else -5 * abs(bid - won))

    record = json.loads(json.dumps(export_record(game, include_current=False)))
    entry = record["rounds"][32]
    assert entry["kind"] == "subastados" and entry["trump_suit"] == "c" and entry["trump_card"] is None
    assert entry["blind_bids"] == [4, 5, 4] and entry["bids"] == [4, 4, 3]


def test_an_oros_round_counts_three_times_and_a_copas_round_twice() -> None:
    game = new_game(3, INDIAS, 2)
    # round 1: one card each, the copas turned: ×2
    dealer = game.first_dealer
    order = [(dealer + i) % 3 for i in (1, 2, 3)]
    deal(game, {order[0]: "1e", order[1]: "3e", order[2]: "12b"}, "7c")
    assert game.trump_suit is Suit.COPAS
    for amount in (1, 0):
        game.apply(Bid(amount))
    game.apply(Bid(1))  # 1 + 0 + 1: the last bidder may not make it 1 + 0 + 0
    play_out(game)
    first = game.results[0]
    assert first.multiplier == 2 and first.tricks[order[0]] == 1  # the ace of espadas takes it
    assert first.points[order[0]] == 30 and first.points[order[1]] == 20 and first.points[order[2]] == -10

    advance_to(game, 36)  # the first oros round
    spec = game.next_spec
    assert spec is not None and spec.kind is RoundKind.OROS and spec.trump_mode is TrumpMode.OROS
    game.deal(seed=1)
    assert game.trump_card is None and game.trump_suit is Suit.OROS
    while game.phase is Phase.BIDDING:
        first_legal(game)
    play_out(game)
    result = game.results[-1]
    assert result.kind is RoundKind.OROS and result.multiplier == 3
    bid, won = result.bids[order[0]], result.tricks[order[0]]
    assert bid is not None and won is not None
    assert result.points[order[0]] == 3 * (10 + 5 * bid if bid == won else -5 * abs(bid - won))


def test_an_oros_round_refuses_a_turned_card() -> None:
    game = new_game(3, INDIAS)
    advance_to(game, 36)
    record = export_record(game)
    record["rounds"].append({"kind": "oros", "hands": [], "trump_card": "7c", "bids": [], "plays": []})
    with pytest.raises(RecordError) as refused:
        replay(json.loads(json.dumps(record)))
    assert (refused.value.round, refused.value.kind) == (36, "deal")


# -- se dobla --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("bid", "points"), [(4, 60), (3, -10)])
def test_se_dobla_doubles_the_round_of_who_wins_every_trick(bid: int, points: int) -> None:
    game = new_game(4, SE_DOBLA, 3)
    advance_to(game, 4)
    spec = game.next_spec
    assert spec is not None and spec.cards == 4 and spec.trump_mode is TrumpMode.MUESTRA
    dealer = (game.first_dealer + 3) % 4
    order = [(dealer + i) % 4 for i in (1, 2, 3, 4)]
    strong = order[2]
    hands = {order[0]: "1e 3e 12e 11e", order[1]: "1c 3c 12c 11c", strong: "1o 3o 12o 11o", order[3]: "1b 3b 12b 11b"}
    deal(game, hands, "2o")  # the muestra: shown, not dealt (16 of 40 cards)
    assert game.trump_suit is Suit.OROS
    for seat, amount in zip(order, (0, 0, bid, 2)):
        game.apply(Bid(amount), seat)
    play_out(game)
    result = game.results[-1]
    assert result.tricks[strong] == 4 and result.doubled == strong and result.multiplier == 1
    assert result.points[strong] == points
    assert [result.points[s] for s in order if s != strong] == [10, 10, -10]  # the others: not doubled


def test_se_dobla_does_not_double_a_round_of_three_cards() -> None:
    game = new_game(4, SE_DOBLA, 3)
    advance_to(game, 3)
    dealer = (game.first_dealer + 2) % 4
    order = [(dealer + i) % 4 for i in (1, 2, 3, 4)]
    deal(game, {order[0]: "1e 3e 12e", order[1]: "1c 3c 12c", order[2]: "1o 3o 12o", order[3]: "1b 3b 12b"}, "2o")
    for seat, amount in zip(order, (0, 0, 3, 1)):
        game.apply(Bid(amount), seat)
    play_out(game)
    assert game.results[-1].doubled is None and game.results[-1].points[order[2]] == 25


# -- what a player void in the led suit owes ---------------------------------------------------------------


def test_void_in_the_led_suit_a_losing_trump_is_owed_in_clasica_and_bazas_only() -> None:
    trick, trump = cards("4e 1o"), Suit.OROS  # espadas led, trumped with the ace of oros
    assert legal_plays(cards("2o 5c"), trick, trump) == cards("2o")  # Clásica: any trump
    assert legal_plays(cards("2o 5c"), trick, trump, losing_trump=False) == cards("2o 5c")  # discard allowed
    trick = cards("4e 12o")
    assert legal_plays(cards("1o 2o 5c"), trick, trump, losing_trump=False) == cards("1o")  # a winning trump is owed
    assert legal_plays(cards("5c 6b"), cards("4e"), trump, losing_trump=False) == cards("5c 6b")
    assert legal_plays(cards("2o 5c"), cards("4e"), trump, losing_trump=False) == cards("2o")  # any trump wins


def test_a_bazas_player_void_must_throw_a_losing_trump_and_an_indias_one_may_discard() -> None:
    for rules, trump_card, hands, legal in (
        (BAZAS, "2H", ("10S JS 4S", "QH 6D 8D", "3H 5D 7D"), "3H"),
        (INDIAS, "2o", ("4e 5e", "12o 6c", "4o 5c"), "4o 5c"),
    ):
        game = new_game(3, rules, 1)
        advance_to(game, 4 if rules is INDIAS else 1)  # the indias preset's 3-player round 4: 2 cards
        spec = game.next_spec
        assert spec is not None and spec.cards == len(hands[0].split())
        dealer = (game.first_dealer + spec.number - 1) % 3
        order = [(dealer + i) % 3 for i in (1, 2, 3)]
        deal(game, dict(zip(order, hands)), trump_card)
        for amount in (0, 0, 0):
            game.apply(Bid(amount))
        game.apply(Play(Card.parse(hands[0].split()[0])))  # the led suit
        game.apply(Play(Card.parse(hands[1].split()[0])))  # trumped: the trick is the trump's
        assert [str(a.card) for a in game.legal_actions() if isinstance(a, Play)] == legal.split()
        if rules is BAZAS:
            with pytest.raises(IllegalPlayError) as refused:
                game.apply(Play(Card.parse("5D")))
            assert refused.value.code is Rule.MUST_TRUMP


# -- indias rounds: every card but your own ------------------------------------------------------------------


def test_an_indias_round_shows_every_card_but_your_own() -> None:
    game = new_game(4, INDIAS, 2)
    advance_to(game, 26)  # 4 + 8 + 4 + 9 rounds: the first indias round
    spec = game.next_spec
    assert spec is not None and spec.kind is RoundKind.INDIAS and spec.cards == 1
    dealer = (game.first_dealer + 25) % 4
    order = [(dealer + i) % 4 for i in (1, 2, 3, 4)]
    deal(game, dict(zip(order, ("1e", "7c", "12b", "3o"))), "5o")
    for seat in range(4):
        view = seat_view(game, seat)
        assert view.kind is RoundKind.INDIAS and view.hand == () and view.hidden == 1
        assert game.hands[seat][0] not in view.visible_cards()  # never their own
        assert {p.card for p in view.seen} == {game.hands[o][0] for o in range(4) if o != seat}
        assert Card.parse("5o") in view.visible_cards()  # the turned card, for everyone
    spectator = seat_view(game, None)
    assert not spectator.seen and spectator.visible_cards() == {Card.parse("5o")}
    while game.phase is Phase.BIDDING:
        first_legal(game)
    mover = seat_view(game, game.turn)
    assert mover.plays_hidden and mover.legal == () and not mover.reasons  # nothing that names the card
    own = game.hands[mover.seat][0]  # type: ignore[index]
    game.apply(Play(own))
    after = seat_view(game, mover.seat)
    assert own in after.visible_cards() and after.hidden == 0  # played: now everyone sees it


# -- tie-break rounds ----------------------------------------------------------------------------------------


def scores_of_the_round(game: GameState) -> list[int]:
    """The points each seat will make in the round just dealt, played with first legal actions."""
    trial = game.copy()
    number = trial.number
    while trial.number == number and trial.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
        first_legal(trial)
    return list(trial.results[-1].points)


@pytest.mark.parametrize("rules", [INDIAS, SE_DOBLA], ids=["indias", "se-dobla"])
def test_a_shared_top_score_plays_tie_break_rounds_three_at_most(rules: Rules) -> None:
    game = new_game(3, rules)
    rounds = len(rules.schedule(3))
    advance_to(game, rounds)
    for played in range(4):
        game.deal(seed=100 + played)
        points = scores_of_the_round(game)
        game.totals = [500 - points[0], 500 - points[1], -500]  # seats 0 and 1 end the round on 500
        while game.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
            first_legal(game)
        assert game.totals[:2] == [500, 500]
        if played < 3:
            assert game.phase is Phase.ROUND_OVER and len(game.schedule) == rounds + played + 1
            spec = game.next_spec
            assert spec is not None and spec.kind is RoundKind.DESEMPATE and spec.cards == rules.max_cards(3)
            assert dump(load(json.loads(json.dumps(dump(game))))) == dump(game)  # carried in the snapshot
        else:  # three tie-breaks played: the top scorers share first place
            assert game.is_over and game.winners() == [0, 1]
    assert [r.kind for r in game.results[-3:]] == [RoundKind.DESEMPATE] * 3
    if rules is INDIAS:
        assert all(r.trump_suit is Suit.OROS and r.multiplier == 3 for r in game.results[-3:])
    record = json.loads(json.dumps(export_record(game)))
    assert record["format"] == FORMAT_2 and [r["kind"] for r in record["rounds"][-3:]] == ["desempate"] * 3


def test_a_tie_break_that_settles_it_ends_the_game() -> None:
    game = new_game(3, SE_DOBLA, 2)
    advance_to(game, len(SE_DOBLA.schedule(3)))
    game.deal(seed=1)
    points = scores_of_the_round(game)
    game.totals = [200 - points[0], 200 - points[1], 0]
    while game.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
        first_legal(game)
    game.deal(seed=2)
    points = scores_of_the_round(game)
    game.totals = [300 - points[0], 100 - points[1], 0]
    while game.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
        first_legal(game)
    assert game.is_over and game.winners() == [0] and len(game.results) == len(SE_DOBLA.schedule(3)) + 1


# -- records of the presets -----------------------------------------------------------------------------------


def whole_game(rules: Rules, players: int, seed: int) -> GameState:
    game = GameState.new(players, seed=seed, rules=rules)
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        else:
            first_legal(game)
    return game


@pytest.mark.parametrize(
    ("rules", "players"),
    [(INDIAS, 8), (Rules.of("se-dobla", schedule="escalera", forehead=True), 3), (BAZAS, 7)],
    ids=["indias-8", "se-dobla-escalera-frente-3", "bazas-7"],
)
def test_a_presets_record_replays_to_its_totals(rules: Rules, players: int) -> None:
    game = whole_game(rules, players, seed=players)
    record = json.loads(json.dumps(export_record(game)))
    assert record["format"] == FORMAT_2 and record["rules"] == rules.as_json()
    replayed = replay(record)
    assert replayed.game.totals == game.totals and replayed.game.is_over
    assert replayed.as_json()["rounds"] == [r.as_json() for r in game.results]


def broken(record: dict, where: Sequence[object], value: object) -> RecordError:
    copy = json.loads(json.dumps(record))
    target = copy
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value  # type: ignore[index]
    with pytest.raises(RecordError) as refused:
        replay(copy)
    return refused.value


def test_broken_preset_records_are_refused_where_they_break() -> None:
    record = export_record(whole_game(INDIAS, 3, seed=8))
    subastados = next(i for i, r in enumerate(record["rounds"]) if r["kind"] == "subastados")
    error = broken(record, ["rounds", subastados, "kind"], "normal")
    assert (error.round, error.kind) == (subastados + 1, "deal")
    error = broken(record, ["rounds", subastados, "blind_bids", 1], 14)
    assert (error.round, error.kind, error.index) == (subastados + 1, "blind_bid", 1)
    error = broken(record, ["rounds", subastados, "trump_suit"], "S")  # a French suit in the Spanish deck
    assert (error.round, error.kind) == (subastados + 1, "trump")
    error = broken(record, ["rules"], {"preset": "indias", "schedule": "dobles"})
    assert (error.round, error.kind) == (1, "deal")
    error = broken(record, ["players"], [f"P{i}" for i in range(9)])
    assert "3 to 8" in error.message
    bazas = export_record(whole_game(BAZAS, 4, seed=1))
    error = broken(bazas, ["rounds", 0, "hands", 0, 0], "1o")  # a Spanish card in the French deck
    assert (error.round, error.kind) == (1, "deal")
    clasica = export_record(whole_game(Rules(), 4, seed=1))
    assert clasica["format"] == "pocha-record/1" and "rules" not in clasica and "kind" not in clasica["rounds"][0]


# -- every preset, every size -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rules",
    [INDIAS, SE_DOBLA, Rules.of("se-dobla", schedule="dobles"), BAZAS],
    ids=["indias", "se-dobla", "se-dobla-dobles", "bazas"],
)
def test_every_size_plays_the_schedule_and_replays(rules: Rules) -> None:
    low, high = {"indias": (3, 8), "se-dobla": (3, 8), "bazas": (3, 7)}[rules.preset]
    for players in range(low, high + 1):
        game = whole_game(rules, players, seed=players * 31)
        base = len(rules.schedule(players))
        assert base <= len(game.results) <= base + rules.tie_breaks
        assert replay(json.loads(json.dumps(export_record(game)))).game.totals == game.totals


# -- the fácil bot plays every preset ------------------------------------------------------------------------


def exact_rate(rules: Rules, players: int, seeds: range, choose: Any) -> float:
    made = total = 0
    for seed in seeds:
        game = GameState.new(players, seed=seed, rules=rules)
        rng = random.Random(seed)
        while not game.is_over:
            if game.phase is Phase.ROUND_OVER:
                game.deal()
            else:
                game.apply(choose(game, rng))  # checked: an illegal action raises
        for result in game.results:
            pairs = [(b, t) for b, t in zip(result.bids, result.tricks) if b is not None]
            total += len(pairs)
            made += sum(b == t for b, t in pairs)
    return made / total


@pytest.mark.parametrize("rules", [INDIAS, SE_DOBLA, BAZAS], ids=["indias", "se-dobla", "bazas"])
def test_the_facil_bot_plays_every_preset_and_makes_its_bid_far_more_often_than_chance(rules: Rules) -> None:
    facil = exact_rate(rules, 4, range(3), lambda game, rng: default_action(game))
    chance = exact_rate(rules, 4, range(3), lambda game, rng: rng.choice(game.legal_actions()))
    assert facil > chance + 0.15, (facil, chance)


def test_in_an_indias_round_the_facil_bot_bids_from_the_cards_it_sees() -> None:
    for others, expected in ((("1o", "3o"), 0), (("2b", "4b"), 1)):
        game = new_game(3, INDIAS, 2)
        advance_to(game, 30)  # 3 + 11 + 3 + 12 rounds at three seats: the indias rounds start at 30
        spec = game.next_spec
        assert spec is not None and spec.kind is RoundKind.INDIAS
        dealer = (game.first_dealer + 29) % 3
        order = [(dealer + i) % 3 for i in (1, 2, 3)]
        deal(game, {order[0]: "6c", order[1]: others[0], order[2]: others[1]}, "7o")
        view = seat_view(game, order[0], reasons=False)
        assert view.hand == () and {p.card for p in view.seen} == set(cards(" ".join(others)))
        assert default_action(game) == Bid(expected)  # the first to bid and lead
