"""Accounts people can keep: an optional e-mail, changing and recovering the password, limits on
guessing passwords and on making accounts, and closing an account for good (the name anonymised,
the games, rankings and chip ledger kept)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from live.helpers import play_to_the_end

from accounts import ledger
from accounts.models import Profile, Transaction
from games.models import Seat, Table
from games.table import access, actions, history
from leaderboard.models import PeriodScore
from pocha_site.settings import email_settings

pytestmark = pytest.mark.django_db

TOO_MANY = "Demasiados intentos fallidos. Espera unos minutos y vuelve a probar."
NEW_PASSWORD = "sota-caballo-rey-2026"


def make_user(name: str, password: str, email: str = "") -> Any:
    return get_user_model().objects.create_user(username=name, password=password, email=email)


def signup(client: Client, username: str, password: str, email: str | None = None, address: str = "10.1.1.1") -> Any:
    data = {"username": username, "password1": password, "password2": password}
    if email is not None:
        data["email"] = email
    return client.post("/accounts/signup/", data, REMOTE_ADDR=address)


def login(client: Client, username: str, password: str, address: str = "10.2.2.2") -> Any:
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


# -- sign-up with an optional e-mail -------------------------------------------------------


def test_signup_with_an_email_keeps_it(client, password):
    response = signup(client, "rosa", password, email="Rosa.Perez@Example.COM")
    assert response.status_code == 302
    user = get_user_model().objects.get(username="rosa")
    assert user.email == "Rosa.Perez@example.com"  # the domain's letter case does not matter
    assert logged_in(client)


def test_signup_without_an_email(client, password):
    page = client.get("/accounts/signup/").content.decode()
    assert 'name="email"' in page and "Correo electrónico (opcional)" in page
    assert signup(client, "sin_correo", password).status_code == 302
    assert get_user_model().objects.get(username="sin_correo").email == ""
    client.logout()
    assert signup(client, "blanco", password, email="", address="10.1.1.2").status_code == 302
    assert get_user_model().objects.get(username="blanco").email == ""


def test_signup_refuses_an_email_another_active_account_has(client, password):
    make_user("primera", password, email="compartido@example.com")
    response = signup(client, "segunda", password, email="COMPARTIDO@example.com")
    assert response.status_code == 200
    assert "Ya hay una cuenta con ese correo electrónico" in response.content.decode()
    assert not get_user_model().objects.filter(username="segunda").exists()


def test_a_closed_or_inactive_account_does_not_hold_its_email(client, password):
    old = make_user("antigua", password, email="libre@example.com")
    old.is_active = False
    old.save()
    assert signup(client, "nueva", password, email="libre@example.com").status_code == 302


def test_signup_refuses_a_badly_written_email(client, password):
    response = signup(client, "mal", password, email="esto-no-es-un-correo")
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert not get_user_model().objects.filter(username="mal").exists()


def test_nobody_signs_up_as_a_closed_account(client, password):
    response = signup(client, "Jugador-Borrado-7", password)
    assert response.status_code == 200
    assert "Ese nombre está reservado" in response.content.decode()


# -- limits --------------------------------------------------------------------------------


def test_login_failures_are_limited_per_address(settings, client, player, password):
    settings.POCHA_LOGIN_ADDRESS_ATTEMPTS = 3
    for name in ["uno", "dos", player.username]:  # several accounts guessed from one address
        response = login(client, name, "incorrecta", address="10.9.9.9")
        assert response.status_code == 200 and TOO_MANY not in response.content.decode()
    # The limit is reached: even the right password is refused from that address, clearly.
    response = login(client, player.username, password, address="10.9.9.9")
    assert response.status_code == 429
    assert TOO_MANY in response.content.decode()
    assert not logged_in(client)
    # ... whichever name is tried, so the answer does not tell who has an account.
    assert TOO_MANY in login(client, "nadie", "x", address="10.9.9.9").content.decode()
    # From another address the (once) mistyped account still gets in.
    assert login(client, player.username, password, address="10.9.9.10").status_code == 302
    assert logged_in(client)


def test_login_failures_are_limited_per_name_from_one_address_never_per_name_alone(settings, client, player, password):
    settings.POCHA_LOGIN_ATTEMPTS = 3
    for i in range(3):  # one account guessed from one address, in any letter case
        login(client, player.username.upper() if i == 1 else player.username, "incorrecta", address="10.3.0.1")
    response = login(client, player.username, password, address="10.3.0.1")
    assert response.status_code == 429 and TOO_MANY in response.content.decode()
    assert not logged_in(client)
    # Another account from the same address is not affected, nor the owner from their own address
    # (tests/test_login_limits.py: a stranger's guesses from many addresses never keep the owner out).
    other = make_user("otra", password)
    assert login(client, other.username, password, address="10.3.0.1").status_code == 302
    assert login(Client(), player.username, password, address="10.3.0.2").status_code == 302


def test_a_name_nobody_has_is_limited_the_same_way(settings, client):
    settings.POCHA_LOGIN_ATTEMPTS = 2
    first = login(client, "fantasma", "x", address="10.4.0.1").content.decode()
    assert "errorlist" in first and TOO_MANY not in first
    login(client, "fantasma", "x", address="10.4.0.1")
    assert TOO_MANY in login(client, "fantasma", "x", address="10.4.0.1").content.decode()


def test_the_right_password_before_the_limit_still_works(settings, client, player, password):
    settings.POCHA_LOGIN_ATTEMPTS = 3
    login(client, player.username, "incorrecta")
    login(client, player.username, "incorrecta")
    assert login(client, player.username, password).status_code == 302


def test_signups_are_limited_per_address(settings, password):
    settings.POCHA_SIGNUP_LIMIT = 2
    # Mistakes do not count: only accounts made.
    assert signup(Client(), "x", password, email="no-es-correo", address="10.5.0.1").status_code == 200
    for name in ["hermano1", "hermano2"]:
        assert signup(Client(), name, password, address="10.5.0.1").status_code == 302
    response = signup(Client(), "hermano3", password, address="10.5.0.1")
    assert response.status_code == 429
    assert "Se han creado demasiadas cuentas desde tu conexión" in response.content.decode()
    assert not get_user_model().objects.filter(username="hermano3").exists()
    assert signup(Client(), "vecino", password, address="10.5.0.2").status_code == 302


# -- password change and reset -------------------------------------------------------------


def test_changing_the_password(client, player, password):
    assert client.get("/accounts/contrasena/").status_code == 302  # a login first
    client.force_login(player)
    page = client.get("/accounts/contrasena/")
    assert page.status_code == 200 and 'name="old_password"' in page.content.decode()
    wrong = client.post(
        "/accounts/contrasena/",
        {"old_password": "incorrecta", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert wrong.status_code == 200 and "errorlist" in wrong.content.decode()
    response = client.post(
        "/accounts/contrasena/",
        {"old_password": password, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 302 and response["Location"] == "/accounts/contrasena/hecho/"
    assert client.get(response["Location"]).status_code == 200
    assert logged_in(client), "still signed in on this device"
    player.refresh_from_db()
    assert player.check_password(NEW_PASSWORD)
    assert login(Client(), player.username, NEW_PASSWORD).status_code == 302


def test_the_login_page_links_to_password_recovery(client):
    html = client.get("/accounts/login/").content.decode()
    assert "¿Has olvidado la contraseña?" in html and 'href="/accounts/recuperar/"' in html


def test_a_forgotten_password_is_recovered_by_email(client, password):
    user = make_user("olvidadiza", password, email="olvido@example.com")
    response = client.post("/accounts/recuperar/", {"email": "OLVIDO@example.com"})
    assert response.status_code == 302 and response["Location"] == "/accounts/recuperar/enviado/"
    assert client.get(response["Location"]).status_code == 200
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["olvido@example.com"]
    assert "contraseña nueva" in message.subject
    assert "Hola, olvidadiza" in message.body
    link = re.search(r"http://testserver(/accounts/recuperar/[^/\s]+/[^/\s]+/)", message.body)
    assert link, message.body
    # Django swaps the token for a session key and shows the form on a clean URL.
    step = client.get(link.group(1))
    assert step.status_code == 302
    form = client.get(step["Location"])
    assert form.status_code == 200 and 'name="new_password1"' in form.content.decode()
    done = client.post(step["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"] == "/accounts/recuperar/hecho/"
    assert client.get(done["Location"]).status_code == 200
    assert login(Client(), user.username, NEW_PASSWORD).status_code == 302
    assert login(Client(), user.username, password).status_code == 200
    # The link works once.
    assert "ya no sirve" in client.get(link.group(1), follow=True).content.decode()


def test_a_reset_for_an_unknown_email_says_the_same_and_sends_nothing(client):
    response = client.post("/accounts/recuperar/", {"email": "nadie@example.com"})
    assert response.status_code == 302 and response["Location"] == "/accounts/recuperar/enviado/"
    assert mail.outbox == []


def test_reset_requests_are_limited(settings, password):
    settings.POCHA_RESET_LIMIT = 2
    make_user("pide", password, email="pide@example.com")
    for _ in range(2):
        assert (
            Client().post("/accounts/recuperar/", {"email": "pide@example.com"}, REMOTE_ADDR="10.6.0.1").status_code
            == 302
        )
    response = Client().post("/accounts/recuperar/", {"email": "otro@example.com"}, REMOTE_ADDR="10.6.0.1")
    assert response.status_code == 429
    assert "demasiados correos" in response.content.decode()
    # One inbox cannot be flooded from many addresses either.
    assert (
        Client().post("/accounts/recuperar/", {"email": "pide@example.com"}, REMOTE_ADDR="10.6.0.2").status_code == 429
    )
    assert len(mail.outbox) == 2
    assert (
        Client().post("/accounts/recuperar/", {"email": "otro@example.com"}, REMOTE_ADDR="10.6.0.3").status_code == 302
    )


# -- e-mail settings -----------------------------------------------------------------------


def test_email_goes_to_the_console_without_a_host():
    assert email_settings({}) == {
        "EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend",
        "DEFAULT_FROM_EMAIL": "La Pocha <noreply@localhost>",
        "SERVER_EMAIL": "La Pocha <noreply@localhost>",
    }
    assert email_settings({"EMAIL_HOST": " "})["EMAIL_BACKEND"].endswith("console.EmailBackend")


def test_email_goes_by_smtp_with_a_host():
    smtp = email_settings(
        {
            "EMAIL_HOST": "smtp.example.com",
            "EMAIL_HOST_USER": "pocha",
            "EMAIL_HOST_PASSWORD": "secreto",
            "DEFAULT_FROM_EMAIL": "Pocha <hola@pocha.example>",
        }
    )
    assert smtp == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "smtp.example.com",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "pocha",
        "EMAIL_HOST_PASSWORD": "secreto",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
        "EMAIL_TIMEOUT": 10,
        "DEFAULT_FROM_EMAIL": "Pocha <hola@pocha.example>",
        "SERVER_EMAIL": "Pocha <hola@pocha.example>",
    }
    ssl = email_settings({"EMAIL_HOST": "smtp.example.com", "EMAIL_USE_SSL": "true"})
    assert (ssl["EMAIL_PORT"], ssl["EMAIL_USE_SSL"], ssl["EMAIL_USE_TLS"]) == (465, True, False)
    plain = email_settings({"EMAIL_HOST": "localhost", "EMAIL_USE_TLS": "false", "EMAIL_PORT": "2525"})
    assert (plain["EMAIL_PORT"], plain["EMAIL_USE_TLS"], plain["EMAIL_USE_SSL"]) == (2525, False, False)
    assert email_settings({"EMAIL_HOST": "localhost", "EMAIL_USE_TLS": "false"})["EMAIL_PORT"] == 25
    with pytest.raises(ImproperlyConfigured):
        email_settings({"EMAIL_HOST": "smtp.example.com", "EMAIL_USE_TLS": "true", "EMAIL_USE_SSL": "true"})


def test_the_site_sends_to_the_console_by_default():
    from pocha_site import settings as site_settings

    if not site_settings.ENV.get("EMAIL_HOST"):
        assert site_settings.EMAIL_BACKEND == "django.core.mail.backends.console.EmailBackend"


# -- the account page ----------------------------------------------------------------------


def test_the_account_page_needs_a_login_and_is_linked_from_the_header(client, player):
    response = client.get("/accounts/cuenta/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    client.force_login(player)
    assert 'href="/accounts/cuenta/"' in client.get("/").content.decode()
    page = client.get("/accounts/cuenta/").content.decode()
    assert 'href="/accounts/contrasena/"' in page
    assert 'action="/accounts/cuenta/cerrar/"' in page
    assert "no tienen valor en dinero" in page


def test_changing_and_removing_the_email(client, player, password):
    make_user("vecina", password, email="vecina@example.com")
    client.force_login(player)
    url = "/accounts/cuenta/"
    wrong = client.post(url, {"email-email": "marisa@example.com", "email-password": "incorrecta"})
    assert wrong.status_code == 200 and "La contraseña no es correcta" in wrong.content.decode()
    taken = client.post(url, {"email-email": "Vecina@Example.com", "email-password": password})
    assert "Ya hay una cuenta con ese correo electrónico" in taken.content.decode()
    bad = client.post(url, {"email-email": "marisa.example.com", "email-password": password})
    assert bad.status_code == 200 and "errorlist" in bad.content.decode()
    player.refresh_from_db()
    assert player.email == ""
    assert client.post(url, {"email-email": "marisa@example.com", "email-password": password}).status_code == 302
    player.refresh_from_db()
    assert player.email == "marisa@example.com"
    assert "marisa@example.com" in client.get(url).content.decode()
    assert client.post(url, {"email-email": "", "email-password": password}).status_code == 302
    player.refresh_from_db()
    assert player.email == ""


# -- closing an account --------------------------------------------------------------------


@pytest.fixture
def short_games(monkeypatch, settings) -> None:
    """Games of one round (one card each), bots that play at once."""
    import importlib

    settings.POCHA_BOT_DELAY = 0
    real = importlib.import_module("games.engine.schedule").schedule
    monkeypatch.setattr(importlib.import_module("games.engine.presets"), "schedule", lambda players: real(players)[:1])


def close(client: Client, password: str, confirm: bool = True) -> Any:
    data = {"close-password": password}
    if confirm:
        data["close-confirm"] = "on"
    return client.post("/accounts/cuenta/cerrar/", data)


def test_closing_needs_the_password_and_the_confirmation(client, player, password):
    client.force_login(player)
    wrong = close(client, "incorrecta")
    assert wrong.status_code == 200 and "La contraseña no es correcta" in wrong.content.decode()
    unconfirmed = close(client, password, confirm=False)
    assert unconfirmed.status_code == 200 and "Marca la casilla" in unconfirmed.content.decode()
    assert client.get("/accounts/cuenta/cerrar/").status_code == 405
    player.refresh_from_db()
    assert player.is_active and player.username == "marisa"
    assert logged_in(client)


def test_closing_an_account_anonymises_it_and_keeps_the_games_and_the_chips(short_games, password, monkeypatch):
    User = get_user_model()
    leaving = make_user("esperanza", password, email="esperanza@example.com")
    friend, host, guest = (make_user(name, password) for name in ("amigo", "anfitrion", "invitada"))

    # A finished public quick game (it counts in the rankings) against bots.
    finished = actions.do_create_table(leaving, 3, quick=True, stake=100)
    actions.do_start(finished.pk, leaving)
    finished = play_to_the_end(finished.pk)
    assert finished.status == Table.Status.FINISHED
    assert PeriodScore.objects.filter(user=leaving).exists()
    # Seats of every kind at once, as an account may still hold from before one live table each (the
    # rule is set aside to seat them): a running game (the bot will play the seat), a waiting public
    # table with a stake held, and a private one they host with a guest.
    with monkeypatch.context() as before_the_rule:
        before_the_rule.setattr(access, "live_table", lambda *args, **kwargs: None)
        running = actions.do_create_table(friend, 3, stake=100)
        actions.do_take_seat(running.pk, leaving)
        actions.do_start(running.pk, friend)
        waiting = actions.do_create_table(host, 4, stake=500)
        actions.do_take_seat(waiting.pk, leaving)
        hosted = actions.do_create_private_table(leaving, 4, 500, True)
        actions.do_take_seat(hosted.pk, guest, code=hosted.code)
    waiting_seat = Seat.objects.get(table=waiting, user=leaving)
    hosted_seats = list(Seat.objects.filter(table=hosted))
    chips_before = ledger.balance(leaving.pk)
    guest_before = ledger.balance(guest.pk)
    assert ledger.audit() == []

    client = Client()
    client.force_login(leaving)
    response = close(client, password)
    assert response.status_code == 302 and response["Location"] == "/"
    assert not logged_in(client)
    assert "Tu cuenta está cerrada" in client.get("/").content.decode()
    assert client.get("/accounts/cuenta/").status_code == 302  # signed out

    gone = User.objects.get(pk=leaving.pk)
    name = f"jugador-borrado-{leaving.pk}"
    assert gone.username == name and gone.email == "" and not gone.is_active
    assert not gone.has_usable_password()
    assert Profile.objects.get(user=gone).closed_at is not None
    assert not User.objects.filter(username="esperanza").exists()
    # Nobody can sign in as them, by either name.
    assert login(Client(), "esperanza", password).status_code == 200
    assert login(Client(), name, password).status_code == 200
    # No password-reset mail for the old address either.
    Client().post("/accounts/recuperar/", {"email": "esperanza@example.com"})
    assert mail.outbox == []

    # Every seat they ever had shows the new name; the waiting seats are given up, the stakes back.
    assert set(Seat.objects.filter(user=gone).values_list("name", flat=True)) == {name}
    assert not Seat.objects.filter(pk=waiting_seat.pk).exists()
    assert Transaction.objects.filter(key=f"refund:seat:{waiting_seat.pk}").exists()
    assert Table.objects.get(pk=hosted.pk).status == Table.Status.CANCELLED  # the host left: called off
    for seat in hosted_seats:
        assert Transaction.objects.filter(key=f"refund:seat:{seat.pk}").exists()
    assert ledger.balance(gone.pk) == chips_before + 500 + 500, "the chips stay, with both stakes back"
    assert ledger.balance(guest.pk) == guest_before + 500
    # The running game goes on, the bot playing their seat (still theirs) to the end.
    seat = Seat.objects.get(table=running, user=gone)
    assert seat.left and seat.away and seat.name == name
    running_row = Table.objects.get(pk=running.pk)
    assert "names" not in running_row.state  # the table's state keeps no names: the seats do
    assert history.record(running_row, include_current=True)["players"][seat.position] == name
    assert ledger.audit() == []
    running = play_to_the_end(running.pk)
    assert running.status == Table.Status.FINISHED
    assert ledger.audit() == []

    # The finished game, its record and the rankings show the anonymised name, never the old one.
    viewer = Client()
    viewer.force_login(friend)
    for url in [f"/mesa/{finished.pk}/", f"/mesa/{finished.pk}/partida.json"]:
        page = viewer.get(url)
        assert page.status_code == 200, url
        text = page.content.decode()
        assert name in text and "esperanza" not in text, url
    record = json.loads(viewer.get(f"/mesa/{finished.pk}/partida.json").content)
    assert name in record["players"]
    assert PeriodScore.objects.filter(user__username=name).exists()
    assert not PeriodScore.objects.filter(user__username="esperanza").exists()


def test_a_closed_accounts_old_name_and_email_are_free_again(client, password):
    leaving = make_user("repetido", password, email="repetido@example.com")
    closer = Client()
    closer.force_login(leaving)
    assert close(closer, password).status_code == 302
    assert signup(client, "repetido", password, email="repetido@example.com").status_code == 302
    assert get_user_model().objects.filter(username="repetido", is_active=True).count() == 1


def test_a_taken_anonymous_name_gets_a_number_more(password):
    from accounts.views import close_account

    leaving = make_user("choca", password)
    squatter = make_user(f"jugador-borrado-{leaving.pk}", password)  # made before the prefix was reserved
    assert close_account(leaving) == f"jugador-borrado-{leaving.pk}-2"
    squatter.refresh_from_db()
    assert squatter.username == f"jugador-borrado-{leaving.pk}" and squatter.is_active
