"""Invitations from inside the site: the host of a waiting private table asks someone by name to sit at it;
the invited person accepts (and is seated exactly as with the table's code, stake held) or declines.

- ``do_invite``: only the host (``Table.created_by``), seated at their own private table while it waits and has
  a free seat; the invited person exists, is not seated there, has no invitation to it pending, and lets the
  host invite them (``accounts.social.may_invite``: nobody blocked either way, their preference); at most
  ``POCHA_INVITE_LIMIT`` invitations per ``POCHA_INVITE_WINDOW`` seconds.  Under the table's lock, so that the
  table's start or cancellation (``lifecycle.expire_invitations``, which expires every pending invitation of
  it in the same transaction) never leaves one pending behind.
- ``do_accept``: only the invited person, while the invitation is pending: ``seating.do_take_seat`` with the
  table's code (the same refusals: chips, another live table, a block…), and the invitation marked accepted
  in the same transaction.
- ``do_decline``: only the invited person, while it is pending.

Each change tells the invited person's open pages (``PersonNotified(recipient, "invitations")``).  Bad input
raises ``ActionError`` and changes nothing.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts import social
from games.models import Invitation, Seat, Table
from games.table import access, events
from games.table.actions.common import User, lock
from games.table.actions.seating import do_take_seat
from games.table.errors import ActionError
from games.table.events import PersonNotified
from pocha_site import ratelimit

KIND = "invitations"


#: A row's number is a positive bigint: anything else names no row (and never reaches a query).
_MOST_ID = 2**63 - 1


def _number(raw: Any) -> int | None:
    """``raw`` as a row's number (an int or its digits), or None if it cannot be one."""
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        return None
    if isinstance(raw, str) and not (raw.isascii() and raw.isdigit() and len(raw) <= 19):
        return None
    number = int(raw)
    return number if 0 < number <= _MOST_ID else None


def _check_logged_in(user: User) -> None:
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))


def hosted_table(user_id: int) -> int | None:
    """The newest waiting private table ``user_id`` created and is seated at (where «Invitar» on «Amigos»
    invites to), or None."""
    found: int | None = (
        Table.objects.filter(
            created_by_id=user_id,
            is_public=False,
            status=Table.Status.WAITING,
            rematch_of__isnull=True,
            seats__user_id=user_id,
        )
        .order_by("-created_at", "-pk")
        .values_list("pk", flat=True)
        .first()
    )
    return found


def do_invite(table_id: Any, sender: User, recipient_name: Any) -> Invitation:
    """``sender`` invites the person named ``recipient_name`` to their waiting private table ``table_id``
    (None: the newest one they host, ``hosted_table``).  Returns the new pending invitation."""
    _check_logged_in(sender)
    access.check_not_suspended(sender)
    if table_id is None or table_id == "":
        table_id = hosted_table(sender.pk)
        if table_id is None:
            raise ActionError("no_table", _("Crea antes una mesa privada para invitar."))
    number = _number(table_id)
    if number is None:
        raise ActionError("unknown_table", _("Esa mesa no existe."))
    with transaction.atomic():
        table = lock(number)
        seats = list(Seat.objects.filter(table=table))
        if not access.can_view(table, sender, seats=seats):
            raise ActionError("unknown_table", _("Esa mesa no existe."))  # (no hint that the id is in use)
        if table.is_public:
            raise ActionError(
                "public", _("Solo se invita a una mesa privada: a una pública puede sentarse cualquiera.")
            )
        if table.created_by_id != sender.pk or not any(s.user_id == sender.pk for s in seats):
            raise ActionError("not_host", _("Solo quien ha creado la mesa puede invitar a ella."))
        if table.status == Table.Status.PLAYING:
            raise ActionError("not_waiting", _("Esta partida ya ha empezado."))
        if table.status != Table.Status.WAITING:  # finished or cancelled: not «started», which would mislead
            raise ActionError("not_waiting", _("Esta partida ya ha terminado o está cancelada."))
        if table.rematch_of_id is not None:
            raise access.rematch_only_error()
        if len(seats) >= table.size:
            raise ActionError("full", _("La mesa está completa."))
        try:
            recipient = social.person(recipient_name)
        except social.Refused as refused:
            raise ActionError(refused.code, refused.text) from None
        name = recipient.get_username()
        if recipient.pk == sender.pk:
            raise ActionError("self", _("No puedes invitarte a ti mismo."))
        if any(s.user_id == recipient.pk for s in seats):
            raise ActionError("seated", _("%(name)s ya está sentado en esta mesa."), params={"name": name})
        if Invitation.objects.filter(table=table, recipient_id=recipient.pk, status=Invitation.Status.PENDING).exists():
            raise ActionError("pending", _("Ya has invitado a %(name)s a esta mesa."), params={"name": name})
        refused = social.may_invite(sender.pk, recipient.pk, name)
        if refused is not None:
            raise ActionError(refused.code, refused.message())
        if not ratelimit.take("invite", f"user:{sender.pk}", settings.POCHA_INVITE_LIMIT, settings.POCHA_INVITE_WINDOW):
            raise ActionError(
                "too_many", _("Demasiadas invitaciones seguidas: espera un poco antes de invitar a más gente.")
            )
        try:
            with transaction.atomic():
                invitation = Invitation.objects.create(table=table, sender_id=sender.pk, recipient_id=recipient.pk)
        except IntegrityError:  # (cannot happen under the table's lock: refuse, change nothing)
            raise ActionError("pending", _("Ya has invitado a %(name)s a esta mesa."), params={"name": name}) from None
        events.emit(PersonNotified(recipient.pk, KIND))
    return invitation


def _own(invitation_id: Any, user: User) -> Invitation:
    """The invitation ``invitation_id`` made to ``user``; anyone else's, or none, is one that does not exist."""
    _check_logged_in(user)
    pk = _number(invitation_id)
    found = (
        None if pk is None else Invitation.objects.filter(pk=pk, recipient_id=user.pk).select_related("table").first()
    )
    if found is None:
        raise ActionError("unknown_invitation", _("Esa invitación no existe."))
    return found


def _not_pending(invitation: Invitation) -> ActionError:
    if invitation.status == Invitation.Status.ACCEPTED:
        return ActionError("accepted", _("Ya aceptaste esa invitación."))
    if invitation.status == Invitation.Status.DECLINED:
        return ActionError("declined", _("Ya rechazaste esa invitación."))
    return ActionError("expired", _("Esa invitación ha caducado: la partida ha empezado o se ha cancelado."))


def _answer(invitation: Invitation, status: str) -> None:
    """Mark a pending invitation answered (or refuse: it was answered or expired meanwhile)."""
    changed = Invitation.objects.filter(pk=invitation.pk, status=Invitation.Status.PENDING).update(
        status=status, answered_at=timezone.now()
    )
    if changed != 1:
        invitation.refresh_from_db(fields=["status"])
        raise _not_pending(invitation)


def do_accept(invitation_id: Any, user: User) -> Table:
    """«Unirme»: ``user`` takes a seat at the table they were invited to (as with its code: the stake held,
    the same refusals), and the invitation is accepted, in one transaction.  Returns the table."""
    invitation = _own(invitation_id, user)
    if invitation.status != Invitation.Status.PENDING:
        raise _not_pending(invitation)
    table = invitation.table
    if table.status != Table.Status.WAITING:
        raise _not_pending(Invitation(status=Invitation.Status.EXPIRED))
    if social.between(invitation.sender_id, user.pk):
        raise ActionError("blocked", _("No puedes sentarte en esa mesa."))
    with transaction.atomic():
        if not Seat.objects.filter(table_id=table.pk, user_id=user.pk).exists():
            do_take_seat(table.pk, user, code=table.code)  # (its own savepoint: the seat, the stake)
        _answer(invitation, Invitation.Status.ACCEPTED)  # (under the table's lock: no start or cancel meanwhile)
        events.emit(PersonNotified(user.pk, KIND))
    return table


def do_decline(invitation_id: Any, user: User) -> Invitation:
    """«No, gracias»: ``user`` declines the invitation."""
    invitation = _own(invitation_id, user)
    if invitation.status != Invitation.Status.PENDING:
        raise _not_pending(invitation)
    with transaction.atomic():
        _answer(invitation, Invitation.Status.DECLINED)
        events.emit(PersonNotified(user.pk, KIND))
    invitation.status = Invitation.Status.DECLINED
    return invitation


#: As ``games.table.actions`` exports them (beside «Revancha»'s ``do_accept_rematch``).
do_accept_invitation = do_accept
do_decline_invitation = do_decline
