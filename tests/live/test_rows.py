"""``games.rows``, the move path's plain-SQL reads and writes, against the ORM's own: the same instances
field by field (the engine's JSON, datetimes, a seat's bot log, on SQLite and on PostgreSQL alike), the
same rows written, the person's suspension read with their seat, and nothing for what is not there."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models import Model
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Profile
from games import actions, rows, selectors, timers
from games.engine import default_action
from games.engine.snapshot import dump, load
from games.models import Bid, Play, Seat, Table, Trick, Watcher

from .helpers import person, seated_table

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("commits_without_fsync")]


@pytest.fixture(autouse=True)
def no_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timers, "arm", lambda *args, **kwargs: None)


def values(instance: Model) -> dict[str, Any]:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def game_under_way() -> tuple[int, list[Any]]:
    """Four people, a few moves made, one seat with a bot log and a disconnection time."""
    table_id, users = seated_table(4, 4, prefix="filas")
    for _ in range(6):
        table = Table.objects.get(pk=table_id)
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        actions.do_action(table_id, seat.user, default_action(load(table.state)), table.seq)
    Seat.objects.filter(table_id=table_id, position=2).update(
        bot_log=[{"bid": 1}, {"play": "1o"}], disconnected_at=timezone.now() - timedelta(seconds=7), sockets=0
    )
    Table.objects.filter(pk=table_id).update(turn_deadline=timezone.now() + timedelta(seconds=30))
    return table_id, users


def test_the_locked_table_is_the_orms_row() -> None:
    table_id, _users = game_under_way()
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        locked = rows.lock_table(table_id)
    assert locked is not None
    assert values(locked) == values(Table.objects.get(pk=table_id))
    assert isinstance(locked.state, dict) and locked.turn_deadline is not None and locked.turn_deadline.tzinfo
    assert not locked._state.adding and locked._state.db == "default"
    assert ("FOR UPDATE" in queries.captured_queries[-1]["sql"]) == connection.features.has_select_for_update
    assert rows.lock_table(table_id + 1000) is None


def test_a_persons_seat_and_their_suspension() -> None:
    table_id, users = game_under_way()
    for user in users:
        found = rows.user_seat(table_id, user.pk)
        assert found is not None
        seat, suspended_at, reason = found
        assert values(seat) == values(Seat.objects.get(table_id=table_id, user=user))
        assert (suspended_at, reason) == (None, "")
    assert values(rows.user_seat(table_id, users[2].pk)[0])["bot_log"] == [{"bid": 1}, {"play": "1o"}]
    when = timezone.now()
    Profile.objects.update_or_create(user=users[1], defaults={"suspended_at": when, "suspended_reason": "trampas"})
    _seat, suspended_at, reason = rows.user_seat(table_id, users[1].pk)
    assert abs(suspended_at - when) < timedelta(milliseconds=1) and reason == "trampas"
    assert rows.user_seat(table_id, person("ajena").pk) is None


def test_the_seats_and_the_spectators_in_one_statement() -> None:
    table_id, _users = game_under_way()
    stranger = person("mirona-filas")
    Watcher.objects.create(table_id=table_id, user=stranger, channel_name="c-1")
    with CaptureQueriesContext(connection) as queries:
        seats, spectators = rows.seats_with_spectators(table_id, selectors.SPECTATORS_SQL.format(table="%s"))
    assert len(queries.captured_queries) == 1
    assert [values(s) for s in seats] == [values(s) for s in Seat.objects.filter(table_id=table_id)]
    assert [s.position for s in seats] == [0, 1, 2, 3]
    assert spectators == 1 == selectors.spectator_count(table_id)
    assert rows.seats_with_spectators(table_id + 1000, selectors.SPECTATORS_SQL.format(table="%s")) == ([], None)


def test_the_update_writes_what_the_orms_update_writes() -> None:
    table_id, _users = game_under_way()
    table = Table.objects.get(pk=table_id)
    game = load(table.state)
    game.apply(default_action(game))
    due = timezone.now() + timedelta(seconds=12)
    fields = {
        "seq": table.seq + 1,
        "state": dump(game),
        "due_at": due,
        "turn_deadline": None,
        "turn_seat": (table.turn_seat + 1) % 4,
    }
    assert rows.update_table(table_id, table.seq + 5, fields) == 0  # not at that seq: nothing written
    assert values(Table.objects.get(pk=table_id)) == values(table)
    assert rows.update_table(table_id, table.seq, fields) == 1
    mine = values(Table.objects.get(pk=table_id))
    Table.objects.filter(pk=table_id).update(**{**values(table), "id": table_id})
    Table.objects.filter(pk=table_id, seq=table.seq).update(**fields)
    assert mine == values(Table.objects.get(pk=table_id))
    assert mine["due_at"] is not None and abs(mine["due_at"] - due) < timedelta(milliseconds=1)


def test_a_card_played_is_the_row_the_orm_would_write() -> None:
    """Cards through ``do_action`` (``rows.insert_play``): each row names its round and trick, in order,
    with the seat, the card and when; the trick's first card makes the trick's row."""
    table_id, users = seated_table(4, 4, prefix="carta")
    started = timezone.now()
    while True:
        table = Table.objects.get(pk=table_id)
        if Play.objects.filter(round__table_id=table_id, round__number=table.round_number).count() >= 6:
            break
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        actions.do_action(table_id, seat.user, default_action(load(table.state)), table.seq)
    game = load(Table.objects.get(pk=table_id).state)
    plays = list(
        Play.objects.filter(round__table_id=table_id, round__number=game.number).select_related("round", "trick")
    )
    assert [p.index for p in plays] == list(range(len(plays)))
    assert [p.card for p in plays] == [str(card) for card in game.log[-1].plays[: len(plays)]]
    assert all(0 <= p.seat < 4 for p in plays) and len({p.seat for p in plays[:4]}) == 4
    for play in plays:
        assert play.round.number == game.number and play.round.table_id == table_id
        assert play.trick.number == play.index // 4 + 1 and play.trick.round_id == play.round_id
        assert not play.by_bot and not play.by_clock
        assert started <= play.created_at <= timezone.now() and play.created_at.tzinfo is not None
    assert Trick.objects.filter(round__table_id=table_id, round__number=game.number).count() == (len(plays) + 3) // 4


@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements: PostgreSQL only")
def test_on_postgresql_the_move_paths_statements_are_planned_once_per_connection() -> None:
    """After a few moves the lock, the person's seat and the seats are prepared statements of the
    connection, run on their generic plan (not planned again at every move), while the ORM's own queries
    stay unprepared; the rows read are still the ORM's."""
    table_id, _users = game_under_way()
    for _ in range(8):
        table = Table.objects.get(pk=table_id)
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        actions.do_action(table_id, seat.user, default_action(load(table.state)), table.seq)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
        prepared = cursor.fetchall()
    lock = [p for p in prepared if p[0].startswith('SELECT "t"."id"') and "FOR UPDATE" in p[0]]
    seats = [p for p in prepared if p[0].startswith('SELECT "s"."id"') and "ORDER BY s.position" in p[0]]
    person_seat = [p for p in prepared if "accounts_profile" in p[0]]
    updates = [p for p in prepared if p[0].startswith("UPDATE games_table SET")]
    for found in (lock, seats, person_seat, updates):
        assert len(found) >= 1, prepared
    assert lock[0][1] >= 1 and seats[0][1] >= 1 and person_seat[0][1] >= 1  # generic plans in use
    assert not [p for p in prepared if "games_table" in p[0] and '"games_table"."id"' in p[0]]  # the ORM's
    assert values(Table.objects.get(pk=table_id)) == values(rows.lock_table(table_id))  # type: ignore[arg-type]


def test_bids_and_tricks_are_the_rows_the_orm_would_write() -> None:
    """Bids (``rows.insert_bid``) and tricks (``rows.insert_trick``, ``rows.set_trick_winner``) through
    ``do_action``: each bid names its round, its order, the seat and the amount; each complete trick its
    leader and the engine's winner, the trick under way none yet."""
    table_id, _users = seated_table(4, 4, prefix="pedir")
    started = timezone.now()
    while True:
        table = Table.objects.get(pk=table_id)
        game = load(table.state)
        if table.round_number >= 2 and Play.objects.filter(round__table_id=table_id, round__number=2).count() >= 5:
            break
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        actions.do_action(table_id, seat.user, default_action(game), table.seq)
    for number in (1, 2):
        bids = list(Bid.objects.filter(round__table_id=table_id, round__number=number).order_by("index"))
        assert [b.amount for b in bids] == game.log[number - 1].bids, number
        assert [b.index for b in bids] == list(range(len(bids))) and len({b.seat for b in bids}) == len(bids) == 4
        assert all(b.round.table_id == table_id and b.round.number == number for b in bids)
        assert all(not b.by_bot and not b.by_clock and started <= b.created_at <= timezone.now() for b in bids)
        tricks = list(Trick.objects.filter(round__table_id=table_id, round__number=number).order_by("number"))
        assert [t.number for t in tricks] == list(range(1, len(tricks) + 1)) and tricks
        plays = list(Play.objects.filter(round__table_id=table_id, round__number=number).order_by("index"))
        for i, trick in enumerate(tricks):
            cards = [p for p in plays if p.trick_id == trick.pk]
            assert cards[0].seat == trick.leader
            if len(cards) < 4:
                assert trick.winner is None  # the trick under way
            elif i + 1 < len(tricks):
                assert trick.winner == tricks[i + 1].leader  # the winner leads the next trick
            else:
                assert trick.winner is not None and trick.winner in {c.seat for c in cards}
