"""A person's invitations as their pages show them: the banner on every page (``pending``, drawn at load by
``pocha_site.context_processors.invitation_banner`` and live by ``banner_html`` over the page's socket), and
the list page «Invitaciones» (``pending`` and ``answered``).

An invitation shows while it is pending and its table still waits; one from someone blocked either way
(a block made after it was sent) shows nowhere."""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string
from django.utils.translation import override

from accounts import social
from games.models import Invitation, Table, rules_name, rules_of

#: The most invitations the banner shows at once (the list page has them all).
BANNER_MOST = 5
#: Rows read beyond ``BANNER_MOST``, for those a block hides.
_BLOCKED_SLACK = 5
#: The answered or expired invitations the list page shows, newest first.
ANSWERED_MOST = 20


def _row(invitation: Invitation) -> dict[str, Any]:
    table = invitation.table
    return {
        "id": invitation.pk,
        "table_id": table.pk,
        "host": invitation.sender.get_username(),
        "rules": table.rules_name(),
        "size": table.size,
        "stake": table.stake,
        "status": invitation.status,
        "status_name": invitation.get_status_display(),
        "created_at": invitation.created_at,
    }


def pending(user_id: int, most: int | None = BANNER_MOST) -> list[dict[str, Any]]:
    """The invitations pending for ``user_id`` whose tables still wait, newest first, each worded in the active
    language.  Every signed-in page asks (the banner), and almost always finds none: one plain indexed query
    (no subquery for the ORM to build at every page), and the blocks read only when there are invitations."""
    query = (
        Invitation.objects.filter(
            recipient_id=user_id, status=Invitation.Status.PENDING, table__status=Table.Status.WAITING
        )
        .order_by("-created_at", "-pk")
        .values_list("pk", "table_id", "sender_id", "sender__username", "table__rules", "table__size", "table__stake")
    )
    rows = list(query if most is None else query[: most + _BLOCKED_SLACK])
    if not rows:
        return []
    blocked = social.blocked_ids(user_id)
    status_name = Invitation.Status.PENDING.label
    found = [
        {
            "id": pk,
            "table_id": table_id,
            "host": host,
            "rules": rules_name(rules_of(rules)),
            "size": size,
            "stake": stake,
            "status": Invitation.Status.PENDING.value,
            "status_name": status_name,
        }
        for pk, table_id, sender_id, host, rules, size, stake in rows
        if sender_id not in blocked
    ]
    return found if most is None else found[:most]


def answered(user_id: int, most: int = ANSWERED_MOST) -> list[dict[str, Any]]:
    """The latest invitations to ``user_id`` that are no longer pending (accepted, declined, expired)."""
    rows = (
        Invitation.objects.filter(recipient_id=user_id)
        .exclude(status=Invitation.Status.PENDING)
        .select_related("table", "sender")
        .order_by("-created_at", "-pk")[:most]
    )
    return [_row(i) for i in rows]


def banner_html(user_id: int, language: str) -> str:
    """The invitation banner of every page of ``user_id`` (an out-of-band swap of ``#invitation-banner``):
    each pending invitation with «Unirme» and «No, gracias»; an empty banner when there is none."""
    with override(language):
        return render_to_string(
            "games/_invitation_banner.html", {"pending_invitations": pending(user_id), "banner_oob": True}
        )
