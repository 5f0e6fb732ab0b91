"""The client's address (``pocha_site.proxy``, ``TRUSTED_PROXIES``): the connection's own, unless the
connection comes from a trusted proxy, whose ``X-Forwarded-For`` then gives the right-most address that is
not a trusted proxy.  A client talking to the server directly cannot choose its address with the header, so
it cannot slip past the limits that count per address (sign-ups, logins, resets, private codes): tested on
the middleware, and through Daphne started with the command of ``deploy/supervisord.conf`` (``make up``),
on a bare machine and behind a proxy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import realstack
from django.conf import settings
from django.contrib.auth import get_user_model
from realstack import bare_stack, proxied_stack  # noqa: F401 (fixtures)

from pocha_site.proxy import trust_proxies

BASE_DIR = Path(__file__).resolve().parent.parent
PASSWORD = "cuarenta-bazas-2025"


class Seen:
    """An ASGI application that keeps the scope it was called with."""

    def __init__(self) -> None:
        self.scope: dict[str, Any] | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.scope = scope


async def seen_by_the_site(
    trusted: tuple[str, ...], peer: str, headers: dict[str, str], kind: str = "http"
) -> dict[str, Any]:
    inner = Seen()
    scope = {
        "type": kind,
        "scheme": "ws" if kind == "websocket" else "http",
        "client": [peer, 50123],  # Daphne gives a list
        "headers": [(name.lower().encode("latin1"), value.encode("latin1")) for name, value in headers.items()],
        "path": "/",
    }
    await trust_proxies(inner, trusted)(scope, None, None)
    assert inner.scope is not None
    return inner.scope


# -- the middleware -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["http", "websocket"])
async def test_with_no_trusted_proxy_the_headers_change_nothing(kind: str) -> None:
    forged = {"X-Forwarded-For": "1.2.3.4", "X-Forwarded-Proto": "https"}
    scope = await seen_by_the_site((), "203.0.113.9", forged, kind)
    assert scope["client"][0] == "203.0.113.9"
    assert scope["scheme"] in ("http", "ws")
    assert trust_proxies(inner := Seen(), ()) is inner  # nothing in between


@pytest.mark.parametrize("kind", ["http", "websocket"])
async def test_a_direct_client_cannot_choose_its_address(kind: str) -> None:
    forged = {"X-Forwarded-For": "1.2.3.4", "X-Forwarded-Proto": "https"}
    scope = await seen_by_the_site(("127.0.0.1",), "203.0.113.9", forged, kind)
    assert scope["client"][0] == "203.0.113.9"
    assert scope["scheme"] in ("http", "ws")


@pytest.mark.parametrize("kind", ["http", "websocket"])
async def test_a_trusted_proxy_gives_the_clients_address_and_scheme(kind: str) -> None:
    scope = await seen_by_the_site(
        ("127.0.0.1",), "127.0.0.1", {"X-Forwarded-For": "198.51.100.7", "X-Forwarded-Proto": "https"}, kind
    )
    assert scope["client"][0] == "198.51.100.7"
    assert scope["scheme"] == ("wss" if kind == "websocket" else "https")


async def test_the_right_most_address_that_is_not_a_trusted_proxy_counts() -> None:
    # The client wrote 6.6.6.6 itself; the first proxy saw 198.51.100.7; a second proxy (10.0.0.5) passed it on.
    chain = {"X-Forwarded-For": "6.6.6.6, 198.51.100.7, 10.0.0.5"}
    scope = await seen_by_the_site(("10.0.0.0/8", "127.0.0.1"), "10.0.0.2", chain)
    assert scope["client"][0] == "198.51.100.7"
    # IPv6 proxies and clients
    scope = await seen_by_the_site(("::1",), "::1", {"X-Forwarded-For": "2001:db8::7"})
    assert scope["client"][0] == "2001:db8::7"
    # a trusted proxy that sends no header: its own address
    scope = await seen_by_the_site(("127.0.0.1",), "127.0.0.1", {})
    assert scope["client"][0] == "127.0.0.1"


# -- the deployment ----------------------------------------------------------------------------------


def test_no_deployment_lets_daphne_believe_the_header() -> None:
    """Daphne's --proxy-headers believes X-Forwarded-For from anyone: no command of deploy/ uses it."""
    for path in [BASE_DIR / "deploy" / "supervisord.conf", *sorted((BASE_DIR / "deploy" / "systemd").iterdir())]:
        commands = [line for line in path.read_text().splitlines() if "daphne" in line and not line.startswith(";")]
        assert not any("--proxy-headers" in line for line in commands if not line.lstrip().startswith("#")), path
    assert realstack.supervised_command()[0].endswith("deploy/asgi.sh")
    daphne = realstack.asgi_daphne_lines()
    assert len(daphne) == 2 and all("--fd 0" in line for line in daphne), daphne  # with and without a port of its own
    assert not any("--proxy-headers" in line for line in daphne), daphne
    nginx = (BASE_DIR / "deploy" / "nginx.conf").read_text()
    assert "TRUSTED_PROXIES=127.0.0.1" in nginx
    assert "TRUSTED_PROXIES=127.0.0.1" in (BASE_DIR / "deploy" / "systemd" / "pocha.env.example").read_text()


# -- through the server, as `make up` runs it ----------------------------------------------------------


def sign_up(stack: realstack.Stack, name: str, forwarded_for: str) -> int:
    status, _ = stack.client().post(
        "/accounts/signup/",
        {"username": name, "password1": PASSWORD, "password2": PASSWORD},
        headers={"X-Forwarded-For": forwarded_for},
    )
    return status


@pytest.mark.django_db(transaction=True)
def test_twelve_sign_ups_with_twelve_forged_addresses_count_as_one_address(bare_stack: realstack.Stack) -> None:
    realstack.clear_of_a_window_turn(settings.POCHA_SIGNUP_WINDOW)
    statuses = [sign_up(bare_stack, f"falso{i}", f"198.51.100.{i + 1}") for i in range(12)]
    assert statuses == [302] * 10 + [429] * 2, bare_stack.log()  # POCHA_SIGNUP_LIMIT: 10 an hour per address
    assert get_user_model().objects.filter(username__startswith="falso").count() == 10


@pytest.mark.django_db(transaction=True)
def test_forged_addresses_do_not_reset_the_login_limit(bare_stack: realstack.Stack) -> None:
    realstack.clear_of_a_window_turn(settings.POCHA_LOGIN_WINDOW)
    statuses = [
        bare_stack.client().post(
            "/accounts/login/",
            {"username": f"nadie{i}", "password": "x"},
            headers={"X-Forwarded-For": f"203.0.113.{i + 1}"},
        )[0]
        for i in range(11)
    ]
    assert statuses == [200] * 10 + [429], bare_stack.log()  # POCHA_LOGIN_ADDRESS_ATTEMPTS: 10 per address


@pytest.mark.django_db(transaction=True)
def test_behind_a_trusted_proxy_each_client_is_counted_at_its_own_address(proxied_stack: realstack.Stack) -> None:
    realstack.clear_of_a_window_turn(settings.POCHA_SIGNUP_WINDOW)
    assert [sign_up(proxied_stack, f"vecina{i}", "198.51.100.20") for i in range(3)] == [302, 302, 429]
    assert sign_up(proxied_stack, "otra_casa", "198.51.100.21") == 302
    # What the client wrote to the left of the address the proxy saw changes nothing.
    assert sign_up(proxied_stack, "lista", "10.9.9.9, 198.51.100.20") == 429
