from django.urls import path

import pocha_site.converters  # noqa: F401 (the site's path converters: key, isodate)

from . import views

app_name = "leaderboard"

urlpatterns = [
    path("", views.ranking, {"slug": "semana"}, name="index"),
    path("<key:slug>/", views.ranking, name="current"),
    path("<key:slug>/<isodate:start>/", views.ranking, name="past"),
]
