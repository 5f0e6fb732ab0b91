"""A block through the real server (issue 44): A blocks C with «Bloquear» (the form's post, as the page sends
it), and from then on C's reach to A is zero wherever C tries, each through the site as a browser would: the
forms (Django's test client) and the sockets of ``pocha_site.asgi.application`` (tables' and other pages').

* C cannot invite A to C's waiting private table (from its board or from «Amigos»): a clear refusal, no
  invitation, and A's open page is told nothing; nor can A invite C.
* C cannot sit at A's private table, by its code or by its link's «Sentarme»: refused, no seat, no chip moved
  (while B sits by the same code).
* «Jugar ya» over twenty tries never seats C at A's waiting quick table, whether it is the only one waiting, one
  of two, or half full (while B, pressing the same, lands at A's table); C's every stake comes back.
* C sees A offline, though A has a page and a table open (nor may C watch her table by its address): not in ``games.read.online.states`` (B sees A at her
  table), not on C's lobby (neither among the people online, which C cannot even follow A to get, nor among the
  open tables nor the games to watch) nor on «Amigos» or A's profile; the lobby's counts, which name nobody,
  count A all the same.
* Once A unblocks C, C may follow A again and sees her at her table, live on C's open lobby.
* Talk: blocked while both sit at one table, their phrases never reach each other's socket, while a third
  person's reach both; unblocked, they do again.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from accounts import ledger
from accounts.models import Account, Block, Follow
from games.models import Invitation, Seat, Table
from games.read import online
from games.table import actions
from games.table.events import PersonNotified, emit

from .helpers import Tab, person, settle
from .talk_helpers import talk_limits, talk_of  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]

FOLLOW = "/amigos/seguir/"
BLOCK = "/amigos/bloquear/"
UNBLOCK = "/amigos/desbloquear/"
INVITE = "/invitaciones/invitar/"
HTMX = {"HX-Request": "true"}
QUICK = {"size": "4", "stake": "100", "rules": "clasica"}
TRIES = 20

SIT_REFUSED = "No puedes sentarte en esta mesa."
INVITE_REFUSED = "No puedes invitar a esa persona."
FOLLOW_REFUSED = "No puedes seguir a esa persona."
LOBBY_PEOPLE = '<div id="lobby-people" class="lobby-people" hx-swap-oob="true">'
TABLE_PATH = re.compile(r"^/mesa/(\d+)/$")


async def db(fn: Any, *args: Any, **kwargs: Any) -> Any:
    return await database_sync_to_async(fn)(*args, **kwargs)


class Browser:
    """One person's browser for the site's pages: Django's test client, signed in, run off the event loop."""

    def __init__(self, user: Any) -> None:
        self.user = user
        self.client = Client()

    async def sign_in(self) -> Browser:
        await db(self.client.force_login, self.user)
        return self

    async def post(self, url: str, form: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        return await db(self.client.post, url, form or {}, **kwargs)

    async def get(self, url: str) -> Any:
        return await db(self.client.get, url)

    async def page(self, url: str) -> str:
        response = await self.get(url)
        assert response.status_code == 200, (url, response.status_code)
        return str(response.content.decode())


async def browsers(*users: Any) -> list[Browser]:
    return [await Browser(user).sign_in() for user in users]


def said(response: Any) -> list[str]:
    """The messages this very post left for the page it goes back to."""
    return [str(m) for m in response.wsgi_request._messages._queued_messages]


def flash_text(response: Any) -> str:
    match = re.search(r'<div id="flash"[^>]*>(.*?)</div>', response.content.decode(), re.S)
    assert match, response.content
    return html.unescape(match.group(1)).strip()


def table_of(response: Any) -> int:
    """The table a post sent its person to (``/mesa/<id>/``)."""
    assert response.status_code == 302, (response.status_code, said(response))
    match = TABLE_PATH.match(response["Location"])
    assert match, (response["Location"], said(response))
    return int(match.group(1))


def world() -> dict[str, Any]:
    """Everything a refusal must leave as it was: relations, invitations, tables, seats, the books."""
    return {
        "follows": sorted(Follow.objects.values_list("follower_id", "followee_id")),
        "blocks": sorted(Block.objects.values_list("blocker_id", "blocked_id")),
        "invitations": sorted(Invitation.objects.values_list("pk", "status")),
        "tables": sorted(Table.objects.values_list("pk", "status", "seq")),
        "seats": sorted(Seat.objects.values_list("table_id", "position", "user_id")),
        "balances": sorted(Account.objects.values_list("pk", "balance")),
    }


def seated(table_id: int) -> set[int]:
    return set(Seat.objects.filter(table_id=table_id, user__isnull=False).values_list("user_id", flat=True))


def status(table_id: int) -> str:
    return str(Table.objects.values_list("status", flat=True).get(pk=table_id))


def code_of(table_id: int) -> str:
    return str(Table.objects.values_list("code", flat=True).get(pk=table_id))


def section(page: str, ident: str) -> str:
    """The part of a page in the element with ``id="ident"`` up to its section's end."""
    if f'id="{ident}"' not in page:
        return ""
    return page.split(f'id="{ident}"', 1)[1].split("</section>", 1)[0]


def counts(page: str) -> tuple[int, int]:
    """The lobby's «N personas en línea · M en mesas»."""
    match = re.search(r'data-online="(\d+)" data-at-tables="(\d+)"', page)
    assert match, page[:2000]
    return int(match.group(1)), int(match.group(2))


def shows(frame: str, name: str) -> str | None:
    """How the lobby's «who is online» in ``frame`` shows ``name`` (its state), or None if not at all."""
    match = re.search(rf'data-person="{re.escape(name)}" data-state="([a-z]+)"', frame)
    return match.group(1) if match else None


def lobby_frames(tab: Tab, since: int = 0) -> list[str]:
    return [f for f in tab.frames[since:] if LOBBY_PEOPLE in f]


async def on_page(user: Any, page: str) -> Tab:
    """A page of the site open in ``user``'s browser, once its socket has drawn what the page shows."""
    tab = Tab(user, 0)
    assert await tab.open(path=f"/ws/sitio/?p={page}")
    await tab.wait_for(lambda: any('id="invitation-banner"' in f for f in tab.frames))
    return tab


async def at_table(user: Any, table_id: int) -> Tab:
    """The table's page open in ``user``'s browser, once its first board came."""
    tab = Tab(user, table_id)
    assert await tab.open()
    await tab.wait_for(lambda: bool(tab.board))
    return tab


async def press(tab: Tab, verb: str) -> None:
    """Press the button of the tab's board that sends ``verb`` («Levantarse», «Cancelar la mesa», «Empezar»),
    and wait for the board the change draws."""
    await tab.wait_for(lambda: any(o.get("action") == verb for o in tab.options()))
    option = next(o for o in tab.options() if o.get("action") == verb)
    seq = tab.seq
    await tab.send(option)
    await tab.wait_for(lambda: tab.seq > seq)


async def stand_up(user: Any, table_id: int, verb: str = "leave") -> None:
    """``user`` opens the table's page, presses «Levantarse» (or another of its buttons) and closes it."""
    tab = await at_table(user, table_id)
    try:
        await press(tab, verb)
    finally:
        await tab.close()


async def told(tab: Tab, user: Any) -> None:
    """Until ``tab`` has handled every notice sent to ``user`` so far: one more is sent (their invitations), which a
    socket handles after those before it, and whose frame (the banner drawn again) says it has."""
    mark = len(tab.frames)
    await db(emit, PersonNotified(user.pk, "invitations"))
    await tab.wait_for(lambda: any('id="invitation-banner"' in f for f in tab.frames[mark:]))


async def close_all(*tabs: Tab) -> None:
    for tab in tabs:
        await tab.close()


# -- the story ---------------------------------------------------------------------------------------------------


async def test_a_person_blocked_through_the_site_never_reaches_the_blocker(settings: Any) -> None:
    settings.POCHA_QUICK_WAIT = 3600  # A's quick table waits for people all the test long (no bots fill it)
    ana, beto, cruz, dani = [await db(person, name) for name in ("ana", "beto", "cruz", "dani")]
    a, b, c, d = await browsers(ana, beto, cruz, dani)
    welcome = ledger.WELCOME_CHIPS
    a_page = await on_page(ana, "lobby")
    c_lobby = await on_page(cruz, "lobby")
    tabs = [a_page, c_lobby]
    try:
        # Before the block: C follows A, and C's open lobby shows her online at once.
        mark = len(c_lobby.frames)
        assert said(await c.post(FOLLOW, {"name": "ana"})) == ["Ahora sigues a ana."]
        await c_lobby.wait_for(lambda: any(shows(f, "ana") == "online" for f in lobby_frames(c_lobby, mark)))
        assert (await db(online.states, cruz.pk, [ana.pk]))[ana.pk].state == online.ONLINE

        # A blocks C from C's profile, as its «Bloquear» posts.
        profile = await a.page("/jugador/cruz/")
        assert 'action="/amigos/bloquear/"' in profile and ">Bloquear</button>" in profile
        mark = len(c_lobby.frames)
        response = await a.post(BLOCK, {"name": "cruz", "next": "/jugador/cruz/"})
        assert (response.status_code, response["Location"]) == (302, "/jugador/cruz/")
        assert said(response) == ["Has bloqueado a cruz."]
        assert await db(lambda: list(Block.objects.values_list("blocker_id", "blocked_id"))) == [(ana.pk, cruz.pk)]
        assert not await db(Follow.objects.exists)  # C's follow of A ended with the block
        # C's open lobby is drawn again at once, without her
        await c_lobby.wait_for(lambda: bool(lobby_frames(c_lobby, mark)))
        assert [shows(f, "ana") for f in lobby_frames(c_lobby, mark)] == [None] * len(lobby_frames(c_lobby, mark))

        # -- C cannot invite A, from the board of C's own waiting private table or from «Amigos» --------------
        c_private = table_of(await c.post("/mesas/privada/", {"size": "4", "stake": "100"}))
        board = await c.page(f"/mesa/{c_private}/")
        assert 'id="invite-form"' in board  # the host's «Invitar»
        before = await db(world)
        a_mark = len(a_page.frames)
        assert said(await c.post(INVITE, {"table": str(c_private), "name": "ana"})) == [INVITE_REFUSED]
        assert flash_text(await c.post(INVITE, {"table": str(c_private), "name": "ana"}, headers=HTMX)) == (
            INVITE_REFUSED
        )
        assert said(await c.post(INVITE, {"name": "ana"})) == [INVITE_REFUSED]  # «Amigos»' «Invitar»
        assert await db(world) == before
        assert not await db(Invitation.objects.exists)
        await told(a_page, ana)  # anything A's page was sent has come by now: no invitation in it
        assert not [f for f in a_page.frames[a_mark:] if "data-invitation" in f or "te invita" in f]
        await stand_up(cruz, c_private, "cancel")  # C calls the table off (its board's «Cancelar la mesa»)
        assert await db(status, c_private) == Table.Status.CANCELLED

        # -- C cannot sit at A's private table, by its code or by its link -----------------------------------
        a_private = table_of(await a.post("/mesas/privada/", {"size": "4", "stake": "100"}))
        code = await db(code_of, a_private)
        # nor may A invite C (a block keeps both apart)
        assert said(await a.post(INVITE, {"table": str(a_private), "name": "cruz"})) == [INVITE_REFUSED]
        before = await db(world)
        response = await c.post("/mesas/codigo/", {"code": code.lower()})
        assert (response["Location"], said(response)) == ("/", [SIT_REFUSED])
        link = await c.page(f"/mesa/privada/{code}/")  # the link's page, as for anyone with it
        assert f'action="/mesa/{a_private}/sentarse/"' in link
        response = await c.post(f"/mesa/{a_private}/sentarse/", {"code": code})
        assert (response["Location"], said(response)) == ("/", [SIT_REFUSED])
        assert await db(world) == before
        assert await db(ledger.balance, cruz.pk) == welcome
        # B, with the same code, sits
        assert table_of(await b.post("/mesas/codigo/", {"code": code})) == a_private
        assert await db(seated, a_private) == {ana.pk, beto.pk}
        await stand_up(ana, a_private, "cancel")
        assert await db(ledger.balance, beto.pk) == welcome

        # -- «Jugar ya»: C is never seated at A's waiting quick table ----------------------------------------
        a_quick = table_of(await a.post("/jugar/", QUICK))
        a_table = await at_table(ana, a_quick)
        tabs.append(a_table)
        # B, pressing the same, lands at A's table: it is the table «Jugar ya» offers anyone else
        assert table_of(await b.post("/jugar/", QUICK)) == a_quick
        await stand_up(beto, a_quick)
        landed: list[int] = []
        dani_quick: int | None = None
        for attempt in range(TRIES):
            if attempt == 5:  # another table waits too, newer than A's (which comes first to anyone else)
                dani_quick = (await db(actions.do_create_table, dani, 4, quick=True, stake=100)).pk
            if attempt == 10:  # that one gone, and A's table half full: B back at it
                assert dani_quick is not None
                await stand_up(dani, dani_quick)
                assert table_of(await b.post("/jugar/", QUICK)) == a_quick
            mine = table_of(await c.post("/jugar/", QUICK))
            landed.append(mine)
            assert mine != a_quick, f"try {attempt}: C was seated at A's table"
            assert cruz.pk in await db(seated, mine) and ana.pk not in await db(seated, mine)
            assert cruz.pk not in await db(seated, a_quick)
            if 5 <= attempt < 10:
                assert mine == dani_quick, f"try {attempt}: the other waiting table"
            await stand_up(cruz, mine)  # «Levantarse»: the next press is a new one
            assert await db(ledger.balance, cruz.pk) == welcome
        assert len(landed) == TRIES and a_quick not in landed
        assert await db(status, a_quick) == Table.Status.WAITING  # (it waited for people all along)
        assert await db(seated, a_quick) == {ana.pk, beto.pk}

        # -- C sees A offline: she has a page and a table open -----------------------------------------------
        assert await db(online.states, cruz.pk, [ana.pk]) == {}
        assert await db(online.states, beto.pk, [ana.pk]) == {
            ana.pk: online.Presence(online.AT_TABLE, a_quick, watchable=True)
        }
        before = await db(world)
        assert said(await c.post(FOLLOW, {"name": "ana"})) == [FOLLOW_REFUSED]
        assert await db(world) == before
        await db(online.forget_counts)
        lobby = await c.page("/")
        assert 'data-person="ana"' not in lobby and "/jugador/ana/" not in lobby
        assert f"/mesa/{a_quick}/" not in lobby, "A's waiting table is not offered to C"
        assert f"/mesa/{a_quick}/sentarse/" not in await c.page("/mesas/abiertas/")
        assert f"/mesa/{a_quick}/sentarse/" in await d.page("/mesas/abiertas/")  # (anyone else is offered it)
        # the counts name nobody: they count A (her page and her table) and C (his lobby)
        assert counts(lobby) == (2, 1)
        amigos = await c.page("/amigos/")
        assert 'data-person="ana"' not in amigos
        profile = await c.page("/jugador/ana/")
        assert ">Seguir</button>" not in profile and ">Bloquear</button>" in profile
        assert "presence" not in profile and f"/mesa/{a_quick}/" not in profile
        # A starts her table with bots: a game anyone else may watch, never offered to C
        await press(a_table, "start")
        assert await db(status, a_quick) == Table.Status.PLAYING
        assert f'data-table="{a_quick}"' in section(await d.page("/"), "games-to-watch")
        lobby = await c.page("/")
        assert f'data-table="{a_quick}"' not in lobby and f"/mesa/{a_quick}/" not in lobby
        assert await db(online.states, cruz.pk, [ana.pk]) == {}
        # nor may C watch her game by typing its address: its page and its socket are, to C, a table that does
        # not exist (watching would show her there), while D watches it
        assert (await c.get(f"/mesa/{a_quick}/")).status_code == 404
        assert (await d.get(f"/mesa/{a_quick}/")).status_code == 200
        spy = Tab(cruz, a_quick)
        tabs.append(spy)
        await spy.open()
        await spy.wait_for(lambda: spy.closed is not None)
        assert spy.closed == 4404 and not any("ana" in frame for frame in spy.frames if "seat" in frame)
        assert await db(online.states, cruz.pk, [ana.pk]) == {}

        # -- A unblocks C: C may follow her again, and sees her at her table, live ----------------------------
        response = await a.post(UNBLOCK, {"name": "cruz"})
        assert said(response) == ["Has desbloqueado a cruz."]
        mark = len(c_lobby.frames)
        assert said(await c.post(FOLLOW, {"name": "ana"})) == ["Ahora sigues a ana."]
        await c_lobby.wait_for(lambda: any(shows(f, "ana") == "table" for f in lobby_frames(c_lobby, mark)))
        frame = next(f for f in lobby_frames(c_lobby, mark) if shows(f, "ana") == "table")
        assert f'data-table="{a_quick}"' in frame  # and her game among those to watch
        assert await db(online.states, cruz.pk, [ana.pk]) == {
            ana.pk: online.Presence(online.AT_TABLE, a_quick, watchable=True)
        }
    finally:
        await close_all(*tabs)


async def test_blocked_at_one_table_their_talk_never_reaches_each_other(talk_limits: Any) -> None:
    talk_limits.POCHA_TALK_LIMIT = 100
    ana, beto, cruz = [await db(person, name) for name in ("ana", "beto", "cruz")]
    a, b, c = await browsers(ana, beto, cruz)
    table_id = table_of(await a.post("/mesas/nueva/", {"size": "3"}))
    for guest in (b, c):
        assert table_of(await guest.post(f"/mesa/{table_id}/sentarse/")) == table_id
    assert await db(status, table_id) == Table.Status.PLAYING  # full: it started
    tabs = [Tab(user, table_id) for user in (ana, beto, cruz)]
    at_a, at_b, at_c = tabs
    try:
        for tab in tabs:
            assert await tab.open()
        await settle(tabs, table_id)

        async def says(speaker: Tab, phrase: str, *heard_by: Tab) -> dict[Tab, int]:
            """``speaker`` says ``phrase``; returns where each tab's frames were, once every one of ``heard_by``
            has it."""
            marks = {tab: len(tab.frames) for tab in tabs}
            await speaker.send({"action": "say", "value": phrase})
            for tab in heard_by:
                await tab.wait_for(lambda tab=tab: phrase in [s.phrase for s in talk_of(tab, marks[tab])])
            return marks

        def heard(tab: Tab, since: dict[Tab, int]) -> list[str]:
            return [s.phrase for s in talk_of(tab, since[tab])]

        # Before the block they hear each other, and C sees A at her table.
        await says(at_c, "suerte", at_a)
        await says(at_a, "gracias", at_c)
        assert (await db(online.states, cruz.pk, [ana.pk]))[ana.pk].state == online.AT_TABLE

        # A blocks C from C's seat plate (its menu's «Bloquear a cruz», an htmx post).
        response = await a.post(BLOCK, {"name": "cruz"}, headers=HTMX)
        assert flash_text(response) == "Has bloqueado a cruz."
        for tab, user in ((at_a, ana), (at_c, cruz)):
            await told(tab, user)

        # C speaks, then B: A's socket has B's phrase, drawn after C's would have been (one table's talk comes
        # in order), and never C's.
        marks = await says(at_c, "gracias", at_b, at_c)
        await says(at_b, "bien", at_a, at_b, at_c)
        assert heard(at_a, marks) == ["bien"]
        assert heard(at_b, marks) == heard(at_c, marks) == ["gracias", "bien"]
        # and the other way: A's phrase never reaches C
        marks = await says(at_a, "uy", at_a, at_b)
        await says(at_b, "vaya", at_a, at_b, at_c)
        assert heard(at_c, marks) == ["vaya"]
        assert heard(at_a, marks) == heard(at_b, marks) == ["uy", "vaya"]
        # seated at one table, C still sees A offline, and A C
        assert await db(online.states, cruz.pk, [ana.pk]) == {}
        assert await db(online.states, ana.pk, [cruz.pk]) == {}

        # Unblocked (from «Amigos»): they hear each other again.
        assert said(await a.post(UNBLOCK, {"name": "cruz"})) == ["Has desbloqueado a cruz."]
        for tab, user in ((at_a, ana), (at_c, cruz)):
            await told(tab, user)
        await says(at_c, "perdon", at_a)
        await says(at_a, "suerte", at_c)
    finally:
        await close_all(*tabs)
