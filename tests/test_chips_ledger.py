"""The chip wallet, one rule at a time: grants, top-ups, the one write (``ledger.post``), the database's
own guard, splitting a pot, the wallet page and the header, and the stakes of a table from the first
seat taken to the payout (RULES.md, "Chips and stakes")."""

from __future__ import annotations

import importlib
import itertools
import random
import re
import types
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Sum
from live.helpers import person, play_to_the_end

from accounts import ledger
from accounts.models import Account, Entry, Transaction
from games.engine import GameState, levels
from games.engine.snapshot import load
from games.models import Seat, Table
from games.table import actions
from games.table.actions import common, lifecycle
from games.table.errors import ActionError

pytestmark = pytest.mark.django_db

UTC = UTC
schedule_module = importlib.import_module("games.engine.schedule")
presets_module = importlib.import_module("games.engine.presets")
_drains = itertools.count()


# -- helpers -------------------------------------------------------------------------------


def books() -> dict[str, Any]:
    """Everything in the ledger: what a refused request must leave exactly as it was."""
    return {
        "balances": dict(Account.objects.values_list("pk", "balance")),
        "transactions": sorted(Transaction.objects.values_list("key", flat=True)),
        "entries": Entry.objects.count(),
    }


def assert_books_balance() -> None:
    assert ledger.audit() == [], ledger.audit()
    assert (Account.objects.aggregate(t=Sum("balance"))["t"] or 0) == 0, "the accounts do not sum to zero"
    unbalanced = Transaction.objects.annotate(t=Sum("entries__amount")).exclude(t=0)
    assert not unbalanced.exists(), list(unbalanced.values_list("key", "t"))
    assert not Account.objects.filter(kind__in=["user", "pot"], balance__lt=0).exists()
    for account in Account.objects.all():
        running = 0
        for amount, after in (
            Entry.objects.filter(account=account).order_by("pk").values_list("amount", "balance_after")
        ):
            running += amount
            assert after == running, f"account {account.pk}: balance_after {after} but running sum {running}"
        assert account.balance == running, f"account {account.pk} holds {account.balance}, entries say {running}"


def drain_to(user: Any, chips: int) -> None:
    """Leave ``user`` with exactly ``chips`` (a moderator's adjustment)."""
    have = ledger.balance(user.pk)
    ledger.adjust(user.pk, chips - have, "drain", key=f"drain:{user.pk}:{next(_drains)}")
    assert ledger.balance(user.pk) == chips


def pot_balance(table_id: int) -> int:
    return (
        Account.objects.filter(kind=Account.Kind.POT, table_id=table_id).values_list("balance", flat=True).first() or 0
    )


def house_balance() -> int:
    return ledger.house_account().balance


def reload(table: Table) -> Table:
    return Table.objects.get(pk=table.pk)


@pytest.fixture
def fast_bots(settings) -> None:
    settings.POCHA_BOT_DELAY = 0


@pytest.fixture
def short_games(monkeypatch) -> None:
    """Games of one round only (one card each): a whole game in a dozen moves, and ties are common."""
    real = schedule_module.schedule

    def one_round(players: int) -> Any:
        return real(players)[:1]

    monkeypatch.setattr(presets_module, "schedule", one_round)


# -- the welcome grant ---------------------------------------------------------------------


def test_a_new_user_gets_the_welcome_grant_once():
    user = person("ana")
    assert ledger.balance(user.pk) == ledger.WELCOME_CHIPS == 5000
    welcome = Transaction.objects.get(key=f"welcome:{user.pk}")
    assert welcome.kind == Transaction.Kind.WELCOME
    legs = {(e.account.kind, e.amount, e.balance_after) for e in welcome.entries.select_related("account")}
    assert legs == {("grants", -5000, -5000), ("user", 5000, 5000)}
    before = books()
    assert ledger.grant_welcome(user.pk) is None  # a second grant for the same user is the same event
    assert books() == before
    assert Transaction.objects.filter(kind=Transaction.Kind.WELCOME).count() == 1
    assert_books_balance()


def test_every_way_of_making_a_user_grants_the_welcome_chips():
    User = get_user_model()
    made = [
        User.objects.create(username="plain"),
        User.objects.create_superuser("jefa", password=None),
        person("normal"),
    ]
    for user in made:
        assert ledger.balance(user.pk) == 5000, user
    assert ledger.grants_account().balance == -5000 * len(made)
    # Saving an existing user again grants nothing.
    made[0].first_name = "Otra"
    made[0].save()
    assert ledger.balance(made[0].pk) == 5000
    assert Transaction.objects.filter(kind=Transaction.Kind.WELCOME).count() == len(made)
    assert_books_balance()


def test_signing_up_through_the_page_grants_the_welcome_chips(client, password):
    response = client.post("/accounts/signup/", {"username": "nueva", "password1": password, "password2": password})
    assert response.status_code == 302
    user = get_user_model().objects.get(username="nueva")
    assert ledger.balance(user.pk) == 5000
    assert Transaction.objects.filter(key=f"welcome:{user.pk}").count() == 1


# -- the daily top-up ----------------------------------------------------------------------

WINTER_NOON = datetime(2025, 1, 15, 12, 0, tzinfo=UTC)


def test_no_topup_at_or_above_100_chips():
    user = person("rica")
    for chips in (5000, 100):
        drain_to(user, chips)
        before = books()
        assert ledger.topup_status(user.pk, WINTER_NOON) == "enough"
        with pytest.raises(ledger.LedgerError) as refused:
            ledger.claim_topup(user.pk, now=WINTER_NOON)
        assert refused.value.code == "topup_enough"
        assert "menos de 100" in str(refused.value.message)
        assert books() == before, f"a refused top-up at {chips} chips moved chips"


def test_a_topup_below_100_chips_then_not_again_the_same_day():
    user = person("pobre")
    drain_to(user, 99)
    assert ledger.topup_status(user.pk, WINTER_NOON) == "ok"
    record = ledger.claim_topup(user.pk, now=WINTER_NOON)
    assert record.kind == Transaction.Kind.TOPUP and record.key == f"topup:{user.pk}:2025-01-15"
    assert ledger.balance(user.pk) == 599
    assert sorted(record.entries.values_list("amount", flat=True)) == [-500, 500]
    # Even back below 100 the same (Madrid) day: refused, and nothing moves.
    drain_to(user, 0)
    assert ledger.topup_status(user.pk, WINTER_NOON + timedelta(hours=6)) == "claimed"
    before = books()
    with pytest.raises(ledger.LedgerError) as refused:
        ledger.claim_topup(user.pk, now=WINTER_NOON + timedelta(hours=6))
    assert refused.value.code == "topup_claimed"
    assert books() == before
    assert_books_balance()


def test_topup_days_are_madrid_days_in_winter():
    user = person("noctambulo")
    drain_to(user, 0)
    # 22:30 UTC on 15 January is 23:30 in Madrid: still the 15th.
    ledger.claim_topup(user.pk, now=datetime(2025, 1, 15, 22, 30, tzinfo=UTC))
    drain_to(user, 0)
    # 23:30 UTC the same UTC day is already 00:30 on the 16th in Madrid: a new day, a new top-up.
    assert ledger.topup_day(datetime(2025, 1, 15, 23, 30, tzinfo=UTC)) == date(2025, 1, 16)
    assert ledger.topup_status(user.pk, datetime(2025, 1, 15, 23, 30, tzinfo=UTC)) == "ok"
    record = ledger.claim_topup(user.pk, now=datetime(2025, 1, 15, 23, 30, tzinfo=UTC))
    assert record.key == f"topup:{user.pk}:2025-01-16"
    assert ledger.balance(user.pk) == 500
    drain_to(user, 0)
    # 22:59 UTC on the 16th is 23:59 in Madrid, still the 16th: refused.
    with pytest.raises(ledger.LedgerError) as refused:
        ledger.claim_topup(user.pk, now=datetime(2025, 1, 16, 22, 59, tzinfo=UTC))
    assert refused.value.code == "topup_claimed"
    assert ledger.balance(user.pk) == 0
    # And the next Madrid morning: granted.
    ledger.claim_topup(user.pk, now=datetime(2025, 1, 17, 8, 0, tzinfo=UTC))
    assert ledger.balance(user.pk) == 500
    assert Transaction.objects.filter(kind=Transaction.Kind.TOPUP, key__startswith=f"topup:{user.pk}:").count() == 3
    assert_books_balance()


def test_topup_days_are_madrid_days_in_summer_too():
    # Summer time is UTC+2: 21:59 UTC is 23:59 on the 15th, 22:00 UTC is midnight on the 16th.
    assert ledger.topup_day(datetime(2025, 7, 15, 21, 59, tzinfo=UTC)) == date(2025, 7, 15)
    assert ledger.topup_day(datetime(2025, 7, 15, 22, 0, tzinfo=UTC)) == date(2025, 7, 16)
    user = person("verano")
    drain_to(user, 10)
    ledger.claim_topup(user.pk, now=datetime(2025, 7, 15, 21, 59, tzinfo=UTC))
    drain_to(user, 10)
    ledger.claim_topup(user.pk, now=datetime(2025, 7, 15, 22, 0, tzinfo=UTC))
    assert ledger.balance(user.pk) == 510


def test_a_topup_with_the_real_clock():
    user = person("ahora")
    drain_to(user, 0)
    record = ledger.claim_topup(user.pk)
    assert record.key == ledger.topup_key(user.pk, ledger.topup_day())
    assert ledger.topup_status(user.pk) == "claimed"


# -- the one write -------------------------------------------------------------------------


def test_post_refuses_legs_that_do_not_balance_and_nothing_changes():
    user = person("cuadre")
    before = books()
    with pytest.raises(ValueError, match="does not balance"):
        with transaction.atomic():
            ledger.post(
                Transaction.Kind.ADJUSTMENT,
                "unbalanced",
                [(ledger.grants_account(), -10), (ledger.user_account(user.pk), 9)],
            )
    assert books() == before
    assert not Transaction.objects.filter(key="unbalanced").exists()


def test_post_refuses_to_take_a_user_below_zero_and_nothing_changes():
    user = person("justo")
    house = ledger.house_account()
    before = books()
    with pytest.raises(ledger.InsufficientChips) as refused:
        with transaction.atomic():
            ledger.post(Transaction.Kind.ADJUSTMENT, "too-much", [(ledger.user_account(user.pk), -5001), (house, 5001)])
    assert (refused.value.balance, refused.value.needed, refused.value.code) == (5000, 5001, "chips")
    assert books() == before
    assert not Transaction.objects.filter(key="too-much").exists()
    # Exactly everything is fine, and leaves the user at zero.
    with transaction.atomic():
        assert (
            ledger.post(
                Transaction.Kind.ADJUSTMENT, "all-of-it", [(ledger.user_account(user.pk), -5000), (house, 5000)]
            )
            is not None
        )
    assert ledger.balance(user.pk) == 0
    assert_books_balance()


def test_post_refuses_to_take_a_pot_below_zero():
    user = person("bote")
    table = actions.do_create_table(user, 3, stake=100)
    pot = ledger.pot_account(table.pk)
    before = books()
    with pytest.raises(ledger.InsufficientChips):
        with transaction.atomic():
            ledger.post(Transaction.Kind.PAYOUT, "pot-overdraw", [(pot, -101), (ledger.user_account(user.pk), 101)])
    assert books() == before


def test_the_house_and_the_grants_may_go_negative():
    user = person("casa")
    with transaction.atomic():
        ledger.post(
            Transaction.Kind.ADJUSTMENT,
            "house-pays",
            [(ledger.house_account(), -700), (ledger.user_account(user.pk), 700)],
        )
    assert house_balance() == -700 and ledger.balance(user.pk) == 5700
    assert ledger.grants_account().balance == -5000
    assert_books_balance()


def test_post_is_exactly_once_per_key():
    user = person("doble")
    legs = [(ledger.grants_account(), -50), (ledger.user_account(user.pk), 50)]
    with transaction.atomic():
        first = ledger.post(Transaction.Kind.ADJUSTMENT, "once", legs)
    with transaction.atomic():
        second = ledger.post(Transaction.Kind.ADJUSTMENT, "once", legs)
    assert first is not None and second is None
    assert ledger.balance(user.pk) == 5050
    assert Transaction.objects.filter(key="once").count() == 1
    # The same through adjust(): the key names the correction.
    assert ledger.adjust(user.pk, 25, "error de la mesa 3", key="m3") is not None
    assert ledger.adjust(user.pk, 25, "error de la mesa 3", key="m3") is None
    assert ledger.balance(user.pk) == 5075
    assert_books_balance()


def test_post_merges_legs_of_one_account_and_records_nothing_for_a_zero_sum():
    user = person("suma")
    mine, grants = ledger.user_account(user.pk), ledger.grants_account()
    before = books()
    with transaction.atomic():
        assert ledger.post(Transaction.Kind.ADJUSTMENT, "nothing", [(mine, 10), (mine, -10)]) is None
    assert books() == before
    with transaction.atomic():
        record = ledger.post(Transaction.Kind.ADJUSTMENT, "merged", [(mine, 10), (grants, -30), (mine, 20)])
    assert record is not None
    assert sorted(record.entries.values_list("amount", flat=True)) == [-30, 30]
    assert record.entries.count() == 2
    assert_books_balance()


def test_post_refuses_to_run_outside_a_transaction(monkeypatch):
    """Its callers must move the chips in the same commit as what they pay for."""
    user = person("fuera")
    monkeypatch.setattr(transaction.get_connection(), "in_atomic_block", False)
    with pytest.raises(RuntimeError, match="inside"):
        ledger.post(
            Transaction.Kind.ADJUSTMENT, "outside", [(ledger.grants_account(), -1), (ledger.user_account(user.pk), 1)]
        )


# -- the database's own guard --------------------------------------------------------------


def test_the_database_refuses_a_negative_user_balance():
    user = person("limite")
    account = ledger.user_account(user.pk)
    with pytest.raises(IntegrityError):
        with transaction.atomic():
            Account.objects.filter(pk=account.pk).update(balance=-1)
    assert ledger.balance(user.pk) == 5000


def test_the_database_refuses_a_negative_pot_but_not_a_negative_house():
    user = person("guardia")
    table = actions.do_create_table(user, 3, stake=100)
    pot = ledger.pot_account(table.pk)
    with pytest.raises(IntegrityError):
        with transaction.atomic():
            Account.objects.filter(pk=pot.pk).update(balance=-1)
    assert pot_balance(table.pk) == 100
    house = ledger.house_account()
    with transaction.atomic():
        Account.objects.filter(pk=house.pk).update(balance=-1)  # allowed: the house may be down
        assert Account.objects.get(pk=house.pk).balance == -1
        transaction.set_rollback(True)


def test_only_one_house_and_one_grants_account():
    ledger.house_account()
    with pytest.raises(IntegrityError):
        with transaction.atomic():
            Account.objects.create(kind=Account.Kind.HOUSE)


# -- splitting a pot -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pot", "winners", "expected"),
    [
        (1500, [2], {2: 1500}),
        (1000, [0, 1, 2], {0: 334, 1: 333, 2: 333}),
        (1000, [2, 0, 1], {0: 334, 1: 333, 2: 333}),  # seat order, whatever order they come in
        (2000, [1, 3], {1: 1000, 3: 1000}),
        (6000, [1, 3, 4, 5], {1: 1500, 3: 1500, 4: 1500, 5: 1500}),
        (400, [0, 1, 3], {0: 134, 1: 133, 3: 133}),
        (500, [4, 1, 2], {1: 167, 2: 167, 4: 166}),
        (2500, [5, 3, 0], {0: 834, 3: 833, 5: 833}),
        (10000, [2, 5, 3], {2: 3334, 3: 3333, 5: 3333}),
        (12000, [0, 1, 2, 3, 4], {0: 2400, 1: 2400, 2: 2400, 3: 2400, 4: 2400}),
        (600, [5, 4, 3, 2], {2: 150, 3: 150, 4: 150, 5: 150}),
        (500, [0, 1, 2, 3, 4, 5], {0: 84, 1: 84, 2: 83, 3: 83, 4: 83, 5: 83}),
    ],
)
def test_split_pot(pot, winners, expected):
    shares = actions.split_pot(pot, winners)
    assert shares == expected
    assert sum(shares.values()) == pot


# -- the wallet page and the header ---------------------------------------------------------


def movement_rows(html: str) -> list[str]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr>(.*?)</tr>", body, re.S)


def test_the_wallet_shows_the_balance_and_every_movement_newest_first(client, fast_bots):
    user = person("cartera")
    other = person("vecino")
    client.force_login(user)
    # A stake and its refund at one table.
    first = actions.do_create_table(user, 3, stake=100)
    actions.do_leave_seat(first.pk, user)
    # A stake at another, a payout from it.
    second = actions.do_create_table(user, 3, stake=500)
    actions.do_take_seat(second.pk, other)
    actions.do_start(second.pk, user)
    game = load(reload(second).state)
    with transaction.atomic():
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(GameState, "winners", lambda self: [0])
            lifecycle.on_finish(reload(second), game)
    ledger.adjust(user.pk, -(ledger.balance(user.pk) - 40), "se equivocó la mesa", key="fix")
    ledger.claim_topup(user.pk)
    assert ledger.balance(user.pk) == 540

    response = client.get("/accounts/fichas/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<strong id="wallet-balance">540</strong>' in html
    rows = movement_rows(html)
    expected = [
        ("Recarga diaria", "+500", "540"),
        ("Ajuste: se equivocó la mesa", "−5.960", "40"),
        (f"Bote de la mesa {second.pk}", "+1.500", "6.000"),
        (f"Apuesta en la mesa {second.pk}", "−500", "4.500"),
        (f"Devolución de la apuesta (mesa {first.pk})", "+100", "5.000"),
        (f"Apuesta en la mesa {first.pk}", "−100", "4.900"),
        ("Regalo de bienvenida", "+5.000", "5.000"),
    ]
    assert len(rows) == len(expected), rows
    for row, (what, amount, after) in zip(rows, expected):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        assert cells[1:] == [what, amount, after], (cells, what)
    # Movements at a table link to it.
    assert f'<a href="/mesa/{second.pk}/">Bote de la mesa {second.pk}</a>' in rows[2]
    # The top-up is done for today: no button, the "come back tomorrow" note.
    assert "Ya has pedido la recarga de hoy" in html
    assert "Pedir la recarga" not in html


def test_the_wallet_is_paginated_25_to_a_page(client):
    user = person("muchos")
    client.force_login(user)
    for n in range(1, 31):
        ledger.adjust(user.pk, 1, f"n{n}", key=f"page:{n}")
    first = client.get("/accounts/fichas/").content.decode()
    rows = movement_rows(first)
    assert len(rows) == 25
    assert "Ajuste: n30" in rows[0] and "Ajuste: n6" in rows[24]
    assert "Página 1 de 2" in first and "?pagina=2" in first
    second = client.get("/accounts/fichas/?pagina=2").content.decode()
    rows = movement_rows(second)
    assert len(rows) == 6
    assert "Ajuste: n5" in rows[0] and "Ajuste: n1" in rows[4] and "Regalo de bienvenida" in rows[5]
    assert "Página 2 de 2" in second
    # Nonsense pages fall back to a real page rather than failing.
    assert client.get("/accounts/fichas/?pagina=zzz").status_code == 200
    assert len(movement_rows(client.get("/accounts/fichas/?pagina=99").content.decode())) == 6


def test_the_wallet_needs_a_login(client):
    response = client.get("/accounts/fichas/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    response = client.post("/accounts/fichas/recarga/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_header_shows_the_balance_on_every_page(client):
    user = person("cabecera")
    client.force_login(user)
    html = client.get("/").content.decode()
    assert '<span class="chips-amount" id="chips-amount" data-chips="5000">5.000</span>' in html
    ledger.adjust(user.pk, -4877, "x", key="header")
    html = client.get("/accounts/fichas/").content.decode()
    assert '<span class="chips-amount" id="chips-amount" data-chips="123">123</span>' in html
    client.logout()
    assert 'id="chips-amount"' not in client.get("/").content.decode()


def test_claiming_the_topup_from_the_wallet(client):
    user = person("recarga")
    client.force_login(user)
    # At 5,000: refused, with the reason.
    response = client.post("/accounts/fichas/recarga/", follow=True)
    assert response.redirect_chain[-1][0].endswith("/accounts/fichas/")
    assert "La recarga es para quien tiene menos de 100 fichas." in response.content.decode()
    assert ledger.balance(user.pk) == 5000
    assert client.get("/accounts/fichas/recarga/").status_code == 405

    drain_to(user, 42)
    page = client.get("/accounts/fichas/").content.decode()
    assert "Pedir la recarga de 500 fichas" in page
    response = client.post("/accounts/fichas/recarga/", follow=True)
    html = response.content.decode()
    assert "Recarga hecha: 500 fichas más." in html
    assert ledger.balance(user.pk) == 542
    assert 'data-chips="542"' in html
    drain_to(user, 0)
    response = client.post("/accounts/fichas/recarga/", follow=True)
    assert "Ya has pedido la recarga de hoy. Vuelve mañana." in response.content.decode()
    assert ledger.balance(user.pk) == 0
    assert Transaction.objects.filter(kind=Transaction.Kind.TOPUP).count() == 1
    assert_books_balance()


# -- stakes at a table ---------------------------------------------------------------------


def stake_keys(table_id: int, kind: str) -> list[str]:
    return list(Transaction.objects.filter(table_id=table_id, kind=kind).values_list("key", flat=True))


def test_sitting_holds_the_stake_and_leaving_gives_it_back_once():
    host, guest = person("anfitrion"), person("invitado")
    table = actions.do_create_table(host, 4, stake=500)
    assert (ledger.balance(host.pk), pot_balance(table.pk)) == (4500, 500)
    actions.do_take_seat(table.pk, guest)
    assert (ledger.balance(guest.pk), pot_balance(table.pk)) == (4500, 1000)
    seat = Seat.objects.get(table=table, user=guest)
    actions.do_leave_seat(table.pk, guest)
    assert (ledger.balance(guest.pk), pot_balance(table.pk)) == (5000, 500)
    assert stake_keys(table.pk, "refund") == [f"refund:seat:{seat.pk}"]
    # Leaving again: not seated any more, nothing moves.
    before = books()
    with pytest.raises(ActionError) as refused:
        actions.do_leave_seat(table.pk, guest)
    assert refused.value.code == "not_seated"
    assert books() == before
    # Sitting down again holds a new stake (a new seat), and leaving again gives that one back.
    actions.do_take_seat(table.pk, guest)
    assert (ledger.balance(guest.pk), pot_balance(table.pk)) == (4500, 1000)
    actions.do_leave_seat(table.pk, guest)
    assert (ledger.balance(guest.pk), pot_balance(table.pk)) == (5000, 500)
    assert len(stake_keys(table.pk, "refund")) == 2
    assert reload(table).status == Table.Status.WAITING
    # The last person out calls the table off: their stake back, the pot empty.
    actions.do_leave_seat(table.pk, host)
    assert reload(table).status == Table.Status.CANCELLED
    assert (ledger.balance(host.pk), pot_balance(table.pk)) == (5000, 0)
    assert_books_balance()


def test_a_cancelled_private_table_gives_every_stake_back_once():
    host, a, b = person("host"), person("a"), person("b")
    table = actions.do_create_private_table(host, 4, 2000, False)
    assert table.code
    for user in (a, b):
        actions.do_take_seat(table.pk, user, code=table.code)
    assert pot_balance(table.pk) == 6000
    assert [ledger.balance(u.pk) for u in (host, a, b)] == [3000, 3000, 3000]
    actions.do_cancel(table.pk, host)
    assert reload(table).status == Table.Status.CANCELLED
    assert pot_balance(table.pk) == 0
    assert [ledger.balance(u.pk) for u in (host, a, b)] == [5000, 5000, 5000]
    assert len(stake_keys(table.pk, "refund")) == 3
    # Cancelling again, or leaving a cancelled table: refused, nothing moves.
    before = books()
    for attempt in (
        lambda: actions.do_cancel(table.pk, host),
        lambda: actions.do_leave_seat(table.pk, a),
        lambda: actions.do_start(table.pk, host),
    ):
        with pytest.raises(ActionError):
            attempt()
        assert books() == before
    assert_books_balance()


def test_the_host_leaving_a_private_table_calls_it_off_and_everyone_is_refunded():
    host, guest = person("se-va"), person("se-queda")
    table = actions.do_create_private_table(host, 3, 100, True)
    actions.do_take_seat(table.pk, guest, code=table.code)
    actions.do_leave_seat(table.pk, host)
    assert reload(table).status == Table.Status.CANCELLED
    assert (ledger.balance(host.pk), ledger.balance(guest.pk), pot_balance(table.pk)) == (5000, 5000, 0)


def test_only_the_host_cancels_and_a_refused_cancel_moves_nothing():
    host, guest = person("jefe"), person("invitada")
    table = actions.do_create_private_table(host, 3, 500, True)
    actions.do_take_seat(table.pk, guest, code=table.code)
    before = books()
    with pytest.raises(ActionError) as refused:
        actions.do_cancel(table.pk, guest)
    assert refused.value.code == "not_host"
    assert books() == before
    other_host = person("jefa")  # (one live table each: the host is at the private one)
    public = actions.do_create_table(other_host, 3, stake=100)
    before = books()
    with pytest.raises(ActionError) as refused:
        actions.do_cancel(public.pk, other_host)
    assert refused.value.code == "not_host"
    assert books() == before


def test_without_the_chips_nobody_sits_and_nothing_moves():
    host, other_host, poor = person("rico"), person("rica"), person("pelado")
    table = actions.do_create_table(host, 4, stake=100)
    private = actions.do_create_private_table(other_host, 4, 2000, True)  # (one live table each)
    drain_to(poor, 99)
    before = books()
    seats_before = list(Seat.objects.order_by("pk").values_list("pk", "table_id", "user_id"))
    attempts = [
        lambda: actions.do_take_seat(table.pk, poor),
        lambda: actions.do_take_seat(private.pk, poor, code=private.code),
        lambda: actions.do_create_table(poor, 3, stake=100),
        lambda: actions.do_create_private_table(poor, 3, 500, True),
        lambda: actions.do_quick_play(poor, 4, 100),
    ]
    for attempt in attempts:
        with pytest.raises(ActionError) as refused:
            attempt()
        assert refused.value.code == "chips"
        assert "tienes 99" in refused.value.message("es")
        assert books() == before
    assert list(Seat.objects.order_by("pk").values_list("pk", "table_id", "user_id")) == seats_before
    # 100 is exactly enough for a 100 table (and leaves 0).
    drain_to(poor, 100)
    actions.do_take_seat(table.pk, poor)
    assert ledger.balance(poor.pk) == 0
    assert_books_balance()


def test_the_ledger_has_the_last_word_on_chips(monkeypatch):
    """Even if the early check is fooled, the ledger's own check under the lock refuses the stake."""
    host, poor = person("alto"), person("bajo")
    table = actions.do_create_table(host, 4, stake=500)
    drain_to(poor, 200)
    monkeypatch.setattr(ledger, "balance", lambda user_id: 10_000)  # the pre-checks see plenty
    before = books()
    with pytest.raises(ActionError) as refused:
        actions.do_take_seat(table.pk, poor)
    assert refused.value.code == "chips"
    assert books() == before
    assert not Seat.objects.filter(table=table, user=poor).exists()
    with pytest.raises(ActionError) as refused:
        actions.do_create_table(poor, 3, stake=500)
    assert refused.value.code == "chips"
    assert books() == before
    assert not Table.objects.filter(created_by=poor).exists()


def test_bots_stake_from_the_house(fast_bots):
    user = person("solo")
    table = actions.do_create_table(user, 5, stake=500)
    actions.do_start(table.pk, user)
    assert pot_balance(table.pk) == 2500
    assert house_balance() == -2000
    bots = Seat.objects.filter(table=table, is_bot=True)
    assert bots.count() == 4
    for bot in bots:
        txn = Transaction.objects.get(key=f"stake:seat:{bot.pk}")
        assert {(e.account.kind, e.amount) for e in txn.entries.select_related("account")} == {
            ("house", -500),
            ("pot", 500),
        }
    assert_books_balance()


def test_a_whole_staked_game_against_bots_pays_the_pot_once(fast_bots):
    user = person("jugadora")
    table = actions.do_create_table(user, 3, stake=100)
    actions.do_start(table.pk, user)
    assert (ledger.balance(user.pk), pot_balance(table.pk), house_balance()) == (4900, 300, -200)
    table = play_to_the_end(table.pk)
    assert table.status == Table.Status.FINISHED
    game = load(table.state)
    winners = game.winners()
    assert winners, "a finished game has winners"
    seats = {s.position: s for s in Seat.objects.filter(table=table)}
    expected = actions.split_pot(300, winners)
    assert {p: s.winnings for p, s in seats.items()} == {p: expected.get(p, 0) for p in seats}
    assert pot_balance(table.pk) == 0
    assert ledger.balance(user.pk) == 5000 - 100 + seats[0].winnings
    assert house_balance() == -200 + sum(s.winnings for s in seats.values() if s.is_bot)
    payouts = Transaction.objects.filter(table=table, kind=Transaction.Kind.PAYOUT)
    assert list(payouts.values_list("key", flat=True)) == [f"payout:table:{table.pk}"]
    assert payouts[0].entries.aggregate(t=Sum("amount"))["t"] == 0
    # Finishing it a second time pays nothing.
    before = books()
    with transaction.atomic():
        fields = lifecycle.on_finish(table, game)
    assert fields["status"] == Table.Status.FINISHED
    assert books() == before
    assert {p: s.winnings for p, s in seats.items()} == dict(
        Seat.objects.filter(table=table).values_list("position", "winnings")
    )
    assert_books_balance()


@pytest.mark.parametrize(
    ("size", "stake", "humans", "winners", "expected"),
    [
        (3, 500, 3, [0, 2], {0: 750, 2: 750}),
        (4, 100, 2, [0, 1, 3], {0: 134, 1: 133, 3: 133}),
        (5, 100, 1, [1, 2, 4], {1: 167, 2: 167, 4: 166}),
        (6, 2000, 2, [1, 3, 4, 5], {1: 3000, 3: 3000, 4: 3000, 5: 3000}),
        (6, 100, 6, [0, 1, 2, 3, 4, 5], {p: 100 for p in range(6)}),
    ],
)
def test_a_tie_splits_the_pot_with_the_odd_chips_from_seat_0(fast_bots, size, stake, humans, winners, expected):
    users = [person(f"empate{i}") for i in range(humans)]
    table = actions.do_create_table(users[0], size, stake=stake)
    for user in users[1:]:
        actions.do_take_seat(table.pk, user)
    if reload(table).status == Table.Status.WAITING:
        actions.do_start(table.pk, users[0])
    table = reload(table)
    assert pot_balance(table.pk) == size * stake
    game = load(table.state)
    house_before = house_balance()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GameState, "winners", lambda self: list(winners))
        with transaction.atomic():
            lifecycle.on_finish(table, game)
        with transaction.atomic():
            lifecycle.on_finish(table, game)  # a second time: nothing more
    seats = {s.position: s for s in Seat.objects.filter(table=table)}
    assert {p: s.winnings for p, s in seats.items()} == {p: expected.get(p, 0) for p in seats}
    assert sum(expected.values()) == size * stake
    assert pot_balance(table.pk) == 0
    for position, seat in seats.items():
        if not seat.is_bot:
            assert ledger.balance(seat.user_id) == 5000 - stake + expected.get(position, 0), position
    assert house_balance() == house_before + sum(expected.get(p, 0) for p, s in seats.items() if s.is_bot)
    assert Transaction.objects.filter(table=table, kind=Transaction.Kind.PAYOUT).count() == 1
    assert_books_balance()


def test_real_tied_games_split_the_pot(fast_bots, short_games, monkeypatch):
    """Real one-round games at 3 seats (deals drawn from fixed seeds) until one ends in a tie for first
    place with an odd pot: the 3 × 100 pot split between two, or three, seats, no chip lost or made.

    The bots' decisions are seeded too, and look at a fixed number of worlds rather than thinking for a
    time: the same games on any machine, however loaded (a bot that thinks for a time, with a fresh
    random source, bid differently from run to run, and once no three-way tie came in 60 games)."""
    real_decide = levels.decide
    found = []
    for seed in range(60):
        rng = random.Random(seed)
        monkeypatch.setattr(common, "secrets", types.SimpleNamespace(randbits=rng.getrandbits, choice=rng.choice))
        bots_rng = random.Random(1000 + seed)
        monkeypatch.setattr(
            levels, "decide", lambda view, level, rng=bots_rng: real_decide(view, level, rng=rng, worlds=8)
        )
        user = person(f"t{seed}")
        table = actions.do_create_table(user, 3, stake=100)
        actions.do_start(table.pk, user)
        table = play_to_the_end(table.pk)
        winners = load(table.state).winners()
        winnings = dict(Seat.objects.filter(table=table).values_list("position", "winnings"))
        assert sum(winnings.values()) == 300
        assert pot_balance(table.pk) == 0
        assert {p for p, w in winnings.items() if w} == set(winners)
        assert ledger.balance(user.pk) == 4900 + winnings[0]
        if len(winners) > 1:
            expected = actions.split_pot(300, winners)
            assert winnings == {p: expected.get(p, 0) for p in range(3)}
            found.append(len(winners))
            if 2 in found and 3 in found:
                break
    assert 2 in found and 3 in found, f"ties seen in 60 seeded one-round games: {found}"
    assert_books_balance()


def test_leaving_a_started_game_is_a_forfeit(fast_bots, short_games):
    """The seat stays theirs and the bot plays it to the end, but it is ranked last: no share of the pot,
    whatever the bot scored; the pot goes to the best of the other seats."""
    user, other = person("marcha"), person("queda")
    table = actions.do_create_table(user, 3, stake=2000)
    actions.do_take_seat(table.pk, other)
    actions.do_start(table.pk, user)
    actions.do_leave_seat(table.pk, user)
    seat = Seat.objects.get(table=table, user=user)
    assert seat.left and seat.forfeit == Seat.Forfeit.LEFT
    assert ledger.balance(user.pk) == 3000  # no refund once started
    before = books()
    with pytest.raises(ActionError) as refused:
        actions.do_leave_seat(table.pk, user)
    assert refused.value.code == "already_left"
    assert books() == before
    table = play_to_the_end(table.pk)
    seat.refresh_from_db()
    assert seat.left, "the seat stayed with the bot to the end"
    totals = load(table.state).totals
    others = [p for p in range(3) if p != seat.position]
    best = max(totals[p] for p in others)
    expected = actions.split_pot(6000, [p for p in others if totals[p] == best])
    assert seat.winnings == 0 and seat.place == 3
    assert dict(Seat.objects.filter(table=table).values_list("position", "winnings")) == {
        p: expected.get(p, 0) for p in range(3)
    }
    assert ledger.balance(user.pk) == 3000
    assert ledger.balance(other.pk) == 3000 + expected.get(1, 0)
    assert pot_balance(table.pk) == 0
    assert_books_balance()


def test_a_free_table_moves_no_chips(fast_bots, short_games):
    user = person("gratis")
    table = actions.do_create_table(user, 4)
    actions.do_start(table.pk, user)
    table = play_to_the_end(table.pk)
    assert table.status == Table.Status.FINISHED
    assert not Transaction.objects.filter(table=table).exists()
    assert not Account.objects.filter(kind=Account.Kind.POT, table=table).exists()
    assert ledger.balance(user.pk) == 5000
    assert_books_balance()
