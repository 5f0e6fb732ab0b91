"""Database calls from the event loop on the per-move path, at the cost of the work and nothing more.

``db(fn, *args)`` runs ``fn`` on a database thread, with three differences from Channels'
``database_sync_to_async`` that matter at hundreds of moves a second:

* **Several database threads with PostgreSQL** (``POCHA_DB_THREADS``).  Channels runs every call of a
  process on one thread, so each move would wait for every other table's round trips to PostgreSQL; the
  tables' row locks already keep each table's moves in order (as between two server processes).  With
  SQLite (one writer at a time) it stays one thread.

* **No health-check query per call.**  Channels closes "old" connections before and after every call,
  which with ``CONN_HEALTH_CHECKS`` makes the first query of each call a ``SELECT 1``, one more round trip
  for every call a move makes.
  Here a connection in good standing is checked at most every ``HEALTH_CHECK_SECONDS``; a connection that
  the server dropped in between (a restart, ``pg_terminate_backend``) fails its next query, is closed,
  and the call is run again once on a fresh connection.  Calls that may be retried are the actions'
  transactions (all or nothing: a retried move either finds its seq or is refused as stale) and reads.
* **Pushes leave from the loop.**  ``push.table_changed`` and the other pushes registered with
  ``on_commit`` inside ``fn`` are collected instead of being sent with ``async_to_sync`` from the database
  thread (which would hold that thread until the event loop, busy with everything else, got to them); the
  caller's coroutine sends them with ``await group_send`` once ``fn`` has returned, or raised.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from asgiref.sync import SyncToAsync
from django.conf import settings
from django.db import connections
from django.db.utils import InterfaceError, OperationalError

from games.live import push

T = TypeVar("T")
log = logging.getLogger(__name__)

#: A connection in good standing is health-checked (``SELECT 1``) at most this often.
HEALTH_CHECK_SECONDS = 5.0

_checked_at: dict[int, float] = {}


def _prepare_connections() -> None:
    """What ``close_old_connections`` does, without forcing a health check on every call."""
    now = time.monotonic()
    for conn in connections.all(initialized_only=True):
        if conn.connection is None:
            continue
        key = id(conn)
        if (
            not conn.errors_occurred
            and conn.get_autocommit()
            and now - _checked_at.get(key, 0.0) < HEALTH_CHECK_SECONDS
        ):
            continue  # healthy a moment ago, and nothing has gone wrong since: no SELECT 1 this time
        # The pool's few threads live as long as the process: their connections are kept whatever
        # CONN_MAX_AGE says (the server processes run with 0, for the threads of HTTP requests, which come
        # and go; here it would reconnect every few seconds on the move path).  Broken ones still close.
        conn.close_at = None
        conn.close_if_unusable_or_obsolete()  # closes a broken one; the next query checks it
        _checked_at[key] = now


def _after_call() -> None:
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None and (conn.errors_occurred or not conn.get_autocommit()):
            conn.close_at = None
            conn.close_if_unusable_or_obsolete()
            _checked_at.pop(id(conn), None)


#: PostgreSQL's codes for a connection the server ended: admin shutdown, crash shutdown, cannot connect now.
_SERVER_ENDED = {"57P01", "57P02", "57P03"}


def _dropped(error: Exception) -> bool:
    """The error says the connection was lost (the server ended it, or it broke), not that the work was
    refused: a client-side error with no SQLSTATE, a connection exception (class 08) or a server
    shutdown.  The connection is put right for the retry (Django has usually reconnected already, when
    it put autocommit back after the failed transaction)."""
    if isinstance(error, InterfaceError):
        lost = True
    elif isinstance(error, OperationalError):
        state = getattr(error.__cause__, "sqlstate", None)
        lost = state is None or state.startswith("08") or state in _SERVER_ENDED
    else:
        lost = False
    if lost:
        for conn in connections.all(initialized_only=True):
            _checked_at.pop(id(conn), None)
            if conn.connection is not None and not conn.is_usable():
                conn.close()
    return lost


class _Outcome:
    __slots__ = ("error", "events", "result")

    def __init__(self) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.events: list[push.Event] = []


def _run(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Outcome:
    outcome = _Outcome()
    with push.collecting() as events:
        for attempt in (1, 2):
            _prepare_connections()
            try:
                outcome.result = fn(*args, **kwargs)
                outcome.error = None
                break
            except Exception as error:
                outcome.error = error
                if attempt == 2 or events or not _dropped(error):
                    break
            finally:
                _after_call()
        outcome.events = list(events)
    return outcome


def kept(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` here, on a long-lived thread of the caller's own (a process's beat), whose
    connection is kept between calls as on the pool's threads (checked at most every
    ``HEALTH_CHECK_SECONDS``, closed when broken or left in a transaction)."""
    _prepare_connections()
    try:
        return fn(*args, **kwargs)
    finally:
        _after_call()


_on_db_thread = SyncToAsync(_run, thread_sensitive=True)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def threads() -> int:
    """How many threads the per-move path's database calls run on: ``POCHA_DB_THREADS`` with PostgreSQL
    (each its own connection; the tables' row locks keep moves in order, as between processes), one with
    SQLite, which takes one writer at a time."""
    if connections["default"].vendor != "postgresql":
        return 1
    return settings.POCHA_DB_THREADS


def _executor() -> ThreadPoolExecutor | None:
    global _pool
    if threads() == 1:
        return None
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=threads(), thread_name_prefix="pocha-db")
        return _pool


async def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Outcome:
    pool = _executor()
    if pool is None:  # Channels' one database thread, shared with the HTTP views
        return await _on_db_thread(fn, args, kwargs)  # type: ignore[no-any-return]
    return await SyncToAsync(_run, thread_sensitive=False, executor=pool)(fn, args, kwargs)  # type: ignore[no-any-return]


def shutdown() -> None:
    """Close every pool thread's database connection and stop the pool (a new one starts on next use):
    for the end of a test, whose database must then have no session left."""
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
    if pool is None:
        return
    workers = pool._max_workers
    barrier = threading.Barrier(workers)

    def close() -> None:  # one per thread: each waits at the barrier until all have closed theirs
        connections.close_all()
        try:
            barrier.wait(timeout=5)
        except threading.BrokenBarrierError:
            pass

    try:
        for future in [pool.submit(close) for _ in range(workers)]:
            future.result(timeout=10)
    except TimeoutError:  # a thread is stuck (a lock): leave it, do not wait for it
        log.error("hotpath: a database thread did not close its connection")
        pool.shutdown(wait=False, cancel_futures=True)
        return
    pool.shutdown(wait=True)


async def probe() -> None:
    """A call that does nothing, through the same threads as ``db`` (``games.live.capacity`` times its wait)."""
    await _call(_noop, (), {})


def _noop() -> None:
    return None


async def db(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` on a database thread; its pushes are sent from here afterwards."""
    outcome = await _call(fn, args, kwargs)
    if outcome.events:
        await push.send_events(outcome.events)
    if outcome.error is not None:
        raise outcome.error
    return outcome.result  # type: ignore[no-any-return]
