"""Group names and the events sent over the channel layer (small typed events; HTML is rendered per viewer)."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

log = logging.getLogger(__name__)


def table_group(table_id: int) -> str:
    return f"table-{table_id}"


def user_group(user_id: int) -> str:
    """Every open table socket of one person (whatever table it shows), so moderation can reach them."""
    return f"user-{user_id}"


def account_suspended(user_id: int, reason: str) -> None:
    """Tell every open socket of a person just suspended to say why and close (call after commit)."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(user_group(user_id), {"type": "account.suspended", "reason": reason})
    except Exception:  # the suspension stands: every later action and connection is refused anyway
        log.exception("push of user %s's suspension failed", user_id)


def table_changed(table_id: int, seq: int, *, force: bool = False) -> None:
    """Tell everyone watching the table that it is now at ``seq`` (call after commit).
    ``force``: something visible changed without a move (a player's connection), redraw at the same seq."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(table_group(table_id), {"type": "table.changed", "seq": seq, "force": force})
    except Exception:  # a failed push must not undo a committed move; clients resync on reconnect
        log.exception("push of table %s seq %s failed", table_id, seq)
