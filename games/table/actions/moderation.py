"""Moderation's writes to tables: a suspension or a closed account gives up the person's seats, a moderator
calls off a table.  Accounts tell the tables through ``accounts.signals`` (connected in ``GamesConfig.ready``)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from accounts import ledger, moderation
from accounts.models import Account
from games.models import Seat, Table
from games.table import events
from games.table.actions.common import lock
from games.table.actions.lifecycle import on_cancel
from games.table.actions.seating import do_leave_seat
from games.table.errors import ActionError
from games.table.events import AccountSuspended, TableChanged


def _give_up_seats(user_id: int) -> int:
    """The person's seats at tables not finished, given up as they would give them up themselves: a
    waiting seat stands up (the stake refunded), a running one goes to the bot and is forfeited (ranked
    last, as when a person leaves).  Returns how many."""
    user = get_user_model().objects.get(pk=user_id)
    live = (
        Seat.objects.filter(user_id=user_id, left=False, table__status__in=[Table.Status.WAITING, Table.Status.PLAYING])
        .order_by("table_id")
        .values_list("table_id", flat=True)
    )
    given_up = 0
    for table_id in list(live):
        try:  # each in its own transaction, as the person would leave it
            do_leave_seat(table_id, user)
            given_up += 1
        except ActionError:
            continue  # the table moved on meanwhile (it finished, or was cancelled)
    return given_up


def on_user_suspended(sender: Any, user_id: int, reason: str, **kwargs: Any) -> int:
    """A suspension was committed (``accounts.signals.user_suspended``): the bot takes the person's seats in
    running games at once, their waiting seats are given up, each table is redrawn for everyone at it, and
    then every socket of theirs is told why and closed.  Returns how many tables it touched."""
    given_up = _give_up_seats(user_id)
    events.emit(AccountSuspended(user_id, reason))
    return given_up


def do_admin_cancel(table_id: int, moderator: Any, reason: str) -> TableChanged:
    """A moderator calls off a waiting or running table: every stake goes back once (a bot's to the
    house), the table is closed with no winner and no clock, and every seat's page is redrawn.
    A table already finished or cancelled is refused and nothing changes."""
    try:
        text = moderation.clean_reason(reason, moderation.ADJUSTMENT_REASON_MAX)
    except moderation.ModerationError as error:
        raise ActionError(error.code, error.message) from None
    with transaction.atomic():
        table = lock(table_id)
        if table.status not in (Table.Status.WAITING, Table.Status.PLAYING):
            raise ActionError("not_running", _("Esta partida ya ha terminado o está cancelada."))
        if table.stake:
            # Every account the refunds touch, the house too when bots staked, locked in the ledger's order.
            seats = list(Seat.objects.filter(table=table))
            owners = Q(kind=Account.Kind.POT, table_id=table.pk) | Q(
                kind=Account.Kind.USER, user_id__in=[s.user_id for s in seats if s.user_id]
            )
            if any(s.is_bot for s in seats):
                owners |= Q(kind=Account.Kind.HOUSE)
            ledger.lock_accounts(Account.objects.filter(owners))
        changed = on_cancel(table, Table.CancelReason.MODERATOR, text)
        moderation.log(moderator, table, f"Partida cancelada: {text}")
    return changed


def on_account_closing(sender: Any, user_id: int, **kwargs: Any) -> None:
    """An account is being closed (``accounts.signals.account_closing``): lock every table the person ever
    sat at, in id order as every move takes them, before their seats are renamed: a move holding its
    table's lock may be about to touch the same seat rows."""
    table_ids = sorted(set(Seat.objects.filter(user_id=user_id).values_list("table_id", flat=True)))
    list(Table.objects.select_for_update().filter(pk__in=table_ids).order_by("pk").values_list("pk", flat=True))


def on_account_renamed(sender: Any, user_id: int, name: str, **kwargs: Any) -> None:
    """A closed account's new name (``accounts.signals.account_renamed``) everywhere the tables show it: every
    seat the person ever had (the game records and the boards take the players' names from the seats)."""
    Seat.objects.filter(user_id=user_id).update(name=name)


def on_account_closed(sender: Any, user: Any, **kwargs: Any) -> None:
    """A closed account's seats at tables not finished (``accounts.signals.account_closed``) are given up."""
    _give_up_seats(user.pk)
