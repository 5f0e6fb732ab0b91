"""Moderation of people and chips in the admin.

Chips: every account and movement, read-only (chips move only through the ledger; a correction is
an adjustment with its reason, here «Ajustar fichas», or ``manage.py adjust_chips USER AMOUNT
"reason"``).

People: Django's user admin plus «Suspender», «Levantar la suspensión» and «Ajustar fichas», both as
actions on the list and as buttons on a person's page.  Each asks for a reason on a page of its own,
needs its own permission (``accounts.suspend_user``, ``accounts.adjust_chips``; 403 without it) and
is written to the admin log with who, when and why (by ``accounts.moderation``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import PermissionDenied
from django.db.models import Model, OuterRef, QuerySet, Subquery
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts import moderation
from accounts.models import Account, Entry, Transaction


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_delete_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


@admin.register(Account)
class AccountAdmin(ReadOnly):
    list_display = ("id", "kind", "user", "table", "balance")
    list_filter = ("kind",)
    search_fields = ("user__username",)
    list_select_related = ("user",)


class EntryInline(admin.TabularInline):
    model = Entry
    extra = 0
    can_delete = False
    readonly_fields = ("account", "amount", "balance_after")

    def has_add_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


@admin.register(Transaction)
class TransactionAdmin(ReadOnly):
    list_display = ("id", "created_at", "kind", "key", "table", "note")
    list_filter = ("kind",)
    search_fields = ("key", "note", "entries__account__user__username")
    inlines = [EntryInline]


# -- the moderation forms, shared with the games admin --------------------------------------


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label=_("Motivo"),
        max_length=moderation.SUSPENSION_REASON_MAX,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=_("Queda en el registro de administración con tu nombre y la hora."),
    )


class SuspendForm(ReasonForm):
    reason = forms.CharField(
        label=_("Motivo"),
        max_length=moderation.SUSPENSION_REASON_MAX,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=_(
            "El jugador lo verá en todas las páginas mientras dure la suspensión; "
            "queda en el registro con tu nombre y la hora."
        ),
    )


class CancelForm(ReasonForm):
    reason = forms.CharField(
        label=_("Motivo"),
        max_length=moderation.ADJUSTMENT_REASON_MAX,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text=_(
            "Las apuestas vuelven a quien las puso (las de los bots, a la casa); "
            "queda en el registro con tu nombre y la hora."
        ),
    )


class AdjustForm(forms.Form):
    amount = forms.IntegerField(label=_("Fichas"), help_text=_("Positivo para dar fichas, negativo para quitarlas."))
    reason = forms.CharField(
        label=_("Motivo"),
        max_length=moderation.ADJUSTMENT_REASON_MAX,
        help_text=_("Se guarda como nota del movimiento en la cartera del jugador y en el registro."),
    )

    def clean_amount(self) -> int:
        amount = self.cleaned_data["amount"]
        if amount == 0:
            raise forms.ValidationError(_("La cantidad no puede ser 0."))
        return int(amount)


#: One moderation step on one object: returns the success message, or raises an error with ``message``.
Perform = Callable[[Any, dict[str, Any]], str]


class ModerationForms(admin.ModelAdmin):
    """Admin actions and per-object buttons that ask for a reason on a page of their own, check a
    permission of their own (PermissionDenied otherwise) and do one step per chosen object."""

    moderation_template = "admin/moderation_form.html"

    def moderate(
        self,
        request: HttpRequest,
        targets: Iterable[Model],
        *,
        permitted: bool,
        form_class: type[forms.Form],
        title: str,
        intro: str,
        submit: str,
        perform: Perform,
        action: str | None = None,
        back: str = "",
    ) -> HttpResponse | None:
        """The reason form for ``targets`` (again with its errors if invalid), or, once confirmed, the step
        done on each and None (the caller redirects)."""
        if not permitted:
            raise PermissionDenied
        targets = list(targets)
        if request.method == "POST" and request.POST.get("confirm") == "yes":
            form = form_class(request.POST)
            if form.is_valid():
                for target in targets:
                    try:
                        self.message_user(request, perform(target, form.cleaned_data), messages.SUCCESS)
                    except moderation.ModerationError as error:
                        self.message_user(request, f"{target}: {error.message}", messages.ERROR)
                return None
        else:
            form = form_class()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": title,
            "intro": intro,
            "submit": submit,
            "form": form,
            "targets": targets,
            "action": action,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "back": back or reverse(f"admin:{self.model._meta.app_label}_{self.model._meta.model_name}_changelist"),
        }
        return TemplateResponse(request, self.moderation_template, context)

    def object_or_404(self, request: HttpRequest, object_id: str) -> Model:
        obj = self.get_object(request, object_id)
        if obj is None:
            raise Http404
        return obj

    def change_url(self, obj: Model) -> str:
        return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])


# -- people --------------------------------------------------------------------------------

User = get_user_model()


class SuspendedFilter(admin.SimpleListFilter):
    title = _("suspensión")
    parameter_name = "suspendido"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [("si", _("Suspendidos")), ("no", _("No suspendidos"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "si":
            return queryset.filter(profile__suspended_at__isnull=False)
        if self.value() == "no":
            return queryset.exclude(profile__suspended_at__isnull=False)
        return queryset


if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class ModeratedUserAdmin(ModerationForms, UserAdmin):
    list_display = ("username", "email", "is_staff", "chips", "suspension")
    list_filter = (SuspendedFilter, *UserAdmin.list_filter)
    actions = ["suspend_users", "lift_suspensions", "adjust_chips"]
    change_form_template = "admin/accounts/user_change_form.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        balance = Account.objects.filter(kind=Account.Kind.USER, user=OuterRef("pk")).values("balance")[:1]
        return super().get_queryset(request).select_related("profile").annotate(chip_balance=Subquery(balance))

    @admin.display(description=_("fichas"), ordering="chip_balance")
    def chips(self, obj: Any) -> int:
        return int(getattr(obj, "chip_balance", None) or 0)

    @admin.display(description=_("suspensión"))
    def suspension(self, obj: Any) -> str:
        profile = getattr(obj, "profile", None)
        if profile is None or profile.suspended_at is None:
            return "—"
        return profile.suspended_reason

    # -- permissions (each step its own) ---------------------------------------------------

    def has_suspend_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("accounts.suspend_user"))

    def has_adjust_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("accounts.adjust_chips"))

    # -- the steps -------------------------------------------------------------------------

    def _suspend(
        self, request: HttpRequest, users: Iterable[Any], action: str | None = None, back: str = ""
    ) -> HttpResponse | None:
        def perform(user: Any, data: dict[str, Any]) -> str:
            suspension = moderation.suspend(user.pk, request.user, data["reason"])
            return gettext("%(user)s suspendido (%(n)s mesas afectadas).") % {
                "user": user.get_username(),
                "n": suspension.tables,
            }

        return self.moderate(
            request,
            users,
            permitted=self.has_suspend_permission(request),
            form_class=SuspendForm,
            title=gettext("Suspender"),
            intro=gettext(
                "No podrán sentarse, unirse ni jugar; sus asientos en partidas en "
                "juego pasan al bot y sus conexiones se cierran."
            ),
            submit=gettext("Suspender"),
            perform=perform,
            action=action,
            back=back,
        )

    def _lift(
        self, request: HttpRequest, users: Iterable[Any], action: str | None = None, back: str = ""
    ) -> HttpResponse | None:
        def perform(user: Any, data: dict[str, Any]) -> str:
            if moderation.lift(user.pk, request.user, data["reason"]):
                return gettext("%(user)s ya puede volver a jugar.") % {"user": user.get_username()}
            return gettext("%(user)s no estaba suspendido.") % {"user": user.get_username()}

        return self.moderate(
            request,
            users,
            permitted=self.has_suspend_permission(request),
            form_class=ReasonForm,
            title=gettext("Levantar la suspensión"),
            intro="",
            submit=gettext("Levantar la suspensión"),
            perform=perform,
            action=action,
            back=back,
        )

    def _adjust(
        self, request: HttpRequest, users: Iterable[Any], action: str | None = None, back: str = ""
    ) -> HttpResponse | None:
        def perform(user: Any, data: dict[str, Any]) -> str:
            moderation.adjust_chips(user.pk, request.user, data["amount"], data["reason"])
            return gettext("%(user)s: %(amount)s fichas (%(reason)s).") % {
                "user": user.get_username(),
                "amount": f"{data['amount']:+d}",
                "reason": data["reason"],
            }

        return self.moderate(
            request,
            users,
            permitted=self.has_adjust_permission(request),
            form_class=AdjustForm,
            title=gettext("Ajustar fichas"),
            intro=gettext(
                "Las fichas salen de (o vuelven a) la cuenta de regalos, en un movimiento con el motivo como nota."
            ),
            submit=gettext("Ajustar fichas"),
            perform=perform,
            action=action,
            back=back,
        )

    # -- as actions on the list ------------------------------------------------------------

    @admin.action(description=_("Suspender"), permissions=["suspend"])
    def suspend_users(self, request: HttpRequest, queryset: QuerySet[Any]) -> HttpResponse | None:
        return self._suspend(request, queryset, action="suspend_users")

    @admin.action(description=_("Levantar la suspensión"), permissions=["suspend"])
    def lift_suspensions(self, request: HttpRequest, queryset: QuerySet[Any]) -> HttpResponse | None:
        return self._lift(request, queryset, action="lift_suspensions")

    @admin.action(description=_("Ajustar fichas"), permissions=["adjust"])
    def adjust_chips(self, request: HttpRequest, queryset: QuerySet[Any]) -> HttpResponse | None:
        return self._adjust(request, queryset, action="adjust_chips")

    # -- as buttons on a person's page -----------------------------------------------------

    def get_urls(self) -> list[Any]:
        def view(step: Callable[..., HttpResponse | None]) -> Callable[..., HttpResponse]:
            def one(request: HttpRequest, object_id: str) -> HttpResponse:
                user = self.object_or_404(request, object_id)
                back = self.change_url(user)
                return step(request, [user], back=back) or HttpResponseRedirect(back)

            return self.admin_site.admin_view(one)

        info = self.model._meta.app_label, self.model._meta.model_name
        return [
            path("<object_id>/suspender/", view(self._suspend), name="%s_%s_suspend" % info),
            path("<object_id>/levantar-suspension/", view(self._lift), name="%s_%s_lift" % info),
            path("<object_id>/ajustar-fichas/", view(self._adjust), name="%s_%s_adjust" % info),
            *super().get_urls(),
        ]

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = dict(extra_context or {})
        user = self.get_object(request, object_id)
        if user is not None:
            name = "admin:%s_%s_%%s" % (self.model._meta.app_label, self.model._meta.model_name)
            profile = getattr(user, "profile", None)
            extra["moderation"] = {
                "chips": self.chips(user),
                "suspended": profile is not None and profile.suspended_at is not None,
                "profile": profile,
                "suspend_url": reverse(name % "suspend", args=[user.pk])
                if self.has_suspend_permission(request)
                else None,
                "lift_url": reverse(name % "lift", args=[user.pk]) if self.has_suspend_permission(request) else None,
                "adjust_url": reverse(name % "adjust", args=[user.pk]) if self.has_adjust_permission(request) else None,
            }
        return super().change_view(request, object_id, form_url, extra)
