"""The table's board: one viewer's view of a table as template context, and its drawing.

Nothing here renders from the full game state: the context is built from the engine's seat view, so a
card that is not the viewer's cannot reach their page.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.template.backends.utils import csrf_input
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext, override

from accounts import ledger
from games.engine import Bid, Card, ChooseTrump, GameState, Phase, Play, SeatView, Suit, seat_view
from games.engine.cards import FRENCH_SUITS, SUITS
from games.engine.presets import Rules
from games.engine.schedule import RoundKind
from games.engine.state import RoundResult
from games.models import BOT_LEVEL_LABELS, ROUND_KIND_LABELS, Seat, Table, rules_name
from games.read import fragments, talk
from games.read import seats as seat_fragments
from games.read.rematch import rematch_context
from games.table import access, history, rule_words
from games.table import snapshot as snapshots
from games.table.snapshot import Snapshot, game_state, load_snapshot, spectator_count
from pocha_site.jinja2 import draw, translated


@lru_cache(maxsize=8)
def suit_mark(suit: Suit) -> SafeString:
    """The suit's own picture from its deck's sprite (``games/_suit.html``), as the cards show it: the
    board marks a trump suit with it, never with a typed symbol (the French suits with the French deck's
    drawings).  Decorative: the suit's name is beside it or in its element's label."""
    drawn = render_to_string("games/_suit.html", {"suit": suit.value, "fr": FRENCH_IDS.get(suit)})
    return mark_safe(drawn.strip())  # noqa: S308


#: The French suits as the French sprite (``static/img/francesa.svg``) and cards.css name them: spelt out,
#: so that no class or symbol differs from a Spanish one only by case ("C" tréboles, "c" copas).
FRENCH_IDS: dict[Suit, str] = {
    Suit.PICAS: "picas",
    Suit.CORAZONES: "corazones",
    Suit.DIAMANTES: "diamantes",
    Suit.TREBOLES: "treboles",
}


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
        "name": card_name(card, language),
    }
    if card.is_french:  # the index's text (2..10, J, Q, K, A), and the suit for the French sprite
        ctx["rank"] = str(card)[: -len(card.suit.value)]
        ctx["fr"] = FRENCH_IDS[card.suit]
    ctx["face"] = card_face(ctx)
    return ctx


_faces: dict[str, SafeString] = {}


def card_face(card: dict[str, Any]) -> SafeString:
    """The card's picture (``games/_card.html``), drawn once per card and process: the same 40 (or 52
    French) pictures are on every board, and drawing them each time would be much of a board's drawing."""
    face = _faces.get(card["code"])
    if face is None:
        face = _faces[card["code"]] = mark_safe(render_to_string("games/_card.html", {"card": card}).strip())  # noqa: S308
    return face


@lru_cache(maxsize=64)
def kind_name(kind: str, language: str) -> str:
    """A round kind's name (``ROUND_KIND_LABELS``: lazy texts) in ``language``, looked up once per kind and
    language (as ``bot_level_name``)."""
    with override(language):
        return str(ROUND_KIND_LABELS.get(kind, ""))


@lru_cache(maxsize=64)
def bot_level_name(level: str, language: str) -> str:
    """``Table.get_bot_level_display()`` in ``language``, looked up once per level and language: as a lazy
    text it would be translated again for every viewer at every move, a large share of a board's context."""
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
    results: tuple[RoundResult, ...] | None = None,
    tournament: tuple[str, int] | None = None,
) -> dict[str, Any]:
    """Everything the table page shows this viewer, and nothing it must not.  ``spectators``: the count
    if the caller read it already (``load_snapshot``), else it is read here.  ``scores``: False when the
    board leaves the scoreboard out (``render_snapshot``): ``results`` then holds the last round's only.
    ``results``: every finished round's result (``Snapshot.results``); if not given, read here for the table's
    own game, or taken from ``game`` when one is given.  ``tournament``: a tournament's table's
    ``Snapshot.tournament`` if the caller read it already, else it is read here."""
    my_seat = next((s for s in seats if viewer.user_id is not None and s.user_id == viewer.user_id), None)
    ctx = _table_context(table, seats, my_seat, viewer, spectators)
    ctx["tournament"] = tournament_context(table, tournament)
    if game is None:  # the table's own (its state keeps the last round's result only: the others are read)
        game = game_state(table)
        if game is not None and scores and results is None:
            results = history.results(table.pk)
    if game is None:
        ctx.update(_waiting_context(table, seats, my_seat))
        return ctx
    view = seat_view(game, my_seat.position if my_seat else None)
    ctx["view"] = view
    ctx.update(_game_context(view, {s.position: s for s in seats}, viewer.language, scores, results))
    if table.status == Table.Status.CANCELLED:
        # Called off midway: the seats and the scores so far stay; nobody's turn, no hand, no winner.
        ctx.update(
            bid_options=[],
            trump_options=[],
            my_turn=False,
            over=False,
            ranking=[],
            nobody_won=False,
            turn_name=None,
            bids_line="",
            hand=[],
            hand_count=0,
        )
        for player in ctx["players"]:
            player["is_turn"] = False
    _add_clock(ctx, table)
    if table.status == Table.Status.FINISHED and not table.is_practice and not table.is_tournament:
        # «Revancha»: the same players and options (a tournament's table has none: «Clasificación del torneo»)
        ctx["rematch"] = rematch_context(table, seats, viewer.user_id)
    # «Analizar la partida», at the end, for those who played it (a person's seat; not a practice hand)
    ctx["can_analyse"] = (
        table.status == Table.Status.FINISHED and not table.is_practice and my_seat is not None and not my_seat.is_bot
    )
    # A tournament's deals still being played at another table of the game: no replay, record or analysis yet
    ctx["deals_secret"] = (
        table.status == Table.Status.FINISHED and table.tournament_id is not None and access.deals_secret(table)
    )
    if table.is_practice:
        ctx["practice"] = practice_context(table, view, ctx.get("over", False))
    ctx["i_am_away"] = my_seat is not None and table.status == Table.Status.PLAYING and _bot_plays_for(my_seat)
    ctx["i_forfeited"] = my_seat is not None and bool(my_seat.forfeit) and table.status == Table.Status.PLAYING
    ctx["bot_notice"] = (
        bot_summary(my_seat.bot_log, viewer.language)
        if my_seat is not None and my_seat.bot_log and not ctx["i_am_away"]
        else ""
    )
    return ctx


def tournament_context(table: Table, tag: tuple[str, int] | None) -> dict[str, Any] | None:
    """A tournament's table: which tournament (``tag``: its name and games, read here when not given), which of
    its games, and which of the game's deals is being played («Mano 1 de 2»); None for any other table."""
    if table.tournament_id is None:
        return None
    if tag is None:
        tag = snapshots.tournament_tag(table.tournament_id) or ("", 1)
    name, games = tag
    deals = [int(n) for n in table.deals or []]
    return {
        "id": table.tournament_id,
        "name": name,
        "game": table.tournament_game or 1,
        "games": games,
        "deal": deals.index(table.round_number) + 1 if table.round_number in deals else 0,
        "deals": len(deals),
    }


def practice_context(table: Table, view: SeatView, over: bool) -> dict[str, Any]:
    """A practice hand («Juega esta mano»): which round of which game, and at its end the person's result now,
    in the game, and difícil's on the same deal in the same seat (None while the worker plays it)."""
    seat = int(table.practice_seat or 0)
    number = int(table.practice_round or 0)
    ctx: dict[str, Any] = {"source_id": table.practice_of_id, "round": number, "seat": seat, "over": over}
    if not over:
        return ctx

    def line(bid: Any, tricks: Any, points: Any) -> dict[str, Any]:
        return {"bid": bid, "tricks": tricks, "points": points}

    now = view.results[-1] if view.results else None
    ctx["now"] = line(now.bids[seat], now.tricks[seat], now.points[seat]) if now is not None else None
    then = next((r for r in history.results(int(table.practice_of_id or 0)) if r.number == number), None)
    ctx["then"] = line(then.bids[seat], then.tricks[seat], then.points[seat]) if then is not None else None
    baseline = table.practice_baseline or {}
    ctx["dificil"] = line(baseline["bid"], baseline["tricks"], baseline["points"]) if "points" in baseline else None
    ctx["dificil_failed"] = "error" in baseline
    return ctx


def _bot_plays_for(seat: Seat) -> bool:
    """Whether the bot is playing for the viewer's own seat, as they see it: when they left the game, or
    are away while connected — never merely after one turn the clock played for them.  Away with no socket
    counted, they are opening this page: its socket, arriving, gives them the seat back
    (``games.live.presence.refresh``), so their first board already shows it as theirs."""
    return seat.left or (seat.away and seat.sockets > 0)


def _table_context(
    table: Table, seats: list[Seat], my_seat: Seat | None, viewer: Viewer, spectators: int | None
) -> dict[str, Any]:
    """What the board shows of the table itself, in every status."""
    lang = viewer.language
    return {
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
        "house_rules": house_rules(table.game_rules, lang),
        "code": table.code if table.status == Table.Status.WAITING and my_seat is not None else None,
        "i_left": my_seat is not None and my_seat.left,
        "table_texts": table_texts,  # a callable: only the page (not each push) asks for it
        "hold_ms": int(settings.POCHA_TRICK_HOLD * 1000),
        # people watching who have no seat here (each of their sockets is a Watcher row)
        "spectators": spectator_count(table.pk) if spectators is None else spectators,
        # table talk: only people seated here speak; the page draws the phrases once (a callable)
        "phrases": (lambda: talk.phrases_context(lang)) if my_seat is not None and not my_seat.is_bot else [],
        **_cancelled_context(table),
    }


#: Why a table was called off, as its page says it (``Table.CancelReason``).
CANCEL_SENTENCES = {
    Table.CancelReason.MODERATOR.value: gettext_noop("La ha cancelado un moderador."),
    Table.CancelReason.HOST.value: gettext_noop("La ha cancelado quien creó la mesa."),
    Table.CancelReason.NOBODY_CAME.value: gettext_noop("No llegaron jugadores a tiempo."),
    Table.CancelReason.EVERYONE_LEFT.value: gettext_noop("Se levantaron todos los jugadores antes de empezar."),
}


def _cancelled_context(table: Table) -> dict[str, Any]:
    """A cancelled table's why: the reason in a sentence and the moderator's own words (``Motivo: …``)."""
    if table.status != Table.Status.CANCELLED:
        return {"cancel_words": "", "cancel_note": ""}
    words = CANCEL_SENTENCES.get(table.cancel_reason)
    return {"cancel_words": _(words) if words else "", "cancel_note": table.cancel_note}


def _waiting_context(table: Table, seats: list[Seat], my_seat: Seat | None) -> dict[str, Any]:
    """A table before its first deal: who sits where, and when bots fill the empty seats."""
    by_pos = {s.position: s for s in seats}
    anchor = my_seat.position if my_seat is not None else 0
    return {
        "n": table.size,
        "seats": [
            {
                "position": p,
                "name": by_pos[p].name if p in by_pos else None,
                "level": by_pos[p].level if p in by_pos else None,
                "is_bot": by_pos[p].is_bot if p in by_pos else False,
                "is_me": my_seat is not None and my_seat.position == p,
                "slot": (p - anchor) % table.size,
                # the viewer is here, looking (their socket may not be counted yet)
                "offline": p in by_pos and not by_pos[p].is_bot and by_pos[p].sockets == 0 and by_pos[p] != my_seat,
            }
            for p in range(table.size)
        ],
        "fill_in": (
            max(0, int((table.fill_at - timezone.now()).total_seconds()))
            if table.fill_at and table.status == Table.Status.WAITING
            else None
        ),
    }


def _add_clock(ctx: dict[str, Any], table: Table) -> None:
    """The turn clock's seconds, on the seat whose turn it is; once the game is over, nobody is away or
    offline any more."""
    ctx["deadline_in"] = (
        max(0, int((table.turn_deadline - timezone.now()).total_seconds()))
        if table.turn_deadline and table.status == Table.Status.PLAYING
        else None
    )
    ctx["deadline_ts"] = table.turn_deadline.timestamp() if ctx["deadline_in"] is not None else None
    for player in ctx["players"]:
        player["clock"] = ctx["deadline_in"] if player["is_turn"] else None
        if table.status != Table.Status.PLAYING:
            player["away"] = player["offline"] = False


#: Up to this many bids, the notice says each («pidió 1, 0 y 2»); past it, how many rounds the bot bid in.
BIDS_LISTED = 3


def bot_summary(log: list[dict[str, Any]], lang: str) -> str:
    """What the bot did for the viewer while they were gone (``Seat.bot_log``, kept only for the turns it played
    while they had no page open or had left the game), in one short sentence: «Mientras no estabas, el bot pidió
    2 y jugó 3 cartas por ti»; after a long absence (a game left early) the rounds it bid in are counted rather
    than listed: «el bot pidió en 18 rondas, eligió el triunfo 2 veces y jugó 60 cartas por ti»."""
    bids = [str(entry["bid"]) for entry in log if "bid" in entry]
    trumps = [Suit(entry["trump"]) for entry in log if "trump" in entry]
    plays = sum(1 for entry in log if "play" in entry)
    parts = []
    if len(bids) > BIDS_LISTED:
        parts.append(ngettext("pidió en %(n)s ronda", "pidió en %(n)s rondas", len(bids)) % {"n": len(bids)})
    elif bids:
        parts.append(_("pidió %(bids)s") % {"bids": ", ".join(bids)})
    if len(trumps) > 1:
        parts.append(
            ngettext("eligió el triunfo %(n)s vez", "eligió el triunfo %(n)s veces", len(trumps)) % {"n": len(trumps)}
        )
    elif trumps:
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


def _game_context(
    view: SeatView,
    by_pos: dict[int, Seat],
    lang: str,
    scores: bool = True,
    every_result: tuple[RoundResult, ...] | None = None,
) -> dict[str, Any]:
    """A game's board from one seat's view: the players, the hand, what may be done now, the felt, the
    scoreboard and, at the end, the ranking."""

    def name(seat: int | None) -> str:
        return by_pos[seat].name if seat is not None and seat in by_pos else "—"

    legal = set(view.legal)
    hand = _hand(view, legal, lang)
    felt = _felt(view, name, lang)
    results = _results(view, name, lang, scores, every_result)
    ranking = _ranking(view, by_pos, name)
    return {
        "n": view.players,
        **_round_kind(view, name, lang),
        "bids_line": _bids_line(view, lang),
        **felt,
        "hand_count": len(hand) + view.hidden,
        # indias: the viewer's own card, face down (never named to them until it is played)
        "hidden_cards": view.hidden,
        "players": _players(view, by_pos, name, lang),
        "hand": hand,
        "bid_options": _bid_options(view, legal),
        "trump_options": _trump_options(view, legal, lang),
        "results": results,
        "last_result": results[-1] if results and _result_still_up(view) else None,
        # the round just ended on this board (its last trick is still on the felt): the page shows the
        # result once that trick has been held up
        "round_just_over": view.phase in (Phase.ROUND_OVER, Phase.GAME_OVER) and felt["trick_done"],
        "ranking": ranking,
        # every seat forfeited: nobody wins, and the pot went to the house (``lifecycle.on_finish``)
        "nobody_won": bool(ranking) and not any(r["winner"] for r in ranking),
        "trump_card": card_ctx(view.trump_card, lang) if view.trump_card else None,
        "trump_suit": {
            "name": suit_name(view.trump_suit, lang),
            "mark": suit_mark(view.trump_suit),
            "code": view.trump_suit.value,
        }
        if view.trump_suit
        else None,
        "multiplier": view.multiplier,
        # an auction round: the board says how the auction is won, with a link to the rules
        "auction": view.round_phase is not None and view.round_phase.value == "subasta",
        "round_phase": translated(lang, ROUND_PHASE_NAMES[view.round_phase.value])
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


Namer = Callable[[int | None], str]


@lru_cache(maxsize=256)
def house_rules(rules: Rules, lang: str) -> dict[str, Any]:
    """The table's rules as its page names them (``games.models.rules_name``), and the preset's page: looked
    up once per rules and language (read-only: it is every board's)."""
    with override(lang):
        return fragments.Frozen(preset=rules.preset, name=rules_name(rules), clasica=rules.is_clasica)


def _round_kind(view: SeatView, name: Namer, lang: str) -> dict[str, Any]:
    """What a round of the house rules adds to the board: its kind's name, the tie-break's number, the
    subastados' blind bids (and whether they are being made), se dobla's ×2, an indias card to be played."""
    kind = view.kind
    blind = view.blind_bids
    blind_line = ""
    if blind is not None and any(b is not None for b in blind):
        made = [f"{name(p)} {b}" for p, b in enumerate(blind) if b is not None]
        blind_line = _("A ciegas: %(bids)s") % {"bids": ", ".join(made)}
    schedule = len(view.rules.schedule(view.players)) if not view.rules.is_clasica else view.rounds
    return {
        "kind": kind.value,
        "kind_name": kind_name(kind.value, lang),
        "tie_break": view.number - schedule if kind is RoundKind.DESEMPATE else 0,
        "blind_bidding": blind is not None and view.trump_suit is None and view.phase is Phase.BIDDING,
        "blind_line": blind_line,
        "doubles": view.number > 0 and view.rules.preset == "se-dobla" and view.cards >= 4,
        "plays_hidden": view.plays_hidden,
    }


def _players(view: SeatView, by_pos: dict[int, Seat], name: Namer, lang: str) -> list[dict[str, Any]]:
    """Each seat as the felt shows it (``games.read.seats.FIELDS``), placed from the viewer's side."""
    anchor = view.seat if view.seat is not None else 0
    blind = view.blind_bids or ()
    return [
        {
            "position": p,
            "slot": (p - anchor) % view.players,
            "name": name(p),
            # «Nivel» at the table's rules, kept on the seat when the game started (``lifecycle.show_levels``)
            "level": by_pos[p].level if p in by_pos else None,
            "is_bot": by_pos[p].is_bot if p in by_pos else False,
            "is_me": view.seat == p,
            "is_dealer": view.dealer == p,
            "is_resting": view.resting == p,
            "is_turn": view.turn == p,
            "bid": view.bids[p],
            "tricks": view.tricks[p] if view.resting != p else None,
            "total": view.totals[p],
            "hand_size": view.hand_sizes[p],
            "away": p in by_pos
            and not by_pos[p].is_bot
            and (_bot_plays_for(by_pos[p]) if view.seat == p else by_pos[p].away),
            "left": p in by_pos and by_pos[p].left,
            # the viewer's own seat is never shown offline to them: they are here, looking (the page's first
            # board is drawn before its socket is counted)
            "offline": p in by_pos and not by_pos[p].is_bot and by_pos[p].sockets == 0 and view.seat != p,
            "blind_bid": blind[p] if p < len(blind) else None,
        }
        for p in range(view.players)
    ]


#: Why a card of the hand cannot be played when the engine gives no reason of its own (translated when drawn).
NOT_YOUR_TURN = gettext_noop("Todavía no es tu turno.")
BIDS_FIRST = gettext_noop("Primero se pide: las cartas se juegan después.")


def _hand(view: SeatView, legal: set[Any], lang: str) -> list[dict[str, Any]]:
    """The viewer's cards, each with whether it may be played and, if not, why in words."""
    # why a card the engine gives no reason for cannot be played (one text for the whole hand)
    if not view.hand:
        waiting = ""
    elif view.phase is Phase.PLAYING and not view.my_turn:
        waiting = translated(lang, NOT_YOUR_TURN)
    elif view.phase in (Phase.BIDDING, Phase.CHOOSING_TRUMP):
        waiting = translated(lang, BIDS_FIRST)
    else:
        waiting = ""
    hand = []
    for card in view.hand:
        why = view.reasons.get(card)
        reason = rule_words.sentence(why, lang) if why is not None else waiting
        hand.append({**card_ctx(card, lang), "playable": Play(card) in legal, "reason": reason})
    return hand


def _bid_options(view: SeatView, legal: set[Any]) -> list[dict[str, Any]]:
    """«Pedir N» for every N of the round when it is the viewer's bid, the forbidden one explained."""
    if view.phase is not Phase.BIDDING or not view.my_turn:
        return []
    options = []
    for n in range(view.cards + 1):
        allowed = Bid(n) in legal
        reason = ""
        if not allowed and n == view.forbidden_bid:
            reason = _("Eres el último en cantar: la suma de los pedidos no puede ser %(n)s.") % {"n": view.cards}
        options.append({"n": n, "allowed": allowed, "reason": reason})
    return options


def _trump_options(view: SeatView, legal: set[Any], lang: str) -> list[dict[str, Any]]:
    """The suits the viewer may choose as trump, when it is their choice («Elige el triunfo»)."""
    if view.phase is not Phase.CHOOSING_TRUMP or not view.my_turn:
        return []
    return [
        {"code": s.value, "name": suit_name(s, lang), "mark": suit_mark(s)}
        for s in (FRENCH_SUITS if view.rules.preset == "bazas" else SUITS)
        if ChooseTrump(s) in legal
    ]


def _felt(view: SeatView, name: Namer, lang: str) -> dict[str, Any]:
    """The middle of the table: each seat's card in front of it — the trick being played, or the trick just
    completed (nobody has led since) with its winning card marked, which every page holds up before
    sweeping it — and «Última baza»."""
    trick = [{"seat": p.seat, "name": name(p.seat), "card": card_ctx(p.card, lang)} for p in view.trick]
    last_trick = [
        {"seat": p.seat, "name": name(p.seat), "card": card_ctx(p.card, lang), "won": p.seat == view.last_trick_winner}
        for p in view.last_trick
    ]
    anchor = view.seat if view.seat is not None else 0
    trick_done = not trick and bool(last_trick) and view.phase in (Phase.PLAYING, Phase.ROUND_OVER, Phase.GAME_OVER)
    played_tricks = sum(view.tricks)
    felt_cards = [
        {**t, "slot": (t["seat"] - anchor) % view.players, "won": bool(trick_done and t.get("won"))}
        for t in (last_trick if trick_done else trick)
    ]
    if not trick_done:  # indias: the cards not played yet, in front of their seats (the viewer's own face down)
        felt_cards += [
            {
                "seat": p.seat,
                "name": name(p.seat),
                "card": card_ctx(p.card, lang),
                "seen": True,
                "won": False,
                "slot": (p.seat - anchor) % view.players,
            }
            for p in view.seen
        ]
        if view.hidden and view.seat is not None:
            felt_cards.append({"seat": view.seat, "name": name(view.seat), "back": True, "won": False, "slot": 0})
    return {
        "trick_done": trick_done,
        "felt_cards": felt_cards,
        "trick_key": f"{view.number}-{played_tricks}",
        "trick_last": trick_done and played_tricks == view.cards,
        "trick": trick,
        "last_trick": last_trick,
        "last_trick_winner": name(view.last_trick_winner) if view.last_trick_winner is not None else None,
    }


def _results(
    view: SeatView, name: Namer, lang: str, scores: bool, every_result: tuple[RoundResult, ...] | None
) -> list[dict[str, Any]]:
    """Every round's result for the scoreboard (``every_result``); only the last one's (the seat view's,
    the one the table's state keeps) when the board leaves it out."""
    if not scores:
        shown = view.results[-1:]
    else:  # every round's, as given, else the game's own (a whole game's, drawn from the engine alone)
        shown = every_result if every_result is not None else view.results
    return [
        {
            "number": r.number,
            "phase": r.phase.value,
            "cards": r.cards,
            "multiplier": r.multiplier,
            "trump": suit_name(r.trump_suit, lang),
            "mark": suit_mark(r.trump_suit),
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
        for r in shown
    ]


def _result_still_up(view: SeatView) -> bool:
    """Whether the last round's result is on the board: from its last trick until the next deal (the round
    pause); with no pause configured, until the first card of the next round."""
    if view.phase is Phase.ROUND_OVER:
        return True
    return (
        settings.POCHA_ROUND_PAUSE <= 0
        and view.phase is not Phase.GAME_OVER
        and (view.phase is not Phase.PLAYING or not (view.trick or view.last_trick))
    )


#: The tag on a forfeited seat of the final ranking (``Seat.Forfeit``), translated when drawn.
FORFEIT_TAGS = {Seat.Forfeit.LEFT.value: gettext_noop("abandonó"), Seat.Forfeit.BOT.value: gettext_noop("jugó el bot")}
#: Why a forfeited seat is placed below a seat it outscored (beside its tag), translated when drawn.
FORFEIT_BEHIND = gettext_noop("queda detrás aunque sumó más puntos")


def _ranking(view: SeatView, by_pos: dict[int, Seat], name: Namer) -> list[dict[str, Any]]:
    """«Clasificación final»: the places the game was settled with (``Seat.place``: a tie shares its place,
    and a seat that forfeited comes after every other, tagged, and said to be placed behind when it scored
    more than a seat placed ahead of it), the winners and their chips.  A forfeited seat is never a winner:
    when every seat forfeited, nobody is (``lifecycle.on_finish``)."""
    if view.winners is None:
        return []
    if all(p in by_pos and by_pos[p].place is not None for p in range(view.players)):
        places = {p: int(by_pos[p].place or 0) for p in range(view.players)}
    else:  # (not settled: a board drawn from the engine alone) by total
        places = {p: 1 + sum(1 for other in view.totals if other > view.totals[p]) for p in range(view.players)}
    forfeits = {p: by_pos[p].forfeit if p in by_pos else "" for p in range(view.players)}
    played = [view.totals[p] for p in range(view.players) if not forfeits[p]]
    ranking = []
    for p in sorted(range(view.players), key=lambda p: (places[p], -view.totals[p], p)):
        forfeit = forfeits[p]
        ranking.append(
            {
                "place": places[p],
                "name": name(p),
                "total": view.totals[p],
                "winner": places[p] == 1 and not forfeit,
                "chips": by_pos[p].winnings if p in by_pos else 0,
                "forfeit": _(FORFEIT_TAGS[forfeit]) if forfeit in FORFEIT_TAGS else "",
                "forfeit_code": forfeit,
                "behind": _(FORFEIT_BEHIND) if forfeit and played and view.totals[p] > min(played) else "",
            }
        )
    return ranking


def _bids_line(view: SeatView, lang: str) -> str:
    """Bids against tricks: «Pedidas 5 de 8: faltan 3» (or «sobran», or «justas»)."""
    bids_made = [b for b in view.bids if b is not None]
    if not bids_made or view.phase not in (Phase.BIDDING, Phase.CHOOSING_TRUMP, Phase.PLAYING):
        return ""
    return _bids_sentence(sum(bids_made), view.cards, lang)


@lru_cache(maxsize=512)
def _bids_sentence(total: int, cards: int, lang: str) -> str:
    """``_bids_line``'s sentence, worded once per sum, round size and language (every viewer's board shows it)."""
    with override(lang):
        if total > cards:
            balance = ngettext("sobra %(n)s", "sobran %(n)s", total - cards) % {"n": total - cards}
        elif total < cards:
            balance = ngettext("falta %(n)s", "faltan %(n)s", cards - total) % {"n": cards - total}
        else:
            balance = _("justas")
        return _("Pedidas %(total)s de %(cards)s: %(balance)s") % {"total": total, "cards": cards, "balance": balance}


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


def render_snapshot(
    snapshot: Snapshot, user_id: int | None, language: str, shown_rounds: int | None = None
) -> tuple[int, str] | None:
    """This viewer's board fragments from ``snapshot`` with no database access, for a game in play (the
    per-move path: it may run on the event loop); None for any other status, whose board also shows the
    viewer's chips or the rematch (``render_board`` reads those).

    ``shown_rounds``: how many rounds' results the viewer's scoreboard shows already; if that is still
    right, the scoreboard (most of a late board's size and drawing) is left out and the page keeps its own."""
    drawn = draw_push(snapshot, user_id, language, shown_rounds)
    return None if drawn is None else (drawn.seq, drawn.html)


@dataclass(frozen=True)
class Push:
    """A board drawn for one socket (``draw_push``): its seq and HTML, and what its hand looks like
    (``hand``: the key the socket gives back as ``shown_hand`` with its next push)."""

    seq: int
    html: str
    hand: Hashable


def draw_push(
    snapshot: Snapshot,
    user_id: int | None,
    language: str,
    shown_rounds: int | None = None,
    shown_hand: Hashable | None = None,
) -> Push | None:
    """``render_snapshot`` for a socket that remembers what its page shows.  ``shown_hand``: the ``hand``
    of the last push this socket sent; if the hand would look the same (the same cards, each as playable
    and with the same reason, and the same seq on the playable ones), its section is left out and the page
    keeps its own.  Between two of a player's turns the hand does not change, and it is the largest part of
    a late board."""
    if snapshot.table.status != Table.Status.PLAYING:
        return None
    if snapshot.table.tournament_id is not None and snapshot.tournament is None:
        return None  # the tournament's name is to be read: drawn the slow way
    scores_unchanged = shown_rounds is not None and shown_rounds == rounds_done(snapshot)
    if not scores_unchanged and snapshot.results is None:
        return None  # the scoreboard is to be drawn, from results this snapshot does not carry: read them
    with override(language):
        ctx = board_context(
            snapshot.table,
            list(snapshot.seats),
            Viewer(user_id, language),
            snapshot.spectators,
            snapshot.game,
            scores=not scores_unchanged,
            results=snapshot.results,
            tournament=snapshot.tournament,
        )
        hand = hand_key(ctx.get("hand") or [], ctx.get("hand_count"), snapshot.seq, language)
        ctx["oob"] = True
        ctx["scores_unchanged"] = scores_unchanged
        ctx["hand_unchanged"] = shown_hand is not None and shown_hand == hand
        html = draw_board(ctx)
    return Push(snapshot.seq, html, hand)


def hand_key(hand: list[dict[str, Any]], count: Any, seq: int, language: str) -> Hashable:
    """Everything the hand's section shows (``jinja2/games/_board.html``, ``_hand_card.html``): two boards
    with the same key draw the same hand.  The seq is in it only while a card is playable (it is in the
    card's move); the section's own ``data-board-seq`` is not read by the page."""
    cards = tuple((c["code"], bool(c["playable"]), c["reason"]) for c in hand)
    playable = any(c[1] for c in cards)
    return (language, count or 0, cards, seq if playable else None)


def rounds_done(snapshot: Snapshot) -> int | None:
    """How many rounds' results the snapshot's scoreboard shows (None: no game yet)."""
    table = snapshot.table
    if table.status == Table.Status.WAITING or not table.round_number:
        return None
    return snapshots.rounds_done(table.phase, table.round_number)


def render_board(
    table_id: int, user_id: int | None, language: str, snapshot: Snapshot | None = None
) -> tuple[int, str] | None:
    """This viewer's board fragments at the table's current seq (or ``snapshot``'s), or None if the table
    is gone."""
    if snapshot is None:
        snapshot = load_snapshot(table_id)
        if snapshot is None:
            return None
    elif snapshot.results is None and snapshot.table.status != Table.Status.WAITING:
        snapshot = replace(snapshot, results=history.results(table_id))
    rendered = render_snapshot(snapshot, user_id, language)
    if rendered is not None:
        return rendered
    table = snapshot.table
    with override(language):
        ctx = board_context(
            table,
            list(snapshot.seats),
            Viewer(user_id, language),
            snapshot.spectators,
            results=snapshot.results,
            tournament=snapshot.tournament,
        )
        ctx["oob"] = True
        if user_id is not None and table.status != Table.Status.PLAYING:
            # Chips move when people sit, stand, start, finish or cancel: redraw the header's count then.
            ctx["header_chips"] = ledger.balance(user_id)
        html = draw_board(ctx)
    return table.seq, html


def draw_board(ctx: dict[str, Any], request: HttpRequest | None = None) -> SafeString:
    """The board's HTML (``jinja2/games/_board.html``) from ``board_context``'s ``ctx``, in the active
    language; with ``request``, its forms carry the CSRF token (the page, not a push)."""
    ctx = {**ctx, "seat": seat_fragments.seat, "hand_card": seat_fragments.hand_card, **fragments.HELPERS}
    if request is not None:
        ctx.update(csrf_input=csrf_input(request), csrf_token=get_token(request))  # (the latter: ``dtl``)
    return draw("games/_board.html", ctx)


def render_flash(message: str, seq: int | None, language: str) -> str:
    with override(language):
        return render_to_string("games/_flash.html", {"message": message, "seq": seq, "oob": True})
