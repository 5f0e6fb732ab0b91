"""The lobby's forms in Chromium against the real server (issue 43): choosing other house rules changes the table
sizes offered without a reload (``static/js/lobby.js``), a size the new rules are not played by becomes the
nearest one they are, and the line beside the sizes says how long the game chosen lasts, as the server words it;
and the site's icon loads, as does ``/favicon.ico``.
The page has no script of its own inline (the Content-Security-Policy would refuse it: the conftest fails the
test on any violation)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from support.server import Daphne

from . import pages
from .pages import BrowserPerson

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

PASSWORD = "cuarenta-bazas-2025"


@pytest.fixture
def person(chromium: Any, pocha_server: Daphne) -> Iterator[BrowserPerson]:
    someone = BrowserPerson(chromium, pocha_server, "lola", {"width": 1280, "height": 900})
    yield someone
    someone.context.close()


def shown_radios(form: Any) -> list[int]:
    return [int(v) for v in form.locator('input[name="size"]:visible:enabled').evaluate_all("e => e.map(i => i.value)")]


def shown_options(form: Any) -> list[int]:
    return [
        int(v)
        for v in form.locator('select[name="size"] option').evaluate_all(
            "e => e.filter(o => !o.disabled && !o.hidden).map(o => o.value)"
        )
    ]


def test_the_sizes_offered_follow_the_rules_chosen_and_the_length_follows_both(person: BrowserPerson) -> None:
    page = person.page
    pages.sign_up(page, "lola", PASSWORD)
    lengths = json.loads(page.locator("#game-lengths").text_content() or "{}")
    quick = page.locator("form.quick-play")
    line = quick.locator(".game-length")
    assert shown_radios(quick) == [3, 4, 5, 6]  # Clásica, the default
    expect(line).to_have_text(lengths["clasica"]["4"])

    url = page.url
    quick.locator('select[name="rules"]').select_option("indias")
    expect(quick.locator('input[name="size"][value="8"]')).to_be_visible()
    assert shown_radios(quick) == [3, 4, 5, 6, 7, 8]
    quick.get_by_label("8", exact=True).check()
    expect(line).to_have_text(lengths["indias"]["8"])
    assert "47 rondas" in lengths["indias"]["8"]

    quick.locator('select[name="rules"]').select_option("bazas")  # played by 3 to 7: the 8 becomes a 7
    expect(quick.locator('input[name="size"][value="8"]')).to_be_hidden()
    assert shown_radios(quick) == [3, 4, 5, 6, 7]
    expect(quick.locator('input[name="size"][value="7"]')).to_be_checked()
    expect(line).to_have_text(lengths["bazas"]["7"])

    quick.locator('select[name="rules"]').select_option("clasica")
    assert shown_radios(quick) == [3, 4, 5, 6]
    expect(quick.locator('input[name="size"][value="6"]')).to_be_checked()
    expect(line).to_have_text(lengths["clasica"]["6"])

    # se dobla: its schedule changes the length, not the sizes
    quick.locator('select[name="rules"]').select_option("se-dobla")
    expect(line).to_have_text(lengths["se-dobla:sencillas"]["6"])
    quick.locator('select[name="schedule"]').select_option("escalera")
    expect(line).to_have_text(lengths["se-dobla:escalera"]["6"])
    assert shown_radios(quick) == [3, 4, 5, 6, 7, 8]
    assert page.url == url  # no reload

    # «Abrir mesa» and «Mesa privada»: the same, on their selects
    for css in ("form.create-table", "form.private-table"):
        form = page.locator(css)
        assert shown_options(form) == [3, 4, 5, 6]
        form.locator('select[name="rules"]').select_option("indias")
        assert shown_options(form) == [3, 4, 5, 6, 7, 8]
        form.locator('select[name="size"]').select_option("8")
        expect(form.locator(".game-length")).to_have_text(lengths["indias"]["8"])
        form.locator('select[name="rules"]').select_option("clasica")
        assert shown_options(form) == [3, 4, 5, 6]
        expect(form.locator('select[name="size"]')).to_have_value("6")
        expect(form.locator(".game-length")).to_have_text(lengths["clasica"]["6"])

    # the site's icon: the page's SVG, and /favicon.ico (a PNG) for browsers that ask for it
    icon = page.locator('link[rel="icon"]').get_attribute("href") or ""
    svg = page.request.get(icon)
    assert svg.status == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    png = page.request.get("/favicon.ico")
    assert png.status == 200 and png.headers["content-type"] == "image/png" and png.body()[:8] == b"\x89PNG\r\n\x1a\n"

    # and what the form now sends is a table the rules honour: «Mesa privada» at six of Clásica
    page.locator("form.private-table").get_by_role("button", name="Crear mesa privada").click()
    page.wait_for_url("**/mesa/*/")
    assert "Clásica" in (page.locator("body").text_content() or "")
