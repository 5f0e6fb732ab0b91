"""«Revancha»: at the end of a game, the same players at a new table with the same options.

One of the finished table's people proposes it (``do_offer_rematch``): a new waiting table is created
with the same size, stake, visibility, bots' level and clocks, ``rematch_of`` the old one, the proposer seated in it
with their stake held.  The others accept (``do_accept_rematch``: a seat and the stake held) or say
«No, gracias» (``do_decline_rematch``).  It starts at once when every person of the old table is seated
(or has declined, if bots may take the empty seats); otherwise, when bots are allowed, the ordinary
waiting-table clock (``fill_at``, ``POCHA_REMATCH_WAIT`` seconds) fills the empty seats with bots and
starts it; without bots the proposer (its host) starts or cancels it as at any private table.

Only the old table's people may sit at a rematch (``games.table.access.check_sit``).  A tournament's table has
no rematch: the tournament seats its players (its page has the standings).

A block made since the game (``accounts.social``) keeps the two apart here too: whoever of the two comes second
is refused a seat («No puedes jugar esta revancha.», the same words for both, naming nobody) and nothing
changes; the rematch then waits for nobody a block keeps out (``access.kept_apart``): it starts when everyone
else is seated or has declined, bots in the empty seats (without bots, the host starts or cancels it).

Locks: the old table's row first, then the rematch's (the order every function here takes them);
every other action takes one table's row only, so no cycle is possible.  The
one-to-one ``rematch_of`` makes two proposals at once give one rematch: the second, waiting for the old
table's lock, finds the first one's table and accepts it instead.

Declines are not game state: they live in the cache (a key per rematch and person, with a TTL) and
only hurry the start along; if the cache forgets one, the clock or the host starts the table anyway.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts import ledger
from games.models import Seat, Table
from games.table import access, events
from games.table.actions.common import commit, lock, new_code
from games.table.actions.lifecycle import hold_stake, on_start
from games.table.errors import ActionError
from games.table.events import Redraw

#: How long a «No, gracias» is remembered (a rematch that has not started by then never will by it).
DECLINE_TTL = 24 * 3600


# -- errors ---------------------------------------------------------------------------------


def _login_error() -> ActionError:
    return ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))


def _not_finished_error() -> ActionError:
    return ActionError("not_finished", _("La revancha se propone cuando la partida ha terminado."))


def _no_rematch_error() -> ActionError:
    return ActionError("no_rematch", _("Nadie ha propuesto la revancha de esta partida."))


def _started_error() -> ActionError:
    return ActionError("rematch_started", _("La revancha ya ha empezado."))


def _cancelled_error() -> ActionError:
    return ActionError("rematch_cancelled", _("La revancha se ha cancelado."))


def _tournament_error() -> ActionError:
    return ActionError("tournament_table", _("Una mesa de torneo no tiene revancha: mira la clasificación del torneo."))


def _blocked_error() -> ActionError:
    # (the same words whoever is the one blocked: nobody learns which of the two did it)
    return ActionError("blocked", _("No puedes jugar esta revancha."))


def _already_seated_error() -> ActionError:
    return ActionError("already_seated", _("Ya estás sentado en la revancha."))


# -- helpers ----------------------------------------------------------------------------------


def humans(seats: list[Seat]) -> list[Seat]:
    """The people (not bots) of a table, in seat order."""
    return sorted((s for s in seats if not s.is_bot and s.user_id is not None), key=lambda s: s.position)


def _decline_key(rematch: Table, user_id: int) -> str:
    # The creation time too: table ids can be reused (a test database, a restored backup) and the cache
    # outlives them.
    stamp = int(rematch.created_at.timestamp() * 1_000_000) if rematch.created_at else 0
    return f"pocha:rematch-declined:{rematch.pk}:{stamp}:{user_id}"


def who_declined(rematch: Table, user_ids: list[int]) -> set[int]:
    """Which of ``user_ids`` said «No, gracias» to ``rematch``."""
    if not user_ids:
        return set()
    keys = {_decline_key(rematch, uid): uid for uid in user_ids}
    try:
        found = cache.get_many(list(keys))
    except Exception:  # the cache is a hint: without it, people are simply still "missing"
        return set()
    return {keys[k] for k in found}


def _set_declined(rematch: Table, user_id: int, declined: bool) -> None:
    try:
        if declined:
            cache.set(_decline_key(rematch, user_id), 1, DECLINE_TTL)
        else:
            cache.delete(_decline_key(rematch, user_id))
    except Exception:  # a hint only (see who_declined)
        pass


def _lock_finished(table_id: int, user: Any) -> tuple[Table, list[Seat]]:
    """The old table, locked, and its seats; refused unless it is finished and ``user`` played it."""
    old = lock(table_id)
    seats = list(Seat.objects.filter(table=old))
    access.check_view(old, user, seats=seats)  # a private table is, to anyone else, a table that does not exist
    if not any(s.user_id == user.pk and not s.is_bot for s in seats):
        raise access.rematch_only_error()
    if old.tournament_id is not None:  # the tournament decides who plays whom next, and when
        raise _tournament_error()
    if old.status != Table.Status.FINISHED:
        raise _not_finished_error()
    return old, seats


def _redraw_old(old: Table) -> None:
    """Once committed, every page showing the old table redraws its final screen (same seq)."""
    events.emit(Redraw(old.pk, old.seq))


def _check_open(rematch: Table) -> None:
    if rematch.status == Table.Status.CANCELLED:
        raise _cancelled_error()
    if rematch.status != Table.Status.WAITING:
        raise _started_error()


def _ready(rematch: Table, old_seats: list[Seat], seats: list[Seat], declined: set[int]) -> bool:
    """Whether the rematch can start now: everyone of the old table is seated or has declined, someone is
    seated, and the empty seats (if any) may go to bots."""
    seated = {s.user_id for s in seats if not s.is_bot}
    wanted = {s.user_id for s in humans(old_seats)}
    if not seated:
        return False
    if not wanted <= (seated | declined):
        # Someone a block keeps from sitting with a person seated (``access.kept_apart``) will never come:
        # nobody waits for them (one query, only while someone is still missing).
        if not wanted - access.kept_apart(seats, wanted - seated - declined) <= (seated | declined):
            return False
    return len(seats) >= rematch.size or rematch.bots_allowed


def _start_or_commit(rematch: Table, old_seats: list[Seat], seats: list[Seat], declined: set[int]) -> None:
    if _ready(rematch, old_seats, seats, declined):
        on_start(rematch)
    else:
        commit(rematch, rematch.seq)


def _seat_at(old: Table, old_seats: list[Seat], rematch_id: int, user: Any) -> Table:
    """Under the old table's lock: seat ``user`` at the rematch (stake held) and start it if everyone is in."""
    rematch = lock(rematch_id)
    seats = list(Seat.objects.filter(table=rematch))
    if any(s.user_id == user.pk for s in seats):
        raise _already_seated_error()  # (a second click, even once it has started: the view goes to it)
    _check_open(rematch)
    access.check_not_suspended(user, lock=True)  # a suspension being written waits for this seat
    try:  # the rematch rule, a free seat, no block with someone seated, the chips (pre-check)
        access.check_sit(rematch, user, seats=seats)
    except ActionError as error:
        if error.code == "blocked":
            raise _blocked_error() from None
        raise
    taken = {s.position for s in seats}
    free = [p for p in range(rematch.size) if p not in taken]
    try:
        with transaction.atomic():
            seat = Seat.objects.create(table=rematch, position=free[0], user_id=user.pk, name=user.get_username())
    except IntegrityError:
        raise _already_seated_error() from None
    hold_stake(rematch, seat)  # the ledger's own check, under the account's lock
    seats.append(seat)
    declined = who_declined(rematch, [s.user_id for s in humans(old_seats) if s.user_id != user.pk])
    _start_or_commit(rematch, old_seats, seats, declined)
    uid = user.pk
    transaction.on_commit(lambda: _set_declined(rematch, uid, False))  # changed their mind: no longer a "no"
    _redraw_old(old)
    return rematch


def _new_table(old: Table, user: Any) -> Table:
    """The rematch row (same options as ``old``); IntegrityError if ``old`` already has one."""
    fill_at = timezone.now() + timedelta(seconds=settings.POCHA_REMATCH_WAIT) if old.bots_allowed else None
    for attempt in range(20):
        try:
            with transaction.atomic():  # a code another waiting table just took: draw again
                return Table.objects.create(
                    size=old.size,
                    rules=old.rules,
                    stake=old.stake,
                    is_public=old.is_public,
                    is_quick=old.is_quick,
                    bots_allowed=old.bots_allowed,
                    bot_level=old.bot_level,
                    card_seconds=old.card_seconds,
                    bid_seconds=old.bid_seconds,
                    trump_seconds=old.trump_seconds,
                    created_by_id=user.pk,
                    rematch_of=old,
                    code=None if old.is_public else new_code(),
                    fill_at=fill_at,
                )
        except IntegrityError:
            if old.is_public or attempt == 19 or Table.objects.filter(rematch_of_id=old.pk).exists():
                raise
    raise AssertionError("unreachable")


# -- the actions --------------------------------------------------------------------------------


def do_offer_rematch(table_id: int, user: Any) -> Table:
    """«Revancha» on a finished table: a new table with the same options and the proposer seated (stake
    held), or — if someone proposed it already — a seat at that one (``do_accept_rematch``).  Returns
    the rematch."""
    if user is None or not user.is_authenticated:
        raise _login_error()
    access.check_not_suspended(user)
    with transaction.atomic():
        old, old_seats = _lock_finished(table_id, user)
        existing = Table.objects.filter(rematch_of_id=old.pk).values_list("pk", flat=True).first()
        if existing is not None:
            return _seat_at(old, old_seats, existing, user)
        access.check_not_suspended(user, lock=True)
        access.check_not_live_elsewhere(user)  # before anything is created (``hold_stake`` checks again)
        if old.stake and ledger.balance(user.pk) < old.stake:
            raise access.no_chips_error(ledger.balance(user.pk), old.stake)
        try:
            rematch = _new_table(old, user)
        except IntegrityError:
            # Someone else's proposal got in first (cannot happen under the old table's lock, but the
            # one-to-one is what guarantees it): theirs is the rematch, and this is an accept.
            existing = Table.objects.filter(rematch_of_id=old.pk).values_list("pk", flat=True).first()
            if existing is None:
                raise
            return _seat_at(old, old_seats, existing, user)
        seat = Seat.objects.create(table=rematch, position=0, user_id=user.pk, name=user.get_username())
        hold_stake(rematch, seat)
        # Someone who played alone against bots has nobody to wait for: it starts at once.
        _start_or_commit(rematch, old_seats, [seat], set())
        _redraw_old(old)
        return rematch


def do_accept_rematch(table_id: int, user: Any) -> Table:
    """«Aceptar la revancha» of the finished table ``table_id``: a seat at its rematch, stake held; it
    starts at once when every person of the old table is seated.  Returns the rematch."""
    if user is None or not user.is_authenticated:
        raise _login_error()
    access.check_not_suspended(user)
    with transaction.atomic():
        old, old_seats = _lock_finished(table_id, user)
        existing = Table.objects.filter(rematch_of_id=old.pk).values_list("pk", flat=True).first()
        if existing is None:
            raise _no_rematch_error()
        return _seat_at(old, old_seats, existing, user)


def do_decline_rematch(table_id: int, user: Any) -> Table:
    """«No, gracias» to the rematch of the finished table ``table_id``.  If everyone else of the old table
    is then seated or has declined too, and bots may take the empty seats, it starts at once.
    Returns the rematch."""
    if user is None or not user.is_authenticated:
        raise _login_error()
    with transaction.atomic():
        old, old_seats = _lock_finished(table_id, user)
        existing = Table.objects.filter(rematch_of_id=old.pk).values_list("pk", flat=True).first()
        if existing is None:
            raise _no_rematch_error()
        rematch = lock(existing)
        seats = list(Seat.objects.filter(table=rematch))
        if any(s.user_id == user.pk for s in seats):
            raise _already_seated_error()  # to give it up, they stand up at the rematch's own table
        _check_open(rematch)
        declined = who_declined(rematch, [s.user_id for s in humans(old_seats) if s.user_id != user.pk]) | {user.pk}
        if _ready(rematch, old_seats, seats, declined):
            on_start(rematch)
        uid = user.pk
        transaction.on_commit(lambda: _set_declined(rematch, uid, True))
        _redraw_old(old)
        return rematch
