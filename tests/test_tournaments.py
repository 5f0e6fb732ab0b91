"""Tournaments through the site's own code: duplicate scoring against a hand-worked example, registering and
withdrawing with the entry fee, the start (seating, address separation, the same deals at every table), the
games played to the end by the runner, the prizes paid once, a cancellation refunding once, por puntos'
second game formed by the standings, and a late table hurried."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db.models import Sum
from django.utils import timezone
from live.helpers import person, play_to_the_end

from accounts import ledger
from accounts.models import Account
from accounts.models import Transaction as LedgerTransaction
from games.engine import replay
from games.engine.levels import DIFICIL
from games.models import Registration, Round, Seat, Table, Tournament
from games.table import history
from games.table.errors import ActionError
from games.tournaments import entries, runner, scoring
from games.tournaments.scoring import TableRows

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick_bots(settings: Any, monkeypatch: Any) -> None:
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_ROUND_PAUSE = 0
    settings.POCHA_TRICK_PAUSE = 0


def books_balance() -> None:
    assert ledger.audit() == []
    assert (Account.objects.aggregate(t=Sum("balance"))["t"] or 0) == 0


def tournament(**fields: Any) -> Tournament:
    now = timezone.now()
    values: dict[str, Any] = {
        "name": "Torneo de prueba",
        "size": 4,
        "places": 8,
        "deals": 2,
        "entry_fee": 100,
        "prizes": "50,30,20",
        "registration_opens_at": now - timedelta(hours=1),
        "starts_at": now + timedelta(hours=1),
    }
    values.update(fields)
    return Tournament.objects.create(**values)


def start_now(t: Tournament) -> str:
    Tournament.objects.filter(pk=t.pk).update(starts_at=timezone.now() - timedelta(seconds=1))
    return runner.advance(t.pk)


# -- scoring ---------------------------------------------------------------------------------------------


def rows(table_id: int, deal5: tuple[int, ...], deal15: tuple[int, ...]) -> TableRows:
    seats = {p: (table_id * 10 + p, f"{'ABC'[table_id - 1]}{p}") for p in range(4)}
    return TableRows(table_id, 1, table_id, "finished", seats, {5: deal5, 15: deal15})


def test_duplicate_matchpoints_against_a_hand_worked_example_with_ties() -> None:
    """Three tables of four, two deals (rounds 5 and 15).  Seat by seat, each deal's points are compared with
    the same seat at the two other tables: 1 for each beaten, ½ for each tie (worked by hand below)."""
    tables = [
        rows(1, (20, -5, 10, 10), (10, 10, -10, 15)),
        rows(2, (20, 10, -5, 10), (-5, 10, 10, 15)),
        rows(3, (-10, 10, 10, 10), (10, 20, 10, 5)),
    ]
    standings = scoring.duplicate(tables)
    got = {s.name: (s.score, s.points, s.place) for s in standings}
    assert got == {
        "C1": (3.5, 30, 1),
        "A0": (3.0, 30, 2),  # level with C2 on matchpoints, ahead on points
        "C2": (3.0, 20, 3),
        "A3": (2.5, 25, 4),  # level on both: a shared place
        "B3": (2.5, 25, 4),
        "B1": (2.0, 20, 6),
        "B0": (1.5, 15, 7),
        "B2": (1.5, 5, 8),
        "A2": (1.5, 0, 9),  # 10 - 10 points: level with C0 on both
        "C0": (1.5, 0, 9),
        "C3": (1.0, 15, 11),
        "A1": (0.5, 5, 12),
    }
    a0 = next(s for s in standings if s.name == "A0")
    assert a0.by_deal == {5: 1.5, 15: 1.5} and a0.played == 2
    # a deal only two tables have finished is compared between those two
    tables[2] = TableRows(3, 1, 3, "playing", tables[2].seats, {5: (-10, 10, 10, 10)})
    partial = {s.name: s.score for s in scoring.duplicate(tables)}
    assert partial["A0"] == 1.5 + 1.0 and partial["C0"] == 0.0  # deal 15: A0 only against B0


def test_position_points_and_prizes() -> None:
    assert scoring.position_points([30, 10, 30, -5]) == [2.5, 1.0, 2.5, 0.0]
    # 50/30/20 of 1000: the two level second share the 2nd and 3rd prizes
    assert scoring.prizes(1000, [50, 30, 20], [1, 2, 2, 4]) == ([500, 250, 250, 0], 0)
    # chips that do not divide: one each in order; a table summing to 100 leaves nothing to the house
    assert scoring.prizes(1001, [50, 30, 20], [1, 2, 3]) == ([501, 300, 200], 0)
    assert scoring.prizes(1000, [60], [1, 1]) == ([300, 300], 400)
    assert scoring.prizes(0, [50, 30, 20], [1, 2]) == ([0, 0], 0)


# -- registering -----------------------------------------------------------------------------------------


def test_registering_pays_the_fee_and_withdrawing_gives_it_back_once() -> None:
    t = tournament()
    ana = person("ana")
    ledger.grant_welcome(ana.pk)
    entries.register(ana, t.pk, "10.0.0.1")
    assert ledger.balance(ana.pk) == 5000 - 100
    assert ledger.pool_account(t.pk).balance == 100
    with pytest.raises(ActionError) as twice:
        entries.register(ana, t.pk, "10.0.0.1")
    assert twice.value.code == "registered"
    entries.withdraw(ana, t.pk)
    assert ledger.balance(ana.pk) == 5000 and ledger.pool_account(t.pk).balance == 0
    with pytest.raises(ActionError) as again:
        entries.withdraw(ana, t.pk)
    assert again.value.code == "not_registered"
    books_balance()


def test_registration_refusals_change_nothing() -> None:
    t = tournament(entry_fee=6000)
    poor = person("poor")
    ledger.grant_welcome(poor.pk)
    with pytest.raises(ActionError) as chips:
        entries.register(poor, t.pk, "10.0.0.2")
    assert chips.value.code == "chips" and "6000" in chips.value.message()
    assert not Registration.objects.exists() and ledger.balance(poor.pk) == 5000
    free = tournament(entry_fee=0, places=8)
    people = [person(f"p{i}") for i in range(3)]
    entries.register(people[0], free.pk, "10.0.0.9")
    entries.register(people[1], free.pk, "10.0.0.9")  # two tables: two of one address may come
    with pytest.raises(ActionError) as address:
        entries.register(people[2], free.pk, "10.0.0.9")
    assert address.value.code == "address"
    with pytest.raises(ActionError) as unknown:
        entries.register(people[2], 999999, None)
    assert unknown.value.code == "unknown_tournament"
    later = tournament(registration_opens_at=timezone.now() + timedelta(minutes=5))
    with pytest.raises(ActionError) as early:
        entries.register(people[2], later.pk, None)
    assert early.value.code == "not_open"
    started = tournament(starts_at=timezone.now() - timedelta(minutes=1))
    with pytest.raises(ActionError) as late:
        entries.register(people[2], started.pk, None)
    assert late.value.code == "started"
    full = tournament(entry_fee=0, places=8)
    for i in range(8):
        entries.register(person(f"f{i}"), full.pk, None)
    with pytest.raises(ActionError) as no_room:
        entries.register(people[2], full.pk, None)
    assert no_room.value.code == "full"
    assert Registration.objects.filter(tournament=full).count() == 8


# -- a duplicate tournament from start to end ----------------------------------------------------------------


def test_a_duplicate_tournament_seats_plays_the_same_deals_scores_and_pays_once() -> None:
    t = tournament(deals=2, entry_fee=100)
    people = [person(n) for n in ("ana", "bea", "carla")]
    for p in people:
        ledger.grant_welcome(p.pk)
    entries.register(people[0], t.pk, "10.0.0.1")
    entries.register(people[1], t.pk, "10.0.0.1")  # one address: never at one table
    entries.register(people[2], t.pk, "10.0.0.2")
    assert runner.advance(t.pk) == "nothing"  # not yet time
    assert start_now(t) == "started"
    t.refresh_from_db()
    assert t.status == Tournament.Status.PLAYING and t.current_game == 1
    tables = list(Table.objects.filter(tournament=t).order_by("tournament_number"))
    assert len(tables) == 2 and all(x.status == Table.Status.PLAYING for x in tables)
    assert all(x.bot_level == DIFICIL and x.deals == [5, 15] and x.stake == 0 for x in tables)
    seated = {x.pk: {s.user_id for s in Seat.objects.filter(table=x, is_bot=False)} for x in tables}
    assert not any({people[0].pk, people[1].pk} <= users for users in seated.values())
    assert sum(len(users) for users in seated.values()) == 3
    for x in tables:
        play_to_the_end(x.pk)
    # every table played the same deals, seat by seat: the records say so
    records = [history.record(Table.objects.get(pk=x.pk)) for x in tables]
    assert all(r is not None for r in records)
    assert [[r["hands"], r["trump_card"]] for r in records[0]["rounds"]] == [  # type: ignore[index]
        [r["hands"], r["trump_card"]]
        for r in records[1]["rounds"]  # type: ignore[index]
    ]
    assert records[0]["rounds_played"] == [5, 15]  # type: ignore[index]
    for record, x in zip(records, tables, strict=True):
        x.refresh_from_db()
        assert replay(record).as_json()["totals"] == [s.final_total for s in Seat.objects.filter(table=x)]
    assert list(Round.objects.filter(table=tables[0]).values_list("number", flat=True)) == [5, 15]
    assert runner.advance(t.pk) == "finished"
    t.refresh_from_db()
    assert t.status == Tournament.Status.FINISHED and t.results
    standings = scoring.duplicate(scoring.read_tables(t))
    assert [line["key"] for line in t.results] == [s.key for s in standings]
    # the prizes: 300 chips among three people, 50/30/20 by their place among the people
    regs = {r.user_id: r for r in Registration.objects.filter(tournament=t)}
    assert sum(r.prize for r in regs.values()) == 300
    assert ledger.pool_account(t.pk).balance == 0
    paid = LedgerTransaction.objects.filter(kind=LedgerTransaction.Kind.PRIZE, tournament=t)
    assert paid.count() == 1
    for p in people:
        assert ledger.balance(p.pk) == 5000 - 100 + regs[p.pk].prize
    # processing the end again pays nothing more
    assert runner.advance(t.pk) == "nothing"
    runner.finish(Tournament.objects.get(pk=t.pk), timezone.now())
    assert paid.count() == 1 and sum(ledger.balance(p.pk) for p in people) == 3 * 4900 + 300
    books_balance()


def test_too_few_people_cancel_it_at_the_start_and_a_cancellation_refunds_once() -> None:
    lonely = tournament()
    ana = person("ana")
    ledger.grant_welcome(ana.pk)
    entries.register(ana, lonely.pk, None)
    assert start_now(lonely) == "cancelled"
    assert ledger.balance(ana.pk) == 5000 and not Table.objects.filter(tournament=lonely).exists()
    t = tournament()
    bea = person("bea")
    ledger.grant_welcome(bea.pk)
    entries.register(ana, t.pk, None)
    entries.register(bea, t.pk, None)
    runner.cancel(t.pk, "lluvia")
    runner.cancel(t.pk, "otra vez")
    t.refresh_from_db()
    assert t.status == Tournament.Status.CANCELLED and t.cancel_note == "lluvia"
    assert ledger.balance(ana.pk) == ledger.balance(bea.pk) == 5000
    assert LedgerTransaction.objects.filter(kind=LedgerTransaction.Kind.REFUND, tournament=t).count() == 2
    books_balance()


def test_a_started_tournament_cannot_be_cancelled() -> None:
    t = tournament(entry_fee=0)
    for n in ("ana", "bea"):
        entries.register(person(n), t.pk, None)
    start_now(t)
    with pytest.raises(runner.CannotCancel):
        runner.cancel(t.pk)


def test_a_late_table_is_hurried_after_the_limit() -> None:
    t = tournament(entry_fee=0, late_minutes=0)
    ana, bea = person("ana"), person("bea")
    entries.register(ana, t.pk, None)
    entries.register(bea, t.pk, None)
    start_now(t)
    first, second = Table.objects.filter(tournament=t).order_by("tournament_number")
    play_to_the_end(first.pk)
    assert runner.advance(t.pk) == "hurried"
    assert all(s.away for s in Seat.objects.filter(table=second, is_bot=False))
    t.refresh_from_db()
    assert t.first_done_at is not None


def test_por_puntos_forms_the_next_game_by_the_standings() -> None:
    t = tournament(format=Tournament.Format.POINTS, games=2, deals=1, entry_fee=0, places=8)
    people = [person(f"p{i}") for i in range(5)]
    for p in people:
        entries.register(p, t.pk, None)
    start_now(t)
    first_game = list(Table.objects.filter(tournament=t, tournament_game=1))
    assert len(first_game) == 2
    for x in first_game:
        play_to_the_end(x.pk)
    assert runner.advance(t.pk) == "next_game"
    t.refresh_from_db()
    standings = runner.current_standings(t)
    leaders = [s.user_id for s in standings if s.user_id is not None][:4]
    second_game = list(Table.objects.filter(tournament=t, tournament_game=2).order_by("tournament_number"))
    assert t.current_game == 2 and len(second_game) == 2
    assert {s.user_id for s in Seat.objects.filter(table=second_game[0], is_bot=False)} == set(leaders)
    for x in second_game:
        play_to_the_end(x.pk)
    assert runner.advance(t.pk) == "finished"
    t.refresh_from_db()
    people_lines = [line for line in t.results if line["user_id"] is not None]
    assert all(line["played"] == 2 for line in people_lines)
    assert sorted(line["person_place"] for line in people_lines)[0] == 1


def test_regroup_keeps_one_address_apart() -> None:
    addresses = {1: "a", 2: "a", 3: "b", 4: "c", 5: "d", 6: "e"}
    tables = runner.regroup([1, 2, 3, 4, 5, 6], addresses, 3)
    assert sorted(sum(tables, [])) == [1, 2, 3, 4, 5, 6]
    assert not any({1, 2} <= set(table) for table in tables)
