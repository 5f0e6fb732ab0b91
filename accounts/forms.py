"""The account forms: sign-up with an optional e-mail, a login that stops password guessers, changing
the e-mail, changing the password and closing the account.

Failed logins are counted in ``pocha_site.ratelimit`` per (name, address) and per client address (the name
hashed, whether or not it exists, so the answer never tells who has an account): after
``POCHA_LOGIN_ATTEMPTS`` failures for one name from one address, or ``POCHA_LOGIN_ADDRESS_ATTEMPTS`` from one
address, in ``POCHA_LOGIN_WINDOW`` seconds, that name from that address (or that address) is refused even
with the right password until the window passes.  A name alone is never locked, nor slowed down: a
stranger's wrong passwords for someone's name, from other addresses, must not keep its owner out (and a
delay would hold the server process's one thread of page requests for everyone).  Every form here that asks
for the current password counts towards the same limits, so a borrowed session cannot be used to guess it
either.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from pocha_site import ratelimit

#: What a closed account's name becomes (``jugador-borrado-<id>``); nobody may sign up with it.
CLOSED_PREFIX = "jugador-borrado"

TOO_MANY_LOGINS = _("Demasiados intentos fallidos. Espera unos minutos y vuelve a probar.")
EMAIL_TAKEN = _("Ya hay una cuenta con ese correo electrónico. Si es tuya, entra con ella o recupera la contraseña.")
WRONG_PASSWORD = _("La contraseña no es correcta.")

LOGIN_BY_NAME_AND_ADDRESS = "login-name-address"
LOGIN_BY_ADDRESS = "login-address"


# -- the login limit -----------------------------------------------------------------------


def _login_limits(request: HttpRequest | None, username: str) -> list[tuple[str, str, int]]:
    """(scope, identity, limit) of each limit a login of ``username`` from ``request``'s address is under."""
    address = ratelimit.client_address(request) if request is not None else "unknown"
    return [
        (LOGIN_BY_NAME_AND_ADDRESS, f"{ratelimit.hashed(username)}@{address}", settings.POCHA_LOGIN_ATTEMPTS),
        (LOGIN_BY_ADDRESS, address, settings.POCHA_LOGIN_ADDRESS_ATTEMPTS),
    ]


def login_blocked(request: HttpRequest | None, username: str) -> bool:
    """Whether this name from this address, or this address, has used up its failed logins for now."""
    return any(
        ratelimit.blocked(scope, [ident], limit, settings.POCHA_LOGIN_WINDOW)
        for scope, ident, limit in _login_limits(request, username)
    )


def login_failed(request: HttpRequest | None, username: str) -> None:
    for scope, ident, _limit in _login_limits(request, username):
        ratelimit.hit(scope, [ident], settings.POCHA_LOGIN_WINDOW)


def check_current_password(request: HttpRequest | None, user: AbstractBaseUser, password: str) -> None:
    """Raise ``ValidationError`` unless ``password`` is ``user``'s, counting a wrong one as a failed login."""
    username = user.get_username()
    if login_blocked(request, username):
        raise ValidationError(TOO_MANY_LOGINS, code="too_many")
    if not user.check_password(password):
        login_failed(request, username)
        raise ValidationError(WRONG_PASSWORD, code="password_incorrect")


class LimitedAuthenticationForm(AuthenticationForm):
    """Django's login form, refusing a name from an address (right password or not), or an address, once
    its failures pile up."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is None or not password:
            return super().clean()
        if login_blocked(self.request, username):
            # The same answer whether the account exists or not.
            raise ValidationError(TOO_MANY_LOGINS, code="too_many")
        try:
            return super().clean()
        except ValidationError:
            login_failed(self.request, username)
            raise


class LimitedPasswordChangeForm(PasswordChangeForm):
    """Django's password change; a wrong current password counts as a failed login of the account."""

    def __init__(self, user: AbstractBaseUser, *args: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
        self.request = request
        super().__init__(user, *args, **kwargs)

    def clean_old_password(self) -> str:
        old_password = self.cleaned_data.get("old_password") or ""
        try:
            check_current_password(self.request, self.user, old_password)
        except ValidationError as error:
            if error.code == "password_incorrect":
                raise ValidationError(self.error_messages["password_incorrect"], code="password_incorrect") from None
            raise
        return old_password


# -- e-mail --------------------------------------------------------------------------------


def normalise_email(value: str) -> str:
    return get_user_model().objects.normalize_email((value or "").strip())


def email_in_use(email: str, exclude_pk: Any = None) -> bool:
    """Whether another active account already has ``email`` (in any letter case)."""
    if not email:
        return False
    others = get_user_model().objects.filter(is_active=True, email__iexact=email)
    if exclude_pk is not None:
        others = others.exclude(pk=exclude_pk)
    return others.exists()


EMAIL_HELP = _("Solo sirve para recuperar la contraseña si la olvidas; no lo enseñamos a nadie.")


class SignupForm(UserCreationForm):
    """A name, a password and, if the player wants, an e-mail to get the password back with."""

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        email = self.fields["email"]
        email.required = False
        email.label = _("Correo electrónico (opcional)")
        email.help_text = EMAIL_HELP
        email.widget.attrs["autocomplete"] = "email"

    def clean_username(self) -> str | None:
        username = super().clean_username()
        if username and username.casefold().startswith(CLOSED_PREFIX):
            raise ValidationError(_("Ese nombre está reservado. Elige otro."), code="reserved")
        return username

    def clean_email(self) -> str:
        email = normalise_email(self.cleaned_data.get("email") or "")
        if email_in_use(email):
            raise ValidationError(EMAIL_TAKEN, code="email_taken")
        return email


class EmailChangeForm(forms.Form):
    """A new e-mail (or none), confirmed with the current password."""

    email = forms.EmailField(
        label=_("Correo electrónico"),
        required=False,
        max_length=254,
        help_text=EMAIL_HELP,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    password = forms.CharField(
        label=_("Tu contraseña actual"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, user: AbstractBaseUser, request: HttpRequest | None = None, *args: Any, **kwargs: Any) -> None:
        self.user = user
        self.request = request
        kwargs.setdefault("initial", {"email": getattr(user, "email", "")})
        kwargs.setdefault("prefix", "email")
        super().__init__(*args, **kwargs)

    def clean_email(self) -> str:
        email = normalise_email(self.cleaned_data.get("email") or "")
        if email_in_use(email, exclude_pk=self.user.pk):
            raise ValidationError(EMAIL_TAKEN, code="email_taken")
        return email

    def clean_password(self) -> str:
        password = self.cleaned_data.get("password") or ""
        check_current_password(self.request, self.user, password)
        return password


class CloseAccountForm(forms.Form):
    """Closing for good, confirmed with the current password."""

    password = forms.CharField(
        label=_("Tu contraseña actual"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )
    confirm = forms.BooleanField(
        label=_("Sí, quiero cerrar mi cuenta para siempre."),
        required=True,
        error_messages={"required": _("Marca la casilla para confirmar que quieres cerrar la cuenta.")},
    )

    def __init__(self, user: AbstractBaseUser, request: HttpRequest | None = None, *args: Any, **kwargs: Any) -> None:
        self.user = user
        self.request = request
        kwargs.setdefault("prefix", "close")
        super().__init__(*args, **kwargs)

    def clean_password(self) -> str:
        password = self.cleaned_data.get("password") or ""
        check_current_password(self.request, self.user, password)
        return password
