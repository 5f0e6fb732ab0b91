"""The chips in the page header, and a suspended player's reason, on every page."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest

from accounts import ledger, moderation


def wallet(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    # Callables: templates call them when they show them, so pages without the header pay nothing.
    return {
        "chips": cache(lambda: ledger.balance(user.pk)),
        "suspension": cache(lambda: moderation.suspension_reason(user.pk)),
    }
