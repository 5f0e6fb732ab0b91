"""Every URL of the site, of the admin and of the sockets, given what no name, code, number or token can hold
(a NUL byte, control characters, bytes that are not UTF-8) or what one can barely (far too long, negative,
past the database's integers, leading zeros), in the path, in the query string, in a form or in ``next``,
answers 400 or 404 or the page's own refusal: never a 500.

``GET /jugador/%00/`` used to answer 500 (PostgreSQL refuses a NUL byte in a query), and so did the
admin's list filters with ``%00``, a signed-in ``GET /accounts/signup/?next=foo`` (``NoReverseMatch``) and
the socket handshakes ``/ws/mesa/1%00/`` and ``/ws/torneo/<20 digits>/``.  The test walks every pattern of
the site's resolver (the games, the accounts, the rankings, the admin, the language switch) and requests
each with such values in each parameter, signed out and signed in (as staff for the admin), with the
database refusing NUL bytes as PostgreSQL does even when the suite runs on SQLite:

* bytes no parameter can hold, anywhere in the path, the query string (keys and values) or a posted form,
  are a 400 (``pocha_site.bad_bytes``), before any view or query;
* the site's own patterns do not match values their parameters cannot hold (``pocha_site.converters``):
  a 404; the admin's, which take anything, answer without an error;
* the admin's list filters, search, ordering and pages (``?q=``, ``?o=``, ``?p=``, ``?e=`` and each
  filter's own parameters) answer without an error;
* ``?next=`` on every page of the accounts (and the language switch, the admin's login) goes to a path of
  this site or home, signed in and out.

Then the same through Daphne, as ``make up`` serves it: a few pages, and the sockets' handshakes, which
are closed cleanly (403) with no exception in the server's log.
"""

from __future__ import annotations

import asyncio
import logging
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import realstack
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RegexPattern, RoutePattern
from realstack import bare_stack  # noqa: F401 (a fixture)
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from games.live.routing import websocket_urlpatterns
from pocha_site.converters import IdConverter

#: What no parameter of the site can hold, as sent (percent-encoded): a 400 wherever it is.
REFUSED = {
    "nul": "%00",
    "nul-inside": "kdm%00tr",
    "control": "a%1Fb",
    "newline": "a%0Ab",
    "delete": "a%7Fb",
    "not-utf8": "%FF",
    "not-utf8-inside": "kdm%FFtr",
    "overlong-nul": "%C0%80",
}
#: What a parameter can barely hold, or not quite: a 404 from the site's own patterns when none of theirs
#: can hold it (a number's parameter holds none of these), else the page's own answer; never a 500.
ODD = {
    "long-text": "a" * 300,
    "long-number": "9" * 30,
    "twenty-digits": "9" * 20,
    "past-bigint": "9223372036854775808",
    "negative": "-1",
    "leading-zeros": "007",
}
#: A value no parameter of the site's own patterns holds at all.
UNMATCHED = {"long-text"}
#: A query string with what no parameter can hold, in a key or a value
#: (and a number past the database's integers, in any parameter but the admin's free-text search).
REFUSED_QUERIES = ["x=%00", "%00=x", "q=kdm%00tr", "next=%FF", "p=a%0Ab", "o=%1F", "e=%C0%80", "p=" + "9" * 5000]
#: Odd values for the admin's changelist parameters (its search, ordering, page, filters).
ADMIN_ODD = ["", "x", "-1", "9" * 20, "a" * 300, "2026-02-30"]
#: Where ``next`` may point (a view's name, another site, the page itself...).
NEXT_VALUES = {
    "word": "foo",
    "relative": "foo/bar",
    "other-site": "//evil.example/",
    "other-scheme": "https://evil.example/",
    "backslashes": "/\\evil.example/",
    "script": "javascript:alert(1)",
    "long": "/" + "a" * 5000,
    "empty": "",
    "site": "/clasificacion/",
}

_ROUTE_PARAMETER = re.compile(r"<(?:[^>:]+:)?[^>]+>")


@dataclass(frozen=True)
class Leaf:
    name: str  # namespace:name, or the view's dotted path
    namespace: str  # "admin:", "games:"... ("" for the root's own patterns)
    parts: tuple[Any, ...]  # the patterns from the root to the view

    @property
    def has_parameters(self) -> bool:
        return any(_parameters(part) for part in self.parts)

    @property
    def in_admin(self) -> bool:
        return self.namespace.startswith("admin:")

    @property
    def numbers_only(self) -> bool:
        """Every parameter is a row's number (``<id:...>``)."""
        parameterised = [part for part in self.parts if _parameters(part)]
        return bool(parameterised) and all(
            isinstance(part, RoutePattern) and all(isinstance(c, IdConverter) for c in part.converters.values())
            for part in parameterised
        )

    def path(self, value: str) -> str:
        return "/" + "".join(_fill(part, value) for part in self.parts)


def _parameters(pattern: Any) -> int:
    if isinstance(pattern, RoutePattern):
        return len(_ROUTE_PARAMETER.findall(str(pattern)))
    if isinstance(pattern, RegexPattern):
        return pattern.regex.groups
    raise AssertionError(f"a kind of pattern the walk does not know: {pattern!r}")


def _fill_regex(regex: str, value: str) -> str:
    """A regex pattern's text with every group replaced by ``value`` (the site's are of the simplest
    kind: ``^(?P<app_label>auth|games)/$``, ``(?P<url>.*)$``)."""
    out, depth, i = [], 0, 0
    while i < len(regex):
        char = regex[i]
        if char == "\\" and i + 1 < len(regex):
            if depth == 0:
                out.append(regex[i + 1])
            i += 2
            continue
        if char == "(":
            if depth == 0:
                out.append(value)
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0 and char not in "^$":
            out.append(char)
        i += 1
    return "".join(out)


def _fill(pattern: Any, value: str) -> str:
    if isinstance(pattern, RoutePattern):
        return _ROUTE_PARAMETER.sub(lambda _: value, str(pattern))
    return _fill_regex(pattern.regex.pattern.removesuffix(r"\Z"), value)


def walk(patterns: list[Any], parts: tuple[Any, ...] = (), namespace: str = "") -> Iterator[Leaf]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from walk(entry.url_patterns, (*parts, entry.pattern), inner)
        else:
            assert isinstance(entry, URLPattern)
            name = f"{namespace}{entry.name}" if entry.name else entry.lookup_str
            yield Leaf(name, namespace, (*parts, entry.pattern))


def refuse_nul(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    """Refuse a NUL byte in a query's parameters, as PostgreSQL does (``ValueError`` from psycopg)."""
    rows = params if many else [params]
    for row in rows or []:
        values = row.values() if isinstance(row, dict) else row or []
        if any(isinstance(v, str) and "\x00" in v for v in values):
            raise ValueError("A string literal cannot contain NUL (0x00) characters.")
    return execute(sql, params, many, context)


class People:
    """The walk's three people, each a client that reports a view's exception as a 500 (rather than
    raising it).  ``client`` signs the player or the staff member in again after a request that may have
    signed them out (a POST to a logout page)."""

    def __init__(self) -> None:
        User = get_user_model()
        self.users = {
            "player": User.objects.create_user(username="paseante", password="cuarenta-bazas-2025"),
            "staff": User.objects.create_superuser(
                username="jefa", password="cuarenta-bazas-2025", email="jefa@example.com"
            ),
        }
        self.clients = {"signed out": Client(raise_request_exception=False)}
        for who, user in self.users.items():
            self.clients[who] = Client(raise_request_exception=False)
            self.clients[who].force_login(user)

    def __getitem__(self, who: str) -> Client:
        return self.clients[who]

    def sign_in_again(self) -> None:
        for who, user in self.users.items():
            self.clients[who].force_login(user)


@pytest.fixture
def clients(db: Any, caplog: pytest.LogCaptureFixture) -> People:
    # Thousands of 400s and 404s, each logged as a warning: only errors are kept (a 500 is one).
    caplog.set_level(logging.ERROR, logger="django.request")
    return People()


def _leaves() -> list[Leaf]:
    return list(walk(get_resolver().url_patterns))


def _people(leaf: Leaf) -> list[str]:
    return ["signed out", "staff"] if leaf.in_admin else ["signed out", "player"]


def test_the_walk_reaches_every_part_of_the_site() -> None:
    leaves = _leaves()
    names = {leaf.name for leaf in leaves}
    for expected in [
        "games:player",
        "games:private_link",
        "games:table",
        "accounts:password_reset_confirm",
        "leaderboard:past",
        "admin:auth_user_change",
        "admin:app_list",
        "set_language",
    ]:
        assert expected in names, expected
    assert sum(leaf.has_parameters for leaf in leaves) >= 20
    # the paths it makes are the patterns' own: a good value resolves to the same view
    player = next(leaf for leaf in leaves if leaf.name == "games:player")
    assert player.path("lola") == "/jugador/lola/"
    assert not player.numbers_only
    table = next(leaf for leaf in leaves if leaf.name == "games:table")
    assert table.numbers_only and table.path("12") == "/mesa/12/"
    app_list = next(leaf for leaf in leaves if leaf.name == "admin:app_list")
    assert app_list.path("games") == "/admin/games/"
    # and the sockets' routes, but for the last one, which takes any other path
    assert [str(route.pattern) for route in websocket_urlpatterns[:-1]] == [
        "ws/mesa/<id:table_id>/",
        "ws/torneo/<id:tournament_id>/",
        "ws/sitio/",
    ]


def test_no_url_parameter_of_the_site_gives_an_error(clients: People) -> None:
    """Each parameter of each pattern: what none can hold is a 400; what the site's own cannot, a 404."""
    errors: list[str] = []
    wrong: list[str] = []
    with connection.execute_wrapper(refuse_nul):
        for leaf in _leaves():
            if not leaf.has_parameters:  # nothing to put in: each page at least answers
                for who in _people(leaf):
                    status = clients[who].get(leaf.path("")).status_code
                    if status >= 500:
                        errors.append(f"GET {leaf.path('')} ({leaf.name}, {who}): {status}")
                continue
            for label, value in {**REFUSED, **ODD}.items():
                path = leaf.path(value)
                for who in _people(leaf):
                    for method in ("get", "post"):
                        status = getattr(clients[who], method)(path).status_code
                        seen = f"{method.upper()} {path[:80]} ({leaf.name}, {label}, {who}): {status}"
                        if status >= 500:
                            errors.append(seen)
                        elif label in REFUSED:
                            if status != 400:  # what no parameter holds: refused before any view
                                wrong.append(seen)
                        elif not leaf.in_admin and (label in UNMATCHED or leaf.numbers_only) and status != 404:
                            wrong.append(seen)  # the site's own patterns do not match it at all
    assert errors == []
    assert wrong == []


def test_no_query_string_or_form_with_such_bytes_reaches_a_view(clients: People) -> None:
    """Every route (its parameters given a plain value), with what no parameter can hold in its query
    string, or in a posted form's field: a 400, signed in or out."""
    wrong: list[str] = []
    with connection.execute_wrapper(refuse_nul):
        for leaf in _leaves():
            path = leaf.path("1")
            for who in _people(leaf):
                client = clients[who]
                for query in REFUSED_QUERIES:
                    status = client.get(f"{path}?{query}").status_code
                    if status != 400:
                        wrong.append(f"GET {path}?{query} ({leaf.name}, {who}): {status}")
                for form in ({"next": "kdm\x00tr"}, {"\x00": "x"}):
                    status = client.post(path, form).status_code
                    if status != 400:
                        wrong.append(f"POST {path} {form!r} ({leaf.name}, {who}): {status}")
    assert wrong == []


def _changelist_parameters(model_admin: Any, staff: Any) -> list[str]:
    """The query parameters a changelist reads: its search, ordering, page, errors, the popup's and the
    filters' own (each list filter's ``expected_parameters``), and the date hierarchy's."""
    request = RequestFactory().get("/")
    request.user = staff
    changelist = model_admin.get_changelist_instance(request)
    names = ["q", "o", "p", "e", "all", "_to_field", "_popup", "_changelist_filters", "id__gt", "zzz"]
    names.extend(name for name in model_admin.list_filter if isinstance(name, str))  # status=, as typed
    for spec in changelist.filter_specs:
        names.extend(spec.expected_parameters())
    if model_admin.date_hierarchy:
        field = model_admin.date_hierarchy
        names.extend(f"{field}__{part}" for part in ("year", "month", "day"))
    return list(dict.fromkeys(names))


def test_the_admins_lists_answer_any_filter_search_order_or_page(clients: People) -> None:
    """Each changelist of the admin with each of its parameters given what none can hold (a 400) or odd
    values (its own answer: the list, or its "invalid filter" redirect): never a 500."""
    staff = clients.users["staff"]
    errors: list[str] = []
    wrong: list[str] = []
    walked_filters = 0
    with connection.execute_wrapper(refuse_nul):
        for model, model_admin in admin.site._registry.items():
            base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
            names = _changelist_parameters(model_admin, staff)
            walked_filters += len(names) - 10
            for name in names:
                for value in [REFUSED["nul"], REFUSED["not-utf8"], *ADMIN_ODD]:
                    query = f"{name}={value}"
                    status = clients["staff"].get(f"{base}?{query}").status_code
                    seen = f"GET {base}?{query[:60]}: {status}"
                    if status >= 500:
                        errors.append(seen)
                    elif value in REFUSED.values() and status != 400:
                        wrong.append(seen)
    assert walked_filters >= 17  # the list filters of the tables, moves, tournaments, accounts, users...
    assert errors == []
    assert wrong == []


#: What an admin action's ticked rows may be sent as but rows' numbers (Django's admin filtered ``pk__in``
#: with them unchecked: a 500).
NOT_ROW_NUMBERS = ["", "abc", "-1", "0", "1.5", "01", "9" * 19, "9" * 30, "a" * 300]


def test_the_admins_actions_answer_any_rows_ticked(clients: People) -> None:
    """Each action of each changelist, with its ticked rows given as anything but rows' numbers: a 400;
    with a number no row has, the admin's own answer; its index and its confirmation step likewise."""
    staff = clients.users["staff"]
    request = RequestFactory().get("/")
    request.user = staff
    errors: list[str] = []
    wrong: list[str] = []
    walked = 0
    with connection.execute_wrapper(refuse_nul):
        for model, model_admin in admin.site._registry.items():
            base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
            for action in model_admin.get_actions(request):
                walked += 1
                forms = [{"_selected_action": value, "index": "0"} for value in NOT_ROW_NUMBERS]
                forms += [{"_selected_action": value, "post": "yes"} for value in NOT_ROW_NUMBERS]  # confirmed
                forms += [
                    {"_selected_action": "987654321", "index": index} for index in ("0", "abc", "-9", "9" * 30)
                ] + [{"_selected_action": "987654321", "post": "yes"}, {"select_across": "x", "index": "0"}]
                for form in forms:
                    status = clients["staff"].post(base, {"action": action, **form}).status_code
                    seen = f"POST {base} action={action} {form!r}: {status}"
                    if status >= 500:
                        errors.append(seen)
                    elif form.get("_selected_action") in NOT_ROW_NUMBERS and status != 400:
                        wrong.append(seen)
    assert walked >= 8  # delete_selected for each model that may delete, the moderation's own actions
    assert errors == []
    assert wrong == []
    # a row's number still goes through: deleting a group asks for confirmation
    group = Group.objects.create(name="mirones")
    page = clients["staff"].post(
        "/admin/auth/group/", {"action": "delete_selected", "_selected_action": str(group.pk), "index": "0"}
    )
    assert page.status_code == 200 and "mirones" in page.content.decode()


def _next_pages() -> list[Leaf]:
    """The pages that read ``next``: every page of the accounts, the language switch, the admin's login
    and logout."""
    return [
        leaf
        for leaf in _leaves()
        if not leaf.has_parameters
        and (leaf.namespace == "accounts:" or leaf.name in {"set_language", "admin:login", "admin:logout"})
    ]


def _on_site(location: str) -> bool:
    """A redirect that stays on this site: a path, without a scheme or another host (``foo`` is relative to
    the page, which is Django's own logout's way)."""
    parts = urllib.parse.urlsplit(location)
    return not parts.scheme and not parts.netloc and not location.startswith(("//", "/\\", "\\"))


def test_next_goes_to_a_page_of_the_site_or_home(clients: People) -> None:
    """``?next=`` (and a posted ``next``) on each page that reads it, signed in and out: never a 500, and
    any redirect goes to a path of this site."""
    pages = _next_pages()
    assert {"accounts:signup", "accounts:login", "accounts:logout", "set_language"} <= {p.name for p in pages}
    errors: list[str] = []
    with connection.execute_wrapper(refuse_nul):
        for leaf in pages:
            path = leaf.path("")
            values = {**NEXT_VALUES, "itself": path}
            for who in ("signed out", "staff" if leaf.in_admin else "player"):
                for label, value in values.items():
                    query = f"{path}?{urllib.parse.urlencode({'next': value})}"
                    for method, target, form in (("GET", query, None), ("POST", path, value)):
                        client = clients[who]
                        if method == "GET":
                            answer = client.get(target)
                        else:
                            answer = client.post(target, {} if form is None else {"next": form})
                        location = answer.get("Location", "")
                        seen = f"{method} {target[:60]} next={label} ({who}): {answer.status_code} {location[:60]}"
                        if answer.status_code >= 500 or (answer.status_code in (301, 302) and not _on_site(location)):
                            errors.append(seen)
                        if leaf.name.endswith("logout"):
                            clients.sign_in_again()
    assert errors == []


def test_next_keeps_a_page_of_the_site_and_sends_anything_else_home(clients: People) -> None:
    player = clients["player"]
    with connection.execute_wrapper(refuse_nul):
        # signed in, the sign-up and login pages go straight to next
        for page in ("/accounts/signup/", "/accounts/login/"):
            assert player.get(page, {"next": "/clasificacion/"})["Location"] == "/clasificacion/"
            for value in ("foo", "//evil.example/", "https://evil.example/", "javascript:alert(1)", page):
                response = player.get(page, {"next": value})
                assert (response.status_code, response["Location"]) == (302, "/"), (page, value)
        # signed out, the sign-up form carries next on, or nothing but home
        page = clients["signed out"].get("/accounts/signup/", {"next": "foo"})
        assert page.status_code == 200 and 'name="next" value="/"' in page.content.decode()
        page = clients["signed out"].get("/accounts/signup/", {"next": "/clasificacion/"})
        assert 'name="next" value="/clasificacion/"' in page.content.decode()
        # signing out goes to next if it is the site's, else home
        for value, where in (("/clasificacion/", "/clasificacion/"), ("foo", "/"), ("//evil.example/", "/")):
            response = player.post("/accounts/logout/", {"next": value})
            assert (response.status_code, response["Location"]) == (302, where), value
            clients.sign_in_again()


def test_a_good_value_still_reaches_the_views(clients: People) -> None:
    player = clients["player"]
    assert player.get("/jugador/paseante/").status_code == 200
    assert player.get("/jugador/PASEANTE/").status_code == 302  # to the name's own spelling
    assert player.get("/jugador/nadie/").status_code == 404
    assert player.get("/jugador/pe%C3%B1a/").status_code == 404  # a name may have an ñ: no such player
    assert player.get("/mesa/123456789012345678/").status_code == 404  # no such table, but a number
    created = player.post("/mesas/nueva/", {"size": "4", "stake": "0"})
    table = created["Location"]
    assert re.fullmatch(r"/mesa/[1-9][0-9]*/", table), table
    assert player.get(table).status_code == 200
    assert player.get(table.replace("/mesa/", "/mesa/0")).status_code == 404  # not how the site writes it
    assert player.get("/clasificacion/mes/").status_code == 200
    assert player.get("/clasificacion/mes/?x=%C3%B1").status_code == 200  # an ñ in a query is fine
    assert player.get("/clasificacion/semana/2026-02-30/").status_code == 404
    assert player.get("/accounts/fichas/", {"pagina": "nada"}).status_code == 200  # the first page
    # no page, row or amount is a number past the database's integers (but a name searched may be digits)
    assert player.get("/accounts/fichas/", {"pagina": "9" * 30}).status_code == 400
    staff = clients["staff"]
    assert staff.get("/admin/auth/user/", {"q": "9" * 30}).status_code == 200
    assert staff.get("/admin/auth/user/", {"groups": "9" * 20}).status_code == 400  # an OverflowError on SQLite
    assert staff.get("/admin/auth/user/", {"groups": str(2**63 - 1)}).status_code == 200


# -- through Daphne ------------------------------------------------------------------------------------

#: A session cookie holding a NUL byte once Django reads it (``"\\000"`` in a quoted cookie).
NUL_COOKIE = 'sessionid="abcdefgh\\000ijk"'


def _no_error_in(log: str) -> bool:
    return "Traceback" not in log and "Exception inside application" not in log and " 500 " not in log


@pytest.mark.django_db(transaction=True)
def test_through_the_server_such_addresses_are_400s_or_404s(bare_stack: realstack.Stack) -> None:  # noqa: F811
    client = bare_stack.client()
    for path, expected in [
        ("/jugador/%00/", 400),
        ("/jugador/a%00b/", 400),
        ("/jugador/%1F/", 400),
        ("/jugador/%FF/", 400),
        ("/mesa/privada/%00/", 400),
        ("/accounts/recuperar/%00/%00/", 400),
        ("/clasificacion/%00/", 400),
        ("/admin/games/table/%00/change/", 400),
        ("/admin/games/table/?status=%00", 400),
        ("/admin/games/move/?kind__exact=kdm%00tr", 400),
        ("/clasificacion/?q=%FF", 400),
        ("/jugador/" + "a" * 300 + "/", 404),
        ("/jugador/" + "a" * 5000 + "/", 404),
        ("/mesa/" + "9" * 30 + "/", 404),
        ("/mesa/" + "9" * 20 + "/", 404),
        ("/mesa/-1/", 404),
        ("/mesa/007/", 404),
        ("/torneos/" + "9" * 20 + "/", 404),
    ]:
        status, _ = client.get(path)
        assert status == expected, (path, status, bare_stack.log())
    status, _ = client.get("/clasificacion/", headers={"Cookie": NUL_COOKIE})
    assert status == 400, bare_stack.log()
    assert _no_error_in(bare_stack.log()), bare_stack.log()


async def _handshake(stack: realstack.Stack, path: str, cookie: str | None = None) -> tuple[str, int | None]:
    """("refused", the HTTP status) for a handshake refused, or ("closed", the close code) for a socket
    that opened and was closed."""
    port = urllib.parse.urlsplit(stack.url).port
    headers = {"Origin": stack.url, **({"Cookie": cookie} if cookie else {})}
    try:
        async with connect(
            f"ws://127.0.0.1:{port}{path}", additional_headers=headers, open_timeout=15, proxy=None
        ) as socket:
            try:
                await asyncio.wait_for(socket.recv(), 15)
            except ConnectionClosed as closed:
                return "closed", closed.rcvd.code if closed.rcvd else None
            return "open", None
    except InvalidStatus as refused:
        return "refused", refused.response.status_code


def _socket_paths() -> dict[str, str]:
    """Each socket route with each value in its parameter, and other paths and queries."""
    paths = {
        "no-socket": "/ws/nada/",
        "query": "/ws/torneo/1/?x=%00",
        "query-utf8": "/ws/torneo/1/?x=%FF",
        "site query": "/ws/sitio/?p=%00",
        "site query-utf8": "/ws/sitio/?p=%FF",
        "site path": "/ws/sitio/%00/",
    }
    for route in websocket_urlpatterns[:-1]:
        if "<" not in str(route.pattern):  # a route of no parameter (the site's socket): its queries above
            continue
        for label, value in {**REFUSED, **ODD}.items():
            paths[f"{route.pattern} {label}"] = "/" + _fill(route.pattern, value)
    return paths


@pytest.mark.django_db(transaction=True)
def test_through_the_server_such_sockets_are_closed_cleanly(bare_stack: realstack.Stack) -> None:  # noqa: F811
    """``/ws/mesa/1%00/``, ``/ws/torneo/<20 digits>/``, a session cookie with a NUL...: the handshake is
    refused (403), and the server logs no exception; a socket's own path still opens."""
    paths = _socket_paths()

    async def run() -> dict[str, tuple[str, int | None]]:
        answers = {label: await _handshake(bare_stack, path) for label, path in paths.items()}
        for path in ("/ws/mesa/1%00/", "/ws/torneo/1%00/", "/ws/torneo/" + "9" * 20 + "/"):
            answers[path] = await _handshake(bare_stack, path)
        answers["nul cookie"] = await _handshake(bare_stack, "/ws/torneo/1/", NUL_COOKIE)
        # the tournament socket's own path opens, and closes as it does for no such tournament
        answers["good"] = await _handshake(bare_stack, "/ws/torneo/1/")
        return answers

    answers = asyncio.run(run())
    assert answers.pop("good") == ("closed", 4404), bare_stack.log()
    assert {label: answer for label, answer in answers.items() if answer != ("refused", 403)} == {}
    assert _no_error_in(bare_stack.log()), bare_stack.log()
