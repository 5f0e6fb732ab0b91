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

import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Exists, OuterRef, Q
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString

from accounts.models import Block, Follow
from games.models import PageSocket, Seat, ServerProcess, Table, Watcher, rules_name, rules_of
from games.table.access import deals_secret_rows
from pocha_site.converters import NameConverter
from pocha_site.jinja2 import draw

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


# -- in plain SQL -----------------------------------------------------------------------------------------
#
# The pages that show who is around ask the same few questions at every request; compiled by the ORM afresh
# each time, they cost more than the database's own work (as the move path's do: ``games.table.rows``).  So
# they are written once here, portable between PostgreSQL and SQLite, and run through Django's cursor (its
# query log, which the tests count; on PostgreSQL, statements bound and prepared on the server).

_WATCHER = Watcher._meta.db_table
_PAGES = PageSocket._meta.db_table
_PROCESS = ServerProcess._meta.db_table
_SEAT = Seat._meta.db_table
_TABLE = Table._meta.db_table
_FOLLOW = Follow._meta.db_table
_BLOCK = Block._meta.db_table
_USER = get_user_model()._meta.db_table
_LIVE_SQL = ", ".join(f"'{status}'" for status in _LIVE)


@dataclass(frozen=True)
class Followed:
    """Everyone ``follower_id`` follows, as a subquery (a list of hundreds of ids costs more to send to
    PostgreSQL and plan than the rows do to read)."""

    follower_id: int

    def sql(self) -> tuple[str, list[Any]]:
        return f'SELECT "followee_id" FROM "{_FOLLOW}" WHERE "follower_id" = %s', [self.follower_id]


#: People as ``states`` takes them: their ids, or everyone someone follows (``Followed``).
People = Iterable[int] | Followed


def _among(people: People, viewer_id: int | None, column: str) -> tuple[str, list[Any]] | None:
    """A condition on ``column`` (a person's id): one of ``people``, not blocked either way by ``viewer_id`` (if
    any); None: nobody.  Everyone someone follows is a subquery, whose rows are the only ones the blocks are
    checked against (not every socket's)."""
    viewer = [viewer_id, viewer_id] if viewer_id is not None else []
    if isinstance(people, Followed):
        sql, params = people.sql()
        unblocked = _unblocked_sql('"followee_id"') if viewer_id is not None else ""
        return f"{column} IN ({sql}{unblocked})", [*params, *viewer]
    ids = sorted(set(people))
    if not ids:
        return None
    unblocked = _unblocked_sql(column) if viewer_id is not None else ""
    return f"{column} IN ({', '.join(['%s'] * len(ids))}){unblocked}", [*ids, *viewer]


def _cutoff() -> Any:
    """The earliest beat of a live process, as the database compares it (a dead process's rows are swept
    within a beat or two, but are never counted)."""
    cutoff = timezone.now() - timedelta(seconds=float(settings.POCHA_PRESENCE_TTL))
    return connection.ops.adapt_datetimefield_value(cutoff)


def _unblocked_sql(column: str) -> str:
    """More conditions on ``column`` (a person's id): not blocked either way by the viewer (two parameters: the
    viewer's id twice)."""
    return (
        f' AND {column} NOT IN (SELECT "blocked_id" FROM "{_BLOCK}" WHERE "blocker_id" = %s)'
        f' AND {column} NOT IN (SELECT "blocker_id" FROM "{_BLOCK}" WHERE "blocked_id" = %s)'
    )


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def states(viewer_id: int | None, user_ids: People) -> dict[int, Presence]:
    """How ``viewer_id`` sees each of ``user_ids`` now: those online or at a table (the others, offline, are
    absent).  One query, whatever their number: their table sockets, each with whether its person is seated
    at that table, and their page sockets."""
    watched = _among(user_ids, viewer_id, 'w."user_id"')
    paged = _among(user_ids, viewer_id, 'g."user_id"')
    if watched is None or paged is None:
        return {}
    cutoff = _cutoff()
    sql = (
        f'SELECT w."user_id", w."table_id", t."status", t."is_public", t."tournament_id", '
        f'EXISTS (SELECT 1 FROM "{_SEAT}" s WHERE s."table_id" = w."table_id" AND s."user_id" = w."user_id" '
        f'AND NOT s."left") '
        f'FROM "{_WATCHER}" w JOIN "{_PROCESS}" p ON p."id" = w."process_id" '
        f'JOIN "{_TABLE}" t ON t."id" = w."table_id" '
        f'WHERE p."seen_at" >= %s AND {watched[0]} '
        f"UNION ALL "
        f'SELECT g."user_id", NULL, NULL, NULL, NULL, NULL '
        f'FROM "{_PAGES}" g JOIN "{_PROCESS}" p ON p."id" = g."process_id" '
        f'WHERE p."seen_at" >= %s AND {paged[0]}'
    )
    rows = _rows(sql, [cutoff, *watched[1], cutoff, *paged[1]])
    found: dict[int, Presence] = {}
    online: set[int] = set()
    for user, table, status, public, tournament, seated in rows:
        online.add(user)
        if table is None or not seated or status not in _LIVE:
            continue
        kept = found.get(user)
        if kept is None or (kept.table_id or 0) < table:  # (seated at two live tables: the latest)
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
    """Everyone online and at tables now (distinct people), counted by the database over the live rows in one
    query of a few milliseconds (no ids come to Python): the people with a socket of a live process, and
    those of them whose table socket shows a live table where they are seated (its seats read first, then
    matched to the sockets)."""
    sql = (
        f'WITH live AS MATERIALIZED (SELECT "id" FROM "{_PROCESS}" WHERE "seen_at" >= %s), '
        f"seated AS MATERIALIZED ("
        f'SELECT s."table_id", s."user_id" FROM "{_SEAT}" s JOIN "{_TABLE}" t ON t."id" = s."table_id" '
        f'WHERE t."status" IN ({_LIVE_SQL}) AND NOT s."left" AND s."user_id" IS NOT NULL) '
        f"SELECT (SELECT COUNT(*) FROM ("
        f'SELECT "user_id" FROM "{_PAGES}" WHERE "process_id" IN (SELECT "id" FROM live) '
        f'UNION SELECT "user_id" FROM "{_WATCHER}" WHERE "process_id" IN (SELECT "id" FROM live)) people), '
        f'(SELECT COUNT(DISTINCT w."user_id") FROM "{_WATCHER}" w '
        f'JOIN seated s ON s."table_id" = w."table_id" AND s."user_id" = w."user_id" '
        f'WHERE w."process_id" IN (SELECT "id" FROM live))'
    )
    ((people, at_tables),) = _rows(sql, [_cutoff()])
    return Counts(online=int(people or 0), at_tables=int(at_tables or 0))


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
    they follow, ``more`` not listed) and «games to watch» (``games``).  Drawn by Jinja2
    (``jinja2/games/_who_is_online.html``: ``drawn``, and ``drawn_oob`` for the lobby's socket), in the active
    language, which ``templates/games/_lobby_people.html`` shows."""

    counts: Counts
    people: list[OnlinePerson]
    more: int
    games: list[GameToWatch]

    def draw(self, oob: bool) -> SafeString:
        return draw("games/_who_is_online.html", {"lobby_people": self, "oob": oob})

    @property
    def drawn(self) -> SafeString:
        return self.draw(oob=False)

    @property
    def drawn_oob(self) -> SafeString:
        return self.draw(oob=True)

    @property
    def table_at(self) -> str:
        """A table's address but its number and the closing slash."""
        return _addresses()[1]

    @staticmethod
    def profile(name: str) -> str | None:
        """A person's profile, or None for a name its route cannot hold."""
        if not _PROFILE_NAME.fullmatch(name):
            return None
        return f"{_addresses()[0]}{quote(name, safe=_PATH_SAFE)}/"


#: A name the profile's route can hold, and what ``reverse`` leaves unquoted in a path.
_PROFILE_NAME = re.compile(NameConverter.regex)
_PATH_SAFE = "!$&'()*+,;=/~:@"


@lru_cache(maxsize=1)
def _addresses() -> tuple[str, str]:
    """A profile's and a table's address but the name or number and the closing slash (reversed once)."""
    return reverse("games:player", args=["x"])[: -len("x/")], reverse("games:table", args=[1])[: -len("1/")]


def _online_followed(viewer_id: int) -> tuple[dict[int, Presence], list[tuple[int, str, bool]]]:
    """How ``viewer_id`` sees the people they follow who are online (``states``), and (id, name, friend) of
    each of them whose account is open (closing one makes it inactive: ``accounts.views.close_account``): one
    query more, over those online only."""
    found = states(viewer_id, Followed(viewer_id))
    if not found:
        return found, []
    ids = sorted(found)
    sql = (
        f'SELECT f."followee_id", u."username", '
        f'EXISTS (SELECT 1 FROM "{_FOLLOW}" b WHERE b."follower_id" = f."followee_id" AND b."followee_id" = %s) '
        f'FROM "{_FOLLOW}" f JOIN "{_USER}" u ON u."id" = f."followee_id" '
        f'WHERE f."follower_id" = %s AND u."is_active" AND f."followee_id" IN ({", ".join(["%s"] * len(ids))})'
    )
    rows = _rows(sql, [viewer_id, viewer_id, *ids])
    return found, [(uid, name, bool(mutual)) for uid, name, mutual in rows]


@lru_cache(maxsize=4)
def _watchable_sql(vendor: str) -> tuple[str, tuple[Any, ...]]:
    """The tables being played that anyone may watch, as SQL (their id, rules, size, round and start): public
    ones whose deals are no secret (``access.deals_secret_rows``, the rule's one statement), compiled by the
    ORM once per process (and database ``vendor``), its parameters all constants."""
    query = Table.objects.filter(status=Table.Status.PLAYING, is_public=True).exclude(deals_secret_rows(""))
    sql, params = query.values("id", "rules", "size", "round_number", "started_at").query.sql_with_params()
    return sql, tuple(params)


def games_to_watch(viewer_id: int | None, followed: People = (), limit: int = GAMES_SHOWN) -> list[GameToWatch]:
    """The tables being played that anyone may watch (public ones; a tournament's once its deals are no secret,
    which a table of the game still in play keeps them; never a private or practice table), those where someone
    ``followed`` plays first, then the latest started; none where the viewer sits or where someone blocked
    either way by the viewer does.  Two queries (the tables, their seats), in plain SQL around the rule of
    which tables may be watched (``_watchable_sql``)."""
    watchable, watchable_params = _watchable_sql(connection.vendor)
    params: list[Any] = [*watchable_params]
    # the tables being played where someone followed sits, read once (a hashed subquery, not one search of the
    # people followed per table)
    theirs = _among(followed, None, 's."user_id"')
    if theirs is None:
        followed_sql = "0"
    else:
        followed_sql = (
            f'(CASE WHEN t."id" IN (SELECT s."table_id" FROM "{_SEAT}" s JOIN "{_TABLE}" p ON p."id" = s."table_id" '
            f'WHERE p."status" = %s AND {theirs[0]}) THEN 1 ELSE 0 END)'
        )
        params = [Table.Status.PLAYING.value, *theirs[1], *params]
    kept_out = ""
    if viewer_id is not None:
        # the tables where the viewer or someone blocked either way sits, from those few people's seats
        kept_out = (
            f' WHERE t."id" NOT IN (SELECT s."table_id" FROM "{_SEAT}" s WHERE s."user_id" IN ('
            f'SELECT %s UNION SELECT "blocked_id" FROM "{_BLOCK}" WHERE "blocker_id" = %s '
            f'UNION SELECT "blocker_id" FROM "{_BLOCK}" WHERE "blocked_id" = %s))'
        )
        params += [viewer_id, viewer_id, viewer_id]
    sql = (
        f'SELECT t."id", t."rules", t."size", t."round_number", {followed_sql} AS followed FROM ({watchable}) t '
        f"{kept_out} "
        f'ORDER BY followed DESC, t."started_at" DESC NULLS LAST, t."id" DESC LIMIT %s'
    )
    rows = _rows(sql, [*params, limit])
    if not rows:
        return []
    names: dict[int, list[str]] = {}
    shown = [r[0] for r in rows]
    for table_id, name in _rows(
        f'SELECT "table_id", "name" FROM "{_SEAT}" WHERE "table_id" IN ({", ".join(["%s"] * len(shown))}) '
        f'ORDER BY "table_id", "position"',
        shown,
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
    queries whatever the number of people followed or of tables, none sending a list of them: the presence of
    those followed (``states``), the names of those online, the tables and their seats."""
    found, followed = _online_followed(viewer_id)
    people = sorted(
        (OnlinePerson(uid, name, bool(friend), found[uid]) for uid, name, friend in followed),
        key=lambda p: (not p.friend, p.name.casefold(), p.id),
    )
    counted = lobby_counts()
    return LobbyPeople(
        # The viewer is online (their lobby's socket is opening), though the counts kept may be from before it.
        counts=Counts(online=max(counted.online, 1), at_tables=counted.at_tables),
        people=people[:PEOPLE_SHOWN],
        more=max(0, len(people) - PEOPLE_SHOWN),
        games=games_to_watch(viewer_id, Followed(viewer_id)),
    )
