"""Counting failures per person and per address in fixed windows (one minute unless told otherwise), in
Django's cache, so a limit holds across every ASGI process when the cache is Redis (services mode).

Used for wrong private-table codes (a guesser is stopped long before the 3.2 million codes run out),
failed logins per address and per account, sign-ups per address and password-reset requests.
"""

from __future__ import annotations

import hashlib
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


def window_slot(window: int) -> int:
    """Which fixed window of ``window`` seconds the present moment falls in."""
    return int(time.time() // window)


def _keys(scope: str, idents: list[str], window: int) -> list[str]:
    prefix = getattr(settings, "POCHA_RATELIMIT_PREFIX", "rl")
    slot = window_slot(window)
    return [f"{prefix}:{scope}:{ident}:{slot}" for ident in idents if ident]


def blocked(scope: str, idents: list[str], limit: int, window: int = 60) -> bool:
    """Whether any of ``idents`` already has ``limit`` failures in this window."""
    counts = cache.get_many(_keys(scope, idents, window))
    return any(int(count) >= limit for count in counts.values())


def fail(scope: str, idents: list[str], window: int = 60) -> None:
    """Count one failure for each of ``idents``."""
    for key in _keys(scope, idents, window):
        cache.add(key, 0, timeout=window * 2)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=window * 2)


def client_address(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def hashed(text: str) -> str:
    """A short stand-in for something a person typed (a user name, an e-mail), whatever its letter case:
    safe in any cache key, and the cache never holds the text itself."""
    return hashlib.sha256(text.strip().casefold().encode()).hexdigest()[:32]
