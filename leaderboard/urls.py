from datetime import date

from django.urls import path, register_converter

from . import views


class IsoDateConverter:
    """``2026-11-23``: a real calendar date, or the URL does not match (a 404)."""

    regex = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"

    def to_python(self, value: str) -> date:
        return date.fromisoformat(value)  # ValueError for 2026-02-30: the URL does not match

    def to_url(self, value: date) -> str:
        return value.isoformat()


register_converter(IsoDateConverter, "isodate")

app_name = "leaderboard"

urlpatterns = [
    path("", views.ranking, {"slug": "semana"}, name="index"),
    path("<slug:slug>/", views.ranking, name="current"),
    path("<slug:slug>/<isodate:start>/", views.ranking, name="past"),
]
