"""Spectators: anyone logged in may watch a public table and sees of the hands exactly what a seated
player sees of the others' (nothing), with no move to make; the table counts the people watching
(``games.table.snapshot.spectator_count``) and redraws everyone's board when that number changes.

The board's layout is not asserted on (it is drawn elsewhere): only its seq, the moves it offers
(``ws-send`` controls) and the cards it names.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from benchmarks.load.wsclient import compose
from games.live import hub, presence, watchers
from games.models import Move, Round, Table, Watcher
from games.table import actions, talk

from .helpers import Tab, flash_message, is_board, person, seated_table, settle
from .talk_helpers import (  # noqa: F401 (fixtures)
    boards_after,
    is_talk,
    play_out,
    quiet,
    spectators,
    table_seq,
    talk_limits,
    talk_of,
)
from .test_secrecy import CommitLog, Payload, board_seq, cards_named, commits, fast_bots, read_timeline  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True)]


def visible_to_all(table_id: int) -> set[str]:
    """The cards anyone may see now: the current round's trump card and the cards played in it."""
    table = Table.objects.get(pk=table_id)
    current = Round.objects.filter(table=table, number=table.round_number).first()
    if current is None:
        return set()
    cards = set(
        Move.objects.filter(table=table, round=current.number, kind=Move.Kind.PLAY).values_list("value", flat=True)
    )
    if current.trump_card:
        cards.add(current.trump_card)
    return cards


def plays_offered(tab: Tab) -> list[dict[str, str]]:
    return tab.game_moves()


async def started_table(prefix: str) -> tuple[int, list[Any], list[Tab]]:
    """Four people at a started table (no bots, no clock), seats 0 and 1 connected and settled."""
    table_id, users = await database_sync_to_async(seated_table)(4, 4, prefix=prefix)
    players = [Tab(users[0], table_id), Tab(users[1], table_id)]
    for tab in players:
        assert await tab.open()
    await settle(players, table_id)
    return table_id, users, players


async def close_all(tabs: list[Tab]) -> None:
    for tab in tabs:
        await tab.close()


async def test_a_stranger_watches_a_public_table() -> None:
    table_id, users, players = await started_table("mira")
    stranger = Tab(await database_sync_to_async(person)("curiosa"), table_id)
    try:
        assert await spectators(table_id) == 0
        seq = await table_seq(table_id)
        counts = {t: len(t.frames) for t in players}
        assert await stranger.open()
        boards = await boards_after(stranger, 0)
        assert board_seq(boards[0]) == seq
        assert await spectators(table_id) == 1
        # every seated player is sent a redraw at the same seq
        for tab in players:
            redraw = await boards_after(tab, counts[tab])
            assert board_seq(redraw[0]) == seq
        # the stranger sees no hand and has nothing to play, though the seated ones do
        assert cards_named(stranger.board) <= await database_sync_to_async(visible_to_all)(table_id)
        assert plays_offered(stranger) == []
        turn = (await database_sync_to_async(Table.objects.get)(pk=table_id)).turn_seat
        assert any(plays_offered(t) for t in players) or turn not in (0, 1)
        await quiet()
        assert len([f for f in stranger.frames if is_board(f)]) == 1, "its own arrival is not redrawn twice"
        # and cannot move: a bid from a stranger is refused, nothing changes
        before = len(stranger.frames)
        await stranger.send({"action": "bid", "value": "0", "seq": stranger.seq})
        await stranger.wait_for(lambda: stranger.flashes(before))
        assert await table_seq(table_id) == seq
        # leaving: the count goes back to 0 and everyone is redrawn again
        counts = {t: len(t.frames) for t in players}
        await stranger.close()
        for tab in players:
            redraw = await boards_after(tab, counts[tab])
            assert board_seq(redraw[0]) == seq
        assert await spectators(table_id) == 0
        assert await database_sync_to_async(Watcher.objects.filter(table_id=table_id, user=stranger.user).count)() == 0
    finally:
        await close_all([*players, stranger])


async def test_the_redraw_of_a_sockets_own_arrival_is_not_drawn_for_it_again() -> None:
    """With Redis, the redraw a socket's arrival pushes may reach it after it has registered with the hub
    and drawn its first board (which counts it already): it skips that event, everyone else draws it.
    The event is sent here again, late, as it would arrive."""
    table_id, users, players = await started_table("tarde")
    stranger = Tab(await database_sync_to_async(person)("tardona"), table_id)
    try:
        assert await stranger.open()
        await boards_after(stranger, 0)
        for tab in players:
            await boards_after(tab, 0, count=2)
        await quiet()
        channel = await database_sync_to_async(
            Watcher.objects.filter(table_id=table_id, user=stranger.user).values_list("channel_name", flat=True).get
        )()
        seq = await table_seq(table_id)
        counts = {t: len(t.frames) for t in [*players, stranger]}
        await hub.publish({"type": "table.changed", "table": table_id, "seq": seq, "force": True, "origin": channel})
        for tab in players:
            assert board_seq((await boards_after(tab, counts[tab]))[0]) == seq
        await quiet()
        assert stranger.frames[counts[stranger] :] == []
        # the same redraw caused by someone else is drawn for it
        await hub.publish({"type": "table.changed", "table": table_id, "seq": seq, "force": True, "origin": "otro"})
        assert board_seq((await boards_after(stranger, counts[stranger]))[0]) == seq
    finally:
        await close_all([*players, stranger])


async def test_a_private_table_refuses_a_stranger() -> None:
    host = await database_sync_to_async(person)("anfitriona")
    table = await database_sync_to_async(actions.do_create_private_table)(host, 4, 0, True)
    stranger = Tab(await database_sync_to_async(person)("fisgona"), table.pk)
    try:
        assert await stranger.open()  # accepted, then told the table does not exist, and closed
        await stranger.wait_for(lambda: stranger.closed is not None)
        assert stranger.closed == 4404
        assert [flash_message(f) for f in stranger.frames] == ["Esa mesa no existe."]
        assert not any(is_board(f) for f in stranger.frames)
        assert await spectators(table.pk) == 0
        assert await database_sync_to_async(Watcher.objects.filter(table_id=table.pk).count)() == 0
    finally:
        await stranger.close()


async def test_a_seated_players_own_sockets_are_not_spectators() -> None:
    table_id, users, players = await started_table("propia")
    second = Tab(users[0], table_id)
    try:
        assert await database_sync_to_async(Watcher.objects.filter(table_id=table_id).count)() == 2
        counts = {t: len(t.frames) for t in players}
        assert await second.open()
        await boards_after(second, 0)
        await quiet()
        assert await spectators(table_id) == 0
        assert await database_sync_to_async(Watcher.objects.filter(table_id=table_id, user=users[0]).count)() == 2
        # a second tab of a seated person changes nothing anyone can see: no redraw
        assert all(t.frames[counts[t] :] == [] for t in players)
        await second.close()
        await quiet()
        assert all(t.frames[counts[t] :] == [] for t in players)
        assert await database_sync_to_async(Watcher.objects.filter(table_id=table_id).count)() == 2
    finally:
        await close_all([*players, second])


async def test_two_sockets_of_one_spectator_count_once() -> None:
    table_id, users, players = await started_table("doble")
    watcher = await database_sync_to_async(person)("doble-mirona")
    first, second = Tab(watcher, table_id), Tab(watcher, table_id)
    try:
        counts = {t: len(t.frames) for t in players}
        assert await first.open()
        for tab in players:
            await boards_after(tab, counts[tab])
        assert await spectators(table_id) == 1
        await quiet()
        counts = {t: len(t.frames) for t in players}
        assert await second.open()
        await boards_after(second, 0)
        await quiet()
        assert await spectators(table_id) == 1
        assert all(t.frames[counts[t] :] == [] for t in players), "the count did not change: no redraw"
        await first.close()
        await quiet()
        assert await spectators(table_id) == 1
        assert all(t.frames[counts[t] :] == [] for t in players)
        await second.close()
        for tab in players:
            await boards_after(tab, counts[tab])
        assert await spectators(table_id) == 0
    finally:
        await close_all([*players, first, second])


async def test_the_count_of_several_spectators_and_a_spectator_who_sits() -> None:
    """Two strangers watch a waiting table; one of them sits down and is no longer counted."""
    table_id, users = await database_sync_to_async(seated_table)(4, 2, prefix="sienta")
    player = Tab(users[0], table_id)
    strangers = [await database_sync_to_async(person)(f"mirona-{i}") for i in range(2)]
    watching = [Tab(u, table_id) for u in strangers]
    try:
        assert await player.open()
        await settle([player], table_id)
        for n, tab in enumerate(watching, start=1):
            before = len(player.frames)
            assert await tab.open()
            await boards_after(player, before)
            assert await spectators(table_id) == n
        before = len(player.frames)
        await watching[0].send({"action": "sit", "seq": watching[0].seq})
        await player.wait_for(lambda: player.seq > board_seq(player.frames[before - 1] if before else player.board))
        assert await spectators(table_id) == 1
        # the one who sat may talk now; the other still may not
        await watching[0].send({"action": "say", "value": "suerte"})
        await player.wait_for(lambda: talk_of(player))
        assert talk_of(player)[-1].phrase == "suerte"
    finally:
        await close_all([player, *watching])


async def test_prune_deletes_stale_rows_only() -> None:
    table_id, users = await database_sync_to_async(seated_table)(3, 1, prefix="poda")

    def rows() -> tuple[int, int]:
        Watcher.objects.create(table_id=table_id, user=users[0], channel_name="viejo")
        Watcher.objects.create(table_id=table_id, user=users[0], channel_name="nuevo")
        Watcher.objects.filter(channel_name="viejo").update(
            seen_at=Watcher.objects.get(channel_name="viejo").seen_at - timedelta(hours=2)
        )
        deleted = presence.sweep_dead(timezone.now() - timedelta(hours=1)).rows
        return deleted, Watcher.objects.filter(table_id=table_id).count()

    assert await database_sync_to_async(rows)() == (1, 1)
    assert await database_sync_to_async(watchers.remove)("nuevo") is False  # a seated person's socket
    assert await database_sync_to_async(watchers.remove)("nuevo") is False  # already gone


# -- a whole game, watched ------------------------------------------------------------------------


@pytest.mark.usefixtures("talk_limits")
async def test_a_spectator_sees_no_hidden_card_over_a_whole_game(
    fast_bots: None, commits: CommitLog, talk_limits: Any
) -> None:
    """One person and two bots play a whole game, talking now and then, while two strangers (Spanish and
    English) watch: every card any spectator frame names was the trump card or already played at the seq
    that frame was drawn at, and a spectator is never offered a move."""
    talk_limits.POCHA_TALK_LIMIT = 1000
    table_id, users = await database_sync_to_async(seated_table)(3, 1, prefix="partida")
    activity = asyncio.Event()
    human = Tab(users[0], table_id, "es", activity)
    watchers_ = [
        Tab(await database_sync_to_async(person)(f"ojo-{lang}"), table_id, lang, activity) for lang in ("es", "en")
    ]
    tabs = [human, *watchers_]
    codes = [code for code, _text in talk.PHRASES]
    try:
        for tab in tabs:
            assert await tab.open()
        await settle(tabs, table_id)
        assert await spectators(table_id) == 2
        await human.send({"action": "start", "seq": human.seq})  # the empty seats fill with bots

        async def chat(n: int, tab: Tab) -> None:
            if n % 7 == 1:
                await tab.send({"action": "say", "value": codes[n % len(codes)]})

        moves = await play_out(table_id, [human, *watchers_], activity, on_move=chat)
        assert moves > 19
        await quiet(0.3)
    finally:
        await close_all(tabs)
    assert await spectators(table_id) == 0

    timeline = await database_sync_to_async(read_timeline)(table_id, commits)
    checked = talks = cards_seen = 0
    for tab in watchers_:
        seq = -1
        for frame in tab.frames:
            if is_board(frame):
                seq = board_seq(frame)
            assert seq >= 0, "the first frame of a connection is the board"
            payload = Payload(tab.user.username, None, "frame", seq, frame)
            leaked = payload.found - timeline.allowed(None, seq)
            assert not leaked, f"spectator {tab.language} at seq {seq} was sent {sorted(leaked)}:\n{frame[:4000]}"
            checked += 1
            cards_seen += len(payload.found)
            if is_talk(frame):
                talks += 1
                assert payload.found == set()
        # never offered a move, at any point of the game
        tab.board = ""
        for frame in tab.frames:
            if is_board(frame):
                tab.board = compose(tab.board, frame)
                assert tab.game_moves() == [], f"a spectator was offered a move:\n{frame[:3000]}"
    assert checked > 2 * 19 and talks >= 2 * 3 and cards_seen > 0, (checked, talks, cards_seen)
