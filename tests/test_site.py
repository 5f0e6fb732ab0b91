"""The site shell: pages, languages, accounts, and configuration from the environment."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from channels.layers import get_channel_layer
from channels.testing import HttpCommunicator
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders
from django.db import connection

from pocha_site.settings import channel_layer_settings, database_settings

BASE_DIR = Path(__file__).resolve().parent.parent


def csrf_token_from(html: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert match, "page has no CSRF token"
    return match.group(1)


# --- Home page and languages -----------------------------------------------------------------


@pytest.mark.django_db
def test_home_is_in_spanish_by_default(client):
    response = client.get("/")
    html = response.content.decode()
    assert response.status_code == 200
    assert '<html lang="es">' in html
    assert "Pide exactamente las bazas que vas a ganar" in html
    assert "Crear cuenta" in html and "Entrar" in html and "Jugar" in html


@pytest.mark.django_db
def test_home_is_in_english_for_an_english_browser(client):
    response = client.get("/", headers={"accept-language": "en-GB,en;q=0.9"})
    html = response.content.decode()
    assert response.status_code == 200
    assert '<html lang="en">' in html
    assert "Bid exactly the tricks (bazas) you will win" in html
    assert "Sign up" in html and "Log in" in html and "Play" in html
    assert "Pide exactamente" not in html


@pytest.mark.django_db
def test_language_switcher_sets_the_language_cookie(client):
    home = client.get("/", headers={"accept-language": "es"}).content.decode()
    assert 'action="/i18n/setlang/"' in home

    response = client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert response.status_code == 302
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "en"

    # The cookie wins over the browser's own preference.
    html = client.get("/", headers={"accept-language": "es"}).content.decode()
    assert "How to play" in html


@pytest.mark.django_db
def test_every_spanish_string_on_the_home_page_is_translated(client):
    english = client.get("/", headers={"accept-language": "en"}).content.decode()
    for spanish in ["Cómo se juega", "Puntuación", "Si aciertas", "Si fallas", "Las fichas son virtuales"]:
        assert spanish not in english


def test_the_page_loads_vendored_htmx_and_its_websocket_extension(client):
    assert finders.find("vendor/htmx.min.js")
    assert finders.find("vendor/htmx-ext-ws.js")
    assert finders.find("css/pocha.css")


@pytest.mark.django_db
def test_home_page_references_static_assets(client):
    html = client.get("/").content.decode()
    assert 'src="/static/vendor/htmx.min.js"' in html
    assert 'src="/static/vendor/htmx-ext-ws.js"' in html
    assert 'name="viewport"' in html


# --- Accounts ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_signup_creates_a_user_and_logs_them_in(client, password):
    response = client.post("/accounts/signup/", {"username": "paco", "password1": password, "password2": password})
    assert response.status_code == 302
    assert response["Location"] == "/"

    user = get_user_model().objects.get(username="paco")
    assert user.check_password(password)
    assert client.session["_auth_user_id"] == str(user.pk)

    html = client.get("/").content.decode()
    assert "paco" in html and "Salir" in html
    assert 'href="/accounts/signup/"' not in html


@pytest.mark.django_db
def test_a_bad_signup_shows_errors_and_creates_nobody(client, password):
    response = client.post(
        "/accounts/signup/", {"username": "paco", "password1": password, "password2": password + "x"}
    )
    assert response.status_code == 200
    assert 'class="errorlist' in response.content.decode()
    assert not get_user_model().objects.exists()
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_signup_refuses_a_taken_username(client, player, password):
    response = client.post(
        "/accounts/signup/", {"username": player.username, "password1": password, "password2": password}
    )
    assert response.status_code == 200
    assert 'class="errorlist' in response.content.decode()
    assert get_user_model().objects.count() == 1


@pytest.mark.django_db
def test_signup_does_not_redirect_off_site(client, password):
    response = client.post(
        "/accounts/signup/",
        {"username": "paco", "password1": password, "password2": password, "next": "https://evil.example/"},
    )
    assert response["Location"] == "/"


@pytest.mark.django_db
def test_login_and_logout_with_real_csrf_tokens(player, password):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    login_page = browser.get("/accounts/login/").content.decode()
    response = browser.post(
        "/accounts/login/",
        {"username": player.username, "password": password, "csrfmiddlewaretoken": csrf_token_from(login_page)},
    )
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert browser.session["_auth_user_id"] == str(player.pk)

    home = browser.get("/").content.decode()
    assert 'action="/accounts/logout/"' in home
    response = browser.post("/accounts/logout/", {"csrfmiddlewaretoken": csrf_token_from(home)})
    assert response.status_code == 302
    assert "_auth_user_id" not in browser.session
    assert "Entrar" in browser.get("/").content.decode()


@pytest.mark.django_db
def test_logout_is_not_possible_with_a_get(client, player):
    client.force_login(player)
    assert client.get("/accounts/logout/").status_code == 405
    assert client.session["_auth_user_id"] == str(player.pk)


@pytest.mark.django_db
def test_login_with_a_wrong_password_shows_an_error(client, player):
    response = client.post("/accounts/login/", {"username": player.username, "password": "nope"})
    assert response.status_code == 200
    assert 'class="errorlist' in response.content.decode()
    assert "_auth_user_id" not in client.session


# --- Configuration from the environment -------------------------------------------------------


def test_the_site_stores_passwords_with_djangos_pbkdf2_hasher():
    """The suite hashes with MD5 for speed (tests/conftest.py); the site itself keeps Django's default."""
    from django.conf import global_settings

    import pocha_site.settings as site

    hashers = getattr(site, "PASSWORD_HASHERS", global_settings.PASSWORD_HASHERS)
    assert hashers[0] == "django.contrib.auth.hashers.PBKDF2PasswordHasher"


def test_without_environment_the_database_is_a_local_sqlite_file():
    database = database_settings({})["default"]
    assert database["ENGINE"] == "django.db.backends.sqlite3"
    assert Path(database["NAME"]) == BASE_DIR / "db.sqlite3"
    assert database["OPTIONS"] == {"timeout": 20, "transaction_mode": "IMMEDIATE"}


def test_database_url_selects_postgresql_with_persistent_connections():
    database = database_settings({"DATABASE_URL": "postgres://pocha:secret@db.internal:5433/pocha"})["default"]
    assert database["ENGINE"] == "django.db.backends.postgresql"
    assert (database["HOST"], database["PORT"], database["NAME"]) == ("db.internal", 5433, "pocha")
    assert database["CONN_MAX_AGE"] == 600
    assert database["CONN_HEALTH_CHECKS"] is True
    # the server processes keep no connection past an HTTP request (each runs in a thread of its own)
    served = database_settings({"DATABASE_URL": "postgres://pocha@db/pocha", "POCHA_CONN_MAX_AGE": "0"})
    assert served["default"]["CONN_MAX_AGE"] == 0
    # ... and return it to a pool instead of closing it (a new PostgreSQL backend per request before)
    assert served["default"]["OPTIONS"]["pool"]["max_size"] == 24
    assert "pool" not in database.get("OPTIONS", {})  # the worker and beat keep theirs (CONN_MAX_AGE)
    unpooled = database_settings(
        {"DATABASE_URL": "postgres://pocha@db/pocha", "POCHA_CONN_MAX_AGE": "0", "POCHA_DB_POOL_MAX": "0"}
    )
    assert "pool" not in unpooled["default"].get("OPTIONS", {})


def test_the_server_processes_keep_no_connection_past_a_request():
    supervised = (BASE_DIR / "deploy" / "supervisord.conf").read_text()
    asgi = supervised[supervised.index("[fcgi-program:asgi]") :].split("\n[", 1)[0]
    assert 'environment=POCHA_CONN_MAX_AGE="0"' in asgi
    assert "Environment=POCHA_CONN_MAX_AGE=0" in (BASE_DIR / "deploy" / "systemd" / "pocha-asgi@.service").read_text()


def test_channel_layer_is_in_memory_without_redis_and_redis_with_it():
    assert channel_layer_settings({})["default"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"
    layer = channel_layer_settings({"REDIS_URL": "redis://cache:6379/2"})["default"]
    assert layer["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    (host,) = layer["CONFIG"]["hosts"]
    assert host["address"] == "redis://cache:6379/2"
    # longer than the consumers' 5-second blocking wait for events (redis-py 8 defaults to 5 s)
    assert host["socket_timeout"] > 5


def load_settings_in_a_fresh_process(env: dict[str, str]) -> dict:
    """Import the real settings module in a clean interpreter with exactly this environment."""
    script = (
        "import json; from pocha_site import settings as s; print(json.dumps({"
        "'db': s.DATABASES['default']['ENGINE'], 'layer': s.CHANNEL_LAYERS['default']['BACKEND'],"
        "'broker': s.CELERY_BROKER_URL, 'celery_clock': s.POCHA_CELERY_CLOCK,"
        "'hosts': s.ALLOWED_HOSTS, 'debug': s.DEBUG, 'bot_delay': s.POCHA_BOT_DELAY}))"
    )
    clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY"}}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=BASE_DIR, env={**clean, **env}, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


def test_settings_module_without_environment_runs_on_one_machine():
    loaded = load_settings_in_a_fresh_process({})
    assert loaded["db"] == "django.db.backends.sqlite3"
    assert loaded["layer"] == "channels.layers.InMemoryChannelLayer"
    assert loaded["broker"] is None and loaded["celery_clock"] is False
    assert loaded["debug"] is True
    assert loaded["hosts"] == ["127.0.0.1", "localhost", "testserver"]


def test_settings_module_with_services_uses_postgresql_redis_and_celery():
    loaded = load_settings_in_a_fresh_process(
        {
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/pocha",
            "REDIS_URL": "redis://127.0.0.1:6379/0",
            "DEBUG": "false",
            "SECRET_KEY": "a-real-secret",
            "ALLOWED_HOSTS": "pocha.example, www.pocha.example",
            "POCHA_BOT_DELAY": "0",
        }
    )
    assert loaded["db"] == "django.db.backends.postgresql"
    assert loaded["layer"] == "channels_redis.core.RedisChannelLayer"
    assert loaded["broker"] == "redis://127.0.0.1:6379/0" and loaded["celery_clock"] is True
    assert loaded["debug"] is False
    assert loaded["hosts"] == ["pocha.example", "www.pocha.example"]
    assert loaded["bot_delay"] == 0.0


def test_settings_refuse_the_development_secret_key_in_production():
    with pytest.raises(subprocess.CalledProcessError) as error:
        load_settings_in_a_fresh_process({"DEBUG": "0"})
    assert "SECRET_KEY" in error.value.stderr


# --- The services this run is configured with actually work ------------------------------------


@pytest.mark.django_db
def test_the_database_in_use_matches_the_environment():
    expected = "postgresql" if os.environ.get("DATABASE_URL") else "sqlite"
    assert connection.vendor == expected
    get_user_model().objects.create_user(username="round-trip")
    assert get_user_model().objects.filter(username="round-trip").exists()


async def test_the_channel_layer_in_use_matches_the_environment_and_delivers():
    layer = get_channel_layer()
    expected = "RedisChannelLayer" if os.environ.get("REDIS_URL") else "InMemoryChannelLayer"
    assert type(layer).__name__ == expected

    channel = await layer.new_channel()
    await layer.group_add("table-test", channel)
    await layer.group_send("table-test", {"type": "table.changed", "seq": 7})
    assert await layer.receive(channel) == {"type": "table.changed", "seq": 7}
    await layer.group_discard("table-test", channel)


async def test_the_asgi_application_serves_the_home_page():
    from pocha_site.asgi import application

    communicator = HttpCommunicator(
        application, "GET", "/", headers=[(b"host", b"testserver"), (b"accept-language", b"es")]
    )
    response = await communicator.get_response()
    assert response["status"] == 200
    assert b"Pide exactamente" in response["body"]
