"""The friends pages' routes (in the ``games`` namespace: ``games.web.urls`` adds them)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
