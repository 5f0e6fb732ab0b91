"""When a table's next automatic step is due, and the turn clock's deadline.

The server sets the pace: after a completed trick nobody (no bot, no clock) moves on before the trick's
pause has passed, a round's result stays up ``POCHA_ROUND_PAUSE`` seconds before the next deal, a bot or
an away person is played after ``POCHA_BOT_DELAY``, a person has their phase's seconds, and a person whose
last socket closed has ``POCHA_DISCONNECT_GRACE`` seconds before the bot plays for them.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from games.engine import Phase
from games.engine.schedule import RoundKind
from games.models import Seat, Table


def turn_seconds(table: Table, phase: str) -> int:
    """A person's seconds for one decision in ``phase``, as the table was set up."""
    if phase == Phase.BIDDING.value:
        return table.bid_seconds
    if phase == Phase.CHOOSING_TRUMP.value:
        return table.trump_seconds
    return table.card_seconds


def due_at(
    table: Table, fields: dict[str, Any], pause: float = 0.0, seats: list[Seat] | None = None
) -> tuple[datetime | None, datetime | None]:
    """(when the table's next automatic step is due, the turn clock's deadline) once ``fields`` are saved.
    ``pause``: seconds everyone gets to look at the table (a completed trick) before anyone moves on.
    ``seats``: the table's seats if the caller has them (else the seat to move is read)."""
    status = fields.get("status", table.status)
    now = timezone.now()
    if status == Table.Status.WAITING:
        fill_at = fields.get("fill_at", table.fill_at)
        if fill_at is not None:  # a quick table, or a rematch that bots may fill: bots fill it then
            return fill_at, None
        # Any other waiting table (a new public one, a private one, a rematch without bots) is called off
        # if nobody starts it within POCHA_WAITING_TTL of its last change.
        return now + timedelta(seconds=settings.POCHA_WAITING_TTL), None
    if status != Table.Status.PLAYING:
        return None, None
    if fields.get("phase", table.phase) == Phase.ROUND_OVER.value:
        return now + timedelta(seconds=settings.POCHA_ROUND_PAUSE), None
    turn = fields.get("turn_seat", table.turn_seat)
    if turn is None:
        return None, None
    if seats is not None:
        seat = next((s for s in seats if s.position == turn), None)
    else:
        seat = Seat.objects.filter(table_id=table.pk, position=turn).first()
    if seat is None:
        return None, None
    if seat.is_bot or seat.away or _plays_hidden(table, fields):
        return now + timedelta(seconds=max(settings.POCHA_BOT_DELAY, pause)), None
    deadline = table.turn_deadline
    if deadline is None or "state" in fields:  # every engine change is a new decision with a fresh clock
        deadline = now + timedelta(seconds=pause + turn_seconds(table, fields.get("phase", table.phase)))
    due = deadline
    if seat.sockets == 0 and seat.disconnected_at is not None:
        # The bot plays for a dropped person once their grace is over, but never before the pause: a
        # completed trick stays up for everyone else as long as it would for anyone's move.
        grace = seat.disconnected_at + timedelta(seconds=settings.POCHA_DISCONNECT_GRACE)
        due = min(deadline, max(now + timedelta(seconds=pause), grace))
    return due, deadline


def _plays_hidden(table: Table, fields: dict[str, Any]) -> bool:
    """An indias round's card to play: its player cannot see it, so it is played for them at once."""
    if table.rules == "clasica" or fields.get("phase", table.phase) != Phase.PLAYING.value:
        return False
    number = fields.get("round_number", table.round_number)
    return bool(number) and table.game_rules.spec(table.size, number).kind is RoundKind.INDIAS


def is_due(table: Table, seq: int, now: datetime) -> bool:
    """Whether the table's step at ``seq`` is still its step and its time has come."""
    return table.seq == seq and table.due_at is not None and table.due_at <= now
