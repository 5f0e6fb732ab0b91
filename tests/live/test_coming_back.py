"""Coming back is automatic: a socket of yours arriving at the table makes your seat present and your next
turn yours again, with your full clock — the bot plays for you only while you are gone (or away while still
connected, or after leaving the game).  «Vuelvo» stays for the person the clock made away while they stayed
connected, and for the person who left.

The clock is in the test's hands (``manual_clock``); "30 seconds gone" is the seat's ``disconnected_at`` moved
back, with the bot's steps run meanwhile.  Coming back goes through the real page (Django's client) and a
new socket on the real consumer."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db.models import F
from django.test import Client
from django.utils import timezone

from games.engine import Phase, Suit
from games.live import presence
from games.models import Seat, Table
from games.table import actions

from .helpers import Tab
from .test_clock import (  # noqa: F401 (manual_clock is a fixture)
    advance_to,
    db,
    eventually,
    go_away,
    make_due,
    manual_clock,
    moves,
    new_moves,
    new_table,
    seat_row,
    table_row,
)
from .test_presence import kill, other_process, socket_on

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

GONE = "El bot está jugando por ti."
SEAT = re.compile(r'<li id="seat-(\d+)" class="([^"]*)"(.*?)</li>', re.S)


def my_seat_html(board: str, position: int = 0) -> tuple[str, str]:
    """(the class, the inside) of seat ``position``'s badge on a board."""
    for match in SEAT.finditer(board):
        if int(match.group(1)) == position:
            return match.group(2), match.group(3)
    raise AssertionError(f"no seat {position} on the board:\n{board[:3000]}")


def assert_present_and_mine(board: str) -> None:
    """The board of a person whose turn it is and who plays it: their seat present, no bot for them."""
    classes, inside = my_seat_html(board)
    assert "offline" not in classes.split(), classes
    assert "desconectado" not in inside and "ausente" not in inside
    assert GONE not in board and "Tu turno lo juega el bot." not in board
    assert '"action": "back"' not in board  # no «Vuelvo» needed
    assert "Te toca." in board
    assert "Turno de " not in board


def bot_plays_while_gone(table_id: int, seconds: float = 30) -> Table:
    """``seconds`` pass with seat 0's person gone: the bot plays for them (and the bots for themselves) until
    it has made at least one decision of theirs and it is their turn again."""
    Seat.objects.filter(table_id=table_id, position=0).update(
        disconnected_at=F("disconnected_at") - timedelta(seconds=seconds)
    )
    before = moves(table_id)
    for _ in range(400):
        table = table_row(table_id)
        assert table.status == Table.Status.PLAYING
        theirs = [m for m in new_moves(before, moves(table_id)).values() if m[0] == 0]
        if table.turn_seat == 0 and table.phase != Phase.ROUND_OVER.value and theirs:
            assert all(by_bot in (True, None) and not by_clock for _p, by_clock, by_bot in theirs), theirs
            return table
        seq = make_due(table_id)  # the step's time has come (a bot's pause, a dropped person's grace)
        assert actions.do_due(table_id, seq) is not None
    raise AssertionError("seat 0 never got the turn back")


def open_page(user: Any, table_id: int) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/mesa/{table_id}/")
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("how", ["tab closed", "socket dead, noticed late"])
async def test_back_after_30_seconds_the_next_turn_is_yours(manual_clock, settings, how):
    settings.POCHA_DISCONNECT_GRACE = 5
    table_id, (ana,) = await db(new_table, 3, 1, prefix="vuelta")
    if how == "tab closed":
        tab = Tab(ana, table_id)
        assert await tab.open()
        await tab.wait_for(lambda: bool(tab.board))
        assert (await db(seat_row, table_id, 0)).sockets == 1
        await tab.close()
    else:
        # Her socket is held by a server process that stops answering (a phone's frozen tab, a dead link):
        # it still counts, so her own clock runs out twice and she is away...
        other = await db(other_process)
        await db(socket_on, other, table_id, ana)
        assert await db(presence.refresh, table_id, ana.pk) is True
        await db(go_away, table_id)
        # ... until the process is found dead and her socket stops counting.
        await db(kill, other)
        await db(presence.sweep)
    seat = await eventually(lambda: (s := seat_row(table_id, 0)).sockets == 0 and s, "her socket to stop counting")
    assert seat.disconnected_at is not None
    table = await db(bot_plays_while_gone, table_id)
    seq = table.seq

    # She opens the table again (the lobby's «Jugar ya» sends her to it): the page's first board, drawn
    # before its socket counts, already shows her seat as hers and present.
    page = await db(open_page, ana, table_id)
    assert_present_and_mine(page)
    # Its socket arrives: the seat is hers again, with her full clock, and nobody plays for her.
    tab = Tab(ana, table_id)
    try:
        assert await tab.open()
        await tab.wait_for(lambda: tab.seq == seq)
        seat = await db(seat_row, table_id, 0)
        assert (seat.sockets, seat.disconnected_at, seat.away, seat.timeouts, seat.left) == (1, None, False, 0, False)
        table = await db(table_row, table_id)
        assert table.seq == seq and table.turn_seat == 0  # coming back is not a move
        assert table.turn_deadline is not None and table.due_at == table.turn_deadline
        seconds = {"bidding": table.bid_seconds, "choosing_trump": table.trump_seconds}.get(
            table.phase, table.card_seconds
        )
        assert table.turn_deadline > timezone.now() + timedelta(seconds=seconds / 2)
        assert manual_clock[-1] == (table_id, seq, table.due_at)  # her clock is what is armed
        assert_present_and_mine(tab.board)
        options = tab.game_moves()
        assert options, tab.board
        assert await db(actions.do_due, table_id, seq) is None  # nothing is due: it is her turn to play
        # (what the bot did meanwhile is on her page)
        assert "Mientras no estabas, el bot" in tab.board

        before = await db(moves, table_id)
        await tab.send(options[0])
        await tab.wait_for(lambda: tab.seq > seq)
        played = new_moves(before, await db(moves, table_id))
        assert list(played.values())[0][0] == 0
        assert list(played.values())[0][1:] in ((False, False), (False, None)), played  # hers, not the bot's
    finally:
        await tab.close()


async def test_away_while_connected_keeps_vuelvo_and_the_turn_line_says_the_bot_plays(manual_clock, settings):
    settings.POCHA_BOT_DELAY = 0.5
    table_id, (ana,) = await db(new_table, 3, 1, prefix="sigue")
    tab = Tab(ana, table_id)
    try:
        assert await tab.open()
        await tab.wait_for(lambda: bool(tab.board))
        await db(go_away, table_id)  # her clock ran out twice while her page stayed open
        table = await db(advance_to, table_id, 0)  # her turn again: the bot's, at once
        assert table.turn_deadline is None
        await tab.wait_for(lambda: tab.seq == table.seq)
        assert GONE in tab.board and '"action": "back"' in tab.board  # «Vuelvo»
        assert "Tu turno lo juega el bot." in tab.board and "Te toca." not in tab.board
        assert "Turno de " not in tab.board.split('class="turn-line"', 1)[1].split("</p>", 1)[0]
        assert tab.game_moves()  # (a move of her own brings her back too)
        seat = await db(seat_row, table_id, 0)
        assert (seat.away, seat.sockets) == (True, 1)
        # «Vuelvo»: her seat and her clock back
        await tab.send({"action": "back", "seq": str(table.seq)})
        await tab.wait_for(lambda: tab.seq > table.seq)
        assert_present_and_mine(tab.board)
        assert tab.game_moves()
    finally:
        await tab.close()


async def test_someone_who_left_keeps_the_bot_when_they_open_the_table_again(manual_clock, settings):
    table_id, (ana,) = await db(new_table, 3, 1, prefix="deja")
    tab = Tab(ana, table_id)
    assert await tab.open()
    await tab.wait_for(lambda: bool(tab.board))
    seq = tab.seq
    assert 'class="leave-line"' in tab.board and "Sí, dejar la partida" in tab.board
    await tab.send({"action": "leave"})  # the confirming button's frame (no seq: it means the same on any board)
    await tab.wait_for(lambda: tab.seq > seq)
    assert "Has dejado la partida: el bot juega tu asiento hasta el final y quedas último." in tab.board
    await tab.close()
    await eventually(lambda: seat_row(table_id, 0).sockets == 0, "her socket to stop counting")

    page = await db(open_page, ana, table_id)
    assert "Has dejado la partida: el bot juega tu asiento hasta el final y quedas último." in page
    tab = Tab(ana, table_id)
    try:
        assert await tab.open()
        await tab.wait_for(lambda: bool(tab.board))
        seat = await db(seat_row, table_id, 0)
        assert (seat.sockets, seat.left, seat.away, seat.forfeit) == (1, True, True, "left")
        assert "Has dejado la partida" in tab.board and '"action": "back"' in tab.board
        assert 'class="leave-line"' not in tab.board
    finally:
        await tab.close()


# -- «Mientras no estabas…»: told only to someone who was really gone, and short -----------------------------

NOTICE = "Mientras no estabas"


async def test_the_clock_running_out_while_you_are_here_is_not_while_you_were_away(manual_clock, settings):
    """Her page is open (her socket counts) and her clock runs out: the clock bids for her, then (twice) she is
    away and the bot plays her turns while she watches; «Vuelvo».  She never left the table: at no point does
    her page say «Mientras no estabas…», and nothing is kept to tell her."""
    settings.POCHA_BOT_DELAY = 0.5
    table_id, (ana,) = await db(new_table, 3, 1, prefix="aqui")
    tab = Tab(ana, table_id)
    try:
        assert await tab.open()
        await tab.wait_for(lambda: bool(tab.board))
        assert (await db(seat_row, table_id, 0)).sockets == 1
        await db(go_away, table_id)  # her clock ran out twice, her page open all the while
        seat = await db(seat_row, table_id, 0)
        assert (seat.timeouts, seat.away, seat.bot_log) == (2, True, [])
        table = await db(table_row, table_id)
        await tab.wait_for(lambda: tab.seq == table.seq)
        assert NOTICE not in tab.board and GONE in tab.board
        await db(advance_to, table_id, 0)
        seq = await db(make_due, table_id)
        assert await db(actions.do_due, table_id, seq) is not None  # the bot plays her turn at once: she sees it
        assert (await db(seat_row, table_id, 0)).bot_log == []
        table = await db(table_row, table_id)
        await tab.send({"action": "back", "seq": str(table.seq)})  # «Vuelvo»
        await tab.wait_for(lambda: tab.seq > table.seq)
        assert GONE not in tab.board and NOTICE not in tab.board
    finally:
        await tab.close()


async def test_after_leaving_the_game_the_notice_sums_the_rounds_up(manual_clock, settings):
    """She leaves a whole game on its first turn and closes the page; the bot plays her seat to the end (every
    round's bid, every card).  Opening the table then, the final board tells her what the bot did in one short
    sentence — how many rounds it bid in and how many cards it played, as her seat's log says — not every bid
    in a row."""
    table_id, (ana,) = await db(new_table, 3, 1, prefix="resumen")
    tab = Tab(ana, table_id)
    assert await tab.open()
    await tab.wait_for(lambda: bool(tab.board))
    seq = tab.seq
    await tab.send({"action": "leave"})
    await tab.wait_for(lambda: tab.seq > seq)
    await tab.close()
    await eventually(lambda: seat_row(table_id, 0).sockets == 0, "her socket to stop counting")

    def play_to_the_end() -> Table:
        for _ in range(2000):
            table = table_row(table_id)
            if table.status != Table.Status.PLAYING:
                return table
            assert actions.do_due(table_id, make_due(table_id)) is not None
        raise AssertionError("the game did not end")

    table = await db(play_to_the_end)
    assert table.status == Table.Status.FINISHED
    seat = await db(seat_row, table_id, 0)
    bids = [entry["bid"] for entry in seat.bot_log if "bid" in entry]
    cards = sum(1 for entry in seat.bot_log if "play" in entry)
    rounds = table.round_number
    assert len(bids) == rounds > 3 and cards > rounds, (rounds, seat.bot_log[:5])
    page = await db(open_page, ana, table_id)
    notice = re.search(r'<p class="bot-notice">(.*?)</p>', page, re.S)
    assert notice is not None, page[:3000]
    trumps = [Suit(entry["trump"]) for entry in seat.bot_log if "trump" in entry]  # auctions she won
    chose = ""
    if len(trumps) == 1:
        chose = f", eligió {trumps[0].name_es} de triunfo"
    elif trumps:
        chose = f", eligió el triunfo {len(trumps)} veces"
    assert notice.group(1) == (
        f"Mientras no estabas, el bot pidió en {rounds} rondas{chose} y jugó {cards} cartas por ti."
    ), seat.bot_log
    assert "Clasificación final" in page and 'data-forfeit="left">abandonó</span>' in page
