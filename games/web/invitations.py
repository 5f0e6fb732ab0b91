"""Invitations' pages and forms (``games.table.actions.invitations``): «Invitar» from a waiting private table's
board or from «Amigos», «Unirme» and «No, gracias» from the banner or the list, and the list «Invitaciones».

Every form works without JavaScript (a redirect, the message on the page it lands on); sent by htmx, «Invitar»
answers with the page's flash (``#flash``, out of band), «Unirme» with ``HX-Redirect`` to the table, «No,
gracias» with the banner drawn again."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from accounts import social
from games.read import invitations as invitation_pages
from games.table import actions

#: The most friends «Invitar» suggests.
MOST_SUGGESTED = 200


def _htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


def _language() -> str:
    return get_language() or "es"


def _back(request: HttpRequest, default: str) -> str:
    """The page the form was sent from (htmx says it; a plain form's browser sends its referrer), if it is one
    of this site's; else ``default``."""
    for candidate in (request.headers.get("HX-Current-URL"), request.headers.get("Referer")):
        if candidate and url_has_allowed_host_and_scheme(
            candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            return candidate
    return default


def _go(request: HttpRequest, location: str) -> HttpResponse:
    """A redirect to ``location``; to htmx, the same as ``HX-Redirect`` (the browser loads the page itself)."""
    if _htmx(request):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = location
        return response
    return redirect(location)


@login_required
@require_POST
def invite(request: HttpRequest) -> HttpResponse:
    """«Invitar»: ``name``, and the ``table`` (by default the waiting private table the person hosts)."""
    table_id = request.POST.get("table") or None
    try:
        invitation = actions.do_invite(table_id, request.user, request.POST.get("name", ""))
    except actions.ActionError as error:
        ok, text = False, error.message(_language())
    else:
        ok = True
        text = _("Invitación enviada a %(name)s.") % {"name": invitation.recipient.get_username()}
    if _htmx(request):
        response = HttpResponse(render_to_string("games/_invite_flash.html", {"message": text, "ok": ok}))
        response["HX-Reswap"] = "none"  # (the flash alone, out of band, whatever the form's own target)
        return response
    (messages.success if ok else messages.error)(request, text)
    return redirect(_back(request, reverse("games:invitations")))


@login_required
@require_GET
def invite_names(request: HttpRequest) -> HttpResponse:
    """The names «Invitar» suggests: the person's friends, as a ``<datalist>``."""
    names = list(
        get_user_model()
        .objects.filter(pk__in=social.friend_ids(request.user.pk), is_active=True)
        .order_by("username")
        .values_list("username", flat=True)[:MOST_SUGGESTED]
    )
    return render(request, "games/_invite_names.html", {"names": names})


@login_required
@require_POST
def accept(request: HttpRequest, invitation_id: int) -> HttpResponse:
    """«Unirme»: seated at the table (stake held), and there; refused, back with the reason."""
    try:
        table = actions.do_accept_invitation(invitation_id, request.user)
    except actions.ActionError as error:
        messages.error(request, error.message(_language()))
        return _go(request, _back(request, reverse("games:invitations")))
    return _go(request, reverse("games:table", args=[table.pk]))


@login_required
@require_POST
def decline(request: HttpRequest, invitation_id: int) -> HttpResponse:
    """«No, gracias»: back where it was said (to htmx: the banner drawn again, out of band)."""
    try:
        actions.do_decline_invitation(invitation_id, request.user)
    except actions.ActionError as error:
        messages.error(request, error.message(_language()))
        return _go(request, _back(request, reverse("games:invitations")))
    if _htmx(request):
        response = HttpResponse(invitation_pages.banner_html(request.user.pk, _language()))
        response["HX-Reswap"] = "none"
        return response
    return redirect(_back(request, reverse("games:invitations")))


@login_required
def invitations(request: HttpRequest) -> HttpResponse:
    """«Invitaciones»: the pending ones, with their buttons, then the latest answered or expired."""
    user_id = request.user.pk
    return render(
        request,
        "games/invitations.html",
        {"pending": invitation_pages.pending(user_id, most=None), "answered": invitation_pages.answered(user_id)},
    )
