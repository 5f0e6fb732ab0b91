"""Moderation of games: see tables, who sits where, every round's deal and every move of the game's log.

Every game row is read-only here: a table changes only through ``games.table.actions`` (a size or a status
set by hand would leave the engine, the pot and the pages disagreeing).  The one thing a moderator
does to a table is «Cancelar la partida» (``games.cancel_table``; 403 without it), with a reason:
``actions.do_admin_cancel`` gives every stake back once, closes the table and redraws every seat's page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html_join
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from accounts.admin import CancelForm, ModerationForms
from accounts.moderation import ModerationError
from games.models import Analysis, Move, Round, Seat, Table
from games.table import actions


class ReadOnlyMixin:
    def has_add_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


class SeatInline(ReadOnlyMixin, admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("position", "user", "is_bot", "name", "away", "left", "timeouts", "sockets", "winnings", "place")
    readonly_fields = fields


class RoundInline(ReadOnlyMixin, admin.TabularInline):
    model = Round
    extra = 0
    fields = readonly_fields = ("number", "dealer", "trump_card", "result")


def _links(table: Table) -> list[tuple[str, str]]:
    page = reverse("games:table", args=[table.pk])
    links = [(page, gettext("Página de la mesa"))]
    links.append((f"{reverse('admin:games_move_changelist')}?table__id__exact={table.pk}", gettext("Jugadas")))
    if table.status == Table.Status.FINISHED:
        links.append((f"{page}repeticion/", gettext("Repetición")))
        links.append((reverse("games:record", args=[table.pk]), gettext("Descargar la partida (JSON)")))
    return links


@admin.register(Table)
class TableAdmin(ReadOnlyMixin, ModerationForms):
    list_display = (
        "id",
        "size",
        "status",
        "stake",
        "is_public",
        "is_quick",
        "round_number",
        "turn_seat",
        "seq",
        "created_at",
        "links",
    )
    list_filter = ("status", "size", "stake", "is_public", "is_quick")
    search_fields = ("seats__name",)
    exclude = ("state",)
    readonly_fields = ("links",)
    inlines = [SeatInline, RoundInline]
    actions = ["cancel_tables"]
    change_form_template = "admin/games/table_change_form.html"

    @admin.display(description=_("enlaces"))
    def links(self, table: Table) -> str:
        return format_html_join(" · ", '<a href="{}">{}</a>', _links(table))

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("games.cancel_table"))

    def _cancel(
        self, request: HttpRequest, tables: Iterable[Table], action: str | None = None, back: str = ""
    ) -> HttpResponse | None:
        def perform(table: Table, data: dict[str, Any]) -> str:
            try:
                actions.do_admin_cancel(table.pk, request.user, data["reason"])
            except actions.ActionError as error:  # said as the moderation forms say every refusal
                raise ModerationError(error.code, error.message(get_language() or "es")) from None
            return gettext("Mesa %(id)s cancelada; las apuestas se han devuelto.") % {"id": table.pk}

        return self.moderate(
            request,
            tables,
            permitted=self.has_cancel_permission(request),
            form_class=CancelForm,
            title=gettext("Cancelar la partida"),
            intro=gettext("La partida se da por terminada sin ganador y se avisa a todos los asientos."),
            submit=gettext("Cancelar la partida"),
            perform=perform,
            action=action,
            back=back,
        )

    @admin.action(description=_("Cancelar la partida"), permissions=["cancel"])
    def cancel_tables(self, request: HttpRequest, queryset: QuerySet[Table]) -> HttpResponse | None:
        return self._cancel(request, queryset, action="cancel_tables")

    def get_urls(self) -> list[Any]:
        def cancel_one(request: HttpRequest, object_id: str) -> HttpResponse:
            table = self.object_or_404(request, object_id)
            back = self.change_url(table)
            return self._cancel(request, [table], back=back) or HttpResponseRedirect(back)

        info = self.model._meta.app_label, self.model._meta.model_name
        return [
            path("<path:object_id>/cancelar/", self.admin_site.admin_view(cancel_one), name="%s_%s_cancel" % info),
            *super().get_urls(),
        ]

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = dict(extra_context or {})
        table = self.get_object(request, object_id)
        if table is not None:
            extra["table_links"] = _links(table)
            if self.has_cancel_permission(request) and table.status in (Table.Status.WAITING, Table.Status.PLAYING):
                extra["cancel_url"] = reverse("admin:games_table_cancel", args=[table.pk])
        return super().change_view(request, object_id, form_url, extra)


@admin.register(Round)
class RoundAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ("__str__", "table", "number", "dealer", "trump_card")
    list_filter = ("table__size",)
    list_select_related = ("table",)


@admin.register(Move)
class MoveAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """The game's log, move by move (a table's moves: its page's «Jugadas» link)."""

    list_display = ("table", "seq", "round", "seat", "kind", "value", "by_clock", "by_bot", "made_at")
    list_filter = ("kind", "by_clock", "by_bot")
    list_select_related = ("table",)
    search_fields = ("=table__id",)


@admin.register(Analysis)
class AnalysisAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """The games' analyses and their queue: who asked, when, how far the worker is (a failed one says why)."""

    list_display = ("table", "status", "requested_by", "requested_at", "rounds_done", "rounds_total", "finished_at")
    list_filter = ("status",)
    list_select_related = ("table", "requested_by")
    search_fields = ("=table__id", "requested_by__username")
    exclude = ("rounds",)
