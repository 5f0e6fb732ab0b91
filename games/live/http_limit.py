"""At most ``POCHA_HTTP_CONCURRENCY`` HTTP requests of a server process run at once; the others wait
their turn on the event loop, where waiting costs nothing.

Django runs each HTTP request's view in a thread of its own, and Python runs one thread at a time: with
ten requests in their views (a burst of people opening tables), the event loop, which carries every
running game's moves and boards, gets about a tenth of the process.  Queuing the requests beyond a few
keeps the loop's share (and the games' latency) while the requests themselves go through at the same
total rate, as the process's CPU allows.  WebSockets are not limited: their work is on the loop already.

How long requests wait here is one of the load-shedding signals (``games.live.capacity``): a process whose
requests queue refuses new tables.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import Any

from django.conf import settings

from games.live import capacity


class LimitHttp:
    def __init__(self, app: Any) -> None:
        self.app = app
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def semaphore(self) -> asyncio.Semaphore | None:
        limit = int(settings.POCHA_HTTP_CONCURRENCY)
        if limit <= 0:
            return None
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(limit)
        return semaphore

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        semaphore = self.semaphore() if scope["type"] == "http" else None
        if semaphore is None:
            return await self.app(scope, receive, send)
        started = time.monotonic()
        async with semaphore:
            capacity.note_http_wait(time.monotonic() - started)
            return await self.app(scope, receive, send)
