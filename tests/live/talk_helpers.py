"""Helpers for the table-talk and spectator tests (the shared ones are in helpers.py)."""

from __future__ import annotations

import asyncio
import html
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games.models import Table
from games.table.snapshot import spectator_count

from .helpers import Tab, is_board

TALK = re.compile(
    r'^<div id="talk-event" data-talk-seat="(\d+)" data-talk-phrase="([a-z]+)" '
    r'data-talk-name="([^"]*)">([^<]*)</div>$'
)


@dataclass(frozen=True)
class Said:
    seat: int
    phrase: str
    name: str
    text: str


def parse_talk(frame: str) -> Said | None:
    """The phrase a talk frame carries, or None if the frame is not exactly a talk frame."""
    match = TALK.match(frame)
    if match is None:
        return None
    return Said(int(match.group(1)), match.group(2), html.unescape(match.group(3)), html.unescape(match.group(4)))


def is_talk(frame: str) -> bool:
    return 'id="talk-event"' in frame


def talk_of(tab: Tab, since: int = 0) -> list[Said]:
    """Every talk frame the tab received in frames[since:] (each must be exactly of the agreed shape)."""
    out = []
    for frame in tab.frames[since:]:
        if is_talk(frame):
            said = parse_talk(frame)
            assert said is not None, f"a talk frame not of the agreed shape: {frame!r}"
            out.append(said)
    return out


@pytest.fixture
def talk_limits(settings: Any) -> Iterator[Any]:
    """A rate-limit namespace of this test's own (ids repeat between tests; Redis may be shared with other
    runs) and a window far longer than any test, so a count never straddles two windows."""
    settings.POCHA_RATELIMIT_PREFIX = f"test-{uuid.uuid4().hex[:12]}"
    settings.POCHA_TALK_LIMIT = 3
    settings.POCHA_TALK_WINDOW = 600
    yield settings


async def spectators(table_id: int) -> int:
    return await database_sync_to_async(spectator_count)(table_id)


async def table_seq(table_id: int) -> int:
    return await database_sync_to_async(lambda: Table.objects.only("seq").get(pk=table_id).seq)()


async def quiet(seconds: float = 0.15) -> None:
    """Room for anything the server might (wrongly) still send."""
    await asyncio.sleep(seconds)


async def boards_after(tab: Tab, since: int, count: int = 1, timeout: float = 10) -> list[str]:
    await tab.wait_for(lambda: sum(1 for f in tab.frames[since:] if is_board(f)) >= count, timeout)
    return [f for f in tab.frames[since:] if is_board(f)]


async def play_out(
    table_id: int, humans: list[Tab], activity: asyncio.Event, *, on_move: Any = None, limit: float = 120
) -> int:
    """Each person plays the first move their board offers whenever it offers one, until the game is over
    and every board shows its last seq (bots and the clock do the rest).  ``on_move(n, tab)`` runs before
    the n-th move.  Returns the number of moves made."""
    moved_at: dict[Tab, set[int]] = {tab: set() for tab in humans}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    moves = 0

    def finished() -> int | None:
        table = Table.objects.only("status", "seq").get(pk=table_id)
        return table.seq if table.status == Table.Status.FINISHED else None

    while True:
        final = await database_sync_to_async(finished)()
        if final is not None and all(tab.seq >= final for tab in humans):
            return moves
        activity.clear()
        for tab in humans:
            offered = tab.game_moves()
            if not offered or tab.seq in moved_at[tab]:
                continue
            moved_at[tab].add(tab.seq)
            moves += 1
            if on_move is not None:
                await on_move(moves, tab)
            await tab.send(offered[0])
        left = deadline - loop.time()
        assert left > 0, "the game did not finish in time"
        try:
            async with asyncio.timeout(min(left, 1 if final is not None else 20)):
                await activity.wait()
        except TimeoutError:
            if final is None:
                raise AssertionError(
                    "nothing happened for 20 s; boards:\n" + "\n".join(t.board[:1500] for t in humans)
                ) from None
