"""A tournament seat nobody played never wins (issue 43): a person who never opens their table (the clock, then
the bot, makes every decision of theirs) takes no prize and no level, whatever the bot scored for them; the
prizes go to the people who played, by their place among themselves; the standings place the no-show after
everyone who played, tagged «jugó el bot» on the tournament's page.  If nobody played, nobody takes a prize and
the pool goes to the house, in the one PRIZE transaction of the tournament's end.

Through the site's own code: registering pays the fee, the runner starts the tournament and seats the people
with difícil bots, every table is played move by move (the person who plays by their default move, the
no-show's turns run out on the clock and then the bot plays them away), the runner ends it and pays."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db.models import Sum
from django.test import Client
from django.utils import timezone
from live.helpers import person

from accounts import ledger
from accounts.models import Account
from accounts.models import Transaction as LedgerTransaction
from games.engine import default_action
from games.engine.snapshot import load
from games.models import Move, Registration, Seat, Table, Tournament
from games.table import actions
from games.tournaments import entries, runner
from leaderboard import skill
from leaderboard.models import SkillChange, SkillRating

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick_bots(settings: Any) -> None:
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_ROUND_PAUSE = 0
    settings.POCHA_TRICK_PAUSE = 0


def books_balance() -> None:
    assert ledger.audit() == []
    assert (Account.objects.aggregate(t=Sum("balance"))["t"] or 0) == 0


def new_tournament(**fields: Any) -> Tournament:
    now = timezone.now()
    values: dict[str, Any] = {
        "name": "Copa de los ausentes",
        "size": 4,
        "places": 8,
        "deals": 2,
        "entry_fee": 100,
        "prizes": "70,30",
        "registration_opens_at": now - timedelta(hours=1),
        "starts_at": now + timedelta(hours=1),
    }
    values.update(fields)
    return Tournament.objects.create(**values)


def registered(t: Tournament, *names: str) -> list[Any]:
    people = [person(name) for name in names]
    for user in people:
        ledger.grant_welcome(user.pk)
        entries.register(user, t.pk, None)
    Tournament.objects.filter(pk=t.pk).update(starts_at=timezone.now() - timedelta(seconds=1))
    assert runner.advance(t.pk) == "started"
    return people


def play(table_id: int, absent: set[int]) -> Table:
    """The table to its end: a person plays their default move at once, unless absent (``absent``: their user
    ids), whose clock runs out instead (the clock plays, and after two, the bot at once: away); bots when due."""
    for _ in range(2000):
        table = Table.objects.get(pk=table_id)
        if table.status != Table.Status.PLAYING:
            return table
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        if seat.user_id in absent and not seat.away:
            past = timezone.now() - timedelta(seconds=1)
            Table.objects.filter(pk=table_id).update(due_at=past, turn_deadline=past)
            assert actions.do_due(table_id, table.seq) is not None
        elif seat.is_bot or seat.away or seat.left:
            assert actions.do_due(table_id, table.seq) is not None
        else:
            actions.do_action(table_id, seat.user, default_action(load(table.state)), table.seq)
    raise AssertionError("the table did not end")


def play_every_table(t: Tournament, absent: set[int]) -> None:
    for table_id in Table.objects.filter(tournament=t, status=Table.Status.PLAYING).values_list("pk", flat=True):
        assert play(table_id, absent).status == Table.Status.FINISHED


def level_changes(user: Any) -> list[tuple[int, int]]:
    return list(SkillChange.objects.filter(user=user).order_by("created_at", "pk").values_list("before", "after"))


def test_a_no_show_takes_no_prize_and_no_level_and_the_prizes_go_to_who_played() -> None:
    t = new_tournament()
    ana, nadie = registered(t, "ana", "nadie")  # ana plays every card; nadie never opens her table
    assert Table.objects.filter(tournament=t).count() == 2  # one person at each, with three difícil bots
    play_every_table(t, absent={nadie.pk})
    nadie_seat = Seat.objects.get(table__tournament=t, user=nadie)
    assert nadie_seat.forfeit == "bot" and nadie_seat.place == 4 and nadie_seat.winnings == 0
    assert Seat.objects.get(table__tournament=t, user=ana).forfeit == ""
    assert runner.advance(t.pk) == "finished"
    t.refresh_from_db()
    # the standings: the no-show after everyone who played (bots included), whatever her matchpoints
    lines = t.results
    assert lines[-1]["user_id"] == nadie.pk and lines[-1]["forfeit"] == "bot"
    assert all(not line.get("forfeit") for line in lines[:-1])
    assert lines[-1]["place"] == len(lines) and lines[-1]["person_place"] == 2
    ana_line = next(line for line in lines if line["user_id"] == ana.pk)
    assert ana_line["person_place"] == 1
    # the prizes: the whole pool (70 % and, the table summing to 100 %, what is left) to ana; nothing to nadie
    assert (ana_line["prize"], lines[-1]["prize"]) == (200, 0)
    prizes = dict(Registration.objects.filter(tournament=t).values_list("user_id", "prize"))
    assert prizes == {ana.pk: 200, nadie.pk: 0}
    assert dict(Registration.objects.filter(tournament=t).values_list("user_id", "place")) == {ana.pk: 1, nadie.pk: 2}
    (paid,) = LedgerTransaction.objects.filter(tournament=t, kind=LedgerTransaction.Kind.PRIZE)
    assert paid.key == f"prizes:tournament:{t.pk}"
    legs = {(e.account.kind, e.account.user_id, e.amount) for e in paid.entries.select_related("account")}
    assert legs == {(Account.Kind.POOL, None, -200), (Account.Kind.USER, ana.pk, 200)}
    assert (ledger.balance(ana.pk), ledger.balance(nadie.pk)) == (5000 - 100 + 200, 5000 - 100)
    assert ledger.pool_account(t.pk).balance == 0
    books_balance()
    # «Nivel»: the game was rated, and the no-show's level did not go up
    (change,) = level_changes(nadie)
    assert change[1] <= change[0] == skill.NEW_LEVEL
    # the tournament's page: her line tagged, no prize beside it; and the rule said by the prizes
    html = Client().get(f"/torneos/{t.pk}/").content.decode()
    standings = html.split('id="tournament-standings"', 1)[1]
    row = next(r for r in standings.split("<tr")[1:] if 'data-name="nadie"' in r)
    assert 'data-forfeit="bot">jugó el bot</span>' in row
    assert 'data-forfeit="bot"' not in next(r for r in standings.split("<tr")[1:] if 'data-name="ana"' in r)
    assert "va detrás de quienes jugaron y no se lleva premio" in html
    english = Client(HTTP_ACCEPT_LANGUAGE="en").get(f"/torneos/{t.pk}/").content.decode()
    assert 'data-forfeit="bot">played by the bot</span>' in english
    assert "is placed after those who played and takes no prize" in english
    # the end processed again pays nothing more
    runner.finish(Tournament.objects.get(pk=t.pk), timezone.now())
    assert LedgerTransaction.objects.filter(tournament=t, kind=LedgerTransaction.Kind.PRIZE).count() == 1
    books_balance()


def test_a_no_show_in_every_game_of_a_por_puntos_tournament_never_gains_level() -> None:
    """Two games: the no-show's level does not go up in either, and ana, who played, takes the prize."""
    t = new_tournament(format=Tournament.Format.POINTS, games=2, deals=1)
    ana, nadie = registered(t, "ana_pp", "nadie_pp")
    play_every_table(t, absent={nadie.pk})
    assert runner.advance(t.pk) == "next_game"
    # the next game is formed with the no-show at the bottom of the standings
    standings = runner.current_standings(Tournament.objects.get(pk=t.pk))
    people = [line for line in standings if line.user_id is not None]
    assert [line.user_id for line in people] == [ana.pk, nadie.pk] and people[-1].forfeit == "bot"
    play_every_table(Tournament.objects.get(pk=t.pk), absent={nadie.pk})
    assert runner.advance(t.pk) == "finished"
    changes = level_changes(nadie)
    assert len(changes) == 2 and all(after <= before for before, after in changes), changes
    assert SkillRating.objects.get(user=nadie, preset="clasica").level <= skill.NEW_LEVEL
    assert dict(Registration.objects.filter(tournament=t).values_list("user_id", "prize")) == {ana.pk: 200, nadie.pk: 0}
    books_balance()


def test_when_nobody_played_nobody_takes_a_prize_and_the_pool_goes_to_the_house() -> None:
    t = new_tournament()
    people = registered(t, "ausente1", "ausente2")
    house = ledger.house_account().balance
    play_every_table(t, absent={p.pk for p in people})
    assert runner.advance(t.pk) == "finished"
    t.refresh_from_db()
    lines = [line for line in t.results if line["user_id"] is not None]
    assert all(line["forfeit"] == "bot" and line["prize"] == 0 for line in lines)
    assert [line["user_id"] for line in t.results[-2:]] == [line["user_id"] for line in lines]  # after the bots
    assert set(Registration.objects.filter(tournament=t).values_list("prize", flat=True)) == {0}
    (paid,) = LedgerTransaction.objects.filter(tournament=t, kind=LedgerTransaction.Kind.PRIZE)
    assert paid.key == f"prizes:tournament:{t.pk}"
    legs = {(e.account.kind, e.amount) for e in paid.entries.select_related("account")}
    assert legs == {(Account.Kind.POOL, -200), (Account.Kind.HOUSE, 200)}
    assert ledger.house_account().balance == house + 200
    assert all(ledger.balance(p.pk) == 4900 for p in people)
    for p in people:
        assert all(after <= before for before, after in level_changes(p))
    runner.finish(Tournament.objects.get(pk=t.pk), timezone.now())
    assert LedgerTransaction.objects.filter(tournament=t, kind=LedgerTransaction.Kind.PRIZE).count() == 1
    books_balance()


def test_a_person_whose_late_table_was_hurried_is_not_taken_for_a_no_show() -> None:
    """A late table is hurried (the bot plays every person's turn at once so that the tournament can end): the
    bot's moves from then on are the tournament's doing, not the person's, and do not make her seat «jugó el
    bot» — she keeps her place and her prize by what she played herself."""
    t = new_tournament()
    ana, bea = registered(t, "ana_h", "bea_h")
    ana_table = Seat.objects.get(table__tournament=t, user=ana).table_id
    bea_table = Seat.objects.get(table__tournament=t, user=bea).table_id
    assert play(ana_table, absent=set()).status == Table.Status.FINISHED
    assert runner.advance(t.pk) == "waiting"  # the first table is done: the others have late_minutes
    # bea makes her first decision herself, then her table runs late and is hurried
    for _ in range(50):
        table = Table.objects.get(pk=bea_table)
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        if seat.user_id == bea.pk:
            actions.do_action(bea_table, seat.user, default_action(load(table.state)), table.seq)
            break
        assert actions.do_due(bea_table, table.seq) is not None
    else:
        raise AssertionError("bea's turn never came")
    late = timezone.now() - timedelta(minutes=t.late_minutes + 1)
    Tournament.objects.filter(pk=t.pk).update(first_done_at=late)
    assert runner.advance(t.pk) == "hurried"
    assert Seat.objects.get(table_id=bea_table, user=bea).away
    finished = play(bea_table, absent=set())
    assert finished.status == Table.Status.FINISHED
    seat = Seat.objects.get(table_id=bea_table, user=bea)
    mine = Move.objects.filter(table_id=bea_table, seat=seat.position)
    assert mine.filter(by_bot=True).count() > mine.filter(by_bot=False, by_clock=False).count()  # mostly the bot's
    assert seat.forfeit == ""  # ...but after the hurry: not a no-show
    assert runner.advance(t.pk) == "finished"
    prizes = dict(Registration.objects.filter(tournament=t).values_list("user_id", "prize"))
    assert sum(prizes.values()) == 200 and all(prize > 0 for prize in prizes.values())
    books_balance()
