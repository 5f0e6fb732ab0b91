from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path

import pocha_site.converters  # noqa: F401 (registers the site's path converters before the apps' URLs)
from games.web import views as game_views


def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``, which browsers and crawlers ask for whatever a page links: the site's icon as a PNG
    (the pages link ``img/favicon.svg`` first, this as their fallback: templates/base.html)."""
    return redirect(static("img/favicon-32.png"))


urlpatterns = [
    path("favicon.ico", favicon),
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("accounts/", include("accounts.urls")),
    path("clasificacion/", include("leaderboard.urls")),
    path("", game_views.home, name="home"),
    path("", include("games.web.urls")),
]
