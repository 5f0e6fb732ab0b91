"""A game's analysis on its replay page, laid out at 375×812 (a phone, by touch) and 1280×800 (a desktop):
nothing drawn over anything else and nothing wider than the screen (``layout.check_layout``), with its
disclosures shut (as the page opens) and with every one of them opened by hand; the chart's labels at 11 px
or more as drawn on the screen; the players' figures stacked on the phone, in a table on the desktop; the
round-by-round table scrolling inside its own box, with its cue, where it does not fit.  The page's height is
measured and printed (the analysis's phone page was 10,316 px tall with its lists all open).

The game is a whole one at six (21 rounds) played by ``manage.py demo_table`` for a person with a long name
(a long column heading, a long row heading); the person asks for its analysis on the replay page and the
server's own thread works it out with 8 worlds a decision (``POCHA_ANALYSIS_WORLDS``), a few seconds.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.server import Daphne

from . import pages
from .layout import check_layout
from .pages import BrowserPerson
from .test_layout import PASSWORD, VIEWPORTS, log_in

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

#: This module's server (``conftest.pocha_server_process``): a quick analysis.
SERVER_SETTINGS = {"POCHA_ANALYSIS_WORLDS": "8"}
NAME = "maximiliano_fernandez_de_la_torre"
#: A label on the chart as a person reads it: the smallest size, in screen pixels.
SMALLEST_LABEL = 11.0

# Each label of the chart: its font size as drawn on the screen (its CSS size times the scale from the SVG's
# own units to the screen's).
LABEL_SIZES = """
() => Array.from(document.querySelectorAll('svg.chart text')).map((t) => ({
  text: t.textContent.trim(),
  px: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a,
  right: t.getBoundingClientRect().right,
  left: t.getBoundingClientRect().left,
}))
"""
HEIGHT = "() => document.scrollingElement.scrollHeight"


def press(locator: Any, touch: bool) -> None:
    if touch:
        locator.tap()
    else:
        locator.click()


@pytest.fixture(scope="module")
def analysed(chromium: Any, pocha_server_process: Daphne) -> Iterator[int]:
    """A whole game at six, its analysis asked for on the replay page and worked out: the table's id."""
    table_id = pages.demo_table(pocha_server_process, NAME, PASSWORD, "--size", "6", "--to-the-end")
    person = BrowserPerson(chromium, pocha_server_process, NAME, VIEWPORTS["desktop"])
    page = person.page
    log_in(page, NAME)
    page.goto(f"/mesa/{table_id}/repeticion/")
    page.get_by_role("button", name="Analizar la partida").click()
    deadline = time.monotonic() + 240
    while page.locator("caption", has_text="Por jugador").count() == 0:
        assert time.monotonic() < deadline, "the analysis did not finish"
        page.wait_for_timeout(250)
    assert not person.errors, person.errors
    person.context.close()
    yield table_id


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_analysis_fits_the_screen_and_reads_at_both_sizes(
    chromium: Any, pocha_server: Daphne, analysed: int, size: str, screenshot_dir: Path
) -> None:
    touch = size == "phone"
    person = BrowserPerson(
        chromium, pocha_server, NAME, VIEWPORTS[size], has_touch=touch, is_mobile=touch, reduced_motion="reduce"
    )
    page = person.page
    log_in(page, NAME)
    page.goto(f"/mesa/{analysed}/repeticion/#analisis")
    section = page.locator("#analisis")
    expect(section.locator("caption", has_text="Por jugador")).to_be_visible()
    width = VIEWPORTS[size]["width"]

    # as the page opens: the figures, the chart, and the disclosures shut
    check_layout(page, f"{size}: the analysis", table=2, heading=2)
    disclosures = section.locator("details.analysis-more")
    expect(disclosures).to_have_count(3)
    for i in range(3):
        assert disclosures.nth(i).get_attribute("open") is None, "a long part of the analysis is open at first"
    shut = page.evaluate(HEIGHT)
    section.screenshot(path=str(screenshot_dir / f"{size}-analysis.png"))

    # the players' figures: a table row each on a desktop, a block each on a phone, every figure in view
    rows = section.locator(".analysis-seats tbody tr")
    expect(rows).to_have_count(6)
    boxes = [rows.nth(i).bounding_box() for i in range(6)]
    assert all(box and box["x"] >= 0 and box["x"] + box["width"] <= width + 1 for box in boxes), boxes
    display = rows.first.evaluate("(row) => getComputedStyle(row).display")
    assert display == ("grid" if touch else "table-row"), display
    cells = rows.first.locator("td")
    for i in range(cells.count()):
        cell = cells.nth(i).bounding_box()
        assert cell and cell["x"] >= 0 and cell["x"] + cell["width"] <= width + 1, (i, cell)

    # the chart: its labels readable, inside the screen
    labels = page.evaluate(LABEL_SIZES)
    assert len(labels) >= 5, labels
    small = [label for label in labels if label["px"] < SMALLEST_LABEL]
    assert not small, f"{size}: chart labels under {SMALLEST_LABEL} px on the screen: {small}"
    assert all(0 <= label["left"] and label["right"] <= width for label in labels), labels

    # every disclosure opened by hand (and each player's mistakes in the one of the mistakes)
    for i in range(3):
        press(disclosures.nth(i).locator("> summary"), touch)
        expect(disclosures.nth(i)).to_have_attribute("open", "")
    players = section.locator("details.analysis-player-mistakes")
    assert players.count() >= 1, "a game of bots at normal with no marked mistake"
    for i in range(players.count()):
        press(players.nth(i).locator("> summary"), touch)
    expect(section.locator("#analysis-mistakes li").first).to_be_visible()
    check_layout(page, f"{size}: the analysis, every part open", table=2, heading=2)
    opened = page.evaluate(HEIGHT)

    # round by round: inside its own box; the box says so when it scrolls (six players do not fit a phone)
    scroller = section.locator(".analysis-scroll")
    box = scroller.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, box
    overflows = scroller.evaluate("(el) => el.scrollWidth > el.clientWidth + 1")
    cue = section.locator(".scroll-cue")
    if overflows:
        expect(cue).to_be_visible()
    else:
        expect(cue).to_be_hidden()
    if touch:
        assert overflows, "six players' rounds fit a phone's width: the cue went untested"
    section.screenshot(path=str(screenshot_dir / f"{size}-analysis-open.png"))
    print(f"\n[analysis page, {size} {width} px] {shut} px tall as it opens, {opened} px with every part open")
