from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.core.paginator import Paginator
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from accounts import ledger
from accounts.models import Entry, Transaction

MOVEMENTS_PER_PAGE = 25


def _safe_next(request: HttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return settings.LOGIN_REDIRECT_URL


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account (with its welcome chips) and sign the new user in straight away."""
    if request.user.is_authenticated:
        return redirect(_safe_next(request))
    form = UserCreationForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        with transaction.atomic():  # the user and their welcome grant, or neither
            user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, _("¡Bienvenido! Tienes %(n)s fichas de regalo para empezar.")
                         % {"n": f"{ledger.WELCOME_CHIPS:,}".replace(",", ".")})
        return redirect(_safe_next(request))
    return render(request, "accounts/signup.html", {"form": form, "next": _safe_next(request)})


def describe(record: Transaction) -> str:
    """What a movement was, in words."""
    table = record.table_id
    if record.kind == Transaction.Kind.WELCOME:
        return _("Regalo de bienvenida")
    if record.kind == Transaction.Kind.TOPUP:
        return _("Recarga diaria")
    if record.kind == Transaction.Kind.STAKE:
        return _("Apuesta en la mesa %(n)s") % {"n": table}
    if record.kind == Transaction.Kind.PAYOUT:
        return _("Bote de la mesa %(n)s") % {"n": table}
    if record.kind == Transaction.Kind.REFUND:
        return _("Devolución de la apuesta (mesa %(n)s)") % {"n": table}
    if record.note:
        return _("Ajuste: %(why)s") % {"why": record.note}
    return _("Ajuste")


@login_required
def wallet(request: HttpRequest) -> HttpResponse:
    """The chips and every movement, newest first."""
    account = ledger.user_account(request.user.pk)
    entries = (Entry.objects.filter(account=account).select_related("transaction").order_by("-id"))
    page = Paginator(entries, MOVEMENTS_PER_PAGE).get_page(request.GET.get("pagina"))
    rows = [{"when": e.transaction.created_at, "what": describe(e.transaction), "amount": e.amount,
             "balance": e.balance_after, "table": e.transaction.table_id} for e in page]
    return render(request, "accounts/wallet.html", {
        "account": account, "page": page, "rows": rows, "topup": ledger.topup_status(request.user.pk),
        "topup_chips": ledger.TOPUP_CHIPS, "topup_below": ledger.TOPUP_BELOW,
    })


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

