"""What the tournaments' pages show: the list of tournaments, one tournament's page (its facts, the prize table,
the countdown to its start, who has registered, what this viewer may do, the tables of the game being played,
the standings and, once finished, the final results with the prizes) and a person's tournaments on their
profile.

A tournament's page is drawn from ``TournamentRows``, read by ``read_tournament`` in two queries before the start
and after the end (the tournament with its pool; the registrations or the tables' seats) and three while it is
played (the rounds' results too, from which the standings are worked out as ``runner.current_standings`` does,
counting only what every table of a game has finished: ``settled``).
The page's socket (``games.live.consumers.TournamentConsumer``) reads them once per change per process and
draws each viewer's live parts from them with no query (``render_live``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.db.models import Count, OuterRef, Subquery
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, override, pgettext

from accounts.models import Account
from accounts.templatetags.chips import format_chips
from games.models import Registration, Round, Seat, Table, Tournament
from games.tournaments import scoring

#: How many finished (or cancelled) tournaments the list shows, and how many tournaments a profile lists.
RECENT = 10
PROFILE_TOURNAMENTS = 20
#: How many scheduled or playing tournaments the list shows at most.
UPCOMING = 50


# -- the rows ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatRow:
    position: int
    user_id: int | None  # None for a bot
    name: str
    final_total: int | None
    #: ``Seat.forfeit``: "left", "bot" (set when the table finished) or "".
    forfeit: str = ""


@dataclass(frozen=True)
class TableRow:
    """A table of the tournament (of any of its games) as its page shows it.  ``number`` is its place among the
    game's tables (the runner's order); the page calls a table by its own number, ``table_id``, as the table
    itself, the lobby and the wallet do («Mesa 9»)."""

    table_id: int
    game: int
    number: int
    status: str
    phase: str
    round_number: int
    deals: tuple[int, ...]
    seats: tuple[SeatRow, ...]


@dataclass(frozen=True)
class TournamentRows:
    """Everything a tournament's page shows, as read at one moment (``read_tournament``)."""

    tournament: Tournament
    #: The chips in its pool now (the entry fees, until the end pays them out).
    pool: int
    #: The people registered, in order (user id, name): read before the start and for a cancelled tournament;
    #: while it is played and after, the people are those of the standings.
    registrations: tuple[tuple[int, str], ...]
    #: Its tables (read once it has started), in order of game and number.
    tables: tuple[TableRow, ...]
    #: The standings: worked out from the rounds while it is played, as kept once it is finished.
    standings: tuple[dict[str, Any], ...]

    @property
    def key(self) -> tuple[Any, ...]:
        """What the live parts are drawn from: two reads with the same key draw the same parts (the state is
        read at the time it is asked: registration opens, and the start comes, with no change to the rows)."""
        t = self.tournament
        return (
            t.seq,
            state_of(t, timezone.now()),
            t.status,
            t.current_game,
            t.starts_at,
            t.registration_opens_at,
            t.places,
            t.cancel_note,
            self.pool,
            self.registrations,
            self.tables,
            tuple(tuple(sorted(line.items())) for line in self.standings),
        )


def read_tournament(tournament_id: int) -> TournamentRows | None:
    """The tournament's rows for its page (two or three queries); None if there is no such tournament."""
    pool = Account.objects.filter(kind=Account.Kind.POOL, tournament_id=OuterRef("pk")).values("balance")[:1]
    tournament = Tournament.objects.annotate(pool_balance=Subquery(pool)).filter(pk=tournament_id).first()
    if tournament is None:
        return None
    registrations: tuple[tuple[int, str], ...] = ()
    tables: tuple[TableRow, ...] = ()
    standings: tuple[dict[str, Any], ...] = ()
    if tournament.status in (Tournament.Status.SCHEDULED, Tournament.Status.CANCELLED):
        registrations = tuple(
            (int(user_id), str(name))
            for user_id, name in Registration.objects.filter(tournament_id=tournament.pk)
            .order_by("registered_at", "pk")
            .values_list("user_id", "user__username")
        )
    else:
        tables = _read_tables(tournament.pk)
        if tournament.status == Tournament.Status.FINISHED:
            standings = tuple(dict(line) for line in tournament.results or [])
        else:
            shown, rounds = settled(tables, _read_rounds(tournament.pk))
            standings = tuple(line.as_json() for line in standings_of(tournament, shown, rounds))
    return TournamentRows(
        tournament, int(getattr(tournament, "pool_balance", None) or 0), registrations, tables, standings
    )


def _read_tables(tournament_id: int) -> tuple[TableRow, ...]:
    """The tournament's counted tables with their seats (one query)."""
    by_table: dict[int, list[Any]] = {}
    seats: dict[int, list[SeatRow]] = defaultdict(list)
    for row in (
        Seat.objects.filter(table__tournament_id=tournament_id, table__status__in=scoring.COUNTED)
        .order_by("table__tournament_game", "table__tournament_number", "table_id", "position")
        .values_list(
            "table_id",
            "table__tournament_game",
            "table__tournament_number",
            "table__status",
            "table__phase",
            "table__round_number",
            "table__deals",
            "position",
            "user_id",
            "name",
            "is_bot",
            "final_total",
            "forfeit",
        )
    ):
        table_id, game, number, status, phase, round_number, deals, position, user_id, name, is_bot, total, gone = row
        by_table.setdefault(table_id, [game, number, status, phase, round_number, deals])
        seats[table_id].append(SeatRow(position, None if is_bot else user_id, name, total, "" if is_bot else gone))
    return tuple(
        TableRow(
            table_id,
            int(game or 1),
            int(number or 0),
            str(status),
            str(phase or ""),
            int(round_number or 0),
            tuple(int(n) for n in deals or ()),
            tuple(seats[table_id]),
        )
        for table_id, (game, number, status, phase, round_number, deals) in by_table.items()
    )


def _read_rounds(tournament_id: int) -> dict[int, dict[int, tuple[int, ...]]]:
    """Each table's finished rounds: round number -> points by seat (one query)."""
    rounds: dict[int, dict[int, tuple[int, ...]]] = defaultdict(dict)
    for table_id, number, result in Round.objects.filter(
        table__tournament_id=tournament_id, result__isnull=False
    ).values_list("table_id", "number", "result"):
        rounds[table_id][number] = tuple(int(p) for p in result["points"])
    return rounds


def settled(
    tables: Sequence[TableRow], rounds: dict[int, dict[int, tuple[int, ...]]]
) -> tuple[list[TableRow], dict[int, dict[int, tuple[int, ...]]]]:
    """What the live standings count while the tournament is played: nothing of a game's deals while a table of
    it still plays them (``games.table.access.deals_secret``: a table's result on a deal says much of its cards).
    A deal counts once every table of its game has finished it (duplicate); a table's final totals once every
    table of its game has finished (por puntos: until then a finished table is counted as one still playing)."""
    playing: dict[int, list[TableRow]] = defaultdict(list)
    for t in tables:
        if t.status == Table.Status.PLAYING:
            playing[t.game].append(t)
    shown: list[TableRow] = []
    counted: dict[int, dict[int, tuple[int, ...]]] = {}
    for t in tables:
        mine = rounds.get(t.table_id, {})
        still = playing.get(t.game)
        if not still:
            shown.append(t)
            counted[t.table_id] = dict(mine)
            continue
        everywhere = set(mine).intersection(*(rounds.get(other.table_id, {}) for other in still))
        counted[t.table_id] = {n: points for n, points in mine.items() if n in everywhere}
        shown.append(replace(t, status=Table.Status.PLAYING) if t.status == Table.Status.FINISHED else t)
    return shown, counted


def standings_of(
    tournament: Tournament, tables: Sequence[TableRow], rounds: dict[int, dict[int, tuple[int, ...]]]
) -> list[scoring.Standing]:
    """The standings from the rows read (``runner.current_standings`` from its own reads: the same lines)."""
    rows = [
        scoring.TableRows(
            t.table_id,
            t.game,
            t.number,
            t.status,
            {s.position: (s.user_id, s.name) for s in t.seats},
            dict(rounds.get(t.table_id, {})),
            {s.position: s.forfeit for s in t.seats if s.forfeit},
        )
        for t in tables
    ]
    if tournament.format == Tournament.Format.DUPLICATE:
        return scoring.duplicate(rows)
    finished = {
        t.table_id: [int(s.final_total or 0) for s in t.seats] for t in tables if t.status == Table.Status.FINISHED
    }
    return scoring.by_points(rows, finished)


# -- words ----------------------------------------------------------------------------------------


def score_text(score: Any) -> str:
    """Matchpoints or position points as people write them: 3, 2½, ½."""
    try:
        value = float(score)
    except (TypeError, ValueError):
        return ""
    halves = round(value * 2)
    whole, half = divmod(abs(halves), 2)
    sign = "−" if halves < 0 else ""
    if not half:
        return f"{sign}{whole}"
    return f"{sign}{whole if whole else ''}½"


def deals_text(tournament: Tournament) -> str:
    if not tournament.deals:
        return _("partida entera")
    return ngettext("%(n)s mano", "%(n)s manos", tournament.deals) % {"n": tournament.deals}


def format_text(tournament: Tournament) -> str:
    if tournament.format == Tournament.Format.POINTS:
        return ngettext("por puntos, %(n)s partida", "por puntos, %(n)s partidas", tournament.games) % {
            "n": tournament.games
        }
    return _("duplicado")


def fee_text(tournament: Tournament) -> str:
    if not tournament.entry_fee:
        return _("gratis")
    return _("%(n)s fichas") % {"n": format_chips(tournament.entry_fee)}


def size_text(tournament: Tournament) -> str:
    return _("mesas de %(n)s") % {"n": tournament.size}


def places_text(taken: int, places: int) -> str:
    return ngettext("%(taken)s de %(n)s plaza", "%(taken)s de %(n)s plazas", places) % {"taken": taken, "n": places}


def state_of(tournament: Tournament, now: datetime) -> str:
    """``not_open`` (registration opens later), ``open``, ``starting`` (its start time has passed, the runner
    is seating it), ``playing``, ``finished`` or ``cancelled``."""
    if tournament.status == Tournament.Status.CANCELLED:
        return "cancelled"
    if tournament.status == Tournament.Status.FINISHED:
        return "finished"
    if tournament.status == Tournament.Status.PLAYING:
        return "playing"
    if now < tournament.registration_opens_at:
        return "not_open"
    if now < tournament.starts_at:
        return "open"
    return "starting"


def state_text(state: str) -> str:
    return {
        "not_open": _("Inscripción aún cerrada"),
        "open": _("Inscripción abierta"),
        "starting": _("Empezando"),
        "playing": _("En juego"),
        "finished": _("Terminado"),
        "cancelled": _("Cancelado"),
    }[state]


def facts(tournament: Tournament, taken: int, now: datetime) -> dict[str, Any]:
    """What the list and the page say of a tournament besides its people and its games."""
    state = state_of(tournament, now)
    return {
        "id": tournament.pk,
        "name": tournament.name,
        "rules": tournament.rules_name(),
        "preset": tournament.game_rules.preset,
        "format": format_text(tournament),
        "is_duplicate": tournament.format == Tournament.Format.DUPLICATE,
        "size": size_text(tournament),
        "deals": deals_text(tournament),
        "fee": fee_text(tournament),
        "free": not tournament.entry_fee,
        "taken": taken,
        "places": tournament.places,
        "places_text": places_text(taken, tournament.places),
        "full": taken >= tournament.places,
        "starts_at": tournament.starts_at,
        "opens_at": tournament.registration_opens_at,
        "finished_at": tournament.finished_at,
        "state": state,
        "state_text": state_text(state),
    }


# -- the list --------------------------------------------------------------------------------------


def list_context(now: datetime | None = None) -> dict[str, Any]:
    """«Torneos»: those taking registrations or still to open, those being played, the last ones finished or
    cancelled (two queries)."""
    now = now or timezone.now()
    current = list(
        Tournament.objects.filter(status__in=[Tournament.Status.SCHEDULED, Tournament.Status.PLAYING])
        .annotate(taken=Count("registrations"))
        .order_by("starts_at", "pk")[:UPCOMING]
    )
    recent = list(
        Tournament.objects.filter(status__in=[Tournament.Status.FINISHED, Tournament.Status.CANCELLED])
        .annotate(taken=Count("registrations"))
        .order_by("-starts_at", "-pk")[:RECENT]
    )
    upcoming = [facts(t, _taken(t), now) for t in current if t.status == Tournament.Status.SCHEDULED]
    playing = [facts(t, _taken(t), now) for t in current if t.status == Tournament.Status.PLAYING]
    return {"upcoming": upcoming, "playing": playing, "recent": [facts(t, _taken(t), now) for t in recent]}


def _taken(tournament: Tournament) -> int:
    """The places taken, as the list's query counted them (``taken``)."""
    return int(getattr(tournament, "taken", 0) or 0)


# -- one tournament -----------------------------------------------------------------------------------


def prize_table(rows: TournamentRows) -> list[dict[str, Any]]:
    """The prize of each place among the people, in chips, from the pool as it is now; once finished, from the
    pool as it was at the end (the entries), the standings saying what each person was paid (people level on
    the standings share their places' prizes)."""
    t = rows.tournament
    try:
        percentages = t.prize_percentages()
    except ValueError:
        percentages = []
    pool = rows.pool
    if t.status == Tournament.Status.FINISHED:
        pool = t.entry_fee * sum(1 for line in rows.standings if line.get("user_id") is not None)
    amounts, _left = scoring.prizes(pool, percentages, list(range(1, len(percentages) + 1)))
    return [
        {"place": place, "percent": pct, "chips": chips}
        for place, (pct, chips) in enumerate(zip(percentages, amounts, strict=True), start=1)
    ]


def _people(rows: TournamentRows) -> list[tuple[int, str]]:
    if rows.registrations:
        return list(rows.registrations)
    return [(int(line["user_id"]), str(line["name"])) for line in rows.standings if line.get("user_id") is not None]


def deal_text(table: TableRow | Table, size: int, rules: Any) -> str:
    """Where a table of the tournament is: «mano 1 de 2», «terminada», «cancelada»."""
    if table.status == Table.Status.FINISHED:
        return _("terminada")
    if table.status == Table.Status.CANCELLED:
        return _("cancelada")
    deals = tuple(int(n) for n in table.deals or ()) or tuple(range(1, len(rules.schedule(size)) + 1))
    if table.round_number in deals:
        return _("mano %(n)s de %(total)s") % {"n": deals.index(table.round_number) + 1, "total": len(deals)}
    return _("empezando")


def tables_context(rows: TournamentRows, viewer_id: int | None) -> list[dict[str, Any]]:
    """The tables of the game being played (or of the last one, once finished), the viewer's own marked."""
    t = rows.tournament
    shown = [table for table in rows.tables if table.game == t.current_game]
    rules = t.game_rules
    # Every table of the game plays the same deals: while one still plays them, a table is watched only by the
    # people seated at it (``games.table.access.may_watch``); then by anyone.
    secret = any(table.status == Table.Status.PLAYING for table in shown)
    return [
        {
            "id": table.table_id,
            "number": table.table_id,  # the table's own number, as its board says it
            "status": table.status,
            "deal": deal_text(table, t.size, rules),
            "mine": viewer_id is not None and any(s.user_id == viewer_id for s in table.seats),
            "watchable": not secret or (viewer_id is not None and any(s.user_id == viewer_id for s in table.seats)),
            "seats": [
                {"name": s.name, "is_bot": s.user_id is None, "is_me": viewer_id is not None and s.user_id == viewer_id}
                for s in table.seats
            ],
        }
        for table in shown
    ]


#: The codes of a forfeited person's line (``Seat.Forfeit``: «abandonó», «jugó el bot»).
FORFEITS = (Seat.Forfeit.LEFT.value, Seat.Forfeit.BOT.value)


def standings_context(rows: TournamentRows, viewer_id: int | None) -> list[dict[str, Any]]:
    """The standings' lines: each with its place among everyone (bots too) and, for a person, among the people
    (the prizes' order, the one «Has quedado…» says)."""
    tables = {table.table_id for table in rows.tables}
    lines = []
    for line in rows.standings:
        user_id = line.get("user_id")
        table_id = line.get("table_id")
        lines.append(
            {
                "place": line.get("place"),
                "person_place": line.get("person_place") if user_id is not None else None,
                "name": line.get("name", ""),
                "user_id": user_id,
                "is_bot": user_id is None,
                "is_me": viewer_id is not None and user_id == viewer_id,
                "table": table_id if table_id in tables else None,  # the table's own number
                "score": score_text(line.get("score", 0)),
                "score_value": line.get("score", 0),
                "played": line.get("played", 0),
                "points": line.get("points", 0),
                "prize": int(line.get("prize") or 0),
                # placed after those who played, and no prize: «abandonó», «jugó el bot» (``scoring.rank``)
                "forfeit": str(Seat.Forfeit(line["forfeit"]).label) if line.get("forfeit") in FORFEITS else "",
                "forfeit_code": line.get("forfeit") or "",
            }
        )
    return lines


def viewer_status(rows: TournamentRows, viewer_id: int | None, state: str, taken: int) -> dict[str, Any]:
    """What this viewer may do (register, withdraw) or why not, and where they play."""
    t = rows.tournament
    people = {user_id for user_id, _name in _people(rows)}
    registered = viewer_id is not None and viewer_id in people
    status: dict[str, Any] = {
        "logged_in": viewer_id is not None,
        "registered": registered,
        "can_register": False,
        "can_withdraw": False,
        "reason": "",
        "my_table": None,
        "my_line": None,
    }
    if state in ("open", "not_open", "starting") and registered:
        status["can_withdraw"] = state in ("open", "not_open")
        if state == "starting":
            status["reason"] = _("El torneo está empezando: se están formando las mesas.")
    elif state == "open":
        if viewer_id is None:
            status["reason"] = _("Entra con tu cuenta para inscribirte.")
        elif taken >= t.places:
            status["reason"] = _("El torneo está completo.")
        else:
            status["can_register"] = True
    elif state == "not_open":
        status["reason"] = _("La inscripción aún no está abierta.")
    elif state == "starting":
        status["reason"] = _("El torneo está empezando: la inscripción está cerrada.")
    elif not registered and state in ("playing", "finished"):
        status["reason"] = _("La inscripción está cerrada.")
    if registered and state in ("playing", "finished"):
        mine = next(
            (
                table
                for table in rows.tables
                if table.game == t.current_game and any(s.user_id == viewer_id for s in table.seats)
            ),
            None,
        )
        if mine is not None:
            status["my_table"] = {"id": mine.table_id, "number": mine.table_id, "status": mine.status}
        line = next((line for line in rows.standings if line.get("user_id") == viewer_id), None)
        if line is not None:
            # Both places, as the standings show them: among the people (the prizes') and among everyone.
            status["my_line"] = {
                "place": line.get("person_place"),
                "people": sum(1 for other in rows.standings if other.get("user_id") is not None),
                "overall": line.get("place"),
                "everyone": len(rows.standings),
                "played": line.get("played", 0),
                "score": score_text(line.get("score", 0)),
                "prize": int(line.get("prize") or 0),
            }
    return status


def detail_context(rows: TournamentRows, viewer_id: int | None, now: datetime | None = None) -> dict[str, Any]:
    """Everything a tournament's page shows this viewer (no query: ``rows`` has it all)."""
    now = now or timezone.now()
    t = rows.tournament
    people = _people(rows)
    about = facts(t, len(people), now)
    state = about["state"]
    return {
        "tournament": t,
        "facts": about,
        "state": state,
        "seconds_to_start": max(0, int((t.starts_at - now).total_seconds())) if state in ("open", "not_open") else None,
        "countdown": countdown_text(t.starts_at, now),
        "prizes": prize_table(rows),
        "pool": rows.pool,
        "shared_prizes": state == "finished" and _shared_prizes(rows),
        "players": [{"user_id": uid, "name": name, "is_me": uid == viewer_id} for uid, name in people],
        "status": viewer_status(rows, viewer_id, state, len(people)),
        "tables": tables_context(rows, viewer_id) if state in ("playing", "finished") else [],
        "game": t.current_game,
        "games": t.games if t.format == Tournament.Format.POINTS else 1,
        "standings": standings_context(rows, viewer_id),
        "final": state == "finished",
        "played_label": _("Manos") if t.format == Tournament.Format.DUPLICATE else _("Partidas"),
        "score_label": pgettext("torneo", "Puntuación"),
    }


def _shared_prizes(rows: TournamentRows) -> bool:
    """Whether people level on the final standings shared their places' prizes."""
    places = [
        line.get("person_place")
        for line in rows.standings
        if line.get("user_id") is not None and not line.get("forfeit")  # (those who forfeited have no prize)
    ]
    return len(places) != len(set(places))


def countdown_text(when: datetime, now: datetime) -> str:
    """The time left as the page's script counts it down: 2 d 03:04:05, 1:02:03, 4:05."""
    seconds = max(0, int((when - now).total_seconds()))
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    if days:
        return f"{days} d {hours:02d}:{minutes:02d}:{seconds:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{seconds:02d}"
    return f"{minutes}:{seconds:02d}"


def viewer_kind(rows: TournamentRows, viewer_id: int | None) -> int | str:
    """Who the live parts are drawn for, as far as they differ: a person of the tournament (their own status,
    table and line), or anyone else logged in, or a visitor (each of these two sees the same parts)."""
    if viewer_id is None:
        return "visitor"
    return viewer_id if viewer_id in {user_id for user_id, _name in _people(rows)} else "guest"


def render_live(rows: TournamentRows, viewer_id: int | None, language: str, now: datetime | None = None) -> str:
    """The page's live parts for one viewer (its state and what they may do, the players, the prizes, the
    tables, the standings) as htmx out-of-band swaps, for the page's socket: no query."""
    with override(language):
        ctx = detail_context(rows, viewer_id, now)
        ctx["oob"] = True
        return render_to_string("games/_tournament_live.html", ctx)


# -- the lobby's «Tus mesas» ------------------------------------------------------------------------------


def mark_tournament_tables(tables: Iterable[Table]) -> list[Table]:
    """«Tus mesas»: each of the person's tables, a tournament's marked with ``tournament_line`` (the tournament's
    id and name, which of its games when it has several, and the deal: «Torneo: Copa, mano 1 de 2»).  One
    query for the tournaments' names, and none when no table is a tournament's."""
    found = list(tables)
    ids = {t.tournament_id for t in found if t.tournament_id is not None}
    if not ids:
        return found
    tournaments = {t.pk: t for t in Tournament.objects.filter(pk__in=ids).only("pk", "name", "games", "format")}
    for table in found:
        tournament = tournaments.get(table.tournament_id or 0)
        if tournament is None:
            continue
        games = tournament.games if tournament.format == Tournament.Format.POINTS else 1
        table.tournament_line = {  # type: ignore[attr-defined]
            "id": tournament.pk,
            "name": tournament.name,
            "game": table.tournament_game or 1,
            "games": games,
            "deal": deal_text(table, table.size, table.game_rules),
        }
    return found


# -- the notice on every page ---------------------------------------------------------------------------


def started_notice(user_id: int) -> dict[str, Any] | None:
    """A tournament this person plays has started and their table waits for them: the tournament (id, name) and
    the table (id), for the notice every page shows (``pocha_site.context_processors.tournament_notice``); None
    otherwise.  One query, written so that the database goes from the tournaments being played (few, by their
    status index) to their tables (by their tournament's index) to this person's seat at one of them (by the
    seats' (user, table) index): with no tournament being played it costs one index probe, and never a walk
    through the person's past seats."""
    playing = Tournament.objects.filter(status=Tournament.Status.PLAYING).values("pk")
    row = (
        Seat.objects.filter(
            user_id=user_id,
            table_id__in=Table.objects.filter(tournament_id__in=playing).values("pk"),
            table__status=Table.Status.PLAYING,
            left=False,  # a seat they left does not wait for them
        )
        .order_by("-table_id")
        .values_list("table_id", "table__tournament_id", "table__tournament__name")
        .first()
    )
    if row is None:
        return None
    table_id, tournament_id, name = row
    return {"table_id": int(table_id), "tournament_id": int(tournament_id), "name": str(name)}


# -- a person's tournaments -----------------------------------------------------------------------------


def player_tournaments(user_id: int, limit: int = PROFILE_TOURNAMENTS) -> list[dict[str, Any]]:
    """The tournaments a person registered for, the latest first: when, their place among the people and how
    many people played, their score and their prize (one query)."""
    found = (
        Registration.objects.filter(user_id=user_id)
        .select_related("tournament")
        .annotate(people=Count("tournament__registrations"))
        .order_by("-tournament__starts_at", "-tournament_id")[:limit]
    )
    return [_history_line(r) for r in found]


def _history_line(registration: Any) -> dict[str, Any]:
    t = registration.tournament
    finished = t.status == Tournament.Status.FINISHED
    return {
        "id": t.pk,
        "name": t.name,
        "when": t.finished_at if finished and t.finished_at else t.starts_at,
        "finished": finished,
        "state_text": state_text(state_of(t, timezone.now())),
        "place": registration.place if finished else None,
        "people": registration.people,
        "score": score_text(registration.score) if finished and registration.score is not None else "",
        "prize": registration.prize if finished else None,
        "free": not t.entry_fee,
    }
