"""Moving chips: the one place that writes ledger rows and balances.

``post`` records one transaction: it locks every account involved in ascending id order (a fixed
order, so two transactions never wait for each other in a cycle on PostgreSQL), checks that no
user or pot would go below zero, and writes the entries and the new balances together.  Its
``key`` makes it exactly-once: a second ``post`` of the same event changes nothing and returns
``None``.  Callers open the database transaction (``transaction.atomic``) so the chips move in the
same commit as whatever they pay for: a seat, the last card of a game, a cancellation.

Lock order, for PostgreSQL: a table's row first (``games.table.actions`` takes it), then accounts by id.
A pot is only ever touched under its table's lock, so nobody waits for a pot while holding another
table's.  A transaction that posts several times over different people (a cancellation refunding
every seat) takes all its account locks first with ``lock_accounts``; the others touch one person's
account and at most the house or the grants account, in a single ``post``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.models import Account, Entry, Transaction

WELCOME_CHIPS = 5_000
TOPUP_CHIPS = 500
#: A player below this many chips may claim the daily top-up.
TOPUP_BELOW = 100
#: Top-up days are Spanish days, whatever the server's clock says.
MADRID = ZoneInfo("Europe/Madrid")


class LedgerError(Exception):
    """Why chips could not move.  Nothing moved."""

    def __init__(self, code: str, message: Any) -> None:
        super().__init__(code)
        self.code = code
        self.message = message


class InsufficientChips(LedgerError):
    def __init__(self, balance: int, needed: int) -> None:
        super().__init__("chips", _("No tienes fichas suficientes."))
        self.balance = balance
        self.needed = needed


# -- accounts ------------------------------------------------------------------------------


def user_account(user_id: int) -> Account:
    account, _created = Account.objects.get_or_create(kind=Account.Kind.USER, user_id=user_id)
    return account


def house_account() -> Account:
    account, _created = Account.objects.get_or_create(kind=Account.Kind.HOUSE, user=None, table=None)
    return account


def grants_account() -> Account:
    account, _created = Account.objects.get_or_create(kind=Account.Kind.GRANTS, user=None, table=None)
    return account


def pot_account(table_id: int) -> Account:
    account, _created = Account.objects.get_or_create(kind=Account.Kind.POT, table_id=table_id)
    return account


def pool_account(tournament_id: int) -> Account:
    """A tournament's pool: the entry fees, until they are paid out as prizes or refunded."""
    account, _created = Account.objects.get_or_create(kind=Account.Kind.POOL, tournament_id=tournament_id)
    return account


def balance(user_id: int) -> int:
    """A user's chips (0 before their account exists)."""
    value = Account.objects.filter(kind=Account.Kind.USER, user_id=user_id).values_list("balance", flat=True).first()
    return int(value or 0)


# -- the one write -------------------------------------------------------------------------


def lock_accounts(accounts: Iterable[Account]) -> None:
    """Lock now, in the ledger's order (by id), every account a transaction of several ``post`` calls
    will touch, so that its later posts never take a lock out of that order."""
    ids = sorted({a.pk for a in accounts})
    list(Account.objects.select_for_update().filter(pk__in=ids).order_by("pk").values_list("pk", flat=True))


def post(
    kind: str,
    key: str,
    legs: Iterable[tuple[Account, int]],
    *,
    table_id: int | None = None,
    tournament_id: int | None = None,
    note: str = "",
) -> Transaction | None:
    """Record one transaction of ``legs`` (account, chips in or out); None if ``key`` was already recorded."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("ledger.post must run inside the caller's transaction")
    amounts: dict[int, int] = defaultdict(int)
    for account, amount in legs:
        amounts[account.pk] += amount
    amounts = {pk: amount for pk, amount in amounts.items() if amount}
    if sum(amounts.values()) != 0:
        raise ValueError(f"transaction {key} does not balance: {amounts}")
    if not amounts or Transaction.objects.filter(key=key).exists():
        return None
    locked = {a.pk: a for a in Account.objects.select_for_update().filter(pk__in=amounts).order_by("pk")}
    # While we waited for the locks, the same event may have been recorded by someone else.
    if Transaction.objects.filter(key=key).exists():
        return None
    for pk, amount in amounts.items():
        account = locked[pk]
        if account.kind in (Account.Kind.USER, Account.Kind.POT, Account.Kind.POOL) and account.balance + amount < 0:
            raise InsufficientChips(account.balance, -amount)
    try:
        with transaction.atomic():
            record = Transaction.objects.create(
                kind=kind, key=key, table_id=table_id, tournament_id=tournament_id, note=note[:200]
            )
            entries = []
            for pk in sorted(amounts):
                account = locked[pk]
                account.balance += amounts[pk]
                Account.objects.filter(pk=pk).update(balance=account.balance)
                entries.append(
                    Entry(transaction=record, account_id=pk, amount=amounts[pk], balance_after=account.balance)
                )
            Entry.objects.bulk_create(entries)
    except IntegrityError:
        if Transaction.objects.filter(key=key).exists():
            return None  # recorded by a concurrent request between our check and our insert
        raise
    return record


# -- grants --------------------------------------------------------------------------------


def grant_welcome(user_id: int) -> Transaction | None:
    """The 5,000 chips every new account starts with (once per user)."""
    with transaction.atomic():
        return post(
            Transaction.Kind.WELCOME,
            f"welcome:{user_id}",
            [(grants_account(), -WELCOME_CHIPS), (user_account(user_id), WELCOME_CHIPS)],
        )


def topup_day(now: datetime | None = None) -> date:
    return (now or timezone.now()).astimezone(MADRID).date()


def topup_key(user_id: int, day: date) -> str:
    return f"topup:{user_id}:{day.isoformat()}"


def topup_status(user_id: int, now: datetime | None = None) -> str:
    """``"ok"``, ``"claimed"`` (already today) or ``"enough"`` (not below the threshold)."""
    if Transaction.objects.filter(key=topup_key(user_id, topup_day(now))).exists():
        return "claimed"
    if balance(user_id) >= TOPUP_BELOW:
        return "enough"
    return "ok"


def claim_topup(user_id: int, now: datetime | None = None) -> Transaction:
    """The daily top-up of 500 chips for a player below 100 (once per Madrid day)."""
    day = topup_day(now)
    with transaction.atomic():
        grants, mine = grants_account(), user_account(user_id)
        # Take the locks now, in the ledger's order (by id), so two tabs claiming at once see each
        # other's result before checking the day and the balance.
        locked = {
            a.pk: a for a in Account.objects.select_for_update().filter(pk__in=[grants.pk, mine.pk]).order_by("pk")
        }
        current = locked[mine.pk]
        if Transaction.objects.filter(key=topup_key(user_id, day)).exists():
            raise LedgerError("topup_claimed", _("Ya has pedido la recarga de hoy. Vuelve mañana."))
        if current.balance >= TOPUP_BELOW:
            raise LedgerError("topup_enough", _("La recarga es para quien tiene menos de 100 fichas."))
        record = post(Transaction.Kind.TOPUP, topup_key(user_id, day), [(grants, -TOPUP_CHIPS), (mine, TOPUP_CHIPS)])
        if record is None:
            raise LedgerError("topup_claimed", _("Ya has pedido la recarga de hoy. Vuelve mañana."))
        return record


def adjust(user_id: int, amount: int, note: str, key: str) -> Transaction | None:
    """A moderator's correction: chips from (or back to) the grants account, with the reason."""
    with transaction.atomic():
        return post(
            Transaction.Kind.ADJUSTMENT,
            f"adjustment:{key}",
            [(grants_account(), -amount), (user_account(user_id), amount)],
            note=note,
        )


# -- in words ------------------------------------------------------------------------------


def describe(record: Transaction) -> str:
    """What a movement was, in words, for the wallet: each kind by its own name, a table's by its number and a
    tournament's by its name (``record.tournament`` read with it, or one query)."""
    table = record.table_id
    kind = record.kind
    if kind == Transaction.Kind.WELCOME:
        return gettext("Regalo de bienvenida")
    if kind == Transaction.Kind.TOPUP:
        return gettext("Recarga diaria")
    if record.tournament_id is not None and kind in (
        Transaction.Kind.ENTRY,
        Transaction.Kind.REFUND,
        Transaction.Kind.PRIZE,
    ):
        name = record.tournament.name
        if kind == Transaction.Kind.ENTRY:
            return gettext("Inscripción en el torneo «%(name)s»") % {"name": name}
        if kind == Transaction.Kind.REFUND:
            return gettext("Devolución de la inscripción del torneo «%(name)s»") % {"name": name}
        return gettext("Premio del torneo «%(name)s»") % {"name": name}
    if table is not None:
        if kind == Transaction.Kind.STAKE:
            return gettext("Apuesta en la mesa %(n)s") % {"n": table}
        if kind == Transaction.Kind.PAYOUT:
            return gettext("Bote de la mesa %(n)s") % {"n": table}
        if kind == Transaction.Kind.REFUND:
            return gettext("Devolución de la apuesta (mesa %(n)s)") % {"n": table}
    if kind == Transaction.Kind.ADJUSTMENT:
        if record.note:
            return gettext("Ajuste: %(why)s") % {"why": record.note}
        return gettext("Ajuste de la moderación")
    # A kind with no words of its own (or without its table or tournament): its name, never «Ajuste».
    return str(record.get_kind_display())


# -- auditing ------------------------------------------------------------------------------


def audit() -> list[str]:
    """Every way the books could be wrong, in words (an empty list: they balance)."""
    problems = []
    total = Account.objects.aggregate(total=Sum("balance"))["total"] or 0
    if total != 0:
        problems.append(f"the accounts sum to {total}, not 0")
    for row in Transaction.objects.annotate(total=Sum("entries__amount")).exclude(total=0).values("key", "total"):
        problems.append(f"transaction {row['key']} sums to {row['total']}")
    sums = dict(Entry.objects.values("account_id").annotate(total=Sum("amount")).values_list("account_id", "total"))
    for account in Account.objects.all():
        if account.balance != sums.get(account.pk, 0):
            problems.append(
                f"account {account.pk} holds {account.balance} but its entries sum to {sums.get(account.pk, 0)}"
            )
        if account.kind in (Account.Kind.USER, Account.Kind.POT, Account.Kind.POOL) and account.balance < 0:
            problems.append(f"account {account.pk} ({account.kind}) is negative: {account.balance}")
    return problems
