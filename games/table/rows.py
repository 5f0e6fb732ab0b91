"""The move path's reads and writes of the table and its seats, in plain SQL.

The ORM compiles every query afresh, and on this path, taken by every move, that costs more than the
database's own work.  The statements here are written once; the rows still become the models' instances
through Django's own converters (``Model.from_db``), and values are written through the fields' own
``get_db_prep_save``, so SQLite and PostgreSQL read and write exactly what the ORM would.  They go through
Django's cursor (its error wrapping, which ``games.live.hotpath`` relies on, and the query log the tests
count).  On PostgreSQL the connection binds parameters on the server and prepares every statement run
more than a few times (``server_side_binding`` and ``prepare_threshold`` in ``DATABASES``' options), so
these statements are parsed and planned once per connection, not at every move.
Tests: ``tests/live/test_rows.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Field, Model
from django.utils import timezone

from accounts.models import Profile
from games.models import Move as MoveRow
from games.models import Seat, Table

M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class _Shape:
    """A model's concrete columns, as a SELECT list under ``alias``, and how each value is read back."""

    columns: str
    names: tuple[str, ...]
    convert: tuple[tuple[int, Any, tuple[Callable[..., Any], ...]], ...]  # (index, column, converters)


_shapes: dict[tuple[type[Model], str, str], _Shape] = {}


def _shape(model: type[Model], alias: str) -> _Shape:
    key = (model, alias, connection.vendor)
    shape = _shapes.get(key)
    if shape is None:
        fields = model._meta.concrete_fields
        qn = connection.ops.quote_name
        convert = []
        for index, field in enumerate(fields):
            column = field.get_col(alias)
            converters = tuple(connection.ops.get_db_converters(column) + field.get_db_converters(connection))
            if converters:
                convert.append((index, column, converters))
        shape = _shapes[key] = _Shape(
            columns=", ".join(f"{qn(alias)}.{qn(field.column)}" for field in fields),
            names=tuple(field.attname for field in fields),
            convert=tuple(convert),
        )
    return shape


def _build(model: type[M], shape: _Shape, row: Sequence[Any]) -> M:
    values = list(row[: len(shape.names)])
    for index, column, converters in shape.convert:
        value = values[index]
        for converter in converters:
            value = converter(value, column, connection)
        values[index] = value
    return model.from_db(connection.alias, shape.names, values)


def _datetime(value: Any) -> datetime | None:
    """A datetime read outside a model (its field's converters: SQLite hands back text)."""
    field = Profile._meta.get_field("suspended_at")
    column = field.get_col("p")
    for converter in connection.ops.get_db_converters(column) + field.get_db_converters(connection):
        value = converter(value, column, connection)
    return value


def _for_update() -> str:
    return " FOR UPDATE" if connection.features.has_select_for_update else ""


def lock_table(table_id: int) -> Table | None:
    """The table's row, locked until the transaction ends (``SELECT ... FOR UPDATE``); None if gone."""
    shape = _shape(Table, "t")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {shape.columns} FROM games_table t WHERE t.id = %s{_for_update()}", [table_id])
        row = cursor.fetchone()
    return None if row is None else _build(Table, shape, row)


def lock_table_and_seat(table_id: int, user_id: int) -> tuple[Table, tuple[Seat, datetime | None, str] | None] | None:
    """``lock_table`` and ``user_seat`` in one statement: the table's row, locked, and the person's seat at
    it with their suspension (None if they have no seat); None if the table is gone."""
    table, seat = _shape(Table, "t"), _shape(Seat, "s")
    locking = " FOR UPDATE OF t" if connection.features.has_select_for_update_of else _for_update()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {table.columns}, {seat.columns}, p.suspended_at, p.suspended_reason FROM games_table t"
            " LEFT JOIN games_seat s ON s.table_id = t.id AND s.user_id = %s"
            " LEFT JOIN accounts_profile p ON p.user_id = s.user_id"
            f" WHERE t.id = %s{locking}",
            [user_id, table_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    rest = row[len(table.names) :]
    return _build(Table, table, row), None if rest[0] is None else _seat_and_suspension(seat, rest)  # [0]: seat id


def user_seat(table_id: int, user_id: int) -> tuple[Seat, datetime | None, str] | None:
    """A person's seat at the table, with their suspension (when, why) read in the same statement."""
    shape = _shape(Seat, "s")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {shape.columns}, p.suspended_at, p.suspended_reason FROM games_seat s"
            " LEFT JOIN accounts_profile p ON p.user_id = s.user_id"
            " WHERE s.table_id = %s AND s.user_id = %s ORDER BY s.id LIMIT 1",
            [table_id, user_id],
        )
        row = cursor.fetchone()
    return None if row is None else _seat_and_suspension(shape, row)


def _seat_and_suspension(shape: _Shape, row: Sequence[Any]) -> tuple[Seat, datetime | None, str]:
    """A seat from ``row``, then its person's suspension (when, why) from the two columns after it."""
    extra = len(shape.names)
    return _build(Seat, shape, row), _datetime(row[extra]), row[extra + 1] or ""


def seats_with_spectators(table_id: int, spectators_sql: str) -> tuple[list[Seat], int | None]:
    """The table's seats in position order, and ``spectators_sql`` (a count taking the table's id as its
    one parameter) read in the same statement; the count is None when the table has no seat."""
    shape = _shape(Seat, "s")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {shape.columns}, ({spectators_sql}) FROM games_seat s WHERE s.table_id = %s ORDER BY s.position",
            [table_id, table_id],
        )
        rows = cursor.fetchall()
    if not rows:
        return [], None
    return [_build(Seat, shape, row) for row in rows], int(rows[0][len(shape.names)])


@dataclass(frozen=True)
class Logged:
    """One move for the game's log (``games.models.Move``), written with the table's update that follows it
    (``update_table``'s ``log``): the round it was made in, the seat, the move, and who made it."""

    round_number: int
    seat: int
    kind: str
    value: str
    by_bot: bool = False
    by_clock: bool = False


def update_table(table_id: int, seq: int, fields: dict[str, Any], log: Logged | None = None) -> int:
    """``UPDATE`` the table's ``fields`` (by attribute name) where it is still at ``seq``; rows changed.
    ``log``: the move that took the table to its new seq, inserted into the game's log in the same
    statement on PostgreSQL (a data-modifying ``WITH``, one round trip for both), just before elsewhere."""
    meta = Table._meta
    qn = connection.ops.quote_name
    assignments, params = [], []
    for name, value in fields.items():
        field: Field[Any, Any] = meta.get_field(name)  # type: ignore[assignment]
        assignments.append(f"{qn(field.column)} = %s")
        params.append(field.get_db_prep_save(value, connection))
    update = f"UPDATE games_table SET {', '.join(assignments)} WHERE id = %s AND seq = %s"
    if log is not None and connection.vendor != "postgresql":
        insert_move(table_id, seq + 1, log)
        log = None
    with connection.cursor() as cursor:
        if log is None:
            cursor.execute(update, [*params, table_id, seq])
        else:
            moved = _move_params(table_id, seq + 1, log)
            cursor.execute(f"WITH logged AS ({_INSERT_MOVE}) {update}", [*moved, *params, table_id, seq])
        return int(cursor.rowcount)


_INSERT_MOVE = (
    'INSERT INTO games_move (table_id, seq, "round", seat, kind, value, by_clock, by_bot, made_at)'
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def _move_params(table_id: int, seq: int, log: Logged) -> list[Any]:
    made = MoveRow._meta.get_field("made_at").get_db_prep_save(timezone.now(), connection)
    return [table_id, seq, log.round_number, log.seat, log.kind, log.value, log.by_clock, log.by_bot, made]


def insert_move(table_id: int, seq: int, log: Logged) -> None:
    """``INSERT`` one move into the game's log (``games.models.Move``) at ``seq``."""
    with connection.cursor() as cursor:
        cursor.execute(_INSERT_MOVE, _move_params(table_id, seq, log))
