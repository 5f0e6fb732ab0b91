"""Chips under concurrent requests: whatever lands at the same moment, no chip is created, lost or
moved twice.

The same harness as ``test_races``: threads call the real ``games.table.actions`` and ``accounts.ledger``
functions, each on its own database connection, released together by a ``threading.Barrier``.  On
PostgreSQL the rows' locks (the table's, then the accounts' in id order) serialise them; on SQLite
the write lock taken when each transaction begins does.  After every race the books are audited
(``ledger.audit``: every transaction sums to zero, every balance is the sum of its entries, the
accounts sum to zero, no user or pot below zero) and each person's chips are checked to the chip.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from accounts import ledger
from accounts.models import Account, Entry
from accounts.models import Transaction as LedgerTransaction
from games.engine import Phase, default_action
from games.engine.snapshot import load
from games.live import timers
from games.models import Move, Round, Seat, Table
from games.table import actions
from games.table.actions import lifecycle

from .helpers import person
from .test_races import race

pytestmark = pytest.mark.django_db(transaction=True)

WELCOME = ledger.WELCOME_CHIPS
_names = itertools.count()


@pytest.fixture(autouse=True)
def no_background_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests run every due step themselves (``do_due``).  With the Celery clock on, each commit
    would queue a task on the shared Redis broker that no worker of this run consumes (and a later
    run's worker would pick up); without it there is no server loop anyway.  So: nothing is armed."""
    monkeypatch.setattr(timers, "arm", lambda table_id, seq, due, **_kw: None)


# -- helpers -------------------------------------------------------------------------------


def someone(prefix: str) -> Any:
    """A new person (with the welcome grant: ``WELCOME`` chips)."""
    user = person(f"{prefix}-{next(_names)}")
    assert ledger.balance(user.pk) == WELCOME
    return user


def bring_to(user: Any, chips: int) -> None:
    """A moderator's adjustment that leaves ``user`` with exactly ``chips``."""
    ledger.adjust(user.pk, chips - ledger.balance(user.pk), "test set-up", key=f"test:{user.pk}:{next(_names)}")
    assert ledger.balance(user.pk) == chips


def pot(table_id: int) -> int:
    return int(
        Account.objects.filter(kind=Account.Kind.POT, table_id=table_id).values_list("balance", flat=True).first() or 0
    )


def house() -> int:
    return int(Account.objects.filter(kind=Account.Kind.HOUSE).values_list("balance", flat=True).first() or 0)


def books_balance() -> None:
    problems = ledger.audit()
    assert problems == [], "the ledger audit found problems:\n" + "\n".join(problems)


def kinds(results: list[tuple[str, Any]]) -> list[str]:
    return [kind for kind, _value in results]


def refused_codes(results: list[tuple[str, Any]]) -> list[str]:
    return [value.code for kind, value in results if kind == "refused"]


def no_crash(results: list[tuple[str, Any]]) -> None:
    assert "crashed" not in kinds(results) and "missing" not in kinds(results), results


def txns(table_id: int, kind: str) -> list[LedgerTransaction]:
    return list(LedgerTransaction.objects.filter(table_id=table_id, kind=kind).order_by("pk"))


def every_stake_refunded_once(table_id: int) -> None:
    """Each seat's stake on this table came back exactly once, mirrored leg for leg."""
    stakes = txns(table_id, LedgerTransaction.Kind.STAKE)
    refunds = {t.key: t for t in txns(table_id, LedgerTransaction.Kind.REFUND)}
    assert sorted(refunds) == sorted(t.key.replace("stake:", "refund:", 1) for t in stakes), (
        [t.key for t in stakes],
        sorted(refunds),
    )
    for stake in stakes:
        refund = refunds[stake.key.replace("stake:", "refund:", 1)]
        held = sorted(stake.entries.values_list("account_id", "amount"))
        back = sorted((account, -amount) for account, amount in refund.entries.values_list("account_id", "amount"))
        assert held == back, (stake.key, held, back)


def waiting_table(host: Any, size: int, stake: int, guests: list[Any], *, public: bool = True) -> Table:
    """A waiting table created by ``host`` with ``guests`` seated after them (stakes held)."""
    if public:
        table = actions.do_create_table(host, size, public=True, stake=stake)
    else:
        table = actions.do_create_private_table(host, size, stake, bots_allowed=True)
    for guest in guests:
        actions.do_take_seat(table.pk, guest, code=table.code)
    table.refresh_from_db()
    assert table.status == Table.Status.WAITING
    assert pot(table.pk) == stake * (1 + len(guests))
    return table


# -- 1a. the same chips at two tables at once -----------------------------------------------------


def test_sitting_at_two_tables_at_once_with_chips_for_one() -> None:
    """2,500 chips, two 2,000-chip tables, both sits at the same moment: one seat, never two."""
    for round_number in range(5):
        player = someone("spender")
        hosts = [someone("host"), someone("host")]
        tables = [waiting_table(h, 3, 2000, []) for h in hosts]
        bring_to(player, 2500)
        results = race(*[lambda t=t: actions.do_take_seat(t.pk, player) for t in tables])
        no_crash(results)
        assert sorted(kinds(results)) == ["ok", "refused"], (round_number, results)
        # (the second, under the person's lock, now finds the first seat: one live table each)
        assert refused_codes(results) in (["chips"], ["live_elsewhere"]), (round_number, results)
        won = kinds(results).index("ok")
        assert ledger.balance(player.pk) == 500, (round_number, ledger.balance(player.pk))
        assert Seat.objects.filter(user=player).count() == 1
        assert Seat.objects.filter(user=player, table_id=tables[won].pk).exists()
        assert [pot(t.pk) for t in tables] == [4000 if i == won else 2000 for i in range(2)], round_number
        stakes = LedgerTransaction.objects.filter(kind=LedgerTransaction.Kind.STAKE, entries__account__user=player)
        assert stakes.count() == 1, list(stakes.values_list("key", flat=True))
        for table in tables:  # the refused sit left its table as it was, waiting for players
            table.refresh_from_db()
            assert table.status == Table.Status.WAITING
        books_balance()


def test_two_tabs_sitting_at_the_same_staked_table_at_once() -> None:
    """The same seat asked for twice: one seat, one stake."""
    for round_number in range(3):
        player = someone("twotabs")
        table = waiting_table(someone("host"), 4, 500, [])
        results = race(lambda: actions.do_take_seat(table.pk, player), lambda: actions.do_take_seat(table.pk, player))
        no_crash(results)
        assert sorted(kinds(results)) == ["ok", "refused"], (round_number, results)
        assert refused_codes(results) == ["already_seated"], (round_number, results)
        assert ledger.balance(player.pk) == WELCOME - 500
        assert Seat.objects.filter(user=player, table=table).count() == 1
        assert pot(table.pk) == 1000 and len(txns(table.pk, LedgerTransaction.Kind.STAKE)) == 2
        books_balance()


def test_creating_a_table_and_sitting_at_another_at_once_with_chips_for_one() -> None:
    """The other way to spend a stake: opening a 2,000-chip table while sitting at another one."""
    for round_number in range(3):
        player = someone("opener")
        other = waiting_table(someone("host"), 4, 2000, [])
        bring_to(player, 2500)
        tables_before = Table.objects.count()
        results = race(
            lambda: actions.do_take_seat(other.pk, player),
            lambda: actions.do_create_table(player, 3, public=True, stake=2000),
        )
        no_crash(results)
        assert sorted(kinds(results)) == ["ok", "refused"], (round_number, results)
        assert refused_codes(results) in (["chips"], ["live_elsewhere"]), (round_number, results)
        assert ledger.balance(player.pk) == 500
        assert Seat.objects.filter(user=player).count() == 1
        # a refused creation leaves no table behind (its row went with the transaction)
        assert Table.objects.count() == tables_before + (1 if kinds(results)[1] == "ok" else 0)
        books_balance()


# -- 1b. the daily top-up claimed from two tabs -------------------------------------------------------


def test_two_tabs_claiming_the_daily_topup_at_once() -> None:
    now = timezone.now()  # one instant for both tabs: the race is about the lock, not midnight in Madrid
    for round_number in range(4):
        player = someone("broke")
        bring_to(player, 40)

        def claim() -> Any:
            try:
                return ledger.claim_topup(player.pk, now=now)
            except ledger.LedgerError as error:  # returned, so race() reports it as an "ok" result
                return error

        results = race(claim, claim)
        no_crash(results)
        values = [value for _kind, value in results]
        granted = [v for v in values if isinstance(v, LedgerTransaction)]
        refused = [v for v in values if isinstance(v, ledger.LedgerError)]
        assert len(granted) == 1 and len(refused) == 1, (round_number, values)
        assert refused[0].code == "topup_claimed", (round_number, refused[0].code)
        assert ledger.balance(player.pk) == 40 + ledger.TOPUP_CHIPS
        topups = LedgerTransaction.objects.filter(
            kind=LedgerTransaction.Kind.TOPUP, key__startswith=f"topup:{player.pk}:"
        )
        assert topups.count() == 1, list(topups.values_list("key", flat=True))
        assert Entry.objects.filter(transaction__in=topups, account__user=player).get().amount == ledger.TOPUP_CHIPS
        # and a third claim later the same day is refused too (now it is both claimed and enough)
        with pytest.raises(ledger.LedgerError) as third:
            ledger.claim_topup(player.pk, now=now)
        assert third.value.code == "topup_claimed"
        assert ledger.balance(player.pk) == 40 + ledger.TOPUP_CHIPS
        books_balance()


# -- 1c. the pot paid once when the game's end is processed twice ------------------------------------


def is_last_move(game: Any) -> bool:
    """The last card of the last round is the next move."""
    return (
        game.phase is Phase.PLAYING and game.number == len(game.schedule) and sum(len(hand) for hand in game.hands) == 1
    )


def play_to_the_last_move(table_id: int, users: list[Any]) -> tuple[Table, Any]:
    """Play the default move for whoever is to move until one move is left; (table, that move)."""
    for _ in range(2000):
        table = Table.objects.get(pk=table_id)
        game = load(table.state)
        action = default_action(game)
        if is_last_move(game):
            probe = game.copy()
            probe.apply(action, game.turn)
            assert probe.is_over
            return table, action
        actions.do_action(table_id, users[game.turn], action, table.seq)
    raise AssertionError("the game never came to its last move")


def staked_game_at_its_last_move(stake: int) -> tuple[Table, list[Any], Any]:
    users = [someone("pot") for _ in range(3)]
    table = actions.do_create_table(users[0], 3, public=True, stake=stake)
    for user in users[1:]:
        actions.do_take_seat(table.pk, user)  # the last free seat starts the game: three people, no bots
    assert Table.objects.get(pk=table.pk).status == Table.Status.PLAYING
    assert pot(table.pk) == 3 * stake
    table, last = play_to_the_last_move(table.pk, users)
    assert table.status == Table.Status.PLAYING and pot(table.pk) == 3 * stake
    assert not txns(table.pk, LedgerTransaction.Kind.PAYOUT)
    return table, users, last


def check_paid_once(table_id: int, users: list[Any], stake: int) -> dict[int, int]:
    """The pot went out exactly once, to the winners as the rules split it; returns the shares."""
    table = Table.objects.get(pk=table_id)
    game = load(table.state)
    assert table.status == Table.Status.FINISHED and game.is_over
    winners = game.winners()
    assert winners
    shares = actions.split_pot(3 * stake, winners)
    assert sum(shares.values()) == 3 * stake and set(shares) == set(winners)
    payouts = txns(table_id, LedgerTransaction.Kind.PAYOUT)
    assert [t.key for t in payouts] == [f"payout:table:{table_id}"], [t.key for t in payouts]
    legs = dict(payouts[0].entries.values_list("account_id", "amount"))
    pot_account = Account.objects.get(kind=Account.Kind.POT, table_id=table_id)
    expected_legs = {pot_account.pk: -3 * stake}
    for position, share in shares.items():
        expected_legs[ledger.user_account(users[position].pk).pk] = share
    assert legs == expected_legs
    assert pot(table_id) == 0
    for position, user in enumerate(users):
        assert ledger.balance(user.pk) == WELCOME - stake + shares.get(position, 0), (position, shares)
    assert dict(Seat.objects.filter(table_id=table_id).values_list("position", "winnings")) == {
        p: shares.get(p, 0) for p in range(3)
    }
    books_balance()
    return shares


def test_the_last_card_and_its_clock_at_once_pay_the_pot_once() -> None:
    """The last person's card and the clock's default for it (the deadline just passed) land together:
    one of them ends the game, and the pot is paid once."""
    stake = 500
    table, users, last = staked_game_at_its_last_move(stake)
    mover = users[table.turn_seat]
    seq = table.seq
    plays_before = Move.objects.filter(table_id=table.pk, kind=Move.Kind.PLAY).count()
    # The person's clock ran out a second ago, so the due step is eligible too (and plays by the clock).
    past = timezone.now() - timedelta(seconds=1)
    Table.objects.filter(pk=table.pk).update(turn_deadline=past, due_at=past)
    results = race(lambda: actions.do_action(table.pk, mover, last, seq), lambda: actions.do_due(table.pk, seq))
    no_crash(results)
    applied = [value for kind, value in results if kind == "ok" and value is not None]
    assert len(applied) == 1 and applied[0].seq == seq + 1, results
    action_result, due_result = results
    if action_result[0] == "ok":  # the card went in: the clock's step found the table moved on
        assert due_result == ("ok", None), results
    else:  # the clock played it: the card was refused as stale, or as late (the deadline had passed)
        assert action_result[1].code in ("stale", "late") and due_result[0] == "ok", results
    assert Table.objects.get(pk=table.pk).seq == seq + 1
    assert Move.objects.filter(table_id=table.pk, kind=Move.Kind.PLAY).count() == plays_before + 1
    shares = check_paid_once(table.pk, users, stake)

    # The end processed again, by hand, under the table's lock: nothing moves.
    transactions_before = LedgerTransaction.objects.count()
    balances_before = dict(Account.objects.values_list("pk", "balance"))
    with transaction.atomic():
        locked = Table.objects.select_for_update().get(pk=table.pk)
        fields = lifecycle.on_finish(locked, load(locked.state))
    assert fields["status"] == Table.Status.FINISHED
    assert LedgerTransaction.objects.count() == transactions_before
    assert dict(Account.objects.values_list("pk", "balance")) == balances_before
    assert check_paid_once(table.pk, users, stake) == shares
    # ... and a late due step, or a late card, for the old seq does nothing either.
    assert actions.do_due(table.pk, seq) is None
    assert actions.do_due(table.pk, seq + 1) is None
    with pytest.raises(actions.ActionError):
        actions.do_action(table.pk, mover, last, seq + 1)
    assert LedgerTransaction.objects.count() == transactions_before
    assert dict(Account.objects.values_list("pk", "balance")) == balances_before


def test_the_last_card_from_two_tabs_and_two_timers_at_once_pay_the_pot_once() -> None:
    """Four ways in at the same moment for the game's last card (two tabs, the timer, the sweeper)."""
    stake = 100
    table, users, last = staked_game_at_its_last_move(stake)
    mover = users[table.turn_seat]
    seq = table.seq
    past = timezone.now() - timedelta(seconds=1)
    Table.objects.filter(pk=table.pk).update(turn_deadline=past, due_at=past)
    results = race(
        lambda: actions.do_action(table.pk, mover, last, seq),
        lambda: actions.do_action(table.pk, mover, last, seq),
        lambda: actions.do_due(table.pk, seq),
        lambda: actions.do_due(table.pk, seq),
    )
    no_crash(results)
    applied = [value for kind, value in results if kind == "ok" and value is not None]
    assert len(applied) == 1 and applied[0].seq == seq + 1, results
    assert all(value.code in ("stale", "late") for kind, value in results if kind == "refused"), results
    check_paid_once(table.pk, users, stake)


def test_the_last_step_of_a_game_with_bots_run_twice_at_once_pays_the_pot_once(settings: Any) -> None:
    """One person and two bots (staked by the house): the last move's due step fired twice (the timer and
    the sweeper), or the person's card against the clock's; the bots' shares go to the house, once."""
    settings.POCHA_BOT_DELAY = 0
    stake = 500
    player = someone("withbots")
    house_before = house()
    table = actions.do_create_table(player, 3, public=True, stake=stake)
    actions.do_start(table.pk, player)
    assert house() == house_before - 2 * stake and pot(table.pk) == 3 * stake
    for _ in range(2000):
        table = Table.objects.get(pk=table.pk)
        game = load(table.state)
        bot = Seat.objects.get(table=table, position=game.turn).is_bot
        if is_last_move(game):
            break
        if bot:
            assert actions.do_due(table.pk, table.seq) is not None
        else:
            actions.do_action(table.pk, player, default_action(game), table.seq)
    else:
        raise AssertionError("the game never came to its last move")
    seq = table.seq
    if bot:
        results = race(lambda: actions.do_due(table.pk, seq), lambda: actions.do_due(table.pk, seq))
    else:
        past = timezone.now() - timedelta(seconds=1)
        Table.objects.filter(pk=table.pk).update(turn_deadline=past, due_at=past)
        results = race(
            lambda: actions.do_action(table.pk, player, default_action(game), seq),
            lambda: actions.do_due(table.pk, seq),
        )
    no_crash(results)
    applied = [value for kind, value in results if kind == "ok" and value is not None]
    assert len(applied) == 1 and applied[0].seq == seq + 1, (bot, results)
    assert all(value.code in ("stale", "late") for kind, value in results if kind == "refused"), results

    table.refresh_from_db()
    game = load(table.state)
    assert table.status == Table.Status.FINISHED and game.is_over
    shares = actions.split_pot(3 * stake, game.winners())
    payouts = txns(table.pk, LedgerTransaction.Kind.PAYOUT)
    assert [t.key for t in payouts] == [f"payout:table:{table.pk}"], [t.key for t in payouts]
    bots_share = sum(share for position, share in shares.items() if position != 0)
    assert pot(table.pk) == 0
    assert ledger.balance(player.pk) == WELCOME - stake + shares.get(0, 0), shares
    assert house() == house_before - 2 * stake + bots_share, shares
    legs = dict(payouts[0].entries.values_list("account__kind", "amount"))
    assert legs == {k: v for k, v in {"pot": -3 * stake, "user": shares.get(0, 0), "house": bots_share}.items() if v}
    assert dict(Seat.objects.filter(table=table).values_list("position", "winnings")) == {
        p: shares.get(p, 0) for p in range(3)
    }
    books_balance()


# -- 1d. a cancel repeated: the stakes go back once ---------------------------------------------------


def test_a_private_table_cancelled_twice_at_once_refunds_once() -> None:
    stake = 500
    for round_number in range(3):
        host, *guests = [someone("cancel") for _ in range(3)]
        table = waiting_table(host, 4 if round_number % 2 else 3, stake, guests, public=False)
        seats = list(Seat.objects.filter(table=table))
        assert len(seats) == 3
        # one tab of the host sends the page's seq, the other none (a form without it)
        results = race(lambda: actions.do_cancel(table.pk, host, table.seq), lambda: actions.do_cancel(table.pk, host))
        no_crash(results)
        assert sorted(kinds(results)) == ["ok", "refused"], (round_number, results)
        assert refused_codes(results)[0] in ("not_waiting", "stale"), results
        with pytest.raises(actions.ActionError) as third:
            actions.do_cancel(table.pk, host)
        assert third.value.code == "not_waiting"
        assert Table.objects.get(pk=table.pk).status == Table.Status.CANCELLED
        for user in (host, *guests):
            assert ledger.balance(user.pk) == WELCOME, (round_number, user.username, ledger.balance(user.pk))
        refunds = txns(table.pk, LedgerTransaction.Kind.REFUND)
        assert sorted(t.key for t in refunds) == sorted(f"refund:seat:{s.pk}" for s in seats)
        every_stake_refunded_once(table.pk)
        assert pot(table.pk) == 0
        books_balance()


# -- 1e. leaving, sitting, starting and cancelling at once ------------------------------------------


def test_a_guest_leaving_while_the_host_cancels() -> None:
    stake = 500
    for round_number in range(4):
        host, leaver, stayer = [someone("leave") for _ in range(3)]
        table = waiting_table(host, 4, stake, [leaver, stayer], public=False)
        calls: list[Callable[[], Any]] = [
            lambda: actions.do_leave_seat(table.pk, leaver),
            lambda: actions.do_cancel(table.pk, host),
        ]
        if round_number % 2:
            calls.reverse()
        results = race(*calls)
        no_crash(results)
        by_name = dict(zip(("leave", "cancel") if not round_number % 2 else ("cancel", "leave"), results))
        assert by_name["cancel"][0] == "ok", results
        assert by_name["leave"][0] == "ok" or by_name["leave"][1].code == "not_playing", results
        assert Table.objects.get(pk=table.pk).status == Table.Status.CANCELLED
        for user in (host, leaver, stayer):
            assert ledger.balance(user.pk) == WELCOME, (round_number, results, ledger.balance(user.pk))
        every_stake_refunded_once(table.pk)
        assert pot(table.pk) == 0
        books_balance()


def test_someone_sitting_while_the_host_cancels() -> None:
    stake = 2000
    for round_number in range(4):
        host, guest, late = [someone("sitcancel") for _ in range(3)]
        table = waiting_table(host, 4, stake, [guest], public=False)
        results = race(
            lambda: actions.do_take_seat(table.pk, late, code=table.code), lambda: actions.do_cancel(table.pk, host)
        )
        no_crash(results)
        sit, cancel = results
        assert cancel[0] == "ok", results
        assert sit[0] == "ok" or sit[1].code in ("code_expired", "not_waiting", "unknown_table"), results
        assert Table.objects.get(pk=table.pk).status == Table.Status.CANCELLED
        for user in (host, guest, late):
            assert ledger.balance(user.pk) == WELCOME, (round_number, results, ledger.balance(user.pk))
        every_stake_refunded_once(table.pk)
        assert pot(table.pk) == 0
        books_balance()


def test_the_last_two_people_leaving_a_public_table_at_once() -> None:
    """The second to go finds nobody left and calls the table off: both stakes come back, once each."""
    stake = 100
    for round_number in range(4):
        host, guest = someone("bothleave"), someone("bothleave")
        table = waiting_table(host, 4, stake, [guest])
        results = race(lambda: actions.do_leave_seat(table.pk, host), lambda: actions.do_leave_seat(table.pk, guest))
        no_crash(results)
        assert kinds(results) == ["ok", "ok"], (round_number, results)
        assert Table.objects.get(pk=table.pk).status == Table.Status.CANCELLED
        assert not Seat.objects.filter(table=table).exists()
        for user in (host, guest):
            assert ledger.balance(user.pk) == WELCOME, (round_number, ledger.balance(user.pk))
        every_stake_refunded_once(table.pk)
        assert pot(table.pk) == 0
        books_balance()


@pytest.mark.parametrize("size", [3, 4])
def test_someone_sitting_while_the_host_starts(size: int) -> None:
    """At 3 seats the sit takes the last one (and starts the game itself); at 4 it leaves one for a bot.
    Either way every seat's stake is in the pot once, and nobody pays for a seat they did not get."""
    stake = 500
    for round_number in range(4):
        host, guest, late = [someone("sitstart") for _ in range(3)]
        table = waiting_table(host, size, stake, [guest])
        house_before = house()
        results = race(lambda: actions.do_take_seat(table.pk, late), lambda: actions.do_start(table.pk, host))
        no_crash(results)
        sit, start = results
        assert "ok" in (sit[0], start[0]), results
        assert all(code == "not_waiting" for code in refused_codes(results)), results
        seated = Seat.objects.filter(table=table, user=late).exists()
        assert seated == (sit[0] == "ok"), results
        table.refresh_from_db()
        assert table.status == Table.Status.PLAYING
        assert Round.objects.filter(table=table).count() == 1  # dealt once
        seats = list(Seat.objects.filter(table=table))
        bots = sum(s.is_bot for s in seats)
        assert len(seats) == size and bots == size - 2 - seated, (round_number, results, seats)
        assert pot(table.pk) == size * stake
        assert len(txns(table.pk, LedgerTransaction.Kind.STAKE)) == size
        assert ledger.balance(host.pk) == ledger.balance(guest.pk) == WELCOME - stake
        assert ledger.balance(late.pk) == WELCOME - (stake if seated else 0), (round_number, results)
        assert house() == house_before - bots * stake
        books_balance()
