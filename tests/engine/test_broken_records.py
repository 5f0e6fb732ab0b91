"""Broken records never crash the replay, and the first broken rule is located exactly."""

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engine import (
    ALL_CARDS,
    Card,
    Suit,
    export_record,
    legal_plays,
    load_game,
    play_game,
    replay_line,
    trick_winner,
)
from games.engine.schedule import active_order, dealer_of

KINDS = {"deal", "bid", "trump", "play"}

BASES = {players: export_record(play_game(players, 100 + players)) for players in (3, 4, 5, 6)}


def base(players):
    return copy.deepcopy(BASES[players])


def assert_well_formed(record):
    result = replay_line(record)
    assert isinstance(result, tuple) and len(result) == 2
    line, ok = result
    json.dumps(line)
    if ok:
        assert set(line) == {"rounds", "totals", "complete", "winners"}
        assert isinstance(line["totals"], list)
    else:
        assert set(line) == {"error"}
        error = line["error"]
        assert set(error) == {"round", "kind", "index", "message"}
        assert type(error["round"]) is int and error["round"] >= 1
        assert error["kind"] in KINDS
        assert type(error["index"]) is int and error["index"] >= 0
        assert isinstance(error["message"], str) and error["message"]
    return line, ok


def error_at(record):
    line, ok = assert_well_formed(record)
    assert not ok, "the broken record was accepted"
    return line["error"]["round"], line["error"]["kind"], line["error"]["index"]


# -- random mutations ---------------------------------------------------------------------------

junk = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-10, 100)
    | st.floats(allow_nan=True)
    | st.text(max_size=4)
    | st.sampled_from(["1o", "12b", "5b", "0o", "13c", "o", "pocha-record/1", ""])
    | st.sampled_from([str(card) for card in ALL_CARDS]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=6,
)


def containers(node, path=()):
    """Every list and dict in the record, with its path."""
    if isinstance(node, (list, dict)):
        yield path, node
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            yield from containers(child, path + (key,))


@st.composite
def mutated_records(draw):
    players = draw(st.sampled_from([3, 4, 5, 6]))
    record = base(players)
    keep = draw(st.integers(1, len(record["rounds"])))  # shorter records replay faster
    record["rounds"] = record["rounds"][:keep]
    for _ in range(draw(st.integers(1, 4))):
        found = list(containers(record))
        _, node = draw(st.sampled_from(found))
        op = draw(st.sampled_from(["replace", "delete", "duplicate", "swap", "insert", "card", "bid"]))
        if isinstance(node, dict):
            if not node:
                node[draw(st.text(max_size=3))] = draw(junk)
                continue
            key = draw(st.sampled_from(sorted(node, key=str)))
            if op == "delete":
                del node[key]
            elif op == "insert":
                node[draw(st.sampled_from(["trump_suit", "extra", "bids", "plays", "hands"]))] = draw(junk)
            else:
                node[key] = draw(junk)
            continue
        if not node or op == "insert":
            node.insert(draw(st.integers(0, len(node))), draw(junk))
            continue
        i = draw(st.integers(0, len(node) - 1))
        if op == "delete":
            del node[i]
        elif op == "duplicate":
            node.insert(i, copy.deepcopy(node[i]))
        elif op == "swap":
            j = draw(st.integers(0, len(node) - 1))
            node[i], node[j] = node[j], node[i]
        elif op == "card":
            node[i] = str(draw(st.sampled_from(ALL_CARDS)))
        elif op == "bid":
            node[i] = draw(st.integers(-1, 9))
        else:
            node[i] = draw(junk)
    if draw(st.booleans()):
        header = draw(st.sampled_from(["format", "players", "first_dealer", "rounds", "add_round", "none"]))
        if header == "add_round":
            if not isinstance(record.get("rounds"), list):  # an earlier mutation replaced or dropped it
                record["rounds"] = []
            record["rounds"].append(copy.deepcopy(record["rounds"][-1]) if record["rounds"] else draw(junk))
        elif header != "none":
            if draw(st.booleans()):
                record.pop(header, None)
            else:
                record[header] = draw(st.one_of(junk, st.integers(-2, 8), st.lists(st.text(max_size=3), max_size=8)))
    return record


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_records())
def test_mutated_records_never_crash(record):
    assert_well_formed(record)


@settings(max_examples=100, deadline=None)
@given(junk)
def test_any_json_value_never_crashes(value):
    assert_well_formed(value)


# -- targeted mutations: the error is where the rule was first broken --------------------------


def round_info(record, number):
    players = len(record["players"])
    dealer = dealer_of(record["first_dealer"], number, players)
    return active_order(dealer, players)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("number", [2, 8, 10, 14])
def test_card_of_the_next_seat_played_out_of_turn_is_a_play_error_at_its_index(players, number):
    record = base(players)
    plays = record["rounds"][number - 1]["plays"]
    order_size = len(round_info(record, number))
    for i in range(len(plays) - 1):
        if i % order_size == order_size - 1:
            continue  # the next card starts a new trick, perhaps by the same seat
        mutated = base(players)
        p = mutated["rounds"][number - 1]["plays"]
        p[i], p[i + 1] = p[i + 1], p[i]  # the next seat's card, still in their hand
        assert error_at(mutated) == (number, "play", i)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_card_not_in_hand_is_a_play_error_at_its_index(players):
    record = base(players)
    for number in (1, 7, 18):
        entry = record["rounds"][number - 1]
        played_before = set()
        for i, card in enumerate(entry["plays"][:6]):
            mutated = base(players)
            # the turned trump card is in nobody's hand
            mutated["rounds"][number - 1]["plays"][i] = entry["trump_card"]
            assert error_at(mutated) == (number, "play", i)
            if played_before:
                mutated = base(players)
                mutated["rounds"][number - 1]["plays"][i] = sorted(played_before)[0]  # already played
                assert error_at(mutated) == (number, "play", i)
            played_before.add(card)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_illegal_card_is_a_play_error_at_its_index(players):
    """Follow the record's play; where the seat to move held a card it could not play, put that card there."""
    record = base(players)
    load_game(record)  # the base record itself is legal
    checked = 0
    for number, entry in enumerate(record["rounds"], start=1):
        order = round_info(record, number)
        hands = {seat: [Card.parse(text) for text in entry["hands"][seat]] for seat in order}
        trump = Suit.parse(entry.get("trump_suit") or entry["trump_card"][-1])
        trick, turn = [], order[0]
        for i, text in enumerate(entry["plays"]):
            legal = legal_plays(hands[turn], [card for _, card in trick], trump)
            illegal = [card for card in hands[turn] if card not in legal]
            if illegal and checked < 4:
                mutated = base(players)
                mutated["rounds"][number - 1]["plays"][i] = str(illegal[0])
                assert error_at(mutated) == (number, "play", i)
                checked += 1
            card = Card.parse(text)
            assert card in legal
            hands[turn].remove(card)
            trick.append((turn, card))
            if len(trick) == len(order):
                turn = trick[trick_winner([card for _, card in trick], trump)][0]
                trick = []
            else:
                turn = order[(order.index(turn) + 1) % len(order)]
        if checked >= 4:
            break
    assert checked == 4


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("number", [1, 3, 8, -1])
def test_forbidden_last_bid_is_a_bid_error_at_the_last_index(players, number):
    record = base(players)
    index = number - 1 if number > 0 else len(record["rounds"]) - 1
    entry = record["rounds"][index]
    cards = len(entry["hands"][round_info(record, index + 1)[0]])
    bids = entry["bids"]
    bids[:-1] = [0] * (len(bids) - 1)
    bids[-1] = cards  # 0 + ... + 0 + cards == cards
    assert error_at(record) == (index + 1, "bid", len(bids) - 1)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_bid_errors_at_their_index(players):
    record = base(players)
    record["rounds"][4]["bids"][1] = 6  # 5 cards in round 5
    assert error_at(record) == (5, "bid", 1)
    record = base(players)
    record["rounds"][4]["bids"][2] = "2"
    assert error_at(record) == (5, "bid", 2)
    record = base(players)
    record["rounds"][4]["bids"].pop()
    assert error_at(record)[:2] == (5, "bid")
    record = base(players)
    record["rounds"][4]["bids"].append(0)
    assert error_at(record) == (5, "bid", len(record["rounds"][4]["bids"]) - 1)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_missing_or_bad_trump_suit_in_an_auction_is_a_trump_error(players):
    record = base(players)
    del record["rounds"][8]["trump_suit"]
    assert error_at(record) == (9, "trump", 0)
    for bad in ("x", None, 1, ["o"], "oros"):
        record = base(players)
        record["rounds"][8]["trump_suit"] = bad
        assert error_at(record) == (9, "trump", 0)
    record = base(players)
    turned = record["rounds"][0]["trump_card"][-1]
    record["rounds"][0]["trump_suit"] = {"o": "c", "c": "e", "e": "b", "b": "o"}[turned]  # not an auction
    assert error_at(record) == (1, "trump", 0)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_trump_card_in_a_hand_is_a_deal_error(players):
    for number in (1, 5, 12 + players - 3, len(BASES[players]["rounds"])):
        record = base(players)
        entry = record["rounds"][number - 1]
        if entry["trump_card"] is None:
            continue
        seat = round_info(record, number)[0]
        entry["trump_card"] = entry["hands"][seat][0]
        assert error_at(record) == (number, "deal", 0)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_other_deal_errors(players):
    record = base(players)
    record["rounds"][8]["trump_card"] = "1o"  # an auction
    assert error_at(record) == (9, "deal", 0)
    record = base(players)
    entry = record["rounds"][7]  # the 8-card subida: trump card must be the last dealt
    entry["trump_card"] = entry["hands"][round_info(record, 8)[0]][0]
    assert error_at(record) == (8, "deal", 0)
    record = base(players)
    seat = round_info(record, 3)[0]
    record["rounds"][2]["hands"][seat][0] = record["rounds"][2]["hands"][seat][1]  # dealt twice
    assert error_at(record) == (3, "deal", 0)
    record = base(players)
    record["rounds"][2]["hands"][seat].append("7o")
    assert error_at(record) == (3, "deal", 0)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_an_extra_round_past_the_schedule_is_a_deal_error(players):
    record = base(players)
    rounds = len(record["rounds"])
    record["rounds"].append(copy.deepcopy(record["rounds"][-1]))
    assert error_at(record) == (rounds + 1, "deal", 0)
    record["rounds"][-1] = {}
    assert error_at(record) == (rounds + 1, "deal", 0)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("missing", [1, 2, 5])
def test_a_truncated_final_round_is_a_play_error_at_the_number_of_plays_given(players, missing):
    record = base(players)
    record["rounds"] = record["rounds"][:10]
    plays = record["rounds"][-1]["plays"]
    del plays[len(plays) - missing :]
    assert error_at(record) == (10, "play", len(plays))
    record["rounds"][-1]["plays"] = []
    assert error_at(record) == (10, "play", 0)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_extra_plays_are_a_play_error(players):
    record = base(players)
    entry = record["rounds"][2]
    total = len(entry["plays"])
    entry["plays"].append(entry["plays"][0])
    assert error_at(record) == (3, "play", total)


def test_header_errors_are_deal_errors_of_round_1():
    for mutate in (
        lambda r: r.update(format="pocha-record/2"),
        lambda r: r.pop("format"),
        lambda r: r.update(players=["a", "b"]),
        lambda r: r.update(players=["a"] * 7),
        lambda r: r.update(players="abcd"),
        lambda r: r.update(players=[1, 2, 3, 4]),
        lambda r: r.update(first_dealer=4),
        lambda r: r.update(first_dealer=-1),
        lambda r: r.update(first_dealer=True),
        lambda r: r.update(first_dealer=1.0),
        lambda r: r.update(first_dealer="1"),
        lambda r: r.pop("first_dealer"),
        lambda r: r.update(rounds={}),
        lambda r: r.pop("rounds"),
    ):
        record = base(4)
        mutate(record)
        assert error_at(record) == (1, "deal", 0)


def test_a_different_first_dealer_is_located():
    record = base(4)
    record["first_dealer"] = (record["first_dealer"] + 1) % 4
    # one card each is still a possible deal and the bids still add up the same, but the new
    # leader does not hold the first card played
    assert error_at(record) == (1, "play", 0)
    record = base(6)
    record["first_dealer"] = (record["first_dealer"] + 1) % 6
    # at six, the new dealer holds a card and the one who should hold one rests
    assert error_at(record) == (1, "deal", 0)
