"""A tournament's table that is late: every person's seat is played by the bot at once (as if they were away)
so that the table finishes and does not hold up the rest of the tournament.  A person may still take their
seat back by playing (their own move clears it, as for anyone away)."""

from __future__ import annotations

from django.db import transaction

from games.models import Seat, Table
from games.table.actions.common import commit, lock
from games.table.events import TableChanged


def do_hurry(table_id: int) -> TableChanged | None:
    """Every person's seat at the table away (the bot plays it at once); None if the game is not in play or
    nobody was left to hurry."""
    with transaction.atomic():
        table = lock(table_id)
        if table.status != Table.Status.PLAYING:
            return None
        if not Seat.objects.filter(table=table, is_bot=False, away=False).update(away=True):
            return None
        return commit(table, table.seq)
