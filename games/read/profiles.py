"""Read paths for finished games: a player's profile, and a finished game's replay.

A profile counts every finished game the player sat in, private tables included: it is their own
record.  Only the list of recent games hides the rows of private tables the viewer may not see
(``access.can_view``, the same check as the table page), and the chips come from the rankings'
per-period totals (finished public quick games), as on the ranking pages.

A replay is built from the game record (``games.table.history.record``, made from the game's log), stepped through the engine once here to learn what the record leaves
implicit: who played each card, who won each trick, and each round's tricks and points.  The page
embeds the record unchanged; ``static/js/replay.js`` walks it step by step.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Q, QuerySet, Sum
from django.utils.formats import date_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts import social
from games.engine import Card, ChooseTrump, GameState, Suit, sort_hand
from games.engine.cards import SUITS
from games.engine.presets import CLASICA, Rules
from games.models import ROUND_KIND_LABELS, Analysis, Seat, Table
from games.read.board import FORFEIT_TAGS, card_ctx, suit_mark, suit_name
from games.read.tournaments import player_tournaments
from games.table import access
from leaderboard import skill
from leaderboard.models import PeriodScore
from leaderboard.scores import period_start

#: How many finished games a profile lists.
RECENT_GAMES = 20


# -- profiles --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BestPosition:
    position: int
    period: str  # PeriodScore.Period
    start: date

    @property
    def period_label(self) -> str:
        if self.period == PeriodScore.Period.WEEK:
            return _("en la clasificación de la semana del %(day)s") % {"day": _day(self.start)}
        if self.period == PeriodScore.Period.MONTH:
            return _("en la clasificación del mes de %(month)s") % {"month": _month(self.start)}
        return _("en la clasificación de siempre")


def _day(day: date) -> str:
    return str(date_format(day, "DATE_FORMAT"))


def _month(day: date) -> str:
    return str(date_format(day, "YEAR_MONTH_FORMAT"))


def find_player(name: str) -> Any | None:
    """The account called ``name`` (as typed in the address, then ignoring case if that is unambiguous)."""
    users = get_user_model().objects
    user = users.filter(username=name).first()
    if user is None:
        matches = list(users.filter(username__iexact=name)[:2])
        user = matches[0] if len(matches) == 1 else None
    return user


def _finished_seats(user_id: int) -> QuerySet[Seat]:
    """The person's seats in finished games (a practice hand is none: it counts for nothing); a tournament's table
    once every table of its game has finished (``access.deals_secret``: its points tell of the deals others are
    still playing)."""
    return Seat.objects.filter(
        user_id=user_id, table__status=Table.Status.FINISHED, table__practice_of__isnull=True
    ).exclude(access.deals_secret_rows())


def game_stats(user_id: int) -> dict[str, Any]:
    """Games played and won, exact-bid rate and points per round, over every finished game (one query)."""
    row = _finished_seats(user_id).aggregate(
        games=Count("pk"),
        wins=Count("pk", filter=Q(place=1)),
        rounds=Sum("rounds_bid"),
        exact=Sum("exact_bids"),
        points=Sum("final_total"),
    )
    rounds = row["rounds"] or 0
    return {
        "games": row["games"],
        "wins": row["wins"],
        "rounds": rounds,
        "exact": row["exact"] or 0,
        # None (shown as a dash) rather than a made-up 0 before the first finished round
        "exact_rate": (row["exact"] or 0) / rounds if rounds else None,
        "exact_percent": round(100 * (row["exact"] or 0) / rounds, 1) if rounds else None,
        "points_per_round": (row["points"] or 0) / rounds if rounds else None,
    }


def chip_stats(user_id: int, now: datetime) -> dict[str, Any]:
    """Net chips this week, this month and all time (0 without a row), and the best position reached in a ranking
    the person came out of ahead: a period whose net is above 0.  The rankings place everyone who played by their
    net chips, so whoever played alone in a period, or lost least, is «1.º» there with a loss: no place is
    claimed from such a period."""
    current = {period: period_start(period, now) for period in PeriodScore.Period.values}
    wanted = Q()
    for period, start in current.items():
        wanted |= Q(period=period, start=start)
    nets = {period: 0 for period in current}
    for period, start, net in PeriodScore.objects.filter(wanted, user_id=user_id).values_list("period", "start", "net"):
        if current[period] == start:
            nets[period] = net
    best_row = (
        PeriodScore.objects.filter(user_id=user_id, best_position__isnull=False, net__gt=0)
        .order_by("best_position", "-start")
        .values_list("best_position", "period", "start")
        .first()
    )
    best = BestPosition(*best_row) if best_row is not None else None
    return {
        "week": nets[PeriodScore.Period.WEEK],
        "month": nets[PeriodScore.Period.MONTH],
        "all": nets[PeriodScore.Period.ALL],
        "best": best,
    }


def _visible_to(viewer: Any) -> Q:
    """Tables ``viewer`` may see, as a filter on rows with a ``table`` (seats, analyses: ``access.can_view`` for
    finished tables)."""
    if viewer is None or not viewer.is_authenticated:
        return Q(pk__in=[])
    if viewer.is_staff:
        return Q()
    return (
        Q(table__is_public=True)
        | Q(table__created_by_id=viewer.pk)
        | Q(table__in=Seat.objects.filter(user_id=viewer.pk).values("table_id"))
    )


def recent_games(user_id: int, viewer: Any, limit: int = RECENT_GAMES) -> list[dict[str, Any]]:
    """The player's last finished games that ``viewer`` may see: two queries whatever the count."""
    mine = list(
        _finished_seats(user_id)
        .filter(_visible_to(viewer))
        .select_related("table")
        .order_by("-table__finished_at", "-table_id")[:limit]
    )
    by_table: dict[int, list[Seat]] = {}
    for seat in Seat.objects.filter(table_id__in=[s.table_id for s in mine]).select_related("user"):
        by_table.setdefault(seat.table_id, []).append(seat)
    analysed = {a.table_id: a for a in Analysis.objects.filter(table_id__in=[s.table_id for s in mine]).defer("rounds")}
    viewer_id = viewer.pk if viewer is not None and viewer.is_authenticated else None
    rows = []
    for seat in mine:
        table = seat.table
        seats = sorted(by_table.get(table.pk, []), key=lambda s: s.position)
        if not access.can_view(table, viewer, seats=seats):  # the SQL filter above, checked the one way
            continue
        rows.append(
            {
                "table": table,
                "when": table.finished_at,
                "players": [
                    {
                        "name": s.name,
                        "username": s.user.get_username() if s.user else None,
                        "is_bot": s.is_bot,
                        "is_self": s.pk == seat.pk,
                    }
                    for s in seats
                ],
                "place": seat.place,
                "size": table.size,
                "points": seat.final_total,
                "stake": table.stake,
                "chips": seat.winnings - table.stake if table.stake else None,
                "is_private": not table.is_public,
                "left": seat.left,
                "analysis": _game_analysis(analysed.get(table.pk), seat.position),
                # «Analizar la partida» is for those who played it
                "viewer_played": viewer_id is not None and any(s.user_id == viewer_id and not s.is_bot for s in seats),
            }
        )
    return rows


def _game_analysis(analysis: Analysis | None, position: int) -> dict[str, Any] | None:
    """A game's analysis as the list shows it: its state and, once done, this seat's accuracy."""
    if analysis is None:
        return None
    accuracy = None
    if analysis.status == Analysis.Status.DONE and analysis.summary:
        figures = next((f for f in analysis.summary.get("seats", []) if f.get("seat") == position), {})
        accuracy = figures.get("accuracy")
    return {"status": analysis.status, "accuracy": None if accuracy is None else round(accuracy)}


#: How many of a player's last analysed games their accuracy is taken over.
ANALYSED_GAMES = 10


def analysis_stats(user_id: int, viewer: Any) -> dict[str, Any]:
    """The player's accuracy and average points lost per decision over their last analysed games that ``viewer``
    may see (a private table's analysis is for those who may see its replay: ``_visible_to``; a tournament
    game's, once all its tables have finished): each game's accuracy weighed by its decisions, the points lost
    over every decision (one query)."""
    games = 0
    decisions = 0
    weighted = 0.0
    lost = 0.0
    rows = (
        Analysis.objects.filter(
            status=Analysis.Status.DONE,
            table__seats__user_id=user_id,
            table__seats__is_bot=False,
            table__practice_of__isnull=True,
        )
        .filter(_visible_to(viewer))
        .exclude(access.deals_secret_rows())  # a tournament's game with a table still playing its deals
        .order_by("-finished_at", "-pk")
        .values_list("summary", "table__seats__position")[:ANALYSED_GAMES]
    )
    for summary, position in rows:
        figures = next((f for f in (summary or {}).get("seats", []) if f.get("seat") == position), None)
        if not figures or not figures.get("decisions") or figures.get("accuracy") is None:
            continue
        games += 1
        decisions += figures["decisions"]
        weighted += figures["accuracy"] * figures["decisions"]
        lost += figures.get("loss", 0.0)
    if not decisions:
        return {"games": games, "accuracy": None, "average_loss": None}
    return {"games": games, "accuracy": weighted / decisions, "average_loss": lost / decisions}


def profile_context(player: Any, viewer: Any, now: datetime) -> dict[str, Any]:
    is_self = viewer is not None and viewer.is_authenticated and viewer.pk == player.pk
    signed_in = viewer is not None and viewer.is_authenticated
    return {
        "player": player,
        "is_self": is_self,
        # how the viewer stands with them (follows and blocks, both ways): «Seguir», «Bloquear»… on another's
        "relation": social.relation(viewer.pk, player.pk) if signed_in and not is_self else None,
        "stats": game_stats(player.pk),
        "net": chip_stats(player.pk, now),
        "recent": recent_games(player.pk, viewer),
        "analysed": analysis_stats(player.pk, viewer),
        # «Nivel» at each rule set they have rated games in (public quick and tournament games), with its last change
        "levels": skill.player_levels(player.pk),
        "ranked_games": skill.RANKED_GAMES,
        # «Torneos»: the tournaments they registered for, their place among the people, score and prize
        "tournaments": player_tournaments(player.pk),
    }


# -- replays ---------------------------------------------------------------------------------


def _signed(points: int) -> str:
    return f"+{points}" if points > 0 else str(points).replace("-", "−")


def replay_timeline(record: dict[str, Any]) -> tuple[list[dict[str, Any]], GameState]:
    """What the record leaves implicit, round by round: the seat of every bid and card, every trick's
    winner, and the round's result.  The record is replayed with every rule checked.  A game of some rounds of
    the schedule (a tournament's deals: the record's ``rounds_played``) is replayed as those rounds, each dealt
    as that round of the schedule (its ``number``, e.g. 5 and 15)."""
    rules = Rules.from_json(record["rules"]) if "rules" in record else CLASICA
    if record.get("rounds_played") is not None:
        game = GameState.of_rounds(rules, record["players"], record["first_dealer"], record["rounds_played"])
    else:
        game = GameState(record["players"], record["first_dealer"], rules=rules)
    rounds = []
    for entry in record["rounds"]:
        game.deal(
            [[Card.parse(c) for c in hand] for hand in entry["hands"]],
            Card.parse(entry["trump_card"]) if entry["trump_card"] else None,
        )
        bidders = list(game.order)
        chosen = entry.get("trump_suit")
        blind_bids = entry.get("blind_bids")
        if blind_bids is not None:  # subastados: the blind bids, the winner's trump, then the contract
            for amount in blind_bids:
                game.bid(amount)
            game.apply(ChooseTrump(Suit.parse(chosen)))
        for amount in entry["bids"]:
            game.bid(amount)
        if chosen is not None and game.trump_suit is None:
            game.apply(ChooseTrump(Suit.parse(chosen)))
        play_seats: list[int] = []
        winners: list[int] = []
        for text in entry["plays"]:
            assert game.turn is not None
            play_seats.append(game.turn)
            game.play(Card.parse(text))
            if not game.trick:  # the trick is complete
                assert game.last_trick_winner is not None
                winners.append(game.last_trick_winner)
        result = game.results[-1]
        rounds.append(
            {
                "number": result.number,
                "phase": result.phase.value,
                "cards": result.cards,
                "dealer": result.dealer,
                "resting": game.resting,
                "bidders": bidders,
                "trump_suit": result.trump_suit.value,
                "multiplier": result.multiplier,
                "auction_winner": result.auction_winner,
                "play_seats": play_seats,
                "trick_winners": winners,
                "kind": entry.get("kind", "normal"),
                "blind_bids": blind_bids,
                "bids": list(result.bids),
                "tricks": list(result.tricks),
                "points": list(result.points),
                "totals": list(game.totals),
            }
        )
    return rounds, game


def _js_strings() -> dict[str, str]:
    """The sentences the replay script composes, worded here so they are translated with the site."""
    return {
        "deal": _("Ronda %(n)s · reparte %(dealer)s. Triunfo: %(trump)s."),
        "deal_auction": _("Ronda %(n)s · reparte %(dealer)s. Subasta: el triunfo se elige después de pedir."),
        "bid": _("Ronda %(n)s · %(name)s pide %(bid)s."),
        "trump": _("Ronda %(n)s · %(name)s elige el triunfo: %(suit)s."),
        "play": _("Ronda %(n)s · baza %(t)s: %(name)s, %(card)s."),
        "trick_won": _("Gana la baza %(name)s."),
        "end": _("Fin de la ronda %(n)s: %(points)s."),
        "game_over": _("Fin de la partida: gana %(names)s con %(total)s puntos."),
        "and": _(" y "),
        "position": _("Paso %(i)s de %(n)s"),
        "trick_title": _("Baza %(t)s de %(of)s"),
        "trick_won_by": _("para %(name)s"),
        "pending_trump": _("se elige después de pedir"),
        "empty_hand": _("sin cartas"),
        "resting": _("descansa"),
    }


def replay_context(
    table: Table, record: dict[str, Any], seats: list[Seat], usernames: dict[int, str], language: str
) -> dict[str, Any]:
    rounds, game = replay_timeline(record)
    total_rounds = len(game.schedule)
    names = list(record["players"])
    phase_names = {"subida": _("subida"), "subasta": _("subasta"), "bajada": _("bajada")}
    by_pos = {s.position: s for s in seats}
    codes: set[str] = set()
    for entry in record["rounds"]:
        codes.update(c for hand in entry["hands"] for c in hand)
        if entry["trump_card"]:
            codes.add(entry["trump_card"])
    # in the board's display order (by suit, strongest first): the script sorts each hand by it
    cards = [card_ctx(card, language) for card in sort_hand(Card.parse(code) for code in codes)]
    for r in rounds:
        if r["kind"] in ROUND_KIND_LABELS:  # a round the house rules add: named by its kind
            r["title"] = ngettext(
                "Ronda %(n)s de %(total)s · %(kind)s · %(cards)s carta",
                "Ronda %(n)s de %(total)s · %(kind)s · %(cards)s cartas",
                r["cards"],
            ) % {"n": r["number"], "total": total_rounds, "kind": ROUND_KIND_LABELS[r["kind"]], "cards": r["cards"]}
            continue
        r["title"] = ngettext(
            "Ronda %(n)s de %(total)s · %(phase)s · %(cards)s carta",
            "Ronda %(n)s de %(total)s · %(phase)s · %(cards)s cartas",
            r["cards"],
        ) % {"n": r["number"], "total": total_rounds, "phase": phase_names[r["phase"]], "cards": r["cards"]}
    summary = []
    for entry, r in zip(record["rounds"], rounds):
        trump_card = card_ctx(Card.parse(entry["trump_card"]), language) if entry["trump_card"] else None
        suit = Suit.parse(r["trump_suit"])
        summary.append(
            {
                "number": r["number"],
                "phase": str(ROUND_KIND_LABELS.get(r["kind"], phase_names[r["phase"]])),
                "cards": r["cards"],
                "multiplier": r["multiplier"],
                "blind_bids": r["blind_bids"],
                "trump_card": trump_card,
                "trump": {"code": suit.value, "name": suit_name(suit, language), "mark": suit_mark(suit)},
                "auction_winner": names[r["auction_winner"]] if r["auction_winner"] is not None else None,
                "dealer": names[r["dealer"]],
                "cells": [
                    {
                        "bid": r["bids"][p],
                        "tricks": r["tricks"][p],
                        "points": r["points"][p],
                        "signed": _signed(r["points"][p]),
                        "resting": r["resting"] == p,
                    }
                    for p in range(len(names))
                ],
            }
        )
    places = [1 + sum(1 for other in game.totals if other > mine) for mine in game.totals]
    if all(p in by_pos and by_pos[p].place is not None for p in range(len(names))):
        places = [int(by_pos[p].place or 0) for p in range(len(names))]  # as settled: a forfeit ranks last
    players = []
    for p, name in enumerate(names):
        seat = by_pos.get(p)
        forfeit = seat.forfeit if seat is not None else ""
        players.append(
            {
                "position": p,
                "name": name,
                "total": game.totals[p],
                "place": places[p],
                "winner": places[p] == 1,
                "forfeit": _(FORFEIT_TAGS[forfeit]) if forfeit in FORFEIT_TAGS else "",
                "is_bot": bool(seat and seat.is_bot),
                "username": usernames.get(seat.user_id) if seat is not None and seat.user_id else None,
            }
        )
    data = {
        "players": names,
        "rounds": rounds,
        # how many rounds the game plays (the script's «Fin de la partida»): some of the schedule's, or all of it
        "total_rounds": len(game.rounds_played) if game.rounds_played is not None else total_rounds,
        "cards": {c["code"]: c["name"] for c in cards},
        "card_order": [c["code"] for c in cards],
        "suits": {s.value: {"name": suit_name(s, language)} for s in SUITS},
        "strings": _js_strings(),
    }
    return {
        "table": table,
        "record": record,
        "replay_data": data,
        "cards": cards,
        "summary": summary,
        "suit_marks": [{"code": s.value, "mark": suit_mark(s)} for s in SUITS],
        "players": players,
        "ranking": sorted(players, key=lambda p: (p["place"], p["position"])),
        "complete": game.is_over,
    }
