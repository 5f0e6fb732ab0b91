"""Tables and seats: a new table (public, quick or private), «Jugar ya», a seat taken or given up, the host's
start and cancel.  One live table each: every seat a person takes is taken under their user row's lock."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts import social
from accounts.models import Profile
from games.engine import levels
from games.models import Seat, Table
from games.table import access
from games.table.actions.common import (
    User,
    check_bot_level,
    check_seq,
    check_size_and_stake,
    commit,
    lock,
    lock_person,
    new_code,
    seat_of,
)
from games.table.actions.lifecycle import hold_stake, on_cancel, on_start, refund_stake
from games.table.errors import ActionError
from games.table.events import TableChanged


def do_create_table(
    user: User,
    size: int,
    *,
    public: bool = True,
    quick: bool = False,
    stake: int = 0,
    bots_allowed: bool = True,
    bot_level: str = levels.NORMAL,
    rules: str = "clasica",
) -> Table:
    """A new table with its creator in seat 0 (their stake held); private tables get a code.  ``rules``: the
    house rules (``games.models.rules_key``).  Refused while the creator has a seat at another waiting or
    running table (one live table each)."""
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    rules = check_size_and_stake(size, stake, rules)
    bot_level = check_bot_level(bot_level)
    access.check_not_suspended(user)
    with transaction.atomic():
        # (their user row: a suspension being written waits for this table, and so does their other tab)
        access.check_not_suspended(user, lock=True)
        return _create_table(
            user,
            size,
            public=public,
            quick=quick,
            stake=stake,
            bots_allowed=bots_allowed,
            bot_level=bot_level,
            rules=rules,
        )


def _create_table(
    user: User,
    size: int,
    *,
    public: bool,
    quick: bool,
    stake: int,
    bots_allowed: bool,
    bot_level: str,
    rules: str = "clasica",
) -> Table:
    """``do_create_table`` under the person's lock, inside the caller's transaction."""
    access.check_not_live_elsewhere(user)
    for attempt in range(20):
        try:
            with transaction.atomic():  # a code another waiting table just took: draw again
                table = Table.objects.create(
                    size=size,
                    rules=rules,
                    is_public=public,
                    is_quick=quick,
                    created_by_id=user.pk,
                    stake=stake,
                    bots_allowed=bots_allowed or public,
                    code=None if public else new_code(),
                    bot_level=bot_level,
                    fill_at=timezone.now() + timedelta(seconds=settings.POCHA_QUICK_WAIT) if quick else None,
                )
            break
        except IntegrityError:
            if public or attempt == 19:
                raise
    seat = Seat.objects.create(table=table, position=0, user_id=user.pk, name=user.get_username())
    hold_stake(table, seat)
    commit(table, table.seq)
    return table


def do_create_private_table(
    user: User, size: int, stake: int, bots_allowed: bool, bot_level: str = levels.NORMAL, rules: str = "clasica"
) -> Table:
    """ "Mesa privada": the host picks the house rules, the size, the stake, whether bots may fill and how well
    they play; others join by code."""
    return do_create_table(
        user, size, public=False, stake=stake, bots_allowed=bots_allowed, bot_level=bot_level, rules=rules
    )


def do_quick_play(user: User, size: int, stake: int = 0, rules: str = "clasica") -> Table:
    """ "Jugar ya": a seat at a waiting public quick table of the same house rules, ``size`` and ``stake``, or
    a new one (the choice is remembered for next time).  Never a table where someone seated has blocked the
    person or been blocked by them (``accounts.social``): those are not even candidates.
    Someone with a live table already (waiting or running, not left) is sent back to it instead.

    One transaction under the person's lock, so that eight «Jugar ya» at once from one person (tabs,
    processes) give one seat: the first takes it, the others wait and then find it."""
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    access.check_not_suspended(user)
    rules = check_size_and_stake(size, stake, rules)
    Profile.objects.update_or_create(
        user_id=user.pk, defaults={"quick_size": size, "quick_stake": stake, "quick_rules": rules}
    )
    with transaction.atomic():
        access.check_not_suspended(user, lock=True)  # their user row first, then a table's
        mine = access.live_table(user.pk)
        if mine is not None:
            return mine  # one live table at a time: go back to it
        waiting = Table.objects.filter(
            status=Table.Status.WAITING,
            is_public=True,
            is_quick=True,
            rules=rules,
            size=size,
            stake=stake,
            rematch_of__isnull=True,
        )
        apart = social.blocked_ids(user.pk)
        if apart:  # never a table with someone blocked either way (``check_sit`` refuses it too, under the lock)
            waiting = waiting.exclude(seats__user_id__in=apart)
        candidates = list(waiting.order_by("created_at", "pk").values_list("pk", flat=True)[:5])
        for table_id in candidates:
            try:
                with transaction.atomic():  # a refused seat leaves nothing behind
                    _take_seat(table_id, user, None, None, person_locked=True)
            except ActionError as error:
                if error.code == "chips":
                    raise
                continue
            return Table.objects.get(pk=table_id)
        return _create_table(
            user, size, public=True, quick=True, stake=stake, bots_allowed=True, bot_level=levels.NORMAL, rules=rules
        )


def do_take_seat(table_id: int, user: User, seq: int | None = None, code: str | None = None) -> TableChanged:
    """A seat at a waiting table (stake held); a full public table, or a rematch everyone is back at,
    starts.  Refused while the person has a seat at another waiting or running table."""
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    with transaction.atomic():
        return _take_seat(table_id, user, seq, code)


def _take_seat(
    table_id: int, user: User, seq: int | None, code: str | None, *, person_locked: bool = False
) -> TableChanged:
    try:  # a plain read, to choose the lock order (see ``lock_person``); checked again under the locks
        peek = Table.objects.filter(pk=table_id).values_list("status", "rematch_of_id").first()
    except (ValueError, TypeError):
        raise ActionError("unknown_table", _("Esa mesa no existe.")) from None
    person_first = peek is not None and peek[0] == Table.Status.WAITING and peek[1] is None
    if person_first and not person_locked:
        lock_person(user)
    table = lock(table_id)
    seats = list(Seat.objects.filter(table=table))
    access.check_view(table, user, code, seats)
    check_seq(table, seq)
    # A suspension being written waits for this seat (at a rematch, the person's row is locked here,
    # after the tables, as in games.table.actions.rematch).
    access.check_not_suspended(user, lock=True)
    access.check_sit(table, user, code, seats)  # one live table each: exact under the person's lock
    taken = {s.position for s in seats}
    free = [p for p in range(table.size) if p not in taken]
    try:
        with transaction.atomic():
            seat = Seat.objects.create(table=table, position=free[0], user_id=user.pk, name=user.get_username())
    except IntegrityError:
        raise ActionError("already_seated", _("Ya estás sentado en esta mesa.")) from None
    hold_stake(table, seat)
    if len(free) == 1 and table.is_public:
        return on_start(table)
    if table.rematch_of_id is not None:  # a rematch starts once every player of the game is back
        wanted = set(Seat.objects.filter(table_id=table.rematch_of_id, is_bot=False).values_list("user_id", flat=True))
        seats.append(seat)
        # (but for those a block keeps from sitting with someone seated: they will never be back, and bots,
        # if the table allows them, take their places)
        barred = access.kept_apart(seats, wanted)
        back = wanted - barred <= {s.user_id for s in seats}
        if back and (not barred or table.bots_allowed or len(seats) >= table.size):
            return on_start(table)
    return commit(table, table.seq)


def do_leave_seat(table_id: int, user: User, seq: int | None = None) -> TableChanged:
    """Before the start: stand up and take the stake back (the host cancels the table instead).
    Once started, a forfeit: the bot plays the seat to the end for the others' sake, and the seat is
    ranked last whatever its points (no share of the pot, no victory), even if they take it back."""
    with transaction.atomic():
        table = lock(table_id)
        check_seq(table, seq)
        seat = seat_of(table, user, active=False)  # leaving is always allowed (a suspension leaves this way)
        if table.status == Table.Status.PLAYING:
            if seat.left:
                raise ActionError("already_left", _("Ya has dejado esta partida: el bot juega por ti."))
            Seat.objects.filter(pk=seat.pk).update(left=True, away=True, forfeit=Seat.Forfeit.LEFT)
            return commit(table, table.seq)
        if table.status != Table.Status.WAITING:
            raise ActionError("not_playing", _("La partida no está en juego."))
        if not table.is_public and table.created_by_id == user.pk:
            return on_cancel(table, Table.CancelReason.HOST)
        refund_stake(table, seat)
        seat.delete()
        if not Seat.objects.filter(table=table, is_bot=False).exists():
            return on_cancel(table, Table.CancelReason.EVERYONE_LEFT)
        return commit(table, table.seq)


def do_cancel(table_id: int, user: User, seq: int | None = None) -> TableChanged:
    """The host calls off a private table before the start: every stake goes back."""
    with transaction.atomic():
        table = lock(table_id)
        check_seq(table, seq)
        seat_of(table, user)
        if table.created_by_id != user.pk or table.is_public:
            raise ActionError("not_host", _("Solo quien ha creado la mesa puede cancelarla."))
        if table.status != Table.Status.WAITING:
            raise ActionError("not_waiting", _("Esta partida ya ha empezado."))
        return on_cancel(table, Table.CancelReason.HOST)


def do_start(table_id: int, user: User, seq: int | None = None) -> TableChanged:
    """Start now: bots take the empty seats (at a private table, only the host starts, and bots only
    if the host allowed them)."""
    with transaction.atomic():
        table = lock(table_id)
        check_seq(table, seq)
        seat_of(table, user)
        if table.status != Table.Status.WAITING:
            raise ActionError("not_waiting", _("Esta partida ya ha empezado."))
        if not table.is_public:
            if table.created_by_id != user.pk:
                raise ActionError("not_host", _("Solo quien ha creado la mesa puede empezar la partida."))
            missing = table.size - Seat.objects.filter(table=table).count()
            if missing and not table.bots_allowed:
                raise ActionError(
                    "need_players",
                    _("Faltan jugadores: esta mesa es sin bots, así que tienen que estar los %(size)s."),
                    params={"size": table.size},
                )
        return on_start(table)
