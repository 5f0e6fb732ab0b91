"""Running a tournament: the start, the tables of each game, the late tables, the end and its prizes, and a
cancellation.  ``advance`` looks at one tournament under its row's lock and does whatever is due; it is
idempotent (a second call, or two processes at once, change nothing more), so it can be called as often as
anyone likes: by the sweepers (Celery beat, or every server process's loop without Celery) and, at once,
after a tournament table finishes.

What is kept is what the rows say: a game is over when all its tables are; the prizes are one ledger
transaction with a unique key, in the same database transaction as the tournament's end (a process killed
before that commit leaves the tournament playing, and the next sweep ends it and pays, once).

Lock order: the tournament's row, then rows of tables it creates; the tables' own moves never lock the
tournament's row (they tell it after commit: ``TournamentChanged``).  A late table is hurried in its own
transaction, after the tournament's.
"""

from __future__ import annotations

import logging
import math
import random
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext

from accounts import ledger
from accounts.models import Account
from accounts.models import Transaction as LedgerTransaction
from games.engine import spread_rounds
from games.engine.levels import DIFICIL
from games.models import Registration, Seat, Table, Tournament
from games.table.actions import hurry, lifecycle
from games.table.actions.common import new_seed
from games.table.actions.lifecycle import round_seed
from games.table.events import StudyQueued, TournamentChanged, emit
from games.tournaments import fairplay, scoring
from games.tournaments.entries import refund

log = logging.getLogger(__name__)

#: Fewer people than this at the start: the tournament is cancelled and the entries refunded.
LEAST_PEOPLE = 2


def sweep(now: datetime | None = None) -> int:
    """Advance every tournament with something due: starting, playing.  How many were looked at."""
    now = now or timezone.now()
    due = list(
        Tournament.objects.filter(
            Q(status=Tournament.Status.SCHEDULED, starts_at__lte=now) | Q(status=Tournament.Status.PLAYING)
        ).values_list("pk", flat=True)
    )
    for tournament_id in due:
        try:
            advance(tournament_id, now)
        except Exception:
            log.exception("tournament %s could not advance", tournament_id)
    return len(due)


def advance(tournament_id: int, now: datetime | None = None) -> str:
    """Whatever is due for the tournament now: its start, its next game, its end, hurrying its late tables.
    Returns what it did (``started``, ``next_game``, ``finished``, ``cancelled``, ``hurried``, ``waiting``
    or ``nothing``)."""
    now = now or timezone.now()
    late: list[int] = []
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
        if tournament is None:
            return "nothing"
        if tournament.status == Tournament.Status.SCHEDULED:
            if now < tournament.starts_at:
                return "nothing"
            return start(tournament, now)
        if tournament.status != Tournament.Status.PLAYING:
            return "nothing"
        tables = list(Table.objects.filter(tournament=tournament, tournament_game=tournament.current_game))
        open_tables = [t for t in tables if t.status in (Table.Status.WAITING, Table.Status.PLAYING)]
        if not open_tables:
            if tournament.format == Tournament.Format.POINTS and tournament.current_game < tournament.games:
                next_game(tournament, now)
                return "next_game"
            finish(tournament, now)
            return "finished"
        done = [t.finished_at for t in tables if t.finished_at is not None]
        if done and tournament.first_done_at is None:
            tournament.first_done_at = min(done)
            Tournament.objects.filter(pk=tournament.pk).update(first_done_at=tournament.first_done_at)
        if tournament.first_done_at is not None and now >= tournament.first_done_at + timedelta(
            minutes=tournament.late_minutes
        ):
            late = [t.pk for t in open_tables]
    for table_id in late:
        hurry.do_hurry(table_id)
    return "hurried" if late else "waiting"


# -- the start ---------------------------------------------------------------------------------------


def start(tournament: Tournament, now: datetime) -> str:
    """The start: too few people, and it is cancelled (entries refunded); else its first game's tables."""
    people = list(Registration.objects.filter(tournament=tournament).order_by("registered_at", "pk"))
    repeat(tournament)
    if len(people) < LEAST_PEOPLE:
        cancel_locked(tournament, gettext("No se inscribieron jugadores suficientes."))
        return "cancelled"
    tournament.seed = new_seed()
    tournament.status = Tournament.Status.PLAYING
    tournament.current_game = 1
    tournament.first_done_at = None
    rng = random.Random(tournament.seed)
    tables = first_seating(
        [(r.user_id, r.address) for r in people],
        tournament.size,
        tables_at_most=max(1, tournament.places // tournament.size),
        least_tables=2 if tournament.format == Tournament.Format.DUPLICATE else 1,
        rng=rng,
    )
    names = dict(Registration.objects.filter(tournament=tournament).values_list("user_id", "user__username"))
    open_tables(tournament, tables, names)
    _save(tournament, "seed", "status", "current_game", "first_done_at")
    if tournament.format == Tournament.Format.DUPLICATE:
        emit(StudyQueued())  # the worker plays the deals' par
    return "started"


def first_seating(
    people: Sequence[tuple[int, str | None]],
    size: int,
    *,
    tables_at_most: int,
    least_tables: int = 1,
    rng: random.Random,
) -> list[dict[int, int]]:
    """The first game's tables: for each, seat position -> user id (empty seats are for the bots).  As few
    tables as hold everyone (at least ``least_tables``, at most ``tables_at_most``), the people spread evenly
    over them, and no two people of one address at one table (registration keeps an address's people to at
    most one per table)."""
    groups: dict[Any, list[int]] = defaultdict(list)
    for user_id, address in people:
        groups[address if address else ("alone", user_id)].append(user_id)
    largest = max((len(g) for g in groups.values()), default=0)
    count = min(tables_at_most, max(least_tables, math.ceil(len(people) / size), largest))
    order = list(groups.values())
    rng.shuffle(order)
    order.sort(key=len, reverse=True)  # the biggest address first: its people go to different tables
    members: list[list[int]] = [[] for _ in range(count)]
    cursor = 0
    for group in order:
        for user_id in group:
            members[cursor % count].append(user_id)
            cursor += 1
    return [_seat_at_random(m, size, rng) for m in members]


def _seat_at_random(user_ids: Sequence[int], size: int, rng: random.Random) -> dict[int, int]:
    positions = list(range(size))
    rng.shuffle(positions)
    return {positions[i]: user_id for i, user_id in enumerate(user_ids)}


def open_tables(tournament: Tournament, tables: Sequence[dict[int, int]], names: dict[int, str]) -> list[int]:
    """The current game's tables created and started: every table's seat order and deals are the game's
    (one seed for all), difícil bots in the empty seats, the tournament's clock."""
    game_seed = round_seed(int(tournament.seed or 0), tournament.current_game)
    deals = _deals(tournament)
    created = []
    for number, seating in enumerate(tables, start=1):
        table = Table.objects.create(
            size=tournament.size,
            rules=tournament.rules,
            is_public=True,
            is_quick=False,
            bots_allowed=True,
            bot_level=DIFICIL,
            bid_seconds=tournament.bid_seconds,
            card_seconds=tournament.card_seconds,
            seed=game_seed,
            tournament=tournament,
            tournament_game=tournament.current_game,
            tournament_number=number,
            deals=list(deals),
        )
        for position, user_id in sorted(seating.items()):
            Seat.objects.create(table=table, position=position, user_id=user_id, name=names.get(user_id, "?"))
        lifecycle.on_start(table)
        created.append(table.pk)
    return created


def _deals(tournament: Tournament) -> tuple[int, ...]:
    """The rounds of the schedule each game plays: ``deals`` of them spread over it, or all of them (no
    tie-break rounds in a tournament: every table must play the same deals)."""
    total = len(tournament.game_rules.schedule(tournament.size))
    return spread_rounds(total, tournament.deals)


# -- por puntos: the next game ------------------------------------------------------------------------


def next_game(tournament: Tournament, now: datetime) -> None:
    """Por puntos: the next game's tables, formed by the standings (the leaders together)."""
    standings = current_standings(tournament)
    addresses = dict(Registration.objects.filter(tournament=tournament).values_list("user_id", "address"))
    people = [s.user_id for s in standings if s.user_id is not None and s.user_id in addresses]
    tournament.current_game += 1
    tournament.first_done_at = None
    rng = random.Random(round_seed(int(tournament.seed or 0), tournament.current_game, 1))
    groups = regroup(people, addresses, tournament.size)
    names = dict(Registration.objects.filter(tournament=tournament).values_list("user_id", "user__username"))
    open_tables(tournament, [_seat_at_random(g, tournament.size, rng) for g in groups], names)
    _save(tournament, "current_game", "first_done_at")


def regroup(people: Sequence[int], addresses: dict[int, str | None], size: int) -> list[list[int]]:
    """``people`` in standings order cut into tables of ``size`` (the leaders together), then mended so that
    no table has two people of one address: such a person swaps with the nearest one further down (or up)
    whose address is not at either table."""
    count = max(1, math.ceil(len(people) / size))
    tables = [list(people[i * size : (i + 1) * size]) for i in range(count)]

    def clash(table: list[int], user_id: int) -> bool:
        mine = addresses.get(user_id)
        return bool(mine) and sum(1 for other in table if addresses.get(other) == mine) > 1

    for t, table in enumerate(tables):
        for i, user_id in enumerate(list(table)):
            if not clash(table, user_id):
                continue
            for u in list(range(t + 1, count)) + list(range(t - 1, -1, -1)):
                other_table = tables[u]
                for j, other in enumerate(other_table):
                    mine, theirs = addresses.get(user_id), addresses.get(other)
                    if theirs == mine:
                        continue
                    if mine and any(addresses.get(x) == mine for x in other_table if x != other):
                        continue
                    if theirs and any(addresses.get(x) == theirs for x in table if x != user_id):
                        continue
                    table[i], other_table[j] = other, user_id
                    break
                else:
                    continue
                break
    return tables


# -- the end ------------------------------------------------------------------------------------------


def current_standings(tournament: Tournament) -> list[scoring.Standing]:
    """The standings as the rows say now."""
    tables = scoring.read_tables(tournament)
    if tournament.format == Tournament.Format.DUPLICATE:
        return scoring.duplicate(tables)
    finished: dict[int, list[int]] = defaultdict(list)
    for table_id, total in (
        Seat.objects.filter(table__tournament=tournament, table__status=Table.Status.FINISHED)
        .order_by("table_id", "position")
        .values_list("table_id", "final_total")
    ):
        finished[table_id].append(int(total or 0))
    return scoring.by_points(tables, finished)


def finish(tournament: Tournament, now: datetime) -> None:
    """The end: the final standings kept, each person's place and prize, the pool paid out in one
    transaction (exactly once: its key), whatever is left to the house.  The prizes go by place among the
    people who played: one who forfeited (a no-show, one who left, one the bot and the clock played) is placed
    after them (``scoring.rank``) and takes none; if nobody played, nobody takes a prize and the whole pool goes
    to the house, in the same transaction and under the same key.  A tournament already finished is left as it
    is: its pool is empty by then, and the end processed again would record every prize as 0."""
    if Tournament.objects.filter(pk=tournament.pk, status=Tournament.Status.FINISHED).exists():
        return
    standings = current_standings(tournament)
    people = [s for s in standings if s.user_id is not None]
    pool = Account.objects.filter(kind=Account.Kind.POOL, tournament_id=tournament.pk).first()
    amount = pool.balance if pool is not None else 0
    try:
        percentages = tournament.prize_percentages()
    except ValueError:
        percentages = []
    played = [s for s in people if not s.forfeit]  # (first in the standings: their places are 1, 2…)
    won, left = scoring.prizes(amount, percentages, [int(s.person_place or 0) for s in played])
    for line, prize in zip(played, won, strict=True):
        line.prize = prize
    if pool is not None and amount > 0:
        legs: list[tuple[Account, int]] = [(pool, -amount)]
        legs += [(ledger.user_account(int(s.user_id)), s.prize) for s in people if s.prize and s.user_id]
        if left:
            legs.append((ledger.house_account(), left))
        ledger.post(
            LedgerTransaction.Kind.PRIZE, f"prizes:tournament:{tournament.pk}", legs, tournament_id=tournament.pk
        )
    registrations = {r.user_id: r for r in Registration.objects.filter(tournament=tournament)}
    for line in people:
        registration = registrations.get(line.user_id)
        if registration is not None:
            registration.place = line.person_place
            registration.score = line.score
            registration.prize = line.prize
    Registration.objects.bulk_update(list(registrations.values()), ["place", "score", "prize"])
    tournament.results = [s.as_json() for s in standings]
    tournament.status = Tournament.Status.FINISHED
    tournament.finished_at = now
    _save(tournament, "results", "status", "finished_at")
    fairplay.flag(tournament)  # (once the par is known; else when the worker brings it)


# -- cancelling and repeating ------------------------------------------------------------------------


class CannotCancel(Exception):
    """Only a tournament that has not started can be cancelled."""


def cancel(tournament_id: int, note: str = "") -> None:
    """Cancel a tournament before it starts: every entry refunded, once."""
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.status == Tournament.Status.CANCELLED:
            return
        if tournament.status != Tournament.Status.SCHEDULED:
            raise CannotCancel(tournament.status)
        cancel_locked(tournament, note)


def cancel_locked(tournament: Tournament, note: str) -> None:
    registrations = list(Registration.objects.filter(tournament=tournament).select_related("tournament"))
    paying = [r for r in registrations if r.paid and not r.refunded]
    if paying:
        ledger.lock_accounts(
            Account.objects.filter(
                Q(kind=Account.Kind.POOL, tournament_id=tournament.pk)
                | Q(kind=Account.Kind.USER, user_id__in=[r.user_id for r in paying])
            )
        )
    for registration in paying:
        refund(registration)
    tournament.status = Tournament.Status.CANCELLED
    tournament.cancel_note = note[:200]
    _save(tournament, "status", "cancel_note")


def repeat(tournament: Tournament) -> Tournament | None:
    """A repeating tournament's next one (``repeat_days`` after this one's start), created once, at this
    one's start: its registration opens at once."""
    if not tournament.repeat_days or tournament.next_id is not None:
        return None
    step = timedelta(days=tournament.repeat_days)
    following = Tournament.objects.create(
        name=tournament.name,
        format=tournament.format,
        rules=tournament.rules,
        size=tournament.size,
        places=tournament.places,
        deals=tournament.deals,
        games=tournament.games,
        entry_fee=tournament.entry_fee,
        prizes=tournament.prizes,
        registration_opens_at=timezone.now(),
        starts_at=tournament.starts_at + step,
        repeat_days=tournament.repeat_days,
        late_minutes=tournament.late_minutes,
        bid_seconds=tournament.bid_seconds,
        card_seconds=tournament.card_seconds,
        flag_points=tournament.flag_points,
        created_by=tournament.created_by,
    )
    tournament.next = following
    Tournament.objects.filter(pk=tournament.pk).update(next=following)
    return following


def _save(tournament: Tournament, *fields: str) -> None:
    tournament.seq += 1
    tournament.save(update_fields=[*fields, "seq"])
    emit(TournamentChanged(tournament.pk, tournament.seq))
