from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"
    verbose_name = _("Cuentas")

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save

        from accounts.signals import welcome_new_user

        post_save.connect(welcome_new_user, sender=get_user_model(), dispatch_uid="accounts.welcome")
