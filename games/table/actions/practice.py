"""«Juega esta mano»: one round of a finished game played again, by the person who sat in that seat, with the
same cards, against bots.

The practice table is private (nobody else sees or joins it), free and not quick: it moves no chips, counts
in no ranking and stays out of the profiles.  It starts at once: bots of the game's level take the other
seats, and the round is dealt exactly as it was (``lifecycle.on_start``, through the engine's practice game,
which ends after that round).  The others' bids and cards are the bots' own, not a replay.  Its yardstick,
difícil in the same seat on the same deal, is worked out by the analysis worker (``games.study.practice``).
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext_lazy as _

from games.models import Round, Seat, Table
from games.table import access, events
from games.table.actions.common import User, lock_person, new_code
from games.table.actions.lifecycle import on_start
from games.table.errors import ActionError


def practice_rounds(table: Table) -> int:
    """How many rounds of ``table``'s game can be played again: its schedule's (a tie-break round cannot)."""
    return len(table.game_rules.schedule(table.size))


def do_play_again(user: User, table_id: int, number: int) -> Table:
    """A practice table for round ``number`` of the finished game ``table_id``, the person in the seat they had;
    started.  ActionError, changing nothing, for a table one may not see, a game not over or not theirs, a
    round that is not there or in which their seat rested, or while they have a live table."""
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    try:
        number = int(number)
    except (TypeError, ValueError):
        raise ActionError("bad_round", _("Esa ronda no existe.")) from None
    with transaction.atomic():
        lock_person(user)  # one live table each: the check and the new seat in one step for them
        source, _seats, mine = access.finished_game_played(
            table_id,
            user,
            not_player=_("Solo quien jugó en esa partida puede volver a jugar sus manos."),
            practice=_("Esta ya es una mano de práctica: vuelve a la partida para elegir otra."),
        )
        dealt = Round.objects.filter(table=source, number=number).first()
        if dealt is None or not 1 <= number <= practice_rounds(source):
            raise ActionError("bad_round", _("Esa ronda no existe."))
        if not dealt.hands[mine.position]:
            raise ActionError("resting", _("En esa ronda descansabas: no tenías cartas que jugar."))
        access.check_not_live_elsewhere(user)
        table = _new_table(source, user, number, mine.position)
        Seat.objects.create(table=table, position=mine.position, user_id=user.pk, name=user.get_username())
        on_start(table)
        events.emit(events.StudyQueued())  # difícil's yardstick in that seat
        return table


def _new_table(source: Table, user: User, number: int, position: int) -> Table:
    for attempt in range(20):
        try:
            with transaction.atomic():  # a code another waiting table just took: draw again
                return Table.objects.create(
                    size=source.size,
                    rules=source.rules,
                    stake=0,
                    is_public=False,
                    is_quick=False,
                    bots_allowed=True,
                    bot_level=source.bot_level,
                    card_seconds=source.card_seconds,
                    bid_seconds=source.bid_seconds,
                    trump_seconds=source.trump_seconds,
                    created_by_id=user.pk,
                    code=new_code(),
                    practice_of=source,
                    practice_round=number,
                    practice_seat=position,
                )
        except IntegrityError:
            if attempt == 19:
                raise
    raise AssertionError("unreachable")


# -- the yardstick's «working» mark (``games.study.practice.claim``), as the worker keeps it -----------------


def renew_baseline_mark(table_id: int, last: Any, mark: dict[str, str]) -> bool:
    """The practice table's yardstick marked ``mark`` (the worker's sign of life while it plays difícil's round,
    ``games.study.worker``), if its mark is still ``last``, the one that worker wrote: False if the job is no
    longer that worker's (a compare-and-set)."""
    return bool(Table.objects.filter(pk=table_id, practice_baseline=last).update(practice_baseline=mark))


def release_baseline_marks(mark: dict[str, str]) -> int:
    """Every yardstick a worker is working on marked ``mark`` (a server that starts without Redis frees those its
    previous run left: ``games.study.worker.release_held``): how many."""
    return Table.objects.filter(practice_baseline__has_key="working").update(practice_baseline=mark)
