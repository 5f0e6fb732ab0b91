"""Table events between processes: one Redis pub/sub channel, fanned out to the sockets in each process.

A table's change (``push.table_changed``) or phrase (``table.talk``) goes to every socket showing the
table.  Channels' groups deliver it through each socket's own channel: four messages per move, each
fetched by the receiving process with four Redis round trips, one message at a time — the per-process
ceiling under load.  Here each process subscribes once to the site's channel (``POCHA_HUB_CHANNEL``), gets
every table event as a stream, and hands it to its own sockets showing that table (``register``); the
sockets' order of events is kept (each socket handles its events one after the other).

Pub/sub keeps nothing for a process that is not listening.  A process that loses Redis subscribes again
as soon as it can and then redraws every one of its sockets from the database (a forced ``resync``
event), so no change made meanwhile stays unseen.  Without Redis (the embedded mode, one process) the
events go straight to this process's sockets.

The events carry the table's snapshot (the whole engine state, ``selectors.pack_snapshot``): they travel
between server processes only; each socket draws its own viewer's board from them.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import logging
import threading
from typing import Any, Protocol

from django.conf import settings
from django.db import connections

from pocha_site.redis_cancel import connection_class

log = logging.getLogger(__name__)

#: Seconds between two pings of a quiet subscription (a dead connection is then noticed within them).
PING_SECONDS = 5.0
RECONNECT_SECONDS = 0.5
#: How long a new socket waits for its process's subscription (its first one) before going on.
READY_SECONDS = 3.0


class Listener(Protocol):
    def deliver(self, event: dict[str, Any]) -> None: ...


_local: dict[int, set[Listener]] = {}
_loop: asyncio.AbstractEventLoop | None = None
_task: asyncio.Task[None] | None = None
_ready: asyncio.Event | None = None
_sync_client: Any = None
_async_client: Any = None
_client_lock = threading.Lock()
_resyncs = 0


def channel() -> str:
    """``POCHA_HUB_CHANNEL``, else a name made from the database in use (read now: the test suites
    switch to their test database after start-up) and Redis."""
    if settings.POCHA_HUB_CHANNEL:
        return str(settings.POCHA_HUB_CHANNEL)
    db = connections["default"].settings_dict
    key = f"{db.get('HOST')}|{db.get('PORT')}|{db.get('NAME')}|{_redis_url()}"
    return "pocha:tables:" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _redis_url() -> str | None:
    return getattr(settings, "REDIS_URL", None)


async def register(table_id: int, listener: Listener) -> None:
    """``listener`` (a socket of this process) gets every event of the table from now on: on return, this
    process is subscribed (or Redis is down, and the resync when it is back covers the gap)."""
    ready = _ensure_listening()
    _local.setdefault(table_id, set()).add(listener)
    if ready is not None and not ready.is_set():
        try:
            await asyncio.wait_for(ready.wait(), READY_SECONDS)
        except TimeoutError:
            log.warning("hub: not subscribed to %s yet; table %s's socket goes on", channel(), table_id)


def unregister(table_id: int, listener: Listener) -> None:
    listeners = _local.get(table_id)
    if listeners is not None:
        listeners.discard(listener)
        if not listeners:
            del _local[table_id]


def listeners(table_id: int) -> int:
    return len(_local.get(table_id, ()))


def _deliver(event: dict[str, Any]) -> None:
    try:
        table_id = int(event["table"])
    except (KeyError, TypeError, ValueError):
        log.error("hub: an event with no table: %r", event.get("type"))
        return
    for listener in list(_local.get(table_id, ())):
        try:
            listener.deliver(event)
        except Exception:
            log.exception("hub: delivering to a socket of table %s failed", table_id)


def _ensure_listening() -> asyncio.Event | None:
    """Remember this process's loop and, with Redis, keep one subscription running on it; its readiness."""
    global _loop, _task, _ready
    loop = asyncio.get_running_loop()
    if _loop is not loop:
        _loop, _task, _ready = loop, None, None
        _local.clear()  # sockets of a loop that is gone are gone with it
    if not _redis_url():
        return None
    if _ready is None:
        _ready = asyncio.Event()
    if _task is None or _task.done():
        _task = loop.create_task(_listen(_ready), context=contextvars.Context())
    return _ready


async def _listen(ready: asyncio.Event) -> None:
    import redis.asyncio as aioredis

    url = _redis_url()
    subscribed_before = False
    while True:
        client = aioredis.from_url(
            url, socket_timeout=None, socket_connect_timeout=5, connection_class=connection_class(url)
        )
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(channel())
            ready.set()
            if subscribed_before:
                _resync_all()  # whatever was published while this process was not listening
            subscribed_before = True
            quiet = 0.0
            me = asyncio.current_task()
            while True:
                message = await pubsub.get_message(timeout=1.0)
                if me is not None and me.cancelling():  # a cancellation redis-py swallowed: stop here
                    raise asyncio.CancelledError
                if message is None:
                    quiet += 1.0
                    if quiet >= PING_SECONDS:
                        await pubsub.ping()
                        quiet = 0.0
                    continue
                quiet = 0.0
                if message.get("type") != "message":
                    continue
                try:
                    event = json.loads(message["data"])
                except (TypeError, ValueError):
                    log.error("hub: a message that is not JSON on %s", channel())
                    continue
                _deliver(event)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            ready.clear()
            log.warning("hub: subscription to %s lost (%s); subscribing again", channel(), error)
            await asyncio.sleep(RECONNECT_SECONDS)
        finally:
            try:
                await asyncio.wait_for(pubsub.aclose(), 1.0)
                await asyncio.wait_for(client.aclose(), 1.0)
            except BaseException:  # closing is best effort (the loop may be going away)
                pass


def _resync_all() -> None:
    """Every socket of this process draws its board again from the database (events may be lost)."""
    global _resyncs
    _resyncs += 1
    for table_id in list(_local):
        _deliver({"type": "table.changed", "table": table_id, "seq": 0, "resync": True, "id": f"resync-{_resyncs}"})


def _payload(event: dict[str, Any]) -> str:
    return json.dumps(event, separators=(",", ":"))


async def publish(event: dict[str, Any]) -> None:
    """Send a table event (with a ``table`` key) from the event loop."""
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
    await _async_client.publish(channel(), _payload(event))


def publish_sync(event: dict[str, Any]) -> None:
    """Send a table event from a plain thread (an HTTP view, the Celery worker, a command)."""
    if not _redis_url():
        _deliver_here(event)
        return
    global _sync_client
    import redis

    with _client_lock:
        if _sync_client is None:
            _sync_client = redis.Redis.from_url(_redis_url(), socket_timeout=5, socket_connect_timeout=5)
        client = _sync_client
    client.publish(channel(), _payload(event))


def _deliver_here(event: dict[str, Any]) -> None:
    """No Redis: one process, whose loop (if it serves sockets) gets the event."""
    loop = _loop
    if loop is None or loop.is_closed():
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        _deliver(event)
    else:
        loop.call_soon_threadsafe(_deliver, event, context=contextvars.Context())
