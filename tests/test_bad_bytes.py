"""What no parameter of the site can hold is a 400 before any view reads it (``pocha_site.bad_bytes``), and
what one may hold (an ñ, a new line in a form, a name of digits searched) still reaches the views.
``tests/test_url_walk.py`` (slow tier) walks every URL with such values; these are its quick companions."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.test import Client

from pocha_site.bad_bytes import bad_cookies, bad_form, bad_path, bad_query, socket_refusal

SPANISH = "La dirección o el formulario llevan caracteres que no pueden llevar."
ENGLISH = "The address or the form holds characters it cannot hold."
NUL_COOKIE = 'sessionid="abcdefgh\\000ijk"'  # a NUL byte once Django reads the quoted cookie


@pytest.fixture
def signed_in(db: Any, django_user_model: Any) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(django_user_model.objects.create_user(username="paseante", password="cuarenta-bazas-2025"))
    return client


@pytest.mark.parametrize(
    "path",
    [
        "/jugador/%00/",
        "/jugador/a%00b/",
        "/jugador/a%1Fb/",
        "/jugador/a%7Fb/",
        "/jugador/%FF/",
        "/jugador/%C0%80/",  # an over-long NUL: not UTF-8
        "/clasificacion/?x=%00",
        "/clasificacion/?%00=x",
        "/clasificacion/?x=%FF",
        "/clasificacion/?next=a%0Ab",
        "/clasificacion/?x=a+%00",
        "/accounts/fichas/?pagina=99999999999999999999",  # past the database's integers
        "/accounts/fichas/?pagina=-9223372036854775809",
        "/accounts/fichas/?pagina=" + "9" * 5000,
        "/admin/auth/user/?groups=9223372036854775808",
    ],
)
def test_what_no_parameter_holds_is_refused_before_any_view(signed_in: Client, path: str) -> None:
    response = signed_in.get(path)
    assert (response.status_code, response.content.decode()) == (400, SPANISH)
    assert signed_in.post(path).status_code == 400


def test_a_form_or_a_cookie_with_a_nul_is_refused(signed_in: Client) -> None:
    for form in ({"username": "a\x00b"}, {"\x00": "x"}, {"next": "/\x00"}):
        assert signed_in.post("/accounts/login/", form).status_code == 400, form
    client = Client(raise_request_exception=False)
    client.cookies.load(NUL_COOKIE)
    assert client.get("/clasificacion/").status_code == 400  # the session's table is never asked
    assert Client(headers={"cookie": "csrftoken=a\x01b"}).get("/clasificacion/").status_code == 400


def test_the_refusal_is_in_the_readers_language(db: Any) -> None:
    response = Client(headers={"accept-language": "en"}).get("/clasificacion/?x=%00")
    assert (response.status_code, response.content.decode()) == (400, ENGLISH)


def test_what_a_parameter_may_hold_still_reaches_the_views(signed_in: Client, admin_client: Client) -> None:
    assert signed_in.get("/jugador/pe%C3%B1a/").status_code == 404  # a name may have an ñ: nobody has it
    assert signed_in.get("/clasificacion/?x=%C3%B1&y=a+b&z=").status_code == 200
    assert signed_in.get("/accounts/fichas/", {"pagina": str(2**63 - 1)}).status_code == 200  # the last page
    assert signed_in.get("/accounts/fichas/", {"pagina": "-" + "0" * 30 + "1"}).status_code == 200
    # a form's text may hold new lines and tabs: the login form answers, wrong password and all
    assert Client().post("/accounts/login/", {"username": "a\nb\tc", "password": "x"}).status_code == 200
    # the admin's search is free text: a name may be all digits
    assert admin_client.get("/admin/auth/user/", {"q": "9" * 30}).status_code == 200


def test_the_middleware_comes_before_anything_that_reads_the_user_or_the_form() -> None:
    middleware = django_settings.MIDDLEWARE
    ours = middleware.index("pocha_site.bad_bytes.RefuseBadBytes")
    for later in (
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
        "django.middleware.common.CommonMiddleware",
    ):
        assert ours < middleware.index(later), later
    # after the language is chosen (the refusal is in the reader's), which reads no database
    assert ours > middleware.index("django.middleware.locale.LocaleMiddleware")


def test_the_checks_themselves() -> None:
    assert bad_path(b"/jugador/%00/") and bad_path(b"/jugador/\xff/") and bad_path(b"/a%0d/")
    assert not bad_path(b"/jugador/pe%C3%B1a/") and not bad_path("/jugador/peña/".encode())
    assert bad_query(b"a=1&b=%00") and bad_query(b"a=%C3") and bad_query(b"a=%C3&b=%B1")
    assert not bad_query(b"a=%C3%B1&b=+x+") and not bad_query(b"")
    assert bad_query(b"id=9223372036854775808") and bad_query(b"id=-9223372036854775809")
    assert not bad_query(b"id=9223372036854775807") and not bad_query(b"q=99999999999999999999")
    assert not bad_query(b"id=0000000000000000000000001")  # leading zeros: the number is small
    assert not bad_query(b"id=-9223372036854775808") and bad_query(b"id=" + b"9" * 5000)  # int() refuses 4,301
    assert bad_cookies(NUL_COOKIE) and not bad_cookies("sessionid=abc; csrftoken=def")
    assert bad_form([("text", ["a\x00"])]) and not bad_form([("text", ["a\r\nb\tc"])])
    assert not bad_form([("_selected_action", ["1", "9223372036854775807"])])
    for rows in (["abc"], [""], ["0"], ["01"], ["-1"], ["1", "9223372036854775808"]):
        assert bad_form([("_selected_action", rows)]), rows


def _scope(path: str, raw_path: bytes | None = None, query: bytes = b"", cookie: str = "") -> dict[str, Any]:
    headers = [(b"cookie", cookie.encode("latin-1"))] if cookie else []
    return {"type": "websocket", "path": path, "raw_path": raw_path, "query_string": query, "headers": headers}


def test_a_sockets_handshake_is_checked_as_a_request() -> None:
    assert socket_refusal(_scope("/ws/mesa/1\x00/", b"/ws/mesa/1%00/")) == "path"
    assert socket_refusal(_scope("/ws/mesa/\ufffd/", b"/ws/mesa/%FF/")) == "path"
    assert socket_refusal(_scope("/ws/mesa/1\x00/")) == "path"  # a server that gives no raw path
    assert socket_refusal(_scope("/ws/mesa/1/", b"/ws/mesa/1/", b"x=%00")) == "query string"
    assert socket_refusal(_scope("/ws/mesa/1/", b"/ws/mesa/1/", cookie=NUL_COOKIE)) == "cookie"
    assert socket_refusal(_scope("/ws/mesa/1/", b"/ws/mesa/1/", b"x=%C3%B1", "sessionid=abc")) is None


@pytest.mark.parametrize(
    "path", ["/ws/mesa/1%00/", "/ws/torneo/1%00/", "/ws/torneo/" + "9" * 20 + "/", "/ws/mesa/01/", "/ws/nada/"]
)
def test_the_site_closes_such_a_handshake_before_it_opens(path: str) -> None:
    from pocha_site.asgi import application

    async def handshake() -> tuple[bool, Any]:
        communicator = WebsocketCommunicator(application, path, headers=[(b"origin", b"http://testserver")])
        communicator.scope["server"] = ("testserver", 80)
        connected, code = await communicator.connect()
        await communicator.disconnect()
        return connected, code

    assert async_to_sync(handshake)() == (False, 1000)  # closed before it opened (Daphne: a 403)
