"""Read paths: a table's engine state, and one viewer's view of it as template context.

Nothing here renders from the full game state: the context is built from the engine's
seat view, so a card that is not the viewer's cannot reach their page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property, lru_cache
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import DateTimeField, Model
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.template.backends.utils import csrf_input
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext, override

from accounts import ledger
from games import rematch, rows, talk, watchers
from games.engine import Bid, Card, ChooseTrump, GameState, Phase, Play, SeatView, Suit, seat_view
from games.engine.cards import SUITS
from games.engine.snapshot import load
from games.models import BOT_LEVEL_LABELS, Seat, Table
from pocha_site.jinja2 import draw

M = TypeVar("M", bound=Model)

SUIT_SYMBOLS = {Suit.OROS: "✹", Suit.COPAS: "♥", Suit.ESPADAS: "⚔", Suit.BASTOS: "♣"}
RANK_LABELS = {1: "1", 10: "10", 11: "11", 12: "12"}


def game_state(table: Table) -> GameState | None:
    return load(table.state) if table.state else None


def card_name(card: Card, language: str) -> str:
    return card.name_es if language.startswith("es") else card.name_en


def suit_name(suit: Suit, language: str) -> str:
    return suit.name_es if language.startswith("es") else suit.name_en


@lru_cache(maxsize=256)
def card_ctx(card: Card, language: str) -> dict[str, Any]:
    """What a template shows of a card, made once per card and language (callers copy it, never change it)."""
    ctx: dict[str, Any] = {
        "code": str(card),
        "rank": card.rank,
        "suit": card.suit.value,
        "symbol": SUIT_SYMBOLS[card.suit],
        "name": card_name(card, language),
    }
    ctx["face"] = card_face(ctx)
    return ctx


_faces: dict[str, SafeString] = {}


def card_face(card: dict[str, Any]) -> SafeString:
    """The card's picture (``games/_card.html``), drawn once per card and process: the same 40 pictures
    are on every board, and drawing them was a third of a board's rendering."""
    face = _faces.get(card["code"])
    if face is None:
        face = _faces[card["code"]] = mark_safe(render_to_string("games/_card.html", {"card": card}).strip())  # noqa: S308
    return face


@lru_cache(maxsize=64)
def bot_level_name(level: str, language: str) -> str:
    """``Table.get_bot_level_display()`` in ``language``, looked up once per level and language (it was a
    fifth of a board's context: a lazy text translated for every viewer at every move)."""
    with override(language):
        return str(BOT_LEVEL_LABELS.get(level, level))


@dataclass
class Viewer:
    user_id: int | None
    language: str


def board_context(
    table: Table,
    seats: list[Seat],
    viewer: Viewer,
    spectators: int | None = None,
    game: GameState | None = None,
    scores: bool = True,
) -> dict[str, Any]:
    """Everything the table page shows this viewer, and nothing it must not.  ``spectators``: the count
    if the caller read it already (``load_snapshot``), else it is read here.  ``scores``: False when the
    board leaves the scoreboard out (``render_snapshot``): ``results`` then holds the last round's only."""
    lang = viewer.language
    my_seat = next((s for s in seats if viewer.user_id is not None and s.user_id == viewer.user_id), None)
    by_pos = {s.position: s for s in seats}
    ctx: dict[str, Any] = {
        "table": table,
        "seq": table.seq,
        "my_seat": my_seat,
        "lang": lang,
        "status": table.status,
        "size": table.size,
        "stake": table.stake,
        # Stakes are held as people sit, so the pot is the stake times the seats taken until it is paid.
        "pot": table.stake * (len(seats) if table.status == Table.Status.WAITING else table.size),
        "is_private": not table.is_public,
        "is_host": my_seat is not None and table.created_by_id == viewer.user_id,
        "bots_allowed": table.bots_allowed,
        # every bot at the table plays at this level («bot · difícil» on its seat)
        "bot_level": table.bot_level,
        "bot_level_name": bot_level_name(table.bot_level, lang),
        "code": table.code if table.status == Table.Status.WAITING and my_seat is not None else None,
        "i_left": my_seat is not None and my_seat.left,
        "table_texts": table_texts,  # a callable: only the page (not each push) asks for it
        "hold_ms": int(settings.POCHA_TRICK_HOLD * 1000),
        # people watching who have no seat here (each of their sockets is a Watcher row)
        "spectators": watchers.spectators(table.pk) if spectators is None else spectators,
        # table talk: only people seated here speak; the page draws the phrases once (a callable)
        "phrases": (lambda: talk.phrases_context(lang)) if my_seat is not None and not my_seat.is_bot else [],
    }
    if game is None:
        game = game_state(table)
    if game is None:
        anchor = my_seat.position if my_seat is not None else 0
        ctx["n"] = table.size
        ctx["seats"] = [
            {
                "position": p,
                "name": by_pos[p].name if p in by_pos else None,
                "is_bot": by_pos[p].is_bot if p in by_pos else False,
                "is_me": my_seat is not None and my_seat.position == p,
                "slot": (p - anchor) % table.size,
                "offline": p in by_pos and not by_pos[p].is_bot and by_pos[p].sockets == 0,
            }
            for p in range(table.size)
        ]
        ctx["fill_in"] = (
            max(0, int((table.fill_at - timezone.now()).total_seconds()))
            if table.fill_at and table.status == Table.Status.WAITING
            else None
        )
        return ctx
    view = seat_view(game, my_seat.position if my_seat else None)
    ctx["view"] = view
    ctx.update(_game_context(view, by_pos, lang, scores))
    if table.status == Table.Status.CANCELLED:
        # Called off midway: the board stays as it stopped, with no move to make and no winner.
        ctx.update(
            bid_options=[],
            trump_options=[],
            my_turn=False,
            over=False,
            ranking=[],
            turn_name=None,
            hand=[{**card, "playable": False} for card in ctx["hand"]],
        )
    ctx["deadline_in"] = (
        max(0, int((table.turn_deadline - timezone.now()).total_seconds()))
        if table.turn_deadline and table.status == Table.Status.PLAYING
        else None
    )
    ctx["deadline_ts"] = table.turn_deadline.timestamp() if ctx["deadline_in"] is not None else None
    for player in ctx["players"]:  # the clock sits on the seat whose turn it is
        player["clock"] = ctx["deadline_in"] if player["is_turn"] else None
        if table.status != Table.Status.PLAYING:  # once it is over, nobody is away or offline any more
            player["away"] = player["offline"] = False
    if table.status == Table.Status.FINISHED:  # «Revancha»: the same players, the same options
        ctx["rematch"] = rematch.rematch_context(table, seats, viewer.user_id)
    # The bot plays for the person only when it really does: away (or left), never merely after one
    # turn the clock played for them; then, once they are back, what it did meanwhile.
    ctx["i_am_away"] = my_seat is not None and (my_seat.away or my_seat.left) and table.status == Table.Status.PLAYING
    ctx["bot_notice"] = (
        bot_summary(my_seat.bot_log, lang) if my_seat is not None and my_seat.bot_log and not ctx["i_am_away"] else ""
    )
    return ctx


def bot_summary(log: list[dict[str, Any]], lang: str) -> str:
    """«el bot pidió 2 y jugó 3 cartas por ti», from the seat's bot log."""
    bids = [str(entry["bid"]) for entry in log if "bid" in entry]
    trumps = [Suit(entry["trump"]) for entry in log if "trump" in entry]
    plays = sum(1 for entry in log if "play" in entry)
    parts = []
    if bids:
        parts.append(_("pidió %(bids)s") % {"bids": ", ".join(bids)})
    if trumps:
        parts.append(_("eligió %(suit)s de triunfo") % {"suit": suit_name(trumps[-1], lang)})
    if plays:
        parts.append(ngettext("jugó %(n)s carta", "jugó %(n)s cartas", plays) % {"n": plays})
    if not parts:
        return ""
    done = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " " + _("y") + " " + parts[-1]
    return _("Mientras no estabas, el bot %(done)s por ti.") % {"done": done}


#: The round phases' names, translated when drawn.
ROUND_PHASE_NAMES = {
    "subida": gettext_noop("subida"),
    "subasta": gettext_noop("subasta"),
    "bajada": gettext_noop("bajada"),
}


def _game_context(view: SeatView, by_pos: dict[int, Seat], lang: str, scores: bool = True) -> dict[str, Any]:
    def name(seat: int | None) -> str:
        return by_pos[seat].name if seat is not None and seat in by_pos else "—"

    players = []
    for p in range(view.players):
        players.append(
            {
                "position": p,
                "name": name(p),
                "is_bot": by_pos[p].is_bot if p in by_pos else False,
                "is_me": view.seat == p,
                "is_dealer": view.dealer == p,
                "is_resting": view.resting == p,
                "is_turn": view.turn == p,
                "bid": view.bids[p],
                "tricks": view.tricks[p] if view.resting != p else None,
                "total": view.totals[p],
                "hand_size": view.hand_sizes[p],
                "away": p in by_pos and not by_pos[p].is_bot and by_pos[p].away,
                "left": p in by_pos and by_pos[p].left,
                "offline": p in by_pos and not by_pos[p].is_bot and by_pos[p].sockets == 0,
            }
        )
    legal = set(view.legal)
    hand = []
    # why a card the engine gives no reason for cannot be played (one text for the whole hand)
    if not view.hand:
        waiting = ""
    elif view.phase is Phase.PLAYING and not view.my_turn:
        waiting = _("Todavía no es tu turno.")
    elif view.phase in (Phase.BIDDING, Phase.CHOOSING_TRUMP):
        waiting = _("Primero se pide: las cartas se juegan después.")
    else:
        waiting = ""
    for card in view.hand:
        why = view.reasons.get(card)
        # the rule in words; the engine's list of card codes is for records, not people
        reason = why.message(lang).split(" (")[0] if why is not None else waiting
        hand.append({**card_ctx(card, lang), "playable": Play(card) in legal, "reason": reason})
    bidding = view.phase is Phase.BIDDING and view.my_turn
    bid_options = []
    if bidding:
        for n in range(view.cards + 1):
            allowed = Bid(n) in legal
            reason = ""
            if not allowed and n == view.forbidden_bid:
                reason = _("Eres el último en cantar: la suma de los pedidos no puede ser %(n)s.") % {"n": view.cards}
            bid_options.append({"n": n, "allowed": allowed, "reason": reason})
    trump_options = []
    if view.phase is Phase.CHOOSING_TRUMP and view.my_turn:
        trump_options = [
            {"code": s.value, "name": suit_name(s, lang), "symbol": SUIT_SYMBOLS[s]}
            for s in SUITS
            if ChooseTrump(s) in legal
        ]
    trick = [{"seat": p.seat, "name": name(p.seat), "card": card_ctx(p.card, lang)} for p in view.trick]
    last_trick = [
        {"seat": p.seat, "name": name(p.seat), "card": card_ctx(p.card, lang), "won": p.seat == view.last_trick_winner}
        for p in view.last_trick
    ]
    # The felt: each seat's card in front of it — the trick being played, or the trick just completed
    # (nobody has led since) with its winning card marked, which every page holds up before sweeping it.
    anchor = view.seat if view.seat is not None else 0
    trick_done = not trick and bool(last_trick) and view.phase in (Phase.PLAYING, Phase.ROUND_OVER, Phase.GAME_OVER)
    played_tricks = sum(view.tricks)
    for player in players:
        player["slot"] = (player["position"] - anchor) % view.players
    felt_cards = [
        {**t, "slot": (t["seat"] - anchor) % view.players, "won": bool(trick_done and t.get("won"))}
        for t in (last_trick if trick_done else trick)
    ]
    results = []
    # every round's result for the scoreboard; only the last one's when the scoreboard is left out
    for r in view.results if scores else view.results[-1:]:
        results.append(
            {
                "number": r.number,
                "phase": r.phase.value,
                "cards": r.cards,
                "multiplier": r.multiplier,
                "trump": suit_name(r.trump_suit, lang),
                "symbol": SUIT_SYMBOLS[r.trump_suit],
                "suit": r.trump_suit.value,
                "rows": [
                    {
                        "name": name(p),
                        "bid": r.bids[p],
                        "tricks": r.tricks[p],
                        "points": r.points[p],
                        "made": r.bids[p] is not None and r.bids[p] == r.tricks[p],
                    }
                    for p in range(view.players)
                ],
                "points": list(r.points),
            }
        )
    ranking = []
    if view.winners is not None:
        order = sorted(range(view.players), key=lambda p: (-view.totals[p], p))
        place = 0
        previous = None
        for i, p in enumerate(order):
            if view.totals[p] != previous:
                place = i + 1
                previous = view.totals[p]
            ranking.append(
                {
                    "place": place,
                    "name": name(p),
                    "total": view.totals[p],
                    "winner": p in view.winners,
                    "chips": by_pos[p].winnings if p in by_pos else 0,
                }
            )
    # Bids against tricks: «sobran 2» (more asked than there are tricks) or «faltan 1».
    bids_made = [b for b in view.bids if b is not None]
    bids_line = ""
    if bids_made and view.phase in (Phase.BIDDING, Phase.CHOOSING_TRUMP, Phase.PLAYING):
        total = sum(bids_made)
        if total > view.cards:
            balance = ngettext("sobra %(n)s", "sobran %(n)s", total - view.cards) % {"n": total - view.cards}
        elif total < view.cards:
            balance = ngettext("falta %(n)s", "faltan %(n)s", view.cards - total) % {"n": view.cards - total}
        else:
            balance = _("justas")
        bids_line = _("Pedidas %(total)s de %(cards)s: %(balance)s") % {
            "total": total,
            "cards": view.cards,
            "balance": balance,
        }
    return {
        "n": view.players,
        "bids_line": bids_line,
        "trick_done": trick_done,
        "felt_cards": felt_cards,
        "trick_key": f"{view.number}-{played_tricks}",
        "trick_last": trick_done and played_tricks == view.cards,
        "hand_count": len(hand),
        "players": players,
        "hand": hand,
        "bid_options": bid_options,
        "trump_options": trump_options,
        "trick": trick,
        "last_trick": last_trick,
        "last_trick_winner": name(view.last_trick_winner) if view.last_trick_winner is not None else None,
        "results": results,
        # the last round's result stays up until the first card of the next round is played
        # A round's result is up from its last trick until the next deal (the round pause); with no
        # pause configured, the next round's page shows it until the first card of that round.
        "last_result": results[-1]
        if results
        and (
            view.phase is Phase.ROUND_OVER
            or (
                settings.POCHA_ROUND_PAUSE <= 0
                and view.phase is not Phase.GAME_OVER
                and (view.phase is not Phase.PLAYING or not (view.trick or view.last_trick))
            )
        )
        else None,
        # the round just ended on this board (its last trick is still on the felt): the page shows the
        # result once that trick has been held up
        "round_just_over": view.phase in (Phase.ROUND_OVER, Phase.GAME_OVER) and trick_done,
        "ranking": ranking,
        "trump_card": card_ctx(view.trump_card, lang) if view.trump_card else None,
        "trump_suit": {
            "name": suit_name(view.trump_suit, lang),
            "symbol": SUIT_SYMBOLS[view.trump_suit],
            "code": view.trump_suit.value,
        }
        if view.trump_suit
        else None,
        "multiplier": view.multiplier,
        "round_phase": _(ROUND_PHASE_NAMES[view.round_phase.value])
        if view.round_phase and view.round_phase.value in ROUND_PHASE_NAMES
        else "",
        "turn_name": name(view.turn) if view.turn is not None else None,
        "my_turn": view.my_turn,
        "auction_winner": name(view.auction_winner) if view.auction_winner is not None else None,
        "playing": view.phase is Phase.PLAYING,
        "bidding": view.phase is Phase.BIDDING,
        "choosing": view.phase is Phase.CHOOSING_TRUMP,
        "over": view.phase is Phase.GAME_OVER,
    }


def table_texts() -> dict[str, str]:
    """What the table's script says in the page's language (announcements, toggles)."""
    return {
        "your_turn": _("Te toca"),
        "bid": _("pide tus bazas"),
        "trump": _("elige el triunfo"),
        "play": _("juega una carta"),
        "trick_for": _("Baza para"),
        "plays": _("juega"),
        "lost": _("Conexión perdida: reconectando…"),
        "mute": _("Silenciar el aviso"),
        "unmute": _("Activar el aviso"),
        "round_result": _("Resultado de la ronda"),
        "says": _("dice"),
        "mute_talk": _("Silenciar las frases de"),
        "unmute_talk": _("Volver a oír las frases de"),
    }


@dataclass(frozen=True)
class Snapshot:
    """What every viewer's board at one seq is drawn from, read once and shared by every socket of a
    process showing the table (``games.consumers``): made by the change itself and carried in its push
    (``pack_snapshot``, with the log of the round in play only), or read (``load_snapshot``).  It holds
    every hand, so it never leaves the server: each viewer's context is built from it through the
    engine's seat view.  It is for drawing only: a move is made on the table read afresh and locked."""

    table: Table
    seats: tuple[Seat, ...]
    spectators: int

    @property
    def seq(self) -> int:
        return self.table.seq

    @cached_property
    def game(self) -> GameState | None:
        """The engine state, parsed once for every viewer (``seat_view`` does not change it)."""
        return game_state(self.table)


#: How many distinct people have a socket showing the table (``%s``, or a column) and no seat at it.
SPECTATORS_SQL = (
    "SELECT COUNT(DISTINCT w.user_id) FROM games_watcher w WHERE w.table_id = {table} AND NOT EXISTS "
    "(SELECT 1 FROM games_seat s WHERE s.table_id = w.table_id AND s.user_id = w.user_id)"
)


def seats_and_spectators(table_id: int) -> tuple[list[Seat], int]:
    """The table's seats, and its number of spectators (``watchers.spectators``), in one query."""
    seats, spectators = rows.seats_with_spectators(table_id, SPECTATORS_SQL.format(table="%s"))
    if spectators is not None:
        return seats, spectators
    return seats, spectator_count(table_id)  # no seat (yet): the count alone


def spectator_count(table_id: int) -> int:
    """How many distinct people have a socket showing the table and no seat at it (one query)."""
    with connection.cursor() as cursor:
        cursor.execute(SPECTATORS_SQL.format(table="%s"), [table_id])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def load_snapshot(table_id: int) -> Snapshot | None:
    """The table, its seats and its number of spectators, in two queries; None if the table is gone."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        return None
    seats, spectators = seats_and_spectators(table_id)
    return Snapshot(table, tuple(seats), spectators)


def _pack_row(instance: Model) -> list[Any]:
    values = []
    for field in instance._meta.concrete_fields:
        value = getattr(instance, field.attname)
        if isinstance(value, datetime):
            value = value.timestamp()
        values.append(value)
    return values


def _unpack_row(model: type[M], values: list[Any]) -> M:
    fields = model._meta.concrete_fields
    if len(values) != len(fields):
        raise ValueError(f"{model.__name__}: {len(values)} values for {len(fields)} fields")
    values = [
        datetime.fromtimestamp(value, tz=UTC) if value is not None and isinstance(field, DateTimeField) else value
        for field, value in zip(fields, values, strict=True)
    ]
    return model.from_db(DEFAULT_DB_ALIAS, None, values)


def drawing_state(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """The engine state as far as a board needs it: the log (every round's deal and plays, for the record)
    of the round in play only, which is all the seat view reads of it.  The earlier rounds' log was most
    of a late push (3.6 of a round-11 event's 6.3 KB, and the most parsing in each process)."""
    if not state or len(state.get("log") or ()) <= 1:
        return state
    return {**state, "log": state["log"][-1:]}


_STATE_AT = next(i for i, field in enumerate(Table._meta.concrete_fields) if field.attname == "state")


def pack_snapshot(table: Table, seats: list[Seat], spectators: int) -> dict[str, Any]:
    """The snapshot as plain data for the channel layer's message (server to server only), its engine
    state cut to what the boards are drawn from (``drawing_state``)."""
    values = _pack_row(table)
    values[_STATE_AT] = drawing_state(values[_STATE_AT])
    return {"table": values, "seats": [_pack_row(seat) for seat in seats], "spectators": spectators}


def unpack_snapshot(data: dict[str, Any]) -> Snapshot:
    return Snapshot(
        _unpack_row(Table, data["table"]),
        tuple(_unpack_row(Seat, values) for values in data["seats"]),
        int(data["spectators"]),
    )


def render_snapshot(
    snapshot: Snapshot, user_id: int | None, language: str, shown_rounds: int | None = None
) -> tuple[int, str] | None:
    """This viewer's board fragments from ``snapshot`` with no database access, for a game in play (the
    per-move path: it may run on the event loop); None for any other status, whose board also shows the
    viewer's chips or the rematch (``render_board`` reads those).

    ``shown_rounds``: how many rounds' results the viewer's scoreboard shows already; if that is still
    right, the scoreboard (most of a late board's size and drawing) is left out and the page keeps its own."""
    if snapshot.table.status != Table.Status.PLAYING:
        return None
    scores_unchanged = shown_rounds is not None and shown_rounds == rounds_done(snapshot)
    with override(language):
        ctx = board_context(
            snapshot.table,
            list(snapshot.seats),
            Viewer(user_id, language),
            snapshot.spectators,
            snapshot.game,
            scores=not scores_unchanged,
        )
        ctx["oob"] = True
        ctx["scores_unchanged"] = scores_unchanged
        html = draw_board(ctx)
    return snapshot.seq, html


def rounds_done(snapshot: Snapshot) -> int | None:
    """How many rounds' results the snapshot's scoreboard shows (None: no game yet)."""
    game = snapshot.game
    return None if game is None else len(game.results)


def render_board(
    table_id: int, user_id: int | None, language: str, snapshot: Snapshot | None = None
) -> tuple[int, str] | None:
    """This viewer's board fragments at the table's current seq (or ``snapshot``'s), or None if the table
    is gone."""
    if snapshot is None:
        snapshot = load_snapshot(table_id)
        if snapshot is None:
            return None
    rendered = render_snapshot(snapshot, user_id, language)
    if rendered is not None:
        return rendered
    table = snapshot.table
    with override(language):
        ctx = board_context(table, list(snapshot.seats), Viewer(user_id, language), snapshot.spectators)
        ctx["oob"] = True
        if user_id is not None and table.status != Table.Status.PLAYING:
            # Chips move when people sit, stand, start, finish or cancel: redraw the header's count then.
            ctx["header_chips"] = ledger.balance(user_id)
        html = draw_board(ctx)
    return table.seq, html


def draw_board(ctx: dict[str, Any], request: HttpRequest | None = None) -> SafeString:
    """The board's HTML (``jinja2/games/_board.html``) from ``board_context``'s ``ctx``, in the active
    language; with ``request``, its forms carry the CSRF token (the page, not a push)."""
    if request is not None:
        ctx = {**ctx, "csrf_input": csrf_input(request), "csrf_token": get_token(request)}  # (the latter: ``dtl``)
    return draw("games/_board.html", ctx)


def render_flash(message: str, seq: int | None, language: str) -> str:
    with override(language):
        return render_to_string("games/_flash.html", {"message": message, "seq": seq, "oob": True})
