from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from accounts import ledger, signals
from accounts.forms import (
    CLOSED_PREFIX,
    CloseAccountForm,
    EmailChangeForm,
    LimitedAuthenticationForm,
    LimitedPasswordChangeForm,
    SignupForm,
)
from accounts.models import Entry, Profile
from pocha_site import ratelimit

MOVEMENTS_PER_PAGE = 25


#: A character no address to go back to holds (a control character: a NUL, a new line...).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def next_target(request: HttpRequest) -> str | None:
    """Where to go after signing up, in or out: ``next`` (posted, or in the query) when it is a path of this
    site (``/mesa/12/``), or None.  Never another site (Django's ``url_has_allowed_host_and_scheme``), a
    relative or malformed address, a view's name (``redirect("foo")`` would look it up: a 500), nor the page
    itself (a signed-in person sent back to the login page would loop)."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if (
        not target.startswith("/")
        or _CONTROL.search(target)
        or not url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
        or urlsplit(target).path == request.path
    ):
        return None
    return target


def _safe_next(request: HttpRequest) -> str:
    """``next_target``, or home."""
    return next_target(request) or reverse("home")


TOO_MANY_SIGNUPS = gettext_lazy("Se han creado demasiadas cuentas desde tu conexión. Espera un rato y vuelve a probar.")
TOO_MANY_RESETS = gettext_lazy(
    "Ya se han pedido demasiados correos para recuperar contraseñas. Espera un rato y vuelve a probar."
)
#: Too Many Requests: what a refused attempt answers (the page still shows the form and why).
TOO_MANY_REQUESTS = 429

# The limits' scopes in pocha_site.ratelimit (the logins': accounts.forms).
SIGNUP_BY_ADDRESS = "signup"
RESET_BY_ADDRESS = "reset-address"
RESET_BY_EMAIL = "reset-email"


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account (with its welcome chips) and sign the new user in straight away.

    Each address may create ``POCHA_SIGNUP_LIMIT`` accounts per ``POCHA_SIGNUP_WINDOW`` seconds."""
    if request.user.is_authenticated:
        return HttpResponseRedirect(_safe_next(request))
    form = SignupForm(request.POST if request.method == "POST" else None)
    address = [ratelimit.client_address(request)]
    if request.method == "POST" and ratelimit.blocked(
        SIGNUP_BY_ADDRESS, address, settings.POCHA_SIGNUP_LIMIT, settings.POCHA_SIGNUP_WINDOW
    ):
        form.add_error(None, TOO_MANY_SIGNUPS)
        return render(
            request, "accounts/signup.html", {"form": form, "next": _safe_next(request)}, status=TOO_MANY_REQUESTS
        )
    if form.is_valid():
        with transaction.atomic():  # the user and their welcome grant, or neither
            user = form.save()
        ratelimit.hit(SIGNUP_BY_ADDRESS, address, settings.POCHA_SIGNUP_WINDOW)  # accounts made, not mistakes
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(
            request,
            _("¡Bienvenido! Tienes %(n)s fichas de regalo para empezar.")
            % {"n": f"{ledger.WELCOME_CHIPS:,}".replace(",", ".")},
        )
        return HttpResponseRedirect(_safe_next(request))
    return render(request, "accounts/signup.html", {"form": form, "next": _safe_next(request)})


class LoginView(auth_views.LoginView):
    """Django's login, with failures counted per address and per account (``accounts.forms``)."""

    template_name = "accounts/login.html"
    redirect_authenticated_user = True
    authentication_form = LimitedAuthenticationForm

    def get_redirect_url(self) -> str:
        """``next`` as ``next_target`` takes it ("" otherwise: then ``LOGIN_REDIRECT_URL``, home)."""
        return next_target(self.request) or ""

    def form_invalid(self, form: Any) -> HttpResponse:
        response = super().form_invalid(form)
        if any(error.code == "too_many" for error in form.errors.as_data().get("__all__", [])):
            response.status_code = TOO_MANY_REQUESTS
        return response


class LogoutView(auth_views.LogoutView):
    """Django's sign-out, going to ``next`` as ``next_target`` takes it, or home."""

    def get_success_url(self) -> str:
        return next_target(self.request) or reverse("home")


class PasswordResetView(auth_views.PasswordResetView):
    """ "¿Has olvidado la contraseña?": an e-mail with a one-time link, if an active account has that
    address (the page says the same either way).  Each address, and each e-mail, may ask for
    ``POCHA_RESET_LIMIT`` per ``POCHA_RESET_WINDOW`` seconds."""

    template_name = "accounts/password_reset.html"
    email_template_name = "registration/password_reset_email.txt"
    subject_template_name = "registration/password_reset_subject.txt"
    success_url = reverse_lazy("accounts:password_reset_done")

    def form_valid(self, form: Any) -> HttpResponse:
        scopes = [
            (RESET_BY_ADDRESS, [ratelimit.client_address(self.request)]),
            (RESET_BY_EMAIL, [ratelimit.hashed(form.cleaned_data["email"])]),
        ]
        if any(
            ratelimit.blocked(scope, idents, settings.POCHA_RESET_LIMIT, settings.POCHA_RESET_WINDOW)
            for scope, idents in scopes
        ):
            form.add_error(None, TOO_MANY_RESETS)
            return self.render_to_response(self.get_context_data(form=form), status=TOO_MANY_REQUESTS)
        for scope, idents in scopes:
            ratelimit.hit(scope, idents, settings.POCHA_RESET_WINDOW)
        return super().form_valid(form)


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "accounts/password_change.html"
    form_class = LimitedPasswordChangeForm
    success_url = reverse_lazy("accounts:password_change_done")

    def get_form_kwargs(self) -> dict[str, Any]:
        # A wrong current password counts against this address too (accounts.forms).
        return {**super().get_form_kwargs(), "request": self.request}


# -- the account page ----------------------------------------------------------------------


def _account_page(
    request: HttpRequest,
    email_form: EmailChangeForm | None = None,
    close_form: CloseAccountForm | None = None,
    status: int = 200,
) -> HttpResponse:
    return render(
        request,
        "accounts/account.html",
        {
            "email_form": email_form or EmailChangeForm(request.user, request),
            "close_form": close_form or CloseAccountForm(request.user, request),
            "balance": ledger.balance(request.user.pk),
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def account(request: HttpRequest) -> HttpResponse:
    """ "Mi cuenta": the e-mail (change or remove it), the password, and closing the account."""
    if request.method != "POST":
        return _account_page(request)
    form = EmailChangeForm(request.user, request, data=request.POST)
    if not form.is_valid():
        return _account_page(request, email_form=form)
    user = request.user
    user.email = form.cleaned_data["email"]
    user.save(update_fields=["email"])
    if user.email:
        messages.success(request, _("Guardado: tu correo electrónico es ahora %(email)s.") % {"email": user.email})
    else:
        messages.success(request, _("Guardado: ya no tienes correo electrónico en la cuenta."))
    return redirect("accounts:account")


@login_required
@require_POST
def close(request: HttpRequest) -> HttpResponse:
    """Close the account for good (confirmed with the password), then sign out."""
    form = CloseAccountForm(request.user, request, data=request.POST)
    if not form.is_valid():
        return _account_page(request, close_form=form)
    close_account(request.user)
    logout(request)
    messages.success(request, _("Tu cuenta está cerrada. ¡Gracias por jugar a La Pocha!"))
    return redirect("home")


def closed_name(user: AbstractBaseUser) -> str:
    """``jugador-borrado-<id>``: unique, since nobody may sign up with the prefix (and if an older account
    somehow has it, a number more)."""
    users = get_user_model().objects.exclude(pk=user.pk)
    name = f"{CLOSED_PREFIX}-{user.pk}"
    extra = 1
    while users.filter(username__iexact=name).exists():
        extra += 1
        name = f"{CLOSED_PREFIX}-{user.pk}-{extra}"
    return name


def close_account(user: AbstractBaseUser) -> str:
    """Close ``user``'s account and return the name it now goes by.

    The person disappears: the name becomes ``jugador-borrado-<id>`` everywhere it is shown (the
    account, every seat they ever had and the names kept in each game's record), the e-mail goes, the
    password no longer works and the account is inactive, so nobody can sign in with it again.  What
    happened stays as it was: the games, the rankings (under the new name) and every chip movement.
    The apps that keep the person's seats rename and give them up (``accounts.signals``: seats at tables
    that have not started are given up with the stake back, seats in running games are left to the bot
    to the end).  The chips stay in the account: they have no value and nothing is paid out.
    """
    User = get_user_model()
    with transaction.atomic():
        # The apps that keep the person's name lock what they keep first, in their own lock order.
        signals.account_closing.send(sender=User, user_id=user.pk)
        locked = User.objects.select_for_update().get(pk=user.pk)
        name = closed_name(locked)
        locked.username = name
        locked.email = ""
        locked.first_name = ""
        locked.last_name = ""
        locked.is_active = False
        locked.set_unusable_password()
        locked.save()
        Profile.objects.update_or_create(user_id=locked.pk, defaults={"closed_at": timezone.now()})
        signals.account_renamed.send(sender=User, user_id=locked.pk, name=name)
    for attr in ("username", "email", "first_name", "last_name", "is_active", "password"):
        setattr(user, attr, getattr(locked, attr))
    signals.account_closed.send(sender=User, user=user)
    return name


@login_required
def wallet(request: HttpRequest) -> HttpResponse:
    """The chips and every movement, newest first."""
    account = ledger.user_account(request.user.pk)
    # The tournament's name is read with the movement (one query a page): every movement says what it was.
    entries = (
        Entry.objects.filter(account=account).select_related("transaction", "transaction__tournament").order_by("-id")
    )
    page = Paginator(entries, MOVEMENTS_PER_PAGE).get_page(request.GET.get("pagina"))
    rows = [
        {
            "when": e.transaction.created_at,
            "what": ledger.describe(e.transaction),
            "amount": e.amount,
            "balance": e.balance_after,
            "table": e.transaction.table_id,
            "tournament": e.transaction.tournament_id,
        }
        for e in page
    ]
    return render(
        request,
        "accounts/wallet.html",
        {
            "account": account,
            "page": page,
            "rows": rows,
            "topup": ledger.topup_status(request.user.pk),
            "topup_chips": ledger.TOPUP_CHIPS,
            "topup_below": ledger.TOPUP_BELOW,
        },
    )


@login_required
@require_POST
def claim_topup(request: HttpRequest) -> HttpResponse:
    try:
        ledger.claim_topup(request.user.pk)
    except ledger.LedgerError as error:
        messages.error(request, str(error.message))
    else:
        messages.success(request, _("Recarga hecha: %(n)s fichas más.") % {"n": ledger.TOPUP_CHIPS})
    return redirect("accounts:wallet")
