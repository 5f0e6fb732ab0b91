"""The snapshot a move's push carries (``selectors.pack_snapshot``) and the boards drawn from it
(``selectors.render_snapshot``): packed and unpacked (through JSON, as it travels between processes) it
is the same table and seats and draws the same boards; each seat's board shows its own hand and no other
seat's; the scoreboard is left out only when the viewer's page already shows every round's result; and
the push of a move through ``actions.do_action`` carries the snapshot at the move's new seq.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db.models import DateTimeField
from django.utils import timezone

from games import actions, push, selectors, timers
from games.engine import Phase, default_action
from games.engine.snapshot import load
from games.models import Seat, Table

from .helpers import seated_table
from .test_secrecy import DATA_CARD, HAND, cards_named

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("commits_without_fsync")]

SCORES = '<section id="scores"'


@pytest.fixture(autouse=True)
def no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """No turn clock runs (nor is queued to Celery): every move here is the test's."""
    monkeypatch.setattr(timers, "arm", lambda *args, **kwargs: None)


@pytest.fixture
def frozen_now(monkeypatch: pytest.MonkeyPatch) -> datetime:
    """``timezone.now()`` fixed, so that two drawings of one board show the same clock."""
    now = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: now)
    return now


def play_until(table_id: int, done: Any, max_moves: int = 400) -> Table:
    """Each seat to move plays its default move until ``done(game)`` (synchronous; every seat a person)."""
    for _ in range(max_moves):
        table = Table.objects.get(pk=table_id)
        game = load(table.state)
        if done(game):
            return table
        assert table.status == Table.Status.PLAYING and table.turn_seat is not None, table.phase
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        actions.do_action(table_id, seat.user, default_action(game), table.seq)
    raise AssertionError("never got there")


def mid_game(prefix: str) -> tuple[int, list[Any]]:
    """Four people, two rounds played, the third under way with cards on the felt."""
    table_id, users = seated_table(4, 4, prefix=prefix)
    play_until(table_id, lambda g: len(g.results) >= 2 and g.phase is Phase.PLAYING and len(g.trick) >= 1)
    return table_id, users


def field_values(instance: Any) -> dict[str, Any]:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def assert_same_row(loaded: Any, unpacked: Any) -> None:
    assert type(unpacked) is type(loaded)
    before, after = field_values(loaded), field_values(unpacked)
    assert before.keys() == after.keys()
    datetimes = {f.attname for f in loaded._meta.concrete_fields if isinstance(f, DateTimeField)}
    for name, value in before.items():
        if name in datetimes and value is not None:
            assert after[name] is not None and after[name].tzinfo is not None, name
            assert abs(after[name] - value) <= timedelta(microseconds=1), (name, value, after[name])
        else:
            assert after[name] == value, (name, value, after[name])


def travelled(data: dict[str, Any]) -> dict[str, Any]:
    """The packed snapshot as another process gets it (the events travel as JSON)."""
    return json.loads(json.dumps(data))


# -- pack, unpack, draw ---------------------------------------------------------------------------------------


def test_a_packed_snapshot_unpacks_to_the_same_table_seats_and_boards(frozen_now: datetime) -> None:
    table_id, users = mid_game("paquete")
    loaded = selectors.load_snapshot(table_id)
    assert loaded is not None and loaded.table.status == Table.Status.PLAYING
    assert loaded.table.turn_deadline is not None and loaded.table.started_at is not None  # datetimes to carry
    data = selectors.pack_snapshot(loaded.table, list(loaded.seats), loaded.spectators)

    assert len(loaded.table.state["log"]) == 3  # every round's deal and plays so far, for the record
    for unpacked in (selectors.unpack_snapshot(data), selectors.unpack_snapshot(travelled(data))):
        assert unpacked.seq == loaded.seq and unpacked.spectators == loaded.spectators
        # the same row, but for the log of the rounds before this one, which no board shows
        assert unpacked.table.state == {**loaded.table.state, "log": loaded.table.state["log"][-1:]}
        unpacked.table.state = loaded.table.state
        assert_same_row(loaded.table, unpacked.table)
        assert len(unpacked.seats) == len(loaded.seats) == 4
        for seat, same in zip(loaded.seats, unpacked.seats, strict=True):
            assert_same_row(seat, same)
        assert selectors.rounds_done(unpacked) == selectors.rounds_done(loaded) == 2
        for user in [*users, None]:  # every seat, and a spectator
            for language in ("es", "en"):
                viewer = user.pk if user is not None else None
                mine = selectors.render_snapshot(unpacked, viewer, language)
                theirs = selectors.render_snapshot(loaded, viewer, language)
                assert mine is not None and mine == theirs
                assert mine[0] == loaded.seq


def test_a_snapshot_with_a_field_missing_is_refused() -> None:
    table_id, _users = seated_table(4, 4, prefix="corto")
    loaded = selectors.load_snapshot(table_id)
    assert loaded is not None
    data = selectors.pack_snapshot(loaded.table, list(loaded.seats), loaded.spectators)
    data["table"] = data["table"][:-1]
    with pytest.raises(ValueError):
        selectors.unpack_snapshot(data)


def test_datetimes_cross_as_the_same_instant() -> None:
    table_id, _users = seated_table(4, 4, prefix="hora")
    moment = datetime(2025, 3, 9, 23, 59, 59, 999999, tzinfo=UTC)
    Table.objects.filter(pk=table_id).update(turn_deadline=moment, finished_at=None)
    loaded = selectors.load_snapshot(table_id)
    assert loaded is not None
    unpacked = selectors.unpack_snapshot(
        travelled(selectors.pack_snapshot(loaded.table, list(loaded.seats), loaded.spectators))
    )
    assert abs(unpacked.table.turn_deadline - moment) <= timedelta(microseconds=1)
    assert unpacked.table.finished_at is None


# -- each seat sees its own hand, no other --------------------------------------------------------------------


def test_each_seat_is_drawn_its_own_hand_and_no_other_seats_cards(frozen_now: datetime) -> None:
    table_id, users = mid_game("secreta")
    loaded = selectors.load_snapshot(table_id)
    assert loaded is not None
    # drawn from the snapshot as a push brings it (the whole engine state inside)
    snapshot = selectors.unpack_snapshot(
        travelled(selectors.pack_snapshot(loaded.table, list(loaded.seats), loaded.spectators))
    )
    game = selectors.game_state(snapshot.table)
    assert game is not None
    hands = [{str(card) for card in hand} for hand in game.hands]
    assert all(hands) and len(set().union(*hands)) == sum(len(h) for h in hands)
    on_felt = {str(p.card) for p in game.trick}
    assert on_felt
    trump = {str(game.trump_card)} if game.trump_card is not None else set()
    by_user = {s.user_id: s.position for s in snapshot.seats}

    for user in users:
        position = by_user[user.pk]
        rendered = selectors.render_snapshot(snapshot, user.pk, "es")
        assert rendered is not None
        html = rendered[1]
        hand = HAND.search(html)
        assert hand is not None
        assert set(DATA_CARD.findall(hand.group(0))) == hands[position]
        assert hands[position] <= cards_named(html)  # the detector sees a hand drawn in the html
        others = set().union(*(h for p, h in enumerate(hands) if p != position)) - trump
        assert not (cards_named(html) & others), sorted(cards_named(html) & others)
        assert on_felt <= cards_named(html)  # the cards played are shown to everyone

    spectator = selectors.render_snapshot(snapshot, None, "en")
    assert spectator is not None
    hand = HAND.search(spectator[1])
    assert hand is not None and DATA_CARD.findall(hand.group(0)) == []
    assert not (cards_named(spectator[1]) & (set().union(*hands) - trump))


# -- the scoreboard is left out only when the page has it already ---------------------------------------------


def test_the_scoreboard_is_left_out_only_when_the_page_shows_every_round_already(frozen_now: datetime) -> None:
    table_id, users = mid_game("marcador")
    snapshot = selectors.load_snapshot(table_id)
    assert snapshot is not None
    done = selectors.rounds_done(snapshot)
    assert done == 2
    for user in (users[0], None):
        viewer = user.pk if user is not None else None
        full = selectors.render_snapshot(snapshot, viewer, "es", None)
        assert full is not None and SCORES in full[1]
        same = selectors.render_snapshot(snapshot, viewer, "es", done)
        assert same is not None and SCORES not in same[1]
        behind = selectors.render_snapshot(snapshot, viewer, "es", done - 1)
        assert behind is not None and SCORES in behind[1]
        ahead = selectors.render_snapshot(snapshot, viewer, "es", done + 1)
        assert ahead is not None and SCORES in ahead[1]
        # leaving it out leaves the rest of the board as it was
        assert re.sub(r'<section id="scores".*?</section>', "", full[1], flags=re.S).strip() == same[1].strip()


def test_a_game_not_in_play_is_not_drawn_from_a_snapshot() -> None:
    table_id, users = seated_table(4, 2, prefix="espera")
    snapshot = selectors.load_snapshot(table_id)
    assert snapshot is not None and snapshot.table.status == Table.Status.WAITING
    assert selectors.rounds_done(snapshot) is None
    assert selectors.render_snapshot(snapshot, users[0].pk, "es") is None


# -- a move's push carries its snapshot -----------------------------------------------------------------------


def test_a_moves_push_carries_the_snapshot_at_its_new_seq(monkeypatch: pytest.MonkeyPatch, frozen_now: Any) -> None:
    table_id, users = mid_game("empuje")
    pushed: list[tuple[int, int, dict[str, Any]]] = []
    monkeypatch.setattr(push, "table_changed", lambda table_id, seq, **kwargs: pushed.append((table_id, seq, kwargs)))
    table = Table.objects.get(pk=table_id)
    seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
    game = load(table.state)

    changed = actions.do_action(table_id, seat.user, default_action(game), table.seq)

    assert changed.seq == table.seq + 1
    mine = [p for p in pushed if p[0] == table_id and not p[2].get("force")]
    assert len(mine) == 1, pushed
    _table, seq, kwargs = mine[0]
    assert seq == changed.seq
    assert kwargs.get("snapshot") is not None, kwargs
    snapshot = selectors.unpack_snapshot(travelled(kwargs["snapshot"]))
    assert snapshot.table.pk == table_id and snapshot.seq == changed.seq
    now = Table.objects.get(pk=table_id)
    assert snapshot.table.state == selectors.drawing_state(now.state) and snapshot.table.turn_seat == now.turn_seat
    assert len(snapshot.table.state["log"]) == 1 < len(now.state["log"])  # the round in play's only
    snapshot.table.state = now.state
    assert_same_row(now, snapshot.table)
    loaded = selectors.load_snapshot(table_id)
    assert loaded is not None
    for seat_row, same in zip(loaded.seats, snapshot.seats, strict=True):
        assert_same_row(seat_row, same)
    for user in users:
        assert selectors.render_snapshot(snapshot, user.pk, "es") == selectors.render_snapshot(loaded, user.pk, "es")


def test_a_change_to_a_table_not_in_play_carries_no_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    table_id, users = seated_table(4, 2, prefix="sinfoto")
    pushed: list[tuple[int, int, dict[str, Any]]] = []
    monkeypatch.setattr(push, "table_changed", lambda table_id, seq, **kwargs: pushed.append((table_id, seq, kwargs)))
    changed = actions.do_leave_seat(table_id, users[1])
    mine = [p for p in pushed if p[0] == table_id]
    assert [(seq, kwargs.get("snapshot")) for _t, seq, kwargs in mine] == [(changed.seq, None)]
