"""The table as one change left it, for drawing: its row, its seats, its number of spectators, its game
and, when read, every finished round's result (the scoreboard).

A ``Snapshot`` is what every viewer's board at one seq is drawn from.  A process that shows the table
reads one from the database (``load_snapshot``) and then keeps it up to date from the changes it hears
(``pack_change``): a change carries the table row and the seats as they are now, but never the game's
state, which holds every hand.  It says instead how the game moved from the seq before: not at all
(``"same"``: a seat, a flag, a pot changed), or by one move (``"move"``, the seat, the kind and the value
of the log's new row), which each process applies to the game it has; any other change (a deal, a
game's start or end) leaves the game to be read from the database, as does a gap in the seqs a process
heard.  The rounds' results travel only when a round has just ended.  A snapshot holds every hand of the
round, so it never leaves the server: each viewer's board is built from it through the engine's seat
view.  It is for drawing only: a move is made on the table read afresh and locked.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import DateTimeField, Model

from games.engine import GameState, Phase
from games.engine.state import RoundResult
from games.models import Seat, Table, Tournament
from games.table import history, rows

M = TypeVar("M", bound=Model)


def game_state(table: Table) -> GameState | None:
    """The table's game as far as its board needs it (the round in play); None before the first deal."""
    return history.game_of(table) if table.status != Table.Status.WAITING else None


@dataclass(frozen=True)
class Snapshot:
    """One table at one seq, shared by every socket of a process that shows it (``games.live.consumers``)."""

    table: Table
    seats: tuple[Seat, ...]
    spectators: int
    #: Every finished round's result, in order (the scoreboard); None when not read (a move's push in the
    #: middle of a round: the pages' scoreboards are still right).
    results: tuple[RoundResult, ...] | None = None
    #: The game when it is known already (a change applied to the one before); else read from the row.
    known_game: GameState | None = dataclasses.field(default=None, compare=False, repr=False)
    #: A tournament's table: the tournament's name and number of games (``tournament_tag``), read with the
    #: snapshot, for the board's tournament line; None for any other table.
    tournament: tuple[str, int] | None = None

    @property
    def seq(self) -> int:
        return self.table.seq

    @cached_property
    def game(self) -> GameState | None:
        """The engine state, made once for every viewer (``seat_view`` does not change it)."""
        return self.known_game if self.known_game is not None else game_state(self.table)


#: How many distinct people have a socket showing the table (``%s``, or a column) and no seat at it.
SPECTATORS_SQL = (
    "SELECT COUNT(DISTINCT w.user_id) FROM games_watcher w WHERE w.table_id = {table} AND NOT EXISTS "
    "(SELECT 1 FROM games_seat s WHERE s.table_id = w.table_id AND s.user_id = w.user_id)"
)


def seats_and_spectators(table_id: int) -> tuple[list[Seat], int]:
    """The table's seats, and its number of spectators, in one query."""
    seats, spectators = rows.seats_with_spectators(table_id, SPECTATORS_SQL.format(table="%s"))
    if spectators is not None:
        return seats, spectators
    return seats, spectator_count(table_id)  # no seat (yet): the count alone


def spectator_count(table_id: int) -> int:
    """How many distinct people have a socket showing the table and no seat at it (one query)."""
    with connection.cursor() as cursor:
        cursor.execute(SPECTATORS_SQL.format(table="%s"), [table_id])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def rounds_done(phase: str, number: int) -> int:
    """How many rounds of a game are over, from the table's phase and round number."""
    if not number:
        return 0
    return number if phase in (Phase.ROUND_OVER.value, Phase.GAME_OVER.value) else number - 1


def load_snapshot(table_id: int) -> Snapshot | None:
    """The table, its seats, its number of spectators and its rounds' results, in three queries (two for a
    table that has not started; one more for a tournament's table); None if the table is gone."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        return None
    seats, spectators = seats_and_spectators(table_id)
    results = history.results(table_id) if table.status != Table.Status.WAITING else ()
    tournament = tournament_tag(table.tournament_id) if table.tournament_id is not None else None
    return Snapshot(table, tuple(seats), spectators, results, tournament=tournament)


def tournament_tag(tournament_id: int) -> tuple[str, int] | None:
    """A tournament's name and number of games (one query), for its tables' boards."""
    row = Tournament.objects.filter(pk=tournament_id).values_list("name", "games").first()
    return None if row is None else (str(row[0]), int(row[1] or 1))


def _pack_row(instance: Model) -> list[Any]:
    values = []
    for field in instance._meta.concrete_fields:
        value = getattr(instance, field.attname)
        if isinstance(value, datetime):
            value = value.timestamp()
        values.append(value)
    return values


def _unpack_row(model: type[M], values: list[Any]) -> M:
    fields = model._meta.concrete_fields
    if len(values) != len(fields):
        raise ValueError(f"{model.__name__}: {len(values)} values for {len(fields)} fields")
    values = [
        datetime.fromtimestamp(value, tz=UTC) if value is not None and isinstance(field, DateTimeField) else value
        for field, value in zip(fields, values, strict=True)
    ]
    return model.from_db(DEFAULT_DB_ALIAS, None, values)


#: How a change moved the game from the seq before (``pack_change``).
SAME = "same"
MOVE = "move"


_STATE_AT = next(i for i, field in enumerate(Table._meta.concrete_fields) if field.attname == "state")


def pack_change(
    table: Table,
    seats: list[Seat],
    spectators: int,
    *,
    results: tuple[RoundResult, ...] | None = None,
    game: str | None = None,
    move: tuple[int, str, str] | None = None,
) -> dict[str, Any]:
    """A change as plain data for the processes that show the table: the table row without its game
    state, the seats, the spectators, the rounds' results if given, and how the game moved (``game``:
    ``SAME``, or ``MOVE`` with ``move`` = (seat, kind, value); None: read it)."""
    values = _pack_row(table)
    values[_STATE_AT] = None
    data: dict[str, Any] = {"table": values, "seats": [_pack_row(seat) for seat in seats], "spectators": spectators}
    if results is not None:
        data["results"] = [r.as_json() for r in results]
    if game == SAME:
        data["game"] = SAME
    elif game == MOVE and move is not None:
        data["game"], data["move"] = MOVE, list(move)
    return data


class NotApplicable(Exception):
    """A change that cannot be applied to the snapshot at hand (not the seq before, or no game to move)."""


def apply_change(before: Snapshot | None, data: dict[str, Any]) -> Snapshot:
    """The snapshot a change (``pack_change``) makes of ``before``, the snapshot at the seq just before
    it: the table row and seats it carries, and ``before``'s game, moved by the change's move if any.
    NotApplicable if ``before`` is not the seq before, the change says nothing of the game, or its move
    does not apply (then read the table instead); ValueError if the data is not a change."""
    table = _unpack_row(Table, data["table"])
    seats = tuple(_unpack_row(Seat, values) for values in data["seats"])
    how = data.get("game")
    if before is None or before.seq != table.seq - 1 or how not in (SAME, MOVE) or before.game is None:
        raise NotApplicable
    game = before.game
    if how == MOVE:
        seat, kind, value = data["move"]
        game = game.copy()
        try:
            game.apply(history.action_of(str(kind), str(value)), int(seat))
        except Exception as error:  # (the engine refused it: this process's game is not the table's)
            raise NotApplicable from error
        if game.phase.value != table.phase or game.number != table.round_number:
            raise NotApplicable  # the change did more than this move (a deal)
    results = data.get("results")
    return Snapshot(
        table,
        seats,
        int(data["spectators"]),
        tuple(RoundResult.from_json(r) for r in results) if results is not None else before.results,
        known_game=game,
        tournament=before.tournament,
    )
