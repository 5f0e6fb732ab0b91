"""The site's one rate limiter: events counted per key in fixed windows, in Django's cache (Redis in
services mode, so a limit holds across every ASGI process; the process's memory in the embedded mode).

Everything the site limits goes through it:

- wrong private-table codes, per person and per address (``POCHA_CODE_ATTEMPTS`` a minute);
- failed logins, per (name, address) and per address (``accounts.forms``; a name alone is never locked);
- accounts made per address, password-reset e-mails per address and per e-mail (``accounts.views``);
- table talk, per person (``take``).

Two ways to count:

- ``blocked`` before, and ``hit`` after what counts (a failure, an account made): refused attempts do not
  count, so someone waiting out a limit is not kept out longer;
- ``take``: count the event and say whether it is within the limit, in one atomic step (two sockets of one
  person cannot both slip in under it; refused events count too).

A window is fixed: ``window`` seconds from a multiple of ``window`` since the epoch (``window_slot``, which
the test suite stands still).  A count lives in the cache for two windows.  A key is made of
``POCHA_RATELIMIT_PREFIX``, the scope, the identity (anything not plainly safe in a cache key is hashed) and
the window.  Django library alternatives were weighed: django-ratelimit needs an HTTP request for every
count (table talk has a socket), keeps its windows to itself and refuses the in-memory cache of the embedded
mode; django-axes covers logins only.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

#: An identity kept as it is in a key (an address, ``user:12``, a hash); anything else is hashed.
_PLAIN = re.compile(r"[A-Za-z0-9_.:@-]{1,100}")


def window_slot(window: int) -> int:
    """Which fixed window of ``window`` seconds the present moment falls in."""
    return int(time.time() // window)


def _key(scope: str, ident: str, window: int) -> str:
    ident = ident if _PLAIN.fullmatch(ident) else hashed(ident)
    return f"{settings.POCHA_RATELIMIT_PREFIX}:{scope}:{ident}:{window_slot(window)}"


def _keys(scope: str, idents: Iterable[str], window: int) -> list[str]:
    return [_key(scope, ident, window) for ident in idents if ident]


def _increment(key: str, window: int) -> int:
    cache.add(key, 0, timeout=window * 2)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add and incr: this event opens the count again
        cache.set(key, 1, timeout=window * 2)
        return 1


def count(scope: str, ident: str, window: int = 60) -> int:
    """How many events ``ident`` has in this window."""
    return int(cache.get(_key(scope, ident, window)) or 0)


def blocked(scope: str, idents: Iterable[str], limit: int, window: int = 60) -> bool:
    """Whether any of ``idents`` already has ``limit`` events in this window."""
    counts = cache.get_many(_keys(scope, idents, window))
    return any(int(n) >= limit for n in counts.values())


def hit(scope: str, idents: Iterable[str], window: int = 60) -> list[int]:
    """Count one event for each of ``idents``; their counts in this window, now."""
    return [_increment(key, window) for key in _keys(scope, idents, window)]


def take(scope: str, ident: str, limit: int, window: int) -> bool:
    """Count one event of ``ident`` and say whether it is within ``limit`` per ``window`` seconds (refused
    events count too: hammering does not get one through sooner).  E.g. table talk, per person:
    ``take("talk", f"user:{user_id}", settings.POCHA_TALK_LIMIT, settings.POCHA_TALK_WINDOW)``."""
    return _increment(_key(scope, ident, window), window) <= limit


def client_address(request: HttpRequest) -> str:
    """The client's address: the connection's, or behind a trusted proxy the one it reports
    (``pocha_site.proxy``, ``TRUSTED_PROXIES``)."""
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def hashed(text: str) -> str:
    """A short stand-in for something a person typed (a user name, an e-mail), whatever its letter case:
    safe in any cache key, and the cache never holds the text itself."""
    return hashlib.sha256(text.strip().casefold().encode()).hexdigest()[:32]
