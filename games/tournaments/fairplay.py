"""Fair play in a duplicate tournament: the par of each deal (what difícil makes of every seat of it, worked
out by the worker: ``games.study.par``) and the flags for staff, a person's result on a deal this far or
further from its par (``Tournament.flag_points``), in either direction.  The flags are written once the
tournament is over, and never from a game whose deals a table is still playing (``access.deals_secret``)."""

from __future__ import annotations

from typing import Any

from games.models import Flag, Round, Seat, Table, Tournament
from games.table import access
from games.table.actions.lifecycle import round_seed


def par_inputs(tournament: Tournament) -> dict[str, Any] | None:
    """What the par's playout needs (the deals as every table of the game dealt them), or None before the
    first table of the game exists."""
    table = (
        Table.objects.filter(tournament=tournament, tournament_game=1, first_dealer__isnull=False)
        .order_by("tournament_number")
        .first()
    )
    if table is None or table.seed is None or not table.deals:
        return None
    rounds = [int(n) for n in table.deals]
    return {
        "rules": table.game_rules.as_json(),
        "players": table.size,
        "first_dealer": int(table.first_dealer or 0),
        "rounds": rounds,
        "seeds": [round_seed(int(table.seed), n) for n in rounds],
    }


def flag(tournament: Tournament) -> int:
    """The flags of a finished duplicate tournament whose par is known (each once): how many are new."""
    par = tournament.par or {}
    if tournament.format != Tournament.Format.DUPLICATE or not isinstance(par.get("points"), list):
        return 0
    by_round = dict(zip(par["rounds"], par["points"], strict=True))
    people = {
        (table_id, position): user_id
        for table_id, position, user_id in Seat.objects.filter(
            table__tournament=tournament, is_bot=False, user__isnull=False
        ).values_list("table_id", "position", "user_id")
    }
    new = 0
    # (a game's deals, and so its flags, only once every table of it has played them: ``access.deals_secret``)
    for table_id, number, result in (
        Round.objects.filter(table__tournament=tournament, result__isnull=False)
        .exclude(access.deals_secret_rows())
        .values_list("table_id", "number", "result")
    ):
        expected = by_round.get(number)
        if expected is None:
            continue
        for position, points in enumerate(result["points"]):
            user_id = people.get((table_id, position))
            if user_id is None or abs(int(points) - int(expected[position])) < tournament.flag_points:
                continue
            _flag, created = Flag.objects.get_or_create(
                table_id=table_id,
                deal=number,
                seat=position,
                defaults={
                    "tournament": tournament,
                    "user_id": user_id,
                    "points": int(points),
                    "par": int(expected[position]),
                },
            )
            new += int(created)
    return new
