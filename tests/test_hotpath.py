"""The per-move path's database calls (``games.live.hotpath.db``): pushes made inside leave from the event loop
after the call (once, even when the call raises after its commit; never for a rolled-back transaction), a
connection in good standing is not health-checked on every call, and a call whose connection the server
dropped is run once more — unless it already made a push.

The calls go through one database thread (``POCHA_DB_THREADS = 1``), whose connection each test closes
at the end (PostgreSQL's test database must have none left open).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.db import connection, connections, transaction
from django.db.utils import InterfaceError, OperationalError

from games.live import hotpath, push

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
async def one_db_thread(settings: Any) -> AsyncIterator[None]:
    settings.POCHA_DB_THREADS = 1
    yield
    await database_sync_to_async(connections.close_all)()


class Sent:
    """The pushes handed to ``push.send_events`` (the event loop's sender), each with whether the database
    function had returned by then."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.calls = 0
        self.returned_at_send: list[bool] = []
        self.returned = False
        self.on_loop: list[bool] = []


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Sent:
    log = Sent()
    main = threading.get_ident()

    async def recording_send_events(events: list[tuple[str, dict[str, Any]]]) -> None:
        log.calls += 1
        log.events.extend(events)
        log.returned_at_send.append(log.returned)
        log.on_loop.append(threading.get_ident() == main)

    monkeypatch.setattr(push, "send_events", recording_send_events)
    return log


def table_event(event: tuple[str, dict[str, Any]]) -> tuple[int | None, int, str]:
    """(table, seq, type) of a pushed table change, whichever way it is addressed (its group, or a hub
    event naming the table)."""
    group, message = event
    table = message.get("table")
    if table is None and group.startswith("table-"):
        table = int(group.removeprefix("table-"))
    return table, message["seq"], message["type"]


def make_user(name: str) -> Any:
    return get_user_model().objects.create_user(username=name, password=None)


# -- pushes leave from the loop, after the call ---------------------------------------------------------------


async def test_a_push_made_inside_is_sent_once_from_the_loop_after_the_call(sent: Sent) -> None:
    def change() -> str:
        with transaction.atomic():
            make_user("en-hilo")
            transaction.on_commit(lambda: push.table_changed(5, 7))
        assert sent.calls == 0  # committed, and nothing sent from this thread
        sent.returned = True
        return "hecho"

    assert await hotpath.db(change) == "hecho"

    assert sent.calls == 1 and sent.returned_at_send == [True] and sent.on_loop == [True]
    assert len(sent.events) == 1
    assert table_event(sent.events[0]) == (5, 7, "table.changed")
    assert await database_sync_to_async(get_user_model().objects.filter(username="en-hilo").exists)()


async def test_several_pushes_keep_their_order_and_the_next_call_starts_empty(sent: Sent) -> None:
    def changes() -> None:
        for seq in (1, 2, 3):
            with transaction.atomic():
                transaction.on_commit(lambda seq=seq: push.table_changed(9, seq))

    await hotpath.db(changes)
    assert [table_event(e)[:2] for e in sent.events] == [(9, 1), (9, 2), (9, 3)]

    await hotpath.db(lambda: None)  # a call with no push sends nothing (and does not resend the last ones)
    assert sent.calls == 1 and len(sent.events) == 3

    await hotpath.db(lambda: push.table_changed(9, 4))
    assert [table_event(e)[:2] for e in sent.events] == [(9, 1), (9, 2), (9, 3), (9, 4)]


async def test_an_error_after_the_commit_still_sends_its_pushes_and_is_raised(sent: Sent) -> None:
    def change_then_fail() -> None:
        with transaction.atomic():
            make_user("antes-del-error")
            transaction.on_commit(lambda: push.table_changed(5, 8))
        sent.returned = True
        raise RuntimeError("después del commit")

    with pytest.raises(RuntimeError, match="después del commit"):
        await hotpath.db(change_then_fail)

    assert sent.calls == 1 and sent.returned_at_send == [True]
    assert [table_event(e) for e in sent.events] == [(5, 8, "table.changed")]
    assert await database_sync_to_async(get_user_model().objects.filter(username="antes-del-error").exists)()


async def test_a_rolled_back_transaction_sends_nothing(sent: Sent) -> None:
    def change_and_roll_back() -> None:
        with transaction.atomic():
            make_user("deshecho")
            transaction.on_commit(lambda: push.table_changed(5, 9))
            raise ValueError("vuelta atrás")

    with pytest.raises(ValueError, match="vuelta atrás"):
        await hotpath.db(change_and_roll_back)

    def marked_for_rollback() -> None:
        with transaction.atomic():
            make_user("deshecho2")
            transaction.on_commit(lambda: push.table_changed(5, 10))
            transaction.set_rollback(True)

    await hotpath.db(marked_for_rollback)

    assert sent.events == [] and sent.calls == 0
    assert not await database_sync_to_async(
        get_user_model().objects.filter(username__in=["deshecho", "deshecho2"]).exists
    )()


# -- no health check per call ---------------------------------------------------------------------------------


@pytest.fixture
def health_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Health checks on (as in production with PostgreSQL, connections kept 600 s), and every
    ``is_usable`` (the ``SELECT 1``) of any thread's connection recorded (its thread)."""
    settings_dict = connections["default"].settings_dict
    monkeypatch.setitem(settings_dict, "CONN_HEALTH_CHECKS", True)
    monkeypatch.setitem(settings_dict, "CONN_MAX_AGE", 600)
    monkeypatch.setattr(hotpath, "_checked_at", {})
    checks: list[int] = []
    wrapper = type(connections["default"])
    original = wrapper.is_usable

    def counting_is_usable(self: Any) -> bool:
        checks.append(threading.get_ident())
        return bool(original(self))

    monkeypatch.setattr(wrapper, "is_usable", counting_is_usable)
    return checks


def one_query() -> tuple[int, bool]:
    get_user_model().objects.filter(username="nadie").exists()
    return threading.get_ident(), connection.health_check_enabled


async def test_consecutive_calls_are_not_health_checked_each_time(health_checks: list[int]) -> None:
    await database_sync_to_async(connections.close_all)()  # the next connection opens with checks on
    thread, enabled = await hotpath.db(one_query)
    assert enabled, "the database thread's connection has no health checks: this test would prove nothing"
    health_checks.clear()

    for _ in range(4):
        assert (await hotpath.db(one_query))[0] == thread
    assert len(health_checks) <= 1, health_checks

    # Channels' own wrapper, on the same thread, checks at every call: what the hot path saves.
    health_checks.clear()
    for _ in range(4):
        assert (await database_sync_to_async(one_query)())[0] == thread
    assert len(health_checks) == 4, health_checks

    # Once HEALTH_CHECK_SECONDS have passed since the last check, the next call checks again (once).
    await hotpath.db(one_query)
    for key in hotpath._checked_at:
        hotpath._checked_at[key] -= hotpath.HEALTH_CHECK_SECONDS + 1
    health_checks.clear()
    for _ in range(3):
        await hotpath.db(one_query)
    assert len(health_checks) == 1, health_checks


def test_prepare_connections_checks_a_healthy_connection_at_most_every_few_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    connection.ensure_connection()
    assert connection.get_autocommit()
    monkeypatch.setattr(hotpath, "_checked_at", {})
    checked: list[int] = []
    monkeypatch.setattr(connection, "close_if_unusable_or_obsolete", lambda: checked.append(1))
    now = [1000.0]
    monkeypatch.setattr(hotpath, "time", SimpleNamespace(monotonic=lambda: now[0]))

    for _ in range(3):
        hotpath._prepare_connections()
    assert len(checked) == 1  # the first time only

    now[0] += hotpath.HEALTH_CHECK_SECONDS - 0.5
    hotpath._prepare_connections()
    assert len(checked) == 1  # still within the window

    now[0] += 1.0
    hotpath._prepare_connections()
    hotpath._prepare_connections()
    assert len(checked) == 2  # once more after it

    connection.errors_occurred = True  # something went wrong on it: checked at once, every time until fixed
    try:
        hotpath._prepare_connections()
        assert len(checked) == 3
    finally:
        connection.errors_occurred = False
    with transaction.atomic():  # a connection left inside a transaction is checked as well
        hotpath._prepare_connections()
    assert len(checked) == 4


async def test_the_database_threads_keep_their_connection_when_requests_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server processes run with CONN_MAX_AGE = 0 (an HTTP request's thread must not keep its
    connection); the pool's threads keep theirs across health checks all the same."""
    settings_dict = connections["default"].settings_dict
    monkeypatch.setitem(settings_dict, "CONN_MAX_AGE", 0)
    monkeypatch.setattr(hotpath, "_checked_at", {})
    await database_sync_to_async(connections.close_all)()
    closed: list[int] = []
    wrapper = type(connections["default"])
    original_close = wrapper.close

    def recording_close(self: Any) -> None:
        closed.append(threading.get_ident())
        original_close(self)

    monkeypatch.setattr(wrapper, "close", recording_close)
    thread, _ = await hotpath.db(one_query)
    for _ in range(3):
        for key in hotpath._checked_at:  # the health-check window has passed each time
            hotpath._checked_at[key] -= hotpath.HEALTH_CHECK_SECONDS + 1
        assert (await hotpath.db(one_query))[0] == thread
    assert thread not in closed, "a database thread reconnected: CONN_MAX_AGE = 0 closed its connection"


# -- a dropped connection: run once more ---------------------------------------------------------------------


async def test_a_call_whose_connection_was_dropped_runs_again_once(monkeypatch: pytest.MonkeyPatch, sent: Sent) -> None:
    seen: list[BaseException] = []

    def dropped(error: Exception) -> bool:
        seen.append(error)
        return True

    monkeypatch.setattr(hotpath, "_dropped", dropped)
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return f"intento {len(calls)}"

    assert await hotpath.db(flaky) == "intento 2"
    assert len(calls) == 2 and len(seen) == 1 and isinstance(seen[0], OperationalError)

    # Dropped twice: run twice, not more, and the error is raised.
    always: list[int] = []

    def always_dropped() -> None:
        always.append(1)
        raise OperationalError("terminating connection due to administrator command")

    with pytest.raises(OperationalError, match="administrator command"):
        await hotpath.db(always_dropped)
    assert len(always) == 2
    assert sent.events == []


async def test_a_call_that_pushed_before_its_error_is_not_run_again(
    monkeypatch: pytest.MonkeyPatch, sent: Sent
) -> None:
    monkeypatch.setattr(hotpath, "_dropped", lambda error: True)
    calls: list[int] = []

    def pushed_then_failed() -> str:
        calls.append(1)
        if len(calls) == 1:
            with transaction.atomic():
                transaction.on_commit(lambda: push.table_changed(5, 11))
            raise OperationalError("server closed the connection unexpectedly")
        return "otra vez"

    with pytest.raises(OperationalError):
        await hotpath.db(pushed_then_failed)
    assert len(calls) == 1  # a change was committed and announced: running it again could do it twice
    assert [table_event(e) for e in sent.events] == [(5, 11, "table.changed")]


async def test_an_error_that_is_not_a_dropped_connection_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hotpath, "_dropped", lambda error: False)
    calls: list[int] = []

    def failing() -> None:
        calls.append(1)
        raise OperationalError("deadlock detected")

    with pytest.raises(OperationalError, match="deadlock"):
        await hotpath.db(failing)
    assert len(calls) == 1


class _DriverError(Exception):
    """What psycopg raises, with its SQLSTATE (Django's error has it as ``__cause__``)."""

    def __init__(self, sqlstate: str | None) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def _operational(sqlstate: str | None) -> OperationalError:
    error = OperationalError(f"sqlstate {sqlstate}")
    error.__cause__ = _DriverError(sqlstate)
    return error


def test_what_counts_as_a_dropped_connection() -> None:
    connection.ensure_connection()  # usable
    assert hotpath._dropped(ValueError("no es de la base de datos")) is False
    # refused work on a good connection: not run again
    assert hotpath._dropped(_operational("40P01")) is False  # deadlock detected
    assert hotpath._dropped(_operational("55P03")) is False  # lock not available
    # the connection was lost: run again on a fresh one
    assert hotpath._dropped(_operational("57P01")) is True  # terminating connection (pg_terminate_backend)
    assert hotpath._dropped(_operational("08006")) is True  # connection failure
    assert hotpath._dropped(_operational(None)) is True  # client side: server closed the connection
    assert hotpath._dropped(InterfaceError("connection already closed")) is True
    assert connection.connection is not None  # a usable connection is left alone
