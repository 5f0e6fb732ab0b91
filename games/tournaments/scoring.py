"""A tournament's standings, from its tables' rows: nothing is kept move by move, the standings are read from
the rounds each table has finished (``Round.result``) whenever they are shown, and written once at the end.

* Duplicate: on each deal, each seat's points are compared with the same seat's points at every other table
  that has played that deal (matchpoints: 1 for each one beaten, ½ for each tie); a player's score is the sum.
* Por puntos: at the end of each game, each seat scores at its table 1 for each player it finished ahead
  of and ½ for each one level with it (the final totals); a player's score is the sum over the games.

Ties in the standings are broken by the points scored in the games, then they share the place.

A person who forfeited at any of their tables (``Seat.forfeit``: they left it, or the bot and the clock made
more than half of their decisions there; a no-show is such a seat) is placed after everyone who played,
whatever the bot scored for them, and tagged: the prizes go by place among the people who played
(``runner.finish``), and the forfeited take none.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.models import Round, Seat, Table, Tournament

#: The tables whose games count: a game called off by a moderator counts what it played.
COUNTED = (Table.Status.PLAYING, Table.Status.FINISHED, Table.Status.CANCELLED)


def matchpoints(values: Mapping[Any, int]) -> dict[Any, float]:
    """Each key's matchpoints among ``values`` (the same seat's points on one deal, by table): 1 for each other
    value it is above, ½ for each other value equal to it."""
    return {
        key: sum(1.0 if mine > other else 0.5 if mine == other else 0.0 for k, other in values.items() if k != key)
        for key, mine in values.items()
    }


def position_points(totals: Sequence[int]) -> list[float]:
    """Each seat's position points at its table: 1 for each seat it finished ahead of, ½ for each level."""
    return [
        sum(1.0 if mine > other else 0.5 if mine == other else 0.0 for q, other in enumerate(totals) if q != p)
        for p, mine in enumerate(totals)
    ]


@dataclass
class Standing:
    """One line of the standings: a person (``user_id``) or a bot (its table and seat)."""

    key: str
    name: str
    user_id: int | None
    score: float = 0.0
    #: Points scored in the games (the tie-break), and deals (duplicate) or games (por puntos) counted.
    points: int = 0
    played: int = 0
    #: The table the entrant sits at now (the last game's), and its seat there.
    table_id: int | None = None
    seat: int | None = None
    place: int = 0
    #: Place among the people only (the prizes' order); None for a bot.
    person_place: int | None = None
    prize: int = 0
    #: Why a person is placed after everyone who played (``Seat.Forfeit``: "left", "bot"), or "".
    forfeit: str = ""
    by_deal: dict[int, float] = field(default_factory=dict)

    @property
    def is_bot(self) -> bool:
        return self.user_id is None

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "user_id": self.user_id,
            "score": self.score,
            "points": self.points,
            "played": self.played,
            "table_id": self.table_id,
            "seat": self.seat,
            "place": self.place,
            "person_place": self.person_place,
            "prize": self.prize,
            "forfeit": self.forfeit,
        }


@dataclass(frozen=True)
class TableRows:
    """What the standings need of one table: its game and number, its seats and its finished rounds."""

    table_id: int
    game: int
    number: int
    status: str
    seats: dict[int, tuple[int | None, str]]  # position -> (user id or None for a bot, name)
    rounds: dict[int, tuple[int, ...]]  # round number -> points by seat
    #: The seats that forfeited (position -> ``Seat.Forfeit``'s code): left, or played by the bot at the end.
    forfeits: dict[int, str] = field(default_factory=dict)


def read_tables(tournament: Tournament) -> list[TableRows]:
    """The tournament's tables as the standings need them (three queries)."""
    tables = list(
        Table.objects.filter(tournament=tournament, status__in=COUNTED)
        .order_by("tournament_game", "tournament_number")
        .values_list("pk", "tournament_game", "tournament_number", "status")
    )
    ids = [t[0] for t in tables]
    seats: dict[int, dict[int, tuple[int | None, str]]] = defaultdict(dict)
    forfeits: dict[int, dict[int, str]] = defaultdict(dict)
    for table_id, position, user_id, name, is_bot, forfeit in Seat.objects.filter(table_id__in=ids).values_list(
        "table_id", "position", "user_id", "name", "is_bot", "forfeit"
    ):
        seats[table_id][position] = (None if is_bot else user_id, name)
        if forfeit and not is_bot:
            forfeits[table_id][position] = forfeit
    rounds: dict[int, dict[int, tuple[int, ...]]] = defaultdict(dict)
    for table_id, number, result in Round.objects.filter(table_id__in=ids, result__isnull=False).values_list(
        "table_id", "number", "result"
    ):
        rounds[table_id][number] = tuple(int(p) for p in result["points"])
    return [
        TableRows(pk, int(game or 1), int(number or 0), status, dict(seats[pk]), dict(rounds[pk]), dict(forfeits[pk]))
        for pk, game, number, status in tables
    ]


def _entrant(table: TableRows, position: int) -> tuple[str, int | None, str]:
    user_id, name = table.seats.get(position, (None, f"P{position + 1}"))
    key = f"u{user_id}" if user_id is not None else f"b{table.table_id}:{position}"
    return key, user_id, name


def _mark_forfeit(line: Standing, table: TableRows, position: int) -> None:
    """A person's forfeit at this table marks their line for the whole tournament («abandonó» over «jugó el
    bot» when they did both)."""
    code = table.forfeits.get(position, "")
    if code and line.user_id is not None and line.forfeit != "left":
        line.forfeit = code


def duplicate(tables: Iterable[TableRows]) -> list[Standing]:
    """Duplicate standings: each deal's points compared seat by seat across the tables that played it."""
    tables = list(tables)
    lines: dict[str, Standing] = {}
    by_deal: dict[tuple[int, int], dict[int, int]] = defaultdict(dict)  # (deal, seat) -> table -> points
    for table in tables:
        for position in table.seats:
            key, user_id, name = _entrant(table, position)
            line = lines.setdefault(key, Standing(key, name, user_id))
            line.table_id, line.seat = table.table_id, position
            _mark_forfeit(line, table, position)
        for number, points in table.rounds.items():
            for position, value in enumerate(points):
                by_deal[(number, position)][table.table_id] = value
    seat_of = {(t.table_id, p): _entrant(t, p)[0] for t in tables for p in t.seats}
    for (number, position), values in by_deal.items():
        for table_id, mp in matchpoints(values).items():
            line = lines[seat_of[(table_id, position)]]
            line.score += mp
            line.points += values[table_id]
            line.played += 1
            line.by_deal[number] = mp
    return rank(lines.values())


def by_points(tables: Iterable[TableRows], finished: Mapping[int, Sequence[int]]) -> list[Standing]:
    """Por puntos standings: each finished game's position points at its table (``finished``: the final
    totals by seat of each finished table), summed over the games."""
    lines: dict[str, Standing] = {}
    for table in tables:
        for position in table.seats:
            key, user_id, name = _entrant(table, position)
            line = lines.setdefault(key, Standing(key, name, user_id))
            line.table_id, line.seat = table.table_id, position
            _mark_forfeit(line, table, position)
        totals = finished.get(table.table_id)
        if totals is None:
            continue
        for position, pp in enumerate(position_points(totals)):
            line = lines[_entrant(table, position)[0]]
            line.score += pp
            line.points += totals[position]
            line.played += 1
    # A bot is a fresh entrant at each table: only the people carry their score from game to game.
    return rank(lines.values())


def rank(lines: Iterable[Standing]) -> list[Standing]:
    """The lines in order (score, then points; then name, for a stable page) with their places: a line level
    with the one above on score and points shares its place.  The people who forfeited come after everyone
    who played (among themselves in the same order), never sharing a place with one who played.
    ``person_place`` counts the people only."""
    ordered = sorted(lines, key=lambda s: (bool(s.forfeit), -s.score, -s.points, s.name.lower(), s.key))
    place = person = 0
    previous: tuple[bool, float, int] | None = None
    previous_person: tuple[bool, float, int] | None = None
    for index, line in enumerate(ordered, start=1):
        mark = (bool(line.forfeit), line.score, line.points)
        if mark != previous:
            place = index
        line.place = place
        previous = mark
        if line.user_id is not None:
            people_before = sum(1 for other in ordered[: index - 1] if other.user_id is not None)
            if mark != previous_person:
                person = people_before + 1
            line.person_place = person
            previous_person = mark
    return ordered


def prizes(pool: int, percentages: Sequence[int], places: Sequence[int]) -> tuple[list[int], int]:
    """The prizes of people in ``places`` (their places among the people, in order; level people share a
    place) out of a ``pool`` of chips by the prize table ``percentages`` (of the 1st, 2nd… place), and what
    is left for the house.  Level people split what their places would have had; chips that do not divide go
    one each in standing order; when the table sums to 100 % nothing is left for the house (rounding
    leftovers go to the first place's people)."""
    amounts = [0] * len(places)
    groups: dict[int, list[int]] = defaultdict(list)
    for index, place in enumerate(places):
        groups[place].append(index)
    for place, members in groups.items():
        pct = sum(percentages[p - 1] for p in range(place, place + len(members)) if p - 1 < len(percentages))
        share_total = pool * pct // 100
        share, odd = divmod(share_total, len(members))
        for i, index in enumerate(members):
            amounts[index] = share + (1 if i < odd else 0)
    left = pool - sum(amounts)
    if sum(percentages) == 100 and places and left:
        firsts = groups[min(groups)]
        for i in range(left):
            amounts[firsts[i % len(firsts)]] += 1
        left = 0
    return amounts, left
