"""What a committed change asks of the live side, and the one way it is told.

A write describes what it changed as an event and ``emit``s it.  Once the transaction commits, every
handler ``connect``ed at start-up receives it: the live side's dispatcher (``games.live.dispatch``,
connected in ``GamesConfig.ready``) turns it into the pushes and the timers.  So the domain never imports
the transport or the clock, and nothing is pushed for a change that was rolled back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TableChanged:
    """The table moved to ``seq``: every viewer's board is drawn again, and its next automatic step (if
    any) is armed for ``due``.  ``person``: that step is a person's turn clock; ``deal``: it is the next
    round's deal.  ``snapshot``: the change for the processes that show the table
    (``games.table.snapshot.pack_change``: the row and seats, and how the game moved; never a hand)."""

    table_id: int
    seq: int
    # A change is known by its table and seq; the rest says what follows from it.
    due: datetime | None = field(default=None, compare=False)
    person: bool = field(default=False, compare=False)
    deal: bool = field(default=False, compare=False)
    snapshot: dict[str, Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Redraw:
    """Something visible changed without a move (a connection, a spectator, a rematch's seats): every
    viewer draws the table again at ``seq`` (its current one when None).  ``origin``: a socket that draws
    its own board anyway, which skips this one."""

    table_id: int
    seq: int | None = None
    origin: str | None = None


@dataclass(frozen=True)
class DueMoved:
    """The table's next automatic step at ``seq`` is now due at ``due`` (a dropped player's grace)."""

    table_id: int
    seq: int
    due: datetime


@dataclass(frozen=True)
class AccountSuspended:
    """A person was suspended: every open socket of theirs says why and closes."""

    user_id: int
    reason: str


@dataclass(frozen=True)
class PersonNotified:
    """Something of one person's changed that their open pages show live: ``kind`` is ``invitations`` (an
    invitation to them came, was answered or expired: the banner and the list), ``friends`` (someone they
    follow came online or went, or a follow changed: «Amigos» and the lobby) or ``blocks`` (a block of theirs
    changed: the talk their table sockets let through)."""

    user_id: int
    kind: str


@dataclass(frozen=True)
class StudyQueued:
    """Work for the analysis worker (``games.study``): an analysis asked for, or a practice table whose
    yardstick (difícil in the person's seat) is to be played."""


@dataclass(frozen=True)
class TournamentChanged:
    """Something a tournament's page shows changed (a registration, its tables, a deal finished at one of
    them): its page draws the tournament again.  ``table_done``: one of its tables finished, so the tournament
    may move on (the next game, or its end) at once rather than at the runner's next sweep."""

    tournament_id: int
    seq: int | None = None
    table_done: bool = False


Event = TableChanged | Redraw | DueMoved | AccountSuspended | PersonNotified | StudyQueued | TournamentChanged
Handler = Callable[[Event], None]

_handlers: list[Handler] = []


def connect(handler: Handler) -> None:
    """Deliver every committed event to ``handler`` from now on (once, however often it is connected)."""
    if handler not in _handlers:
        _handlers.append(handler)


def emit(event: Event) -> None:
    """Deliver ``event`` once the current transaction commits (at once outside one); never if it rolls back."""
    transaction.on_commit(partial(_deliver, event))


def _deliver(event: Event) -> None:
    for handler in list(_handlers):
        try:
            handler(event)
        except Exception:  # a failed push must not undo a committed move: pages resync on reconnect
            log.exception("handling %r failed", event)
