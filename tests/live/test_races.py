"""Requests that arrive at the same moment: exactly one is applied, the others are refused as stale.

Threads call the real ``games.table.actions`` functions, each on its own database connection, released
together by a ``threading.Barrier`` (connections are opened before the barrier, so the race is over
the table row's lock, not over connecting).  On PostgreSQL the row lock (``SELECT ... FOR UPDATE``)
serialises them; on SQLite the write lock taken when the transaction begins (``IMMEDIATE``) does.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from games.engine import Bid, Phase, Play, default_action
from games.engine.snapshot import load
from games.models import Move, Round, Seat, Table
from games.table import actions

from .helpers import (
    Tab,
    is_board,
    person,
    seated_table,
    settle,
    table_fingerprint,
)

pytestmark = pytest.mark.django_db(transaction=True)

STALE_FLASH = "Tu pantalla no estaba al día: la mesa ha cambiado. Mira de nuevo."


def race(*calls: Callable[[], Any]) -> list[tuple[str, Any]]:
    """Run the calls in threads released at once; each result is ("ok", value) or ("refused", ActionError)."""
    barrier = threading.Barrier(len(calls))
    results: list[tuple[str, Any]] = [("missing", None)] * len(calls)

    def run(i: int, call: Callable[[], Any]) -> None:
        try:
            connection.ensure_connection()
            barrier.wait(timeout=10)
            results[i] = ("ok", call())
        except actions.ActionError as error:
            results[i] = ("refused", error)
        except BaseException as error:  # noqa: BLE001  (reported by the assertions below)
            results[i] = ("crashed", error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a racing request never finished"
    return results


def one_applied_one_stale(results: list[tuple[str, Any]]) -> int:
    """Exactly one call was applied and every other one refused as stale; the index of the applied one."""
    kinds = [kind for kind, _value in results]
    assert kinds.count("ok") == 1, results
    assert all(
        kind == "refused" and value.code == "stale" and value.resync for kind, value in results if kind != "ok"
    ), results
    return kinds.index("ok")


def two_legal_actions(game: Any) -> list[Any]:
    """Two different legal actions for the seat to move when there are two, else the same one twice."""
    legal = list(game.legal_actions(game.turn))
    return [legal[0], legal[-1]]


def test_two_tabs_sending_moves_for_the_same_turn_at_once() -> None:
    """The same person's two moves for one turn (the same one, or two different ones): one goes in."""
    table_id, users = seated_table(4, 4, prefix="race")
    for round_trip in range(12):  # bids of round 1, then plays; and the same again for round 2's bids
        table = Table.objects.get(pk=table_id)
        game = load(table.state)
        user = users[table.turn_seat]
        same = round_trip % 3 == 0
        first, second = [default_action(game)] * 2 if same else two_legal_actions(game)
        before = table_fingerprint(table_id)
        results = race(
            lambda: actions.do_action(table_id, user, first, table.seq),
            lambda: actions.do_action(table_id, user, second, table.seq),
        )
        winner = one_applied_one_stale(results)
        applied = (first, second)[winner]
        after = table_fingerprint(table_id)
        assert after["seq"] == before["seq"] + 1 == results[winner][1].seq
        if isinstance(applied, Bid):
            assert after["moves"][:-1] == before["moves"]
            last = Move.objects.filter(table_id=table_id).order_by("-seq").first()
            assert (last.seat, last.kind, last.value) == (game.turn, Move.Kind.BID, str(applied.amount))
        else:
            assert isinstance(applied, Play)
            assert after["moves"][:-1] == before["moves"]
            last = Move.objects.filter(table_id=table_id).order_by("-seq").first()
            assert (last.seat, last.kind, last.value) == (game.turn, Move.Kind.PLAY, str(applied.card))
            assert last.seq == after["seq"]
    # what was stored replays to the state on the table row
    table = Table.objects.get(pk=table_id)
    game = load(table.state)
    assert table.round_number == game.number and game.phase in (Phase.BIDDING, Phase.PLAYING)
    assert Move.objects.filter(table_id=table_id).count() == 12


def test_a_stale_move_and_a_fresh_one_at_once() -> None:
    """One tab is a move behind: whatever the order they land in, the stale one never applies."""
    table_id, users = seated_table(4, 4, prefix="race")
    table = Table.objects.get(pk=table_id)
    first = default_action(load(table.state))
    actions.do_action(table_id, users[table.turn_seat], first, table.seq)
    table = Table.objects.get(pk=table_id)
    user = users[table.turn_seat]
    action = default_action(load(table.state))
    results = race(
        lambda: actions.do_action(table_id, user, action, table.seq - 1),
        lambda: actions.do_action(table_id, user, action, table.seq),
    )
    assert results[0][0] == "refused" and results[0][1].code == "stale"
    assert results[1][0] == "ok"
    assert Table.objects.get(pk=table_id).seq == table.seq + 1


def test_two_people_taking_the_last_seat_at_once() -> None:
    """Two people sit at the one free seat: one gets it and starts the game, the other is told it is full."""
    table_id, _users = seated_table(4, 3, prefix="race")
    late = [person("race-late-a"), person("race-late-b")]
    results = race(*[lambda user=user: actions.do_take_seat(table_id, user) for user in late])
    kinds = [kind for kind, _value in results]
    assert sorted(kinds) == ["ok", "refused"], results
    refused = next(value for kind, value in results if kind == "refused")
    assert refused.code in ("full", "not_waiting"), refused
    seated = late[kinds.index("ok")]
    assert Seat.objects.filter(table_id=table_id).count() == 4
    assert Seat.objects.filter(table_id=table_id, user=seated).exists()
    assert not Seat.objects.filter(table_id=table_id, user=late[1 - kinds.index("ok")]).exists()
    assert Table.objects.get(pk=table_id).status == Table.Status.PLAYING
    assert Round.objects.filter(table_id=table_id).count() == 1  # dealt once


def test_a_due_step_run_twice_at_once_plays_once(settings: Any) -> None:
    """A bot's turn whose timer fired twice (a task and the sweeper, say): one move, not two."""
    settings.POCHA_BOT_DELAY = 0
    table_id, users = seated_table(4, 1, prefix="race")
    actions.do_start(table_id, users[0])
    races = 0
    for _ in range(20):
        table = Table.objects.get(pk=table_id)
        seat = Seat.objects.get(table_id=table_id, position=table.turn_seat)
        if not seat.is_bot:
            actions.do_action(table_id, users[0], default_action(load(table.state)), table.seq)
            continue
        assert table.due_at is not None
        before = table_fingerprint(table_id)
        results = race(lambda: actions.do_due(table_id, table.seq), lambda: actions.do_due(table_id, table.seq))
        assert [kind for kind, _value in results] == ["ok", "ok"], results
        applied = [value for _kind, value in results if value is not None]
        assert len(applied) == 1, results  # the other found the table had moved on: it did nothing
        after = table_fingerprint(table_id)
        assert after["seq"] == before["seq"] + 1
        assert after["moves"][:-1] == before["moves"] and after["moves"][-1][0] == after["seq"]
        races += 1
    assert races >= 10


async def test_two_tabs_of_one_person_send_the_same_move_at_once() -> None:
    """Through the real consumer: two tabs of the same person send the move at the same moment."""
    table_id, users = await database_sync_to_async(seated_table)(4, 4, prefix="tabs")
    table = await database_sync_to_async(Table.objects.get)(pk=table_id)
    mover = users[table.turn_seat]
    tabs = [Tab(mover, table_id), Tab(mover, table_id)]
    witness = Tab(users[(table.turn_seat + 1) % 4], table_id)
    try:
        for tab in tabs + [witness]:
            assert await tab.open()
        seq = await settle(tabs + [witness], table_id)
        before = await database_sync_to_async(table_fingerprint)(table_id)
        counts = [len(t.frames) for t in tabs + [witness]]
        move = tabs[0].game_moves()[0]
        assert tabs[1].game_moves()[0] == move
        await asyncio.gather(tabs[0].send(move), tabs[1].send(move))
        for tab in tabs + [witness]:
            await tab.wait_for(lambda tab=tab: tab.seq == seq + 1)
        await tabs[0].wait_for(lambda: sum(len(t.flashes(n)) for t, n in zip(tabs, counts)) >= 1)
        await asyncio.sleep(0.2)
        after = await database_sync_to_async(table_fingerprint)(table_id)
        assert after["seq"] == before["seq"] + 1 and after["moves"][:-1] == before["moves"]
        assert after["moves"][-1][0] == after["seq"] and after["moves"][-1][2] == "b"
        flashes = [m for t, n in zip(tabs, counts) for m in t.flashes(n)]
        assert flashes == [STALE_FLASH], flashes  # one of the two tabs is told, and only once
        new = witness.frames[counts[2] :]
        assert len(new) == 1 and is_board(new[0])  # the other seat saw one move
    finally:
        for tab in tabs + [witness]:
            await tab.close()
