"""The chips, stakes and private tables speak English to an English browser."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts import ledger

pytestmark = pytest.mark.django_db


def english(user) -> Client:
    client = Client(headers={"accept-language": "en"})
    client.force_login(user)
    return client


def test_lobby_wallet_and_refusals_in_english(django_user_model) -> None:
    user = django_user_model.objects.create_user(username="alice", password=None)
    client = english(user)
    home = client.get("/").content.decode()
    for text in (
        "Private table",
        "How much do you stake?",
        "Free",
        "Create private table",
        "Table code",
        "Join",
        "5,000</span> chips",
    ):
        assert text in home, text
    assert "Mesa privada" not in home
    wallet = client.get("/accounts/fichas/").content.decode()
    assert "Your wallet" in wallet and "Welcome gift" in wallet and "+5,000" in wallet
    ledger.adjust(user.pk, -4_990, "test", "en-poor")
    response = client.post("/jugar/", {"size": "4", "stake": "100"}, follow=True)
    assert "Not enough chips: you have 10 and this table&#x27;s stake is 100." in response.content.decode()
    response = client.post("/mesas/codigo/", {"code": "abc"}, follow=True)
    assert "A table code is five letters" in response.content.decode()
