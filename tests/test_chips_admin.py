"""Operators' tools for chips: the read-only admin, a recorded adjustment and the books' audit."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from accounts import ledger
from accounts.models import Account, Transaction

pytestmark = pytest.mark.django_db


def test_an_adjustment_is_a_ledger_transaction_with_its_reason(django_user_model, capsys) -> None:
    user = django_user_model.objects.create_user(username="ajustada", password=None)
    call_command("adjust_chips", "ajustada", "250", "compensación por la caída del servidor")
    assert ledger.balance(user.pk) == 5_250
    record = Transaction.objects.get(kind="adjustment")
    assert record.note == "compensación por la caída del servidor"
    assert sorted(record.entries.values_list("amount", flat=True)) == [-250, 250]
    call_command("adjust_chips", "ajustada", "-5250", "cuenta vaciada por fraude")
    assert ledger.balance(user.pk) == 0
    with pytest.raises(CommandError, match="has 0 chips"):
        call_command("adjust_chips", "ajustada", "-1", "no puede quedar en negativo")
    with pytest.raises(CommandError, match="no such player"):
        call_command("adjust_chips", "nadie", "10", "x")
    assert ledger.balance(user.pk) == 0 and Transaction.objects.filter(kind="adjustment").count() == 2
    client = Client()
    client.force_login(user)
    page = client.get("/accounts/fichas/").content.decode()
    assert "Ajuste: cuenta vaciada por fraude" in page and "Ajuste: compensación por la caída del servidor" in page


def test_the_audit_passes_on_sound_books_and_names_every_broken_one(django_user_model) -> None:
    user = django_user_model.objects.create_user(username="auditada", password=None)
    call_command("check_chips")
    Account.objects.filter(user=user).update(balance=4_999)  # a balance changed behind the ledger's back
    with pytest.raises(CommandError, match="problem"):
        call_command("check_chips")
    problems = ledger.audit()
    assert any("sum to -1" in p for p in problems) and any("entries sum to 5000" in p for p in problems)


def test_moderators_see_accounts_and_movements_but_cannot_edit_them(django_user_model) -> None:
    player = django_user_model.objects.create_user(username="jugadora", password=None)
    staff = django_user_model.objects.create_superuser(username="moderadora", password="x", email="")
    client = Client()
    client.force_login(staff)
    accounts = client.get("/admin/accounts/account/")
    assert accounts.status_code == 200 and "jugadora" in accounts.content.decode()
    record = Transaction.objects.get(key=f"welcome:{player.pk}")
    detail = client.get(f"/admin/accounts/transaction/{record.pk}/change/")
    assert detail.status_code == 200 and "welcome:" in detail.content.decode()
    assert client.get("/admin/accounts/account/add/").status_code == 403
    account = Account.objects.get(user=player)
    response = client.post(f"/admin/accounts/account/{account.pk}/change/", {"balance": "999999", "kind": "user"})
    assert response.status_code == 403 and Account.objects.get(pk=account.pk).balance == 5_000
