from django.contrib import admin
from django.urls import include, path

from games import views as game_views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("accounts/", include("accounts.urls")),
    path("clasificacion/", include("leaderboard.urls")),
    path("", game_views.home, name="home"),
    path("", include("games.urls")),
]
