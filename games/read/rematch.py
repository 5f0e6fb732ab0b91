"""The «Revancha» box of a finished table's final screen."""

from __future__ import annotations

from typing import Any

from games.models import Seat, Table
from games.table.actions.rematch import humans, who_declined


def rematch_context(table: Table, seats: list[Seat], viewer_user_id: int | None) -> dict[str, Any] | None:
    """The «Revancha» box of a finished table's final screen for this viewer, or None when they did not
    play it (spectators, bots' tables, a table not finished).  Names and a status only: no cards."""
    if viewer_user_id is None or table.status != Table.Status.FINISHED:
        return None
    people = humans(seats)
    if not any(s.user_id == viewer_user_id for s in people):
        return None
    rematch = Table.objects.filter(rematch_of_id=table.pk).first()
    ctx: dict[str, Any] = {
        "old_table_id": table.pk,
        "offered": rematch is not None,
        "table_id": None,
        "by": None,
        "seated": [],
        "waiting": [],
        "declined": [],
        "mine": False,
        "i_declined": False,
        "status": None,
        "is_public": table.is_public,
    }
    if rematch is None:
        return ctx
    seated_ids = set(Seat.objects.filter(table=rematch, is_bot=False).values_list("user_id", flat=True))
    open_ = rematch.status == Table.Status.WAITING
    declined = who_declined(rematch, [s.user_id for s in people if s.user_id not in seated_ids]) if open_ else set()
    by = next((s.name for s in people if s.user_id == rematch.created_by_id), "")
    ctx.update(
        table_id=rematch.pk,
        by=by,
        status=rematch.status,
        is_public=rematch.is_public,
        seated=[s.name for s in people if s.user_id in seated_ids],
        waiting=[s.name for s in people if s.user_id not in seated_ids and s.user_id not in declined] if open_ else [],
        declined=[s.name for s in people if s.user_id in declined],
        mine=viewer_user_id in seated_ids,
        i_declined=viewer_user_id in declined,
    )
    return ctx
