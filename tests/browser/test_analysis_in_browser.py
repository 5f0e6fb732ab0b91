"""After the game, in Chromium against the real server (its own analysis thread and child process): a game is
played to its end (its last round through the page's controls), «Analizar la partida» is pressed on the final
board, the progress bar fills until the page shows the analysis, the keyboard steps the replay to the first
marked mistake, and «Juega esta mano» plays that round again against bots, to the end of the hand and its
comparison («Tu mano, otra vez»: now, in the game, and difícil in the same seat).

The game up to its last round is played by ``manage.py demo_table`` (the person's moves as the fácil bot's):
what is tested here is the page's way to the analysis, not a whole game's clicking.  The server samples
8 worlds a decision (``POCHA_ANALYSIS_WORLDS``) so that the analysis takes seconds, not a minute.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from support.server import Daphne

from . import pages
from .pages import BrowserPerson
from .test_house_rules_in_browser import play
from .test_layout import PASSWORD, log_in
from .test_play_in_browser import round_number

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

#: This module's server (``conftest.pocha_server_process``): a quick analysis.
SERVER_SETTINGS = {"POCHA_ANALYSIS_WORLDS": "8"}
DESKTOP = {"width": 1280, "height": 900}


def test_analyse_a_game_step_to_its_first_mistake_and_play_that_hand_again(chromium: Any, pocha_server: Daphne) -> None:
    person = BrowserPerson(chromium, pocha_server, "ana", DESKTOP)
    page = person.page
    table_id = pages.demo_table(pocha_server, "ana", PASSWORD, "--size", "4", "--round", "19")
    log_in(page, "ana")
    page.goto(f"/mesa/{table_id}/")
    assert round_number(page) == 19  # the last round of a game at four
    moves = play(page, {"over": True}, 120)
    assert moves["play"] == 1  # its one card, by hand

    # «Analizar la partida» on the final board: to the replay, where the progress bar fills
    page.get_by_role("button", name="Analizar la partida").click()
    page.wait_for_url(re.compile(rf"/mesa/{table_id}/repeticion/#analisis$"))
    progress = page.locator("#analysis-progress progress")
    seen: set[int] = set()
    deadline = time.monotonic() + 180
    while page.locator("caption", has_text="Por jugador").count() == 0:
        assert time.monotonic() < deadline, f"the analysis did not finish: rounds seen done {sorted(seen)}"
        try:
            if progress.count():
                seen.add(int(progress.get_attribute("value", timeout=500) or "0"))
        except sync_api.Error:
            pass  # the page reloaded itself between looking and reading
        page.wait_for_timeout(200)
    assert seen, "the progress bar was never shown"
    expect(page.locator(".analysis-seats tbody tr")).to_have_count(4)
    expect(page.locator("svg.chart polyline")).to_have_count(4)
    assert page.locator(".analysis-thresholds").inner_text().count("desde") == 3
    mistakes = page.locator("#analysis-mistakes li")  # player by player, behind «Errores marcados (N)»
    assert mistakes.count() > 0, "a game of fácil and normal bots with no marked mistake"
    first_round = min(int((li.get_attribute("data-step") or "").split(":")[0]) for li in mistakes.all()) + 1

    # with the keyboard: N goes to the first marked mistake, whose weighing is shown beside the step
    viewer = page.locator("#replay-viewer")
    page.locator("body").press("n")
    expect(viewer).to_have_attribute("data-mark", re.compile(r"^(imprecision|error|blunder)$"))
    box = page.locator("#replay-analysis")
    expect(box).to_contain_text("Lo mejor según el análisis")
    expect(box).to_contain_text("±")
    mistake_round = int(viewer.get_attribute("data-round") or "0")
    assert mistake_round == first_round
    page.locator("body").press("n")  # and on to the next one, if any, and back
    page.locator("body").press("p")
    assert int(viewer.get_attribute("data-round") or "0") == mistake_round
    expect(viewer).to_have_attribute("data-mark", re.compile(r"."))

    # «Juega esta mano» on that round: a practice table with the same cards, played to its end
    page.get_by_role("button", name="Juega esta mano").click()
    page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    practice_id = int(re.search(r"/mesa/(\d+)/", page.url).group(1))  # type: ignore[union-attr]
    assert practice_id != table_id
    expect(page.locator(".practice-line")).to_have_attribute("data-practice-round", str(mistake_round))
    assert round_number(page) == mistake_round
    play(page, {"over": True}, 300)
    result = page.locator(".practice-result")
    expect(result).to_contain_text("Tu mano, otra vez")
    for row in ("now", "then", "dificil"):
        expect(result.locator(f"tr[data-row='{row}'] td[data-points]")).to_have_count(1, timeout=60_000)
    assert page.get_by_role("button", name="Analizar la partida").count() == 0  # a practice hand counts for nothing
