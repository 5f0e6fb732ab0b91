"""Who is watching a table: one ``Watcher`` row per open socket showing it (a seated player's or a
spectator's), so the board can say how many people are looking on.

A spectator is a person with at least one such socket and no seat at the table; two tabs of the
same person count once, and a seated player's sockets never count.  ``add`` and ``remove`` tell the
consumer whether the number of spectators changed, so it can push one redraw to the table.

Each row carries the server process holding its socket, and lives as long as that process beats: the
rows of a process killed without closing its sockets are deleted by the presence sweeper
(``games.live.presence``, which also derives the seated people's presence from these rows).
"""

from __future__ import annotations

from uuid import UUID

from django.db.models import Exists, OuterRef

from games.models import Seat, Table, Watcher
from games.table import events
from games.table.events import Redraw


def _seated_and_watching(table_id: int, user_id: int) -> tuple[bool, bool] | None:
    """(seated, has another socket here) for one person at one table, in one read; None if no table."""
    row = (
        Table.objects.filter(pk=table_id)
        .annotate(
            seated=Exists(Seat.objects.filter(table_id=OuterRef("pk"), user_id=user_id)),
            watching=Exists(Watcher.objects.filter(table_id=OuterRef("pk"), user_id=user_id)),
        )
        .values_list("seated", "watching")
        .first()
    )
    return None if row is None else (bool(row[0]), bool(row[1]))


def add(table_id: int, user_id: int, channel_name: str, process_id: UUID | None = None) -> bool:
    """Record that the socket ``channel_name`` of ``user_id`` shows the table (two queries: one read,
    one insert).  True when this made the number of spectators change (a person with no seat there
    opened their first socket), so the table should be redrawn.

    Read before the insert: two sockets of one person opening at once may then both say True (one
    redraw too many), never both False (a redraw missed)."""
    found = _seated_and_watching(table_id, user_id)
    if found is None:
        return False
    seated, watching = found
    Watcher.objects.create(table_id=table_id, user_id=user_id, channel_name=channel_name, process_id=process_id)
    return not seated and not watching


def remove(channel_name: str) -> bool:
    """Forget the socket ``channel_name`` (three queries: find, delete, one read).  True when this made
    the number of spectators change (a person with no seat there closed their last socket)."""
    removed = remove_row(channel_name)
    return removed is not None and removed[2]


def remove_row(channel_name: str) -> tuple[int, int, bool] | None:
    """``remove``, saying also whose socket it was: (table, user, spectators changed), or None if the
    socket had no row.

    Delete before the read: two sockets of one person closing at once may then both say True,
    never both False."""
    row = Watcher.objects.filter(channel_name=channel_name).values_list("table_id", "user_id").first()
    if row is None:
        return None
    table_id, user_id = row
    Watcher.objects.filter(channel_name=channel_name).delete()
    found = _seated_and_watching(table_id, user_id)
    if found is None:
        return table_id, user_id, False
    seated, watching = found
    return table_id, user_id, not seated and not watching


def redraw(table_id: int, origin: str | None = None) -> None:
    """Everyone showing the table draws it again at its current seq; ``origin``: the socket that caused it,
    which draws its own board."""
    events.emit(Redraw(table_id, origin=origin))
