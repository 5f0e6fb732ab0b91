"""At most POCHA_HTTP_CONCURRENCY HTTP requests of a process run at once (pocha_site/http_limit.py); the
others wait on the loop, and how long they waited is a load-shedding signal."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from games.live import capacity
from games.live.http_limit import LimitHttp


class Recorder:
    """An ASGI app that takes 50 ms and records how many of it run at once."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.done = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(0.05)
        finally:
            self.running -= 1
            self.done += 1


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    noted: list[float] = []
    monkeypatch.setattr(capacity, "note_http_wait", noted.append)
    return noted


async def run(app: LimitHttp, kind: str, n: int) -> None:
    await asyncio.gather(*(app({"type": kind}, None, None) for _ in range(n)))


@pytest.mark.parametrize("limit", [1, 3])
async def test_requests_beyond_the_limit_wait_their_turn(settings: Any, waits: list[float], limit: int) -> None:
    settings.POCHA_HTTP_CONCURRENCY = limit
    inner = Recorder()
    await run(LimitHttp(inner), "http", 6)
    assert inner.done == 6 and inner.most == limit
    assert len(waits) == 6
    assert sorted(waits)[-1] >= 0.05 * (6 // limit - 1) - 0.01  # the last waited for those before it
    assert min(waits) < 0.01  # the first went straight in


async def test_sockets_and_no_limit_are_not_held(settings: Any, waits: list[float]) -> None:
    settings.POCHA_HTTP_CONCURRENCY = 1
    inner = Recorder()
    await run(LimitHttp(inner), "websocket", 5)  # a socket's work is on the loop already
    assert inner.most == 5 and waits == []
    settings.POCHA_HTTP_CONCURRENCY = 0
    inner = Recorder()
    await run(LimitHttp(inner), "http", 5)
    assert inner.most == 5 and waits == []


def test_the_site_serves_http_through_it() -> None:
    from pocha_site.asgi import application

    router = application.app
    assert isinstance(router.application_mapping["http"], LimitHttp)
    assert not isinstance(router.application_mapping["websocket"], LimitHttp)
