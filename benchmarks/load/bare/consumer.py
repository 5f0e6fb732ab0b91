"""The bare game: four seats take turns; any card from the seat to move is a move.

A move frame ``{"action": "play", "value": "<card>", "seq": N}`` (the site's format) is one transaction —
``SELECT ... FOR UPDATE`` of the table row, ``INSERT`` of the move, ``UPDATE`` of the seq and turn — then
one ``group_send`` from the consumer; each of the table's four sockets renders its board from the event
(no query) and sends it.  A stale seq or a move out of turn is answered with a ``#flash`` to the mover.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import connection, transaction
from django.template.loader import render_to_string

from bare.schema import MOVE, TABLE

log = logging.getLogger(__name__)

SEATS = 4
CARDS = 8  # cards per hand: a round is SEATS * CARDS moves
MOVES_PER_ROUND = SEATS * CARDS
SUITS = (("o", "oros", "✹"), ("c", "copas", "♥"), ("e", "espadas", "⚔"), ("b", "bastos", "♣"))
RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
DECK = [(rank, suit) for suit in SUITS for rank in RANKS]
NAMES = ("Lola", "Paco", "Carmen", "Manolo")


class Refused(Exception):
    pass


def read_table(table_id: int) -> tuple[int, int] | None:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT seq, turn FROM {TABLE} WHERE id = %s", [table_id])
        row = cursor.fetchone()
    return (int(row[0]), int(row[1])) if row else None


def do_move(table_id: int, seat: int, action: str, value: str, seq: int) -> tuple[int, int]:
    """The move, in one transaction; the table's new (seq, turn)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SELECT seq, turn FROM {TABLE} WHERE id = %s FOR UPDATE", [table_id])
        row = cursor.fetchone()
        if row is None:
            raise Refused("Esa mesa no existe.")
        current, turn = int(row[0]), int(row[1])
        if seq != current:
            raise Refused("Tu pantalla no estaba al día: la mesa ha cambiado. Mira de nuevo.")
        if seat != turn:
            raise Refused("No es tu turno.")
        cursor.execute(
            f"INSERT INTO {MOVE} (table_id, seq, seat, action, value) VALUES (%s, %s, %s, %s, %s)",
            [table_id, current + 1, seat, action[:8], value[:8]],
        )
        cursor.execute(
            f"UPDATE {TABLE} SET seq = %s, turn = %s WHERE id = %s", [current + 1, (turn + 1) % SEATS, table_id]
        )
    return current + 1, (turn + 1) % SEATS


def card(index: int) -> dict[str, Any]:
    rank, (code, name, symbol) = DECK[index % len(DECK)]
    return {"code": f"{rank}{code}", "rank": rank, "suit": code, "symbol": symbol, "name": f"{rank} de {name}"}


def board_context(table_id: int, seat: int, seq: int, turn: int) -> dict[str, Any]:
    """What the seat sees at ``seq``, made up from the numbers alone (a round is 32 moves): the four
    players with bids, tricks and totals, the trick on the felt, the seat's hand (cards to play if it
    is its turn) and the scoreboard of the rounds played."""
    number, done = divmod(seq, MOVES_PER_ROUND)
    in_hand = CARDS - done // SEATS
    my_turn = seat == turn
    base = table_id * 7 + number * 5 + seat * CARDS
    hand = [{**card(base + i), "playable": my_turn} for i in range(in_hand)]
    results = []
    totals = [0] * SEATS
    for r in range(number):
        rows = []
        for p in range(SEATS):
            bid, tricks = (r + p) % 3, (r * p + 1) % 3
            points = 10 + 5 * bid if bid == tricks else -5 * abs(bid - tricks)
            totals[p] += points
            rows.append({"bid": bid, "tricks": tricks, "points": points, "made": bid == tricks})
        suit = SUITS[r % 4]
        results.append({"number": r + 1, "suit": suit[0], "trump": suit[1], "symbol": suit[2], "rows": rows})
    players = [
        {
            "position": p,
            "name": NAMES[p],
            "is_me": p == seat,
            "is_turn": p == turn,
            "is_dealer": p == number % SEATS,
            "bid": (number + p) % 3,
            "tricks": (done // SEATS + p) % 2,
            "total": totals[p],
            "hand_size": CARDS - (done + SEATS - 1 - p) // SEATS,
        }
        for p in range(SEATS)
    ]
    trick = [{"seat": (turn - k - 1) % SEATS, "card": card(base + 20 + k)} for k in range(done % SEATS)]
    return {
        "table_id": table_id,
        "seq": seq,
        "round": number + 1,
        "players": players,
        "trick": trick,
        "hand": hand,
        "hand_count": in_hand,
        "my_turn": my_turn,
        "turn_name": NAMES[turn],
        "results": results,
    }


class BareTableConsumer(AsyncWebsocketConsumer):
    table_id: int
    seat: int
    group: str
    sent_seq = -1

    async def connect(self) -> None:
        kwargs = self.scope["url_route"]["kwargs"]
        self.table_id, self.seat = int(kwargs["table_id"]), int(kwargs["seat"])
        if not 0 <= self.seat < SEATS:
            await self.close(code=4404)
            return
        self.group = f"bare-table-{self.table_id}"
        await self.accept()
        await self.channel_layer.group_add(self.group, self.channel_name)
        row = await database_sync_to_async(read_table)(self.table_id)
        if row is None:
            await self.close(code=4404)
            return
        await self.send_board(*row)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            data = json.loads(text_data or "")
            action, value, seq = str(data["action"]), str(data["value"]), int(data["seq"])
        except (ValueError, TypeError, KeyError):
            await self.send_flash("Mensaje no válido.")
            return
        try:
            seq, turn = await database_sync_to_async(do_move)(self.table_id, self.seat, action, value, seq)
        except Refused as refused:
            await self.send_flash(str(refused))
            return
        await self.channel_layer.group_send(self.group, {"type": "table.changed", "seq": seq, "turn": turn})

    async def table_changed(self, event: dict[str, Any]) -> None:
        try:
            await self.send_board(int(event["seq"]), int(event["turn"]))
        except Exception:
            log.exception("bare table %s: redraw failed", self.table_id)

    async def send_board(self, seq: int, turn: int) -> None:
        if seq > self.sent_seq:
            self.sent_seq = seq
            ctx = board_context(self.table_id, self.seat, seq, turn)
            await self.send(text_data=render_to_string("bare/board.html", ctx))

    async def send_flash(self, message: str) -> None:
        await self.send(text_data=render_to_string("bare/flash.html", {"message": message}))
