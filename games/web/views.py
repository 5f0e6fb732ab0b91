"""Thin HTTP adapters: the lobby, private tables by code, the table page, «Revancha», the record download,
a finished game's replay, the players' profiles, the rules, and the tournaments (their list, a tournament's
page, registering and withdrawing)."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db.models import Exists, OuterRef
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts import ledger, social
from accounts.models import Profile
from games.engine.levels import NORMAL
from games.engine.presets import CLASICA, MOST_PLAYERS, PLAYERS, PRESETS
from games.live import capacity
from games.models import (
    BOT_LEVEL_CHOICES,
    PRESET_LABELS,
    SCHEDULE_LABELS,
    STAKES,
    Analysis,
    Seat,
    Table,
    Tournament,
    rules_of,
)
from games.read import analysis as analysis_read
from games.read import board, live_pages, online, profiles
from games.read import tournaments as tournament_pages
from games.read.rules import rules_context
from games.study import analyses
from games.table import access, actions, history
from games.table.actions import practice
from games.tournaments import entries
from pocha_site import ratelimit


def _int(request: HttpRequest, name: str, default: int) -> int:
    """A posted whole number; -1 when it is not one (the action then says what is wrong)."""
    raw = request.POST.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        return -1


def _rules(request: HttpRequest) -> str:
    """The posted house rules as a rules key (``games.models.rules_key``), unchecked: the action checks it.
    ``rules``: the preset; for se dobla, ``schedule`` and the «en la frente» box ``forehead``."""
    preset = request.POST.get("rules", "clasica")
    if preset not in PRESETS:
        return ""  # refused by the action, as any other rules it does not know
    if preset != "se-dobla":
        return preset
    schedule = request.POST.get("schedule", "sencillas")
    return f"se-dobla:{schedule}" + (":frente" if request.POST.get("forehead") == "on" else "")


def _refuse(request: HttpRequest, error: actions.ActionError) -> None:
    messages.error(request, error.message(get_language() or "es"))


def open_tables(user_id: int | None) -> list[dict[str, object]]:
    # A rematch is for the people of the game it replays: never offered to the lobby.  A table that has
    # waited POCHA_WAITING_TTL for its players is being called off: not offered either (its due step may
    # still be on its way).
    waiting = Table.objects.filter(status=Table.Status.WAITING, is_public=True, rematch_of__isnull=True).exclude(
        fill_at__isnull=True, due_at__lte=timezone.now()
    )
    # Never a table where someone blocked either way sits: they may not sit there, nor see that person online.
    apart = social.blocked_ids(user_id) if user_id is not None else set()
    if apart:
        waiting = waiting.exclude(seats__user_id__in=apart)
    tables = list(waiting.order_by("-created_at")[:20])
    seats_by_table: dict[int, list[Seat]] = {}
    for seat in Seat.objects.filter(table__in=tables):
        seats_by_table.setdefault(seat.table_id, []).append(seat)
    rows = []
    for table in tables:
        seats = seats_by_table.get(table.pk, [])
        # Stakes are held as people sit: the pot is the stake times the seats taken.
        rows.append(
            {
                "table": table,
                "taken": len(seats),
                "names": [s.name for s in seats],
                "pot": table.stake * len(seats),
                "mine": any(s.user_id == user_id for s in seats),
            }
        )
    return rows


def home(request: HttpRequest) -> HttpResponse:
    context: dict[str, object] = {
        "sizes": list(range(3, MOST_PLAYERS + 1)),
        "stakes": STAKES,
        "bot_levels": BOT_LEVEL_CHOICES,
        "default_bot_level": NORMAL,
        "presets": [(preset, PRESET_LABELS[preset], PLAYERS[preset]) for preset in PRESETS],
        "schedules": list(SCHEDULE_LABELS.items()),
    }
    if request.user.is_authenticated:
        profile = Profile.objects.filter(user_id=request.user.pk).first()
        context["quick_size"] = profile.quick_size if profile else 4
        context["quick_stake"] = profile.quick_stake if profile else 0
        try:
            context["quick_rules"] = rules_of(profile.quick_rules) if profile else CLASICA
        except ValueError:
            context["quick_rules"] = CLASICA
        context["open_tables"] = open_tables(request.user.pk)
        # Who is around (the counts, the people they follow who are online, friends first) and the games anyone
        # may watch: drawn here, and again over the lobby's socket when someone followed comes or goes.
        context["lobby_people"] = online.lobby_people(request.user.pk)
        context["live_page"] = live_pages.LOBBY
        # A game they left stays here until it ends: the bot plays their seat, and they may look or take it back.
        # A tournament's table says so («Torneo: Copa, mano 1 de 2»).
        context["my_tables"] = tournament_pages.mark_tournament_tables(
            Table.objects.filter(
                seats__user_id=request.user.pk, status__in=[Table.Status.WAITING, Table.Status.PLAYING]
            )
            .annotate(i_left=Exists(Seat.objects.filter(table_id=OuterRef("pk"), user_id=request.user.pk, left=True)))
            .order_by("-created_at")[:5]
        )
    return render(request, "home.html", context)


@login_required
def lobby_tables(request: HttpRequest) -> HttpResponse:
    return render(request, "games/_open_tables.html", {"open_tables": open_tables(request.user.pk)})


@login_required
@require_POST
@capacity.refuse_when_full
def quick_play(request: HttpRequest) -> HttpResponse:
    try:
        table = actions.do_quick_play(
            request.user, _int(request, "size", 4), _int(request, "stake", 0), rules=_rules(request)
        )
    except actions.ActionError as error:
        _refuse(request, error)
        return redirect("home")
    return redirect("games:table", table_id=table.pk)


@login_required
@require_POST
@capacity.refuse_when_full
def create_table(request: HttpRequest) -> HttpResponse:
    try:
        table = actions.do_create_table(
            request.user, _int(request, "size", 4), public=True, stake=_int(request, "stake", 0), rules=_rules(request)
        )
    except actions.ActionError as error:
        _refuse(request, error)
        return redirect("home")
    return redirect("games:table", table_id=table.pk)


@login_required
@require_POST
@capacity.refuse_when_full
def create_private_table(request: HttpRequest) -> HttpResponse:
    try:
        table = actions.do_create_private_table(
            request.user,
            _int(request, "size", 4),
            _int(request, "stake", 0),
            bots_allowed=request.POST.get("bots") == "on",
            bot_level=request.POST.get("bot_level", NORMAL),
            rules=_rules(request),
        )
    except actions.ActionError as error:
        _refuse(request, error)
        return redirect("home")
    return redirect("games:table", table_id=table.pk)


def _code_limit_idents(request: HttpRequest) -> list[str]:
    return [f"user:{request.user.pk}", f"addr:{ratelimit.client_address(request)}"]


def _find_by_code(request: HttpRequest, raw: object) -> Table:
    """The waiting private table with this code; ActionError (and one more counted failure) otherwise."""
    idents = _code_limit_idents(request)
    if ratelimit.blocked("code", idents, settings.POCHA_CODE_ATTEMPTS):
        raise actions.ActionError(
            "code_rate", _("Demasiados códigos equivocados seguidos. Espera un minuto y vuelve a probar.")
        )
    code = access.normalize_code(raw)
    table = (
        None
        if code is None
        else (Table.objects.filter(code=code, status=Table.Status.WAITING, is_public=False).first())
    )
    if table is not None:
        return table
    ratelimit.hit("code", idents)
    if code is None:
        raise actions.ActionError("code_malformed", _("Un código de mesa son cinco letras, como «KDMTR»."))
    if Table.objects.filter(code=code, is_public=False).exists():
        raise actions.ActionError(
            "code_expired", _("Ese código ya no sirve: la partida ha empezado o se ha cancelado.")
        )
    raise actions.ActionError(
        "code_unknown", _("No hay ninguna mesa esperando con el código %(code)s.") % {"code": code}
    )


@login_required
@require_POST
def join_by_code(request: HttpRequest) -> HttpResponse:
    """Typed code: take a seat at that private table."""
    try:
        table = _find_by_code(request, request.POST.get("code"))
        if not Seat.objects.filter(table=table, user_id=request.user.pk).exists():
            actions.do_take_seat(table.pk, request.user, code=table.code)
    except actions.ActionError as error:
        _refuse(request, error)
        return redirect("home")
    return redirect("games:table", table_id=table.pk)


@login_required
def private_link(request: HttpRequest, code: str) -> HttpResponse:
    """The share link: who is at the table and what it stakes, and a button to sit (sitting moves chips,
    so it is never done by merely opening a link)."""
    try:
        table = _find_by_code(request, code)
    except actions.ActionError as error:
        _refuse(request, error)
        return redirect("home")
    if Seat.objects.filter(table=table, user_id=request.user.pk).exists():
        return redirect("games:table", table_id=table.pk)
    seats = list(Seat.objects.filter(table=table))
    return render(
        request,
        "games/join.html",
        {
            "table": table,
            "seats": seats,
            "host": next((s.name for s in seats if s.position == 0), ""),
            "free": table.size - len(seats),
            "chips": ledger.balance(request.user.pk),
        },
    )


@login_required
@require_POST
def take_seat(request: HttpRequest, table_id: int) -> HttpResponse:
    code = access.normalize_code(request.POST.get("code"))
    try:
        original = Table.objects.filter(pk=table_id).values_list("rematch_of_id", flat=True).first()
        if original is not None:  # a rematch: sitting is accepting it (it starts when everyone is in)
            actions.do_accept_rematch(original, request.user)
        else:
            actions.do_take_seat(table_id, request.user, code=code)
    except actions.ActionError as error:
        _refuse(request, error)
        if error.code in ("unknown_table", "code_expired", "live_elsewhere", "blocked"):
            return _go(request, "home")  # (the lobby lists the table they are playing at)
    return _go(request, "games:table", table_id=table_id)


def _go(request: HttpRequest, to: str, anchor: str = "", **kwargs: object) -> HttpResponse:
    """Redirect (to ``#anchor`` on the page, if given); for an htmx request (a form drawn over the socket, whose
    CSRF token travels in the page's ``hx-headers``), the same as ``HX-Redirect`` so the browser loads the
    page itself."""
    response = redirect(to, **kwargs)
    if anchor:
        response["Location"] += f"#{anchor}"
    if request.headers.get("HX-Request") == "true":
        location = response["Location"]
        response = HttpResponse(status=204)
        response["HX-Redirect"] = location
    return response


@login_required
@require_POST
def rematch_offer(request: HttpRequest, table_id: int) -> HttpResponse:
    """«Revancha» / «Aceptar la revancha» on a finished table: propose it, or take a seat at the one
    proposed, then go to it."""
    try:
        new = actions.do_offer_rematch(table_id, request.user)
    except actions.ActionError as error:
        if error.code == "already_seated":  # a second click: they are in already
            new = Table.objects.filter(rematch_of_id=table_id).first()
            if new is not None:
                return _go(request, "games:table", table_id=new.pk)
        _refuse(request, error)
        if error.code == "unknown_table":
            return _go(request, "home")
        return _go(request, "games:table", table_id=table_id)
    return _go(request, "games:table", table_id=new.pk)


@login_required
@require_POST
def rematch_decline(request: HttpRequest, table_id: int) -> HttpResponse:
    """«No, gracias» to a finished table's rematch: back to the lobby."""
    try:
        actions.do_decline_rematch(table_id, request.user)
    except actions.ActionError as error:
        _refuse(request, error)
        if error.code == "unknown_table":
            return _go(request, "home")
        return _go(request, "games:table", table_id=table_id)
    return _go(request, "home")


def _visible_table(request: HttpRequest, table_id: int) -> tuple[Table, list[Seat]]:
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        raise Http404
    seats = list(Seat.objects.filter(table=table))
    if not access.can_view(table, request.user, seats=seats):
        raise Http404  # a private table is, to anyone else, a table that does not exist
    if access.hidden_by_block(table, request.user, seats):
        raise Http404  # and a live one where someone blocked either way sits, to the other
    return table, seats


def _secret(request: HttpRequest, table: Table, seats: list[Seat], error: actions.ActionError) -> HttpResponse:
    """A tournament's deals still being played at another table (``access.deals_secret``): why not, with the way
    to the tournament's page and, for a person seated at the table, back to it (403)."""
    tournament = Tournament.objects.filter(pk=table.tournament_id).only("pk", "name").first()
    context = {
        "message": error.message(get_language() or "es"),
        "tournament": tournament,
        "table": table if access.player_seat(seats, request.user) is not None else None,
    }
    return render(request, "games/deals_secret.html", context, status=403)


@login_required
def table_page(request: HttpRequest, table_id: int) -> HttpResponse:
    table, seats = _visible_table(request, table_id)
    if not access.may_watch(table, request.user, seats):  # a tournament's table: its cards are played elsewhere too
        return _secret(request, table, seats, access.watch_error())
    language = get_language() or "es"
    ctx = board.board_context(table, seats, board.Viewer(request.user.pk, language))
    ctx["oob"] = False
    ctx["board"] = board.draw_board(ctx, request)
    return render(request, "games/table.html", ctx)


@login_required
def record_download(request: HttpRequest, table_id: int) -> HttpResponse:
    table, seats = _visible_table(request, table_id)
    if table.status != Table.Status.FINISHED or table.is_practice:
        raise Http404  # the record holds every hand: only once the game is over (a practice hand has none)
    if access.deals_secret(table):  # and, at a tournament's table, once every table has played them
        return _secret(request, table, seats, access.deals_secret_error())
    record = history.record(table, log=history.read_log(table, seats))
    if record is None:
        raise Http404
    response = HttpResponse(json.dumps(record, ensure_ascii=False, indent=1), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="la-pocha-mesa-{table.pk}.json"'
    return response


@login_required
def replay(request: HttpRequest, table_id: int) -> HttpResponse:
    """A finished game, step by step, every hand shown: built from its record, like the download."""
    table, seats = _visible_table(request, table_id)
    if table.status != Table.Status.FINISHED or table.is_practice:
        raise Http404  # every hand is in it: only once the game is over (a practice hand has no replay)
    if access.deals_secret(table):  # and, at a tournament's table, once every table has played them
        return _secret(request, table, seats, access.deals_secret_error())
    record = history.record(table, log=history.read_log(table, seats))
    if record is None:
        raise Http404
    user_ids = [s.user_id for s in seats if s.user_id is not None]
    usernames = {u.pk: u.get_username() for u in get_user_model().objects.filter(pk__in=user_ids)}
    language = get_language() or "es"
    ctx = profiles.replay_context(table, record, seats, usernames, language)
    ctx["analysis"] = _analysis_section(request, table, seats, ctx, language)
    mine = access.player_seat(seats, request.user)
    playable = practice.practice_rounds(table) if mine is not None and not table.is_practice else 0
    for row, entry in zip(ctx["summary"], record["rounds"]):
        row["can_practice"] = row["number"] <= playable and bool(entry["hands"][mine.position] if mine else False)
    ctx["can_practice"] = playable > 0
    ctx["replay_data"]["practice_rounds"] = [row["number"] for row in ctx["summary"] if row["can_practice"]]
    return render(request, "games/replay.html", ctx)


def _analysis_section(
    request: HttpRequest, table: Table, seats: list[Seat], ctx: dict[str, Any], language: str
) -> dict[str, Any]:
    """The replay page's analysis: none yet (and whether this viewer may ask), waiting or running (its place
    and progress), failed, or done (``games.read.analysis``; the script's part goes with the replay's data)."""
    found = Analysis.objects.filter(table=table).first()
    section: dict[str, Any] = {"can_request": analyses.can_request(table, request.user, seats)}
    if found is None:
        section["state"] = "none"
    elif found.status == Analysis.Status.DONE:
        rounds = ctx["replay_data"]["rounds"]
        names = list(ctx["replay_data"]["players"])
        section.update(analysis_read.analysis_context(found, names, [r["totals"] for r in rounds], language))
        # The analysis counts the record's rounds from 1; the page calls each by its number in the schedule
        # (a tournament's deals: the record's second round of [5, 15] is round 15).
        numbers = [r["number"] for r in rounds]
        for row in section["rounds"]:
            row["number"] = numbers[row["number"] - 1] if 0 < row["number"] <= len(numbers) else row["number"]
        for mistake in section["mistakes"]:
            mistake["round"] = (
                numbers[mistake["round"] - 1] if 0 < mistake["round"] <= len(numbers) else mistake["round"]
            )
        ctx["replay_data"]["analysis"] = section["script"]
    elif found.status == Analysis.Status.FAILED:
        section["state"] = "failed"
    else:
        section["state"] = "pending"
        section["progress"] = analyses.status_of(found)
    return section


@login_required
@require_POST
def analyse(request: HttpRequest, table_id: int) -> HttpResponse:
    """«Analizar la partida»: queue the analysis (or find the one kept) and show it on the replay page."""
    try:
        analyses.do_request(table_id, request.user)
    except actions.ActionError as error:
        _refuse(request, error)
        if error.code == "unknown_table":
            return _go(request, "home")
        if error.code in ("not_finished", "deals_secret"):
            return _go(request, "games:table", table_id=table_id)
    return _go(request, "games:replay", anchor="analisis", table_id=table_id)


@login_required
def analysis_status(request: HttpRequest, table_id: int) -> HttpResponse:
    """The analysis's progress, for the replay page to poll: its place in the queue or the rounds done; once
    it is done (or failed), a full reload of the page, which then shows it."""
    table, seats = _visible_table(request, table_id)
    if access.deals_secret(table):
        return _secret(request, table, seats, access.deals_secret_error())
    found = Analysis.objects.filter(table=table).first()
    if found is None:
        raise Http404
    if not found.pending:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return render(request, "games/_analysis_progress.html", {"table": table, "progress": analyses.status_of(found)})


@login_required
@require_POST
def play_again(request: HttpRequest, table_id: int) -> HttpResponse:
    """«Juega esta mano»: a practice table for one round of a finished game, with its cards, against bots."""
    try:
        new = practice.do_play_again(request.user, table_id, _int(request, "round", -1))
    except actions.ActionError as error:
        _refuse(request, error)
        if error.code == "unknown_table":
            return _go(request, "home")
        if error.code == "live_elsewhere":
            return _go(request, "home")
        if error.code == "deals_secret":  # (its replay is not there yet either)
            return _go(request, "games:table", table_id=table_id)
        return _go(request, "games:replay", table_id=table_id)
    return _go(request, "games:table", table_id=new.pk)


def rules(request: HttpRequest) -> HttpResponse:
    """The classic rules in short, for anyone (each section has an anchor the table links to: ``#subasta``)."""
    return render(request, "games/rules.html", rules_context())


@login_required
def player_profile(request: HttpRequest, name: str) -> HttpResponse:
    player = profiles.find_player(name)
    if player is None:
        raise Http404
    if player.get_username() != name:
        return redirect("games:player", name=player.get_username())
    return render(request, "games/profile.html", profiles.profile_context(player, request.user, timezone.now()))


# -- tournaments -------------------------------------------------------------------------------


def tournaments(request: HttpRequest) -> HttpResponse:
    """«Torneos»: those taking registrations, being played, and the last ones finished (for anyone)."""
    return render(request, "games/tournaments.html", tournament_pages.list_context())


def tournament(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """A tournament's page (for anyone, like the rankings): its live parts are drawn again over its socket."""
    rows = tournament_pages.read_tournament(tournament_id)
    if rows is None:
        raise Http404
    viewer_id = request.user.pk if request.user.is_authenticated else None
    return render(request, "games/tournament.html", tournament_pages.detail_context(rows, viewer_id))


@login_required
@require_POST
def tournament_register(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """«Inscribirme»: a place in the tournament, the entry fee paid (from the client's own address, which keeps
    people of one address at different tables: ``pocha_site.proxy`` has made it the client's)."""
    try:
        registration = entries.register(request.user, tournament_id, request.META.get("REMOTE_ADDR") or None)
    except actions.ActionError as error:
        _refuse(request, error)
        if error.code == "unknown_tournament":
            return _go(request, "games:tournaments")
        return _go(request, "games:tournament", tournament_id=tournament_id)
    messages.success(request, _("Te has inscrito en «%(name)s».") % {"name": registration.tournament.name})
    return _go(request, "games:tournament", tournament_id=tournament_id)


@login_required
@require_POST
def tournament_withdraw(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """«Retirarme»: leave the tournament before it starts; the entry fee comes back."""
    try:
        entries.withdraw(request.user, tournament_id)
    except actions.ActionError as error:
        _refuse(request, error)
        if error.code == "unknown_tournament":
            return _go(request, "games:tournaments")
        return _go(request, "games:tournament", tournament_id=tournament_id)
    messages.success(request, _("Te has retirado del torneo."))
    return _go(request, "games:tournament", tournament_id=tournament_id)
