"""A minimal standard-library WebSocket client (RFC 6455: text frames, ping/pong, close), and the HTTP side of
a browser (session cookie, CSRF), for the tests that drive a real server in a subprocess (``test_restart``,
``test_chips_restart``, ``tests/faults``) as a browser would."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import http.cookiejar
import json
import os
import re
import struct
import urllib.parse
import urllib.request
from typing import Any, Protocol

#: Every account these tests make has this password.
PASSWORD = "cuarenta-bazas-2025"


class Site(Protocol):
    origin: str


class Browser:
    """HTTP with a cookie jar, as a browser would: CSRF token from the form, session cookie kept."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def cookie(self, name: str) -> str:
        for cookie in self.jar:
            if cookie.name == name:
                return str(cookie.value)
        raise AssertionError(f"no {name} cookie")

    def get(self, path: str) -> tuple[str, bytes]:
        with self.opener.open(self.site.origin + path, timeout=15) as response:
            return response.geturl(), response.read()

    def post(self, path: str, form_page: str, fields: dict[str, str]) -> tuple[str, bytes]:
        _url, page = self.get(form_page)
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token, "no CSRF token on " + form_page
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1).decode(), **fields}).encode()
        request = urllib.request.Request(
            self.site.origin + path,
            data=data,
            headers={"Origin": self.site.origin, "Referer": self.site.origin + form_page},
        )
        with self.opener.open(request, timeout=15) as response:
            return response.geturl(), response.read()

    def login(self, username: str) -> None:
        url, _page = self.post(
            "/accounts/login/", "/accounts/login/", {"username": username, "password": PASSWORD, "next": "/"}
        )
        assert urllib.parse.urlsplit(url).path == "/", f"login failed: landed on {url}"
        self.cookie("sessionid")

    def create_table(self, size: int, stake: int = 0) -> int:
        url, _page = self.post("/mesas/nueva/", "/", {"size": str(size), "stake": str(stake)})
        match = re.fullmatch(r"/mesa/(\d+)/", urllib.parse.urlsplit(url).path)
        assert match, f"creating a table landed on {url}"
        return int(match.group(1))


class WebSocket:
    """A minimal RFC 6455 client (text frames, ping/pong, close) over asyncio streams."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.closed = False

    @classmethod
    async def connect(cls, port: int, path: str, headers: dict[str, str]) -> WebSocket:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: 127.0.0.1:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        response = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        status = response.split(b"\r\n", 1)[0]
        assert b" 101 " in status + b" ", f"handshake refused: {response!r}"
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        assert b"sec-websocket-accept: " + accept.lower() in response.lower(), response
        return cls(reader, writer)

    async def _frame(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        length = len(payload)
        if length < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.writer.write(header + mask + masked)
        await self.writer.drain()

    async def send(self, payload: dict[str, Any]) -> None:
        await self._frame(0x1, json.dumps(payload).encode())

    async def recv(self) -> str | None:
        """The next text message; None once the connection is closed."""
        message = b""
        while True:
            try:
                first, second = await self.reader.readexactly(2)
            except (asyncio.IncompleteReadError, ConnectionError):
                self.closed = True
                return None
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await self.reader.readexactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
            mask = await self.reader.readexactly(4) if second & 0x80 else b""
            payload = await self.reader.readexactly(length)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                self.closed = True
                return None
            if opcode == 0x9:
                await self._frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            message += payload
            if first & 0x80:
                return message.decode()

    async def close(self) -> None:
        if not self.closed:
            try:
                await self._frame(0x8, struct.pack("!H", 1000))
            except (ConnectionError, RuntimeError):
                pass
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except (ConnectionError, OSError):
            pass
