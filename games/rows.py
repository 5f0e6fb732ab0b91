"""The move path's reads and writes of the table and its seats, in plain SQL.

The ORM compiles every query afresh: on this path that cost more than the database itself (measured on
PostgreSQL, per statement: the table's lock 0.78 ms through the ORM against 0.24 ms as plain SQL, the
person's seat with their suspension 1.3 against 0.26, the seats with the spectator count 0.9 against 0.37,
the table's update 0.44 against 0.25), and it is all the server process's CPU.  A card's and a bid's
inserts, and a trick's insert and winner, are here too (not timed alone).  The statements are written once; the rows still become the models' instances
through Django's own converters (``Model.from_db``), and values are written through the fields' own
``get_db_prep_save``, so SQLite and PostgreSQL read and write exactly what the ORM would.

On PostgreSQL the statements are also prepared (``_cursor``): parsed and planned once per connection, not
at every move.  Planning was most of the database's own time for them (measured with ``EXPLAIN ANALYZE`` on
a warm connection: the seats with the spectator count 0.19-0.28 ms to plan against about 0.1 to run, the
person's seat 0.12-0.15, the lock 0.04-0.06).  The ORM's other queries keep Django's client-side binding.
Tests: ``tests/live/test_rows.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.db import connection
from django.db.backends.postgresql.psycopg_any import is_psycopg3
from django.db.backends.utils import CursorWrapper
from django.db.models import Field, Model
from django.utils import timezone

from accounts.models import Profile
from games.models import Bid as BidRow
from games.models import Play as PlayRow
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


_prepared_cursor: type | None = None
#: psycopg's own default; these statements ask for ``prepare=True`` whatever it is, as long as it is set.
PREPARE_THRESHOLD = 5


def _prepared_cursor_class() -> type:
    """Django's server-side binding cursor for psycopg 3, every statement prepared (``prepare=True``; the
    connection keeps up to psycopg's ``prepared_max`` of them, the least used dropped first)."""
    global _prepared_cursor
    if _prepared_cursor is None:
        from django.db.backends.postgresql.base import ServerBindingCursor

        class PreparedCursor(ServerBindingCursor):  # type: ignore[misc, valid-type]
            #: Django logs the queries (the tests, DEBUG): its log reads psycopg's ``_query``, which
            #: running a prepared statement leaves unset, so it is set here then.
            logged = False

            def execute(
                self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: Any = None
            ) -> Any:
                result = super().execute(query, params, prepare=True, binary=binary)
                if self.logged:
                    self._query = self._convert_query(query, params)
                return result

        _prepared_cursor = PreparedCursor
    return _prepared_cursor


def _cursor() -> CursorWrapper:
    """Django's cursor (its health check, its error wrapping, which ``games.hotpath`` relies on, and the
    query log the tests count); on PostgreSQL its psycopg cursor binds server-side and prepares."""
    wrapper = connection.cursor()
    if connection.vendor == "postgresql" and is_psycopg3:
        raw = connection.connection
        if raw.prepare_threshold is None:
            # Django turns psycopg's statement preparation off (``prepare_threshold`` None), and then
            # ``prepare=True`` is ignored too.  Django's own cursors bind client-side, which never
            # prepares: only these statements are.
            raw.prepare_threshold = PREPARE_THRESHOLD
        wrapper.cursor.close()
        wrapper.cursor = _prepared_cursor_class()(raw)
        wrapper.cursor.logged = connection.queries_logged
    return wrapper


def _for_update() -> str:
    return " FOR UPDATE" if connection.features.has_select_for_update else ""


def lock_table(table_id: int) -> Table | None:
    """The table's row, locked until the transaction ends (``SELECT ... FOR UPDATE``); None if gone."""
    shape = _shape(Table, "t")
    with _cursor() as cursor:
        cursor.execute(f"SELECT {shape.columns} FROM games_table t WHERE t.id = %s{_for_update()}", [table_id])
        row = cursor.fetchone()
    return None if row is None else _build(Table, shape, row)


def user_seat(table_id: int, user_id: int) -> tuple[Seat, datetime | None, str] | None:
    """A person's seat at the table, with their suspension (when, why) read in the same statement."""
    shape = _shape(Seat, "s")
    with _cursor() as cursor:
        cursor.execute(
            f"SELECT {shape.columns}, p.suspended_at, p.suspended_reason FROM games_seat s"
            " LEFT JOIN accounts_profile p ON p.user_id = s.user_id"
            " WHERE s.table_id = %s AND s.user_id = %s ORDER BY s.id LIMIT 1",
            [table_id, user_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    extra = len(shape.names)
    return _build(Seat, shape, row), _datetime(row[extra]), row[extra + 1] or ""


def seats_with_spectators(table_id: int, spectators_sql: str) -> tuple[list[Seat], int | None]:
    """The table's seats in position order, and ``spectators_sql`` (a count taking the table's id as its
    one parameter) read in the same statement; the count is None when the table has no seat."""
    shape = _shape(Seat, "s")
    with _cursor() as cursor:
        cursor.execute(
            f"SELECT {shape.columns}, ({spectators_sql}) FROM games_seat s WHERE s.table_id = %s ORDER BY s.position",
            [table_id, table_id],
        )
        rows = cursor.fetchall()
    if not rows:
        return [], None
    return [_build(Seat, shape, row) for row in rows], int(rows[0][len(shape.names)])


def update_table(table_id: int, seq: int, fields: dict[str, Any]) -> int:
    """``UPDATE`` the table's ``fields`` (by attribute name) where it is still at ``seq``; rows changed."""
    meta = Table._meta
    qn = connection.ops.quote_name
    assignments, params = [], []
    for name, value in fields.items():
        field: Field[Any, Any] = meta.get_field(name)  # type: ignore[assignment]
        assignments.append(f"{qn(field.column)} = %s")
        params.append(field.get_db_prep_save(value, connection))
    with _cursor() as cursor:
        cursor.execute(
            f"UPDATE games_table SET {', '.join(assignments)} WHERE id = %s AND seq = %s", [*params, table_id, seq]
        )
        return int(cursor.rowcount)


def insert_play(
    table_id: int,
    round_number: int,
    trick_number: int,
    trick_id: int | None,
    *,
    index: int,
    seat: int,
    card: str,
    by_bot: bool,
    by_clock: bool,
) -> None:
    """``INSERT`` a card played: its round's id (and its trick's, unless ``trick_id`` is given) taken by
    subqueries from the table and the numbers, not read first."""
    qn = connection.ops.quote_name
    created = PlayRow._meta.get_field("created_at").get_db_prep_save(timezone.now(), connection)
    if trick_id is None:
        trick_sql = (
            "(SELECT k.id FROM games_trick k JOIN games_round r ON r.id = k.round_id"
            " WHERE r.table_id = %s AND r.number = %s AND k.number = %s)"
        )
        trick_params: list[Any] = [table_id, round_number, trick_number]
    else:
        trick_sql, trick_params = "%s", [trick_id]
    with _cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {qn('games_play')} (round_id, trick_id, {qn('index')}, seat, card, by_bot, by_clock, created_at)"
            f" VALUES ({_round_sql()}, {trick_sql},"
            " %s, %s, %s, %s, %s, %s)",
            [table_id, round_number, *trick_params, index, seat, card, by_bot, by_clock, created],
        )


def _round_sql() -> str:
    return "(SELECT r.id FROM games_round r WHERE r.table_id = %s AND r.number = %s)"


def insert_bid(
    table_id: int, round_number: int, *, index: int, seat: int, amount: int, by_bot: bool, by_clock: bool
) -> None:
    """``INSERT`` a bid, its round's id taken by a subquery from the table and the round's number."""
    qn = connection.ops.quote_name
    created = BidRow._meta.get_field("created_at").get_db_prep_save(timezone.now(), connection)
    with _cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {qn('games_bid')} (round_id, {qn('index')}, seat, amount, by_clock, by_bot, created_at)"
            f" VALUES ({_round_sql()}, %s, %s, %s, %s, %s, %s)",
            [table_id, round_number, index, seat, amount, by_clock, by_bot, created],
        )


def insert_trick(table_id: int, round_number: int, number: int, leader: int) -> int:
    """``INSERT`` a trick (its first card is being played; no winner yet); its id."""
    with _cursor() as cursor:
        cursor.execute(
            f"INSERT INTO games_trick (round_id, number, leader, winner) VALUES ({_round_sql()}, %s, %s, NULL)"
            " RETURNING id",
            [table_id, round_number, number, leader],
        )
        return int(cursor.fetchone()[0])


def set_trick_winner(table_id: int, round_number: int, number: int, winner: int) -> None:
    """``UPDATE`` the trick's winner (its last card was played)."""
    with _cursor() as cursor:
        cursor.execute(
            f"UPDATE games_trick SET winner = %s WHERE round_id = {_round_sql()} AND number = %s",
            [winner, table_id, round_number, number],
        )
