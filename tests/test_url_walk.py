"""Every URL parameter of the site, given what no name, code, number or token can hold (a NUL byte, control
characters, something far too long), is a 404 or the page's own refusal: never a 500.

``GET /jugador/%00/`` used to answer 500: PostgreSQL refuses a NUL byte in a query.  The test walks every
pattern of the site's resolver (the games, the accounts, the rankings, the admin, the language switch) and
requests each with such values in each parameter, signed out and signed in (as staff for the admin), with
the database refusing NUL bytes as PostgreSQL does even when the suite runs on SQLite.  The site's own
patterns must not even match (``pocha_site.converters``); the admin's, which take anything, must answer
without an error.  Then the same few addresses through Daphne, as ``make up`` serves them.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import realstack
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RegexPattern, RoutePattern
from realstack import bare_stack  # noqa: F401 (a fixture)

#: What no parameter of the site can hold (but for the long number: a name or a token could be one).
BAD_VALUES = {
    "nul": "\x00",
    "nul-inside": "kdm\x00tr",
    "control": "a\x1fb",
    "newline": "a\nb",
    "long-text": "a" * 300,
    "long-number": "9" * 30,
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


@pytest.fixture
def clients(db: Any) -> dict[str, Client]:
    User = get_user_model()
    player = User.objects.create_user(username="paseante", password="cuarenta-bazas-2025")
    staff = User.objects.create_superuser(username="jefa", password="cuarenta-bazas-2025", email="jefa@example.com")
    signed_in, admin = Client(raise_request_exception=False), Client(raise_request_exception=False)
    signed_in.force_login(player)
    admin.force_login(staff)
    return {"signed out": Client(raise_request_exception=False), "player": signed_in, "staff": admin}


def test_the_walk_reaches_every_part_of_the_site() -> None:
    leaves = list(walk(get_resolver().url_patterns))
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
    app_list = next(leaf for leaf in leaves if leaf.name == "admin:app_list")
    assert app_list.path("games") == "/admin/games/"


def test_no_url_parameter_of_the_site_gives_an_error(clients: dict[str, Client]) -> None:
    leaves = list(walk(get_resolver().url_patterns))
    errors: list[str] = []
    not_refused: list[str] = []
    with connection.execute_wrapper(refuse_nul):
        for leaf in leaves:
            who = ["signed out", "staff"] if leaf.in_admin else ["signed out", "player"]
            if not leaf.has_parameters:  # nothing to put in: each page at least answers
                for person in who:
                    status = clients[person].get(leaf.path("")).status_code
                    if status >= 500:
                        errors.append(f"GET {leaf.path('')} ({leaf.name}, {person}): {status}")
                continue
            for label, value in BAD_VALUES.items():
                path = urllib.parse.quote(leaf.path(value), safe="/")
                for person in who:
                    for method in ("get", "post"):
                        status = getattr(clients[person], method)(path).status_code
                        if status >= 500:
                            errors.append(f"{method.upper()} {path[:80]} ({leaf.name}, {label}, {person}): {status}")
                        elif not leaf.in_admin and label != "long-number" and status != 404:
                            not_refused.append(f"{method.upper()} {path[:80]} ({leaf.name}, {label}): {status}")
    assert errors == []
    assert not_refused == []  # the site's own patterns do not match such values at all


def test_a_good_value_still_reaches_the_views(clients: dict[str, Client]) -> None:
    player = clients["player"]
    assert player.get("/jugador/paseante/").status_code == 200
    assert player.get("/jugador/PASEANTE/").status_code == 302  # to the name's own spelling
    assert player.get("/jugador/nadie/").status_code == 404
    assert player.get("/mesa/123456789012345678/").status_code == 404  # no such table, but a number
    assert player.get("/clasificacion/mes/").status_code == 200
    assert player.get("/clasificacion/semana/2026-02-30/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_through_the_server_such_addresses_are_404s(bare_stack: realstack.Stack) -> None:  # noqa: F811
    client = bare_stack.client()
    for path in [
        "/jugador/%00/",
        "/jugador/a%00b/",
        "/jugador/%1F/",
        "/jugador/" + "a" * 300 + "/",
        "/mesa/" + "9" * 30 + "/",
        "/mesa/privada/%00/",
        "/accounts/recuperar/%00/%00/",
        "/clasificacion/%00/",
    ]:
        status, _ = client.get(path)
        assert status == 404, (path, status, bare_stack.log())
