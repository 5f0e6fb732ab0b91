"""The site under its Content-Security-Policy in a real browser: the table page carries the policy and
its socket connects under it; the Django admin works under it too. Any violation fails the test (the
conftest's after-test check of every page's console)."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
from support.server import ROOT, Daphne, free_port

from .pages import BrowserPerson

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is missing (pip install -e '.[dev]')"
)
expect = sync_api.expect

PASSWORD = "cuarenta-bazas-2025"
DESKTOP = {"width": 1280, "height": 800}
POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy_of(response: Any) -> dict[str, str]:
    header = response.headers.get("content-security-policy")
    assert header, f"no Content-Security-Policy on {response.url}"
    directives = (part.strip().split(None, 1) for part in header.split(";") if part.strip())
    return {d[0]: d[1] if len(d) > 1 else "" for d in directives}


def log_in(page: Any, path: str, username: str) -> None:
    page.goto(path)
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.locator("form [type=submit]").last.click()
    page.wait_for_load_state()


def test_the_table_page_carries_the_policy_and_its_socket_connects(chromium: Any, pocha_server: Daphne) -> None:
    username = "politica"
    out = pocha_server.manage("demo_table", "--user", username, "--password", PASSWORD, "--round", "1")
    table_id = int(out.splitlines()[-1])
    person = BrowserPerson(chromium, pocha_server, username, DESKTOP)
    try:
        page = person.page
        log_in(page, "/accounts/login/", username)
        expect(page).to_have_url(re.compile(r"/$"))
        response = page.goto(f"/mesa/{table_id}/")
        assert response is not None and response.status == 200
        policy = policy_of(response)
        for directive, value in POLICY.items():
            assert policy.get(directive) == value, (directive, policy)
        assert "unsafe" not in response.headers["content-security-policy"]
        # the socket opened (htmx's ws extension) and the board came over it: a hand to play or bid
        expect(page.locator("#connection")).to_have_attribute("data-state", "open")
        expect(page.locator("#hand button.card")).to_have_count(1)
        expect(page.locator("#felt li.seat")).to_have_count(4)
        # htmx's own indicator styles are off (an inline <style> would break the policy): its CSS is ours
        assert page.evaluate("() => document.querySelectorAll('head style').length") == 0
        assert page.evaluate("() => htmx.config.includeIndicatorStyles === false && htmx.config.allowEval === false")
        # a page on another port of the same host (another program's) cannot open it, though the browser
        # sends the session cookie along (cookies ignore ports): the origin check compares ports
        elsewhere = f"http://127.0.0.1:{free_port()}/"
        other = person.context.new_page()  # not watched: its refused handshake is logged as an error
        other.route(elsewhere, lambda route: route.fulfill(content_type="text/html", body="<p>otro sitio</p>"))
        other.goto(elsewhere)
        opened = other.evaluate(
            """url => new Promise(done => {
            const ws = new WebSocket(url);
            ws.onopen = () => { ws.close(); done('open'); };
            ws.onerror = () => done('refused');
        })""",
            pocha_server.url.replace("http://", "ws://") + f"/ws/mesa/{table_id}/",
        )
        other.close()
        assert opened == "refused"
        expect(page.locator("#connection")).to_have_attribute("data-state", "open")  # ours is still open
    finally:
        person.context.close()


def test_the_admin_works_under_the_policy(chromium: Any, pocha_server: Daphne) -> None:
    username = "moderadora"
    make_superuser = (
        "from django.contrib.auth import get_user_model; U = get_user_model(); "
        f"U.objects.filter(username={username!r}).exists() or "
        f"U.objects.create_superuser({username!r}, 'm@example.com', {PASSWORD!r})"
    )
    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", make_superuser],
        cwd=ROOT,
        env=pocha_server.env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    player = "moderada"
    out = pocha_server.manage("demo_table", "--user", player, "--password", PASSWORD, "--round", "1")
    table_id = int(out.splitlines()[-1])
    person = BrowserPerson(chromium, pocha_server, username, DESKTOP)
    try:
        page = person.page
        log_in(page, "/admin/login/?next=/admin/", username)
        expect(page.locator("#site-name")).to_be_visible()
        for path in ["/admin/", "/admin/auth/user/", "/admin/games/table/"]:
            response = page.goto(path)
            assert response is not None and response.status == 200, path
            assert policy_of(response)["script-src"] == "'self'"
        # change pages with the admin's own scripts (the related-object widgets, the permission filters)
        # and the site's moderation buttons: a player's «Suspender» form, a table's «Cancelar la partida»
        page.goto("/admin/auth/user/")
        page.get_by_role("link", name=player, exact=True).click()
        expect(page.locator("#content h1")).to_be_visible()
        page.get_by_role("link", name="Suspender", exact=True).click()
        expect(page.locator("#content form")).to_be_visible()
        page.goto(f"/admin/games/table/{table_id}/change/")
        page.get_by_role("link", name="Cancelar la partida", exact=True).click()
        expect(page.locator("#content form")).to_be_visible()
        # the changelist's actions: select all, and the counter updates (admin/js/actions.js)
        page.goto("/admin/auth/user/")
        page.locator("#action-toggle").check()
        expect(page.locator(".action-counter")).not_to_have_text(re.compile(r"^\s*0\D"))
    finally:
        person.context.close()
