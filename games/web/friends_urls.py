"""The friends pages' routes (in the ``games`` namespace: ``games.web.urls`` adds them)."""

from django.urls import URLPattern, path

from . import friends

urlpatterns: list[URLPattern] = [
    path("amigos/", friends.friends_page, name="friends"),
    path("amigos/seguir/", friends.follow, name="follow"),
    path("amigos/dejar-de-seguir/", friends.unfollow, name="unfollow"),
    path("amigos/bloquear/", friends.block, name="block"),
    path("amigos/desbloquear/", friends.unblock, name="unblock"),
    path("amigos/invitaciones/", friends.invite_preference, name="invite_preference"),
]
