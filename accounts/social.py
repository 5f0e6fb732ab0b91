"""Follow and block: the relations between players, and the rules the rest of the site asks of them.

- **Follow.** Anyone may follow anyone (not themselves, not someone blocked either way), at most
  ``POCHA_FOLLOW_LIMIT`` follows and blocks per ``POCHA_FOLLOW_WINDOW`` seconds, ``MOST_FOLLOWED`` people in all.
  Two people who follow each other are **friends**.
- **Block.** Blocking someone ends both follows between the two.  While either has blocked the other
  (``between``), the site never seats them together (quick play, a tournament's seating), neither may invite
  the other or sit at the other's private table, neither sees the other online, and neither reads the
  other's talk at a table.  Unblocking is one click; it restores no follow.
- **Invitations** (``may_invite``): the invited person's preference (``Profile.invites_from``) says who may
  invite them: everyone, their friends and the people they follow, or nobody at all.

Every function takes the acting person as ``user`` (the signed-in one): a form names only the other person,
so nobody can follow, block or invite on someone else's behalf.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from accounts.models import Block, Follow, Profile
from pocha_site import ratelimit

#: The most people one person may follow.
MOST_FOLLOWED = 1000


class Refused(Exception):
    """A follow, block or invitation the rules refuse: ``code`` for programs, ``text`` for people."""

    def __init__(self, code: str, text: str | Promise) -> None:
        super().__init__(code)
        self.code = code
        self.text = text

    def message(self) -> str:
        return str(self.text)


def not_found() -> Refused:
    return Refused("unknown_player", _("No hay ningún jugador con ese nombre."))


def too_many() -> Refused:
    return Refused("too_many", _("Demasiados cambios seguidos: espera un poco antes de seguir o bloquear a más gente."))


def person(name: object) -> AbstractBaseUser:
    """The active account named ``name`` (as typed: surrounding spaces ignored), or ``Refused``."""
    if not isinstance(name, str) or not 0 < len(name.strip()) <= 150:
        raise not_found()
    user = (
        get_user_model()
        .objects.filter(username=name.strip(), is_active=True)
        .exclude(profile__closed_at__isnull=False)
        .first()
    )
    if user is None:
        raise not_found()
    return user


def _count_change(user_id: int) -> None:
    if not ratelimit.take("social", f"user:{user_id}", settings.POCHA_FOLLOW_LIMIT, settings.POCHA_FOLLOW_WINDOW):
        raise too_many()


def between(a: int, b: int) -> bool:
    """Whether either of the two has blocked the other."""
    return Block.objects.filter(Q(blocker_id=a, blocked_id=b) | Q(blocker_id=b, blocked_id=a)).exists()


def blocked_ids(user_id: int) -> set[int]:
    """Everyone blocked by ``user_id`` or who blocked them."""
    rows = Block.objects.filter(Q(blocker_id=user_id) | Q(blocked_id=user_id)).values_list("blocker_id", "blocked_id")
    return {other for pair in rows for other in pair if other != user_id}


def blocked_pairs(user_ids: list[int] | set[int]) -> set[frozenset[int]]:
    """The pairs among ``user_ids`` that must not share a table."""
    ids = list(user_ids)
    if len(ids) < 2:
        return set()
    rows = Block.objects.filter(blocker_id__in=ids, blocked_id__in=ids).values_list("blocker_id", "blocked_id")
    return {frozenset(pair) for pair in rows}


def following_ids(user_id: int) -> set[int]:
    return set(Follow.objects.filter(follower_id=user_id).values_list("followee_id", flat=True))


def follower_ids(user_id: int) -> set[int]:
    return set(Follow.objects.filter(followee_id=user_id).values_list("follower_id", flat=True))


def friend_ids(user_id: int) -> set[int]:
    """The people ``user_id`` follows who follow them back."""
    return set(
        Follow.objects.filter(
            follower_id=user_id,
            followee__following_rows__followee_id=user_id,
        ).values_list("followee_id", flat=True)
    )


@dataclass(frozen=True)
class Relation:
    """How ``viewer`` stands with ``other`` (for the buttons a page shows)."""

    following: bool = False
    followed_by: bool = False
    blocking: bool = False
    blocked_by: bool = False

    @property
    def friends(self) -> bool:
        return self.following and self.followed_by

    @property
    def blocked(self) -> bool:
        return self.blocking or self.blocked_by


def relation(viewer_id: int | None, other_id: int) -> Relation:
    if viewer_id is None or viewer_id == other_id:
        return Relation()
    follows = set(
        Follow.objects.filter(
            Q(follower_id=viewer_id, followee_id=other_id) | Q(follower_id=other_id, followee_id=viewer_id)
        ).values_list("follower_id", flat=True)
    )
    blocks = set(
        Block.objects.filter(
            Q(blocker_id=viewer_id, blocked_id=other_id) | Q(blocker_id=other_id, blocked_id=viewer_id)
        ).values_list("blocker_id", flat=True)
    )
    return Relation(
        following=viewer_id in follows,
        followed_by=other_id in follows,
        blocking=viewer_id in blocks,
        blocked_by=other_id in blocks,
    )


def follow(user: AbstractBaseUser, other: AbstractBaseUser) -> bool:
    """``user`` follows ``other``; False if they already did.  Refused: oneself, someone blocked either way,
    past ``MOST_FOLLOWED``, or too many changes in a row."""
    if user.pk == other.pk:
        raise Refused("self", _("No puedes seguirte a ti mismo."))
    if between(user.pk, other.pk):
        raise Refused("blocked", _("No puedes seguir a esa persona."))
    if Follow.objects.filter(follower_id=user.pk, followee_id=other.pk).exists():
        return False
    if Follow.objects.filter(follower_id=user.pk).count() >= MOST_FOLLOWED:
        raise Refused(
            "too_many_followed", _("Ya sigues a %(n)s personas: deja de seguir a alguien antes.") % {"n": MOST_FOLLOWED}
        )
    _count_change(user.pk)
    try:
        with transaction.atomic():
            Follow.objects.create(follower_id=user.pk, followee_id=other.pk)
    except IntegrityError:  # a second tab followed at the same moment
        return False
    return True


def unfollow(user: AbstractBaseUser, other: AbstractBaseUser) -> bool:
    """``user`` no longer follows ``other``; False if they did not."""
    deleted, _rows = Follow.objects.filter(follower_id=user.pk, followee_id=other.pk).delete()
    return deleted > 0


def block(user: AbstractBaseUser, other: AbstractBaseUser) -> bool:
    """``user`` blocks ``other`` (and the follows between them end); False if they already had."""
    if user.pk == other.pk:
        raise Refused("self", _("No puedes bloquearte a ti mismo."))
    if Block.objects.filter(blocker_id=user.pk, blocked_id=other.pk).exists():
        return False
    _count_change(user.pk)
    with transaction.atomic():
        Follow.objects.filter(
            Q(follower_id=user.pk, followee_id=other.pk) | Q(follower_id=other.pk, followee_id=user.pk)
        ).delete()
        try:
            with transaction.atomic():
                Block.objects.create(blocker_id=user.pk, blocked_id=other.pk)
        except IntegrityError:
            return False
    return True


def unblock(user: AbstractBaseUser, other: AbstractBaseUser) -> bool:
    """``user`` lifts their block of ``other``; False if there was none.  (A block by ``other`` stands.)"""
    deleted, _rows = Block.objects.filter(blocker_id=user.pk, blocked_id=other.pk).delete()
    return deleted > 0


def invites_from(user_id: int) -> str:
    value = Profile.objects.filter(user_id=user_id).values_list("invites_from", flat=True).first()
    return value or Profile.Invites.EVERYONE


def may_invite(sender_id: int, recipient_id: int, recipient_name: str = "") -> Refused | None:
    """Why ``sender_id`` may not invite ``recipient_id`` to a table, or None if they may."""
    if sender_id == recipient_id:
        return Refused("self", _("No puedes invitarte a ti mismo."))
    if between(sender_id, recipient_id):
        return Refused("blocked", _("No puedes invitar a esa persona."))
    preference = invites_from(recipient_id)
    if preference == Profile.Invites.NOBODY:
        return Refused("invites_nobody", _("%(name)s no acepta invitaciones de nadie.") % {"name": recipient_name})
    if (
        preference == Profile.Invites.FRIENDS
        and not Follow.objects.filter(follower_id=recipient_id, followee_id=sender_id).exists()
    ):
        return Refused(
            "invites_friends",
            _("%(name)s solo acepta invitaciones de sus amigos y de la gente a la que sigue.")
            % {"name": recipient_name},
        )
    return None
