"""What every write to a table shares: the table's lock, the seq check, the person's seat, and ``commit``,
which saves a change, bumps ``seq`` and emits what changed (``games.table.events``) for after the commit."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils.translation import gettext_lazy as _

from accounts import moderation
from games.engine import GameState, Phase, levels
from games.engine.presets import PLAYERS
from games.models import CODE_ALPHABET, CODE_LENGTH, PRESET_LABELS, STAKES, Seat, Table, rules_of
from games.table import access, clock, events, history, rows, snapshot
from games.table.errors import ActionError
from games.table.events import Redraw, TableChanged, TournamentChanged

User = AbstractBaseUser | AnonymousUser


def lock(table_id: int) -> Table:
    try:
        table = rows.lock_table(int(table_id))
    except (ValueError, TypeError):
        table = None
    if table is None:
        raise ActionError("unknown_table", _("Esa mesa no existe."))
    return table


def check_seq(table: Table, seq: int | None) -> None:
    if seq is not None and seq != table.seq:
        raise ActionError("stale", _("Tu pantalla no estaba al día: la mesa ha cambiado. Mira de nuevo."), resync=True)


def seat_of(table: Table, user: User, *, active: bool = True) -> Seat:
    """The person's seat at the table.  ``active``: refuse a suspended person (read in the same query)."""
    _check_logged_in(user)
    return _checked(rows.user_seat(table.pk, user.pk), active)


def lock_and_seat(table_id: int, user: User, *, active: bool = True) -> tuple[Table, Seat]:
    """``lock`` and then ``seat_of``, with the same errors in the same order, in one statement (a move's).

    The seat is read as the statement found it: if the table's lock was held by another transaction that
    changed the seat (the clock playing for them, a leave), that change is not seen here, where a second
    statement would see it.  Every such change bumps the table's seq, so a move, which always carries its
    seq, is then refused as stale (``check_seq``) before its seat is used.  Changes made without the table's
    lock (a socket's presence) race the same way with either form."""
    if not user.is_authenticated:
        lock(table_id)  # (the table first: an unknown one is said so)
        _check_logged_in(user)
    try:
        found = rows.lock_table_and_seat(int(table_id), user.pk)
    except (ValueError, TypeError):
        found = None
    if found is None:
        raise ActionError("unknown_table", _("Esa mesa no existe."))
    table, seat = found
    return table, _checked(seat, active)


def _check_logged_in(user: User) -> None:
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))


def _checked(found: tuple[Seat, Any, str] | None, active: bool) -> Seat:
    if found is None:
        raise ActionError("not_seated", _("No estás sentado en esta mesa."))
    seat, suspended_at, reason = found
    if active and suspended_at is not None:
        raise access.suspended_error(reason)
    return seat


def commit(
    table: Table,
    old_seq: int,
    *,
    pause: float = 0.0,
    move: tuple[int, str, str] | None = None,
    log: rows.Logged | None = None,
    **fields: Any,
) -> TableChanged:
    """Save ``fields``, bump ``seq`` and emit what changed, to be pushed and armed once committed.
    ``pause``: seconds everyone gets to look at the table (a completed trick) before the next move.
    ``move``: the one move (seat, kind, value) that took the game from ``old_seq`` to its new state, when
    that is all that happened to it, so that each process moves its own copy of the game.
    ``log``: the move for the game's log at the new seq (``apply``'s), written with the table's update."""
    fields["seq"] = old_seq + 1
    # A game in play: its seats, read once here (after every change to them in this transaction), give the
    # clock its seat to move and, with the table, the snapshot every viewer's board is drawn from.
    playing = fields.get("status", table.status) == Table.Status.PLAYING
    seats, spectators = snapshot.seats_and_spectators(table.pk) if playing else (None, 0)
    # A round just ended: the scoreboards change, and the push carries every round's result (else none).
    done = snapshot.rounds_done(fields.get("phase", table.phase), fields.get("round_number", table.round_number))
    ended = playing and done > snapshot.rounds_done(table.phase, table.round_number)
    results = history.results(table.pk) if ended else None
    fields["due_at"], fields["turn_deadline"] = clock.due_at(table, fields, pause, seats)
    if rows.update_table(table.pk, old_seq, fields, log) != 1:  # cannot happen under the row lock: refuse, lose nothing
        raise ActionError("stale", _("La mesa ha cambiado mientras jugabas."), resync=True)
    for name, value in fields.items():
        setattr(table, name, value)
    changed = TableChanged(
        table.pk,
        table.seq,
        due=table.due_at,
        person=table.turn_deadline is not None,  # a person's turn clock (not a bot's, nor an away person's)
        deal=table.status == Table.Status.PLAYING and table.phase == Phase.ROUND_OVER.value,
        snapshot=snapshot.pack_change(
            table,
            seats,
            spectators,
            results=results,
            game=snapshot.SAME if "state" not in fields else snapshot.MOVE if move is not None else None,
            move=move,
        )
        if seats is not None
        else None,
    )
    events.emit(changed)
    if table.tournament_id is not None and (ended or "status" in fields):
        # the tournament's standings moved (a deal finished), or one of its tables started or ended
        events.emit(TournamentChanged(table.tournament_id, table_done=fields.get("status") == Table.Status.FINISHED))
    if table.rematch_of_id is not None and (table.status == Table.Status.WAITING or "status" in fields):
        # the finished game's screen shows who is at its rematch, and whether it started
        events.emit(Redraw(table.rematch_of_id))
    return changed


def playing_game(table: Table) -> GameState:
    """The engine state of a table whose game has started (its state, or rebuilt from its log if missing)."""
    game = history.game_of(table)
    if game is None:
        raise ActionError("not_playing", _("La partida no está en juego."))
    return game


def state_fields(game: GameState) -> dict[str, Any]:
    """The table row's fields a change of ``game`` writes: what the next move needs, no history."""
    return {
        "state": history.current_state(game),
        "phase": game.phase.value,
        "round_number": game.number,
        "turn_seat": game.turn,
    }


def check_size_and_stake(size: Any, stake: Any, rules: Any = "clasica") -> str:
    """The table's rules key (``games.models.rules_key``) once the size, the stake and the rules are ones a
    table may have; ActionError saying which is not."""
    try:
        preset = rules_of(rules).preset
    except ValueError:
        raise ActionError("rules", _("Esas reglas no existen.")) from None
    low, high = PLAYERS[preset]
    if isinstance(size, bool) or size not in range(low, high + 1):
        raise ActionError(
            "size",
            _("Con las reglas «%(rules)s» una mesa es de %(low)s a %(high)s jugadores."),
            params={"rules": PRESET_LABELS[preset], "low": low, "high": high},
        )
    if stake not in STAKES:
        raise ActionError("stake", _("Esa apuesta no existe: las mesas son gratis o de 100, 500 o 2.000 fichas."))
    return str(rules)


def new_code() -> str:
    """A private table's code (``secrets``, like every seed: a test swaps it to replay games exactly)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def new_seed() -> int:
    """A seed for a game's first dealer or a round's deal."""
    return secrets.randbits(62)


def check_bot_level(level: Any) -> str:
    """The bots' level a form or a caller asks for (``facil``, ``normal``, ``dificil``, the spoken names
    too); ActionError otherwise."""
    try:
        if not isinstance(level, str):
            raise ValueError
        return levels.parse_level(level)
    except ValueError:
        raise ActionError("bot_level", _("Ese nivel de bots no existe: fácil, normal o difícil.")) from None


def lock_person(user: User) -> None:
    """Lock the person's user row until the transaction ends.  Every seat a person takes is taken under
    it, so that their "one live table" check and the seat it allows are one step for them (two tabs,
    two processes: the second waits, then sees the first one's seat).  On SQLite the IMMEDIATE
    transaction already serialises every writer.

    Lock order: the person's row, then the table's (``do_create_table``, ``do_take_seat`` at a table
    that is not a rematch, ``do_quick_play``).  A rematch keeps its module's order — the finished
    table, the rematch, then the person — and touches no table those take: they lock only waiting
    tables that are not rematches, it locks a finished table and a rematch."""
    moderation.lock_user_row(user.pk)
