"""Moderation of people: suspending and lifting a suspension, adjusting chips, and the record of it.

Every moderation step is written to Django's admin log (``LogEntry``) with who did it, when, and the
reason in the change message, in the same database transaction as the step itself, so the log cannot
miss a step nor name one that did not happen.  A suspension is kept on the person's ``Profile``;
what it does to their seats (standing them up, handing running seats to the bot, closing their
sockets) is the table side's business, told through ``accounts.signals.user_suspended``.

Locks: a suspension locks only the person's user row, and commits its flag on its own before any of
their tables is touched, so it never holds that row while it waits for a table's.  Every seat a person
takes is taken under the same row's lock (``games.table.actions.common.lock_person``,
``games.table.access.check_not_suspended(lock=True)``; before the table's lock, or after it at a
rematch), so a seat being taken either finishes before the flag is written (and is then found and
given up) or sees the flag and is refused.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Model
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts import ledger, signals
from accounts.models import Profile
from accounts.models import Transaction as LedgerTransaction

#: Room for the reason in ``Profile.suspended_reason`` and ``Transaction.note``.
SUSPENSION_REASON_MAX = 300
ADJUSTMENT_REASON_MAX = 200


class ModerationError(Exception):
    """Why a moderation step was refused.  Nothing changed."""

    def __init__(self, code: str, message: Any) -> None:
        super().__init__(code)
        self.code = code
        self.message = message


def clean_reason(reason: Any, limit: int) -> str:
    """The reason as given, trimmed; ModerationError if there is none or it does not fit."""
    text = " ".join(str(reason or "").split())
    if not text:
        raise ModerationError("reason", _("Escribe el motivo: se le mostrará al jugador y queda en el registro."))
    if len(text) > limit:
        raise ModerationError(
            "reason_long", _("El motivo es demasiado largo (como mucho %(n)s caracteres).") % {"n": limit}
        )
    return text


def log(moderator: Any, obj: Model, message: str) -> LogEntry:
    """One line in the admin log: who (``moderator``), when (now), on what, and why (``message``)."""
    entries = LogEntry.objects.log_actions(moderator.pk, [obj], CHANGE, change_message=message, single_object=True)
    return entries if isinstance(entries, LogEntry) else entries[0]


# -- suspension ----------------------------------------------------------------------------


def lock_user_row(user_id: int) -> None:
    """Lock the person's user row until the caller's transaction ends (the lock every seat a person takes,
    and every suspension, is taken under)."""
    list(get_user_model().objects.select_for_update().filter(pk=user_id).values_list("pk", flat=True))


def suspension_reason(user_id: int | None, *, lock: bool = False) -> str | None:
    """Why the person is suspended, or None if they are not.

    ``lock``: also lock their user row until the caller's transaction ends (a seat being taken holds
    it, so a suspension being written waits for that seat, or that seat waits for the suspension)."""
    if user_id is None:
        return None
    if lock:
        lock_user_row(user_id)
    row = Profile.objects.filter(user_id=user_id).values_list("suspended_at", "suspended_reason").first()
    if row is None or row[0] is None:
        return None
    return str(row[1] or "")


@dataclass(frozen=True)
class Suspension:
    profile: Profile
    #: How many tables gave up the person's seat (``signals.user_suspended``'s receivers).
    tables: int


def suspend(user_id: int, moderator: Any, reason: Any) -> Suspension:
    """Mark the person suspended with ``reason`` and log it (its own transaction, committed at once), then
    tell the apps that hold their seats (``signals.user_suspended``).  A person already suspended gets the
    new reason.

    The flag is committed first, on its own: a seat being taken meanwhile either sees it and is refused,
    or commits before it and is given up by the receivers."""
    text = clean_reason(reason, SUSPENSION_REASON_MAX)
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().filter(pk=user_id).first()
        if user is None:
            raise ModerationError("unknown_user", _("Ese jugador no existe."))
        if user.pk == getattr(moderator, "pk", None):
            raise ModerationError("self", _("No puedes suspenderte a ti mismo."))
        profile, _created = Profile.objects.get_or_create(user_id=user.pk)
        profile.suspended_at = timezone.now()
        profile.suspended_reason = text
        profile.suspended_by_id = moderator.pk
        profile.save(update_fields=["suspended_at", "suspended_reason", "suspended_by"])
        log(moderator, user, f"Suspendido: {text}")
    answers = signals.user_suspended.send(sender=Profile, user_id=user.pk, reason=text)
    return Suspension(profile, sum(n for _receiver, n in answers if isinstance(n, int)))


def lift(user_id: int, moderator: Any, reason: Any = "") -> bool:
    """Lift the person's suspension and log it (with ``reason``, if given); False (and nothing logged) if
    they were not suspended."""
    text = clean_reason(reason, SUSPENSION_REASON_MAX) if str(reason or "").strip() else ""
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().filter(pk=user_id).first()
        if user is None:
            raise ModerationError("unknown_user", _("Ese jugador no existe."))
        profile = Profile.objects.filter(user_id=user.pk, suspended_at__isnull=False).first()
        if profile is None:
            return False
        was = profile.suspended_reason
        profile.suspended_at = None
        profile.suspended_reason = ""
        profile.suspended_by = None
        profile.save(update_fields=["suspended_at", "suspended_reason", "suspended_by"])
        log(moderator, user, f"Suspensión levantada{': ' + text if text else ''} (era: {was})")
    return True


# -- chips ---------------------------------------------------------------------------------


def adjust_chips(user_id: int, moderator: Any, amount: Any, reason: Any) -> LedgerTransaction:
    """A correction of the person's chips through the ledger (from or back to the grants account),
    with the reason as the transaction's note, logged.  ModerationError if it cannot be done."""
    text = clean_reason(reason, ADJUSTMENT_REASON_MAX)
    if isinstance(amount, bool) or not isinstance(amount, int) or amount == 0:
        raise ModerationError("amount", _("La cantidad tiene que ser un número entero distinto de 0."))
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise ModerationError("unknown_user", _("Ese jugador no existe."))
    with transaction.atomic():
        try:
            record = ledger.adjust(user.pk, amount, text, uuid.uuid4().hex)
        except ledger.InsufficientChips as error:
            raise ModerationError(
                "chips",
                _("%(user)s tiene %(have)s fichas: no se le pueden quitar %(take)s.")
                % {"user": user.get_username(), "have": error.balance, "take": -amount},
            ) from None
        assert record is not None  # a fresh key is never taken
        log(moderator, user, f"Ajuste de fichas {amount:+d} ({record.key}): {text}")
    return record
