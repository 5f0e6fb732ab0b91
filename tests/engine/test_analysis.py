"""The analysis of a finished game (``games.engine.analysis``): hand-built rounds whose right decision is known
(the classic blunders marked, the right choice found), forced moves, determinism by seed, secrecy (each
search sees only the deciding seat's view) and every preset's kinds of decision."""

from __future__ import annotations

import doctest
import math
from collections.abc import Sequence
from typing import Any

import pytest

import games.engine.analysis as analysis
from games.engine import (
    Bid,
    Card,
    ChooseTrump,
    GameState,
    Phase,
    Play,
    Suit,
    default_action,
    export_record,
    seat_view,
)
from games.engine.actions import Action, parse_action
from games.engine.analysis import (
    ACCURACY_SCALE,
    MARKS,
    Decision,
    RoundAnalysis,
    accuracy,
    analyse_game,
    analyse_round,
    rounds_in,
    summary,
)
from games.engine.presets import CLASICA, Rules
from games.engine.record import RecordError
from games.engine.schedule import RoundKind, active_order, dealer_of
from games.engine.search import Search
from games.engine.view import SeatView

WORLDS = 40  # enough for the clear cases below; small, so the file runs in seconds
NAMES = ["ana", "bea", "carla", "dani"]

Script = tuple[Sequence[str], str | None, Sequence[str]]  # hands in bidding order, trump card, actions


def play_record(
    scripted: dict[int, Script], rounds: int, *, players: int = 4, rules: Rules = CLASICA, seed: int = 11
) -> dict[str, Any]:
    """The record of a game's first ``rounds`` rounds (first dealer seat 0): the rounds in ``scripted`` dealt
    its hands (``"1e 5e"``, the first bidder's first) and trump card, its actions (``"bid 2"``, ``"play 5e"``,
    ``"trump o"``) taken first; every other round dealt at random; the rest played by the default bot."""
    game = GameState(NAMES[:players], 0, seed=seed, rules=rules)
    while len(game.results) < rounds:
        number = game.number + 1
        if number in scripted:
            hands_text, trump, actions = scripted[number]
            order = active_order(dealer_of(0, number, players), players)
            hands: list[list[Card]] = [[] for _ in range(players)]
            for seat, text in zip(order, hands_text, strict=True):
                hands[seat] = [Card.parse(x) for x in text.split()]
            game.deal(hands, Card.parse(trump) if trump else None)
            for text in actions:
                game.apply(parse_action(text))
        else:
            game.deal()
        while game.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
            game.apply(default_action(game))
    return export_record(game)


# Round 1 (dealer 0: seat 1 bids and leads first): seat 1 holds the ace of trump, the only card that matters,
# and bids 0.  Round 2 (dealer 1: seat 2 first): seat 2 holds the ace and the 5 of trump, bids both tricks and
# leads the 5 (any higher espada out there must take it: the ace first, then the 5, wins both far more often).
ROUND_1: Script = (["1e", "3c", "12b", "7o"], "7e", ["bid 0", "bid 0", "bid 0", "bid 0"])
ROUND_2: Script = (
    ["1e 5e", "12e 3c", "7o 11b", "10c 12o"],
    "6e",
    ["bid 2", "bid 0", "bid 0", "bid 1", "play 5e", "play 12e", "play 7o", "play 10c"],
)
# Round 8 (8 cards, the whole deck dealt; dealer 3, its last card, the 5 of espadas, marks trump; seat 0 bids
# and leads first).  Seat 2 bids 1 and takes the third trick; at the seventh, bastos led, it is void in bastos
# and trumps, holding the ace of copas and the 5 of oros.  Every other card has been seen by then, so it knows
# the other three hold one copa each, which the last trick will be led in: kept, the ace takes a trick too
# many (-5 instead of +15), and it must be shed now.
ROUND_8: Script = (
    [
        "1e 3e 10c 5c 1o 11o 7b 12b",  # seat 0
        "12e 11e 11c 6c 3o 12o 3b 6b",  # seat 1
        "10e 7e 3c 1c 7o 6o 5o 5b",  # seat 2
        "6e 12c 7c 10o 1b 11b 10b 5e",  # seat 3, the dealer: the 5 of espadas dealt last
    ],
    "5e",
    [
        *("bid 2", "bid 1", "bid 1", "bid 3"),
        *("play 1e", "play 12e", "play 10e", "play 6e"),  # seat 0 takes
        *("play 3e", "play 11e", "play 7e", "play 5e"),  # seat 0 takes: no trump left
        *("play 10c", "play 11c", "play 3c", "play 12c"),  # seat 2 takes: its bid is made
        *("play 7o", "play 10o", "play 11o", "play 3o"),  # seat 2 leads; seat 1 takes
        *("play 12o", "play 6o", "play 10b", "play 1o"),  # seat 0 takes
        *("play 7b", "play 3b", "play 5b", "play 1b"),  # seat 3 takes
        *("play 11b", "play 12b", "play 6b", "play 5o"),  # seat 2 keeps its ace
    ],
)


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    return play_record({1: ROUND_1, 2: ROUND_2, 8: ROUND_8}, 8)


@pytest.fixture(scope="module")
def blunders(record: dict[str, Any]) -> dict[int, RoundAnalysis]:
    return {n: analyse_round(record, n, seed=1, worlds=WORLDS) for n in (1, 2, 8)}


def find(analysed: RoundAnalysis, kind: str, index: int) -> Decision:
    return next(d for d in analysed.decisions if d.kind == kind and d.index == index)


def test_the_record_is_as_built(record: dict[str, Any]) -> None:
    assert rounds_in(record) == 8
    assert record["rounds"][7]["plays"][24:28] == ["11b", "12b", "6b", "5o"]


def test_bidding_0_with_the_ace_of_trump_is_marked_and_1_is_best(blunders: dict[int, RoundAnalysis]) -> None:
    d = find(blunders[1], "bid", 0)
    assert (d.seat, d.played, d.best) == (1, "0", "1")
    # the trick is certain: 1 bid scores +15, 0 bid -5, in every world
    assert d.options == (("0", -5.0), ("1", 15.0))
    assert d.loss == 20.0 and d.margin == 0.0 and not d.forced
    assert d.mark == "blunder"
    assert blunders[1].par_bids[1] == 1 and blunders[1].loss[1] >= 20.0


def test_leading_the_low_trump_when_every_trick_is_needed_is_marked(blunders: dict[int, RoundAnalysis]) -> None:
    d = find(blunders[2], "play", 0)
    assert (d.seat, d.played, d.best) == (2, "5e", "1e")
    assert d.mark in ("error", "blunder")
    assert d.loss - d.margin > 5.0
    assert dict(d.options)["1e"] == d.expected_best and dict(d.options)["5e"] == d.expected_played


def test_keeping_an_ace_once_the_bid_is_made_is_marked(blunders: dict[int, RoundAnalysis]) -> None:
    d = find(blunders[8], "play", 27)
    assert (d.seat, d.played, d.best) == (2, "5o", "1c")
    # every card left is known: shed, the bid is made (+15); kept, the ace takes the last trick (-5)
    assert dict(d.options) == {"1c": 15.0, "5o": -5.0}
    assert d.loss == 20.0 and d.margin == 0.0
    assert d.mark == "blunder"


def test_a_forced_move_is_never_marked(blunders: dict[int, RoundAnalysis]) -> None:
    forced = [d for r in blunders.values() for d in r.decisions if d.forced]
    # every last card, the last bidder of round 1 (0 only: 1 would make the sum) and more
    assert len(forced) >= 4 + 4 + 4 + 1
    for d in forced:
        assert d.mark is None and d.loss == 0.0 and d.margin == 0.0
        assert d.best == d.played and len(d.options) == 1
    last_bid = find(blunders[1], "bid", 3)
    assert last_bid.forced and last_bid.played == "0"
    assert all(d.forced for d in blunders[2].decisions if d.kind == "play" and d.index >= 4)


def test_every_decision_is_there_in_order_and_its_figures_agree(blunders: dict[int, RoundAnalysis]) -> None:
    for number, analysed in blunders.items():
        cards = number if number <= 8 else 1
        kinds = [(d.kind, d.index) for d in analysed.decisions]
        assert kinds == [("bid", i) for i in range(4)] + [("play", i) for i in range(4 * cards)]
        for d in analysed.decisions:
            assert d.round == number
            assert d.loss >= 0.0 and d.margin >= 0.0
            assert math.isclose(d.loss, d.expected_best - d.expected_played, abs_tol=1e-9)
            assert d.best in dict(d.options) and d.played in dict(d.options)
            assert (d.loss == 0.0) == (d.best == d.played)
            if d.mark is not None:
                assert d.loss - d.margin > 0
                assert d.mark == next(name for name, threshold in MARKS if d.loss >= threshold)
        for seat in range(4):
            assert math.isclose(analysed.loss[seat], sum(d.loss for d in analysed.decisions if d.seat == seat))
            bid = next(d for d in analysed.decisions if d.kind == "bid" and d.seat == seat)
            assert analysed.par_bids[seat] == int(bid.best)


def test_the_same_seed_gives_the_same_analysis_and_another_the_same_blunders(record: dict[str, Any]) -> None:
    for number, index in ((2, 0), (8, 27)):
        first = analyse_round(record, number, seed=5, worlds=WORLDS)
        assert analyse_round(record, number, seed=5, worlds=WORLDS).as_json() == first.as_json()
        other = analyse_round(record, number, seed=6, worlds=WORLDS)
        assert find(first, "play", index).mark in ("error", "blunder")
        assert find(other, "play", index).mark in ("error", "blunder")
        assert find(other, "play", index).best == find(first, "play", index).best
    # the seed draws the worlds: another one gives other estimates where the worlds matter (the bids)
    assert other.as_json() != first.as_json()
    # a round analysed alone is the game's analysis of that round, whatever the order
    whole = analyse_game(record, seed=5, worlds=8)
    assert [r.number for r in whole] == list(range(1, 9))
    assert whole[3].as_json() == analyse_round(record, 4, seed=5, worlds=8).as_json()
    assert whole[7].as_json() == analyse_round(record, 8, seed=5, worlds=8).as_json()


def test_progress_is_reported_round_by_round(record: dict[str, Any]) -> None:
    short = {**record, "rounds": record["rounds"][:3]}
    seen: list[tuple[int, int]] = []
    analyse_game(short, seed=1, worlds=4, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_json_round_trip(blunders: dict[int, RoundAnalysis]) -> None:
    analysed = blunders[8]
    data = analysed.as_json()
    assert set(data) == {"number", "par_bids", "loss", "decisions"}
    assert set(data["decisions"][0]) == {
        *("round", "kind", "index", "seat", "played", "best", "expected_played", "expected_best"),
        *("loss", "margin", "forced", "mark", "options"),
    }
    back = RoundAnalysis.from_json(data)
    assert back.as_json() == data
    assert [d.mark for d in back.decisions] == [d.mark for d in analysed.decisions]
    d = find(back, "play", 27)
    assert dict(d.options) == {"1c": 15.0, "5o": -5.0} and d.loss == 20.0
    with pytest.raises(ValueError):
        Decision.from_json({**data["decisions"][0], "kind": "shuffle"})


def test_accuracy_and_summary() -> None:
    def dec(seat: int, loss: float, forced: bool = False, mark: str | None = None) -> Decision:
        return Decision(1, "play", 0, seat, "1o", "1o", 0.0, loss, loss, 0.0, forced, mark, (("1o", 0.0),))

    ds = [dec(0, 0.0), dec(0, 10.0, mark="blunder"), dec(0, 0.0, forced=True), dec(1, 2.5, mark="imprecision")]
    assert accuracy([]) is None and accuracy([dec(0, 0.0, forced=True)]) is None
    assert accuracy(ds[:3]) == pytest.approx((100.0 + 100.0 * math.exp(-10.0 / ACCURACY_SCALE)) / 2)
    rounds = [RoundAnalysis(1, (None, None, None), (10.0, 2.5, 0.0), tuple(ds))]
    seats = summary(rounds, 3)["seats"]
    assert seats[0] == {
        "seat": 0,
        "decisions": 2,
        "accuracy": round(50 + 50 * math.exp(-1), 2),
        "average_loss": 5.0,
        "loss": 10.0,
        "marks": {"imprecision": 0, "error": 0, "blunder": 1},
    }
    assert seats[1]["marks"] == {"imprecision": 1, "error": 0, "blunder": 0} and seats[1]["decisions"] == 1
    assert seats[2] == {
        "seat": 2,
        "decisions": 0,
        "accuracy": None,
        "average_loss": None,
        "loss": 0.0,
        "marks": {"imprecision": 0, "error": 0, "blunder": 0},
    }


def test_broken_records_and_missing_rounds_are_refused(record: dict[str, Any]) -> None:
    broken = {**record, "rounds": [dict(record["rounds"][0], bids=[0, 0, 0, 1])] + record["rounds"][1:]}
    with pytest.raises(RecordError):
        rounds_in(broken)
    with pytest.raises(RecordError):
        analyse_round(broken, 2, seed=1, worlds=4)
    for number in (0, 9):
        with pytest.raises(ValueError):
            analyse_round(record, number, seed=1, worlds=4)
    with pytest.raises(ValueError):
        analyse_round(record, 1, seed=1, worlds=0)


def test_the_docstring_examples() -> None:
    failed, attempted = doctest.testmod(analysis, verbose=False)
    assert attempted > 0 and failed == 0


# -- secrecy --------------------------------------------------------------------------------


def test_each_search_sees_only_the_deciding_seats_view(record: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[SeatView, list[list[Card]]]] = []  # every view built, with the hands then
    searched: list[SeatView] = []
    real_view = analysis.seat_view

    def spy_view(game: GameState, seat: int | None, *, reasons: bool = True) -> SeatView:
        view = real_view(game, seat, reasons=reasons)
        made.append((view, [list(h) for h in game.hands]))
        return view

    class SpySearch(Search):
        def __init__(self, view: Any, *args: Any, **kwargs: Any) -> None:
            assert isinstance(view, SeatView)
            searched.append(view)
            super().__init__(view, *args, **kwargs)

    monkeypatch.setattr(analysis, "seat_view", spy_view)
    monkeypatch.setattr(analysis, "Search", SpySearch)
    analysed = analyse_round(record, 8, seed=3, worlds=4)
    chosen = [d for d in analysed.decisions if not d.forced]
    assert len(searched) == len(chosen) > 10
    hands_of = {id(view): hands for view, hands in made}
    for view, d in zip(searched, chosen, strict=True):
        assert view.seat == d.seat and view.turn == d.seat
        assert view.seat is not None and id(view) in hands_of
        hands = hands_of[id(view)]
        others = {card for seat, hand in enumerate(hands) if seat != view.seat for card in hand}
        # the trump card of this round is the dealer's last card, shown to everyone
        assert view.visible_cards() & others <= {Card.parse("5e")}
        assert set(view.hand) == set(hands[view.seat])
        assert not view.seen


def test_an_indias_bid_is_searched_without_the_seats_own_card(monkeypatch: pytest.MonkeyPatch) -> None:
    record = self_played(Rules.of("indias"), 4, seed=26)
    number = round_of(record, "indias")
    searched: list[SeatView] = []

    class SpySearch(Search):
        def __init__(self, view: Any, *args: Any, **kwargs: Any) -> None:
            searched.append(view)
            super().__init__(view, *args, **kwargs)

    monkeypatch.setattr(analysis, "Search", SpySearch)
    analysed = analyse_round(record, number, seed=3, worlds=4)
    hands = record["rounds"][number - 1]["hands"]
    assert len(searched) == sum(1 for d in analysed.decisions if not d.forced) > 0
    for view in searched:
        assert view.seat is not None and view.hand == () and view.hidden == 1
        own = Card.parse(hands[view.seat][0])
        assert own not in view.visible_cards()
        assert {p.card for p in view.seen} == {Card.parse(h[0]) for s, h in enumerate(hands) if s != view.seat}


# -- every preset -------------------------------------------------------------------------------


def self_played(rules: Rules, players: int, seed: int) -> dict[str, Any]:
    game = GameState.new(players, seed=seed, rules=rules)
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        else:
            game.apply(default_action(game))
    return export_record(game)


def legal_steps(record: dict[str, Any], number: int) -> list[tuple[str, int, int, list[str], bool]]:
    """Round ``number`` replayed: each decision's kind, index, seat, legal options (by name) and whether it is
    an indias card (nobody's choice)."""
    rules = Rules.from_json(record["rules"]) if "rules" in record else CLASICA
    game = GameState(record["players"], record["first_dealer"], rules=rules)
    steps: list[tuple[str, int, int, list[str], bool]] = []
    for n, entry in enumerate(record["rounds"][:number], start=1):
        game.deal(
            [[Card.parse(c) for c in h] for h in entry["hands"]],
            Card.parse(entry["trump_card"]) if entry["trump_card"] else None,
        )
        queue: list[tuple[str, int, Action]] = [
            ("blind_bid", i, Bid(b)) for i, b in enumerate(entry.get("blind_bids") or [])
        ]
        bids: list[tuple[str, int, Action]] = [("bid", i, Bid(b)) for i, b in enumerate(entry["bids"])]
        if entry.get("trump_suit") is None:
            queue += bids
        else:
            trump: list[tuple[str, int, Action]] = [("trump", 0, ChooseTrump(Suit.parse(entry["trump_suit"])))]
            queue += [*trump, *bids] if entry.get("blind_bids") is not None else [*bids, *trump]
        queue += [("play", i, Play(Card.parse(c))) for i, c in enumerate(entry["plays"])]
        for kind, index, action in queue:
            seat = game.turn
            assert seat is not None
            if n == number:
                view = seat_view(game, seat, reasons=False)
                names = [
                    str(a.amount) if isinstance(a, Bid) else a.suit.value if isinstance(a, ChooseTrump) else str(a.card)
                    for a in view.legal
                ]
                if not view.plays_hidden:
                    assert sorted(map(str, view.legal)) == sorted(map(str, game.legal_actions()))
                steps.append((kind, index, seat, names, view.plays_hidden))
            game.apply(action, seat)
    return steps


def check_round(record: dict[str, Any], number: int, worlds: int = 6) -> RoundAnalysis:
    analysed = analyse_round(record, number, seed=2, worlds=worlds)
    steps = [s for s in legal_steps(record, number) if not s[4]]
    assert [(d.kind, d.index, d.seat) for d in analysed.decisions] == [(k, i, s) for k, i, s, _, _ in steps]
    for d, (_, _, _, names, _) in zip(analysed.decisions, steps, strict=True):
        assert [name for name, _ in d.options] == names  # every legal option, in legal order
        assert d.loss >= 0.0 and d.margin >= 0.0
        assert d.forced == (len(names) == 1)
        assert all(math.isfinite(v) for _, v in d.options)
    return analysed


def round_of(record: dict[str, Any], kind: str, cards: int | None = None) -> int:
    return next(
        n
        for n, entry in enumerate(record["rounds"], start=1)
        if entry.get("kind", "normal") == kind and (cards is None or len(entry["hands"][0]) >= cards)
    )


def test_indias_subastados_and_oros_rounds() -> None:
    record = self_played(Rules.of("indias"), 4, seed=21)
    indias = check_round(record, round_of(record, "indias"))
    assert [d.kind for d in indias.decisions] == ["bid"] * 4  # the cards are nobody's choice
    assert all(len(d.options) >= 1 for d in indias.decisions)
    subastados = check_round(record, round_of(record, "subastados"), worlds=3)
    kinds = [d.kind for d in subastados.decisions]
    assert kinds[:5] == ["blind_bid"] * 4 + ["trump"] and kinds[5:9] == ["bid"] * 4
    assert {name for name, _ in subastados.decisions[4].options} == {"o", "c", "e", "b"}
    assert all(b is not None for b in subastados.par_bids)
    check_round(record, round_of(record, "oros"), worlds=3)


def test_bazas_french_deck() -> None:
    record = self_played(Rules.of("bazas"), 5, seed=22)
    analysed = check_round(record, 2)
    assert any(name.endswith(("S", "H", "D", "C")) for d in analysed.decisions for name, _ in d.options)


def test_se_dobla_and_its_one_card_forehead_rounds() -> None:
    record = self_played(Rules.of("se-dobla"), 4, seed=23)
    check_round(record, round_of(record, "normal", cards=5), worlds=4)
    forehead = self_played(Rules.of("se-dobla", schedule="una-mas", forehead=True), 3, seed=24)
    analysed = check_round(forehead, 1)
    assert [d.kind for d in analysed.decisions] == ["bid"] * 3
    assert RoundKind(forehead["rounds"][0]["kind"]) is RoundKind.INDIAS


def test_clasica_subasta_and_six_seats() -> None:
    record = self_played(CLASICA, 6, seed=25)
    analysed = check_round(record, 9, worlds=3)  # the first subasta: bids, then the winner's trump
    assert [d.kind for d in analysed.decisions][:6] == ["bid"] * 5 + ["trump"]
    resting = dealer_of(record["first_dealer"], 9, 6)
    assert analysed.par_bids[resting] is None and analysed.loss[resting] == 0.0
    assert all(d.seat != resting for d in analysed.decisions)
