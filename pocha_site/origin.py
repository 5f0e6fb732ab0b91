"""The WebSocket origin check: a socket opens only from a page of the site itself.

Channels' ``AllowedHostsOriginValidator`` compares the Origin's host with ``ALLOWED_HOSTS`` and ignores
its scheme and port, so a page on another port of the same host (another program's, anyone's) could
open a player's socket with their cookies. ``SameOriginValidator`` accepts a socket only when:

- the request's own host (``Host``, or ``X-Forwarded-Host`` with ``USE_X_FORWARDED_HOST``) is one of
  ``ALLOWED_HOSTS``, exactly as Django checks it for a page; and
- its ``Origin`` is the request's own scheme, host and port (http for ws, https for wss; the request
  counts as HTTPS when the scope says so or, behind a proxy, by ``SECURE_PROXY_SSL_HEADER``; missing
  ports are the scheme's default), or is listed in ``CSRF_TRUSTED_ORIGINS`` (``https://*.example.com``
  covers the subdomains, as for Django's CSRF check).

A socket without an Origin (browsers always send one), with ``null`` or with two is refused.
"""

from __future__ import annotations

import io
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.http.request import split_domain_port

DEFAULT_PORTS = {"http": 80, "https": 443}
Origin = tuple[str, str, int]  # scheme, host (lower case), port


def parse_origin(value: str) -> Origin | None:
    """``scheme://host[:port]`` as (scheme, host, port), or None for anything else (a path, a user…)."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.username is not None or parts.password is not None:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    return scheme, parts.hostname.lower(), port if port is not None else DEFAULT_PORTS[scheme]


def request_origin(scope: dict[str, Any]) -> Origin | None:
    """The origin of the socket's own address as a page there would send it, or None when its host is
    not one of ``ALLOWED_HOSTS``. Django's own request reads the host and the scheme, so the proxy
    settings (``SECURE_PROXY_SSL_HEADER``, ``USE_X_FORWARDED_HOST``, ``USE_X_FORWARDED_PORT``) count as
    they do for pages."""
    ws_scheme = scope.get("scheme") or "ws"  # Daphne leaves it out: ws unless a proxy header says https
    http_scope = {
        **scope,
        "type": "http",
        "method": "GET",
        "scheme": "https" if ws_scheme in ("wss", "https") else "http",
    }
    request = ASGIRequest(http_scope, io.BytesIO())
    try:
        host = request.get_host()
    except DisallowedHost:
        return None
    domain, port = split_domain_port(host)
    if not domain:
        return None
    scheme = "https" if request.is_secure() else "http"
    try:
        number = int(port) if port else DEFAULT_PORTS[scheme]
    except ValueError:
        return None
    return scheme, domain.strip("[]"), number


def trusted(origin: Origin) -> bool:
    """Whether ``CSRF_TRUSTED_ORIGINS`` lists the origin (a ``*.`` host covers its subdomains)."""
    scheme, host, port = origin
    for entry in settings.CSRF_TRUSTED_ORIGINS:
        wildcard = "://*." in entry
        pattern = parse_origin(entry.replace("://*.", "://", 1) if wildcard else entry)
        if pattern is None or pattern[0] != scheme or pattern[2] != port:
            continue
        if host == pattern[1] or (wildcard and host.endswith("." + pattern[1])):
            return True
    return False


def origin_allowed(scope: dict[str, Any]) -> bool:
    origins = [value for name, value in scope.get("headers", []) if name.lower() == b"origin"]
    if len(origins) != 1:
        return False
    try:
        origin = parse_origin(origins[0].decode("ascii"))
    except UnicodeDecodeError:
        return False
    own = request_origin(scope)
    if origin is None or own is None:
        return False
    return origin == own or trusted(origin)


class SameOriginValidator:
    """Wraps the WebSocket application: refuses (HTTP 403 before the handshake) any socket whose origin
    is not the site's own, per the module's rules."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator only guards WebSocket connections")
        if origin_allowed(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
