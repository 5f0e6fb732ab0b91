"""The client's address behind a proxy (``TRUSTED_PROXIES``).

The limits on logins, sign-ups, password resets and private-table codes count per client address, so a
client must never choose its own.  The address of a request (HTTP or WebSocket) is the connection's, as
Daphne reports it, unless the connection comes from one of ``TRUSTED_PROXIES``: then it is the right-most
address of ``X-Forwarded-For`` that is not itself a trusted proxy (each proxy appends the address it got the
request from; the addresses to its left are whatever the client wrote), and ``X-Forwarded-Proto`` gives the
scheme.  A client talking to the server directly changes nothing with these headers.

The work is uvicorn's ``ProxyHeadersMiddleware`` (an ASGI middleware with a list of trusted addresses and
networks); Daphne's own ``--proxy-headers`` believes the header from anyone and must not be used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware


def trust_proxies(app: Any, trusted: Sequence[str]) -> Any:
    """``app`` behind the proxies ``trusted`` (addresses and networks, checked by the settings); with
    none, ``app`` itself: no header can change a request's address."""
    if not trusted:
        return app
    return ProxyHeadersMiddleware(app, trusted_hosts=list(trusted))
