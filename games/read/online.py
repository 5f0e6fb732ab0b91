"""Who is online, read from the sockets the site already counts: a table's (``Watcher``) and the other pages'
(``PageSocket``), each alive as long as its server process beats (``games.live.presence``).  Nothing here is
on a move's path: the rows are written when a socket opens or closes, and read only by the pages that show
who is around (the lobby, «Amigos»).

A person is **at a table** while a socket of theirs shows a table where they are seated that is waiting or
being played, **online** while any other socket of theirs is open, and **offline** otherwise.  Someone blocked
either way (``accounts.social``) is always offline to the other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from accounts import social
from games.models import PageSocket, Seat, Table, Watcher

ONLINE = "online"
AT_TABLE = "table"
OFFLINE = "offline"

_LIVE = (Table.Status.WAITING, Table.Status.PLAYING)


@dataclass(frozen=True)
class Presence:
    """One person as another sees them: ``state`` (``ONLINE``, ``AT_TABLE``, ``OFFLINE``) and, at a table, which
    (``table_id``) and whether the viewer may watch it (``watchable``: a public table, or a tournament's whose
    deals are no secret; never a private one)."""

    state: str = OFFLINE
    table_id: int | None = None
    watchable: bool = False


def _alive() -> Q:
    """Rows of a live process (a dead one's are swept within a beat or two, but are never counted)."""
    cutoff = timezone.now() - timedelta(seconds=float(settings.POCHA_PRESENCE_TTL))
    return Q(process__seen_at__gte=cutoff)


def states(viewer_id: int | None, user_ids: Iterable[int]) -> dict[int, Presence]:
    """How ``viewer_id`` sees each of ``user_ids`` now (three queries, whatever their number)."""
    ids = set(user_ids)
    if viewer_id is not None:
        ids -= social.blocked_ids(viewer_id)
    if not ids:
        return {}
    watching = list(Watcher.objects.filter(_alive(), user_id__in=ids).values_list("user_id", "table_id"))
    online = set(PageSocket.objects.filter(_alive(), user_id__in=ids).values_list("user_id", flat=True))
    online.update(user for user, _table in watching)
    found: dict[int, Presence] = {}
    pairs = set(watching)
    if watching:
        seated = (
            Seat.objects.filter(
                user_id__in={user for user, _table in watching},
                table_id__in={table for _user, table in watching},
                table__status__in=_LIVE,
                left=False,
            )
            .order_by("-table_id")
            .values_list("user_id", "table_id", "table__is_public", "table__tournament_id")
        )
        for user, table, public, tournament in seated:
            if (user, table) in pairs and user not in found:
                found[user] = Presence(AT_TABLE, table, bool(public) and tournament is None)
    for user in online - set(found):
        found[user] = Presence(ONLINE)
    return found


@dataclass(frozen=True)
class Counts:
    """The lobby's line: how many people are online, and how many of them at a table."""

    online: int
    at_tables: int


def counts() -> Counts:
    """Everyone online and at tables now (distinct people; a few queries over the live rows only)."""
    watching = Watcher.objects.filter(_alive()).values_list("user_id", "table_id")
    pairs = set(watching)
    people = {user for user, _table in pairs}
    people.update(PageSocket.objects.filter(_alive()).values_list("user_id", flat=True))
    at_tables = 0
    if pairs:
        seated = Seat.objects.filter(
            user_id__in={user for user, _table in pairs},
            table_id__in={table for _user, table in pairs},
            table__status__in=_LIVE,
            left=False,
        ).values_list("user_id", "table_id")
        at_tables = len({user for user, table in seated if (user, table) in pairs})
    return Counts(online=len(people), at_tables=at_tables)
