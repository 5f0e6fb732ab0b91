"""Registering for a tournament and withdrawing: the entry fee goes into the tournament's pool in the same
transaction as the registration, and comes back (once) when the person withdraws before the start or the
tournament is cancelled.

Lock order: the person's user row, then the tournament's row, then the chip accounts (the ledger's order).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts import ledger, moderation
from accounts.models import Transaction as LedgerTransaction
from games.models import Registration, Tournament
from games.table import access
from games.table.errors import ActionError
from games.table.events import TournamentChanged, emit


def lock_tournament(tournament_id: Any) -> Tournament:
    try:
        found = Tournament.objects.select_for_update().filter(pk=int(tournament_id)).first()
    except (TypeError, ValueError):
        found = None
    if found is None:
        raise ActionError("unknown_tournament", _("Ese torneo no existe."))
    return found


def check_open(tournament: Tournament, now: Any = None) -> None:
    """ActionError unless the tournament takes registrations now."""
    now = now or timezone.now()
    if tournament.status == Tournament.Status.CANCELLED:
        raise ActionError("cancelled", _("Este torneo se ha cancelado."))
    if tournament.status != Tournament.Status.SCHEDULED or now >= tournament.starts_at:
        raise ActionError("started", _("Este torneo ya ha empezado: la inscripción está cerrada."))
    if now < tournament.registration_opens_at:
        raise ActionError("not_open", _("La inscripción de este torneo aún no está abierta."))


def tables_at_most(tournament: Tournament) -> int:
    return max(1, tournament.places // tournament.size)


def register(user: Any, tournament_id: Any, address: str | None = None) -> Registration:
    """The person's place in the tournament, the fee paid from their chips into its pool."""
    if not getattr(user, "is_authenticated", False):
        raise ActionError("login", _("Tienes que entrar con tu cuenta para inscribirte."))
    with transaction.atomic():
        access.check_not_suspended(user, lock=True)  # holds their user row: two tabs register once
        tournament = lock_tournament(tournament_id)
        check_open(tournament)
        taken = Registration.objects.filter(tournament=tournament)
        if taken.filter(user=user).exists():
            raise ActionError("registered", _("Ya estás inscrito en este torneo."))
        if taken.count() >= tournament.places:
            raise ActionError("full", _("Este torneo está completo."))
        if address and taken.filter(address=address).count() >= tables_at_most(tournament):
            # No two people of one address at one table: there are only so many tables.
            raise ActionError(
                "address",
                _("Desde tu conexión ya se han inscrito tantas personas como mesas tiene el torneo."),
            )
        registration = Registration.objects.create(
            tournament=tournament, user=user, address=address or None, paid=tournament.entry_fee
        )
        if tournament.entry_fee:
            try:
                ledger.post(
                    LedgerTransaction.Kind.ENTRY,
                    f"entry:registration:{registration.pk}",
                    [
                        (ledger.user_account(user.pk), -tournament.entry_fee),
                        (ledger.pool_account(tournament.pk), tournament.entry_fee),
                    ],
                    tournament_id=tournament.pk,
                )
            except ledger.InsufficientChips as error:
                raise ActionError(
                    "chips",
                    _("No tienes fichas suficientes: tienes %(have)s y la inscripción cuesta %(need)s."),
                    params={"have": error.balance, "need": tournament.entry_fee},
                ) from None
        changed(tournament)
        return registration


def refund(registration: Registration) -> None:
    """The fee back from the pool to the person, once (inside the caller's transaction)."""
    if registration.paid and not registration.refunded:
        ledger.post(
            LedgerTransaction.Kind.REFUND,
            f"refund:registration:{registration.pk}",
            [
                (ledger.pool_account(registration.tournament_id), -registration.paid),
                (ledger.user_account(registration.user_id), registration.paid),
            ],
            tournament_id=registration.tournament_id,
        )
        registration.refunded = True
        Registration.objects.filter(pk=registration.pk).update(refunded=True)


def withdraw(user: Any, tournament_id: Any) -> None:
    """The person leaves the tournament before it starts: the fee comes back, the place is free again."""
    if not getattr(user, "is_authenticated", False):
        raise ActionError("login", _("Tienes que entrar con tu cuenta."))
    with transaction.atomic():
        moderation.lock_user_row(user.pk)
        tournament = lock_tournament(tournament_id)
        registration = Registration.objects.filter(tournament=tournament, user=user).first()
        if registration is None:
            raise ActionError("not_registered", _("No estás inscrito en este torneo."))
        if tournament.status != Tournament.Status.SCHEDULED:
            raise ActionError("started", _("El torneo ya ha empezado: ya no puedes retirarte."))
        refund(registration)
        registration.delete()
        changed(tournament)


def changed(tournament: Tournament) -> None:
    """Bump the tournament's seq (under its lock) and tell its page, once committed."""
    tournament.seq += 1
    Tournament.objects.filter(pk=tournament.pk).update(seq=tournament.seq)
    emit(TournamentChanged(tournament.pk, tournament.seq))
