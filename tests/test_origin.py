"""The WebSocket origin check (pocha_site/origin.py): scheme, host and port of the page must be the
socket's own, or listed in CSRF_TRUSTED_ORIGINS, and the host one of ALLOWED_HOSTS."""

from __future__ import annotations

from typing import Any

import pytest
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.testing import WebsocketCommunicator

from pocha_site.origin import SameOriginValidator, origin_allowed, parse_origin


class Accepts(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        await self.accept()


def scope(host: bytes | None, *origins: bytes, scheme: str | None = None, **extra: bytes) -> dict[str, Any]:
    headers = [(b"origin", origin) for origin in origins]
    if host is not None:
        headers.append((b"host", host))
    headers += [(name.replace("_", "-").encode(), value) for name, value in extra.items()]
    made: dict[str, Any] = {
        "type": "websocket",
        "path": "/ws/mesa/1/",
        "headers": headers,
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
    }
    if scheme:
        made["scheme"] = scheme
    return made


@pytest.fixture(autouse=True)
def hosts(settings) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver", "pocha.example"]
    settings.CSRF_TRUSTED_ORIGINS = []
    settings.SECURE_PROXY_SSL_HEADER = None


async def connects(headers: list[tuple[bytes, bytes]]) -> bool:
    communicator = WebsocketCommunicator(SameOriginValidator(Accepts.as_asgi()), "/ws/mesa/1/", headers=headers)
    connected, _ = await communicator.connect(timeout=3)
    if connected:
        await communicator.disconnect()
    return bool(connected)


# -- Through the ASGI application wrapper -------------------------------------------------------


async def test_same_host_and_port_is_accepted() -> None:
    assert await connects([(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")])


async def test_same_host_on_another_port_is_refused() -> None:
    assert not await connects([(b"origin", b"http://127.0.0.1:9999"), (b"host", b"127.0.0.1:8000")])
    # the default port written or not is the same origin; another port is not
    assert not await connects([(b"origin", b"http://testserver:8080"), (b"host", b"testserver")])


async def test_a_missing_origin_is_refused() -> None:
    assert not await connects([(b"host", b"127.0.0.1:8000")])


async def test_a_foreign_host_is_refused() -> None:
    assert not await connects([(b"origin", b"http://evil.example"), (b"host", b"127.0.0.1:8000")])
    assert not await connects([(b"origin", b"http://testserver.evil.example"), (b"host", b"testserver")])


async def test_a_trusted_origin_is_accepted(settings) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://play.pocha.example"]
    assert await connects([(b"origin", b"https://play.pocha.example"), (b"host", b"127.0.0.1:8000")])
    assert not await connects([(b"origin", b"http://play.pocha.example"), (b"host", b"127.0.0.1:8000")])
    assert not await connects([(b"origin", b"https://play.pocha.example:8443"), (b"host", b"127.0.0.1:8000")])


# -- The rules, scope by scope -------------------------------------------------------------------


def test_default_ports_count_as_written() -> None:
    assert origin_allowed(scope(b"testserver", b"http://testserver"))
    assert origin_allowed(scope(b"testserver:80", b"http://testserver"))
    assert origin_allowed(scope(b"testserver", b"http://testserver:80"))
    assert origin_allowed(scope(b"TestServer", b"http://testserver"))


def test_the_scheme_must_match_the_socket() -> None:
    assert not origin_allowed(scope(b"pocha.example", b"https://pocha.example"))  # ws: the page was http
    assert origin_allowed(scope(b"pocha.example", b"https://pocha.example", scheme="wss"))
    assert not origin_allowed(scope(b"pocha.example", b"http://pocha.example", scheme="wss"))


def test_behind_a_proxy_its_header_says_https(settings) -> None:
    proxied = scope(b"pocha.example", b"https://pocha.example", x_forwarded_proto=b"https")
    assert not origin_allowed(proxied)  # the header counts only when the settings say so
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert origin_allowed(proxied)
    assert not origin_allowed(scope(b"pocha.example", b"https://pocha.example", x_forwarded_proto=b"http"))


def test_the_host_must_be_allowed_even_for_a_trusted_origin(settings) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://pocha.example"]
    assert not origin_allowed(scope(b"evil.example", b"http://evil.example"))
    assert not origin_allowed(scope(b"evil.example", b"https://pocha.example"))
    assert origin_allowed(scope(b"127.0.0.1:8000", b"https://pocha.example"))


def test_trusted_wildcards_cover_subdomains_only(settings) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://*.pocha.example"]
    assert origin_allowed(scope(b"testserver", b"https://www.pocha.example"))
    assert origin_allowed(scope(b"testserver", b"https://pocha.example"))
    assert not origin_allowed(scope(b"testserver", b"https://evilpocha.example"))
    assert not origin_allowed(scope(b"testserver", b"http://www.pocha.example"))


@pytest.mark.parametrize(
    "origin",
    [
        b"",
        b"null",
        b"http://",
        b"file:///etc",
        b"http://testserver/page",
        b"http://user@testserver",
        b"http://testserver:99999",
        b"ws://testserver",
    ],
)
def test_malformed_origins_are_refused(origin: bytes) -> None:
    assert not origin_allowed(scope(b"testserver", origin))


def test_two_origins_are_refused() -> None:
    assert not origin_allowed(scope(b"testserver", b"http://testserver", b"http://testserver"))


def test_parse_origin() -> None:
    assert parse_origin("https://Pocha.Example") == ("https", "pocha.example", 443)
    assert parse_origin("http://[::1]:8000") == ("http", "::1", 8000)
    assert parse_origin("http://testserver/") == ("http", "testserver", 80)
