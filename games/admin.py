"""Moderation of games: see tables, who sits where, every round's deal and every move of the game's log.

Every game row is read-only here: a table changes only through ``games.table.actions`` (a size or a status
set by hand would leave the engine, the pot and the pages disagreeing).  The one thing a moderator
does to a table is «Cancelar la partida» (``games.cancel_table``; 403 without it), with a reason:
``actions.do_admin_cancel`` gives every stake back once, closes the table and redraws every seat's page.

A tournament game's deals stay secret here too while any of its tables still plays them
(``access.deals_secret``; staff may be playing the tournament): its tables' rounds, moves and fair-play flags
are left out of every list, and no table shows its seed (from which its deals are drawn).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html_join
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from accounts.admin import CancelForm, ModerationForms
from accounts.moderation import ModerationError
from games.models import RULES_KEYS, Analysis, Flag, Move, Registration, Round, Seat, Table, Tournament, rules_of
from games.table import access, actions
from games.tournaments import runner


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

    def get_queryset(self, request: HttpRequest) -> QuerySet[Round]:
        return super().get_queryset(request).exclude(access.deals_secret_rows())


def _links(table: Table) -> list[tuple[str, str]]:
    page = reverse("games:table", args=[table.pk])
    links = [(page, gettext("Página de la mesa"))]
    links.append((f"{reverse('admin:games_move_changelist')}?table__id__exact={table.pk}", gettext("Jugadas")))
    if table.status == Table.Status.FINISHED and not access.deals_secret(table):
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
    exclude = ("state", "seed")  # (the seed: a tournament's deals are drawn from it)
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

    def get_queryset(self, request: HttpRequest) -> QuerySet[Round]:
        return super().get_queryset(request).exclude(access.deals_secret_rows())


@admin.register(Move)
class MoveAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """The game's log, move by move (a table's moves: its page's «Jugadas» link)."""

    list_display = ("table", "seq", "round", "seat", "kind", "value", "by_clock", "by_bot", "made_at")
    list_filter = ("kind", "by_clock", "by_bot")
    list_select_related = ("table",)
    search_fields = ("=table__id",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Move]:
        return super().get_queryset(request).exclude(access.deals_secret_rows())


@admin.register(Analysis)
class AnalysisAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """The games' analyses and their queue: who asked, when, how far the worker is (a failed one says why)."""

    list_display = ("table", "status", "requested_by", "requested_at", "rounds_done", "rounds_total", "finished_at")
    list_filter = ("status",)
    list_select_related = ("table", "requested_by")
    search_fields = ("=table__id", "requested_by__username")
    exclude = ("rounds",)


class TournamentForm(forms.ModelForm):
    """A tournament as staff set it up: every choice checked against the rules it is played by."""

    class Meta:
        model = Tournament
        fields = (
            "name",
            "format",
            "rules",
            "size",
            "places",
            "deals",
            "games",
            "entry_fee",
            "prizes",
            "registration_opens_at",
            "starts_at",
            "repeat_days",
            "late_minutes",
            "bid_seconds",
            "card_seconds",
            "flag_points",
        )
        widgets = {"rules": forms.Select(choices=[(key, key) for key in RULES_KEYS])}

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        rules, size, places = data.get("rules"), data.get("size"), data.get("places")
        if rules and size:
            try:
                rules_of(rules).check_players(size)
            except ValueError:
                self.add_error("size", gettext("Esas reglas no se juegan con %(size)s jugadores.") % {"size": size})
        if size and places is not None and (places < 2 * size or places % size):
            self.add_error(
                "places", gettext("Las plazas son un múltiplo de los jugadores por mesa (dos mesas al menos).")
            )
        try:
            Tournament(prizes=data.get("prizes") or "").prize_percentages()
        except ValueError:
            self.add_error(
                "prizes", gettext("Los premios son porcentajes separados por comas que suman 100 como mucho.")
            )
        opens, starts = data.get("registration_opens_at"), data.get("starts_at")
        if opens and starts and opens >= starts:
            self.add_error("starts_at", gettext("El torneo empieza después de abrir la inscripción."))
        if data.get("format") == Tournament.Format.DUPLICATE and data.get("games", 1) != 1:
            self.add_error("games", gettext("Un torneo duplicado es de una partida."))
        return data


class RegistrationInline(ReadOnlyMixin, admin.TabularInline):
    model = Registration
    extra = 0
    fields = readonly_fields = ("user", "registered_at", "address", "paid", "refunded", "place", "score", "prize")


class FlagInline(ReadOnlyMixin, admin.TabularInline):
    model = Flag
    extra = 0
    fields = readonly_fields = ("user", "table", "deal", "seat", "points", "par", "reviewed")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Flag]:
        return super().get_queryset(request).exclude(access.deals_secret_rows())


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    """Tournaments: staff create them (or a repeating one creates the next); until the start its settings may
    change; «Cancelar el torneo» refunds every entry, once."""

    form = TournamentForm
    list_display = ("name", "format", "rules", "size", "starts_at", "status", "entry_fee", "registrations_count")
    list_filter = ("status", "format", "rules")
    search_fields = ("name",)
    inlines = (RegistrationInline, FlagInline)
    actions = ("cancel_tournaments",)

    @admin.display(description=_("inscritos"))
    def registrations_count(self, obj: Tournament) -> int:
        return obj.registrations.count()

    def get_readonly_fields(self, request: HttpRequest, obj: Tournament | None = None) -> Any:
        if obj is not None and obj.status != Tournament.Status.SCHEDULED:
            return TournamentForm.Meta.fields
        return ()

    def has_delete_permission(self, request: HttpRequest, obj: Tournament | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Tournament, form: Any, change: bool) -> None:
        if not change:
            obj.created_by = request.user  # type: ignore[assignment]
        super().save_model(request, obj, form, change)

    @admin.action(description=_("Cancelar el torneo (devuelve las inscripciones)"))
    def cancel_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        for tournament in queryset:
            try:
                runner.cancel(tournament.pk, gettext("Cancelado por la organización."))
            except runner.CannotCancel:
                self.message_user(
                    request,
                    gettext("«%(name)s» ya ha empezado: no se puede cancelar.") % {"name": tournament.name},
                    level="error",
                )


@admin.register(Flag)
class FlagAdmin(admin.ModelAdmin):
    """Fair play: duplicate results far from the deal's par, for staff to look at."""

    list_display = ("tournament", "user", "table", "deal", "seat", "points", "par", "reviewed")
    list_filter = ("reviewed",)
    list_select_related = ("tournament", "user")
    fields = ("tournament", "user", "table", "deal", "seat", "points", "par", "reviewed")
    readonly_fields = ("tournament", "user", "table", "deal", "seat", "points", "par")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Flag]:
        return super().get_queryset(request).exclude(access.deals_secret_rows())

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
