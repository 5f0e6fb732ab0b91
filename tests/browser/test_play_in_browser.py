"""A person plays La Pocha in a real browser (Debian's Chromium) against the real ASGI server.

Everything goes through the page, as a player would do it: sign up, pick four players, "Jugar ya",
wait for the bots to fill the table, then click a bid, a trump suit or a playable card whenever the
board offers one, over the htmx WebSocket, until three rounds have been scored.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.server import Daphne

from . import pages
from .pages import BrowserPerson

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is missing (pip install -e '.[dev]')"
)
expect = sync_api.expect

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
PASSWORD = "cuarenta-bazas-2025"
ROUNDS_TO_PLAY = 3  # rounds 1, 2 and 3 deal 1, 2 and 3 cards
PLAY_TIMEOUT = 180.0  # seconds for all of it; it takes a few (bots think for 0.05 s)
STEP_TIMEOUT = 30_000  # ms for any one change of the page

# Runs in the page before its own scripts: notes every round result the board shows (the result is
# on screen only until the next bids start, which fast bots make short), every flash message (a
# refused move) and any lost connection.
WATCH_BOARD = """
(() => {
  window.__pocha = {results: [], connectionLost: 0, flashes: []};
  const look = () => {
    const flash = document.getElementById('flash');
    const said = flash ? flash.textContent.trim() : '';
    if (said && !window.__pocha.flashes.includes(said)) window.__pocha.flashes.push(said);
    document.querySelectorAll('.round-result h3').forEach((h) => {
      const text = h.textContent.trim();
      if (!window.__pocha.results.includes(text)) window.__pocha.results.push(text);
    });
    if (document.querySelector('#connection[data-state="closed"]')) window.__pocha.connectionLost += 1;
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true});
})();
"""
NEWER_BOARD = "seq => parseInt(document.getElementById('table-root').dataset.seq, 10) > seq"


class Tab(BrowserPerson):
    """A browser tab whose watcher also notes every round result the board shows."""

    def __init__(self, browser: Any, server: Daphne, viewport: dict[str, int]) -> None:
        super().__init__(browser, server, "", viewport, watch_script=WATCH_BOARD)


@pytest.fixture
def phone(chromium: Any, pocha_server: Daphne) -> Iterator[Tab]:
    tab = Tab(chromium, pocha_server, PHONE)
    yield tab
    tab.context.close()


def sign_up(page: Any, username: str) -> None:
    pages.sign_up(page, username, PASSWORD)
    expect(page.locator(".site-nav .who")).to_have_text(username)


def round_number(page: Any) -> int:
    text = page.locator("#board-status .round-line").all_inner_texts()
    match = re.search(r"\d+", text[0]) if text else None
    return int(match.group()) if match else 0


def board_seq(page: Any) -> int:
    return int(page.locator("#table-root").get_attribute("data-seq") or "0")


def wait_for_newer_board(page: Any, seq: int) -> None:
    page.wait_for_function(NEWER_BOARD, arg=seq, timeout=STEP_TIMEOUT)


def click_move(locator: Any, drawn_at: int | None = None) -> int | None:
    """Click the first offered move; return the board seq it was made at, or None if it went away.

    The seq comes from the button itself (its ``hx-vals``), not from the page: a newer board may
    arrive between looking at the page and clicking, and the move's answer is the board after *its* seq.
    """
    try:
        button = locator.first.element_handle(timeout=2_000)
        seq = int(json.loads(button.get_attribute("hx-vals") or "{}")["seq"])
        if drawn_at is not None and seq != drawn_at:
            return None  # a newer board than the one whose round was read: look again
        button.click(timeout=2_000)
    except (sync_api.Error, KeyError, ValueError):
        return None  # the bots moved the board on: look again
    return seq


def play_until_round(page: Any, target: int, shots: Path) -> dict[str, int]:
    """Make whatever move the board offers until round ``target`` has begun; count the moves made."""
    moves = {"bid": 0, "trump": 0, "play": 0}
    bids = page.locator("#controls button.bid:not([disabled])")
    suits = page.locator("#controls button.suit")
    cards = page.locator("#hand button.card.playable")
    deadline = time.monotonic() + PLAY_TIMEOUT
    while True:
        drawn_at = board_seq(page)
        if round_number(page) >= target:
            break
        assert time.monotonic() < deadline, f"still in round {round_number(page)} after {PLAY_TIMEOUT} s"
        assert page.locator("#controls ol.ranking").count() == 0, "the game ended before the rounds were played"
        move, seq = None, None
        if bids.count():
            # not always the same bid: the second allowed one every other round
            move, seq = "bid", click_move(bids.nth(1) if moves["bid"] % 2 and bids.count() > 1 else bids, drawn_at)
        elif suits.count():
            move, seq = "trump", click_move(suits, drawn_at)
        elif cards.count():
            if cards.count() > 1 and not (shots / "phone-hand.png").exists():
                page.screenshot(path=str(shots / "phone-hand.png"), full_page=True)
            move, seq = "play", click_move(cards, drawn_at)
        if move and seq is not None:
            moves[move] += 1
            wait_for_newer_board(page, seq)  # the server answers an accepted move with the next board
        else:
            page.wait_for_timeout(50)
    return moves


@pytest.mark.smoke  # make test's browser game
def test_sign_up_quick_play_and_play_three_rounds_on_a_phone(phone: Tab, screenshot_dir: Path) -> None:
    page = phone.page
    sign_up(page, "lucia")

    # the lobby: four players, "Jugar ya"
    page.locator("input[name=size][value='4']").check()
    page.locator("#quick-play").click()
    page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    page.screenshot(path=str(screenshot_dir / "phone-table-opened.png"), full_page=True)

    # nobody else comes: after POCHA_QUICK_WAIT (1 s) three bots sit down and the game starts
    players = page.locator("#players li.seat")
    expect(players).to_have_count(4)
    expect(page.locator("#players li.seat.me")).to_have_count(1)
    expect(page.locator("#players .tag", has_text=re.compile(r"^bot · normal$"))).to_have_count(3)

    moves = play_until_round(page, ROUNDS_TO_PLAY + 1, screenshot_dir)
    page.screenshot(path=str(screenshot_dir / "phone-round-4.png"), full_page=True)

    # our bid in every round, and 1 + 2 + 3 cards (the first rounds have a trump card: no choosing)
    assert moves == {"bid": ROUNDS_TO_PLAY, "trump": 0, "play": ROUNDS_TO_PLAY * (ROUNDS_TO_PLAY + 1) // 2}
    # each round's result was shown on the table
    results = page.evaluate("window.__pocha.results")
    shown = {int(m.group()) for m in (re.search(r"\d+", text) for text in results) if m}
    assert shown >= set(range(1, ROUNDS_TO_PLAY + 1)), results
    # the scoreboard: a row per round played, a column and a total per player
    scoreboard = page.locator("#scores table.scoreboard")
    expect(scoreboard.locator("tbody tr")).to_have_count(ROUNDS_TO_PLAY)
    expect(scoreboard.locator("thead th")).to_have_count(1 + 4)
    expect(scoreboard.locator("tfoot td")).to_have_count(4)
    # each round's cell: bid / tricks won and the round's points; the totals: points
    for cell in scoreboard.locator("tbody td").all_text_contents():
        assert re.fullmatch(r"(\d+/\d+|—) -?\d+", " ".join(cell.split())), cell
    for cell in scoreboard.locator("tfoot td").all_text_contents():
        assert re.fullmatch(r"-?\d+", cell.strip()), cell
    # opened, it stays open while the board moves on (every push re-renders it)
    page.locator("#scores summary").click()
    expect(scoreboard).to_be_visible()
    seq = board_seq(page)
    click_move(page.locator("#controls button.bid:not([disabled])"))  # if it is our bid; else the bots move
    wait_for_newer_board(page, seq)
    expect(scoreboard).to_be_visible()

    page.set_viewport_size(DESKTOP)
    page.screenshot(path=str(screenshot_dir / "desktop-round-4.png"), full_page=True)

    assert page.evaluate("window.__pocha.connectionLost") == 0
    assert page.evaluate("window.__pocha.flashes") == []  # no move was refused
    assert phone.errors == []
