"""What is due: a table's next automatic step, in three steps so that a bot thinks with no lock held and no
transaction open.

1. ``prepare_due``: a plain read that decides what is due at (table, seq).  Filling a quick table and
   dealing the next round need no thought and are done at once, in a short locked transaction; a turn
   (a bot's, or a person's whose clock ran out, who is away or whose connection dropped) comes back as
   a ``Thinking``: the seat's view, the level and the seq.
2. ``think``: the bot's decision from that view alone, which may take a difícil bot hundreds of
   milliseconds: the server runs it off its event loop and off its database thread
   (``games.live.timers.run_due_async``), and Celery in its worker.
3. ``apply_due``: a short locked transaction that applies the decision through ``apply`` if the table is
   still at that seq and the step still due; otherwise the decision is dropped.

Every step is a compare-and-set on (table, seq): a duplicate or late call does nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from games.engine import Action, Phase, Play, levels
from games.engine.view import SeatView, seat_view
from games.models import Seat, Table
from games.table import clock
from games.table.actions.common import commit, lock, playing_game, state_fields
from games.table.actions.lifecycle import deal, on_cancel, on_start
from games.table.actions.play import apply, logged
from games.table.errors import ActionError
from games.table.events import TableChanged

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Thinking:
    """A turn due for the bot's decision, as ``prepare_due`` found it: the table and ``seq`` it was due
    at, the seat to move, what that seat may see (never the game state) and the level to play at."""

    table_id: int
    seq: int
    position: int
    view: SeatView
    level: str
    is_bot: bool = True  # False: the bot plays for a person (the clock, away, dropped)


def do_due(table_id: int, seq: int) -> TableChanged | None:
    """Whatever is due at (table, seq): fill a quick table, deal the next round, play a bot's turn, or
    play for a person whose clock ran out, who is away, or whose connection dropped — the three steps
    in a row (the Celery task, the sweeper and the tests call this).

    Idempotent: a duplicate or late call (the table moved on) does nothing.
    """
    step = prepare_due(table_id, seq)
    if not isinstance(step, Thinking):
        return step
    return apply_due(step, think(step))


def prepare_due(table_id: int, seq: int) -> TableChanged | Thinking | None:
    """Step 1: what is due at (table, seq).  The steps that need no thought are done here (and their
    change returned); a turn to play comes back as a ``Thinking``, read without taking any lock."""
    turn_is_bot = Seat.objects.filter(table_id=OuterRef("pk"), position=OuterRef("turn_seat")).values("is_bot")[:1]
    try:  # one read: the row (its seq and its engine snapshot together) and whether a bot is to move
        table = Table.objects.annotate(turn_is_bot=Subquery(turn_is_bot)).filter(pk=table_id).first()
    except (ValueError, TypeError):
        return None
    if table is None or not clock.is_due(table, seq, timezone.now()):
        return None
    if table.status == Table.Status.WAITING or (
        table.status == Table.Status.PLAYING and table.phase == Phase.ROUND_OVER.value
    ):
        return _due_without_thought(table_id, seq)
    if table.status != Table.Status.PLAYING or table.turn_seat is None or table.turn_is_bot is None:
        return None
    # A bot plays at the table's level; for a person, the bot is never worse than normal.
    level = table.bot_level if table.turn_is_bot else levels.at_least_normal(table.bot_level)
    game = playing_game(table)
    view = seat_view(game, table.turn_seat, reasons=False)
    if view.plays_hidden:  # an indias card: nobody chooses it, and its player cannot even see it
        return _play_hidden(table_id, seq)
    return Thinking(table.pk, table.seq, table.turn_seat, view, level, is_bot=table.turn_is_bot)


def _play_hidden(table_id: int, seq: int) -> TableChanged | None:
    """An indias round: the seat to move plays its one card, which it has never seen, as it is — no choice,
    so nobody's decision (neither the bot's nor the clock's)."""
    with transaction.atomic():
        try:
            table = lock(table_id)
        except ActionError:
            return None
        if not clock.is_due(table, seq, timezone.now()) or table.status != Table.Status.PLAYING:
            return None
        game = playing_game(table)
        position = table.turn_seat
        if position is None or not seat_view(game, position, reasons=False).plays_hidden:
            return None
        return apply(table, position, Play(game.hands[position][0]), game=game)


def _due_without_thought(table_id: int, seq: int) -> TableChanged | None:
    """A waiting table whose time is up starts (bots fill it) or, if bots were not to fill it (it waited
    POCHA_WAITING_TTL for its players), is called off with every stake given back; a round's result has
    been up long enough: the next deal."""
    with transaction.atomic():
        try:
            table = lock(table_id)
        except ActionError:
            return None
        if not clock.is_due(table, seq, timezone.now()):
            return None
        if table.status == Table.Status.WAITING:
            if table.fill_at is None:
                return on_cancel(table, Table.CancelReason.NOBODY_CAME)
            return on_start(table)
        if table.status == Table.Status.PLAYING and table.phase == Phase.ROUND_OVER.value:
            game = playing_game(table)
            deal(table, game)
            return commit(table, table.seq, **state_fields(game))
        return None


def think(step: Thinking) -> Action:
    """Step 2: the bot's move for ``step``'s seat, from its view alone (no database, no lock).

    A decision the engine cannot make (a bug in a strategy) falls back to the plain fácil move, so
    that a table never stalls on its bot."""
    try:
        action = levels.decide(step.view, step.level)
        if action in step.view.legal:
            return action
        log.error("table %s: the %s bot chose %s, not a legal move", step.table_id, step.level, action)
    except Exception:
        log.exception("table %s: the %s bot failed to decide", step.table_id, step.level)
    return levels.decide(step.view, levels.FACIL)


def apply_due(step: Thinking, action: Action) -> TableChanged | None:
    """Step 3: play ``action`` for ``step``'s seat if the table is still where the bot saw it (same seq,
    the step still due, the same seat to move); otherwise drop it and change nothing."""
    with transaction.atomic():
        try:
            table = lock(step.table_id)
        except ActionError:
            return None
        now = timezone.now()
        if (
            not clock.is_due(table, step.seq, now)
            or table.status != Table.Status.PLAYING
            or table.turn_seat != step.position
        ):
            return None  # the table moved on (or the person came back) while the bot thought
        game = playing_game(table)
        if step.is_bot:  # (a seat's kind never changes once the game has started)
            return apply(table, step.position, action, game=game, by_bot=True)
        # Locked: a socket of theirs arriving now gives them the seat back (``games.live.presence.refresh``,
        # which locks the seat's row only); read before that, this save would make them away again.
        seat = Seat.objects.select_for_update().get(table=table, position=step.position)
        by_clock = table.turn_deadline is not None and table.turn_deadline <= now
        if by_clock:
            seat.timeouts += 1
            seat.away = seat.away or seat.timeouts >= 2
        if seat.sockets == 0 or seat.left:  # told to them when they are back; not a turn they saw played
            seat.bot_log = [*seat.bot_log, logged(action)]
        seat.save(update_fields=["timeouts", "away", "bot_log"])
        return apply(table, seat.position, action, game=game, by_bot=not by_clock, by_clock=by_clock)


def overdue_steps(limit: int = 500, slack: float = 0.0) -> list[tuple[int, int]]:
    """(table, seq) of every step whose time has come (``slack`` seconds ago at least), oldest first.
    Only a waiting or playing table has a due step (``clock.due_at``); those are found by their status's
    index, and their ``due_at`` read from their rows (it has no index of its own: see ``Table.due_at``)."""
    return list(
        Table.objects.filter(
            status__in=(Table.Status.WAITING, Table.Status.PLAYING),
            due_at__lte=timezone.now() - timedelta(seconds=slack),
        )
        .order_by("due_at")
        .values_list("pk", "seq")[:limit]
    )


def sweep() -> int:
    """Run every overdue step here and now (the Celery beat task, the tests); returns how many tables moved."""
    moved = 0
    for table_id, seq in overdue_steps():
        try:
            if do_due(table_id, seq) is not None:
                moved += 1
        except Exception:
            log.exception("sweep of table %s failed", table_id)
    return moved
