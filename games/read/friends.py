"""«Amigos» as a person's pages show it: their friends (people who follow each other), the people they follow,
those who follow them, and those they blocked, each with how the person sees them now (``games.read.online``).

The whole list is read in a handful of queries whatever its length (a person may follow ``social.MOST_FOLLOWED``
people): the follows both ways, the blocks, the names, then the presence of everyone listed (``online.states``:
three or four).  The page draws it once (``templates/games/friends.html``) and its socket draws it again
(``friends_html``, an out-of-band swap of ``#friends-live``) when a followed person comes or goes, or a follow
or a block of theirs changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef
from django.template.loader import render_to_string
from django.utils.translation import override

from accounts.models import Block, Follow
from games.read import online

#: The most people «Te siguen» lists (the newest first; a popular player may have many more).
FOLLOWERS_SHOWN = 100

#: The order of the states in a list: at a table, online, then away.
_STATE_ORDER = {online.AT_TABLE: 0, online.ONLINE: 1, online.OFFLINE: 2}


@dataclass(frozen=True)
class Person:
    """One person in a list of «Amigos»: their name, and how the viewer sees them now."""

    id: int
    name: str
    state: str = online.OFFLINE
    table_id: int | None = None
    watchable: bool = False

    @property
    def online(self) -> bool:
        return self.state != online.OFFLINE


@dataclass(frozen=True)
class Lists:
    """What «Amigos» lists: ``friends`` (mutual), ``following`` (one-way, theirs), ``followers`` (one-way, to
    them: at most ``FOLLOWERS_SHOWN``, ``more_followers`` besides), and ``blocked`` (blocked by them)."""

    friends: list[Person]
    following: list[Person]
    followers: list[Person]
    blocked: list[Person]
    more_followers: int = 0

    @property
    def online_friends(self) -> int:
        return sum(1 for p in self.friends if p.online)


def _names(ids: set[int]) -> dict[int, str]:
    """The names of the open accounts among ``ids`` (a closed or deactivated one is left out of every list)."""
    if not ids:
        return {}
    rows = (
        get_user_model()
        .objects.filter(pk__in=ids, is_active=True)
        .exclude(profile__closed_at__isnull=False)
        .values_list("pk", "username")
    )
    return dict(rows)


def _by_presence(people: list[Person]) -> list[Person]:
    return sorted(people, key=lambda p: (_STATE_ORDER.get(p.state, 3), p.name.casefold(), p.id))


def _by_name(people: list[Person]) -> list[Person]:
    return sorted(people, key=lambda p: (p.name.casefold(), p.id))


def lists(user_id: int) -> Lists:
    """Everyone «Amigos» shows to ``user_id``, friends online first (a handful of queries, whatever their
    number)."""
    following = set(Follow.objects.filter(follower_id=user_id).values_list("followee_id", flat=True))
    back = (
        set(Follow.objects.filter(followee_id=user_id, follower_id__in=following).values_list("follower_id", flat=True))
        if following
        else set()
    )
    # those who follow them and whom they do not follow back, the newest first
    fans = list(
        Follow.objects.filter(followee_id=user_id)
        .exclude(Exists(Follow.objects.filter(follower_id=user_id, followee_id=OuterRef("follower_id"))))
        .order_by("-created_at", "-id")
        .values_list("follower_id", flat=True)[: FOLLOWERS_SHOWN + 1]
    )
    more = 0
    if len(fans) > FOLLOWERS_SHOWN:
        fans = fans[:FOLLOWERS_SHOWN]
        more = Follow.objects.filter(followee_id=user_id).count() - len(back) - FOLLOWERS_SHOWN
    blocked = set(Block.objects.filter(blocker_id=user_id).values_list("blocked_id", flat=True))
    names = _names(following | set(fans) | blocked)
    # a blocked person is always away to them (``online.states`` leaves them out): only the follows are asked
    seen = online.states(user_id, following & set(names))

    def person(uid: int) -> Person:
        state = seen.get(uid)
        if state is None:
            return Person(uid, names[uid])
        return Person(uid, names[uid], state.state, state.table_id, state.watchable)

    return Lists(
        friends=_by_presence([person(uid) for uid in following & back if uid in names]),
        following=_by_presence([person(uid) for uid in following - back if uid in names]),
        followers=_by_name([Person(uid, names[uid]) for uid in fans if uid in names]),
        blocked=_by_name([Person(uid, names[uid]) for uid in blocked if uid in names]),
        more_followers=max(more, 0),
    )


def live_context(user_id: int) -> dict[str, Any]:
    """The context of ``templates/games/_friends_live.html`` (without ``oob``)."""
    return {"lists": lists(user_id)}


def friends_html(user_id: int, language: str) -> str:
    """The live part of «Amigos» for ``user_id`` (an out-of-band swap of ``#friends-live``), in ``language``.
    Drawn without a request: its forms post through htmx, whose requests carry the page's CSRF token
    (``hx-headers`` on the page's body)."""
    with override(language):
        return render_to_string("games/_friends_live.html", {**live_context(user_id), "oob": True})
