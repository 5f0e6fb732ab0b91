"""redis-py's asyncio connections, with a cancellation that arrives during a send honoured.

redis-py sends each command under ``asyncio.wait_for(send, socket_timeout)`` when the connection has a
socket timeout (ours do: the channel layer's 10 s, the hub's publisher's 5 s).  On Python 3.11,
``wait_for`` returns the send's result when a cancellation arrives just as the send completes
(CPython gh-86296, fixed in 3.12 by rebuilding ``wait_for`` on ``asyncio.timeout``): the cancellation is
lost.  Channels' consumers are cancelled that way when their socket closes (Daphne, or a test's event
loop at its teardown); channels_redis's ``receive`` then goes on with its blocking pops for ever, a task
that never ends: a test run hangs on it at a module's teardown, and a server leaks one.

These classes notice a cancellation that the send swallowed (the task's ``cancelling()`` count went up
and nothing was raised), drop the connection (the command's reply will never be read) and raise it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from redis.asyncio.connection import Connection, SSLConnection


class _HonourCancel:
    async def send_packed_command(self, command: bytes | str | Iterable[bytes], check_health: bool = True) -> None:
        task = asyncio.current_task()
        before = task.cancelling() if task is not None else 0
        await super().send_packed_command(command, check_health)  # type: ignore[misc]
        if task is not None and task.cancelling() > before:
            await self.disconnect(nowait=True)  # type: ignore[attr-defined]
            raise asyncio.CancelledError


class CancelSafeConnection(_HonourCancel, Connection):
    pass


class CancelSafeSSLConnection(_HonourCancel, SSLConnection):
    pass


def connection_class(url: str) -> type[Any]:
    """The class for a ``redis://`` or ``rediss://`` URL (redis-py picks its own for ``unix://``)."""
    return CancelSafeSSLConnection if url.startswith("rediss://") else CancelSafeConnection
