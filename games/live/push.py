"""Group names and the events sent over the channel layer (small typed events; HTML is rendered per viewer).

A push is sent after commit.  From a plain thread (an HTTP view, the Celery worker) it is sent at once
with ``async_to_sync``; inside ``collecting()`` (the socket path's database calls, ``games.live.hotpath``) it
is kept, and the caller on the event loop sends it with ``await send_events(...)``, so the database
thread never waits for the loop.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from games.live import hub

log = logging.getLogger(__name__)

#: (group, message) for the channel layer's ``group_send``.
Event = tuple[str, dict[str, Any]]

_local = threading.local()


def user_group(user_id: int) -> str:
    """Every open socket of one person (a table's, or another page's: ``SiteConsumer``), so moderation, their
    invitations and their friends' comings and goings reach them."""
    return f"user-{user_id}"


@contextmanager
def collecting() -> Iterator[list[Event]]:
    """Within this block (on this thread), pushes are appended to the list yielded instead of sent."""
    previous = getattr(_local, "events", None)
    events: list[Event] = []
    _local.events = events
    try:
        yield events
    finally:
        _local.events = previous


#: Table events go through the hub (``games.live.hub``: one pub/sub message per event on the table's own
#: channel, fanned out in each process showing the table); a person's events (moderation) through the
#: channel layer's groups.
HUB = "hub"


async def send_events(events: list[Event]) -> None:
    """Send collected pushes from the event loop, in order (a failure is logged and skipped)."""
    layer = None
    for group, message in events:
        try:
            if group == HUB:
                await hub.publish(message)
                continue
            layer = layer or get_channel_layer()
            if layer is not None:
                await layer.group_send(group, message)
        except Exception:  # a failed push must not undo a committed move; clients resync on reconnect
            log.exception("push to %s failed", group)


def _send(group: str, message: dict[str, Any]) -> None:
    events = getattr(_local, "events", None)
    if events is not None:
        events.append((group, message))
        return
    try:
        if group == HUB:
            hub.publish_sync(message)
            return
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(group, message)
    except Exception:  # a failed push must not undo a committed move; clients resync on reconnect
        log.exception("push to %s failed", group)


def tournament_group(tournament_id: int) -> str:
    """Every open socket of a tournament's page."""
    return f"tournament-{tournament_id}"


def tournament_changed(tournament_id: int, seq: int | None) -> None:
    """Tell every open page of the tournament to draw it again (its standings, tables, registrations)."""
    _send(tournament_group(tournament_id), {"type": "tournament.changed", "tournament": tournament_id, "seq": seq})


def account_suspended(user_id: int, reason: str) -> None:
    """Tell every open socket of a person just suspended to say why and close (call after commit).
    The suspension stands even if this fails: every later action and connection is refused anyway."""
    _send(user_group(user_id), {"type": "account.suspended", "reason": reason})


def person_notice(user_id: int, kind: str) -> None:
    """Tell every open socket of a person (table sockets and the other pages' ones) that their ``kind``
    (``invitations``, ``friends``, ``blocks``: ``games.table.events.PersonNotified``) changed."""
    _send(user_group(user_id), {"type": "person.notice", "kind": kind})


def table_changed(
    table_id: int,
    seq: int,
    *,
    force: bool = False,
    snapshot: dict[str, Any] | None = None,
    origin: str | None = None,
) -> None:
    """Tell everyone watching the table that it is now at ``seq`` (call after commit).
    ``force``: something visible changed without a move (a player's connection), redraw at the same seq.
    ``snapshot``: the change (``games.table.snapshot.pack_change``: the table row and seats as they are now,
    and how the game moved, by one move or not at all), which each process showing the table applies to
    the snapshot it has, so that it does not read the table again; it carries no hand.
    ``origin``: the channel name of a socket that caused the redraw and draws its own board anyway (one
    arriving): it ignores the event, which may reach it after it has registered with the hub."""
    message: dict[str, Any] = {"type": "table.changed", "table": table_id, "seq": seq, "force": force}
    if origin is not None:
        message["origin"] = origin
    if force:  # each forced redraw is read afresh once per process (``consumers.shared_snapshot``)
        message["id"] = uuid.uuid4().hex
    if snapshot is not None:
        message["snapshot"] = snapshot
    _send(HUB, message)


def talk_event(table_id: int, seat: int, phrase: str) -> Event:
    """A preset phrase said at the table, for everyone showing it (``send_events``)."""
    return HUB, {"type": "table.talk", "table": table_id, "seat": seat, "phrase": phrase}
