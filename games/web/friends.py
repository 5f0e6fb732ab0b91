"""«Amigos»: the page (``/amigos/``), and following, unfollowing, blocking and unblocking someone from it, from
a profile, a table's seat plate or a final board; and who may invite the person to a table.

A post names only the other person (``name``): the one who follows or blocks is always the signed-in person,
whatever else the form holds, and ``accounts.social`` keeps the rules (nobody follows themselves or someone
blocked either way; follows and blocks are rate-limited).  A refusal changes nothing and is said to the sender
alone.  A plain post goes back to a page of this site (``next``) or to «Amigos» with the answer as a message;
an htmx post (a table's plate or final board, «Amigos» itself) is answered with the same words in ``#flash``
(and, from «Amigos», its list drawn again), the page left as it was.  Once a change is committed, both
people's open pages are told (``PersonNotified``: ``friends``, and ``blocks`` for a block).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils.functional import Promise
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts import social
from accounts.models import Profile
from accounts.views import next_target
from games.read import friends as friends_read
from games.table import events
from games.table.events import PersonNotified


@login_required
def friends_page(request: HttpRequest) -> HttpResponse:
    """«Amigos»: the lists (friends online first; the others a page at a time, ``?amigos=2``: two pages of
    friends…), a form to follow someone by name, and who may invite you.  Through htmx, «Ver más» (one list's
    page named alone) gets that page's rows only, and the page's script (``listas``) the lists alone."""
    asked = friends_read.pages_asked(request.GET)
    if _is_htmx(request):
        if "listas" in request.GET:
            return HttpResponse(friends_read.page_html(request, asked))
        named = [key for key in friends_read.LISTS if key in request.GET]
        if len(named) == 1:
            return HttpResponse(friends_read.rows_html(request.user.pk, named[0], asked[named[0]]))
    return render(
        request,
        "games/friends.html",
        {
            "friends_live": friends_read.page_html(request, asked),
            "invites_from": friends_read.invites_from(request.user.pk),
            "invite_choices": Profile.Invites.choices,
        },
    )


def _is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


def _answer(request: HttpRequest, text: str, ok: bool) -> HttpResponse:
    """Say ``text`` to the sender: in ``#flash`` for htmx (with «Amigos»' list drawn again when the post came
    from it: ``live``), else as a message on the page they go back to."""
    if _is_htmx(request):
        html = render_to_string("games/_friends_flash.html", {"message": text, "ok": ok})
        if request.POST.get("live") == "1":
            html += friends_read.friends_html(request.user.pk, get_language() or "es")
        return HttpResponse(html)
    (messages.success if ok else messages.error)(request, text)
    return redirect(next_target(request) or "games:friends")


def _notify(user_id: int, other_id: int, *kinds: str) -> None:
    """Both people's open pages, once the change is committed."""
    for kind in kinds:
        events.emit(PersonNotified(other_id, kind))
        events.emit(PersonNotified(user_id, kind))


def _change(
    request: HttpRequest,
    act: Callable[[Any, Any], bool],
    kinds: tuple[str, ...],
    done: Promise,
    already: Promise,
) -> HttpResponse:
    """``act`` (an ``accounts.social`` change) by the signed-in person on the one named ``name``; ``done`` or
    ``already`` (nothing to change: a second click, another tab) said to them, or why it is refused."""
    try:
        other = social.person(request.POST.get("name"))
        changed = act(request.user, other)
    except social.Refused as refused:
        return _answer(request, refused.message(), ok=False)
    if changed:
        _notify(request.user.pk, other.pk, *kinds)
    return _answer(request, str(done if changed else already) % {"name": other.get_username()}, ok=True)


FRIENDS = ("friends",)
BLOCKS = ("friends", "blocks")


@login_required
@require_POST
def follow(request: HttpRequest) -> HttpResponse:
    """«Seguir»: the signed-in person follows ``name`` (a second time says they already do)."""
    return _change(
        request, social.follow, FRIENDS, gettext_lazy("Ahora sigues a %(name)s."), gettext_lazy("Ya sigues a %(name)s.")
    )


@login_required
@require_POST
def unfollow(request: HttpRequest) -> HttpResponse:
    """«Dejar de seguir»."""
    return _change(
        request,
        social.unfollow,
        FRIENDS,
        gettext_lazy("Has dejado de seguir a %(name)s."),
        gettext_lazy("No seguías a %(name)s."),
    )


@login_required
@require_POST
def block(request: HttpRequest) -> HttpResponse:
    """«Bloquear»: the follows between the two end, and the block stands until the person lifts it."""
    return _change(
        request,
        social.block,
        BLOCKS,
        gettext_lazy("Has bloqueado a %(name)s."),
        gettext_lazy("Ya habías bloqueado a %(name)s."),
    )


@login_required
@require_POST
def unblock(request: HttpRequest) -> HttpResponse:
    """«Desbloquear» (one click, from «Amigos»): no follow comes back."""
    return _change(
        request,
        social.unblock,
        BLOCKS,
        gettext_lazy("Has desbloqueado a %(name)s."),
        gettext_lazy("No tenías bloqueado a %(name)s."),
    )


#: What saving each choice of ``Profile.invites_from`` says.
SAVED = {
    Profile.Invites.EVERYONE: gettext_lazy("Ahora puede invitarte cualquiera."),
    Profile.Invites.FRIENDS: gettext_lazy("Ahora solo pueden invitarte tus amigos y la gente a la que sigues."),
    Profile.Invites.NOBODY: gettext_lazy("Ahora no puede invitarte nadie."),
}


@login_required
@require_POST
def invite_preference(request: HttpRequest) -> HttpResponse:
    """Who may invite the person to a table: «Todos», «Mis amigos y a quien sigo» or «Nadie»."""
    value = request.POST.get("invites_from")
    if value not in Profile.Invites.values:
        return _answer(request, _("Elige quién puede invitarte: Todos, Mis amigos y a quien sigo, o Nadie."), ok=False)
    Profile.objects.update_or_create(user_id=request.user.pk, defaults={"invites_from": value})
    return _answer(request, str(SAVED[Profile.Invites(value)]), ok=True)
