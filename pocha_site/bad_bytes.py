"""What no parameter of the site can hold, refused before any view or query reads it: a 400.

No name, code, number, token, date, address to go back to (``next``) or admin filter of the site holds a
NUL byte (which PostgreSQL refuses in a query: ``ValueError`` from psycopg, a 500), another control
character, or bytes that are not UTF-8 (``%ff``).  So:

* ``RefuseBadBytes``, a middleware near the top of ``MIDDLEWARE``, answers 400 to any request whose path
  or query string (keys and values, percent-decoded) holds such bytes, whose cookies hold a control
  character (a session cookie ``"\\000..."`` would reach the sessions' table), whose query holds a whole
  number past the database's integers (``bad_query``), whose form holds a NUL, or whose admin action names
  rows by anything but their numbers (``ROW_NUMBERS``).  Nothing below it (the session, the user, the
  CSRF check, the views, the admin's list filters and actions) sees such a request.
* ``RefuseBadSockets`` does the same for a socket's handshake (``pocha_site/asgi.py``): it is closed
  before it opens (Daphne answers 403), as ``deny_socket`` does for a socket path that matches no route
  (``games/live/routing.py``).

A path that holds only what its parameters may (``pocha_site/converters.py``) but matches no pattern, an
over-long name, a number past the database's range, stays a 404.  ``tests/test_url_walk.py`` walks every
URL of the site, the admin's and the sockets' with such values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.cookie import parse_cookie
from django.utils.translation import gettext as _

#: C0 control characters (NUL included) and DEL: in no name, code, number, token, address or filter.
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: The biggest whole number the database holds (PostgreSQL's bigint, SQLite's integer).
BIGGEST_INTEGER = 2**63 - 1
_WHOLE_NUMBER = re.compile(r"([+-]?)0*([0-9]+)")
#: The one query parameter whose value is free text (the admin's search).
FREE_TEXT = "q"
#: Form fields that hold only rows' numbers: the admin's ticked rows for an action, which Django's admin
#: hands to ``pk__in`` unchecked (``abc``, an empty one or twenty digits was a 500).
ROW_NUMBERS = {"_selected_action"}
_ROW_NUMBER = re.compile(r"[1-9][0-9]{0,18}")


def unreadable(raw: bytes) -> bool:
    """``raw`` (percent-decoded) is not UTF-8, or holds a control character."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return CONTROL.search(text) is not None


def bad_path(raw_path: bytes) -> bool:
    """A path as sent (percent-encoded) whose bytes no parameter can hold."""
    return unreadable(unquote_to_bytes(raw_path))


def bad_query(query: bytes) -> bool:
    """A query string as sent whose keys or values, decoded, no parameter can hold, or with a whole number
    past the database's integers in any parameter but a free-text search (``q``, where a name may be all
    digits): no row's number, page, size or amount is one (SQLite cannot even bind it: ``OverflowError``
    from the admin's ``?groups=99999999999999999999``).  Decoded whole first: the separators are ASCII,
    which never completes nor breaks a UTF-8 sequence, so this is each part's verdict."""
    if unreadable(unquote_to_bytes(query.replace(b"+", b" "))):
        return True
    for key, value in parse_qsl(query.decode("ascii", "replace"), keep_blank_values=True):
        if key != FREE_TEXT and past_the_integers(value):
            return True
    return False


def past_the_integers(value: str) -> bool:
    """``value`` is a whole number the database's integers cannot hold.  Its digits are counted before any
    is converted (``int`` refuses more than 4,300 of them: a ``ValueError``)."""
    match = _WHOLE_NUMBER.fullmatch(value.strip())
    if match is None:
        return False
    sign, digits = match.groups()
    limit = BIGGEST_INTEGER + 1 if sign == "-" else BIGGEST_INTEGER
    return len(digits) > len(str(limit)) or int(digits) > limit


def bad_cookies(header: str) -> bool:
    """A ``Cookie`` header with a value that holds a control character (Django reads ``"\\000"`` in a
    quoted cookie as a NUL byte)."""
    return any(CONTROL.search(key) or CONTROL.search(value) for key, value in parse_cookie(header).items())


def _as_bytes(text: str) -> bytes:
    """A WSGI (or test client) string, as the bytes it stands for (PEP 3333: latin-1)."""
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8")


def _request_path(request: HttpRequest) -> bytes:
    """The request's path as sent (percent-encoded, or not: ``bad_path`` decodes it)."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict) and scope.get("raw_path"):  # ASGI: the path as sent (Daphne gives it)
        return bytes(scope["raw_path"])
    # WSGI (and the test client): Django has decoded the path and written bytes that are not UTF-8 as
    # escapes again (``%FF``), which decoding once more finds.  (No parameter holds a ``%`` either.)
    return request.path_info.encode("utf-8")


def row_number(value: str) -> bool:
    """``value`` is a row's number as the site writes it (as ``pocha_site.converters.IdConverter``)."""
    return _ROW_NUMBER.fullmatch(value) is not None and int(value) <= BIGGEST_INTEGER


def bad_form(fields: Iterable[tuple[str, list[str]]]) -> bool:
    """A posted form with a NUL in a field's name or value (a text may hold new lines and tabs), or a field
    of ``ROW_NUMBERS`` that is not a row's number."""
    for key, values in fields:
        if "\x00" in key or any("\x00" in value for value in values):
            return True
        if key in ROW_NUMBERS and not all(row_number(value) for value in values):
            return True
    return False


def refusal(request: HttpRequest) -> str | None:
    """Why the request holds what no parameter can (a few words for the log), or None."""
    if bad_path(_request_path(request)):
        return "path"
    if bad_query(_as_bytes(request.META.get("QUERY_STRING", ""))):
        return "query string"
    if bad_cookies(request.META.get("HTTP_COOKIE", "")):
        return "cookie"
    if request.method == "POST" and bad_form(request.POST.lists()):
        return "form field"
    return None


class RefuseBadBytes:
    """Django middleware: 400 for a request whose path, query, cookies or form hold what none can."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if refusal(request) is not None:
            return HttpResponseBadRequest(
                _("La dirección o el formulario llevan caracteres que no pueden llevar."),
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)


# -- the sockets ---------------------------------------------------------------------------------------


async def deny_socket(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An ASGI socket application that closes the handshake before it opens (Daphne answers 403)."""
    message = await receive()
    if message.get("type") == "websocket.connect":
        await send({"type": "websocket.close"})


def socket_refusal(scope: dict[str, Any]) -> str | None:
    """Why a socket's handshake holds what no parameter can, or None."""
    raw_path = scope.get("raw_path")
    path = bytes(raw_path) if raw_path else str(scope.get("path", "")).encode("utf-8")
    if bad_path(path):
        return "path"
    if bad_query(bytes(scope.get("query_string") or b"")):
        return "query string"
    for name, value in scope.get("headers") or []:
        if bytes(name).lower() == b"cookie" and bad_cookies(bytes(value).decode("latin-1")):
            return "cookie"
    return None


class RefuseBadSockets:
    """ASGI middleware for the sockets: a handshake ``socket_refusal`` finds fault with is closed."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope.get("type") == "websocket" and socket_refusal(scope) is not None:
            return await deny_socket(scope, receive, send)
        return await self.app(scope, receive, send)
