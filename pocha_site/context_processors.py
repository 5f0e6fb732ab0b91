"""What every page of the site shows a person besides the header's chips (``accounts.context_processors``): that a
tournament they play has started and their table waits («El torneo «Copa» ha empezado: te espera la mesa 9»), and
the invitations to tables waiting for their answer (the banner, ``templates/games/_invitation_banner.html``)."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest
from django.urls import reverse

from games.read import invitations, tournaments


def tournament_notice(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}

    def notice() -> dict[str, Any] | None:
        found = tournaments.started_notice(user.pk)
        if found is None:
            return None
        found["table_url"] = reverse("games:table", args=[found["table_id"]])
        found["tournament_url"] = reverse("games:tournament", args=[found["tournament_id"]])
        # Not on the table itself, nor on the tournament's page (which says it, with the same link).
        if request.path in (found["table_url"], found["tournament_url"]):
            return None
        return found

    # A callable, like the chips: read once, when the page shows it (a page without the site's frame pays nothing).
    return {"tournament_notice": cache(notice)}


def invitation_banner(request: HttpRequest) -> dict[str, Any]:
    """``pending_invitations``: the invitations waiting for the person's answer (``games.read.invitations.pending``,
    one indexed query, made only when the page draws the banner); none on «Invitaciones», which lists them."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}

    def pending() -> list[dict[str, Any]]:
        if request.path == reverse("games:invitations"):
            return []
        return invitations.pending(user.pk)

    return {"pending_invitations": cache(pending)}
