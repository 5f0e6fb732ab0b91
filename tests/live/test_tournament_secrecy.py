"""A tournament's tables through the real socket: while a table of a duplicate tournament still plays the game's
deals, no table of that game shows its board to anyone not seated at it (a stranger, a person of the other
table, staff): the socket is accepted, told why in words and closed (4403), with no board and no card sent, and
nobody is counted as watching.  The people seated at a table get its board as always (the finished table's
final board says its deals will be shown later, and offers no replay, until the last table finishes: then the
page left open is drawn again with it).  Once every table has finished, anyone may watch."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone
from test_tournament_pages import play_deal

from games.engine.levels import FACIL
from games.models import Round, Seat, Table, Tournament, Watcher
from games.table import access
from games.tournaments import entries, runner

from .helpers import Tab, flash_message, is_board, person
from .test_secrecy import cards_named

pytestmark = [pytest.mark.django_db(transaction=True)]

WATCH = (
    "Esta mesa del torneo se podrá mirar cuando terminen todas las mesas de la partida: todas juegan las mismas cartas."
)
SECRET = "Las manos de esta partida del torneo se verán cuando terminen todas sus mesas."


@pytest.fixture(autouse=True)
def still_bots(settings: Any) -> None:
    settings.POCHA_BOT_DELAY = 30  # nothing moves by itself: the test plays the tables (``finish``)
    settings.POCHA_ROUND_PAUSE = 0
    settings.POCHA_TRICK_PAUSE = 0


def finish(table_id: int) -> None:
    """Every remaining deal of the table, the bots' moves made due at once (``play_deal``)."""
    Table.objects.filter(pk=table_id).update(bot_level=FACIL)
    while Table.objects.get(pk=table_id).status == Table.Status.PLAYING:
        play_deal(table_id)


def setup() -> dict[str, Any]:
    """A duplicate tournament of three people on two tables, the first table played to its end."""
    now = timezone.now()
    t = Tournament.objects.create(
        name="Copa del Secreto",
        size=4,
        places=8,
        deals=2,
        entry_fee=0,
        prizes="",
        registration_opens_at=now - timedelta(hours=1),
        starts_at=now + timedelta(hours=1),
    )
    for name in ("ana", "bea", "carla"):
        entries.register(person(name), t.pk, None)
    Tournament.objects.filter(pk=t.pk).update(starts_at=timezone.now() - timedelta(seconds=1))
    assert runner.advance(t.pk) == "started"
    first, second = Table.objects.filter(tournament=t).order_by("tournament_number")
    finish(first.pk)
    moderator = person("moderadora")
    moderator.is_staff = moderator.is_superuser = True
    moderator.save()
    return {
        "first": first.pk,
        "second": second.pk,
        "mine": Seat.objects.filter(table=first, is_bot=False).first().user,
        "theirs": Seat.objects.filter(table=second, is_bot=False).first().user,
        "stranger": person("extraña"),
        "moderator": moderator,
    }


def dealt(table_id: int) -> set[str]:
    cards: set[str] = set()
    for hands, trump in Round.objects.filter(table_id=table_id).values_list("hands", "trump_card"):
        cards.update(c for hand in hands for c in hand)
        if trump:
            cards.add(trump)
    return cards


async def refused(user: Any, table_id: int) -> None:
    """The socket is accepted, told why, closed with 4403: no board, no card, not counted as watching."""
    tab = Tab(user, table_id)
    try:
        assert await tab.open()
        await tab.wait_for(lambda: tab.closed is not None)
        assert tab.closed == 4403
        assert [flash_message(f) for f in tab.frames] == [WATCH]
        assert not any(is_board(f) for f in tab.frames)
        cards = await database_sync_to_async(dealt)(table_id)
        assert not (cards_named("".join(tab.frames)) & cards)
        count = Watcher.objects.filter(table_id=table_id, user=user).count
        assert await database_sync_to_async(count)() == 0
    finally:
        await tab.close()


async def board_of(user: Any, table_id: int) -> str:
    tab = Tab(user, table_id)
    try:
        assert await tab.open()
        await tab.wait_for(lambda: bool(tab.boards) or tab.closed is not None)
        assert tab.closed is None and tab.boards, tab.frames
        return tab.board
    finally:
        await tab.close()


async def test_a_tournament_table_is_watched_by_its_own_people_only_until_every_table_has_finished() -> None:
    rows = await database_sync_to_async(setup)()
    first, second = rows["first"], rows["second"]
    assert await database_sync_to_async(lambda: access.deals_secret(Table.objects.get(pk=first)))()
    # the table still playing: nobody but its people, not even a person of the other table or staff
    for user in (rows["stranger"], rows["mine"], rows["moderator"]):
        await refused(user, second)
    board = await board_of(rows["theirs"], second)
    assert 'class="ranking"' not in board
    # the finished table: its people see their final board, which keeps the deals for later
    for user in (rows["stranger"], rows["theirs"], rows["moderator"]):
        await refused(user, first)
    waiting = Tab(rows["mine"], first)
    try:
        assert await waiting.open()
        await waiting.wait_for(lambda: bool(waiting.boards))
        board = waiting.board
        assert "Clasificación final" in board and SECRET in board
        assert f"/mesa/{first}/repeticion/" not in board and f"/mesa/{first}/partida.json" not in board

        # every table finished: the page left open is drawn again with the replay, and anyone may watch
        await database_sync_to_async(finish)(second)
        await waiting.wait_for(lambda: f"/mesa/{first}/repeticion/" in waiting.board)
        assert SECRET not in waiting.board and f"/mesa/{first}/partida.json" in waiting.board
    finally:
        await waiting.close()
    for table_id in (first, second):
        board = await board_of(rows["stranger"], table_id)
        assert "Clasificación final" in board and SECRET not in board
        assert f"/mesa/{table_id}/repeticion/" in board
