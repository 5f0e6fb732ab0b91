"""Who is online, read from the sockets the site already counts: a table's (``Watcher``) and the other pages'
(``PageSocket``), each alive as long as its server process beats (``games.live.presence``).  Nothing here is
on a move's path: the rows are written when a socket opens or closes, and read only by the pages that show
who is around (the lobby, «Amigos»).

A person is **at a table** while a socket of theirs shows a table where they are seated that is waiting or
being played, **online** while any other socket of theirs is open, and **offline** otherwise.  Someone blocked
either way (``accounts.social``) is always offline to the other.

Also here: whom a person's coming or going concerns (``online_followers``: the followers with a page open, one
query, which ``games.live.presence`` tells), and the lobby's «who is online» and «games to watch»
(``lobby_people``: the counts kept a few seconds in the process, the people one follows who are online with
friends first, the tables being played that anyone may watch).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import BooleanField, Exists, F, OuterRef, Q, Value
from django.utils import timezone

from accounts import social
from accounts.models import Block, Follow
from games.models import PageSocket, Seat, Table, Watcher, rules_name, rules_of
from games.table.access import deals_secret_rows

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


# -- the lobby's counts, kept a moment in the process --------------------------------------------------

#: How long the lobby's counts are kept in a process before they are counted again (a busy lobby counts once
#: in that time, not at every request).
COUNTS_SECONDS = 5.0

_counts_lock = threading.Lock()
_counts: tuple[float, Counts] | None = None


def lobby_counts() -> Counts:
    """``counts()`` as the lobby shows it: counted at most once every ``COUNTS_SECONDS`` in this process."""
    global _counts
    now = time.monotonic()
    with _counts_lock:
        kept = _counts
    if kept is not None and now - kept[0] < COUNTS_SECONDS:
        return kept[1]
    counted = counts()
    with _counts_lock:
        _counts = (now, counted)
    return counted


def forget_counts() -> None:
    """Count again at the next ``lobby_counts`` (tests)."""
    global _counts
    with _counts_lock:
        _counts = None


# -- whom a change of presence concerns ----------------------------------------------------------------


def _has_live_socket(user_field: str) -> Q:
    """A condition on rows whose ``user_field`` (a person's id) has a socket of any kind open now."""
    cutoff = timezone.now() - timedelta(seconds=float(settings.POCHA_PRESENCE_TTL))
    return Q(Exists(PageSocket.objects.filter(user_id=OuterRef(user_field), process__seen_at__gte=cutoff))) | Q(
        Exists(Watcher.objects.filter(user_id=OuterRef(user_field), process__seen_at__gte=cutoff))
    )


def still_online(user_ids: Iterable[int]) -> set[int]:
    """Those of ``user_ids`` with a socket of any kind open now (one query)."""
    ids = set(user_ids)
    if not ids:
        return set()
    cutoff = timezone.now() - timedelta(seconds=float(settings.POCHA_PRESENCE_TTL))
    pages = PageSocket.objects.filter(user_id__in=ids, process__seen_at__gte=cutoff).values("user_id")
    tables = Watcher.objects.filter(user_id__in=ids, process__seen_at__gte=cutoff).values("user_id")
    return {row["user_id"] for row in pages.union(tables)}


def online_followers(user_ids: Iterable[int], limit: int) -> list[int]:
    """The followers of any of ``user_ids`` who have a page of the site open now, but those blocked either way by
    the person they follow: whose «Amigos» and lobby a change of these people's presence redraws.  At most
    ``limit`` of them, in one query (the follows' index by the person followed, then each follower's sockets)."""
    ids = set(user_ids)
    if not ids or limit <= 0:
        return []
    blocked = Block.objects.filter(
        Q(blocker_id=OuterRef("follower_id"), blocked_id=OuterRef("followee_id"))
        | Q(blocker_id=OuterRef("followee_id"), blocked_id=OuterRef("follower_id"))
    )
    rows = (
        Follow.objects.filter(followee_id__in=ids)
        .filter(_has_live_socket("follower_id"))
        .exclude(Exists(blocked))
        .order_by()
        .values_list("follower_id", flat=True)
        .distinct()[:limit]
    )
    return list(rows)


# -- the lobby's «who is online» and «games to watch» --------------------------------------------------

#: The most people the lobby lists as online (friends first), and the most games it offers to watch.
PEOPLE_SHOWN = 30
GAMES_SHOWN = 20


@dataclass(frozen=True)
class OnlinePerson:
    """Someone the viewer follows who is online, as the lobby lists them."""

    id: int
    name: str
    friend: bool
    presence: Presence

    @property
    def at_table(self) -> bool:
        return self.presence.state == AT_TABLE


@dataclass(frozen=True)
class GameToWatch:
    """A table being played that anyone may watch: its rules' name (in the active language), the round it is at
    (``round_number`` of ``rounds``; a tie-break round is past ``rounds``), its players, and whether someone the
    viewer follows plays it."""

    table_id: int
    rules_name: str
    round_number: int
    rounds: int
    names: list[str]
    followed: bool

    @property
    def tie_break(self) -> bool:
        return self.round_number > self.rounds


@dataclass(frozen=True)
class LobbyPeople:
    """The lobby's «who is online» (``counts``; ``people``: the viewer's friends online first, then the others
    they follow, ``more`` not listed) and «games to watch» (``games``)."""

    counts: Counts
    people: list[OnlinePerson]
    more: int
    games: list[GameToWatch]


def _followed(viewer_id: int) -> list[tuple[int, str, bool]]:
    """(id, name, friend) of everyone ``viewer_id`` follows whose account is open (one query)."""
    return list(
        Follow.objects.filter(follower_id=viewer_id, followee__is_active=True)
        .exclude(followee__profile__closed_at__isnull=False)
        .annotate(mutual=Exists(Follow.objects.filter(follower_id=OuterRef("followee_id"), followee_id=viewer_id)))
        .values_list("followee_id", "followee__username", "mutual")
    )


def games_to_watch(viewer_id: int | None, followed: Iterable[int] = (), limit: int = GAMES_SHOWN) -> list[GameToWatch]:
    """The tables being played that anyone may watch (public ones; a tournament's once its deals are no secret,
    which a table of the game still in play keeps them; never a private or practice table), those where someone
    ``followed`` plays first, then the latest started; none where the viewer sits or where someone blocked
    either way by the viewer does.  Two queries (the tables, their seats)."""
    ids = sorted(set(followed))
    tables = Table.objects.filter(status=Table.Status.PLAYING, is_public=True).exclude(deals_secret_rows(""))
    if viewer_id is not None:
        blocked = Block.objects.filter(blocker_id=viewer_id).values("blocked_id")
        blocking = Block.objects.filter(blocked_id=viewer_id).values("blocker_id")
        tables = tables.exclude(
            Exists(
                Seat.objects.filter(table_id=OuterRef("pk")).filter(
                    Q(user_id=viewer_id) | Q(user_id__in=blocked) | Q(user_id__in=blocking)
                )
            )
        )
    if ids:
        tables = tables.annotate(followed=Exists(Seat.objects.filter(table_id=OuterRef("pk"), user_id__in=ids)))
    else:
        tables = tables.annotate(followed=Value(False, output_field=BooleanField()))
    rows = list(
        tables.order_by("-followed", F("started_at").desc(nulls_last=True), "-pk").values_list(
            "pk", "rules", "size", "round_number", "followed"
        )[:limit]
    )
    if not rows:
        return []
    names: dict[int, list[str]] = {}
    for table_id, name in (
        Seat.objects.filter(table_id__in=[r[0] for r in rows])
        .order_by("table_id", "position")
        .values_list("table_id", "name")
    ):
        names.setdefault(table_id, []).append(name)
    games = []
    for table_id, rules_key, size, round_number, followed_here in rows:
        try:
            rules = rules_of(rules_key)
            rounds = len(rules.schedule(size))
        except ValueError:  # rules of no preset this version knows, or a size they are not played by
            continue
        games.append(
            GameToWatch(
                table_id=table_id,
                rules_name=rules_name(rules),
                round_number=round_number,
                rounds=rounds,
                names=names.get(table_id, []),
                followed=bool(followed_here),
            )
        )
    return games


def lobby_people(viewer_id: int) -> LobbyPeople:
    """What the lobby shows ``viewer_id`` of who is around: the counts (``lobby_counts``), the people they follow
    who are online (friends first; blocked either way never), and the games to watch.  A bounded number of
    queries whatever the number of people followed or of tables: the follows, the presence (``states``), the
    tables and their seats."""
    followed = _followed(viewer_id)
    found = states(viewer_id, [uid for uid, _name, _friend in followed]) if followed else {}
    people = sorted(
        (
            OnlinePerson(uid, name, bool(friend), found[uid])
            for uid, name, friend in followed
            if uid in found and found[uid].state != OFFLINE
        ),
        key=lambda p: (not p.friend, p.name.casefold(), p.id),
    )
    counted = lobby_counts()
    return LobbyPeople(
        # The viewer is online (their lobby's socket is opening), though the counts kept may be from before it.
        counts=Counts(online=max(counted.online, 1), at_tables=counted.at_tables),
        people=people[:PEOPLE_SHOWN],
        more=max(0, len(people) - PEOPLE_SHOWN),
        games=games_to_watch(viewer_id, [uid for uid, _name, _friend in followed]),
    )
