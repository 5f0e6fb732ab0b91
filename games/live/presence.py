"""Who is at the table: presence derived from the open sockets' rows, which live as long as their process.

Every open table socket is a ``Watcher`` row carrying the id of the ASGI process that holds it.  Each
process beats (``ServerProcess.seen_at``) every ``POCHA_PRESENCE_BEAT`` seconds from a task on its event
loop; a process not heard from for ``POCHA_PRESENCE_TTL`` seconds is dead (killed, frozen), and the
sweeper (every live process's loop, and the Celery beat task in services mode) deletes its rows and its
process row.  So a socket whose consumer never ran its disconnect stops counting within about the TTL
and one sweep.

The other pages of the site (the lobby, «Amigos»…) each hold a socket too (``games.live.consumers.SiteConsumer``),
a ``PageSocket`` row of its process, kept and swept like the tables' rows: a person is online while any row of
theirs of either kind is (``games.read.online``).  When a person's first socket opens or their last one closes
(``open_socket``/``close_socket``, ``open_page``/``close_page``, a dead process swept), and when they come to or
leave a table where they are seated, the people who follow them and have a page open are told
(``PersonNotified(follower, "friends")``), so that their «Amigos» and lobby draw it again.

A seated person is present while they have at least one such row at the table.  ``Seat.sockets`` and
``Seat.disconnected_at`` keep the result for the clock (``games.table.clock``) and the pages; ``refresh``
recomputes them from the rows, locking the seat's row only: opening or closing a socket never waits
for a move (no table row lock).  When a seat's presence flips while it is that seat's turn, the table's
due step moves (a dropped player's grace) by a compare-and-set on ``seq``, and everyone is redrawn.

A move being made at that moment may read the presence from before the flip, and keep the person's
full clock: the sweeper repairs that (``repair_due``), and any other drift between the rows and the
seats (``reconcile``).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connections, transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from games.engine import Phase
from games.live import hotpath, watchers
from games.models import PageSocket, Seat, ServerProcess, Table, Watcher
from games.read import online
from games.table import clock, events
from games.table.errors import ActionError
from games.table.events import DueMoved, PersonNotified, Redraw

log = logging.getLogger(__name__)

#: This process, for as long as it lives (a new id at every start).
PROCESS_ID = uuid.uuid4()
PROCESS_NAME = f"{socket.gethostname()}:{os.getpid()}"[:200]
#: Every how many beats a process compares its own rows with the sockets it really holds.
OWN_ROWS_EVERY = 5
#: In services mode the Celery beat sweeps every beat (``games.live.tasks.sweep_presence``), so each server
#: process sweeps only every this many beats, in case the beat is down: a sweep per process per beat would
#: cost more than the moves themselves under load.
SWEEP_EVERY_WITH_BEAT = 5
#: Tables a sweep repairs or reconciles at most (the rest wait for the next sweep).
SWEEP_LIMIT = 200
#: The most followers told that one person came or went (``tell_followers``), and that the people of a dead
#: process went (a sweep): a page of theirs not told draws it at its next change or load.
FOLLOWERS_TOLD = 200
FOLLOWERS_TOLD_BY_SWEEP = 2000

#: The sockets this process holds: channel name -> (table, user).  Entered before the row is written and
#: left before it is deleted, so the comparison with the rows (``check_own_rows``) never deletes a row
#: being written, and never keeps one being deleted.
_local: dict[str, tuple[int, int]] = {}
#: The other pages' sockets this process holds: channel name -> user (``PageSocket`` rows; the same rule).
_local_pages: dict[str, int] = {}
_local_lock = threading.Lock()
#: A socket's row could not be deleted (the database was down): compare at the next beat.
_dirty = False
_beater: ThreadPoolExecutor | None = None


def too_many_sockets() -> ActionError:
    return ActionError("too_many_sockets", _("Tienes demasiadas pestañas abiertas: cierra alguna."))


def ttl() -> timedelta:
    return timedelta(seconds=float(settings.POCHA_PRESENCE_TTL))


# -- this process ---------------------------------------------------------------------------------


def beat() -> bool:
    """Tell every other process this one is alive.  True when its row was gone (declared dead while
    frozen, or never written): it is written again, with every socket this process still holds."""
    now = timezone.now()
    if ServerProcess.objects.filter(pk=PROCESS_ID).update(seen_at=now):
        return False
    ServerProcess.objects.get_or_create(pk=PROCESS_ID, defaults={"seen_at": now, "name": PROCESS_NAME})
    if local_sockets() or local_pages():
        check_own_rows()
    return True


def forget_local() -> None:
    """The loop that held this process's sockets is gone (tests run one loop each): forget them."""
    with _local_lock:
        _local.clear()
        _local_pages.clear()


def local_sockets() -> dict[str, tuple[int, int]]:
    with _local_lock:
        return dict(_local)


def local_pages() -> dict[str, int]:
    with _local_lock:
        return dict(_local_pages)


def check_own_rows() -> int:
    """Make this process's rows match the sockets it holds: delete the rows of sockets it no longer has
    (a disconnect whose delete failed) and write those it lost (declared dead while frozen).  Returns how
    many rows changed."""
    global _dirty
    _dirty = False
    rows = {
        c: (t, u)
        for c, t, u in Watcher.objects.filter(process_id=PROCESS_ID).values_list("channel_name", "table_id", "user_id")
    }
    held = local_sockets()  # read after the rows: see ``_local``
    stale = {c: rows[c] for c in rows.keys() - held.keys()}
    missing = {c: held[c] for c in held.keys() - rows.keys()}
    if stale:
        Watcher.objects.filter(process_id=PROCESS_ID, channel_name__in=list(stale)).delete()
    if missing:
        tables = set(Table.objects.filter(pk__in={t for t, _u in missing.values()}).values_list("pk", flat=True))
        users = set(
            get_user_model().objects.filter(pk__in={u for _t, u in missing.values()}).values_list("pk", flat=True)
        )
        gone = {c for c, (t, u) in missing.items() if t not in tables or u not in users}
        with _local_lock:  # a socket whose table or person no longer exists has nothing to count
            for channel_name in gone:
                _local.pop(channel_name, None)
        missing = {c: row for c, row in missing.items() if c not in gone}
        Watcher.objects.bulk_create(
            [Watcher(table_id=t, user_id=u, channel_name=c, process_id=PROCESS_ID) for c, (t, u) in missing.items()],
            ignore_conflicts=True,
        )
    touched = set(stale.values()) | set(missing.values())
    if touched:
        log.warning("presence: %s stale and %s lost socket rows of this process put right", len(stale), len(missing))
        _after_rows_changed(touched)
    pages, paged = _check_own_pages()
    people = {u for _t, u in touched} | paged
    if people:  # gone (a close whose delete failed) or back (written again): their followers see it
        tell_followers(people, FOLLOWERS_TOLD_BY_SWEEP)
    return len(stale) + len(missing) + pages


def _check_own_pages() -> tuple[int, set[int]]:
    """``check_own_rows`` for the other pages' sockets: returns how many rows changed, and whose."""
    rows = dict(PageSocket.objects.filter(process_id=PROCESS_ID).values_list("channel_name", "user_id"))
    held = local_pages()  # read after the rows: see ``_local``
    stale = {c: rows[c] for c in rows.keys() - held.keys()}
    missing = {c: held[c] for c in held.keys() - rows.keys()}
    if stale:
        PageSocket.objects.filter(process_id=PROCESS_ID, channel_name__in=list(stale)).delete()
    if missing:
        users = set(get_user_model().objects.filter(pk__in=set(missing.values())).values_list("pk", flat=True))
        gone = {c for c, u in missing.items() if u not in users}
        with _local_lock:  # a socket whose person no longer exists has nothing to count
            for channel_name in gone:
                _local_pages.pop(channel_name, None)
        missing = {c: u for c, u in missing.items() if c not in gone}
        PageSocket.objects.bulk_create(
            [PageSocket(user_id=u, channel_name=c, process_id=PROCESS_ID) for c, u in missing.items()],
            ignore_conflicts=True,
        )
    if stale or missing:
        log.warning(
            "presence: %s stale and %s lost page socket rows of this process put right", len(stale), len(missing)
        )
    return len(stale) + len(missing), set(stale.values()) | set(missing.values())


# -- one socket -------------------------------------------------------------------------------------


def live_sockets(user_id: int) -> int:
    """The sockets one person has open now, of tables and of the other pages, over every live process (one
    query: both counts in one statement)."""
    cutoff = timezone.now() - ttl()
    tables = Watcher.objects.filter(user_id=user_id, process__seen_at__gte=cutoff).values("pk")
    pages = PageSocket.objects.filter(user_id=user_id, process__seen_at__gte=cutoff).values("pk")
    return tables.union(pages, all=True).count()


def tell_followers(user_ids: set[int], limit: int = FOLLOWERS_TOLD) -> int:
    """Tell the followers of ``user_ids`` who have a page open (but anyone blocked either way), that these
    people came or went: each gets one ``PersonNotified(follower, "friends")``.  One query; returns how many."""
    followers = online.online_followers(user_ids, limit)
    for follower in followers:
        events.emit(PersonNotified(follower, "friends"))
    return len(followers)


def _told(user_id: int) -> None:
    """``tell_followers`` for one person, whose failure only costs their followers' pages a redraw."""
    try:
        tell_followers({user_id})
    except Exception:
        log.exception("presence: telling the followers of user %s failed", user_id)


def open_socket(table_id: int, user_id: int, channel_name: str) -> None:
    """A socket of ``user_id`` now shows the table: record it (refused past ``POCHA_MAX_SOCKETS`` open
    sockets, with nothing changed), redraw the table if a spectator arrived, and count the person present
    if they are seated there.  Takes no lock on the table's row."""
    beat()
    before = live_sockets(user_id)
    if before >= settings.POCHA_MAX_SOCKETS:
        raise too_many_sockets()
    with _local_lock:
        _local[channel_name] = (table_id, user_id)
    try:
        try:
            changed = watchers.add(table_id, user_id, channel_name, process_id=PROCESS_ID)
        except IntegrityError:
            # Declared dead in the meantime (the process row and its rows are gone), or the row was just
            # written back by this process's own beat: beat again, and write it unless it is there.
            beat()
            if Watcher.objects.filter(channel_name=channel_name, process_id=PROCESS_ID).exists():
                changed = True  # unknown: one redraw too many rather than one missed
            else:
                changed = watchers.add(table_id, user_id, channel_name, process_id=PROCESS_ID)
    except BaseException:
        with _local_lock:
            _local.pop(channel_name, None)
        raise
    if changed:  # this socket draws its first board after this, counting itself: it skips the redraw
        watchers.redraw(table_id, origin=channel_name)
    if refresh(table_id, user_id, origin=channel_name) or before == 0:  # now at their table, or online at all
        _told(user_id)


def close_socket(channel_name: str) -> None:
    """A socket closed: forget its row, redraw the table if a spectator left, and count its person
    absent if it was their last socket at a table where they are seated."""
    global _dirty
    with _local_lock:
        _local.pop(channel_name, None)  # first: see ``_local``
    try:
        removed = watchers.remove_row(channel_name)
    except Exception:
        _dirty = True  # the row stays until the next beat compares
        raise
    if removed is None:
        return
    table_id, user_id, changed = removed
    if changed:
        watchers.redraw(table_id)
    if refresh(table_id, user_id) or live_sockets(user_id) == 0:  # no longer at their table, or gone
        _told(user_id)


def open_page(user_id: int, channel_name: str) -> None:
    """A socket of ``user_id`` now shows a page other than a table's: record it (refused past
    ``POCHA_MAX_SOCKETS`` open sockets of any kind, with nothing changed), and if it is the person's first
    socket, tell their followers."""
    beat()
    before = live_sockets(user_id)
    if before >= settings.POCHA_MAX_SOCKETS:
        raise too_many_sockets()
    with _local_lock:
        _local_pages[channel_name] = user_id
    try:
        try:
            PageSocket.objects.create(user_id=user_id, channel_name=channel_name, process_id=PROCESS_ID)
        except IntegrityError:
            # Declared dead in the meantime (the process row and its rows are gone), or the row was just
            # written back by this process's own beat: beat again, and write it unless it is there.
            beat()
            if not PageSocket.objects.filter(channel_name=channel_name, process_id=PROCESS_ID).exists():
                PageSocket.objects.create(user_id=user_id, channel_name=channel_name, process_id=PROCESS_ID)
    except BaseException:
        with _local_lock:
            _local_pages.pop(channel_name, None)
        raise
    if before == 0:
        _told(user_id)


def close_page(user_id: int, channel_name: str) -> None:
    """A page's socket closed: forget its row, and if it was the person's last socket, tell their followers."""
    global _dirty
    with _local_lock:
        _local_pages.pop(channel_name, None)  # first: see ``_local``
    try:
        deleted, _by_model = PageSocket.objects.filter(channel_name=channel_name).delete()
    except Exception:
        _dirty = True  # the row stays until the next beat compares
        raise
    if deleted and live_sockets(user_id) == 0:
        _told(user_id)


# -- a seat's presence ------------------------------------------------------------------------------


def refresh(table_id: int, user_id: int, origin: str | None = None) -> bool:
    """Recompute a seat's presence from the socket rows (the seat's row locked, never the table's).
    True when the person went from present to absent or back, or came back from away: then everyone is
    redrawn (but ``origin``, an arriving socket that draws its own board next), and if it is their turn
    the table's due step moves (the grace of a dropped player starts, or ends).

    Coming back is automatic: a person whose seat the bot was playing because the clock ran out on them
    (away, or one timeout on the way there) has it back as soon as a socket of theirs arrives at the table
    — their first after being gone (often the clock ran out on a socket that was already dead, not yet
    noticed), or a new page of theirs (``origin``) while a dead one still counts.  Only a person who left
    the game keeps the bot until they take the seat back themselves.  Someone who stays connected and lets
    the clock run out keeps «Vuelvo»."""
    status = Table.objects.filter(pk=OuterRef("table_id")).values("status")[:1]
    with transaction.atomic():
        seat = (
            Seat.objects.select_for_update()
            .filter(table_id=table_id, user_id=user_id)
            .annotate(table_status=Subquery(status))
            .values_list("pk", "position", "sockets", "table_status", "away", "timeouts", "left")
            .first()
        )
        if seat is None:
            return False
        seat_id, position, stored, table_status, away, timeouts, left = seat
        if table_status in (Table.Status.FINISHED, Table.Status.CANCELLED, None):
            return False
        count = min(Watcher.objects.filter(table_id=table_id, user_id=user_id).count(), 32767)
        if count == stored:
            return False
        fields: dict[str, object] = {"sockets": count}
        flipped = (count > 0) != (stored > 0)
        if flipped:
            fields["disconnected_at"] = None if count else timezone.now()
        arrived = count > stored and (flipped or origin is not None)
        back = arrived and (away or timeouts > 0) and not left
        if back:
            fields.update(away=False, timeouts=0)
        Seat.objects.filter(pk=seat_id).update(**fields)
    if flipped or back:
        seq = align_due(table_id, position)
        if seq is not None:
            events.emit(Redraw(table_id, seq, origin=origin))
    return flipped or back


def align_due(table_id: int, position: int) -> int | None:
    """If it is ``position``'s turn, set the table's due step from the seat's presence as it is now (the
    clock's own rule, ``games.table.clock.due_at``), by a compare-and-set on (seq, turn, due step), and arm it.
    Returns the table's seq (for the redraw), or None if there is no such table."""
    for _attempt in range(5):
        table = Table.objects.filter(pk=table_id).first()
        if table is None:
            return None
        if table.status != Table.Status.PLAYING or table.turn_seat != position or table.phase == Phase.ROUND_OVER.value:
            return table.seq
        flags = Seat.objects.filter(table_id=table_id, position=position).values_list("is_bot", "away").first()
        if flags is None or flags[0] or flags[1]:
            return table.seq  # a bot's or an away person's step does not wait for anyone's connection
        due, deadline = clock.due_at(table, {})
        if due == table.due_at and deadline == table.turn_deadline:
            return table.seq
        if Table.objects.filter(pk=table_id, seq=table.seq, turn_seat=position, due_at=table.due_at).update(
            due_at=due, turn_deadline=deadline
        ):
            if due is not None:
                events.emit(DueMoved(table_id, table.seq, due))
            return table.seq
        # the table moved (a move, or another socket of the same seat): read it again
    log.warning("presence: table %s kept moving; its due step is left to the sweeper", table_id)
    return None


def _after_rows_changed(touched: set[tuple[int, int]]) -> None:
    """Socket rows of these (table, user) were written or deleted behind the consumers' backs: recompute
    each seat, and redraw each table whose presence did not already (its spectator count may differ)."""
    redrawn: set[int] = set()
    for table_id, user_id in sorted(touched):
        try:
            if refresh(table_id, user_id):
                redrawn.add(table_id)
        except Exception:
            log.exception("presence of user %s at table %s failed", user_id, table_id)
    for table_id in sorted({t for t, _u in touched} - redrawn):
        watchers.redraw(table_id)


# -- the sweeper -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Swept:
    processes: int
    rows: int
    seats: int


def sweep_dead(cutoff: datetime | None = None) -> Swept:
    """Delete the processes not heard from since ``cutoff`` (``POCHA_PRESENCE_TTL`` seconds ago by default)
    with all their socket rows (and the rows of no process that old, from before processes were
    recorded), then recompute every seat those rows touched."""
    if cutoff is None:
        cutoff = timezone.now() - ttl()
    with transaction.atomic():
        # Locked: a process coming back to life waits to beat (then finds itself gone and writes its
        # rows again), and a row it inserts meanwhile fails on its foreign key.
        dead = list(
            ServerProcess.objects.select_for_update(skip_locked=True)
            .filter(seen_at__lt=cutoff)
            .exclude(pk=PROCESS_ID)
            .values_list("pk", flat=True)
        )
        rows = Watcher.objects.filter(Q(process_id__in=dead) | Q(process__isnull=True, seen_at__lt=cutoff))
        touched = set(rows.values_list("table_id", "user_id"))
        deleted, _by_model = rows.delete() if touched else (0, {})
        pages = PageSocket.objects.filter(Q(process_id__in=dead) | Q(process__isnull=True, opened_at__lt=cutoff))
        paged = set(pages.values_list("user_id", flat=True))
        deleted_pages, _by_model = pages.delete() if paged else (0, {})
        if dead:
            ServerProcess.objects.filter(pk__in=dead).delete()
    if dead or deleted or deleted_pages:
        log.warning(
            "presence: %s dead server processes, %s table and %s page socket rows deleted",
            len(dead),
            deleted,
            deleted_pages,
        )
    _after_rows_changed(touched)
    people = {u for _t, u in touched} | paged
    if people:  # those of them now gone (not those still on another process): their followers see it
        try:
            gone = people - online.still_online(people)
            if gone:
                tell_followers(gone, FOLLOWERS_TOLD_BY_SWEEP)
        except Exception:
            log.exception("presence: telling the followers of the people of dead processes failed")
    return Swept(len(dead), deleted + deleted_pages, len(touched))


def repair_due(limit: int = SWEEP_LIMIT) -> int:
    """Pull in the due step of every playing table whose seat to move is a person gone for longer than
    the grace while the table still waits for their full clock (a move made as their last socket closed
    read them as present).  Returns how many tables were looked at."""
    grace = timedelta(seconds=float(settings.POCHA_DISCONNECT_GRACE))
    dropped = (
        Seat.objects.filter(
            table_id=OuterRef("pk"),
            position=OuterRef("turn_seat"),
            is_bot=False,
            away=False,
            sockets=0,
            disconnected_at__isnull=False,
        )
        .alias(grace_ends=F("disconnected_at") + Value(grace))
        .filter(grace_ends__lt=OuterRef("due_at"))
    )
    late = list(
        Table.objects.filter(status=Table.Status.PLAYING, due_at__gt=timezone.now())
        .exclude(phase=Phase.ROUND_OVER.value)
        .filter(Exists(dropped))
        .values_list("pk", "turn_seat")[:limit]
    )
    for table_id, position in late:
        try:
            seq = align_due(table_id, position)
            if seq is not None:
                events.emit(Redraw(table_id, seq))
        except Exception:
            log.exception("presence: repairing the due step of table %s failed", table_id)
    return len(late)


def reconcile(limit: int = SWEEP_LIMIT) -> int:
    """Recompute the seats (of waiting and playing tables) whose stored socket count differs from their
    rows: a seat taken from a socket already open, a recompute lost to an error.  Returns how many."""
    live = (
        Watcher.objects.filter(table_id=OuterRef("table_id"), user_id=OuterRef("user_id"))
        .order_by()
        .values("user_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    # The open tables' ids first (the lobby's index), then their seats by their table's index: given the
    # join instead, PostgreSQL counts the sockets of every seat ever taken, finished games' too, before
    # joining, and the sweep grows with the site's history.
    open_tables = list(
        Table.objects.filter(status__in=[Table.Status.WAITING, Table.Status.PLAYING]).values_list("pk", flat=True)
    )
    if not open_tables:
        return 0
    drifted = list(
        Seat.objects.filter(user__isnull=False, table_id__in=open_tables)
        .annotate(live=Coalesce(Subquery(live, output_field=IntegerField()), 0))
        .exclude(sockets=F("live"))
        .values_list("table_id", "user_id")[:limit]
    )
    if drifted:
        log.info("presence: %s seats drifted from their sockets", len(drifted))
        _after_rows_changed(set(drifted))
    return len(drifted)


def sweep() -> Swept:
    """Everything but the beat: the Celery beat task (services mode), and each process's loop."""
    swept = sweep_dead()
    repair_due()
    reconcile()
    return swept


def beat_on_own_thread() -> bool:
    """The process's beat, run on the beat's own thread.  The thread lives as long as the process and keeps its one
    connection, as the socket path's database threads do (``hotpath.kept``): closing it after every beat
    would make PostgreSQL start a new backend process at every beat of every server process.  A broken one
    is closed and the next beat opens a new one; ``close_beat_connection`` closes it for good (the end of a
    test)."""

    def beat() -> bool:
        now = timezone.now()
        if ServerProcess.objects.filter(pk=PROCESS_ID).update(seen_at=now):
            return False
        ServerProcess.objects.get_or_create(pk=PROCESS_ID, defaults={"seen_at": now, "name": PROCESS_NAME})
        return True

    return hotpath.kept(beat)


def close_beat_connection() -> None:
    """Close the beat thread's database connection, if it has one (it opens a new one at its next beat)."""
    with _local_lock:
        beater = _beater
    if beater is not None:
        try:
            beater.submit(connections.close_all).result(timeout=10)
        except TimeoutError:
            log.error("presence: the beat thread did not close its connection")


def after_beat(number: int, found_gone: bool) -> None:
    """What follows a beat on the process's loop (on a database thread: its redraws are pushed from the
    loop afterwards): its own rows compared now and then (at once if it had been taken for dead), then a
    sweep (every ``SWEEP_EVERY_WITH_BEAT`` beats when the Celery beat sweeps too)."""
    if found_gone or _dirty or number % OWN_ROWS_EVERY == OWN_ROWS_EVERY - 1:
        check_own_rows()
    if found_gone or not settings.POCHA_CELERY_CLOCK or number % SWEEP_EVERY_WITH_BEAT == 0:
        sweep()


def beat_thread() -> ThreadPoolExecutor:
    """The beat's own thread: a beat must not wait behind the sockets' database work (a process that
    beats late is taken for dead)."""
    global _beater
    with _local_lock:
        if _beater is None:
            _beater = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pocha-presence")
        return _beater
