"""Every write to a table goes through here.

Each ``do_*`` function is one transaction: lock the table row, check with the engine,
write the rows, bump ``seq`` with a compare-and-set, and — only once committed — tell the
table's group that ``seq`` changed and arm whatever is due next (a bot's move, filling a
quick table).  Bad input raises ``ActionError`` and changes nothing.
"""

from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts import ledger, moderation
from accounts.models import Account, Profile
from accounts.models import Transaction as LedgerTransaction
from games import access, push, rows, selectors, timers
from games.engine import Action, Bid, ChooseTrump, GameState, Phase, Play, PochaError, levels
from games.engine.snapshot import dump, load
from games.engine.view import SeatView, seat_view
from games.errors import ActionError
from games.models import CODE_ALPHABET, CODE_LENGTH, STAKES, Round, Seat, Table
from leaderboard import scores

log = logging.getLogger(__name__)

BOT_NAMES = ["Lola", "Paco", "Carmen", "Manolo", "Pilar", "Curro", "Rocío", "Pepe"]

User = AbstractBaseUser | AnonymousUser


@dataclass(frozen=True)
class Changed:
    table_id: int
    seq: int


@dataclass(frozen=True)
class Thinking:
    """A turn due for the bot's decision, as ``prepare_due`` found it: the table and ``seq`` it was due
    at, the seat to move, what that seat may see (never the game state) and the level to play at."""

    table_id: int
    seq: int
    position: int
    view: SeatView
    level: str
    is_bot: bool = True  # False: the bot plays for a person (the clock, away, dropped)


# -- helpers -------------------------------------------------------------------------------


def _lock(table_id: int) -> Table:
    try:
        table = rows.lock_table(int(table_id))
    except (ValueError, TypeError):
        table = None
    if table is None:
        raise ActionError("unknown_table", _("Esa mesa no existe."))
    return table


def _check_seq(table: Table, seq: int | None) -> None:
    if seq is not None and seq != table.seq:
        raise ActionError("stale", _("Tu pantalla no estaba al día: la mesa ha cambiado. Mira de nuevo."), resync=True)


def _user_seat(table: Table, user: User, *, active: bool = True) -> Seat:
    """The person's seat at the table.  ``active``: refuse a suspended person (read in the same query)."""
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    found = rows.user_seat(table.pk, user.pk)
    if found is None:
        raise ActionError("not_seated", _("No estás sentado en esta mesa."))
    seat, suspended_at, reason = found
    if active and suspended_at is not None:
        raise access.suspended_error(reason)
    return seat


def _commit(table: Table, old_seq: int, *, pause: float = 0.0, **fields: Any) -> Changed:
    """Save ``fields`` and bump ``seq`` if nobody else did; schedule the push after commit.
    ``pause``: seconds everyone gets to look at the table (a completed trick) before the next move."""
    fields["seq"] = old_seq + 1
    # A game in play: its seats, read once here (after every change to them in this transaction), give the
    # clock its seat to move and, with the table, the snapshot every viewer's board is drawn from.
    seats, spectators = (
        selectors.seats_and_spectators(table.pk)
        if fields.get("status", table.status) == Table.Status.PLAYING
        else (None, 0)
    )
    fields["due_at"], fields["turn_deadline"] = _due_at(table, fields, pause, seats)
    updated = rows.update_table(table.pk, old_seq, fields)
    if updated != 1:  # cannot happen under the row lock; refuse rather than lose a move
        raise ActionError("stale", _("La mesa ha cambiado mientras jugabas."), resync=True)
    for name, value in fields.items():
        setattr(table, name, value)
    changed = Changed(table.pk, old_seq + 1)
    due = table.due_at
    snapshot = selectors.pack_snapshot(table, seats, spectators) if seats is not None else None
    transaction.on_commit(lambda: push.table_changed(changed.table_id, changed.seq, snapshot=snapshot))
    if table.rematch_of_id is not None and (table.status == Table.Status.WAITING or "status" in fields):
        # the finished game's screen shows who is at its rematch, and whether it started
        old_id = table.rematch_of_id
        transaction.on_commit(
            lambda: push.table_changed(
                old_id, Table.objects.filter(pk=old_id).values_list("seq", flat=True).first() or 0, force=True
            )
        )
    if due is not None:
        person = table.turn_deadline is not None  # a person's turn clock (not a bot, nor away)
        deal = table.status == Table.Status.PLAYING and table.phase == Phase.ROUND_OVER.value
        transaction.on_commit(lambda: timers.arm(changed.table_id, changed.seq, due, person=person, deal=deal))
    return changed


def _turn_seconds(table: Table, phase: str) -> int:
    if phase == Phase.BIDDING.value:
        return table.bid_seconds
    if phase == Phase.CHOOSING_TRUMP.value:
        return table.trump_seconds
    return table.card_seconds


def _due_at(
    table: Table, fields: dict[str, Any], pause: float = 0.0, seats: list[Seat] | None = None
) -> tuple[datetime | None, datetime | None]:
    """(when the table's next automatic step is due, the turn clock's deadline) after this change.

    The server sets the pace: after a completed trick nobody (no bot, no clock) moves on before
    ``pause`` has passed, and a round's result stays ``POCHA_ROUND_PAUSE`` before the next deal."""
    status = fields.get("status", table.status)
    now = timezone.now()
    if status == Table.Status.WAITING:
        fill_at = fields.get("fill_at", table.fill_at)
        if fill_at is not None:  # a quick table, or a rematch that bots may fill: bots fill it then
            return fill_at, None
        # Any other waiting table (a new public one, a private one, a rematch without bots) is called off
        # if nobody starts it within POCHA_WAITING_TTL of its last change.
        return now + timedelta(seconds=settings.POCHA_WAITING_TTL), None
    if status != Table.Status.PLAYING:
        return None, None
    if fields.get("phase", table.phase) == Phase.ROUND_OVER.value:
        return now + timedelta(seconds=settings.POCHA_ROUND_PAUSE), None
    turn = fields.get("turn_seat", table.turn_seat)
    if turn is None:
        return None, None
    if seats is not None:
        seat = next((s for s in seats if s.position == turn), None)
    else:
        seat = Seat.objects.filter(table_id=table.pk, position=turn).first()
    if seat is None:
        return None, None
    if seat.is_bot or seat.away:
        return now + timedelta(seconds=max(settings.POCHA_BOT_DELAY, pause)), None
    deadline = table.turn_deadline
    if deadline is None or "state" in fields:  # every engine change is a new decision with a fresh clock
        deadline = now + timedelta(seconds=pause + _turn_seconds(table, fields.get("phase", table.phase)))
    due = deadline
    if seat.sockets == 0 and seat.disconnected_at is not None:
        grace = seat.disconnected_at + timedelta(seconds=settings.POCHA_DISCONNECT_GRACE)
        due = min(deadline, max(now, grace))
    return due, deadline


def _state_fields(game: GameState) -> dict[str, Any]:
    return {
        "state": dump(game),
        "phase": game.phase.value,
        "round_number": game.number,
        "turn_seat": game.turn,
    }


# -- tables and seats ----------------------------------------------------------------------


def _check_size_and_stake(size: Any, stake: Any) -> None:
    if size not in (3, 4, 5, 6):
        raise ActionError("size", _("Una mesa es de 3 a 6 jugadores."))
    if stake not in STAKES:
        raise ActionError("stake", _("Esa apuesta no existe: las mesas son gratis o de 100, 500 o 2.000 fichas."))


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def check_bot_level(level: Any) -> str:
    """The bots' level a form or a caller asks for (``facil``, ``normal``, ``dificil``, the spoken names
    too); ActionError otherwise."""
    try:
        if not isinstance(level, str):
            raise ValueError
        return levels.parse_level(level)
    except ValueError:
        raise ActionError("bot_level", _("Ese nivel de bots no existe: fácil, normal o difícil.")) from None


def _lock_person(user: User) -> None:
    """Lock the person's user row until the transaction ends.  Every seat a person takes is taken under
    it, so that their "one live table" check and the seat it allows are one step for them (two tabs,
    two processes: the second waits, then sees the first one's seat).  On SQLite the IMMEDIATE
    transaction already serialises every writer.

    Lock order: the person's row, then the table's (``do_create_table``, ``do_take_seat`` at a table
    that is not a rematch, ``do_quick_play``).  A rematch keeps its module's order — the finished
    table, the rematch, then the person — and touches no table those take: they lock only waiting
    tables that are not rematches, it locks a finished table and a rematch."""
    moderation.lock_user_row(user.pk)


def do_create_table(
    user: User,
    size: int,
    *,
    public: bool = True,
    quick: bool = False,
    stake: int = 0,
    bots_allowed: bool = True,
    bot_level: str = levels.NORMAL,
) -> Table:
    """A new table with its creator in seat 0 (their stake held); private tables get a code.
    Refused while the creator has a seat at another waiting or running table (one live table each)."""
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    _check_size_and_stake(size, stake)
    bot_level = check_bot_level(bot_level)
    access.check_not_suspended(user)
    with transaction.atomic():
        # (their user row: a suspension being written waits for this table, and so does their other tab)
        access.check_not_suspended(user, lock=True)
        return _create_table(
            user, size, public=public, quick=quick, stake=stake, bots_allowed=bots_allowed, bot_level=bot_level
        )


def _create_table(
    user: User, size: int, *, public: bool, quick: bool, stake: int, bots_allowed: bool, bot_level: str
) -> Table:
    """``do_create_table`` under the person's lock, inside the caller's transaction."""
    access.check_not_live_elsewhere(user)
    for attempt in range(20):
        try:
            with transaction.atomic():  # a code another waiting table just took: draw again
                table = Table.objects.create(
                    size=size,
                    is_public=public,
                    is_quick=quick,
                    created_by_id=user.pk,
                    stake=stake,
                    bots_allowed=bots_allowed or public,
                    code=None if public else _new_code(),
                    bot_level=bot_level,
                    fill_at=timezone.now() + timedelta(seconds=settings.POCHA_QUICK_WAIT) if quick else None,
                )
            break
        except IntegrityError:
            if public or attempt == 19:
                raise
    seat = Seat.objects.create(table=table, position=0, user_id=user.pk, name=user.get_username())
    _hold_stake(table, seat)
    _commit(table, table.seq)
    return table


def do_create_private_table(
    user: User, size: int, stake: int, bots_allowed: bool, bot_level: str = levels.NORMAL
) -> Table:
    """ "Mesa privada": the host picks the size, the stake, whether bots may fill and how well they play;
    others join by code."""
    return do_create_table(user, size, public=False, stake=stake, bots_allowed=bots_allowed, bot_level=bot_level)


def do_quick_play(user: User, size: int, stake: int = 0) -> Table:
    """ "Jugar ya": a seat at a waiting public quick table of ``size`` and ``stake``, or a new one.
    Someone with a live table already (waiting or running, not left) is sent back to it instead.

    One transaction under the person's lock, so that eight «Jugar ya» at once from one person (tabs,
    processes) give one seat: the first takes it, the others wait and then find it."""
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    access.check_not_suspended(user)
    _check_size_and_stake(size, stake)
    Profile.objects.update_or_create(user_id=user.pk, defaults={"quick_size": size, "quick_stake": stake})
    with transaction.atomic():
        access.check_not_suspended(user, lock=True)  # their user row first, then a table's
        mine = access.live_table(user.pk)
        if mine is not None:
            return mine  # one live table at a time: go back to it
        candidates = list(
            Table.objects.filter(
                status=Table.Status.WAITING,
                is_public=True,
                is_quick=True,
                size=size,
                stake=stake,
                rematch_of__isnull=True,
            )
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)[:5]
        )
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
            user, size, public=True, quick=True, stake=stake, bots_allowed=True, bot_level=levels.NORMAL
        )


def do_take_seat(table_id: int, user: User, seq: int | None = None, code: str | None = None) -> Changed:
    """A seat at a waiting table (stake held); a full public table, or a rematch everyone is back at,
    starts.  Refused while the person has a seat at another waiting or running table."""
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    with transaction.atomic():
        return _take_seat(table_id, user, seq, code)


def _take_seat(table_id: int, user: User, seq: int | None, code: str | None, *, person_locked: bool = False) -> Changed:
    try:  # a plain read, to choose the lock order (see _lock_person); checked again under the locks
        peek = Table.objects.filter(pk=table_id).values_list("status", "rematch_of_id").first()
    except (ValueError, TypeError):
        raise ActionError("unknown_table", _("Esa mesa no existe.")) from None
    person_first = peek is not None and peek[0] == Table.Status.WAITING and peek[1] is None
    if person_first and not person_locked:
        _lock_person(user)
    table = _lock(table_id)
    seats = list(Seat.objects.filter(table=table))
    access.check_view(table, user, code, seats)
    _check_seq(table, seq)
    # A suspension being written waits for this seat (at a rematch, the person's row is locked here,
    # after the tables, as in games.rematch).
    access.check_not_suspended(user, lock=True)
    access.check_sit(table, user, code, seats)  # one live table each: exact under the person's lock
    taken = {s.position for s in seats}
    free = [p for p in range(table.size) if p not in taken]
    try:
        with transaction.atomic():
            seat = Seat.objects.create(table=table, position=free[0], user_id=user.pk, name=user.get_username())
    except IntegrityError:
        raise ActionError("already_seated", _("Ya estás sentado en esta mesa.")) from None
    _hold_stake(table, seat)
    if len(free) == 1 and table.is_public:
        return _on_start(table)
    if table.rematch_of_id is not None:  # a rematch starts once every player of the game is back
        wanted = set(Seat.objects.filter(table_id=table.rematch_of_id, is_bot=False).values_list("user_id", flat=True))
        if wanted <= {s.user_id for s in seats} | {user.pk}:
            return _on_start(table)
    return _commit(table, table.seq)


def do_leave_seat(table_id: int, user: User, seq: int | None = None) -> Changed:
    """Before the start: stand up and take the stake back (the host cancels the table instead).
    Once started: the bot plays the seat to the end, and the seat (and any winnings) stays theirs."""
    with transaction.atomic():
        table = _lock(table_id)
        _check_seq(table, seq)
        seat = _user_seat(table, user, active=False)  # leaving is always allowed (a suspension leaves this way)
        if table.status == Table.Status.PLAYING:
            if seat.left:
                raise ActionError("already_left", _("Ya has dejado esta partida: el bot juega por ti."))
            Seat.objects.filter(pk=seat.pk).update(left=True, away=True)
            return _commit(table, table.seq)
        if table.status != Table.Status.WAITING:
            raise ActionError("not_playing", _("La partida no está en juego."))
        if not table.is_public and table.created_by_id == user.pk:
            return _on_cancel(table)
        _refund_stake(table, seat)
        seat.delete()
        if not Seat.objects.filter(table=table, is_bot=False).exists():
            return _on_cancel(table)
        return _commit(table, table.seq)


def do_cancel(table_id: int, user: User, seq: int | None = None) -> Changed:
    """The host calls off a private table before the start: every stake goes back."""
    with transaction.atomic():
        table = _lock(table_id)
        _check_seq(table, seq)
        _user_seat(table, user)
        if table.created_by_id != user.pk or table.is_public:
            raise ActionError("not_host", _("Solo quien ha creado la mesa puede cancelarla."))
        if table.status != Table.Status.WAITING:
            raise ActionError("not_waiting", _("Esta partida ya ha empezado."))
        return _on_cancel(table)


def do_start(table_id: int, user: User, seq: int | None = None) -> Changed:
    """Start now: bots take the empty seats (at a private table, only the host starts, and bots only
    if the host allowed them)."""
    with transaction.atomic():
        table = _lock(table_id)
        _check_seq(table, seq)
        _user_seat(table, user)
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
        return _on_start(table)


# -- the lifecycle: the only places where a game starts, ends or is called off, and (with the
# -- stakes held and given back as people sit and stand) the only places that move chips


def _hold_stake(table: Table, seat: Seat) -> None:
    """The seat's stake goes from its owner (the house for a bot) into the table's pot.

    Every person's seat comes through here (a new table, a seat taken, a rematch proposed or accepted),
    under their user row's lock: the last word on one live table each."""
    if not seat.is_bot and seat.user_id is not None and access.live_table(seat.user_id, exclude=table.pk) is not None:
        raise access.live_elsewhere_error()
    if not table.stake:
        return
    payer = ledger.house_account() if seat.is_bot else ledger.user_account(seat.user_id)
    try:
        ledger.post(
            LedgerTransaction.Kind.STAKE,
            f"stake:seat:{seat.pk}",
            [(payer, -table.stake), (ledger.pot_account(table.pk), table.stake)],
            table_id=table.pk,
        )
    except ledger.InsufficientChips as error:
        raise access.no_chips_error(error.balance, table.stake) from None


def _refund_stake(table: Table, seat: Seat) -> None:
    """The seat's stake, exactly as it was held, back from the pot (once)."""
    held = LedgerTransaction.objects.filter(key=f"stake:seat:{seat.pk}").first()
    if held is None:
        return
    legs = [(entry.account, -entry.amount) for entry in held.entries.select_related("account")]
    ledger.post(LedgerTransaction.Kind.REFUND, f"refund:seat:{seat.pk}", legs, table_id=table.pk)


def split_pot(pot: int, winners: list[int]) -> dict[int, int]:
    """RULES.md: an equal split; chips that do not divide go one each to the winners in seat order from 0."""
    order = sorted(winners)
    share, left_over = divmod(pot, len(order))
    return {seat: share + (1 if i < left_over else 0) for i, seat in enumerate(order)}


def _on_start(table: Table) -> Changed:
    """Bots take the empty seats (staking from the house), the first dealer is drawn and round 1 dealt."""
    if table.status != Table.Status.WAITING:
        raise ActionError("not_waiting", _("Esta partida ya ha empezado."))
    seats = list(Seat.objects.filter(table=table))
    taken = {s.position for s in seats}
    names = [n for n in BOT_NAMES]
    random.shuffle(names)
    for position in range(table.size):
        if position not in taken:
            bot = Seat.objects.create(table=table, position=position, is_bot=True, name=f"Bot {names.pop()}")
            _hold_stake(table, bot)
            seats.append(bot)
    by_position = {s.position: s.name for s in seats}
    seed = secrets.randbits(62)
    rng = random.Random(seed)
    first_dealer = rng.randrange(table.size)
    game = GameState([by_position[p] for p in range(table.size)], first_dealer)
    _deal(table, game)
    return _commit(
        table,
        table.seq,
        status=Table.Status.PLAYING,
        started_at=timezone.now(),
        fill_at=None,
        seed=seed,
        first_dealer=first_dealer,
        **_state_fields(game),
    )


def _deal(table: Table, game: GameState) -> Round:
    seed = secrets.randbits(62)
    the_deal = game.deal(seed=seed)
    return Round.objects.create(
        table=table,
        number=game.number,
        dealer=game.dealer,
        seed=seed,
        hands=[[str(c) for c in hand] for hand in the_deal.hands],
        trump_card=None if the_deal.trump_card is None else str(the_deal.trump_card),
    )


def _on_finish(table: Table, game: GameState) -> dict[str, Any]:
    """The game is over: the pot goes to the winner, or is split among those sharing first place, each
    seat's record is written and the rankings move, all in the same transaction as the last move.
    A second call (the table already finished) changes nothing."""
    finished = {"status": Table.Status.FINISHED, "finished_at": table.finished_at or timezone.now()}
    seats = {s.position: s for s in Seat.objects.filter(table=table)}
    # Settled already (the places, the payout and the rankings are written together): nothing more.
    if table.status == Table.Status.FINISHED or any(s.place is not None for s in seats.values()):
        return finished
    winners = list(game.winners() or [])
    pot = Account.objects.filter(kind=Account.Kind.POT, table_id=table.pk).first()
    shares: dict[int, int] = {}
    if pot is not None and pot.balance > 0 and winners:
        shares = split_pot(pot.balance, winners)
        legs: list[tuple[Account, int]] = [(pot, -pot.balance)]
        for position, share in shares.items():
            seat = seats[position]
            legs.append((ledger.house_account() if seat.is_bot else ledger.user_account(seat.user_id), share))
        if ledger.post(LedgerTransaction.Kind.PAYOUT, f"payout:table:{table.pk}", legs, table_id=table.pk) is None:
            raise RuntimeError(f"table {table.pk}: the pot was paid but the seats were not settled")
    places = _places(game.totals)
    for position, seat in seats.items():
        bids = [(r.bids[position], r.tricks[position]) for r in game.results if r.bids[position] is not None]
        seat.winnings = shares.get(position, 0)
        seat.place = places[position]
        seat.final_total = game.totals[position]
        seat.rounds_bid = len(bids)
        seat.exact_bids = sum(1 for bid, tricks in bids if bid == tricks)
        seat.save(update_fields=["winnings", "place", "final_total", "rounds_bid", "exact_bids"])
    if table.is_quick and table.is_public:  # private tables and bots never count in the rankings
        scores.record_game(
            [
                (s.user_id, s.winnings - table.stake, s.place == 1)
                for s in seats.values()
                if not s.is_bot and s.user_id is not None
            ],
            finished["finished_at"],
        )
    return finished


def _places(totals: list[int] | tuple[int, ...]) -> list[int]:
    """Each seat's final place: 1 + how many scored more (players sharing a total share a place)."""
    return [1 + sum(1 for other in totals if other > mine) for mine in totals]


def _on_cancel(table: Table) -> Changed:
    """A table called off (before the start, or by a moderator during the game): every stake still in
    the pot goes back to whoever put it in."""
    seats = list(Seat.objects.filter(table=table))
    if table.stake:
        # Several refunds in one transaction: take every account's lock first, in the ledger's order.
        ledger.lock_accounts(
            Account.objects.filter(
                Q(kind=Account.Kind.POT, table_id=table.pk)
                | Q(kind=Account.Kind.USER, user_id__in=[s.user_id for s in seats if s.user_id])
            )
        )
    for seat in seats:
        _refund_stake(table, seat)
    return _commit(table, table.seq, status=Table.Status.CANCELLED, fill_at=None)


# -- the game ------------------------------------------------------------------------------


def do_action(table_id: int, user: User, action: Action, seq: int | None) -> Changed:
    """A person's bid, trump choice or card.  Refused as late once their turn's clock has run out (the due
    step, armed at that deadline, plays for them)."""
    with transaction.atomic():
        table = _lock(table_id)
        seat = _user_seat(table, user)
        _check_seq(table, seq)
        if table.status != Table.Status.PLAYING:
            raise ActionError("not_playing", _("La partida no está en juego."))
        if (
            table.turn_seat == seat.position
            and table.turn_deadline is not None
            and timezone.now() > table.turn_deadline
        ):
            raise ActionError("late", _("Se acabó tu tiempo: el bot juega por ti."), resync=True)
        if seat.left:  # coming back to a game they had left: not while they play at another table
            _check_back_from_left(table, user)
        if seat.timeouts or seat.away or seat.left:  # any move of their own brings them back
            # (what the bot did meanwhile stays on their page until their next move)
            Seat.objects.filter(pk=seat.pk).update(timeouts=0, away=False, left=False)
        elif seat.bot_log:  # they were back and have seen what the bot did: that notice is done
            Seat.objects.filter(pk=seat.pk).update(bot_log=[])
        try:
            return _apply(table, seat.position, action)
        except ActionError:
            transaction.set_rollback(True)  # a refused move changes nothing, not even the away flag
            raise


def _check_back_from_left(table: Table, user: User) -> None:
    """Someone who left this running game may start another; taking this seat back from the bot is then
    refused until that other game is over (or left).  Under their user row's lock (taken after this
    table's: the tables the person-first paths lock are waiting ones, and this one is running)."""
    _lock_person(user)
    access.check_not_live_elsewhere(user, table)


def do_back(table_id: int, user: User, seq: int | None = None) -> Changed:
    """ "Vuelvo": an away player takes their seat back from the bot."""
    with transaction.atomic():
        table = _lock(table_id)
        seat = _user_seat(table, user)
        if not seat.away and not seat.timeouts and not seat.left:
            raise ActionError("not_away", _("Ya estás jugando tú."))
        if seat.left:
            _check_back_from_left(table, user)
        Seat.objects.filter(pk=seat.pk).update(timeouts=0, away=False, left=False)
        return _commit(table, table.seq)


# -- what is due: three steps, so that a bot thinks with no lock held and no transaction open --------
#
# 1. ``prepare_due``: a plain read that decides what is due at (table, seq).  Filling a quick table and
#    dealing the next round need no thought and are done at once, in a short locked transaction; a turn
#    (a bot's, or a person's whose clock ran out, who is away or whose connection dropped) comes back as
#    a ``Thinking``: the seat's view, the level and the seq.
# 2. ``think``: the bot's decision from that view alone — up to 600 ms for a difícil bot, so the server
#    runs it off its event loop and off its database thread (``timers.run_due_async``), and Celery in
#    its worker.
# 3. ``apply_due``: a short locked transaction that applies the decision through ``_apply`` if the table
#    is still at that seq and the step still due; otherwise the decision is dropped.


def do_due(table_id: int, seq: int) -> Changed | None:
    """Whatever is due at (table, seq): fill a quick table, deal the next round, play a bot's turn, or
    play for a person whose clock ran out, who is away, or whose connection dropped — the three steps
    in a row (the Celery task, the sweeper and the tests call this).

    Idempotent: a duplicate or late call (the table moved on) does nothing.
    """
    step = prepare_due(table_id, seq)
    if not isinstance(step, Thinking):
        return step
    return apply_due(step, think(step))


def _is_due(table: Table, seq: int, now: datetime) -> bool:
    return table.seq == seq and table.due_at is not None and table.due_at <= now


def prepare_due(table_id: int, seq: int) -> Changed | Thinking | None:
    """Step 1: what is due at (table, seq).  The steps that need no thought are done here (and their
    change returned); a turn to play comes back as a ``Thinking``, read without taking any lock."""
    turn_is_bot = Seat.objects.filter(table_id=OuterRef("pk"), position=OuterRef("turn_seat")).values("is_bot")[:1]
    try:  # one read: the row (its seq and its engine snapshot together) and whether a bot is to move
        table = Table.objects.annotate(turn_is_bot=Subquery(turn_is_bot)).filter(pk=table_id).first()
    except (ValueError, TypeError):
        return None
    if table is None or not _is_due(table, seq, timezone.now()):
        return None
    if table.status == Table.Status.WAITING or (
        table.status == Table.Status.PLAYING and table.phase == Phase.ROUND_OVER.value
    ):
        return _due_without_thought(table_id, seq)
    if table.status != Table.Status.PLAYING or table.turn_seat is None or table.turn_is_bot is None:
        return None
    # A bot plays at the table's level; for a person, the bot is never worse than normal.
    level = table.bot_level if table.turn_is_bot else levels.at_least_normal(table.bot_level)
    view = seat_view(load(table.state), table.turn_seat, reasons=False)
    return Thinking(table.pk, table.seq, table.turn_seat, view, level, is_bot=table.turn_is_bot)


def _due_without_thought(table_id: int, seq: int) -> Changed | None:
    """A waiting table whose time is up starts (bots fill it) or, if bots were not to fill it (it waited
    POCHA_WAITING_TTL for its players), is called off with every stake given back; a round's result has
    been up long enough: the next deal."""
    with transaction.atomic():
        try:
            table = _lock(table_id)
        except ActionError:
            return None
        if not _is_due(table, seq, timezone.now()):
            return None
        if table.status == Table.Status.WAITING:
            if table.fill_at is None:
                return _on_cancel(table)
            return _on_start(table)
        if table.status == Table.Status.PLAYING and table.phase == Phase.ROUND_OVER.value:
            game = load(table.state)
            _deal(table, game)
            return _commit(table, table.seq, **_state_fields(game))
        return None


def think(step: Thinking) -> Action:
    """Step 2: the bot's move for ``step``'s seat, from its view alone (no database, no lock).

    A decision the engine cannot make (a bug in a strategy) falls back to the plain fácil move, so
    that a table never stalls on its bot."""
    try:
        action = levels.decide(step.view, step.level)
        if action in step.view.legal:
            return action
        log.error("table %s: the %s bot chose %s, not a legal move", step.table_id, step.level, action)
    except Exception:
        log.exception("table %s: the %s bot failed to decide", step.table_id, step.level)
    return levels.decide(step.view, levels.FACIL)


def apply_due(step: Thinking, action: Action) -> Changed | None:
    """Step 3: play ``action`` for ``step``'s seat if the table is still where the bot saw it (same seq,
    the step still due, the same seat to move); otherwise drop it and change nothing."""
    with transaction.atomic():
        try:
            table = _lock(step.table_id)
        except ActionError:
            return None
        now = timezone.now()
        if (
            not _is_due(table, step.seq, now)
            or table.status != Table.Status.PLAYING
            or table.turn_seat != step.position
        ):
            return None  # the table moved on (or the person came back) while the bot thought
        game = load(table.state)
        if step.is_bot:  # (a seat's kind never changes once the game has started)
            return _apply(table, step.position, action, game=game, by_bot=True)
        seat = Seat.objects.get(table=table, position=step.position)
        by_clock = table.turn_deadline is not None and table.turn_deadline <= now
        if by_clock:
            seat.timeouts += 1
            seat.away = seat.away or seat.timeouts >= 2
        seat.bot_log = [*seat.bot_log, _logged(action)]  # told to them when they are back
        seat.save(update_fields=["timeouts", "away", "bot_log"])
        return _apply(table, seat.position, action, game=game, by_bot=not by_clock, by_clock=by_clock)


def _logged(action: Action) -> dict[str, Any]:
    if isinstance(action, Bid):
        return {"bid": action.amount}
    if isinstance(action, ChooseTrump):
        return {"trump": action.suit.value}
    return {"play": str(action.card)}


def _apply(
    table: Table,
    position: int,
    action: Action,
    *,
    game: GameState | None = None,
    by_bot: bool = False,
    by_clock: bool = False,
) -> Changed:
    if game is None:
        game = load(table.state)
    try:
        game.check(action, position)
    except PochaError as error:
        raise ActionError.from_engine(error) from None

    # The round's row is not read: the inserts take its id by a subquery and its updates filter on it, so
    # a move costs its inserts and no extra round trip (the per-move path, issue 12).  The queryset is
    # built only for the few moves that update the round (building it was 4% of a server's CPU, py-spy).
    number = game.number

    def rounds() -> QuerySet[Round]:
        return Round.objects.filter(table_id=table.pk, number=number)

    if isinstance(action, Bid):
        rows.insert_bid(
            table.pk,
            game.number,
            index=len(game.bids_made),
            seat=position,
            amount=action.amount,
            by_bot=by_bot,
            by_clock=by_clock,
        )
        game.apply_unchecked(action)
        if game.auction_winner is not None and game.phase is Phase.CHOOSING_TRUMP:
            rounds().update(auction_winner=game.auction_winner)
    elif isinstance(action, ChooseTrump):
        game.apply_unchecked(action)
        rounds().update(trump_suit=action.suit.value, trump_by_clock=by_clock)
    else:
        _record_play(table, game, position, action, by_bot=by_bot, by_clock=by_clock)
    fields = {}
    # A completed trick stays up for everyone before anyone moves on.
    pause = settings.POCHA_TRICK_PAUSE if isinstance(action, Play) and not game.trick else 0.0
    if game.phase in (Phase.ROUND_OVER, Phase.GAME_OVER):
        rounds().update(points=list(game.results[-1].points))
        if game.phase is Phase.ROUND_OVER and settings.POCHA_ROUND_PAUSE <= 0:
            _deal(table, game)  # no pause asked for: the next round starts at once
        elif game.phase is Phase.GAME_OVER:
            fields.update(_on_finish(table, game))
        # else: the last trick, then the result, stay up; the due step deals the next round
    return _commit(table, table.seq, pause=pause, **_state_fields(game), **fields)


def _record_play(
    table: Table,
    game: GameState,
    position: int,
    action: Play,
    *,
    by_bot: bool,
    by_clock: bool,
) -> None:
    index = len(game.log[-1].plays)
    trick_number = index // len(game.order) + 1
    trick_id = None
    if not game.trick:  # the trick's first card: its row first
        trick_id = rows.insert_trick(table.pk, game.number, trick_number, position)
    rows.insert_play(
        table.pk,
        game.number,
        trick_number,
        trick_id,
        index=index,
        seat=position,
        card=str(action.card),
        by_bot=by_bot,
        by_clock=by_clock,
    )
    game.apply_unchecked(action)
    if not game.trick:  # the trick is complete
        rows.set_trick_winner(table.pk, game.number, trick_number, game.last_trick_winner)


def parse_request(data: dict[str, Any]) -> tuple[str, Action | None, int | None]:
    """The (verb, engine action, seq) a socket frame or form asks for; ActionError if malformed."""
    from games.engine import Card, Suit

    if not isinstance(data, dict):
        raise ActionError("malformed", _("Mensaje no válido."))
    verb = data.get("action")
    raw_seq = data.get("seq")
    seq: int | None = None
    if raw_seq is not None and raw_seq != "":
        # Only an integer or its digits: int() would also take 3.7 (as 3) and true (as 1).
        if isinstance(raw_seq, bool) or not isinstance(raw_seq, (int, str)):
            raise ActionError("malformed", _("Mensaje no válido."))
        try:
            seq = int(raw_seq)
        except (TypeError, ValueError):
            raise ActionError("malformed", _("Mensaje no válido.")) from None
    value = data.get("value")
    if verb in ("start", "leave", "sit", "resync", "back", "cancel"):
        return verb, None, seq
    if seq is None:
        raise ActionError("malformed", _("Mensaje no válido."))
    try:
        if verb == "bid":
            if not isinstance(value, (str, int)) or isinstance(value, bool) or not str(value).isdigit():
                raise ValueError
            return verb, Bid(int(value)), seq
        if verb == "trump":
            return verb, ChooseTrump(Suit.parse(str(value))), seq
        if verb == "play":
            return verb, Play(Card.parse(str(value))), seq
    except ValueError:
        raise ActionError("malformed_value", _("Esa jugada no existe.")) from None
    raise ActionError("unknown_action", _("Acción desconocida."))


ACTIONS_BY_VERB: dict[str, Callable[..., Changed]] = {
    "back": do_back,
    "cancel": do_cancel,
    "start": do_start,
    "leave": do_leave_seat,
    "sit": do_take_seat,
}


# -- moderation ----------------------------------------------------------------------------


def _moderation_error(error: moderation.ModerationError) -> ActionError:
    return ActionError(error.code, error.message)


def do_suspend(user_id: int, moderator: Any, reason: str) -> list[Changed]:
    """Suspend a person: they can no longer sit, join or play.  Their waiting seats are given up (the
    stake refunded, as when leaving), the bot takes their seats in running games at once, each table
    is redrawn for everyone at it, and then every socket of theirs is told why and closed.

    The flag is committed first, on its own: a seat being taken meanwhile either sees it and is
    refused, or commits before it and is given up here."""
    try:
        profile = moderation.suspend(user_id, moderator, reason)
    except moderation.ModerationError as error:
        raise _moderation_error(error) from None
    user = get_user_model().objects.get(pk=user_id)
    changes = []
    live = (
        Seat.objects.filter(user_id=user_id, left=False, table__status__in=[Table.Status.WAITING, Table.Status.PLAYING])
        .order_by("table_id")
        .values_list("table_id", flat=True)
    )
    for table_id in list(live):
        try:
            changes.append(do_leave_seat(table_id, user))
        except ActionError:
            continue  # the table moved on meanwhile (it finished, or was cancelled)
    text = profile.suspended_reason
    transaction.on_commit(lambda: push.account_suspended(user_id, text))
    return changes


def do_lift_suspension(user_id: int, moderator: Any, reason: str = "") -> bool:
    """Lift a person's suspension (False if they were not suspended).  Their seats in games still
    running stay with the bot until they come back ("Vuelvo") or play a card."""
    try:
        return moderation.lift(user_id, moderator, reason)
    except moderation.ModerationError as error:
        raise _moderation_error(error) from None


def do_admin_cancel(table_id: int, moderator: Any, reason: str) -> Changed:
    """A moderator calls off a waiting or running table: every stake goes back once (a bot's to the
    house), the table is closed with no winner and no clock, and every seat's page is redrawn.
    A table already finished or cancelled is refused and nothing changes."""
    try:
        text = moderation.clean_reason(reason, moderation.ADJUSTMENT_REASON_MAX)
    except moderation.ModerationError as error:
        raise _moderation_error(error) from None
    with transaction.atomic():
        table = _lock(table_id)
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
        changed = _on_cancel(table)
        moderation.log(moderator, table, f"Partida cancelada: {text}")
    return changed
