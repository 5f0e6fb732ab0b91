"""Bots people respect: fácil, normal and difícil, chosen per table, and a bot that thinks without
holding anything up.

A bot's turn is three steps (``actions.prepare_due``, ``actions.think``, ``actions.apply_due``): the
thinking runs with no transaction open and no row locked, and on the server's own loop it runs on
neither the event loop nor the database thread.  The last test plays a whole game of three difícil
bots and a person through the real socket and the real clock of the mode (the in-process timers, or
a Celery worker over Redis in services mode) while the event loop is pinged every 20 ms.
"""

from __future__ import annotations

import asyncio
import gc
import re
import threading
import time
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.db import connection, connections, transaction
from django.test import Client
from django.utils import timezone

from games.engine import levels
from games.engine.levels import DIFICIL, FACIL, NORMAL
from games.live import presence, timers
from games.models import Round, Seat, Table
from games.read import board as board_view
from games.table import actions
from games.table.actions import rematch

from .helpers import Player, check_the_log, make_user, person, play_to_the_end, table_fingerprint, wait_for
from .test_clock import fingerprint, make_due, manual_clock, past, seat_row, table_row  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

REAL_DECIDE = levels.decide


def started_table(level: str, size: int = 3, *, prefix: str = "lv") -> tuple[int, Any]:
    """A private table at ``level`` with one person (seat 0), started: bots in the other seats."""
    host = person(f"{prefix}-host")
    table = actions.do_create_private_table(host, size, 0, True, bot_level=level)
    actions.do_start(table.pk, host)
    assert table_row(table.pk).status == Table.Status.PLAYING
    return table.pk, host


def record_levels(monkeypatch: Any, calls: list[tuple[str, int | None]]) -> None:
    """``levels.decide`` records (level, seat) and answers as fácil does (fast, whatever the level)."""

    def recording(view: Any, level: str, **kwargs: Any) -> Any:
        calls.append((level, view.seat))
        return REAL_DECIDE(view, FACIL)

    monkeypatch.setattr(levels, "decide", recording)


def bots_play_until(table_id: int, position: int) -> Table:
    """Bots (and away people) play, each made due now, until it is ``position``'s turn."""
    for _ in range(400):
        table = table_row(table_id)
        assert table.status == Table.Status.PLAYING
        if table.turn_seat == position:
            return table
        assert actions.do_due(table_id, make_due(table_id)) is not None
    raise AssertionError(f"seat {position} never got the turn")


# -- the level: chosen per table, stored, shown ----------------------------------------------


def test_the_level_is_stored_and_every_bot_shows_it(manual_clock):
    table_id, host = started_table(DIFICIL, size=4)
    assert table_row(table_id).bot_level == DIFICIL
    rendered = board_view.render_board(table_id, host.pk, "es")
    assert rendered is not None
    html = rendered[1]
    assert html.count("bot · difícil") == 3, re.findall(r'<span class="tag bot-tag[^>]*>[^<]*</span>', html)
    assert html.count('data-bot-level="dificil"') == 3
    english = board_view.render_board(table_id, host.pk, "en")
    assert english is not None and english[1].count("bot · hard") == 3
    # and the table page itself
    client = Client()
    client.force_login(host)
    page = client.get(f"/mesa/{table_id}/").content.decode()
    assert page.count("bot · difícil") == 3


def test_quick_and_open_tables_have_normal_bots(manual_clock):
    quick = actions.do_quick_play(person("rapida"), 4)
    assert quick.bot_level == NORMAL
    assert actions.do_create_table(person("abierta"), 3).bot_level == NORMAL
    actions.do_start(quick.pk, Seat.objects.get(table=quick, position=0).user)
    html = board_view.render_board(quick.pk, None, "es")[1]
    assert html.count("bot · normal") == 3


def test_the_private_table_form_takes_a_level_and_refuses_a_forged_one(manual_clock):
    host = person("anfitrion")
    client = Client()
    client.force_login(host)
    lobby = client.get("/").content.decode()
    form = lobby[lobby.index('class="private-table"') :]
    form = form[: form.index("</form>")]
    assert '<select name="bot_level">' in form
    assert re.findall(r'<option value="(\w+)"( selected)?>([^<]+)</option>', form[form.index("bot_level") :]) == [
        ("facil", "", "fácil"),
        ("normal", " selected", "normal"),
        ("dificil", "", "difícil"),
    ]

    response = client.post("/mesas/privada/", {"size": "3", "stake": "0", "bots": "on", "bot_level": "dificil"})
    assert response.status_code == 302
    table = Table.objects.get(pk=int(re.search(r"/mesa/(\d+)/", response["Location"]).group(1)))
    assert table.bot_level == DIFICIL and not table.is_public
    page = client.get(f"/mesa/{table.pk}/").content.decode()
    assert "los bots (nivel difícil) ocupan los asientos libres" in page
    # a friend's invitation link says so too
    friend = Client()
    friend.force_login(person("amiga"))
    assert "los bots (nivel difícil)" in friend.get(f"/mesa/privada/{table.code}/").content.decode()
    actions.do_cancel(table.pk, host)

    # no level given: normal
    response = client.post("/mesas/privada/", {"size": "3", "stake": "0", "bots": "on"})
    table = Table.objects.get(pk=int(re.search(r"/mesa/(\d+)/", response["Location"]).group(1)))
    assert table.bot_level == NORMAL
    actions.do_cancel(table.pk, host)

    tables = Table.objects.count()
    for forged in ("imposible", "muy difícil", "", "dificil'; --"):
        response = client.post("/mesas/privada/", {"size": "3", "stake": "100", "bots": "on", "bot_level": forged})
        assert response.status_code == 302 and response["Location"] == "/", forged
        assert Table.objects.count() == tables, forged  # nothing created, no stake taken
        assert "Ese nivel de bots no existe" in client.get("/").content.decode()
    with pytest.raises(actions.ActionError) as refused:
        actions.do_create_private_table(host, 3, 0, True, bot_level="experto")
    assert refused.value.code == "bot_level"
    assert Table.objects.count() == tables


def test_a_rematch_keeps_the_level(manual_clock):
    table_id, host = started_table(FACIL)
    assert play_to_the_end(table_id).status == Table.Status.FINISHED
    new = rematch.do_offer_rematch(table_id, host)
    assert new.bot_level == FACIL and new.rematch_of_id == table_id


def test_demo_table_takes_a_level(manual_clock, monkeypatch):
    from io import StringIO

    from django.core.management import CommandError, call_command

    calls: list[tuple[str, int | None]] = []
    record_levels(monkeypatch, calls)
    out = StringIO()
    call_command(
        "demo_table",
        "--user",
        "demo",
        "--password",
        "x-cuarenta-bazas",
        "--round",
        "2",
        "--bot-level",
        "difícil",
        stdout=out,
    )
    table = table_row(int(out.getvalue().strip()))
    assert table.bot_level == DIFICIL and table.round_number == 2
    bots = [lv for lv, seat in calls if seat != 0]
    assert bots and set(bots) == {DIFICIL}  # the bots, through the due path; the person plays fácil
    with pytest.raises(CommandError):
        call_command("demo_table", "--user", "demo", "--round", "1", "--bot-level", "imposible", stdout=out)


# -- who plays at which level -----------------------------------------------------------------


@pytest.mark.parametrize("level, for_a_person", [(FACIL, NORMAL), (NORMAL, NORMAL), (DIFICIL, DIFICIL)])
def test_bots_play_at_the_tables_level_and_for_people_at_normal_at_least(
    manual_clock, monkeypatch, level, for_a_person
):
    calls: list[tuple[str, int | None]] = []
    record_levels(monkeypatch, calls)
    table_id, _host = started_table(level)
    bot_calls: list[tuple[str, int | None]] = []

    def person_step(**due: bool) -> None:
        """The bots play up to the person's turn; then the due step for the person, alone, is recorded."""
        bots_play_until(table_id, 0)
        bot_calls.extend(calls)
        calls.clear()
        assert actions.do_due(table_id, make_due(table_id, **due)) is not None
        assert calls == [(for_a_person, 0)]
        calls.clear()

    # the person's clock runs out, twice: the clock plays for them (and then they are away)
    for timeout in (1, 2):
        person_step(expire_turn=True)
        assert seat_row(table_id, 0).timeouts == timeout
    assert seat_row(table_id, 0).away
    # away: the bot plays their turn when it is due, at the same level
    person_step()
    # a dropped connection (their grace ran out) too
    Seat.objects.filter(table_id=table_id, position=0).update(
        away=False, timeouts=0, sockets=0, disconnected_at=past(60)
    )
    person_step()
    assert seat_row(table_id, 0).bot_log  # told to them once they are back
    # and every bot seat played at the table's own level
    assert bot_calls and {lv for lv, _seat in bot_calls} == {level} and 0 not in {seat for _lv, seat in bot_calls}


# -- thinking outside the transaction ---------------------------------------------------------


def test_a_stale_decision_is_dropped_and_changes_nothing(manual_clock):
    table_id, host = started_table(NORMAL)
    table = bots_play_until(table_id, 1)  # a bot's turn
    step = actions.prepare_due(table_id, make_due(table_id))
    assert isinstance(step, actions.Thinking) and step.position == 1 and step.level == NORMAL
    assert step.view.seat == 1 and step.view.legal  # the bot is given its seat's view, no more
    decision = actions.think(step)
    # meanwhile the table moved on (the sweeper got there first)
    assert actions.do_due(table_id, step.seq) is not None
    before = fingerprint(table_id), table_fingerprint(table_id)
    assert actions.apply_due(step, decision) is None
    assert (fingerprint(table_id), table_fingerprint(table_id)) == before
    assert table_row(table_id).seq == table.seq + 1


def test_a_decision_for_a_person_who_came_back_meanwhile_is_dropped(manual_clock):
    table_id, host = started_table(NORMAL)
    bots_play_until(table_id, 0)
    # their connection dropped and the grace ran out: the bot is about to play for them
    Seat.objects.filter(table_id=table_id, position=0).update(sockets=0, disconnected_at=past(60))
    step = actions.prepare_due(table_id, make_due(table_id))
    assert isinstance(step, actions.Thinking) and step.position == 0
    decision = actions.think(step)
    # while the bot thought, they came back: same seq, but their own clock is what is due now
    presence.open_socket(table_id, host.pk, "back.1")
    assert table_row(table_id).seq == step.seq and table_row(table_id).due_at > timezone.now()
    before = fingerprint(table_id), table_fingerprint(table_id), seat_row(table_id, 0).bot_log
    assert actions.apply_due(step, decision) is None
    assert (fingerprint(table_id), table_fingerprint(table_id), seat_row(table_id, 0).bot_log) == before


def test_thinking_holds_no_transaction_and_no_lock(manual_clock, monkeypatch):
    table_id, _host = started_table(DIFICIL)
    seen: list[dict[str, Any]] = []

    def decide_while_another_locks(view: Any, level: str, **kwargs: Any) -> Any:
        # another process's transaction locks the row at once (on SQLite, BEGIN IMMEDIATE: the
        # database's write lock) while this bot is thinking
        outcome: dict[str, Any] = {"in_atomic_block": connection.in_atomic_block}

        def other() -> None:
            started = time.monotonic()
            try:
                with transaction.atomic():
                    Table.objects.select_for_update(nowait=True).get(pk=table_id)
                outcome["locked_in"] = time.monotonic() - started
            except Exception as error:  # noqa: BLE001 - reported below
                outcome["error"] = repr(error)
            finally:
                connections.close_all()

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(timeout=5)
        outcome["done"] = not thread.is_alive()
        seen.append(outcome)
        return REAL_DECIDE(view, FACIL)

    monkeypatch.setattr(levels, "decide", decide_while_another_locks)
    seq = table_row(table_id).seq
    while len(seen) < 3:  # bots' turns, and the person's clock running out
        assert actions.do_due(table_id, make_due(table_id, expire_turn=True)) is not None
    for outcome in seen:
        assert outcome["in_atomic_block"] is False, outcome
        assert outcome["done"] and "error" not in outcome and outcome["locked_in"] < 1, outcome
    assert table_row(table_id).seq == seq + 3


def _slow_recording_decide(monkeypatch: Any, threads: list[int], seconds: float) -> None:
    def slow(view: Any, level: str, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:  # a difícil search: pure Python, holding the interpreter
            sum(i * i for i in range(200))
        return REAL_DECIDE(view, FACIL)

    monkeypatch.setattr(levels, "decide", slow)


async def lateness_while(work: Any, period: float = 0.02) -> tuple[Any, float]:
    """Run ``work`` while pinging the loop every ``period``; returns its result and the worst lateness."""
    worst = 0.0
    done = asyncio.Event()

    async def ping() -> None:
        nonlocal worst
        while not done.is_set():
            start = time.perf_counter()
            await asyncio.sleep(period)
            worst = max(worst, time.perf_counter() - start - period)

    gc.freeze()  # see the whole game below
    pinger = asyncio.create_task(ping())
    try:
        result = await work
    finally:
        done.set()
        await pinger
        gc.unfreeze()
    return result, worst


@pytest.mark.asyncio
async def test_on_the_servers_loop_the_bot_thinks_off_the_loop_and_off_the_database_thread(manual_clock, monkeypatch):
    table_id, _host = await database_sync_to_async(started_table)(DIFICIL)
    await database_sync_to_async(bots_play_until)(table_id, 1)
    seq = await database_sync_to_async(make_due)(table_id)
    threads: list[int] = []
    thought = 0.6  # a difícil bot's hard cap: a thought on the loop would hold a ping up this long
    _slow_recording_decide(monkeypatch, threads, thought)
    db_thread = await database_sync_to_async(threading.get_ident)()

    async def meanwhile_the_database_thread_answers() -> float:
        await asyncio.sleep(0.1)  # the bot is thinking now: were it on the database thread, this would wait 0.5 s
        start = time.perf_counter()
        await database_sync_to_async(lambda: Table.objects.filter(pk=table_id).count())()
        return time.perf_counter() - start

    async def both() -> Any:
        return await asyncio.gather(timers.run_due_async(table_id, seq), meanwhile_the_database_thread_answers())

    (_none, db_wait), worst = await lateness_while(both())
    assert threads and threading.get_ident() not in threads and db_thread not in threads
    assert db_wait < 0.3, f"the database thread waited {db_wait:.3f} s for the bot"
    assert worst < thought / 2, f"the event loop was {worst * 1000:.0f} ms late"
    assert (await database_sync_to_async(table_row)(table_id)).seq == seq + 1

    # the in-process sweeper runs overdue bot turns the same way
    threads.clear()
    seq = await database_sync_to_async(make_due)(table_id)
    _none, worst = await lateness_while(timers.sweep_async())
    assert threads and threading.get_ident() not in threads and db_thread not in threads
    assert worst < thought / 2, f"the event loop was {worst * 1000:.0f} ms late"
    assert (await database_sync_to_async(table_row)(table_id)).seq == seq + 1


@pytest.mark.asyncio
async def test_the_timer_and_the_sweeper_finding_the_same_turn_think_once(manual_clock, monkeypatch):
    table_id, _host = await database_sync_to_async(started_table)(NORMAL)
    await database_sync_to_async(bots_play_until)(table_id, 1)
    seq = await database_sync_to_async(make_due)(table_id)
    threads: list[int] = []
    _slow_recording_decide(monkeypatch, threads, 0.2)
    await asyncio.gather(timers.run_due_async(table_id, seq), timers.run_due_async(table_id, seq))
    assert len(threads) == 1
    assert (await database_sync_to_async(table_row)(table_id)).seq == seq + 1


# -- a whole game: three difícil bots, one person, every thought off the event loop ------------------


@pytest.mark.asyncio
async def test_three_dificil_bots_and_a_person_play_a_whole_game_thinking_off_the_loop(
    settings, celery_clock_worker, monkeypatch
):
    """Every difícil decision of a whole game runs on a thread that is neither the event loop's nor the
    socket path's database thread (a thought on the loop would stop every socket of the process while it
    lasts); which thread ran each is recorded, not how late the loop was, which depends on the machine."""
    settings.POCHA_BOT_DELAY = 0.01
    decisions: list[tuple[str, int]] = []

    def watched(view: Any, level: str, **kwargs: Any) -> Any:
        decisions.append((level, threading.get_ident()))
        return REAL_DECIDE(view, level, **kwargs)

    monkeypatch.setattr(levels, "decide", watched)
    loop_thread = threading.get_ident()
    db_thread = await database_sync_to_async(threading.get_ident)()
    user = await make_user("valiente")
    table = await database_sync_to_async(actions.do_create_private_table)(user, 4, 0, True, bot_level=DIFICIL)

    player = Player(user, table.pk)
    assert await player.connect()
    await player.send({"action": "start", "seq": player.seq})
    await wait_for(lambda: "seat-score" in player.board, player)
    assert player.board.count("bot · difícil") == 3
    moves = 0
    while 'class="ranking"' not in player.board:
        options = player.game_moves()
        if options:
            await player.send(options[0])  # the first legal move offered
            moves += 1
        await wait_for(lambda: player.game_moves() != options or 'class="ranking"' in player.board, player, timeout=60)
    await player.close()

    table = await database_sync_to_async(table_row)(table.pk)
    rounds = await database_sync_to_async(Round.objects.filter(table_id=table.pk).count)()
    assert table.status == Table.Status.FINISHED and rounds == 19 and moves > 19
    await database_sync_to_async(check_the_log)(table.pk)  # the log replays to the stored totals
    # every bot decision was difícil, made through the due path, off the loop (and off the DB thread)
    assert decisions and {level for level, _thread in decisions} == {DIFICIL}
    thinking_threads = {thread for _level, thread in decisions}
    assert loop_thread not in thinking_threads
    if settings.POCHA_CELERY_CLOCK:
        assert celery_clock_worker.tasks.count("games.tasks.run_due") >= 18 * 3
    else:
        assert db_thread not in thinking_threads
