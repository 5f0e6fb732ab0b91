"""Everyone at a staked quick table leaves, through the real path: three people press «Jugar ya» (the site's
form, 3 players, 100 chips), open the table's page and its socket, and each sends «Sí, dejar la partida»; the bot
plays every seat to the end (the due steps run by the test's clock).  Nobody wins: each socket's final board
says so and where the pot went, every seat is tagged «abandonó» and none is the winner; nobody's balance,
ranking row or level goes up; the books balance (tests/leaderboard/test_forfeit.py has the same end reached
through the actions, and the clock-played variant)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import Sum
from django.test import Client

from accounts import ledger
from accounts.models import Account
from games.models import Seat, Table
from games.table import actions
from leaderboard import skill
from leaderboard.models import PeriodScore, SkillChange

from .helpers import Tab, person
from .test_clock import db, make_due, manual_clock, table_row  # noqa: F401 (manual_clock is a fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

STAKE = 100


def jugar_ya(user: Any) -> int:
    """«Jugar ya» as the lobby's form sends it; the table the site sends them to."""
    client = Client()
    client.force_login(user)
    response = client.post("/jugar/", {"size": "3", "stake": str(STAKE), "rules": "clasica"})
    assert response.status_code == 302, response.status_code
    return int(response.url.rstrip("/").rsplit("/", 1)[1])


def play_to_the_end(table_id: int) -> Table:
    """Nobody plays: every due step (the bot for each seat that was left) until the game is over."""
    for _ in range(3000):
        table = table_row(table_id)
        if table.status != Table.Status.PLAYING:
            return table
        assert actions.do_due(table_id, make_due(table_id)) is not None
    raise AssertionError("the game did not end")


def page(user: Any, table_id: int) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/mesa/{table_id}/")
    assert response.status_code == 200
    return response.content.decode()


async def test_everyone_leaves_a_staked_quick_table_and_nobody_wins(manual_clock):
    users = [await db(person, f"vacia{name}") for name in ("ana", "bea", "cris")]
    table_ids = [await db(jugar_ya, user) for user in users]
    assert len(set(table_ids)) == 1
    table_id = table_ids[0]
    table = await db(table_row, table_id)
    assert table.status == Table.Status.PLAYING and table.is_quick and table.stake == STAKE
    house = (await db(ledger.house_account)).balance
    tabs = [Tab(user, table_id) for user in users]
    try:
        for tab in tabs:
            assert await tab.open()
            await tab.wait_for(lambda tab=tab: bool(tab.board))
        for tab in tabs:  # each presses «Dejar la partida», then «Sí, dejar la partida»
            await tab.send({"action": "leave"})
            await tab.wait_for(lambda tab=tab: "Has dejado la partida" in tab.board)
        seats = await db(lambda: list(Seat.objects.filter(table_id=table_id).values_list("left", "forfeit")))
        assert seats == [(True, "left")] * 3
        table = await db(play_to_the_end, table_id)
        assert table.status == Table.Status.FINISHED
        for tab in tabs:
            await tab.wait_for(lambda tab=tab: "Clasificación final" in tab.board)
            final = tab.board.split('<div class="final"', 1)[1].split("</ol>", 1)[0]
            assert "Nadie gana:" in final and "El bote (300 fichas) va a la casa" in final
            rows = final.split('<ol class="ranking">', 1)[1]
            assert rows.count('data-forfeit="left">abandonó</span>') == rows.count("<li") == 3
            assert "ganador" not in rows and "gana " not in rows and rows.count("pierde 100 fichas") == 3
            assert rows.count("<li>3. ") == 3  # all share the last place, the top score's seat too
    finally:
        for tab in tabs:
            await tab.close()
    # the page, opened afterwards, says the same
    assert "Nadie gana:" in await db(page, users[0], table_id)

    def books() -> dict[str, Any]:
        return {
            "balances": [ledger.balance(user.pk) for user in users],
            "house": ledger.house_account().balance,
            "pot": Account.objects.get(kind=Account.Kind.POT, table_id=table_id).balance,
            "audit": ledger.audit(),
            "sum": Account.objects.aggregate(t=Sum("balance"))["t"] or 0,
            "rows": sorted(PeriodScore.objects.filter(user__in=users).values_list("period", "net", "games", "wins")),
            "levels": sorted(SkillChange.objects.filter(table_id=table_id).values_list("before", "after")),
        }

    seen = await db(books)
    assert seen["balances"] == [5000 - STAKE] * 3
    assert seen["house"] == house + 3 * STAKE and seen["pot"] == 0
    assert seen["audit"] == [] and seen["sum"] == 0
    assert seen["rows"] == sorted([(period, -STAKE, 1, 0) for period in ("all", "month", "week")] * 3)
    assert seen["levels"] == [(skill.NEW_LEVEL, skill.NEW_LEVEL)] * 3  # rated, and held where it was
