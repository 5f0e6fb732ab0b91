"""The chips in the page header, on every page."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest

from accounts import ledger


def wallet(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    # A callable: templates call it when they show it, so pages without the header pay nothing.
    return {"chips": cache(lambda: ledger.balance(user.pk))}
