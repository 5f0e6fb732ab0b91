"""A cancellation that arrives while redis-py sends a command is not lost (pocha_site/redis_cancel.py).

The race is made exact: the send itself cancels the task that awaits it, so the send has finished by the
time the cancellation reaches ``wait_for``.  No Redis is needed: the connection's stream is a stand-in.
"""

from __future__ import annotations

import asyncio
import sys

import pytest
from django.conf import settings
from redis.asyncio.connection import Connection

from pocha_site.redis_cancel import CancelSafeConnection, CancelSafeSSLConnection, connection_class


class _Writer:
    def __init__(self) -> None:
        self.closed = False
        self.sent: list[bytes] = []

    def writelines(self, data: list[bytes]) -> None:
        self.sent.extend(data)

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self.closed = True

    async def wait_closed(self) -> None:
        return None


def _connected(cls: type[Connection]) -> tuple[Connection, _Writer]:
    conn = cls(socket_timeout=5)
    writer = _Writer()
    conn._reader = object()  # type: ignore[assignment]
    conn._writer = writer  # type: ignore[assignment]
    return conn, writer


async def _send_while_cancelled(cls: type[Connection]) -> tuple[asyncio.Task[None], _Writer]:
    conn, writer = _connected(cls)
    outer: asyncio.Task[None] | None = None
    real_send = conn._send_packed_command

    async def send_then_cancel(command):  # type: ignore[no-untyped-def]
        await real_send(command)
        assert outer is not None
        outer.cancel()  # the send is done; the cancellation reaches wait_for right after

    conn._send_packed_command = send_then_cancel  # type: ignore[method-assign]

    async def command() -> None:
        await conn.send_packed_command(b"PING\r\n", check_health=False)

    outer = asyncio.create_task(command())
    await asyncio.wait([outer], timeout=5)
    return outer, writer


async def test_the_send_honours_a_cancellation_that_arrives_as_it_completes() -> None:
    task, writer = await _send_while_cancelled(CancelSafeConnection)
    assert writer.sent == [b"PING\r\n"]
    assert task.cancelled()
    assert writer.closed  # the reply will never be read: the connection is dropped


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12's wait_for keeps the cancellation")
async def test_plain_redis_py_loses_that_cancellation_on_python_3_11() -> None:
    """Why the class exists: the same race with redis-py's own connection ends as if never cancelled."""
    task, writer = await _send_while_cancelled(Connection)
    assert writer.sent == [b"PING\r\n"]
    assert task.done() and not task.cancelled() and task.exception() is None
    assert not writer.closed


async def test_a_plain_send_is_unchanged() -> None:
    conn, writer = _connected(CancelSafeConnection)
    await conn.send_packed_command(b"PING\r\n", check_health=False)
    assert writer.sent == [b"PING\r\n"] and not writer.closed


def test_every_async_client_of_the_site_uses_it() -> None:
    assert connection_class("redis://127.0.0.1:6379/0") is CancelSafeConnection
    assert connection_class("rediss://example.org:6380/0") is CancelSafeSSLConnection
    layer = settings.CHANNEL_LAYERS["default"]
    if "redis" in layer["BACKEND"]:
        assert layer["CONFIG"]["hosts"][0]["connection_class"] is CancelSafeConnection
    from pocha_site.settings import channel_layer_settings

    host = channel_layer_settings({"REDIS_URL": "redis://127.0.0.1:6379/3"})["default"]["CONFIG"]["hosts"][0]
    assert host["connection_class"] is CancelSafeConnection
