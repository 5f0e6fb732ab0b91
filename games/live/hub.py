"""Table events between processes: a Redis pub/sub channel per table, heard by the processes showing it.

A table's change (``push.table_changed``), phrase (``table.talk``) or forced redraw goes to every socket
showing the table.  Channels' groups would deliver it through each socket's own channel: a message per
socket, each fetched by the receiving process with several Redis round trips.  Here a process subscribes
to a table's channel (``channel(table_id)``) while it holds a socket of that table (``register`` /
``unregister``), gets the table's events as a stream, and hands each to its own sockets showing the table;
each socket handles its events one after the other.  A process hears only the tables it shows: with P
processes, an event is read by the processes showing its table, not by all P.

``register`` returns once Redis has confirmed the process's subscription to the table's channel: the
socket then draws its first board from the database, and every change committed after that read reaches
it.  A table keeps its subscription for ``LINGER_SECONDS`` after its last socket here closed, so that a
page reloaded (closed and opened again) does not unsubscribe and subscribe again.

Pub/sub keeps nothing for a process that is not listening.  A process that loses Redis subscribes to
every table it shows again as soon as it can, and once Redis has confirmed them all redraws every one of
its sockets from the database (a forced ``resync`` event), so no change made meanwhile stays unseen.
A change whose event was never published (its process died between commit and publish) is found by
``catch_up``, which compares the seqs heard here with the database's every few seconds.
Without Redis (the embedded mode, one process) the events go straight to this process's sockets.

Each process counts what it heard (``stats``): the events received, by table, and those handed to sockets.

On a Redis Cluster, plain PUBLISH reaches every node; channels per table are what sharded pub/sub
(SPUBLISH / SSUBSCRIBE, Redis 7) spreads over the shards, one subscription connection per shard.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hashlib
import json
import logging
import os
import socket
import threading
from typing import Any, Protocol

from django.conf import settings
from django.db import connections

from pocha_site.redis_cancel import connection_class

log = logging.getLogger(__name__)

#: Seconds of silence on the subscription before it is pinged; a ping unanswered for as long again means
#: the connection is dead (a half-open TCP connection is otherwise noticed only after many minutes).
PING_SECONDS = 5.0
RECONNECT_SECONDS = 0.5
#: How long a new socket waits for its table's subscription before drawing its board anyway (Redis is
#: down: the resync once it is back covers the gap).
READY_SECONDS = 3.0
#: How long a table stays subscribed after its last socket in this process closed.
LINGER_SECONDS = 5.0


class Listener(Protocol):
    """A socket showing a table.  One with a ``sent_seq`` (the seq of the last board it sent) is not
    redrawn by ``catch_up`` while that is the table's seq."""

    def deliver(self, event: dict[str, Any]) -> None: ...


class _Hub:
    """This process's hub on one event loop (the server's; every test has a loop of its own)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        #: table -> its sockets in this process
        self.local: dict[int, set[Listener]] = {}
        #: the tables this process hears -> set while Redis confirms the subscription (on the current connection)
        self.wanted: dict[int, asyncio.Event] = {}
        #: tables with no socket left here, still subscribed until their timer ends
        self.lingering: dict[int, asyncio.TimerHandle] = {}
        #: tables newly wanted, and no longer wanted, since the listener task last looked (``changed``)
        self.fresh: set[int] = set()
        self.dropped: set[int] = set()
        #: ``wanted`` changed: the listener task subscribes and unsubscribes accordingly
        self.changed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        #: events received for each table heard (a table's count goes when it is no longer heard)
        self.heard: dict[int, int] = {}
        #: the newest seq heard of each table shown here (its ``table.changed`` events)
        self.seqs: dict[int, int] = {}
        #: tables found behind the database at the last ``catch_up``, with the database's seq then
        self.behind: dict[int, int] = {}

    def want(self, table_id: int) -> asyncio.Event | None:
        """Hear the table; with Redis, the event set once the subscription is confirmed."""
        handle = self.lingering.pop(table_id, None)
        if handle is not None:
            handle.cancel()
        redis = bool(_redis_url())
        if table_id not in self.wanted:
            self.wanted[table_id] = asyncio.Event()
            self.heard.setdefault(table_id, 0)
            if redis:
                self.fresh.add(table_id)
                self.changed.set()
        if not redis:  # one process, which hears every event
            self.wanted[table_id].set()
            return None
        if self.task is None or self.task.done():
            self.task = self.loop.create_task(_listen(self), context=contextvars.Context())
        return self.wanted[table_id]

    def unshown(self, table_id: int) -> None:
        """The table's last socket here closed: stop hearing it after the linger (at once if none)."""
        if table_id not in self.wanted or table_id in self.lingering:
            return
        if LINGER_SECONDS > 0 and not self.loop.is_closed():
            self.lingering[table_id] = self.loop.call_later(LINGER_SECONDS, self.forget, table_id)
        else:
            self.forget(table_id)

    def forget(self, table_id: int) -> None:
        self.lingering.pop(table_id, None)
        if table_id in self.local:  # shown again meanwhile
            return
        self.seqs.pop(table_id, None)
        self.behind.pop(table_id, None)
        if self.wanted.pop(table_id, None) is not None:
            self.heard.pop(table_id, None)
            if self.task is not None:
                self.dropped.add(table_id)
                self.changed.set()


_state: _Hub | None = None
_sync_client: Any = None
_async_client: Any = None
_client_lock = threading.Lock()
_published_lock = threading.Lock()
#: this process's counts (``stats``), over its whole life
_counts = {"received": 0, "delivered": 0, "unshown": 0, "published": 0, "resyncs": 0, "caught_up": 0}


def _here() -> _Hub:
    """The hub of the running loop (a new one for a new loop: sockets of a loop that is gone are gone)."""
    global _state
    loop = asyncio.get_running_loop()
    if _state is None or _state.loop is not loop:
        _state = _Hub(loop)
    return _state


# -- names -------------------------------------------------------------------------------------------


def prefix() -> str:
    """``POCHA_HUB_CHANNEL``, else a name made from the database in use (read now: the test suites switch
    to their test database after start-up) and Redis: sites sharing a Redis never hear each other."""
    if settings.POCHA_HUB_CHANNEL:
        return str(settings.POCHA_HUB_CHANNEL)
    db = connections["default"].settings_dict
    return _derived_prefix(f"{db.get('HOST')}|{db.get('PORT')}|{db.get('NAME')}|{_redis_url()}")


@functools.lru_cache(maxsize=16)
def _derived_prefix(key: str) -> str:
    return "pocha:tables:" + hashlib.sha256(key.encode()).hexdigest()[:16]


def channel(table_id: int) -> str:
    """The table's pub/sub channel."""
    return f"{prefix()}:{int(table_id)}"


def _redis_url() -> str | None:
    return settings.REDIS_URL


# -- sockets -----------------------------------------------------------------------------------------


async def register(table_id: int, listener: Listener) -> None:
    """``listener`` (a socket of this process) gets every event of the table from now on: on return, this
    process is subscribed to the table's channel (or Redis is down, and the resync when it is back covers
    the gap)."""
    hub = _here()
    hub.local.setdefault(table_id, set()).add(listener)
    ready = hub.want(table_id)
    if ready is not None and not ready.is_set():
        try:
            await asyncio.wait_for(ready.wait(), READY_SECONDS)
        except TimeoutError:
            log.warning("hub: not subscribed to table %s yet; its socket goes on", table_id)


def unregister(table_id: int, listener: Listener) -> None:
    hub = _state
    if hub is None:
        return
    listeners = hub.local.get(table_id)
    if listeners is None:
        return
    listeners.discard(listener)
    if not listeners:
        del hub.local[table_id]
        hub.unshown(table_id)


def listeners(table_id: int) -> int:
    return len(_state.local.get(table_id, ())) if _state is not None else 0


def stats() -> dict[str, Any]:
    """What this process heard: events ``received`` (from Redis, or in-process without it), ``delivered``
    to sockets (an event counts once per socket), ``unshown`` (received for a table with no socket here:
    one lingering, or an event already on its way as the table was unsubscribed), ``published``,
    ``resyncs``; and, for each table heard now, its events received (``by_table``) and its sockets."""
    hub = _state
    return {
        "process": f"{socket.gethostname()}:{os.getpid()}",
        **_counts,
        "by_table": dict(hub.heard) if hub is not None else {},
        "sockets": {table: len(listeners) for table, listeners in hub.local.items()} if hub is not None else {},
        "subscribed": sorted(t for t, ready in hub.wanted.items() if ready.is_set()) if hub is not None else [],
    }


def _table_of(event: dict[str, Any]) -> int:
    try:
        return int(event["table"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"a table event with no table: {event.get('type')!r}") from None


def _receive(hub: _Hub, event: dict[str, Any]) -> None:
    """An event of a table heard: to this process's sockets showing it."""
    try:
        table_id = _table_of(event)
    except ValueError:
        log.error("hub: an event with no table: %r", event.get("type"))
        return
    _counts["received"] += 1
    if table_id in hub.heard:
        hub.heard[table_id] += 1
    listeners = hub.local.get(table_id)
    if listeners and event.get("type") == "table.changed" and not event.get("resync"):
        seq = event.get("seq")
        if isinstance(seq, int) and seq > hub.seqs.get(table_id, -1):
            hub.seqs[table_id] = seq
    if not listeners:
        _counts["unshown"] += 1
        return
    _hand_out(table_id, listeners, event)


def _hand_out(table_id: int, listeners: set[Listener], event: dict[str, Any]) -> None:
    for listener in list(listeners):
        _counts["delivered"] += 1
        try:
            listener.deliver(event)
        except Exception:
            log.exception("hub: delivering to a socket of table %s failed", table_id)


def _resync_all(hub: _Hub) -> None:
    """Every socket of this process draws its board again from the database (events may be lost)."""
    _counts["resyncs"] += 1
    number = _counts["resyncs"]
    for table_id, listeners in list(hub.local.items()):
        event = {"type": "table.changed", "table": table_id, "seq": 0, "resync": True, "id": f"resync-{number}"}
        _hand_out(table_id, listeners, event)


def shown() -> list[int]:
    """The tables this process has sockets of."""
    hub = _state
    return list(hub.local) if hub is not None else []


def catch_up(current: dict[int, int]) -> list[int]:
    """Redraw from the database the tables whose change never came.  ``current``: the seq of tables shown
    here, read from the database just now (every ``POCHA_PRESENCE_BEAT``, ``games.live.loop``).

    A change is published after its commit, by the process that committed it; one that dies in between
    (a worker killed, a server process killed) leaves the table moved on and nobody told, until the next
    change, which may be that person's clock running out.  A table whose database seq is ahead of every
    event heard here and every board its sockets were sent, at this check and at the one before at the
    same seq, has lost that event (events arrive within milliseconds): its sockets draw it again from
    the database, as after a lost subscription.  Returns those tables."""
    hub = _state
    if hub is None:
        return []
    behind: dict[int, int] = {}
    redrawn = []
    for table_id, seq in current.items():
        listeners = hub.local.get(table_id)
        if not listeners:
            continue
        known = max([hub.seqs.get(table_id, -1), *(getattr(listener, "sent_seq", -1) for listener in listeners)])
        if seq <= known:
            continue
        if hub.behind.get(table_id) != seq:
            behind[table_id] = seq  # maybe on its way: looked at again at the next check
            continue
        _counts["caught_up"] += 1
        hub.seqs[table_id] = seq
        event = {
            "type": "table.changed",
            "table": table_id,
            "seq": seq,
            "resync": True,
            "id": f"caught-up-{seq}-{_counts['caught_up']}",
        }
        log.warning("hub: table %s is at seq %s in the database, and no event of it came here: redrawn", table_id, seq)
        _hand_out(table_id, set(listeners), event)
        redrawn.append(table_id)
    hub.behind = behind
    return redrawn


# -- the subscription ------------------------------------------------------------------------------------
#
# One task per process owns the pub/sub connection: it reads it, and it alone sends SUBSCRIBE and
# UNSUBSCRIBE, woken by ``_Hub.changed``.  redis-py's PubSub can take a subscribe from another task while
# one waits in ``get_message`` (the command is only written), but its connection is not meant for several
# users: a command sent by a socket's task on a connection that has just dropped makes redis-py connect
# again and replay the subscriptions by itself, with no resync and while the listener reads the old one;
# and which SUBSCRIBE was sent on which connection, and so which reply confirms which socket, could not be
# told.  Woken, the task stops its pending read (redis-py's parser keeps a reply read halfway for the
# next read: its own read timeouts stop reads the same way) and sends the changes.


class _Link:
    """One connection to Redis and what was asked on it."""

    def __init__(self, pubsub: Any) -> None:
        self.pubsub = pubsub
        #: tables subscribed on this connection (or asked to be) -> their channels
        self.asked: dict[int, str] = {}
        #: channel -> its table, while subscribed or a subscribe reply is still to come
        self.tables: dict[str, int] = {}
        #: channel -> subscribe replies still to come
        self.pending: dict[str, int] = {}
        self.read: asyncio.Task[Any] | None = None
        self.woken: asyncio.Task[Any] | None = None

    async def follow(self, hub: _Hub, everything: bool = False) -> None:
        """Subscribe to the tables newly wanted, unsubscribe from those no longer wanted (``everything``:
        subscribe to every table wanted, on a new connection).  Only the changes are looked at: a process
        may hear thousands of tables."""
        fresh, dropped = (set(hub.wanted), set()) if everything else (hub.fresh, hub.dropped)
        hub.fresh, hub.dropped = set(), set()
        gone = [table for table in dropped if table in self.asked and table not in hub.wanted]
        if gone:
            names = [self.asked.pop(table) for table in gone]
            for name in names:
                if not self.pending.get(name):
                    self.tables.pop(name, None)
            await self.pubsub.unsubscribe(*names)
        new = [table for table in fresh if table in hub.wanted and table not in self.asked]
        if new:
            names = [channel(table) for table in new]
            await self.pubsub.subscribe(*names)
            for table, name in zip(new, names):
                self.asked[table] = name
                self.tables[name] = table
                self.pending[name] = self.pending.get(name, 0) + 1
        for table in fresh:  # wanted again before its UNSUBSCRIBE went: subscribed still
            self.confirm(hub, table)

    def confirm(self, hub: _Hub, table: int) -> None:
        """Mark the table heard once Redis has answered its last SUBSCRIBE on this connection."""
        ready = hub.wanted.get(table)
        name = self.asked.get(table)
        if ready is not None and name is not None and not self.pending.get(name):
            ready.set()

    def handle(self, hub: _Hub, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "message":
            try:
                event = json.loads(message["data"])
            except (TypeError, ValueError):
                log.error("hub: a message that is not JSON on %r", message.get("channel"))
                return
            _receive(hub, event)
        elif kind == "subscribe":
            name = _text(message.get("channel"))
            left = self.pending.pop(name, 0) - 1
            if left > 0:
                self.pending[name] = left
            table = self.tables.get(name)
            if table is None:
                return
            if self.asked.get(table) == name:
                self.confirm(hub, table)
            elif left <= 0:
                del self.tables[name]

    async def stop_reading(self, hub: _Hub) -> None:
        """Stop the pending read; a message it had already read is handled."""
        read, self.read = self.read, None
        if read is None:
            return
        read.cancel()
        await asyncio.wait([read])
        if not read.cancelled():
            message = read.result()  # a connection error is raised here
            if message is not None:
                self.handle(hub, message)

    async def run(self, hub: _Hub, resync: bool) -> None:
        """Keep the subscriptions as wanted and hand out the events, until the connection fails.
        ``resync``: once the tables wanted now are all confirmed, redraw every socket of this process."""
        await self.follow(hub, everything=True)
        waiting = set(hub.wanted) if resync else None
        pinged = False
        me = asyncio.current_task()
        while True:
            if me is not None and me.cancelling():  # a cancellation redis-py swallowed: stop here
                raise asyncio.CancelledError
            if hub.changed.is_set():
                hub.changed.clear()
                await self.stop_reading(hub)
                await self.follow(hub)
            if waiting is not None and all(hub.wanted[t].is_set() for t in waiting if t in hub.wanted):
                waiting = None
                _resync_all(hub)  # whatever was published while this process was not subscribed
            if self.read is None:
                self.read = asyncio.ensure_future(self.pubsub.get_message(timeout=PING_SECONDS))
            if self.woken is None:
                self.woken = asyncio.ensure_future(hub.changed.wait())
            await asyncio.wait((self.read, self.woken), return_when=asyncio.FIRST_COMPLETED)
            if self.woken.done():
                self.woken = None
            if self.read.done():
                read, self.read = self.read, None
                message = read.result()
                if message is not None:
                    pinged = False
                    self.handle(hub, message)
                elif pinged:
                    raise ConnectionError(f"no answer from Redis for {2 * PING_SECONDS:.0f} s")
                else:
                    await self.pubsub.ping()
                    pinged = True

    async def close(self) -> None:
        for task in (self.read, self.woken):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait([task])
        self.read = self.woken = None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def _listen(hub: _Hub) -> None:
    import redis.asyncio as aioredis

    url = _redis_url()
    lost = False
    while True:
        # No retries (from_url's default): a lost connection reaches this loop, which resyncs after it.
        client = aioredis.from_url(
            url,
            socket_timeout=None,
            socket_connect_timeout=5,
            connection_class=connection_class(url),
            client_name=f"pocha-hub:{socket.gethostname()}:{os.getpid()}",
        )
        link = _Link(client.pubsub())
        try:
            await link.pubsub.connect()
            await link.run(hub, resync=lost)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError from error
            lost = True
            for ready in hub.wanted.values():
                ready.clear()
            log.warning("hub: subscription lost (%s); subscribing again", error)
            await asyncio.sleep(RECONNECT_SECONDS)
        finally:
            try:
                await asyncio.wait_for(link.close(), 1.0)
                await asyncio.wait_for(link.pubsub.aclose(), 1.0)
                await asyncio.wait_for(client.aclose(), 1.0)
            except BaseException:  # closing is best effort (the loop may be going away)
                pass


# -- publishing ---------------------------------------------------------------------------------------


def _count_published() -> None:
    with _published_lock:  # published from the loop and from plain threads alike
        _counts["published"] += 1


def _payload(event: dict[str, Any]) -> str:
    return json.dumps(event, separators=(",", ":"))


async def publish(event: dict[str, Any]) -> None:
    """Send a table event (with a ``table`` key) from the event loop."""
    name = channel(_table_of(event))
    _count_published()
    if not _redis_url():
        _deliver_here(event)
        return
    global _async_client
    import redis.asyncio as aioredis

    if _async_client is None or getattr(_async_client, "_pocha_loop", None) is not asyncio.get_running_loop():
        url = _redis_url()
        _async_client = aioredis.from_url(
            url, socket_timeout=5, socket_connect_timeout=5, connection_class=connection_class(url)
        )
        _async_client._pocha_loop = asyncio.get_running_loop()
    await _async_client.publish(name, _payload(event))


def publish_sync(event: dict[str, Any]) -> None:
    """Send a table event from a plain thread (an HTTP view, the Celery worker, a command)."""
    name = channel(_table_of(event))
    _count_published()
    if not _redis_url():
        _deliver_here(event)
        return
    global _sync_client
    import redis

    with _client_lock:
        if _sync_client is None:
            _sync_client = redis.Redis.from_url(_redis_url(), socket_timeout=5, socket_connect_timeout=5)
        client = _sync_client
    client.publish(name, _payload(event))


def _deliver_here(event: dict[str, Any]) -> None:
    """No Redis: one process, whose loop (if it serves sockets) gets the event."""
    hub = _state
    if hub is None or hub.loop.is_closed():
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is hub.loop:
        _receive(hub, event)
    else:
        hub.loop.call_soon_threadsafe(_receive, hub, event, context=contextvars.Context())
