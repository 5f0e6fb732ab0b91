"""Thin HTTP adapters: the lobby, the table page and the record download."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language
from django.views.decorators.http import require_POST

from games import actions, selectors
from games.engine import export_record
from games.models import Seat, Table


def _size(request: HttpRequest) -> int:
    try:
        return int(request.POST.get("size", "4"))
    except ValueError:
        return 0


def open_tables(user_id: int | None) -> list[dict[str, object]]:
    tables = (Table.objects.filter(status=Table.Status.WAITING, is_public=True)
              .order_by("-created_at")[:20])
    rows = []
    seats_by_table: dict[int, list[Seat]] = {}
    for seat in Seat.objects.filter(table__in=tables):
        seats_by_table.setdefault(seat.table_id, []).append(seat)
    for table in tables:
        seats = seats_by_table.get(table.pk, [])
        rows.append({"table": table, "taken": len(seats), "names": [s.name for s in seats],
                     "mine": any(s.user_id == user_id for s in seats)})
    return rows


def home(request: HttpRequest) -> HttpResponse:
    context: dict[str, object] = {"sizes": [3, 4, 5, 6]}
    if request.user.is_authenticated:
        context["open_tables"] = open_tables(request.user.pk)
        context["my_tables"] = (Table.objects.filter(seats__user_id=request.user.pk,
                                                     status__in=[Table.Status.WAITING, Table.Status.PLAYING])
                                .order_by("-created_at")[:5])
    return render(request, "home.html", context)


@login_required
def lobby_tables(request: HttpRequest) -> HttpResponse:
    return render(request, "games/_open_tables.html", {"open_tables": open_tables(request.user.pk)})


@login_required
@require_POST
def quick_play(request: HttpRequest) -> HttpResponse:
    try:
        table = actions.do_quick_play(request.user, _size(request))
    except actions.ActionError as error:
        messages.error(request, error.message(get_language() or "es"))
        return redirect("home")
    return redirect("games:table", table_id=table.pk)


@login_required
@require_POST
def create_table(request: HttpRequest) -> HttpResponse:
    try:
        table = actions.do_create_table(request.user, _size(request), public=True)
    except actions.ActionError as error:
        messages.error(request, error.message(get_language() or "es"))
        return redirect("home")
    return redirect("games:table", table_id=table.pk)


@login_required
@require_POST
def take_seat(request: HttpRequest, table_id: int) -> HttpResponse:
    try:
        actions.do_take_seat(table_id, request.user)
    except actions.ActionError as error:
        messages.error(request, error.message(get_language() or "es"))
        if error.code == "unknown_table":
            return redirect("home")
    return redirect("games:table", table_id=table_id)


@login_required
def table_page(request: HttpRequest, table_id: int) -> HttpResponse:
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        raise Http404
    seats = list(Seat.objects.filter(table=table))
    language = get_language() or "es"
    ctx = selectors.board_context(table, seats, selectors.Viewer(request.user.pk, language))
    ctx["oob"] = False
    return render(request, "games/table.html", ctx)


@login_required
def record_download(request: HttpRequest, table_id: int) -> HttpResponse:
    table = Table.objects.filter(pk=table_id).first()
    if table is None or table.status != Table.Status.FINISHED:
        raise Http404  # the record holds every hand: only once the game is over
    game = selectors.game_state(table)
    assert game is not None
    response = HttpResponse(json.dumps(export_record(game), ensure_ascii=False, indent=1),
                            content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="la-pocha-mesa-{table.pk}.json"'
    return response
