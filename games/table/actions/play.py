"""The game: a person's bid, trump choice or card, «Vuelvo», and ``apply``, the one path every move takes (a
person's, a bot's, the clock's): the engine's check, the move's rows, the round's end and the game's."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from games.engine import Action, Bid, ChooseTrump, GameState, Phase, Play, PochaError
from games.models import Round, Seat, Table
from games.table import access, history, rows
from games.table.actions.common import (
    User,
    check_seq,
    commit,
    lock,
    lock_and_seat,
    lock_person,
    playing_game,
    seat_of,
    state_fields,
)
from games.table.actions.lifecycle import deal, on_finish
from games.table.errors import ActionError
from games.table.events import TableChanged


def do_action(table_id: int, user: User, action: Action, seq: int | None) -> TableChanged:
    """A person's bid, trump choice or card.  Refused as late once their turn's clock has run out (the due
    step, armed at that deadline, plays for them)."""
    with transaction.atomic():
        table, seat = lock_and_seat(table_id, user)
        check_seq(table, seq)
        if table.status != Table.Status.PLAYING:
            raise ActionError("not_playing", _("La partida no está en juego."))
        if (
            table.turn_seat == seat.position
            and table.turn_deadline is not None
            and timezone.now() > table.turn_deadline
        ):
            raise ActionError("late", _("Se acabó tu tiempo: el bot juega por ti."), resync=True)
        if seat.left:  # coming back to a game they had left: not while they play at another table
            _check_back_from_left(table, user)
        if seat.timeouts or seat.away or seat.left:  # any move of their own brings them back
            # (what the bot did meanwhile stays on their page until their next move; a forfeit stands:
            # leaving when losing and coming back before the end must not pay)
            Seat.objects.filter(pk=seat.pk).update(timeouts=0, away=False, left=False)
        elif seat.bot_log:  # they were back and have seen what the bot did: that notice is done
            Seat.objects.filter(pk=seat.pk).update(bot_log=[])
        try:
            return apply(table, seat.position, action)
        except ActionError:
            transaction.set_rollback(True)  # a refused move changes nothing, not even the away flag
            raise


def _check_back_from_left(table: Table, user: User) -> None:
    """Someone who left this running game may start another; taking this seat back from the bot is then
    refused until that other game is over (or left).  Under their user row's lock (taken after this
    table's: the tables the person-first paths lock are waiting ones, and this one is running)."""
    lock_person(user)
    access.check_not_live_elsewhere(user, table)


def do_back(table_id: int, user: User, seq: int | None = None) -> TableChanged:
    """ "Vuelvo": an away player takes their seat back from the bot (someone who had left the game too,
    for the table's sake: their forfeit stands)."""
    with transaction.atomic():
        table = lock(table_id)
        seat = seat_of(table, user)
        if not seat.away and not seat.timeouts and not seat.left:
            raise ActionError("not_away", _("Ya estás jugando tú."))
        if seat.left:
            _check_back_from_left(table, user)
        Seat.objects.filter(pk=seat.pk).update(timeouts=0, away=False, left=False)
        return commit(table, table.seq)


def logged(action: Action) -> dict[str, Any]:
    if isinstance(action, Bid):
        return {"bid": action.amount}
    if isinstance(action, ChooseTrump):
        return {"trump": action.suit.value}
    return {"play": str(action.card)}


def apply(
    table: Table,
    position: int,
    action: Action,
    *,
    game: GameState | None = None,
    by_bot: bool = False,
    by_clock: bool = False,
) -> TableChanged:
    if game is None:
        game = playing_game(table)
    try:
        game.check(action, position)
    except PochaError as error:
        raise ActionError.from_engine(error) from None

    # One row in the game's log, written with the table's update (``commit``): the move is checked already.
    kind, value = history.move_fields(action)
    log = rows.Logged(game.number, position, kind, value, by_bot=by_bot, by_clock=by_clock)
    game.apply_unchecked(action)
    fields = {}
    moved: tuple[int, str, str] | None = (position, kind, value)  # all that happened to the game, unless dealt
    # A completed trick stays up for everyone before anyone moves on.
    pause = settings.POCHA_TRICK_PAUSE if isinstance(action, Play) and not game.trick else 0.0
    if game.phase in (Phase.ROUND_OVER, Phase.GAME_OVER):
        # the round's result, derived from its moves, kept on its row for the scoreboards
        Round.objects.filter(table_id=table.pk, number=game.number).update(result=game.results[-1].as_json())
        if game.phase is Phase.ROUND_OVER and settings.POCHA_ROUND_PAUSE <= 0:
            deal(table, game)  # no pause asked for: the next round starts at once
            moved = None
        elif game.phase is Phase.GAME_OVER:
            fields.update(on_finish(table, game))
        # else: the last trick, then the result, stay up; the due step deals the next round
    return commit(table, table.seq, pause=pause, move=moved, log=log, **state_fields(game), **fields)
