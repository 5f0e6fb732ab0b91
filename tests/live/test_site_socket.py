"""Every page's socket (issue 44): ``/ws/sitio/?p=lobby|amigos|other`` through the real consumer.  While one is
open its person is online (a ``PageSocket`` row of this process, deleted on the way out, swept with a dead
process's rows); it is refused to a visitor, a suspended person and past ``POCHA_MAX_SOCKETS`` sockets of either
kind; anything sent over it gets a clear error to the sender alone.  It draws again what its page shows live: the
invitation banner on every page (a table's socket too), «Amigos»' lists on «Amigos», the lobby's «who is online»
on the lobby.  A person's first socket opening and their last one closing, and their coming to or leaving their
table, redraw the pages of the followers who have one open (but anyone blocked either way).  And talk from a
seat whose person is blocked either way never reaches the other's socket.
"""

from __future__ import annotations

import asyncio
import html
import re
import uuid
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from accounts import social
from accounts.models import Block, Follow, Profile
from games.live import presence, push
from games.live.consumers import SITE_MAX_FRAME
from games.models import Invitation, PageSocket, ServerProcess, Watcher
from games.table import actions
from games.table.events import PersonNotified, emit

from .helpers import Tab, is_board, person, seated_table, settle
from .talk_helpers import is_talk, parse_talk, quiet, talk_limits, talk_of  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]

TOO_MANY = "Tienes demasiadas pestañas abiertas: cierra alguna."
MALFORMED = "Mensaje no válido."
TOO_LONG = "Mensaje demasiado largo."
NO_PAGE = "Esa página no existe."
SITE_FLASH = re.compile(r'<div id="site-flash" class="site-flash" role="alert" hx-swap-oob="true">(.*?)</div>', re.S)
PERSON = re.compile(r'<li class="person" data-person="([^"]+)" data-state="([a-z]+)"')


async def db(fn: Any, *args: Any, **kwargs: Any) -> Any:
    return await database_sync_to_async(fn)(*args, **kwargs)


def page_path(page: str | None) -> str:
    return "/ws/sitio/" if page is None else f"/ws/sitio/?p={page}"


async def on_page(user: Any, page: str | None = "other", language: str = "es") -> Tab:
    """A page of ``user``'s open, once its socket has sent what its page shows (the banner at least)."""
    tab = Tab(user, 0, language)
    assert await tab.open(path=page_path(page))
    await tab.wait_for(lambda: any('id="invitation-banner"' in f for f in tab.frames))
    return tab


def page_rows(user: Any) -> list[PageSocket]:
    return list(PageSocket.objects.filter(user=user))


def all_rows() -> list[str]:
    return sorted(PageSocket.objects.values_list("channel_name", flat=True))


def errors(tab: Tab, since: int = 0) -> list[str]:
    return [html.unescape(m.group(1)) for f in tab.frames[since:] if (m := SITE_FLASH.fullmatch(f))]


def friends_frames(tab: Tab, since: int = 0) -> list[str]:
    return [f for f in tab.frames[since:] if '<div id="friends-live" class="friends-live" hx-swap-oob="true">' in f]


def states_in(frame: str) -> dict[str, str]:
    return dict(PERSON.findall(frame))


async def state_seen(tab: Tab, since: int, name: str, state: str) -> None:
    """Until a redraw of «Amigos» after ``since`` shows ``name`` in ``state``."""
    await tab.wait_for(lambda: any(states_in(f).get(name) == state for f in friends_frames(tab, since)))


def friends(a: Any, b: Any) -> None:
    Follow.objects.create(follower=a, followee=b)
    Follow.objects.create(follower=b, followee=a)


def a_follower_blocked(followee: Any, name: str) -> Any:
    """Someone who follows ``followee`` and whom ``followee`` has blocked (a block ends the follow: written here
    as a row left by a follow and a block at the same moment, which the rules must still keep apart)."""
    other = person(name)
    Follow.objects.create(follower=other, followee=followee)
    Block.objects.create(blocker=followee, blocked=other)
    return other


async def close_all(*tabs: Tab) -> None:
    for tab in tabs:
        await tab.close()


# -- who may open one, and its row ----------------------------------------------------------------------------


async def test_a_visitor_is_refused() -> None:
    tab = Tab(None, 0)
    assert not await tab.open(path=page_path("lobby"))
    assert tab.refused == 4401
    assert await db(PageSocket.objects.count) == 0


async def test_its_row_lives_as_long_as_the_socket() -> None:
    ana = await db(person, "ana")
    tab = await on_page(ana, "lobby")
    try:
        (row,) = await db(page_rows, ana)
        assert row.process_id == presence.PROCESS_ID
        second = await on_page(ana)
        assert len(await db(page_rows, ana)) == 2
        await second.close()
        assert [r.channel_name for r in await db(page_rows, ana)] == [row.channel_name]
    finally:
        await tab.close()
    assert await db(page_rows, ana) == []


@pytest.mark.parametrize("query", ["p=mesa", "p=lobby&p=amigos", "p=lobby&x=1", "p=", "p=%C3%B1", "x"])
async def test_a_page_it_does_not_know_is_refused_in_words(query: str) -> None:
    ana = await db(person, f"ana{uuid.uuid4().hex[:6]}")
    tab = Tab(ana, 0)
    try:
        assert await tab.open(path=f"/ws/sitio/?{query}")
        await tab.wait_for(lambda: tab.closed is not None)
        assert tab.closed == 4404
        assert errors(tab) == [NO_PAGE] and len(tab.frames) == 1
        assert await db(page_rows, ana) == []
    finally:
        await tab.close()


async def test_no_page_named_is_another_page() -> None:
    ana = await db(person, "sinpagina")
    tab = await on_page(ana, None)
    try:
        assert len(await db(page_rows, ana)) == 1
        await db(emit, PersonNotified(ana.pk, "friends"))  # another page shows no friends
        await quiet(0.5)
        assert friends_frames(tab) == [] and not any('id="lobby-people"' in f for f in tab.frames)
    finally:
        await tab.close()


def suspend_quietly(user: Any) -> None:
    moderator = person(f"mod{uuid.uuid4().hex[:6]}")
    Profile.objects.update_or_create(
        user_id=user.pk,
        defaults={"suspended_at": timezone.now(), "suspended_reason": "insultos", "suspended_by_id": moderator.pk},
    )


async def test_a_suspended_person_is_refused_and_a_suspension_closes_it() -> None:
    ana, bea = await db(person, "suspendida"), await db(person, "luego")
    await db(suspend_quietly, ana)
    tab = Tab(ana, 0)
    later = await on_page(bea, "lobby")
    try:
        assert await tab.open(path=page_path("lobby"))
        await tab.wait_for(lambda: tab.closed is not None)
        assert tab.closed == 4403 and errors(tab) == ["Tu cuenta está suspendida: insultos"]
        assert await db(page_rows, ana) == []
        # suspended while the page is open: told why, closed, and no longer online
        await db(suspend_quietly, bea)
        await db(push.account_suspended, bea.pk, "trampas")
        await later.wait_for(lambda: later.closed is not None)
        assert later.closed == 4403 and errors(later) == ["Tu cuenta está suspendida: trampas"]
        assert await db(page_rows, bea) == []
    finally:
        await close_all(tab, later)


async def test_too_many_sockets_of_either_kind_are_refused(settings: Any) -> None:
    settings.POCHA_MAX_SOCKETS = 2
    table_id, users = await db(seated_table, 3, 3, prefix="muchas")
    ana = users[0]
    at_table = Tab(ana, table_id)
    page = Tab(ana, 0)
    extra_page = Tab(ana, 0)
    extra_table = Tab(ana, table_id)
    try:
        assert await at_table.open()
        await at_table.wait_for(lambda: bool(at_table.board))
        page = await on_page(ana, "lobby")
        assert await extra_page.open(path=page_path("amigos"))
        await extra_page.wait_for(lambda: extra_page.closed is not None)
        assert extra_page.closed == 4429 and errors(extra_page) == [TOO_MANY] and len(extra_page.frames) == 1
        assert await extra_table.open()  # a table's socket counts the pages' too
        await extra_table.wait_for(lambda: extra_table.closed is not None)
        assert extra_table.closed == 4429 and not any(is_board(f) for f in extra_table.frames)
        assert len(await db(page_rows, ana)) == 1
        assert await db(Watcher.objects.filter(user=ana).count) == 1
        # one closed, the next one opens
        await page.close()
        again = await on_page(ana, "amigos")
        assert again.closed is None and len(await db(page_rows, ana)) == 1
        await again.close()
    finally:
        await close_all(at_table, page, extra_page, extra_table)


# -- what is sent to it -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        ("hola", MALFORMED),
        ('{"action": "say", "value": "suerte"}', MALFORMED),
        ("[" * 200 + "]" * 20, MALFORMED),
        (b"\x00\x01", MALFORMED),
        ("x" * (SITE_MAX_FRAME + 1), TOO_LONG),
        ('{"p": "' + "a" * 100_000 + '"}', TOO_LONG),
    ],
)
async def test_anything_sent_is_refused_to_the_sender_alone(frame: str | bytes, expected: str) -> None:
    ana, bea = await db(person, "emisora"), await db(person, "oyente")
    sender, same_person, other = await on_page(ana, "lobby"), await on_page(ana), await on_page(bea, "lobby")
    try:
        counts = {t: len(t.frames) for t in (sender, same_person, other)}
        rows = await db(all_rows)
        if isinstance(frame, bytes):
            await sender.send_bytes(frame)
        else:
            await sender.send(frame)
        await sender.wait_for(lambda: len(sender.frames) > counts[sender])
        await quiet(0.3)
        assert sender.frames[counts[sender] :] == [sender.frames[-1]] and errors(sender, counts[sender]) == [expected]
        assert same_person.frames[counts[same_person] :] == [] and other.frames[counts[other] :] == []
        assert sender.closed is None, "a bad frame does not cost the connection"
        assert await db(all_rows) == rows
    finally:
        await close_all(sender, same_person, other)


async def test_the_refusal_is_in_the_pages_language() -> None:
    ana = await db(person, "inglesa")
    tab = await on_page(ana, "other", "en")
    try:
        await tab.send("hola")
        await tab.wait_for(lambda: errors(tab))
        assert errors(tab) == ["Invalid message."]
    finally:
        await tab.close()


async def test_an_invitation_shows_live_on_every_page_and_at_a_table() -> None:
    host, bea = await db(person, "anfitriona"), await db(person, "invitada")
    public_id, _players = await db(seated_table, 3, 3, prefix="publica")
    page = await on_page(bea, "other")
    watching = Tab(bea, public_id)  # watching someone else's game: the table's page has the banner too
    try:
        assert await watching.open()
        await watching.wait_for(lambda: bool(watching.board))
        table = await db(actions.do_create_private_table, host, 4, 0, True)
        before = {t: len(t.frames) for t in (page, watching)}
        invitation = await db(actions.do_invite, table.pk, host, "invitada")
        for tab in (page, watching):
            await tab.wait_for(lambda tab=tab: any("anfitriona te invita" in f for f in tab.frames[before[tab] :]))
            (banner,) = [f for f in tab.frames[before[tab] :] if "anfitriona te invita" in f]
            assert banner.startswith(
                '<div id="invitation-banner" class="invitation-banner" aria-live="polite" hx-swap-oob="true">'
            )
            assert ">Unirme</button>" in banner and ">No, gracias</button>" in banner
            assert f'data-invitation="{invitation.pk}"' in banner
        # declined elsewhere: the banner empties on both
        before = {t: len(t.frames) for t in (page, watching)}
        await db(actions.do_decline_invitation, invitation.pk, bea)
        for tab in (page, watching):
            await tab.wait_for(lambda tab=tab: any('id="invitation-banner"' in f for f in tab.frames[before[tab] :]))
            assert "anfitriona te invita" not in tab.frames[-1]
        assert await db(lambda: Invitation.objects.get(pk=invitation.pk).status) == Invitation.Status.DECLINED
    finally:
        await close_all(page, watching)


async def test_a_page_opened_late_shows_the_invitation_made_before() -> None:
    host, bea = await db(person, "pronto"), await db(person, "tarde")
    table = await db(actions.do_create_private_table, host, 4, 0, True)
    await db(actions.do_invite, table.pk, host, "tarde")
    tab = await on_page(bea, "amigos")
    try:
        (first,) = tab.frames
        assert (
            "pronto te invita" in first and '<div id="friends-live" class="friends-live" hx-swap-oob="true">' in first
        )
    finally:
        await tab.close()


async def test_a_friends_notice_redraws_amigos_and_the_lobby_and_nothing_elsewhere() -> None:
    ana = await db(person, "notada")
    amigos, lobby, other = await on_page(ana, "amigos"), await on_page(ana, "lobby"), await on_page(ana, "other")
    try:
        before = {t: len(t.frames) for t in (amigos, lobby, other)}
        await db(emit, PersonNotified(ana.pk, "friends"))
        await db(emit, PersonNotified(ana.pk, "friends"))  # heard together: drawn once
        await amigos.wait_for(lambda: friends_frames(amigos, before[amigos]))
        await lobby.wait_for(lambda: len(lobby.frames) > before[lobby])
        await quiet(0.6)
        assert len(amigos.frames) == before[amigos] + 1
        assert len(lobby.frames) == before[lobby] + 1
        assert lobby.frames[-1].startswith('<div id="lobby-people" class="lobby-people" hx-swap-oob="true">')
        assert other.frames[before[other] :] == []
    finally:
        await close_all(amigos, lobby, other)


# -- presence: followers told ------------------------------------------------------------------------------------


async def test_a_friend_coming_and_going_redraws_amigos_but_not_for_someone_blocked() -> None:
    ana, bea = await db(person, "ana"), await db(person, "bea")
    await db(friends, ana, bea)
    cruz = await db(a_follower_blocked, bea, "cruz")
    watcher, blocked = await on_page(ana, "amigos"), await on_page(cruz, "amigos")
    bea_tabs: list[Tab] = []
    try:
        mark, blocked_mark = len(watcher.frames), len(blocked.frames)
        bea_tabs.append(await on_page(bea, "lobby"))
        await state_seen(watcher, mark, "bea", "online")
        mark = len(watcher.frames)
        bea_tabs.append(await on_page(bea, "other"))  # a second tab: not a change
        await bea_tabs[0].close()  # nor closing the first
        await quiet(0.6)
        assert friends_frames(watcher, mark) == []
        await bea_tabs[1].close()  # the last one: gone
        await state_seen(watcher, mark, "bea", "offline")
        await quiet(0.3)
        assert friends_frames(blocked, blocked_mark) == [], "a blocked follower is never told"
    finally:
        await close_all(watcher, blocked, *bea_tabs)


async def test_coming_to_and_leaving_ones_table_redraws_amigos() -> None:
    table_id, (bea, *_rest) = await db(seated_table, 3, 3, prefix="sentada")
    ana = await db(person, "amiga")
    await db(friends, ana, bea)
    watcher = await on_page(ana, "amigos")
    lobby_page = await on_page(bea, "lobby")
    table = Tab(bea, table_id)
    try:
        await state_seen(watcher, 0, "sentada0", "online")
        mark = len(watcher.frames)
        assert await table.open()
        await state_seen(watcher, mark, "sentada0", "table")
        frame = [f for f in friends_frames(watcher, mark) if states_in(f).get("sentada0") == "table"][-1]
        assert f'href="/mesa/{table_id}/">Mirar la partida</a>' in frame
        mark = len(watcher.frames)
        await table.close()
        await state_seen(watcher, mark, "sentada0", "online")  # her lobby is still open
    finally:
        await close_all(watcher, lobby_page, table)


async def test_the_lobby_shows_a_friend_coming() -> None:
    ana, bea = await db(person, "vestibulo"), await db(person, "llega")
    await db(friends, ana, bea)
    lobby = await on_page(ana, "lobby")
    bea_tab: Tab | None = None
    try:
        assert 'data-person="llega"' not in lobby.frames[0]
        mark = len(lobby.frames)
        bea_tab = await on_page(bea, "other")
        await lobby.wait_for(lambda: any('data-person="llega" data-state="online"' in f for f in lobby.frames[mark:]))
    finally:
        await close_all(lobby, *([bea_tab] if bea_tab else []))


def other_process() -> ServerProcess:
    return ServerProcess.objects.create(id=uuid.uuid4(), name="otro:1", seen_at=timezone.now())


async def test_a_dead_processs_page_rows_are_swept_and_the_followers_told() -> None:
    ana, bea = await db(person, "viva"), await db(person, "muerta")
    await db(friends, ana, bea)
    cruz = await db(a_follower_blocked, bea, "bloqueado")
    other = await db(other_process)
    await db(PageSocket.objects.create, user=bea, channel_name="otro.pagina", process=other)
    watcher, blocked = await on_page(ana, "amigos"), await on_page(cruz, "amigos")
    try:
        assert states_in(watcher.frames[0]).get("muerta") == "online"
        mark, blocked_mark = len(watcher.frames), len(blocked.frames)
        await db(ServerProcess.objects.filter(pk=other.pk).update, seen_at=timezone.now() - timedelta(hours=1))
        swept = await db(presence.sweep_dead, timezone.now() - timedelta(seconds=1))
        assert (swept.processes, swept.rows) == (1, 1)
        assert await db(page_rows, bea) == []
        assert not await db(ServerProcess.objects.filter(pk=other.pk).exists)
        await state_seen(watcher, mark, "muerta", "offline")
        await quiet(0.3)
        assert friends_frames(blocked, blocked_mark) == []
        assert len(await db(page_rows, ana)) == 1  # this process's own rows stay
    finally:
        await close_all(watcher, blocked)


async def test_this_processs_own_rows_are_put_right() -> None:
    ana = await db(person, "propia")
    tab = await on_page(ana)
    try:
        (row,) = await db(page_rows, ana)
        # a row of this process whose socket is gone (its close failed), and the socket's row lost
        await db(PageSocket.objects.create, user=ana, channel_name="sin-socket", process_id=presence.PROCESS_ID)
        await db(PageSocket.objects.filter(channel_name=row.channel_name).delete)
        assert await db(presence.check_own_rows) == 2
        assert [r.channel_name for r in await db(page_rows, ana)] == [row.channel_name]
    finally:
        await tab.close()
    assert await db(page_rows, ana) == []


# -- talk and blocks ---------------------------------------------------------------------------------------------


async def test_talk_from_a_blocked_persons_seat_never_reaches_the_blocker(talk_limits: Any) -> None:
    talk_limits.POCHA_TALK_LIMIT = 100
    table_id, (ana, cruz, dani) = await db(seated_table, 3, 3, prefix="charla")
    await db(Block.objects.create, blocker=ana, blocked=cruz)
    tabs = [Tab(ana, table_id), Tab(cruz, table_id), Tab(dani, table_id)]
    stranger = Tab(await db(person, "mirona"), table_id)
    try:
        for tab in (*tabs, stranger):
            assert await tab.open()
        await settle([*tabs, stranger], table_id)
        a, c, d = tabs
        marks = {t: len(t.frames) for t in (*tabs, stranger)}
        await c.send({"action": "say", "value": "suerte"})
        for tab in (c, d, stranger):
            await tab.wait_for(lambda tab=tab: talk_of(tab, marks[tab]))
        await quiet(0.3)
        assert talk_of(a, marks[a]) == [], "the blocker never reads the blocked person's talk"
        # and the other way round: the blocked person never reads the blocker's
        marks = {t: len(t.frames) for t in (*tabs, stranger)}
        await a.send({"action": "say", "value": "gracias"})
        for tab in (a, d, stranger):
            await tab.wait_for(lambda tab=tab: talk_of(tab, marks[tab]))
        await quiet(0.3)
        assert talk_of(c, marks[c]) == []
        # someone else's talk reaches both
        marks = {t: len(t.frames) for t in (*tabs, stranger)}
        await d.send({"action": "say", "value": "bien"})
        for tab in (*tabs, stranger):
            await tab.wait_for(lambda tab=tab: talk_of(tab, marks[tab]))
        assert {parse_talk(tab.frames[-1]).phrase for tab in tabs} == {"bien"}
        # unblocked: told at once, and the talk reaches her again
        await db(social.unblock, ana, cruz)
        await db(emit, PersonNotified(ana.pk, "blocks"))
        await asyncio.sleep(0.3)
        marks = {t: len(t.frames) for t in (*tabs, stranger)}
        await c.send({"action": "say", "value": "uy"})
        await a.wait_for(lambda: talk_of(a, marks[a]))
        # blocked again while the sockets are open, by the other one this time
        await db(Block.objects.create, blocker=cruz, blocked=ana)
        await db(emit, PersonNotified(ana.pk, "blocks"))
        await db(emit, PersonNotified(cruz.pk, "blocks"))
        await asyncio.sleep(0.3)
        marks = {t: len(t.frames) for t in (*tabs, stranger)}
        await c.send({"action": "say", "value": "vaya"})
        await d.wait_for(lambda: talk_of(d, marks[d]))
        await a.send({"action": "say", "value": "perdon"})
        await d.wait_for(lambda: len(talk_of(d, marks[d])) == 2)
        await quiet(0.3)
        assert [s.phrase for s in talk_of(a, marks[a])] == ["perdon"]
        assert [s.phrase for s in talk_of(c, marks[c])] == ["vaya"]
    finally:
        await close_all(*tabs, stranger)
