"""pocha-bot/1 (shared/BOT-PROTOCOL.md): view documents, the bot program, and hosting outside bots.

The bot is driven by ``bot_driver``, an independent implementation of the rules that does not import
the engine: every answer is checked against the driver's own legality rules and timed.
"""

import copy
import dataclasses
import json
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from games.engine import SUITS, Bid, Card, ChooseTrump, GameState, Phase, Play, default_action, seat_view
from games.engine.levels import BUDGETS, decide
from games.engine.protocol import FORMAT, ProtocolBot, answer, view_from_json, view_to_json

from .bot_driver import GARBAGE, bot_command, drive, play_game

REPO = Path(__file__).resolve().parents[2]
#: The repository's copy of shared/BOT-PROTOCOL.md (tests/fixtures/README.md): the test fails without it.
SPEC = REPO / "tests" / "fixtures" / "BOT-PROTOCOL.md"
MARGIN_MS = 250.0  # process noise on top of a level's hard cap: pipes, JSON, a busy machine

# The example of BOT-PROTOCOL.md, verbatim (as mended: seat 3 to bid, 6e and 7b in the hand).
SPEC_EXAMPLE = {
    "format": "pocha-view/1",
    "players": 4,
    "seat": 3,
    "scores": [30, 12, -5, 20],
    "round": {"number": 9, "phase": "subasta", "cards": 8, "dealer": 1, "resting": None},
    "hand": ["1o", "3o", "12c", "7c", "5e", "6e", "11b", "7b"],
    "trump_card": None,
    "trump_suit": None,
    "multiplier": None,
    "bids": [[2, 3]],
    "auction_winner": None,
    "tricks": [],
    "act": "bid",
    "legal": [0, 1, 2, 3, 4, 5, 6, 7, 8],
}
# The two slips of the example's first version, each refused: with dealer 1 seat 2 bids first, so after
# [[2, 3]] it is seat 3's turn, not seat 2's; and the 2s and 4s are not in a 4-player deck (2e, 4b).
SLIPPED_SEAT = 2
SLIPPED_HAND = ["1o", "3o", "12c", "7c", "5e", "2e", "11b", "4b"]


def positions(players, seed, every=1):
    """(game, view) at every ``every``-th decision of a game played by the default player."""
    game = GameState.new(players, seed=seed)
    n = 0
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
            continue
        if n % every == 0:
            yield game, seat_view(game, game.turn)
        n += 1
        game.apply(default_action(game))


def find_doc(players, predicate, seed=5):
    for _, view in positions(players, seed):
        doc = view_to_json(view)
        if predicate(doc):
            return doc
    raise AssertionError("no such position")


def mid_trick(doc):
    """A play decision with a trick in progress (not led by this seat) after at least one whole trick."""
    return doc["act"] == "play" and len(doc["tricks"]) > 1 and doc["tricks"][-1]["winner"] is None


# -- the round trip ------------------------------------------------------------------------------------

COMPARED = [
    f.name
    for f in dataclasses.fields(seat_view(GameState.new(4, seed=1), 0))
    if f.name not in ("names", "results", "winners", "reasons")
]


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_round_trip_gives_the_same_view_and_the_same_decision(players):
    checked = {"bid": 0, "trump": 0, "play": 0}
    for seed in (1, 2):
        for _, view in positions(players, seed):
            doc = view_to_json(view)
            assert json.loads(json.dumps(doc)) == doc
            back = view_from_json(doc)
            assert view_to_json(back) == doc
            for name in COMPARED:
                assert getattr(back, name) == getattr(view, name), name
            assert decide(back, "facil") == decide(view, "facil")
            checked[doc["act"]] += 1
    assert checked["bid"] > 100 and checked["trump"] >= players and checked["play"] > 500


def test_view_document_holds_exactly_the_spec_keys():
    doc = find_doc(4, mid_trick)
    assert list(doc) == list(SPEC_EXAMPLE)
    assert set(doc["round"]) == {"number", "phase", "cards", "dealer", "resting"}
    for trick in doc["tricks"]:
        assert set(trick) == {"leader", "cards", "winner"}
    assert doc["tricks"][-1]["winner"] is None and doc["tricks"][0]["winner"] in range(4)
    assert all(isinstance(pair, list) and len(pair) == 2 for pair in doc["bids"])


def test_scores_are_totals_before_this_round_and_bids_in_bidding_order():
    for game, view in positions(5, 9, every=7):
        doc = view_to_json(view)
        assert doc["scores"] == [sum(r.points[s] for r in game.results) for s in range(5)]
        assert [s for s, _ in doc["bids"]] == list(game.order[: len(doc["bids"])])
        assert [a for _, a in doc["bids"]] == game.bids_made


def test_eight_card_subida_trump_card_stays_in_the_dealers_hand():
    for players in (4, 6):
        doc = find_doc(players, lambda d: d["round"]["number"] == 8 and d["act"] == "bid")
        receiver = doc["round"]["dealer"] if players < 6 else (doc["round"]["dealer"] - 1) % players
        game_doc = find_doc(
            players, lambda d: d["round"]["number"] == 8 and d["seat"] == receiver and d["act"] == "bid"
        )
        assert game_doc["trump_card"] in game_doc["hand"]
        view_from_json(game_doc)
        # another seat cannot hold it
        other = find_doc(players, lambda d: d["round"]["number"] == 8 and d["seat"] != receiver and d["act"] == "bid")
        bad = copy.deepcopy(other)
        bad["hand"][0] = other["trump_card"]
        with pytest.raises(ValueError, match="dealt last"):
            view_from_json(bad)


def test_six_players_resting_dealer():
    doc = find_doc(6, lambda d: d["act"] == "play")
    assert doc["round"]["resting"] == doc["round"]["dealer"]
    view = view_from_json(doc)
    assert view.hand_sizes[view.resting] == 0 and view.resting not in view.order
    bad = copy.deepcopy(doc)
    bad["seat"] = doc["round"]["dealer"]
    with pytest.raises(ValueError, match="resting dealer"):
        view_from_json(bad)
    bad = copy.deepcopy(doc)
    bad["round"]["resting"] = None
    with pytest.raises(ValueError, match="resting"):
        view_from_json(bad)


def test_an_empty_trick_in_progress_is_accepted():
    doc = find_doc(4, lambda d: d["act"] == "play" and d["tricks"] and d["tricks"][-1]["winner"] is not None)
    view = view_from_json(doc)
    doc["tricks"].append({"leader": doc["seat"], "cards": [], "winner": None})
    assert view_from_json(doc) == view
    doc["tricks"][-1]["leader"] = (doc["seat"] + 1) % 4
    with pytest.raises(ValueError, match="led by seat"):
        view_from_json(doc)


# -- strict reading: what is refused, and why ----------------------------------------------------------


def _set(path, value):
    def change(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _delete(key):
    def change(doc):
        del doc[key]

    return change


def _dup_hand(doc):
    doc["hand"][1] = doc["hand"][0]


def _played_card_in_hand(doc):
    doc["hand"][0] = doc["tricks"][0]["cards"][0]


def _turned_card_in_hand(doc):
    doc["hand"][0] = doc["trump_card"]


def _drop_hand_card(doc):
    doc["hand"].pop()
    doc["legal"] = [c for c in doc["legal"] if c in doc["hand"]] or doc["legal"]


def _wrong_winner(doc):
    doc["tricks"][0]["winner"] = (doc["tricks"][0]["winner"] + 1) % doc["players"]


def _next_seat(doc):
    doc["seat"] = (doc["seat"] + 1) % doc["players"]


def _illegal_in_legal(doc):
    doc["legal"].append(next(c for c in doc["hand"] if c not in doc["legal"]))


def _legal_missing(doc):
    doc["legal"].pop()


def _legal_twice(doc):
    doc["legal"].append(doc["legal"][0])


def _bid_by_wrong_seat(doc):
    doc["bids"][0][0] = (doc["bids"][0][0] + 1) % doc["players"]


PLAY_CASES = [
    ("unknown format", _set(["format"], "pocha-view/3"), "unknown format"),
    ("missing key", _delete("legal"), "lacks 'legal'"),
    ("unknown key", _set(["extra"], 1), "unknown key"),
    ("players out of range", _set(["players"], 7), "players must be from 3 to 6"),
    ("players as text", _set(["players"], "4"), "players must be a whole number"),
    ("seat out of range", _set(["seat"], 4), "seat must be from 0 to 3"),
    ("seat as a boolean", _set(["seat"], True), "whole number"),
    ("scores short", _set(["scores"], [0, 0, 0]), "scores must have 4"),
    ("score not a number", _set(["scores", 0], 1.5), "scores\\[0\\]"),
    ("round phase", _set(["round", "phase"], "subasta"), "round"),
    ("round cards", _set(["round", "cards"], 8), "deals"),
    ("resting at 4", _set(["round", "resting"], 0), "resting"),
    ("not a card", _set(["hand", 0], "13o"), "not a card"),
    ("card not in the deck", _set(["hand", 0], "2o"), "not in the 4-player deck"),
    ("card as a number", _set(["hand", 0], 12), "must be a card"),
    ("card twice in the hand", _dup_hand, "in two places"),
    ("played card in the hand", _played_card_in_hand, "in two places"),
    ("turned trump card in the hand", _turned_card_in_hand, "in two places"),
    ("hand size", _drop_hand_card, "must hold"),
    ("trump suit", _set(["trump_suit"], "x"), "not a suit"),
    ("multiplier", _set(["multiplier"], 7), "multiplier must be"),
    ("trick winner", _wrong_winner, "is won by seat"),
    ("trick cards not a list", _set(["tricks", 0, "cards"], "1o"), "must be a list"),
    ("seat not to move", _next_seat, "not seat .*'s turn"),
    ("legal not a list", _set(["legal"], "1o"), "legal must be a list"),
    ("legal empty", _set(["legal"], []), "legal is empty"),
    ("legal lists an illegal card", _illegal_in_legal, "rules do not allow"),
    ("legal leaves one out", _legal_missing, "leaves out"),
    ("legal twice", _legal_twice, "twice"),
    ("bid by the wrong seat", _bid_by_wrong_seat, "bids\\[0\\] is by seat"),
    ("bids not pairs", _set(["bids", 0], 3), "pair"),
    ("auction winner in a normal round", _set(["auction_winner"], 0), "auction_winner must be null"),
    ("act", _set(["act"], "pass"), "act must be"),
    ("act trump in a normal round", _set(["act"], "trump"), "only in auction rounds"),
]


def _play_doc():
    """A 4-player normal round, mid-trick, with an illegal card in the hand to list."""
    return find_doc(
        4,
        lambda d: (
            mid_trick(d)
            and d["round"]["phase"] != "subasta"
            and d["round"]["cards"] < 8
            and len(d["legal"]) < len(d["hand"]) > 2
            and d["multiplier"] == 1
        ),
    )


@pytest.mark.parametrize("name, change, message", PLAY_CASES, ids=[c[0] for c in PLAY_CASES])
def test_malformed_or_inconsistent_view_is_refused(name, change, message):
    doc = _play_doc()
    view_from_json(doc)
    change(doc)
    with pytest.raises(ValueError, match=message):
        view_from_json(doc)


def test_auction_views_are_checked():
    bid = find_doc(4, lambda d: d["round"]["phase"] == "subasta" and d["act"] == "bid" and d["bids"])
    trump = find_doc(4, lambda d: d["act"] == "trump")
    assert view_from_json(bid).legal == tuple(Bid(n) for n in range(9))
    assert set(view_from_json(trump).legal) == {ChooseTrump(s) for s in SUITS}
    for doc, change, message in [
        (bid, _set(["trump_card"], "1o"), "null in an auction"),
        (bid, _set(["trump_suit"], "o"), "blind"),
        (bid, _set(["legal"], list(range(10))), "legal\\[9\\] must be from 0 to 8"),
        (trump, _set(["auction_winner"], None), "auction_winner must be"),
        (trump, _set(["auction_winner"], (trump["auction_winner"] + 1) % 4), "auction_winner must be"),
        (trump, _set(["legal"], ["o", "c", "e"]), "leaves out"),
        (trump, _set(["trump_suit"], "o"), "already chosen"),
        (trump, _set(["tricks"], [{"leader": 0, "cards": ["1o"], "winner": None}]), "before the bidding"),
    ]:
        bad = copy.deepcopy(doc)
        change(bad)
        with pytest.raises(ValueError, match=message):
            view_from_json(bad)


def test_last_bidder_forbidden_bid_is_derived_and_enforced():
    doc = find_doc(
        4,
        lambda d: (
            d["act"] == "bid"
            and d["round"]["phase"] == "bajada"
            and len(d["bids"]) == 3
            and d["round"]["cards"] - sum(a for _, a in d["bids"]) >= 0
        ),
    )
    forbidden = doc["round"]["cards"] - sum(a for _, a in doc["bids"])
    view = view_from_json(doc)
    assert view.forbidden_bid == forbidden and Bid(forbidden) not in view.legal
    bad = copy.deepcopy(doc)
    bad["legal"] = sorted(bad["legal"] + [forbidden])
    with pytest.raises(ValueError, match="rules do not allow"):
        view_from_json(bad)


def test_random_damage_never_raises_anything_but_value_error():
    rng = random.Random(4)
    docs = [d for p in (3, 6) for _, v in positions(p, 2, every=23) for d in [view_to_json(v)]]
    junk = [None, True, -1, 0, 99, 1.5, "", "1o", "x" * 100, [], [[]], {}, {"a": 1}, [1, 2], ["1o"]]
    refused = 0
    for _ in range(1500):
        doc = copy.deepcopy(rng.choice(docs))
        # pick a random place in the document and put junk there
        target, key = doc, rng.choice(list(doc))
        while isinstance(target[key], (dict, list)) and target[key] and rng.random() < 0.6:
            target = target[key]
            key = rng.choice(list(target)) if isinstance(target, dict) else rng.randrange(len(target))
        target[key] = copy.deepcopy(rng.choice(junk))
        try:
            view_from_json(doc)
        except ValueError:
            refused += 1
    assert refused > 1000


# -- the spec's example --------------------------------------------------------------------------------


def test_spec_example_is_the_one_in_bot_protocol_md():
    block = re.search(r"```json\n(.*?)```", SPEC.read_text(encoding="utf-8"), re.S)
    assert block is not None
    assert json.loads(block.group(1)) == SPEC_EXAMPLE


def test_spec_example_is_accepted():
    view = view_from_json(SPEC_EXAMPLE)
    assert view.seat == 3 and view.phase is Phase.BIDDING and view.number == 9
    assert view.order == (2, 3, 0, 1) and view.bids == (None, None, 3, None)
    assert view.totals == (30, 12, -5, 20) and view.trump_suit is None and view.forbidden_bid is None
    assert view.legal == tuple(Bid(n) for n in range(9))
    reply = answer(json.dumps(SPEC_EXAMPLE), "facil", random.Random(1))
    assert set(reply) <= {"bid", "ms", "info"} and reply["bid"] in range(9)
    # each slip of the example's first version alone is refused, saying what is wrong
    with pytest.raises(ValueError, match="2e is not in the 4-player deck"):
        view_from_json({**SPEC_EXAMPLE, "hand": SLIPPED_HAND})
    with pytest.raises(ValueError, match="not seat 2's turn: seat 3 is to bid"):
        view_from_json({**SPEC_EXAMPLE, "seat": SLIPPED_SEAT})


# -- the bot program: every level against the independent driver --------------------------------------


def check_run(report, level, *, games=None, min_answers=1):
    cap = BUDGETS[level][1] + MARGIN_MS
    assert report.returncode == 0, report.stderr
    assert "Traceback" not in report.stderr, report.stderr
    assert not report.illegal, report.summary()
    assert not report.errors, report.summary()
    assert not report.garbage_not_refused, report.summary()
    assert len(report.answers) >= min_answers
    if games is not None:
        assert report.games == games
    slow = sorted((a.wall_ms for a in report.answers), reverse=True)[:5]
    assert report.max_ms <= cap, f"{level}: slowest answers {slow} ms, cap {cap} ms"
    kinds = {kind for kind, _ in report.garbage}
    assert {kind for kind, _ in GARBAGE} <= kinds
    for a in report.answers:
        assert isinstance(a.bot_ms, (int, float)) and 0 <= a.bot_ms <= a.wall_ms + 1


def test_facil_plays_whole_games_at_every_table_size():
    report = drive(bot_command("facil", seed=1), players=[3, 4, 5, 6], games=2, seed=11, garbage_every=7)
    print("\n" + report.summary())
    check_run(report, "facil", games=8, min_answers=8 * 400)
    acts = {a.act for a in report.answers}
    assert acts == {"bid", "trump", "play"}
    assert {a.players for a in report.answers} == {3, 4, 5, 6}


def test_normal_plays_a_whole_game():
    report = drive(bot_command("normal", seed=2), players=4, games=1, seed=12, garbage_every=11)
    print("\n" + report.summary())
    check_run(report, "normal", games=1, min_answers=400)


@pytest.mark.parametrize("players, decisions", [(4, 60), (6, 30)])
def test_dificil_answers_in_several_kinds_of_round(players, decisions):
    # the 8-card subida round (trump card last dealt), the first auction, a middle bajada round
    rounds = [8, 9, 9 + players + 2]
    report = drive(
        bot_command("dificil", seed=3),
        players=players,
        games=1,
        seed=13,
        rounds=rounds,
        sample=0.6,
        max_decisions=decisions,
        garbage_every=2,
    )
    print("\n" + report.summary())
    check_run(report, "dificil", min_answers=decisions)
    assert len({a.round for a in report.answers}) >= 2


def test_driver_agrees_with_the_engine_on_whole_games():
    """The driver's rules and the engine's agree: every view it writes reads back, with its legal choices."""
    rng = random.Random(7)
    views = 0

    def decide_in_process(doc):
        nonlocal views
        view = view_from_json(doc)  # raises if the two readings of the rules disagree
        views += 1
        back = view_to_json(view)
        assert sorted(back["hand"]) == sorted(doc["hand"])  # the engine shows a hand sorted
        assert {**back, "hand": doc["hand"]} == doc
        return rng.choice(doc["legal"])

    for players in (3, 4, 5, 6):
        play_game(players, rng, decide_in_process)
    assert views > 1500


def test_driver_is_independent_of_the_engine_and_runs_as_a_script():
    code = (
        "import sys; sys.path.insert(0, 'tests/engine'); import bot_driver; "
        "print(sorted(m for m in sys.modules if m.startswith('games')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stdout + proc.stderr
    proc = subprocess.run(
        [
            sys.executable,
            "tests/engine/bot_driver.py",
            "--level",
            "facil",
            "--games",
            "1",
            "--players",
            "3",
            "--seed",
            "1",
            "--garbage-every",
            "5",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "illegal: 0  errors: 0" in proc.stdout and "answers:" in proc.stdout and "max" in proc.stdout


def run_bot(*args, stdin):
    proc = subprocess.run(
        [sys.executable, "-m", "games.engine", "bot", *args], cwd=REPO, input=stdin, capture_output=True, timeout=120
    )
    assert b"Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def test_stream_answers_every_non_blank_line_and_exits_0():
    doc = find_doc(4, mid_trick)
    good = json.dumps(doc).encode()
    lines = [
        good,
        b"",
        b"   ",
        b"\xff\xfe not utf-8",
        b"[" * 10_000 + b"]" * 10_000,
        b"{" * 50_000,
        b"null",
        b'"a string"',
        b"{}",
        good,
        json.dumps({**doc, "seat": (doc["seat"] + 1) % 4}).encode(),
        good,
    ]
    code, out, _ = run_bot("--level", "facil", "--seed", "3", stdin=b"\n".join(lines) + b"\n")
    assert code == 0
    kinds = ["play" if set(o) <= {"play", "ms", "info"} else "error" if set(o) == {"error"} else o for o in out]
    assert kinds == ["play"] + ["error"] * 6 + ["play", "error", "play"]
    assert "nested too deeply" in out[2]["error"] and "UTF-8" in out[1]["error"]
    assert "not seat" in out[8]["error"]
    for reply in (out[0], out[7], out[9]):
        assert reply["play"] in doc["legal"] and isinstance(reply["ms"], float)


def test_stream_answers_in_order_and_at_end_of_input_without_newline():
    docs = [view_to_json(v) for _, v in positions(3, 4, every=37)][:12]
    stdin = "\n".join(json.dumps(d) for d in docs).encode()  # no newline after the last line
    code, out, _ = run_bot("--level", "normal", stdin=stdin)
    assert code == 0 and len(out) == len(docs)
    for doc, reply in zip(docs, out):
        assert reply[doc["act"]] in doc["legal"], (doc, reply)


def test_bad_level_or_budget_exits_2():
    assert run_bot("--level", "imposible", stdin=b"")[0] == 2
    assert run_bot("--level", "normal", "--budget-ms", "-5", stdin=b"")[0] == 2
    code, out, _ = run_bot("--level", "difícil", "--budget-ms", "20", stdin=b"")
    assert code == 0 and out == []


def test_an_answer_is_always_legal_even_when_the_bot_is_not(monkeypatch):
    import games.engine.levels as levels

    doc = find_doc(4, lambda d: d["act"] == "play" and len(d["legal"]) < len(d["hand"]))
    stranger = next(c for c in doc["hand"] if c not in doc["legal"])
    monkeypatch.setattr(levels, "decide", lambda view, level, **kw: Play(Card.parse(stranger)))
    reply = answer(json.dumps(doc), "normal", random.Random(1))
    assert reply["play"] == doc["legal"][0] and "not legal" in reply["info"]

    def broken(view, level, **kw):
        raise RuntimeError("search exploded")

    monkeypatch.setattr(levels, "decide", broken)
    reply = answer(json.dumps(doc), "dificil", random.Random(1))
    assert reply["play"] == doc["legal"][0] and "search exploded" in reply["info"]


def test_answer_reports_errors_and_never_raises():
    rng = random.Random(1)
    for line in [
        "",
        "{",
        "[]",
        "1e999",
        "9" * 5000,
        '{"format": "pocha-view/1"}',
        b"\xc3\x28",
        "[" * 100_000,
        json.dumps({**SPEC_EXAMPLE, "legal": []}),
    ]:
        reply = answer(line, "facil", rng)
        assert set(reply) == {"error"} and reply["error"], (line[:20], reply)


# -- hosting an outside bot ----------------------------------------------------------------------------


def test_protocol_bot_plays_our_own_bot_legally():
    with ProtocolBot(f"{sys.executable} -m games.engine bot --level facil --seed 1", cwd=str(REPO)) as bot:
        count = 0
        for _game, view in positions(5, 3, every=5):
            action, info = bot.decide(view)
            assert action in view.legal, info
            assert bot.last_ms is not None and bot.last_reported_ms is not None
            count += 1
        assert count > 100


FAKE_BOT = textwrap.dedent("""
    import json, sys, time
    n = 0
    for line in sys.stdin:
        n += 1
        view = json.loads(line)
        key = view["act"]
        if n == 1: print("hello", flush=True)
        elif n == 2: print(json.dumps({"error": "no thanks"}), flush=True)
        elif n == 3: print(json.dumps({key: 99}), flush=True)
        elif n == 4: print(json.dumps({key: "zz"}), flush=True)
        elif n == 5: print(json.dumps({"bid": 1, "play": "1o"}), flush=True)
        elif n == 6:
            time.sleep(1.0)
            print(json.dumps({key: view["legal"][0]}), flush=True)
        elif n == 7: print(json.dumps({key: view["legal"][-1], "info": "late but fine", "ms": 3}), flush=True)
        else: break
""")


def test_protocol_bot_refuses_bad_answers_and_keeps_in_step():
    game = GameState.new(4, seed=2)
    view = seat_view(game, game.turn)
    assert view.phase is Phase.BIDDING
    bot = ProtocolBot([sys.executable, "-c", FAKE_BOT], timeout=0.3)
    try:
        results = [bot.decide(view) for _ in range(5)]
        assert [a for a, _ in results] == [None] * 5
        reasons = [r for _, r in results]
        assert "not a JSON answer" in reasons[0]
        assert "no thanks" in reasons[1]
        assert "illegal answer: bid 99" in reasons[2]
        assert "malformed" in reasons[3]
        assert "exactly one" in reasons[4]
        action, reason = bot.decide(view)  # 6: sleeps past the timeout
        assert action is None and "no answer within 0.3 s" in reason
        bot.timeout = 5.0
        action, info = bot.decide(view)  # 7: the late answer to 6 is skipped
        assert action == view.legal[-1] and info == "late but fine" and bot.last_reported_ms == 3
        action, reason = bot.decide(view)  # 8: the bot exits
        assert action is None and "exited" in reason
        assert bot.decide(view)[0] is None
    finally:
        bot.close()
    assert bot._proc.returncode == 0


def test_protocol_bot_that_never_answers_is_timed_out_and_killed():
    bot = ProtocolBot([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.2)
    game = GameState.new(3, seed=1)
    view = seat_view(game, game.turn)
    action, reason = bot.decide(view)
    assert action is None and "no answer" in reason
    bot.close(grace=0.2)
    assert bot._proc.returncode is not None


def test_view_to_json_needs_the_seat_to_act():
    game = GameState.new(4, seed=1)
    other = (game.turn + 1) % 4
    with pytest.raises(ValueError):
        view_to_json(seat_view(game, other))
    with pytest.raises(ValueError):
        view_to_json(seat_view(game, None))
    assert view_to_json(seat_view(game, game.turn))["format"] == FORMAT
