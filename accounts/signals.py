"""Every new account, however it is made (sign-up, admin, a script), starts with the welcome grant."""

from __future__ import annotations

from typing import Any

from accounts import ledger


def welcome_new_user(sender: Any, instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    if created and not raw:
        ledger.grant_welcome(instance.pk)
