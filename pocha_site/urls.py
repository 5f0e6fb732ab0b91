from django.contrib import admin
from django.urls import include, path

import pocha_site.converters  # noqa: F401 (registers the site's path converters before the apps' URLs)
from games.web import views as game_views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("accounts/", include("accounts.urls")),
    path("clasificacion/", include("leaderboard.urls")),
    path("", game_views.home, name="home"),
    path("", include("games.web.urls")),
]
