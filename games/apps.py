from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GamesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "games"
    verbose_name = _("Partidas")

    def ready(self) -> None:
        from accounts import signals
        from games.live import dispatch
        from games.table import events
        from games.table.actions import moderation

        # After commit, the domain's events become pushes and timers: the one place that sends them.
        events.connect(dispatch.handle)
        # What happens to a person's account reaches their seats.
        signals.user_suspended.connect(moderation.on_user_suspended, dispatch_uid="games.suspended")
        signals.account_closing.connect(moderation.on_account_closing, dispatch_uid="games.closing")
        signals.account_renamed.connect(moderation.on_account_renamed, dispatch_uid="games.renamed")
        signals.account_closed.connect(moderation.on_account_closed, dispatch_uid="games.closed")
