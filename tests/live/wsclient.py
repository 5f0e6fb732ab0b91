"""A browser's two sides for the tests that drive a real server in a subprocess (``test_restart``,
``test_chips_restart``, ``test_presence``, ``tests/faults``): HTTP with a session cookie and CSRF
(``Browser``), and the table's WebSocket (``WebSocket``: the load tool's client, ``benchmarks/load/wsclient.py``,
on the ``websockets`` library: one client for both)."""

from __future__ import annotations

import http.cookiejar
import re
import urllib.parse
import urllib.request
from typing import Protocol

from benchmarks.load.wsclient import WebSocket, compose

__all__ = ["PASSWORD", "Browser", "Site", "WebSocket", "compose"]

#: Every account these tests make has this password.
PASSWORD = "cuarenta-bazas-2025"


class Site(Protocol):
    origin: str


class Browser:
    """HTTP with a cookie jar, as a browser would: CSRF token from the form, session cookie kept."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def cookie(self, name: str) -> str:
        for cookie in self.jar:
            if cookie.name == name:
                return str(cookie.value)
        raise AssertionError(f"no {name} cookie")

    def get(self, path: str) -> tuple[str, bytes]:
        with self.opener.open(self.site.origin + path, timeout=15) as response:
            return response.geturl(), response.read()

    def post(self, path: str, form_page: str, fields: dict[str, str]) -> tuple[str, bytes]:
        _url, page = self.get(form_page)
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token, "no CSRF token on " + form_page
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1).decode(), **fields}).encode()
        request = urllib.request.Request(
            self.site.origin + path,
            data=data,
            headers={"Origin": self.site.origin, "Referer": self.site.origin + form_page},
        )
        with self.opener.open(request, timeout=15) as response:
            return response.geturl(), response.read()

    def login(self, username: str) -> None:
        url, _page = self.post(
            "/accounts/login/", "/accounts/login/", {"username": username, "password": PASSWORD, "next": "/"}
        )
        assert urllib.parse.urlsplit(url).path == "/", f"login failed: landed on {url}"
        self.cookie("sessionid")

    def create_table(self, size: int, stake: int = 0) -> int:
        url, _page = self.post("/mesas/nueva/", "/", {"size": str(size), "stake": str(stake)})
        match = re.fullmatch(r"/mesa/(\d+)/", urllib.parse.urlsplit(url).path)
        assert match, f"creating a table landed on {url}"
        return int(match.group(1))
