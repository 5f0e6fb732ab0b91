"""The invitation pages' routes (in the ``games`` namespace: ``games.web.urls`` adds them)."""

from django.urls import URLPattern, path

from . import invitations

urlpatterns: list[URLPattern] = [
    path("invitaciones/", invitations.invitations, name="invitations"),
    path("invitaciones/invitar/", invitations.invite, name="invite"),
    path("invitaciones/amigos/", invitations.invite_names, name="invite_names"),
    path("invitaciones/<id:invitation_id>/unirme/", invitations.accept, name="invitation_accept"),
    path("invitaciones/<id:invitation_id>/no/", invitations.decline, name="invitation_decline"),
]
