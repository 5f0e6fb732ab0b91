"""What happens to a person's account that other apps act on, and the welcome grant of every new account.

The tables (``games``) keep a person's seats and name; they are told through these signals, so that
accounts never import them:

* ``user_suspended`` (``user_id``, ``reason``): sent once a suspension is committed
  (``moderation.suspend``); receivers give up the person's seats and close their connections, and return
  how many tables they touched;
* ``account_closing`` (``user_id``): sent inside the closing's transaction before the person's row is
  locked; receivers lock the rows that keep the person's name, in their own lock order;
* ``account_renamed`` (``user_id``, ``name``): sent in the same transaction once the account has its new
  name; receivers rename what they keep;
* ``account_closed`` (``user``): sent after the closing commits; receivers let go of what the person still
  holds (seats at tables not finished).
"""

from __future__ import annotations

from typing import Any

from django.dispatch import Signal

from accounts import ledger

user_suspended = Signal()
account_closing = Signal()
account_renamed = Signal()
account_closed = Signal()


def welcome_new_user(sender: Any, instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    """Every new account, however it is made (sign-up, admin, a script), starts with the welcome grant."""
    if created and not raw:
        ledger.grant_welcome(instance.pk)
