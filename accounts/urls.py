from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

import pocha_site.converters  # noqa: F401 (the site's path converters: token)

from . import views

app_name = "accounts"

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("fichas/", views.wallet, name="wallet"),
    path("fichas/recarga/", views.claim_topup, name="topup"),
    # The account: e-mail, password, closing it.
    path("cuenta/", views.account, name="account"),
    path("cuenta/cerrar/", views.close, name="close"),
    path("contrasena/", views.PasswordChangeView.as_view(), name="password_change"),
    path(
        "contrasena/hecho/",
        auth_views.PasswordChangeDoneView.as_view(template_name="accounts/password_change_done.html"),
        name="password_change_done",
    ),
    # A forgotten password: an e-mail with a one-time link.
    path("recuperar/", views.PasswordResetView.as_view(), name="password_reset"),
    path(
        "recuperar/enviado/",
        auth_views.PasswordResetDoneView.as_view(template_name="accounts/password_reset_done.html"),
        name="password_reset_done",
    ),
    path(
        "recuperar/hecho/",
        auth_views.PasswordResetCompleteView.as_view(template_name="accounts/password_reset_complete.html"),
        name="password_reset_complete",
    ),
    path(
        "recuperar/<token:uidb64>/<token:token>/",
        auth_views.PasswordResetConfirmView.as_view(
            template_name="accounts/password_reset_confirm.html",
            success_url=reverse_lazy("accounts:password_reset_complete"),
        ),
        name="password_reset_confirm",
    ),
]
