"""«Amigos» as a person's pages show it: their friends (people who follow each other), the people they follow,
those who follow them, and those they blocked, each with how the person sees them now (``games.read.online``).

Everyone of the first two lists who is online or at a table is drawn, whatever their number; the others
(away, and the followers and the blocked) ``PAGE_SIZE`` at a time: «Ver más» adds the next page of a list
in place through htmx (``rows_html``), or, without JavaScript, links to the page showing one page more of
that list (its parameter in the address: ``amigos``, ``sigues``, ``te-siguen`` or ``bloqueados``, the pages
shown; ``MOST_PAGES`` at most, the last ones).  Each list's heading counts everyone in it.

Read in a handful of queries whatever the lists' length (a person may follow ``social.MOST_FOLLOWED`` people),
none of them sending a list of ids to PostgreSQL (subqueries instead): the people followed with their names
and whether they follow back, their presence (``online.states``), a page of followers with their count, a
page of the blocked with their count.  Drawn by Jinja2 (``jinja2/games/_friends_live.html``, its rows kept
once drawn: see «the drawing» below), once with the page (``page_html``), and again over its socket
(``friends_html``, an out-of-band swap of ``#friends-live``, every list at its first page) when a followed
person comes or goes, or a follow or a block of theirs changes; the page's script (``static/js/friends.js``)
then asks for the lists again with the pages «Ver más» added (``page_html`` through htmx, ``listas``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlencode

from django.contrib.auth import get_user_model
from django.db import connection
from django.http import HttpRequest
from django.template.backends.utils import csrf_input
from django.urls import NoReverseMatch, reverse
from django.utils.safestring import SafeString
from django.utils.translation import get_language, override
from markupsafe import Markup, escape

from accounts.models import Block, Follow, Profile
from games.read import online
from pocha_site.converters import NameConverter
from pocha_site.jinja2 import LANGUAGE, draw

#: The most people of a list drawn at a time, besides those online or at a table (drawn all).
PAGE_SIZE = 30
#: The most pages of a list a drawing shows (the last ones asked for): a few hundred rows.
MOST_PAGES = 20

#: The lists, by the name of their page's parameter in the address (``/amigos/?sigues=2``).
FRIENDS = "amigos"
FOLLOWING = "sigues"
FOLLOWERS = "te-siguen"
BLOCKED = "bloqueados"
LISTS = (FRIENDS, FOLLOWING, FOLLOWERS, BLOCKED)

#: The order of the states in a list: at a table, online, then away.
_STATE_ORDER = {online.AT_TABLE: 0, online.ONLINE: 1, online.OFFLINE: 2}

#: A page's number as an address may hold it (anything else is the first page; past the integers, the site
#: refuses the address: ``pocha_site.bad_bytes``).
_PAGE_NUMBER = re.compile(r"[1-9][0-9]{0,17}")
#: Further than any list goes (a page past a list's last is its last).
_FURTHEST = 1_000_000

#: A name the profile's route can hold (others are drawn without a link).
_PROFILE_NAME = re.compile(NameConverter.regex)
#: What ``reverse`` leaves unquoted in a path (``django.urls.resolvers``).
_PATH_SAFE = "!$&'()*+,;=/~:@"
#: A name written as it is both in HTML and in an address (most are).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.@+-]{1,150}")

TEMPLATE = "games/_friends_live.html"


@dataclass(frozen=True)
class Person:
    """One person in a list of «Amigos»: their name, and how the viewer sees them now."""

    id: int
    name: str
    state: str = online.OFFLINE
    table_id: int | None = None
    watchable: bool = False

    @property
    def online(self) -> bool:
        return self.state != online.OFFLINE


@dataclass(frozen=True)
class Part:
    """One list as drawn: ``people`` (those online first, all of them, then the others up to page ``page`` of
    ``pages``; «Ver más»'s rows: that page alone), ``total`` people in it (``online`` of them online or at a
    table)."""

    key: str
    people: list[Person]
    total: int
    online: int = 0
    page: int = 1
    pages: int = 1
    #: The page's address and the other lists' pages it shows (kept by this list's links).
    base: str = ""
    others: dict[str, int] = field(default_factory=dict)

    @property
    def next_page(self) -> int | None:
        return self.page + 1 if self.page < self.pages else None

    @property
    def earlier_page(self) -> int | None:
        """The page ending just before the first one a drawing of ``MOST_PAGES`` shows (None: it shows the
        first)."""
        return self.page - MOST_PAGES if self.page > MOST_PAGES else None

    def href(self, page: int) -> str:
        """The page with this list at ``page`` (the other lists as they are): «Ver más» without JavaScript."""
        query = {key: number for key, number in self.others.items() if key != self.key and number > 1}
        if page > 1:
            query[self.key] = page
        ordered = {key: query[key] for key in LISTS if key in query}
        return f"{self.base}?{urlencode(ordered)}" if ordered else self.base

    @property
    def more_url(self) -> str:
        """The next page's rows alone (``rows_html``), for «Ver más» through htmx."""
        return f"{self.base}?{urlencode({self.key: self.next_page})}"


@dataclass(frozen=True)
class Lists:
    """What «Amigos» lists: ``friends`` (mutual), ``following`` (one-way, theirs), ``followers`` (one-way, to
    them, the newest first), and ``blocked`` (blocked by them)."""

    friends: Part
    following: Part
    followers: Part
    blocked: Part

    @property
    def online_friends(self) -> int:
        return self.friends.online


def page_number(raw: object) -> int:
    """A list's page as the address gives it: a whole number from 1, else the first (a page past the last is
    the last)."""
    return min(int(raw), _FURTHEST) if isinstance(raw, str) and _PAGE_NUMBER.fullmatch(raw) else 1


def pages_asked(query: Mapping[str, Any]) -> dict[str, int]:
    """Each list's page in an address's query (``request.GET``): 1 when not given or not a page's number."""
    return {key: page_number(query.get(key)) for key in LISTS}


def _by_presence(people: list[Person]) -> list[Person]:
    return sorted(people, key=lambda p: (_STATE_ORDER.get(p.state, 3), p.name.casefold(), p.id))


def _pages(count: int) -> int:
    return max(1, math.ceil(count / PAGE_SIZE))


# The lists' queries, in plain SQL (as ``games.read.online``'s, and for the same reason: compiled by the ORM
# at every request they cost more than the database's work), portable between PostgreSQL and SQLite.
_FOLLOW = Follow._meta.db_table
_BLOCK = Block._meta.db_table
_USER = get_user_model()._meta.db_table

#: Everyone a person follows whose account is open (closing one makes it inactive:
#: ``accounts.views.close_account``), and whether they follow back.
_FOLLOWED_SQL = (
    f'SELECT f."followee_id", u."username", '
    f'EXISTS (SELECT 1 FROM "{_FOLLOW}" b WHERE b."follower_id" = f."followee_id" AND b."followee_id" = %s) '
    f'FROM "{_FOLLOW}" f JOIN "{_USER}" u ON u."id" = f."followee_id" '
    f'WHERE f."follower_id" = %s AND u."is_active"'
)
#: A page of those who follow a person and whom they do not follow back, the newest first, and how many (``NOT
#: IN``: PostgreSQL reads those they follow once, into a hash, whatever plan it keeps for the statement).
_FOLLOWERS_SQL = (
    f'SELECT f."follower_id", u."username", COUNT(*) OVER () '
    f'FROM "{_FOLLOW}" f JOIN "{_USER}" u ON u."id" = f."follower_id" '
    f'WHERE f."followee_id" = %s AND u."is_active" '
    f'AND f."follower_id" NOT IN (SELECT "followee_id" FROM "{_FOLLOW}" WHERE "follower_id" = %s) '
    f'ORDER BY f."created_at" DESC, f."id" DESC LIMIT %s OFFSET %s'
)
#: A page of those a person blocked, by name, and how many.
_BLOCKED_SQL = (
    f'SELECT b."blocked_id", u."username", COUNT(*) OVER () '
    f'FROM "{_BLOCK}" b JOIN "{_USER}" u ON u."id" = b."blocked_id" '
    f'WHERE b."blocker_id" = %s AND u."is_active" '
    f'ORDER BY LOWER(u."username"), b."blocked_id" LIMIT %s OFFSET %s'
)


_PROFILE = Profile._meta.db_table
_INVITES_SQL = f'SELECT "invites_from" FROM "{_PROFILE}" WHERE "user_id" = %s'


def invites_from(user_id: int) -> str:
    """Who may invite ``user_id`` to a table (``Profile.invites_from``; everyone until they choose)."""
    found = _rows(_INVITES_SQL, [user_id])
    return str(found[0][0]) if found and found[0][0] else Profile.Invites.EVERYONE


def _rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _followed(user_id: int) -> tuple[list[Person], list[Person]]:
    """Everyone ``user_id`` follows whose account is open, as ``(friends, one_way)``, each with their presence
    (two queries: them, and ``online.states``, where someone blocked either way is absent: offline)."""
    people = _rows(_FOLLOWED_SQL, [user_id, user_id])
    if not people:
        return [], []
    seen = online.states(user_id, online.Followed(user_id))
    friends: list[Person] = []
    one_way: list[Person] = []
    for uid, name, mutual in people:
        state = seen.get(uid)
        found = Person(uid, name) if state is None else Person(uid, name, state.state, state.table_id, state.watchable)
        (friends if mutual else one_way).append(found)
    return friends, one_way


def _shown(page: int, alone: bool) -> tuple[int, int]:
    """The rows (start, end) of a list's others that page ``page`` shows: that page ``alone`` («Ver más»), or
    every page up to it (``MOST_PAGES`` at most, the last ones)."""
    end = page * PAGE_SIZE
    first = page if alone else max(1, page - MOST_PAGES + 1)
    return (first - 1) * PAGE_SIZE, end


def _by_presence_part(key: str, people: list[Person], page: int, alone: bool, base: str) -> Part:
    """Everyone online in ``people`` (but for a page ``alone``), then the others by name up to page ``page``."""
    ordered = _by_presence(people)
    here = [p for p in ordered if p.online]
    away = ordered[len(here) :]
    pages = _pages(len(away))
    if alone and page > pages:  # (the list grew shorter since its «Ver más» was drawn: nothing more to add)
        return Part(key, [], total=len(people), online=len(here), page=page, pages=pages, base=base)
    page = min(page, pages)
    start, end = _shown(page, alone)
    drawn = ([] if alone else here) + away[start:end]
    return Part(key, drawn, total=len(people), online=len(here), page=page, pages=pages, base=base)


def _paged(key: str, sql: str, params: list[Any], page: int, alone: bool, base: str) -> Part:
    """The people ``sql`` reads (id, name, how many in all), in its order, up to page ``page`` (``alone``: that
    page alone, none past the last): one query (one more for a page past the last, which is the last)."""
    start, end = _shown(page, alone)
    found = _rows(sql, [*params, end - start, start])
    if not found and page > 1 and not alone:
        first = _rows(sql, [*params, 1, 0])
        page = _pages(first[0][2] if first else 0)
        start, end = _shown(page, alone)
        found = _rows(sql, [*params, end - start, start])
    total = int(found[0][2]) if found else 0
    people = [Person(uid, name) for uid, name, _total in found]
    return Part(key, people, total=total, page=page, pages=_pages(total), base=base)


def _followers(user_id: int, page: int, alone: bool, base: str) -> Part:
    """Those who follow ``user_id`` and whom they do not follow back, the newest first."""
    return _paged(FOLLOWERS, _FOLLOWERS_SQL, [user_id, user_id], page, alone, base)


def _blocked(user_id: int, page: int, alone: bool, base: str) -> Part:
    """Those ``user_id`` blocked, by name."""
    return _paged(BLOCKED, _BLOCKED_SQL, [user_id], page, alone, base)


def _with_others(parts: list[Part], pages: Mapping[str, int]) -> None:
    for part in parts:
        part.others.update(pages)


def lists(user_id: int, pages: Mapping[str, int] | None = None) -> Lists:
    """Everyone «Amigos» shows to ``user_id`` with the lists at ``pages`` (each the first by default), friends
    online first (a handful of queries, whatever their number)."""
    asked = {key: 1 for key in LISTS} | dict(pages or {})
    base = reverse("games:friends")
    friends, one_way = _followed(user_id)
    found = Lists(
        friends=_by_presence_part(FRIENDS, friends, asked[FRIENDS], False, base),
        following=_by_presence_part(FOLLOWING, one_way, asked[FOLLOWING], False, base),
        followers=_followers(user_id, asked[FOLLOWERS], False, base),
        blocked=_blocked(user_id, asked[BLOCKED], False, base),
    )
    parts = [found.friends, found.following, found.followers, found.blocked]
    _with_others(parts, {part.key: part.page for part in parts})
    return found


def one_list(user_id: int, key: str, page: int) -> Part:
    """Page ``page`` of one list alone, without those online (what «Ver más» adds to the list drawn)."""
    base = reverse("games:friends")
    if key == FOLLOWERS:
        return _followers(user_id, page, True, base)
    if key == BLOCKED:
        return _blocked(user_id, page, True, base)
    friends, one_way = _followed(user_id)
    return _by_presence_part(key, friends if key == FRIENDS else one_way, page, True, base)


# -- the drawing -----------------------------------------------------------------------------------------
#
# A list may hold hundreds of people online, and the rows of a list look alike: a row is drawn by Jinja2 once
# per look (its list, the person's state, a table that may be watched, a name with a profile's address) and
# language, with marks where the person's name, the name in their profile's address, their table and the
# page's CSRF input go, and kept; each row is that drawing with the marks filled in (as a board's seats are:
# ``games.read.seats``).  A few hundred rows are so drawn in a millisecond or two.

#: Where a kept row's person goes: their name, as the page shows it; the name in their profile's address;
#: their table's number; the page's CSRF input (a name on the page is escaped: it cannot spell these).
NAME = Markup("<pocha-name>")
PROFILE = Markup("<pocha-profile>")
TABLE = Markup("<pocha-table>")
CSRF = Markup("<pocha-csrf>")

ROW_TEMPLATE = "games/_friend_row.html"


@dataclass(frozen=True)
class Links:
    """The addresses a row posts to and links to (``invite``: None without that route; ``player`` and
    ``table``: a profile's and a table's address but the name or number and the closing slash)."""

    follow: str
    unfollow: str
    block: str
    unblock: str
    invite: str | None
    player: str
    table: str

    @classmethod
    def now(cls) -> Links:
        try:
            invite: str | None = reverse("games:invite")
        except NoReverseMatch:
            invite = None
        return cls(
            follow=reverse("games:follow"),
            unfollow=reverse("games:unfollow"),
            block=reverse("games:block"),
            unblock=reverse("games:unblock"),
            invite=invite,
            player=reverse("games:player", args=["x"])[: -len("x/")],
            table=reverse("games:table", args=[1])[: -len("1/")],
        )


@lru_cache(maxsize=256)
def _row_drawn(lang: str | None, kind: str, state: str, watchable: bool, linkable: bool) -> str:
    person = {
        "name": NAME,
        "state": state,
        "table_id": TABLE,
        "watchable": watchable,
        "profile": PROFILE if linkable else None,
    }
    context = {"p": person, "kind": kind, "links": Links.now(), "csrf_input": CSRF, LANGUAGE: lang}
    return str(draw(ROW_TEMPLATE, context))


def _row(person: Person, kind: str, lang: str | None, csrf: str) -> str:
    """One person's row of the list ``kind``, with the page's CSRF input ``csrf`` (escaped HTML)."""
    name = person.name
    plain = _PLAIN_NAME.fullmatch(name) is not None
    linkable = plain or _PROFILE_NAME.fullmatch(name) is not None
    at_table = person.state == online.AT_TABLE
    drawn = _row_drawn(lang, kind, person.state, at_table and person.watchable, linkable)
    drawn = drawn.replace(NAME, name if plain else escape(name)).replace(CSRF, csrf)
    if linkable:
        drawn = drawn.replace(PROFILE, name if plain else escape(quote(name, safe=_PATH_SAFE)))
    if at_table:
        drawn = drawn.replace(TABLE, str(int(person.table_id or 0)))
    return drawn


def _draw(context: dict[str, Any], csrf: str = "") -> SafeString:
    """``jinja2/games/_friends_live.html`` with ``context``, in the active language; ``rows(part)`` draws a
    list's rows."""
    lang = get_language()

    def rows(part: Part) -> Markup:
        return Markup("".join([_row(person, part.key, lang, csrf) for person in part.people]))

    return draw(TEMPLATE, {**context, "rows": rows, LANGUAGE: lang})


def live_context(user_id: int, pages: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The context of ``jinja2/games/_friends_live.html`` (without ``oob``)."""
    return {"lists": lists(user_id, pages)}


def page_html(request: HttpRequest, pages: Mapping[str, int] | None = None) -> SafeString:
    """The lists as the page draws them (``#friends-live``) with the lists at ``pages``, in the active
    language: every row's form with its CSRF input (posted without JavaScript too)."""
    return _draw(live_context(request.user.pk, pages), csrf=str(csrf_input(request)))


def rows_html(user_id: int, key: str, page: int) -> SafeString:
    """The rows of page ``page`` of the list ``key`` and its next «Ver más», in the active language (htmx
    posts carry the page's CSRF token: no input)."""
    return _draw({"rows_of": one_list(user_id, key, page)})


def friends_html(user_id: int, language: str) -> str:
    """The live part of «Amigos» for ``user_id`` (an out-of-band swap of ``#friends-live``, each list at its first
    page), in ``language``.  Drawn without a request: its forms post through htmx, whose requests carry the
    page's CSRF token (``hx-headers`` on the page's body)."""
    with override(language):
        return str(_draw({**live_context(user_id), "oob": True}))
