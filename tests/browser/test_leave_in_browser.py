"""«Dejar la partida» in a real browser: two steps (what leaving costs, then «Sí, dejar la partida»), with no
script of its own; then the page says what happened and the lobby keeps the game in «Tus mesas»."""

from __future__ import annotations

import re
from typing import Any

import pytest
from support.server import Daphne

from .pages import BrowserPerson

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is missing (pip install -e '.[dev]')"
)
expect = sync_api.expect

PASSWORD = "cuarenta-bazas-2025"
PHONE = {"width": 375, "height": 812}
COST = (
    "Si dejas la partida, quedas último: pierdes la apuesta y no cuenta como victoria; "
    "el bot juega tu asiento hasta el final."
)
LEFT = "Has dejado la partida: el bot juega tu asiento hasta el final y quedas último."


def test_leaving_asks_first_and_then_says_what_it_cost(chromium: Any, pocha_server: Daphne) -> None:
    username = "deja"
    out = pocha_server.manage(
        "demo_table", "--user", username, "--password", PASSWORD, "--round", "2", "--stake", "100"
    )
    table_id = int(out.splitlines()[-1])
    person = BrowserPerson(chromium, pocha_server, username, PHONE, reduced_motion="reduce")
    try:
        page = person.page
        page.goto("/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", PASSWORD)
        page.locator("main form button[type=submit]").click()
        page.wait_for_url(re.compile(r"/$"))
        page.goto(f"/mesa/{table_id}/")

        leave = page.locator("#leave-line")
        confirm = page.get_by_role("button", name="Sí, dejar la partida")
        expect(leave.locator("summary")).to_have_text("Dejar la partida")
        expect(confirm).to_be_hidden()  # one tap says what it means first
        leave.locator("summary").click()
        expect(leave.get_by_text(COST)).to_be_visible()
        expect(confirm).to_be_visible()
        confirm.click()

        expect(page.locator("#board-status .away-line")).to_contain_text(LEFT)
        expect(page.get_by_role("button", name="Vuelvo")).to_be_visible()  # the seat may be taken back
        expect(page.locator("#leave-line")).to_have_count(0)

        page.goto("/")
        mine = page.locator("section.card", has=page.get_by_role("heading", name="Tus mesas"))
        expect(mine.locator(f'a[href="/mesa/{table_id}/"]')).to_have_count(1)
        expect(mine).to_contain_text("la has dejado: juega el bot")
        assert not person.errors, person.errors
    finally:
        person.context.close()
