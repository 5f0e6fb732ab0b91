"""Who may see a table and who may sit at it: one check for the page, the socket, the record
download and every action, so a private table cannot be reached through a forgotten door.

* A public table can be watched by anyone signed in.
* A private table can be seen only by the people seated at it (the host among them), by staff,
  and — while it waits for players — by whoever brings its code.
* A seat can be taken only at a waiting table with a free seat, once per person, with the chips
  for the stake; at a private table, only with its code.
* A suspended person can watch, but cannot sit, join or play anywhere (``check_not_suspended``).
* One live table per person: nobody may sit at a table while seated at another waiting or running one
  (``live_table``; a seat whose owner left a running game does not count).  Under concurrency this holds
  because every seat is taken under the person's user row lock (``games.table.actions.common.lock_person``,
  ``check_not_suspended(lock=True)``), and ``games.table.actions.lifecycle.hold_stake`` checks it once more.
* A rematch («Revancha», ``Table.rematch_of``) seats only the people who played the game it replays;
  they need no code for a private one (and may see it), and nobody else may sit (a public one can
  still be watched).
* A block keeps two people apart (``accounts.social``): nobody may sit at a table where someone seated has
  blocked them or been blocked by them (``check_not_blocked``) — a private table by its code, link or an
  invitation, a public one, a rematch.  The refusal names nobody.  (Quick play and a tournament's seating
  never even try: ``games.table.actions.seating.do_quick_play``, ``games.tournaments.runner``.)
* A tournament game's deals are secret while any of its tables is still being played (``deals_secret``):
  every table of a game is dealt the same cards.  Until then nobody gets its record, replay, analysis or
  «Juega esta mano» (``check_deals``), its own players included, and only the people seated at a table may
  watch it (``check_watch``); then all at once.
"""

from __future__ import annotations

import re
from typing import Any

from django.db.models import Exists, OuterRef
from django.utils.translation import gettext_lazy as _

from accounts import ledger, moderation, social
from games.models import CODE_ALPHABET, CODE_LENGTH, Seat, Table
from games.table.errors import ActionError

_CODE = re.compile(f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$")


def normalize_code(raw: Any) -> str | None:
    """A code as typed (any case, spaces anywhere) in its canonical form, or None if it cannot be one."""
    if not isinstance(raw, str) or len(raw) > 40:
        return None
    code = "".join(raw.split()).upper()
    return code if _CODE.match(code) else None


def _seats(table: Table, seats: list[Seat] | None) -> list[Seat]:
    return list(Seat.objects.filter(table=table)) if seats is None else seats


def can_view(table: Table, user: Any, code: str | None = None, seats: list[Seat] | None = None) -> bool:
    if user is None or not user.is_authenticated:
        return False
    if table.is_public or user.is_staff:
        return True
    if table.created_by_id == user.pk:
        return True
    if any(s.user_id == user.pk for s in _seats(table, seats)):
        return True
    if table.status == Table.Status.WAITING and played_the_original(table, user):
        return True  # a private rematch, to the people of the game it replays, while it waits for them
    return bool(code) and table.status == Table.Status.WAITING and table.code == code


def check_view(table: Table, user: Any, code: str | None = None, seats: list[Seat] | None = None) -> None:
    """ActionError("unknown_table") when the user may not see the table: a private table someone may not
    see is, to them, a table that does not exist (no hint that the id is in use)."""
    if not can_view(table, user, code, seats):
        if code and code == table.code and not table.is_public:  # they had the code: say it has expired
            raise ActionError("code_expired", _("Ese código ya no sirve: la partida ha empezado o se ha cancelado."))
        raise ActionError("unknown_table", _("Esa mesa no existe."))


def no_chips_error(have: int, need: int) -> ActionError:
    return ActionError(
        "chips",
        _(
            "No tienes fichas suficientes: tienes %(have)s y esta mesa pide %(need)s. Juega en una mesa gratis "
            "o de menos fichas; si te quedan menos de 100, pide la recarga diaria de 500 en tu cartera."
        ),
        params={"have": have, "need": need},
    )


def suspended_error(reason: str) -> ActionError:
    return ActionError("suspended", _("Tu cuenta está suspendida: %(reason)s"), params={"reason": reason})


def check_not_suspended(user: Any, *, lock: bool = False) -> None:
    """ActionError("suspended") with the moderator's reason if ``user`` is suspended.  ``lock``: hold
    their user row until the transaction ends (see ``accounts.moderation``)."""
    reason = moderation.suspension_reason(getattr(user, "pk", None), lock=lock)
    if reason is not None:
        raise suspended_error(reason)


def live_table(user_id: int | None, *, exclude: int | None = None) -> Table | None:
    """The waiting or running table where the person has a seat they have not left (the newest one), other
    than ``exclude``; None if there is none.  Exact only under their user row's lock."""
    if user_id is None:
        return None
    tables = Table.objects.filter(
        status__in=[Table.Status.WAITING, Table.Status.PLAYING], seats__user_id=user_id, seats__left=False
    )
    if exclude is not None:
        tables = tables.exclude(pk=exclude)
    return tables.order_by("-created_at", "-pk").first()


def live_elsewhere_error() -> ActionError:
    return ActionError("live_elsewhere", _("Ya estás jugando en otra mesa: termina o deja esa partida primero."))


def check_not_live_elsewhere(user: Any, table: Table | None = None) -> None:
    """ActionError("live_elsewhere") if the person has a live seat at a table other than ``table``."""
    if live_table(getattr(user, "pk", None), exclude=None if table is None else table.pk) is not None:
        raise live_elsewhere_error()


def played_the_original(table: Table, user: Any) -> bool:
    """Whether ``table`` is a rematch and ``user`` was one of the people (not a bot) of the game it replays."""
    if table.rematch_of_id is None or user is None or not user.is_authenticated:
        return False
    return Seat.objects.filter(table_id=table.rematch_of_id, user_id=user.pk, is_bot=False).exists()


def rematch_only_error() -> ActionError:
    return ActionError("rematch_only", _("Esta revancha es solo para quienes jugaron la partida."))


def blocked_error() -> ActionError:
    """A seat refused because of a block: it names nobody (a blocked person learns nothing more about who is
    at the table than its plates already show, and never which of them blocked them)."""
    return ActionError("blocked", _("No puedes sentarte en esta mesa."))


def _people(seats: list[Seat], but: int | None) -> set[int]:
    return {s.user_id for s in seats if s.user_id is not None and not s.is_bot and s.user_id != but}


def check_not_blocked(user: Any, seats: list[Seat]) -> None:
    """ActionError("blocked") if someone seated in ``seats`` has blocked ``user`` or been blocked by them
    (one query, none at a table of bots alone)."""
    others = _people(seats, user.pk)
    if others and social.blocked_ids(user.pk) & others:
        raise blocked_error()


def hidden_by_block(table: Table, user: Any, seats: list[Seat] | None = None) -> bool:
    """Whether a live table (waiting or in play) is, to ``user``, one that does not exist: they are not seated at
    it and someone seated there has blocked them or been blocked by them.  Watching it would show the other one
    online (a block hides that both ways); a finished game's record stays as open as any (one query, none when
    ``user`` is seated or nobody else is)."""
    if table.status not in _UNDONE or user is None or not user.is_authenticated:
        return False
    rows = _seats(table, seats)
    if any(s.user_id == user.pk for s in rows):
        return False
    others = _people(rows, user.pk)
    return bool(others) and bool(social.blocked_ids(user.pk) & others)


def kept_apart(seats: list[Seat], wanted: set[int]) -> set[int]:
    """Those of ``wanted`` (not seated) who may not sit with someone seated in ``seats``: a block either way
    (one query).  A rematch waits for nobody among them."""
    seated = _people(seats, None)
    waiting = set(wanted) - seated
    if not seated or not waiting:
        return set()
    pairs = social.blocked_pairs(seated | waiting)
    return {uid for uid in waiting if any(frozenset((uid, other)) in pairs for other in seated)}


def check_sit(table: Table, user: Any, code: str | None = None, seats: list[Seat] | None = None) -> None:
    """Raise ActionError unless ``user`` may take a seat at ``table`` now (the final chips check is the
    ledger's own, under the account's lock)."""
    if user is None or not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    check_not_suspended(user)
    seats = _seats(table, seats)
    seated = any(s.user_id == user.pk for s in seats)
    rematch_player = not seated and played_the_original(table, user)
    if not table.is_public and table.created_by_id != user.pk and not seated and not rematch_player:
        if not code or code != table.code:
            raise ActionError("unknown_table", _("Esa mesa no existe."))
        if table.status != Table.Status.WAITING:
            raise ActionError("code_expired", _("Ese código ya no sirve: la partida ha empezado o se ha cancelado."))
    if table.rematch_of_id is not None and not seated and not rematch_player:
        raise rematch_only_error()
    if table.status != Table.Status.WAITING:
        raise ActionError("not_waiting", _("Esta partida ya ha empezado."))
    if seated:
        raise ActionError("already_seated", _("Ya estás sentado en esta mesa."))
    check_not_live_elsewhere(user, table)  # (exact when the caller holds the person's user row lock)
    if len(seats) >= table.size:
        raise ActionError("full", _("La mesa está completa."))
    check_not_blocked(user, seats)
    if table.stake:
        have = ledger.balance(user.pk)
        if have < table.stake:
            raise no_chips_error(have, table.stake)


def can_sit(table: Table, user: Any, code: str | None = None, seats: list[Seat] | None = None) -> bool:
    try:
        check_sit(table, user, code, seats)
    except ActionError:
        return False
    return True


def player_seat(seats: list[Seat], user: Any) -> Seat | None:
    """The person's own seat among ``seats`` (a person's, not a bot's), or None."""
    if user is None or not user.is_authenticated:
        return None
    return next((s for s in seats if s.user_id == user.pk and not s.is_bot), None)


def finished_game_played(table_id: Any, user: Any, not_player: Any, practice: Any) -> tuple[Table, list[Seat], Seat]:
    """A finished game (not a practice hand) that ``user`` played, its seats and their seat — what the analysis
    and «Juega esta mano» are for.  ActionError otherwise: a table they may not see does not exist; the
    others say why, in the caller's words (``not_player``, ``practice``)."""
    try:
        table = Table.objects.filter(pk=int(table_id)).first()
    except (TypeError, ValueError):
        table = None
    seats = list(Seat.objects.filter(table=table)) if table is not None else []
    if table is None or not can_view(table, user, seats=seats):
        raise ActionError("unknown_table", _("Esa mesa no existe."))
    if table.status != Table.Status.FINISHED or table.first_dealer is None:
        raise ActionError("not_finished", _("La partida aún no ha terminado."))
    if table.is_practice:
        raise ActionError("practice", practice)
    mine = player_seat(seats, user)
    if mine is None:
        raise ActionError("not_player", not_player)
    check_deals(table)  # a tournament's deals, while other tables still play them: not even for its players
    return table, seats, mine


# -- a tournament's deals --------------------------------------------------------------------------------

#: A table of these statuses is still to deal or play some of its game's deals.
_UNDONE = (Table.Status.WAITING, Table.Status.PLAYING)


def deals_secret(table: Table) -> bool:
    """Whether ``table``'s deals are still secret: it is a tournament's, and some table of the same game of that
    tournament (itself included) is still waiting or being played.

    Every table of a tournament's game is dealt from the game's one seed, round by round
    (``games.tournaments.runner.open_tables``, ``games.table.actions.lifecycle.on_start`` and ``deal``: round
    ``n`` from ``round_seed(seed, n)``), so the cards one table has played are the cards the others are still
    to play; the games of a por-puntos tournament have seeds of their own (``round_seed(tournament seed,
    game)``), so the secret is one game's.  A table called off by a moderator is done with its deals."""
    if table.tournament_id is None:
        return False
    return Table.objects.filter(
        tournament_id=table.tournament_id, tournament_game=table.tournament_game, status__in=_UNDONE
    ).exists()


def deals_secret_rows(table_field: str = "table") -> Exists:
    """``deals_secret`` as a condition on rows of a query: true for a row whose table (``table_field``, the path
    to it, e.g. ``"table"`` for rounds and moves; ``""`` for tables themselves) is a tournament's whose game
    has a table still waiting or being played (``.exclude(deals_secret_rows())``: the rows one may show)."""
    prefix = f"{table_field}__" if table_field else ""
    return Exists(
        Table.objects.filter(
            tournament_id=OuterRef(f"{prefix}tournament_id"),
            tournament_game=OuterRef(f"{prefix}tournament_game"),
            status__in=_UNDONE,
        )
    )


def deals_secret_error() -> ActionError:
    return ActionError(
        "deals_secret", _("Las manos de esta partida del torneo se verán cuando terminen todas sus mesas.")
    )


def check_deals(table: Table) -> None:
    """ActionError("deals_secret") while ``table``'s deals are secret (``deals_secret``): its record, replay,
    analysis and «Juega esta mano» are for nobody yet, its own players included (a player whose table has
    finished could pass them on to someone at a table still playing them)."""
    if deals_secret(table):
        raise deals_secret_error()


def may_watch(table: Table, user: Any, seats: list[Seat] | None = None) -> bool:
    """Whether ``user`` (who may see the table: ``can_view``) may look at its board now: always, but at a
    tournament's table whose deals are secret only the people seated there (a spectator would see the cards
    played, which the other tables of the game are still to play)."""
    if table.tournament_id is None:
        return True
    if player_seat(_seats(table, seats), user) is not None:
        return True
    return not deals_secret(table)


def watch_error() -> ActionError:
    return ActionError(
        "tournament_watch",
        _(
            "Esta mesa del torneo se podrá mirar cuando terminen todas las mesas de la partida: todas juegan "
            "las mismas cartas."
        ),
    )


def check_watch(table: Table, user: Any, seats: list[Seat] | None = None) -> None:
    """ActionError("tournament_watch") unless ``user`` may look at the table's board now (``may_watch``)."""
    if not may_watch(table, user, seats):
        raise watch_error()


def can_watch_id(table_id: int, user: Any) -> ActionError | None:
    """The socket's check when it opens: None if ``user`` may see the table and look at its board now, else
    why not (a table they may not see, or that does not exist, is one that does not exist)."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        return ActionError("unknown_table", _("Esa mesa no existe."))
    seats = list(Seat.objects.filter(table=table))
    if not can_view(table, user, seats=seats) or hidden_by_block(table, user, seats):
        return ActionError("unknown_table", _("Esa mesa no existe."))
    return None if may_watch(table, user, seats) else watch_error()
