"""Failed logins are limited per (name, address) and per address, never per name alone: a stranger's wrong
passwords for someone's public name, from other addresses, never keep the owner out (it used to: ten of them
locked the name for five minutes, for ever repeatable).  Tested with Django's client and through Daphne
started as ``make up`` starts it, behind a trusted proxy (so that each request can come from its own
address)."""

from __future__ import annotations

from typing import Any

import pytest
import realstack
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from realstack import proxied_stack  # noqa: F401 (a fixture)

PASSWORD = "cuarenta-bazas-2025"
TOO_MANY = "Demasiados intentos fallidos"


def login(client: Client, name: str, password: str, address: str) -> Any:
    return client.post("/accounts/login/", {"username": name, "password": password}, REMOTE_ADDR=address)


@pytest.mark.django_db
def test_a_strangers_hundred_wrong_passwords_never_keep_the_owner_out() -> None:
    owner = get_user_model().objects.create_user(username="dueña", password=PASSWORD)
    for i in range(100):
        response = login(Client(), "Dueña" if i % 2 else "dueña", f"intento-{i}", address=f"10.50.{i // 50}.{i}")
        assert response.status_code == 200 and TOO_MANY not in response.content.decode(), i
    owner_client = Client()
    assert login(owner_client, "dueña", PASSWORD, address="192.0.2.10").status_code == 302
    assert owner_client.session["_auth_user_id"] == str(owner.pk)


@pytest.mark.django_db
def test_a_name_from_one_address_and_one_address_over_every_name_are_limited(settings: Any) -> None:
    settings.POCHA_LOGIN_ATTEMPTS = 3
    settings.POCHA_LOGIN_ADDRESS_ATTEMPTS = 5
    get_user_model().objects.create_user(username="rosa", password=PASSWORD)
    get_user_model().objects.create_user(username="lola", password=PASSWORD)
    for _ in range(3):
        login(Client(), "rosa", "mal", address="10.60.0.1")
    refused = login(Client(), "rosa", PASSWORD, address="10.60.0.1")
    assert refused.status_code == 429 and TOO_MANY in refused.content.decode()
    assert login(Client(), "rosa", PASSWORD, address="10.60.0.2").status_code == 302  # from elsewhere: in
    assert login(Client(), "lola", PASSWORD, address="10.60.0.1").status_code == 302  # another name: in
    for _ in range(2):  # five failures from the address, over two names: the address is refused
        login(Client(), "lola", "mal", address="10.60.0.1")
    assert login(Client(), "lola", PASSWORD, address="10.60.0.1").status_code == 429
    assert login(Client(), "lola", PASSWORD, address="10.60.0.3").status_code == 302


@pytest.mark.django_db
def test_a_wrong_current_password_on_the_account_pages_counts_for_the_name_and_address(settings: Any) -> None:
    settings.POCHA_LOGIN_ATTEMPTS = 2
    user = get_user_model().objects.create_user(username="marta", password=PASSWORD)
    borrowed = Client(REMOTE_ADDR="10.70.0.1")
    borrowed.force_login(user)
    change = {"old_password": "mal", "new_password1": "sota-caballo-rey-9", "new_password2": "sota-caballo-rey-9"}
    for _ in range(2):
        assert "errorlist" in borrowed.post("/accounts/contrasena/", change).content.decode()
    change["old_password"] = PASSWORD  # even the right one, now, from this address
    assert TOO_MANY in borrowed.post("/accounts/contrasena/", change).content.decode()
    assert login(Client(), "marta", PASSWORD, address="10.70.0.1").status_code == 429
    assert login(Client(), "marta", PASSWORD, address="10.70.0.2").status_code == 302


# -- through the server, behind a trusted proxy --------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_through_the_server_a_hundred_wrong_passwords_leave_the_owner_in(proxied_stack: realstack.Stack) -> None:
    get_user_model().objects.create_user(username="victima", password=PASSWORD)
    for i in range(100):
        status, _ = proxied_stack.client().post(
            "/accounts/login/",
            {"username": "victima", "password": f"intento-{i}"},
            headers={"X-Forwarded-For": f"198.51.{100 + i // 100}.{i % 100 + 1}"},
        )
        assert status == 200, (i, proxied_stack.log())
    owner = proxied_stack.client()
    status, _ = owner.post(
        "/accounts/login/", {"username": "victima", "password": PASSWORD}, headers={"X-Forwarded-For": "192.0.2.77"}
    )
    assert status == 302, proxied_stack.log()
    # ... while the stranger's own address, for that name, is stopped after ten
    realstack.clear_of_a_window_turn(settings.POCHA_LOGIN_WINDOW)
    stranger = [
        proxied_stack.client().post(
            "/accounts/login/",
            {"username": "victima", "password": PASSWORD if i == 10 else "mal"},
            headers={"X-Forwarded-For": "203.0.113.66"},
        )[0]
        for i in range(11)
    ]
    assert stranger == [200] * 10 + [429]
