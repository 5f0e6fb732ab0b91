"""A change whose event never came (``games.live.hub.catch_up``, on every server process's beat).

A change is published after its commit by the process that committed it; one killed in between (the
Celery worker playing a bot's move, a server process) leaves the table moved on with nobody told.  Every
server process compares the seqs its sockets have heard with the database's at each beat, and redraws a
table that stayed behind for a whole beat: the person whose turn it now is sees it within seconds, not
when their clock runs out.  A table whose events come is never redrawn that way.
"""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async

from games.engine import default_action
from games.engine.snapshot import load
from games.live import hub, push
from games.models import Seat, Table
from games.table import actions

from .helpers import Player, seated_table, wait_for

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def quick_beat(settings: Any) -> Any:
    settings.POCHA_PRESENCE_BEAT = 0.2
    return settings


@database_sync_to_async
def move_for_whoever_is_to_play(table_id: int) -> int:
    """The seat to move plays its default move, as another process would; returns the new seq."""
    table = Table.objects.get(pk=table_id)
    seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
    return actions.do_action(table_id, seat.user, default_action(load(table.state)), table.seq).seq


@database_sync_to_async
def turn_of(table_id: int) -> tuple[int, int]:
    table = Table.objects.get(pk=table_id)
    return table.seq, table.turn_seat


async def test_a_move_whose_event_was_lost_reaches_every_socket_within_a_few_beats(
    quick_beat: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table_id, users = await database_sync_to_async(seated_table)(4, 4, prefix="perdida")
    seq, mover = await turn_of(table_id)
    players = [Player(users[mover], table_id), Player(users[(mover + 1) % 4], table_id)]
    for player in players:
        assert await player.connect()
        assert player.seq == seq
    assert players[0].game_moves() and not players[1].game_moves()
    caught_up = hub.stats()["caught_up"]

    lost: list[int] = []
    monkeypatch.setattr(push, "table_changed", lambda table, seq, **kwargs: lost.append(seq))
    new_seq = await move_for_whoever_is_to_play(table_id)
    monkeypatch.undo()
    assert lost == [new_seq] == [seq + 1]  # committed, and its event never sent

    for player in players:
        await wait_for(lambda player=player: player.seq == new_seq, player, timeout=3)  # two beats of 0.2 s
    assert not players[0].game_moves(), "the mover's page still offers the move it made"
    assert players[1].game_moves(), "the next player's page does not offer their turn"
    assert hub.stats()["caught_up"] == caught_up + 1  # one redraw of the table, for both its sockets
    for player in players:
        await player.close()


async def test_a_table_whose_events_come_is_never_redrawn_for_them(quick_beat: Any) -> None:
    """Eight moves, a beat apart and back to back: every board arrives by its event, none by a catch-up."""
    table_id, users = await database_sync_to_async(seated_table)(4, 4, prefix="llegan")
    seq, _mover = await turn_of(table_id)
    player = Player(users[0], table_id)
    assert await player.connect()
    caught_up = hub.stats()["caught_up"]
    for n in range(8):
        seq = await move_for_whoever_is_to_play(table_id)
        while player.seq < seq:
            await player.receive(timeout=3)
        if n % 2:
            await player.comm.receive_nothing(timeout=0.5)  # beats go by with the table at rest
    await player.comm.receive_nothing(timeout=0.6)
    assert hub.stats()["caught_up"] == caught_up
    await player.close()
