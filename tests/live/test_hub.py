"""The hub's bookkeeping (``games.live.hub``): a process hears a table while it shows it.

With Redis (``test_services_*``, against the suite's Redis), Redis itself says who is subscribed to a
table's channel (``PUBSUB NUMSUB``) and how many processes a publish reached; without it (the embedded
mode) the hub keeps the same books for its one process.  The listeners here are plain recorders standing
for sockets.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings

from games.live import hub

services = pytest.mark.skipif(not django_settings.REDIS_URL, reason="services mode only (Redis)")


class Recorder:
    """Stands for a socket: keeps every event the hub hands it."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def deliver(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        self.arrived.set()

    async def wait_for(self, predicate: Any, what: str, timeout: float = 15) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self.arrived.clear()
                if predicate():
                    return
                await self.arrived.wait()

    def resyncs(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("resync")]

    def moves(self) -> list[int]:
        return [e["n"] for e in self.events if "n" in e]


def event(table: int, n: int, padding: int = 0) -> dict[str, Any]:
    return {"type": "table.changed", "table": table, "seq": n, "n": n, **({"pad": "x" * padding} if padding else {})}


@pytest.fixture
def channels(settings: Any) -> Iterator[str]:
    """Channels of this test's own (the suite's workers and other tests share the Redis server)."""
    settings.POCHA_HUB_CHANNEL = f"hub-test-{uuid.uuid4().hex[:10]}"
    yield settings.POCHA_HUB_CHANNEL


@pytest.fixture
def no_linger(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub, "LINGER_SECONDS", 0)


@pytest.fixture
async def hub_stops() -> AsyncIterator[None]:
    """The test's hub stops listening with the test (its loop closes after it)."""
    yield
    state = hub._state
    if state is not None and state.task is not None:
        state.task.cancel()
        await asyncio.wait([state.task])


@pytest.fixture
def embedded(settings: Any) -> None:
    settings.REDIS_URL = None


@pytest.fixture
def admin() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(django_settings.REDIS_URL)
    yield client
    client.close()


def subscribers(admin: redis.Redis, table: int) -> int:
    """How many connections Redis has subscribed to the table's channel."""
    ((_name, count),) = admin.pubsub_numsub(hub.channel(table))
    return int(count)


async def until(predicate: Any, what: str, timeout: float = 15) -> None:
    """Wait for a condition another connection makes true (Redis answering an UNSUBSCRIBE, say)."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def publish_elsewhere(admin: redis.Redis, table: int, payload: dict[str, Any]) -> int:
    """Publish as another process would; how many subscribers got it."""
    return int(admin.publish(hub.channel(table), hub._payload(payload)))


# -- names ----------------------------------------------------------------------------------------------


def test_a_channel_per_table_under_the_sites_prefix(settings: Any) -> None:
    settings.POCHA_HUB_CHANNEL = "pocha-live"
    assert hub.channel(7) == "pocha-live:7" and hub.channel(12) == "pocha-live:12"
    settings.POCHA_HUB_CHANNEL = ""
    derived = hub.channel(7)
    assert derived.startswith("pocha:tables:") and derived.endswith(":7")
    assert hub.prefix() == derived.removesuffix(":7")
    settings.REDIS_URL = "redis://elsewhere:6379/3"  # another site on the same Redis hears nothing of this one
    assert hub.prefix() != derived.removesuffix(":7")


# -- embedded: one process, the same books -------------------------------------------------------------


async def test_embedded_events_reach_the_tables_sockets_only_and_are_counted(embedded: None, no_linger: None) -> None:
    first, second, other = Recorder(), Recorder(), Recorder()
    await hub.register(1, first)
    await hub.register(1, second)
    await hub.register(2, other)
    before = hub.stats()
    assert before["subscribed"] == [1, 2] and before["sockets"] == {1: 2, 2: 1}

    await hub.publish(event(1, 5))
    await asyncio.to_thread(hub.publish_sync, event(1, 6))  # from a plain thread: through the loop
    await first.wait_for(lambda: first.moves() == [5, 6], "both events")
    await hub.publish(event(3, 1))  # a table nobody shows here

    assert second.moves() == [5, 6] and other.events == []
    after = hub.stats()
    assert after["received"] - before["received"] == 3
    assert after["delivered"] - before["delivered"] == 4
    assert after["unshown"] - before["unshown"] == 1
    assert after["published"] - before["published"] == 3
    assert after["by_table"] == {1: before["by_table"][1] + 2, 2: before["by_table"][2]}

    hub.unregister(1, first)
    assert hub.stats()["subscribed"] == [1, 2]  # a socket of it is left
    hub.unregister(1, second)
    assert hub.stats()["subscribed"] == [2] and 1 not in hub.stats()["by_table"]


async def test_embedded_a_table_lingers_and_is_kept_when_shown_again(
    embedded: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub, "LINGER_SECONDS", 0.05)
    listener = Recorder()
    await hub.register(4, listener)
    hub.unregister(4, listener)
    assert hub.stats()["subscribed"] == [4]  # lingering
    await hub.register(4, listener)  # back within the linger: the timer is called off
    await asyncio.sleep(0.1)
    assert hub.stats()["subscribed"] == [4]
    hub.unregister(4, listener)
    await until(lambda: hub.stats()["subscribed"] == [], "the linger to end")


async def test_catch_up_redraws_a_table_only_once_it_stayed_behind_for_a_whole_check(
    embedded: None, no_linger: None
) -> None:
    """The database's seqs against what was heard: a table behind at one check may have its event on the
    way; behind at the same seq at the next, it is redrawn (once, for all its sockets); one whose event
    came in between, or whose sockets drew that seq themselves, or that moved on again, is not."""
    lost, late, drawn, moving = Recorder(), Recorder(), Recorder(), Recorder()
    drawn.sent_seq = 9  # type: ignore[attr-defined]  # a socket that drew its first board at seq 9
    for table, listener in ((1, lost), (2, late), (3, drawn), (4, moving)):
        await hub.register(table, listener)
        await hub.publish(event(table, 4))
    before = hub.stats()["caught_up"]

    assert hub.catch_up({1: 5, 2: 5, 3: 9, 4: 5}) == []  # 1, 2 and 4 behind: maybe on their way
    await hub.publish(event(2, 5))  # table 2's event comes
    assert hub.catch_up({1: 5, 2: 5, 3: 9, 4: 6}) == [1]  # 4 moved on: looked at again next time
    assert lost.resyncs() and lost.resyncs()[0]["seq"] == 5
    assert not late.resyncs() and not drawn.resyncs() and not moving.resyncs()
    assert hub.catch_up({1: 5, 2: 5, 3: 9, 4: 6}) == [4]  # table 1 is not redrawn twice for seq 5
    assert hub.stats()["caught_up"] == before + 2
    assert hub.catch_up({9: 3}) == []  # a table with no socket here


# -- with Redis: the subscriptions themselves ---------------------------------------------------------------


@services
async def test_services_the_first_socket_subscribes_and_the_last_one_unsubscribes(
    channels: str, no_linger: None, hub_stops: None, admin: redis.Redis
) -> None:
    first, second = Recorder(), Recorder()
    assert subscribers(admin, 10) == 0
    await hub.register(10, first)
    assert subscribers(admin, 10) == 1  # confirmed by Redis before register returned
    await hub.register(10, second)
    assert subscribers(admin, 10) == 1  # one subscription per process, whatever its sockets
    assert hub.stats()["subscribed"] == [10]

    hub.unregister(10, first)
    assert publish_elsewhere(admin, 10, event(10, 1)) == 1
    await second.wait_for(lambda: second.moves() == [1], "the event")
    hub.unregister(10, second)
    await until(lambda: subscribers(admin, 10) == 0, "the unsubscription")
    assert hub.stats()["subscribed"] == [] and hub.stats()["by_table"] == {}
    assert publish_elsewhere(admin, 10, event(10, 2)) == 0  # this process no longer receives the table

    again = Recorder()
    await hub.register(10, again)  # shown again: subscribed again
    assert subscribers(admin, 10) == 1
    assert publish_elsewhere(admin, 10, event(10, 3)) == 1
    await again.wait_for(lambda: again.moves() == [3], "the event")
    assert first.moves() == [] and second.moves() == [1]  # each heard the table while it showed it


@services
async def test_services_no_event_is_lost_for_a_new_socket(channels: str, hub_stops: None, admin: redis.Redis) -> None:
    """Whatever is published once ``register`` has returned reaches the socket: the consumer draws its
    first board right after, and every later change must come to it."""
    listeners = {table: Recorder() for table in range(100, 140)}
    for table, listener in listeners.items():
        await hub.register(table, listener)
        assert publish_elsewhere(admin, table, event(table, 1)) == 1
    for listener in listeners.values():
        await listener.wait_for(lambda listener=listener: listener.moves() == [1], "its event")


@services
async def test_services_sockets_registering_together_are_each_subscribed(
    channels: str, hub_stops: None, admin: redis.Redis
) -> None:
    listeners = {table: Recorder() for table in range(200, 230)}
    await asyncio.gather(*(hub.register(table, listener) for table, listener in listeners.items()))
    assert all(subscribers(admin, table) == 1 for table in listeners)
    assert hub.stats()["subscribed"] == sorted(listeners)


@services
async def test_services_a_table_lingers_then_goes(
    channels: str, hub_stops: None, admin: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub, "LINGER_SECONDS", 0.3)
    listener = Recorder()
    await hub.register(20, listener)
    hub.unregister(20, listener)
    assert subscribers(admin, 20) == 1  # a reload comes back within the linger
    before = hub.stats()["unshown"]
    assert publish_elsewhere(admin, 20, event(20, 1)) == 1
    await until(lambda: hub.stats()["unshown"] > before, "the event of the table shown nowhere")
    assert listener.events == []
    await until(lambda: subscribers(admin, 20) == 0, "the linger to end")


@services
async def test_services_a_lost_connection_resubscribes_every_table_then_resyncs(
    channels: str, hub_stops: None, admin: redis.Redis
) -> None:
    listeners = {table: Recorder() for table in (30, 31, 32)}
    for table, listener in listeners.items():
        await hub.register(table, listener)
    before = hub.stats()["resyncs"]
    name = f"pocha-hub:{socket.gethostname()}:{os.getpid()}"
    ours = [c for c in admin.client_list() if c.get("name") == name]
    assert len(ours) == 1, ours
    admin.client_kill_filter(_id=ours[0]["id"])

    for table, listener in listeners.items():
        await listener.wait_for(lambda listener=listener: bool(listener.resyncs()), "a resync")
        # every table was subscribed again before any socket was told to redraw
        assert subscribers(admin, table) == 1
    assert hub.stats()["resyncs"] == before + 1
    assert all(len(listener.resyncs()) == 1 for listener in listeners.values())
    for table, listener in listeners.items():
        assert publish_elsewhere(admin, table, event(table, 7)) == 1
        await listener.wait_for(lambda listener=listener: listener.moves() == [7], "the event after")


@services
async def test_services_subscriptions_changing_while_events_stream_lose_none(
    channels: str, no_linger: None, hub_stops: None, admin: redis.Redis
) -> None:
    """The listener stops its read for every change of the tables it hears (``hub._Link``): a table's
    stream of large events, read while other tables come and go many times, arrives whole and in order."""
    streaming = Recorder()
    await hub.register(40, streaming)
    count, batch = 300, 10
    churned = 0
    stop = threading.Event()

    def stream() -> None:
        """Batches of events, each sent once the loop has changed its subscriptions twice more."""
        with redis.Redis.from_url(django_settings.REDIS_URL) as client:
            for n in range(count):
                if n % batch == 0:
                    wanted = 2 * n // batch
                    while churned < wanted and not stop.wait(0.001):
                        pass
                if stop.is_set():
                    return
                client.publish(hub.channel(40), hub._payload(event(40, n, padding=20_000)))

    publisher = asyncio.get_running_loop().run_in_executor(None, stream)
    try:
        while not publisher.done():
            comer = Recorder()
            table = 41 + churned % 5
            await hub.register(table, comer)
            hub.unregister(table, comer)
            churned += 1
    finally:
        stop.set()
        await publisher
    await streaming.wait_for(lambda: len(streaming.moves()) >= count, "the whole stream", timeout=60)
    assert streaming.moves() == list(range(count))
    assert churned >= 2 * (count // batch - 1)  # the stream was read across that many changes
    assert streaming.resyncs() == []  # and the connection never dropped
    await until(lambda: all(subscribers(admin, t) == 0 for t in range(41, 46)), "the comers to go")


# -- against a Redis of the test's own: what the real one does too quickly to catch ----------------------


class FakeRedis:
    """Just enough of Redis for one pub/sub client, on a port of its own: every command answered ``+OK``,
    SUBSCRIBE and UNSUBSCRIBE confirmed channel by channel, PING answered (unless ``answer_pings`` is off);
    the test writes the messages, and may hold the answers back (``hold``) until it has finished one."""

    def __init__(self) -> None:
        self.commands: list[list[bytes]] = []
        self.connections = 0
        self.answer_pings = True
        self.held: list[bytes] | None = None
        self.changed = asyncio.Event()
        self.writer: asyncio.StreamWriter | None = None
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        return f"redis://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/0"

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        if self.writer is not None:
            self.writer.close()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writer = writer
        subscribed: set[bytes] = set()
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                command = [await self._bulk(reader) for _ in range(int(line[1:]))]
                self.commands.append(command)
                name = command[0].upper()
                if name in (b"SUBSCRIBE", b"UNSUBSCRIBE"):
                    for channel in command[1:]:
                        (subscribed.add if name == b"SUBSCRIBE" else subscribed.discard)(channel)
                        self.answer(self._array(name.lower(), channel, count=3) + b":%d\r\n" % len(subscribed))
                elif name == b"PING":
                    if self.answer_pings:
                        self.answer(self._array(b"pong", b""))
                else:
                    self.answer(b"+OK\r\n")
                self.changed.set()
        except ConnectionError:
            return

    @staticmethod
    async def _bulk(reader: asyncio.StreamReader) -> bytes:
        size = int((await reader.readline())[1:])
        return (await reader.readexactly(size + 2))[:-2]

    @staticmethod
    def _array(*items: bytes, count: int | None = None) -> bytes:
        head = b"*%d\r\n" % (count if count is not None else len(items))
        return head + b"".join(b"$%d\r\n%s\r\n" % (len(item), item) for item in items)

    def answer(self, data: bytes) -> None:
        if self.held is not None:
            self.held.append(data)
        elif self.writer is not None:
            self.writer.write(data)

    def message(self, channel: str, payload: dict[str, Any]) -> bytes:
        return self._array(b"message", channel.encode(), hub._payload(payload).encode())

    def hold(self) -> None:
        self.held = []

    def release(self, data: bytes = b"") -> None:
        assert self.writer is not None and self.held is not None
        self.writer.write(data + b"".join(self.held))
        self.held = None

    async def until(self, predicate: Any, what: str, timeout: float = 15) -> None:
        async with asyncio.timeout(timeout):
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

    def subscribes(self, table: int) -> int:
        name = hub.channel(table).encode()
        return sum(1 for c in self.commands if c[0].upper() == b"SUBSCRIBE" and name in c[1:])


@pytest.fixture
async def fake_redis(settings: Any, channels: str, hub_stops: None) -> AsyncIterator[FakeRedis]:
    fake = FakeRedis()
    settings.REDIS_URL = await fake.start()
    yield fake
    await fake.stop()


async def test_a_subscription_change_in_the_middle_of_a_message_loses_none_of_it(fake_redis: FakeRedis) -> None:
    """The listener stops its pending read to subscribe (``hub._Link.stop_reading``): a message half
    received when that happens is read whole afterwards."""
    streaming = Recorder()
    await hub.register(50, streaming)
    whole = fake_redis.message(hub.channel(50), event(50, 1, padding=50_000))
    half = len(whole) // 2
    fake_redis.hold()
    assert fake_redis.writer is not None
    fake_redis.writer.write(whole[:half])
    await asyncio.sleep(0.05)  # the listener reads what has come of the message
    comer = asyncio.ensure_future(hub.register(51, Recorder()))
    await fake_redis.until(lambda: fake_redis.subscribes(51) == 1, "the SUBSCRIBE sent mid-message")
    assert not comer.done()  # not confirmed yet: the answer comes after the message
    fake_redis.release(whole[half:])
    await comer
    await streaming.wait_for(lambda: streaming.moves() == [1], "the whole message")
    assert streaming.events[0]["pad"] == "x" * 50_000


async def test_a_redis_that_stops_answering_is_left_and_every_table_subscribed_again(
    fake_redis: FakeRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection on which Redis no longer answers (half open) is noticed by an unanswered ping; the
    next one subscribes to every table heard, then every socket redraws."""
    monkeypatch.setattr(hub, "PING_SECONDS", 0.1)
    monkeypatch.setattr(hub, "RECONNECT_SECONDS", 0.01)
    listeners = {table: Recorder() for table in (60, 61)}
    for table, listener in listeners.items():
        await hub.register(table, listener)
    fake_redis.answer_pings = False
    await fake_redis.until(lambda: fake_redis.connections == 2, "a new connection")
    fake_redis.answer_pings = True
    for table, listener in listeners.items():
        await listener.wait_for(lambda listener=listener: bool(listener.resyncs()), "a resync")
        assert fake_redis.subscribes(table) == 2  # once on each connection
