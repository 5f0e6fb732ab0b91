"""Driving a table through the real consumer: a logged-in WebSocket client that reads its own fragments."""

from __future__ import annotations

import asyncio
import html
import json
import re
from typing import Any

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from pocha_site.asgi import application

HX_VALS = re.compile(r"hx-vals='([^']*)'")
SEQ = re.compile(r'data-board-seq="(\d+)"')


@database_sync_to_async
def make_user(name: str) -> Any:
    return get_user_model().objects.create_user(username=name, password="cuarenta-bazas-2025")


@database_sync_to_async
def session_cookie(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


class Player:
    """One browser tab at a table: every frame it receives is kept in ``frames``."""

    def __init__(self, user: Any, table_id: int, language: str = "es") -> None:
        self.user = user
        self.table_id = table_id
        self.language = language
        self.frames: list[str] = []
        self.board = ""
        self.comm: WebsocketCommunicator | None = None

    async def connect(self, origin: bytes = b"http://testserver") -> bool:
        cookie = await session_cookie(self.user)
        headers = [(b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}; django_language={self.language}".encode()),
                   (b"origin", origin), (b"host", b"testserver")]
        self.comm = WebsocketCommunicator(application, f"/ws/mesa/{self.table_id}/", headers=headers)
        connected, _ = await self.comm.connect(timeout=5)
        if connected:
            await self.receive()
        return bool(connected)

    async def receive(self, timeout: float = 5) -> str:
        assert self.comm is not None
        frame = await self.comm.receive_from(timeout=timeout)
        self.frames.append(frame)
        if SEQ.search(frame):
            self.board = frame
        return frame

    async def drain(self, quiet: float = 0.05) -> None:
        assert self.comm is not None
        while not await self.comm.receive_nothing(timeout=quiet):
            await self.receive()

    async def send(self, payload: dict[str, Any] | str) -> None:
        assert self.comm is not None
        await self.comm.send_to(text_data=payload if isinstance(payload, str) else json.dumps(payload))

    @property
    def seq(self) -> int:
        match = SEQ.search(self.board)
        return int(match.group(1)) if match else -1

    def options(self) -> list[dict[str, str]]:
        """The moves the current board offers (every enabled ws-send control)."""
        return [json.loads(html.unescape(v)) for v in HX_VALS.findall(self.board)]

    def game_moves(self) -> list[dict[str, str]]:
        return [o for o in self.options() if o.get("action") in ("bid", "trump", "play")]

    async def close(self) -> None:
        if self.comm is not None:
            await self.comm.disconnect()


async def wait_for(predicate: Any, player: Player, timeout: float = 10) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        left = end - loop.time()
        if left <= 0:
            raise AssertionError("timed out waiting; last board:\n" + player.board[:3000])
        try:
            await player.receive(timeout=min(left, 1))
        except asyncio.TimeoutError:
            pass
