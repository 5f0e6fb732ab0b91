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
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext

from accounts import ledger, social
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
        blocked=social.blocked_pairs([r.user_id for r in people]),
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
    blocked: Collection[frozenset[int]] = frozenset(),
) -> list[dict[int, int]]:
    """The first game's tables: for each, seat position -> user id (empty seats are for the bots).  As few
    tables as hold everyone (at least ``least_tables``, at most ``tables_at_most``), the people spread evenly
    over them, and no two people of one address at one table (registration keeps an address's people to at
    most one per table), nor two of a ``blocked`` pair (``accounts.social.blocked_pairs``): ``keep_apart``
    mends the spread, and if it cannot at that many tables, one more table is tried, up to ``tables_at_most``.
    If even that cannot, the arrangement with the fewest such pairs together is kept and logged."""
    groups: dict[Any, list[int]] = defaultdict(list)
    for user_id, address in people:
        groups[address if address else ("alone", user_id)].append(user_id)
    largest = max((len(g) for g in groups.values()), default=0)
    count = min(tables_at_most, max(least_tables, math.ceil(len(people) / size), largest))
    order = list(groups.values())
    rng.shuffle(order)
    order.sort(key=len, reverse=True)  # the biggest address first: its people go to different tables
    apart = _apart(dict(people), blocked)
    best: tuple[int, list[list[int]]] | None = None
    for tables in range(count, max(count, tables_at_most) + 1):
        members: list[list[int]] = [[] for _ in range(tables)]
        cursor = 0
        for group in order:
            for user_id in group:
                members[cursor % tables].append(user_id)
                cursor += 1
        left = keep_apart(members, size, apart)
        if best is None or left < best[0]:
            best = (left, members)
        if not left:
            break
    assert best is not None
    if best[0]:
        _log_together(best[1], apart)
    return [_seat_at_random(m, size, rng) for m in best[1]]


def _apart(addresses: dict[int, str | None], blocked: Collection[frozenset[int]]) -> Callable[[int, int], bool]:
    """Whether two people must not share a table: one address, or a block either way."""
    pairs = set(blocked)

    def apart(a: int, b: int) -> bool:
        mine = addresses.get(a)
        return (bool(mine) and addresses.get(b) == mine) or frozenset((a, b)) in pairs

    return apart


def _together(tables: Sequence[Sequence[int]], apart: Callable[[int, int], bool]) -> list[tuple[int, int]]:
    return [(a, b) for table in tables for i, a in enumerate(table) for b in table[i + 1 :] if apart(a, b)]


def _log_together(tables: Sequence[Sequence[int]], apart: Callable[[int, int], bool]) -> None:
    log.warning(
        "tournament seating: no arrangement at these tables keeps everyone apart; kept together: %s",
        _together(tables, apart),
    )


def keep_apart(tables: list[list[int]], size: int, apart: Callable[[int, int], bool], budget: int = 20_000) -> int:
    """Mend ``tables`` (lists of user ids, in place) so that no table holds two people who must be ``apart``;
    returns how many such pairs are still together (0 when it managed).

    First, a person sharing a table with someone they must be apart from swaps with the nearest one further
    down (or up) who clashes with nobody at either table, or moves to a table with fewer people and room;
    each change leaves fewer pairs together, so this ends.  If some pair is still together, a search over the
    people with someone to keep apart from (the most constrained first, each tried at their own table, then
    the nearest ones) looks for an arrangement with as many people at each table as it was given, at most
    ``budget`` steps; everyone else then fills the places left, their own table first."""
    count = len(tables)
    sizes = [len(table) for table in tables]

    def clashes(table: list[int], user_id: int, without: int | None = None) -> bool:
        return any(apart(user_id, other) for other in table if other != user_id and other != without)

    changed = True
    while changed:
        changed = False
        for t, table in enumerate(tables):
            for i, user_id in enumerate(list(table)):
                if table[i] != user_id or not clashes(table, user_id):
                    continue
                nearest = list(range(t + 1, count)) + list(range(t - 1, -1, -1))
                done = False
                for u in nearest:
                    other_table = tables[u]
                    for j, other in enumerate(other_table):
                        if clashes(other_table, user_id, without=other) or clashes(table, other, without=user_id):
                            continue
                        table[i], other_table[j] = other, user_id
                        done = True
                        break
                    if done:
                        break
                if done:
                    changed = True
                    continue
                for u in nearest:  # no swap: a table with fewer people (and room) takes them, if they clash with none
                    other_table = tables[u]
                    if len(other_table) < min(len(table), size) and not clashes(other_table, user_id):
                        table.remove(user_id)
                        other_table.append(user_id)
                        changed = done = True
                        break
                if done:
                    break  # this table's people moved up: look at it again on the next pass
    left = len(_together(tables, apart))
    if left:
        found = _search(tables, sizes, apart, budget)
        if found is not None:
            tables[:] = found
            return 0
    return left


def _search(
    tables: list[list[int]], sizes: list[int], apart: Callable[[int, int], bool], budget: int
) -> list[list[int]] | None:
    """``keep_apart``'s search: tables of ``sizes`` people (as they were cut), nobody with someone they must
    be apart from, each person as near their table in ``tables`` as may be; None if none is found within
    ``budget`` steps."""
    home = {user_id: t for t, table in enumerate(tables) for user_id in table}
    rank = {user_id: (t, i) for t, table in enumerate(tables) for i, user_id in enumerate(table)}
    everyone = list(home)
    foes = {a: [b for b in everyone if b != a and apart(a, b)] for a in everyone}
    constrained = sorted((a for a in everyone if foes[a]), key=lambda a: (-len(foes[a]), rank[a]))
    room = list(sizes)
    placed: list[list[int]] = [[] for _ in tables]
    where: dict[int, int] = {}
    steps = 0

    def order(t: int) -> list[int]:
        return sorted(range(len(tables)), key=lambda u: (abs(u - t), u < t))

    stack: list[tuple[int, list[int]]] = []  # (index in constrained, tables still to try)
    k = 0
    choices = order(home[constrained[0]]) if constrained else []
    while k < len(constrained):
        steps += 1
        if steps > budget:
            return None
        person = constrained[k]
        while choices:
            u = choices.pop(0)
            if len(placed[u]) < room[u] and not any(apart(person, x) for x in placed[u]):
                placed[u].append(person)
                where[person] = u
                stack.append((k, choices))
                k += 1
                choices = order(home[constrained[k]]) if k < len(constrained) else []
                break
        else:
            if not stack:
                return None
            k, choices = stack.pop()
            back = constrained[k]
            placed[where.pop(back)].remove(back)
    free = [a for a in everyone if not foes[a]]
    for user_id in sorted(free, key=lambda a: rank[a]):  # their own table if it has room, else the nearest
        u = next(u for u in order(home[user_id]) if len(placed[u]) < room[u])
        placed[u].append(user_id)
    return [sorted(table, key=lambda a: rank[a]) for table in placed]


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
    groups = regroup(
        people,
        addresses,
        tournament.size,
        blocked=social.blocked_pairs(people),
        tables_at_most=max(1, tournament.places // tournament.size),
    )
    names = dict(Registration.objects.filter(tournament=tournament).values_list("user_id", "user__username"))
    open_tables(tournament, [_seat_at_random(g, tournament.size, rng) for g in groups], names)
    _save(tournament, "current_game", "first_done_at")


def regroup(
    people: Sequence[int],
    addresses: dict[int, str | None],
    size: int,
    *,
    blocked: Collection[frozenset[int]] = frozenset(),
    tables_at_most: int | None = None,
) -> list[list[int]]:
    """``people`` in standings order cut into tables of ``size`` (the leaders together), then mended so that
    no table has two people of one address nor two of a ``blocked`` pair (``keep_apart``: such a person swaps
    with the nearest one further down, or up, who clashes with nobody at either table).  If that cannot be
    done at as few tables as hold everyone, the people are cut evenly over one more table (up to
    ``tables_at_most``); if even that cannot, the arrangement with the fewest such pairs together is kept and
    logged."""
    least = max(1, math.ceil(len(people) / size))
    most = max(least, tables_at_most or least)
    apart = _apart(addresses, blocked)
    best: tuple[int, list[list[int]]] | None = None
    for count in range(least, most + 1):
        if count == least:
            tables = [list(people[i * size : (i + 1) * size]) for i in range(count)]
        else:  # more tables than needed: as even as may be, still in standings order
            cuts = [round(i * len(people) / count) for i in range(count + 1)]
            tables = [list(people[cuts[i] : cuts[i + 1]]) for i in range(count)]
        left = keep_apart(tables, size, apart)
        if best is None or left < best[0]:
            best = (left, tables)
        if not left:
            break
    assert best is not None
    if best[0]:
        _log_together(best[1], apart)
    return best[1]


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
