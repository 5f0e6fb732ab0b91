from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LeaderboardConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "leaderboard"
    verbose_name = _("Clasificación")
