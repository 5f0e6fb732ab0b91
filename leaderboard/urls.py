from django.urls import path

import pocha_site.converters  # noqa: F401 (the site's path converters: key, isodate)

from . import views

app_name = "leaderboard"

urlpatterns = [
    path("", views.ranking, {"slug": "semana"}, name="index"),
    # «Nivel» (before the periods' words, which it is not one of)
    path("nivel/", views.skill_ranking, {"preset": "clasica"}, name="skill"),
    path("nivel/<key:preset>/", views.skill_ranking, name="skill_preset"),
    path("<key:slug>/", views.ranking, name="current"),
    path("<key:slug>/<isodate:start>/", views.ranking, name="past"),
]
