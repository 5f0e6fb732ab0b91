"""The card room in a real browser, at the table's real pace (tricks held up, rounds' results before
the next deal), on a 375×812 phone (by touch) and a 1280×800 desktop (by mouse), and by keyboard alone.

The tables are brought to the round wanted by ``manage.py demo_table`` (the same actions as live play,
every seat making its default move), then played live through the page.  What the page did is read
from its own event log (``window.pochaEvents``: each card slid in, each trick held and swept, each
result shown, each turn alert, with the page's clock), and axe-core (vendored in ``vendor/``) checks
the lobby, the table and the final ranking.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from support.server import Daphne

from . import pages
from .pages import BrowserPerson, add_test_script, came, sign_up

REAL_PACE = True  # this module's server keeps the table's real pauses (conftest.pocha_server_process)

PASSWORD = "cuarenta-bazas-2025"
PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 800}
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
MIN_HOLD_MS = 1500
ROUND_TIMEOUT = 120.0

EVENTS = "() => window.pochaEvents || []"
SLID_IN = """() => !document.getAnimations().some((a) => a.playState === 'running'
  && a.effect && a.effect.target && a.effect.target.matches && a.effect.target.matches('#trick .played'))"""
MY_TURN = """kind => {
  const status = document.getElementById('board-status');
  return !!status && (kind ? status.dataset.myTurn === kind : !!status.dataset.myTurn)
    && !document.getElementById('table-root').classList.contains('holding');
}"""


@pytest.fixture(scope="module")
def shots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``POCHA_SCREENSHOT_DIR`` (docs/screenshots when making the README's pictures), else a tmp dir."""
    chosen = os.environ.get("POCHA_SCREENSHOT_DIR")
    if chosen:
        path = Path(chosen)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("card-room-shots")


def shot(page: Any, path: Path, full_page: bool = False) -> None:
    """A screenshot of the page as a person sees it on arriving (scrolled to the top)."""
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(path), full_page=full_page)


def demo_table(server: Daphne, username: str, *args: str) -> int:
    return pages.demo_table(server, username, PASSWORD, *args)


def log_in(person: BrowserPerson, username: str) -> None:
    pages.log_in(person.page, username, PASSWORD)


def events(page: Any, kind: str | None = None) -> list[dict[str, Any]]:
    found = page.evaluate(EVENTS)
    return [e for e in found if kind is None or e["type"] == kind]


def axe_violations(page: Any) -> list[str]:
    """Serious and critical axe-core violations on the page as it is now."""
    if not page.evaluate("() => !!window.axe"):
        add_test_script(page, AXE)  # as a script of the site's own origin: the page's CSP forbids inline ones
    results = page.evaluate("""async () => {
      const r = await axe.run(document, {resultTypes: ['violations']});
      return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                     nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}));
    }""")
    return [
        f"{v['impact']} {v['id']}: {v['help']} at {v['nodes']}"
        for v in results
        if v["impact"] in ("serious", "critical")
    ]


def check_hand_in_view(page: Any, viewport: dict[str, int], cards: int) -> None:
    """Every card of the hand fully inside the viewport, in one row, with the page not scrolled."""
    boxes = page.evaluate("""() => Array.from(document.querySelectorAll('#hand button.card')).map(b => {
      const r = b.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};
    })""")
    assert len(boxes) == cards, boxes
    assert page.evaluate("() => window.scrollY") == 0
    for box in boxes:
        assert box["top"] >= 0 and box["bottom"] <= viewport["height"], (box, viewport)
        assert box["left"] >= 0 and box["right"] <= viewport["width"], (box, viewport)
    tops = {round(b["top"]) for b in boxes if True}
    assert max(tops) - min(tops) <= 12, f"the hand is not one row: {sorted(tops)}"  # playable cards rise a little
    # each card shows at least its corner (the fan overlaps them, it does not hide them)
    lefts = sorted(b["left"] for b in boxes)
    assert all(b - a >= 14 for a, b in zip(lefts, lefts[1:])), lefts


def press(page: Any, locator: Any, touch: bool, force: bool = False) -> None:
    """A tap on the phone, a click on the desktop.  ``force``: a card marked aria-disabled (which
    Playwright will not press by itself) — a person can still tap it, and is told why it won't go."""
    if touch:
        locator.tap(force=force)
    else:
        locator.click(force=force)


def play_round_by_hand(person: BrowserPerson, number: int, touch: bool, shots: Path, label: str) -> dict[str, int]:
    """Bid and play round ``number`` through the page until its result is shown; on the way, tap a
    card that may not be played (once), look back at the last trick (once), take the screenshots."""
    page = person.page
    seen = {"illegal": 0, "last_trick": 0, "cards": 0}
    deadline = time.monotonic() + ROUND_TIMEOUT
    shot_trick = False
    while not any(e["detail"].get("round") == str(number) for e in events(page, "result-shown")):
        assert time.monotonic() < deadline, f"round {number} did not end: {events(page)[-10:]}"
        if not shot_trick and events(page, "trick-complete"):
            # the picture once the last card has landed (its slide over), while the trick is held up
            page.wait_for_function(SLID_IN)
            shot(page, shots / f"{label}-trick.png")
            shot_trick = True
        if page.evaluate(MY_TURN, "bid"):
            press(page, page.locator("#controls button.bid:not([disabled])").first, touch)
            page.wait_for_function("() => !document.getElementById('board-status').dataset.myTurn")
            continue
        if page.evaluate(MY_TURN, "play"):
            refused = page.locator("#hand button.card:not(.playable)[data-reason]")
            # (after the trick's picture, which shows the table without the reason over it)
            if (
                shot_trick
                and not seen["illegal"]
                and refused.count()
                and page.locator("#hand button.card.playable").count()
            ):
                card = refused.first
                reason = card.get_attribute("data-reason")
                press(page, card, touch, force=True)
                hint = page.locator("#hand-hint")
                expect(hint).to_have_text(reason or "")
                expect(hint).to_be_in_viewport()
                assert events(page, "illegal")[-1]["detail"]["reason"] == reason
                seen["illegal"] += 1
            toggle = page.locator(".last-trick-toggle")
            if not seen["last_trick"] and not toggle.count() and events(page, "trick-complete"):
                # a trick has been played: «Última baza» comes with the board once the trick is no longer held
                # up (CI once saw the person play all of tricks 2 to 8 without it, each turn read while the
                # trick before was still on the felt); a short wait for it, then the card anyway
                came(page, "() => !!document.querySelector('.last-trick-toggle')", 2_500)
            if not seen["last_trick"] and toggle.count():
                press(page, toggle, touch)
                panel = page.locator("#last-trick")
                expect(panel).to_be_visible()
                expect(panel.locator("li.won")).to_have_count(1)
                press(page, toggle, touch)
                expect(panel).to_be_hidden()
                seen["last_trick"] += 1
            before = len(events(page, "card"))
            press(page, page.locator("#hand button.card.playable").first, touch)
            page.wait_for_function("n => window.pochaEvents.filter(e => e.type === 'card').length > n", arg=before)
            seen["cards"] += 1
            continue
        page.wait_for_timeout(50)
    return seen


def check_the_pace(page: Any, number: int, cards: int) -> None:
    """From the page's own events: each completed trick held at least 1.5 s before it was swept, and the
    round's last trick shown (and held) before the round's result."""
    log = events(page)
    complete = {e["detail"]["key"]: e for e in log if e["type"] == "trick-complete"}
    cleared = {e["detail"]["key"]: e for e in log if e["type"] == "trick-cleared"}
    keys = [f"{number}-{t}" for t in range(1, cards + 1)]
    for key in keys:
        assert key in complete, f"trick {key} was never held up: {sorted(complete)}"
        assert complete[key]["detail"]["cards"] == 4, complete[key]
        assert complete[key]["detail"]["winner"] is not None
        assert key in cleared or key == keys[-1], f"trick {key} was never swept"
        if key in cleared:
            held = cleared[key]["at"] - complete[key]["at"]
            assert held >= MIN_HOLD_MS, f"trick {key} was up for {held:.0f} ms"
    last = complete[keys[-1]]
    assert last["detail"]["last"] is True
    result = [e for e in log if e["type"] == "result-shown" and e["detail"]["round"] == str(number)]
    assert result, "the round's result was not shown"
    assert result[0]["detail"]["afterTrick"] is True
    assert result[0]["at"] - last["at"] >= MIN_HOLD_MS, "the result came before the last trick had been shown"


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_a_round_at_the_card_table(chromium: Any, pocha_server: Daphne, shots_dir: Path, size: str) -> None:
    viewport = PHONE if size == "phone" else DESKTOP
    touch = size == "phone"
    username = f"sala-{size}"
    table_id = demo_table(pocha_server, username, "--round", "8")  # 8 cards each, round 8 of 19
    person = BrowserPerson(chromium, pocha_server, username, viewport, has_touch=touch, is_mobile=touch)
    watcher = None
    try:
        log_in(person, username)
        assert not axe_violations(person.page), axe_violations(person.page)  # the lobby
        page = person.page
        page.goto(f"/mesa/{table_id}/")
        expect(page.locator("#felt li.seat")).to_have_count(4)
        expect(page.locator("#felt li.seat.me")).to_have_count(1)
        check_hand_in_view(page, viewport, 8)

        # the turn alert: the title and the page's own event
        page.wait_for_function(MY_TURN, arg="bid", timeout=60_000)
        expect(page).to_have_title(re.compile(r"^● Te toca · Mesa \d+"))
        assert events(page, "turn")[-1]["detail"]["kind"] == "bid"
        expect(page.locator("#announcer")).to_contain_text("Te toca")
        assert page.locator("#board-status .bids-line").count() in (0, 1)
        check_hand_in_view(page, viewport, 8)
        violations = axe_violations(page)
        assert not violations, violations  # the table
        shot(page, shots_dir / f"{size}-bidding.png")

        # someone watches: the table says so
        watcher = BrowserPerson(chromium, pocha_server, f"mirona-{size}", DESKTOP)
        sign_up(watcher.page, f"mirona-{size}", PASSWORD)
        watcher.page.goto(f"/mesa/{table_id}/")
        expect(page.locator("#board-status .watchers")).to_contain_text("1 mirando")
        expect(watcher.page.locator("#hand button.card")).to_have_count(0)  # a spectator sees no hand

        # table talk: a phrase shows as a bubble by my seat, on my page and the spectator's
        press(page, page.get_by_role("button", name="Frases", exact=True), touch)  # the phrases open from the felt
        press(page, page.get_by_role("button", name="¡Suerte!"), touch)
        expect(page.locator("#felt li.seat.me .bubble")).to_have_text("¡Suerte!")
        me = page.locator("#felt li.seat.me").get_attribute("data-seat")
        expect(watcher.page.locator(f"#seat-{me} .bubble")).to_have_text("¡Suerte!")

        seen = play_round_by_hand(person, 8, touch, shots_dir, size)
        # (if a card was not the person's: what the page said and did at the end of the round)
        assert seen["cards"] == 8 and seen["last_trick"] == 1, (
            seen,
            page.evaluate("window.__pocha"),
            [(e["type"], e["detail"]) for e in events(page)[-24:]],
        )
        shot(page, shots_dir / f"{size}-round-result.png")
        check_the_pace(page, 8, 8)
        assert all(e["detail"]["animated"] for e in events(page, "card")), "a card did not slide in"
        # the result stays up until the next deal (round 9: an auction of 8 cards), then makes way
        expect(page.locator("#round-result")).to_be_visible()
        dealt = page.locator("#board-status .round-line")
        assert "Ronda 8 " in dealt.inner_text()
        expect(dealt).to_contain_text("Ronda 9", timeout=30_000)
        shown = events(page, "result-shown")[-1]["at"]
        # up for the round pause (7 s from the last card) less the last trick's hold and sweep (about 2.2 s)
        assert page.evaluate("() => performance.now()") - shown >= 3500
        expect(page.locator("#round-result")).to_have_count(0)
        # the scoreboard: bid / tricks and points per player per round
        page.locator("#scores summary").click()
        cells = page.locator("#scores table.scoreboard tbody tr").nth(7).locator("td")
        expect(cells).to_have_count(4)
        for text in cells.all_inner_texts():
            assert re.fullmatch(r"\d/\d -?\d+", " ".join(text.split())), text
        assert not person.errors, person.errors
        assert not watcher.errors, watcher.errors
    finally:
        person.context.close()
        if watcher is not None:
            watcher.context.close()


def test_a_keyboard_only_player_finishes_a_round(chromium: Any, pocha_server: Daphne) -> None:
    """By keyboard alone, and with the system asking for reduced motion: no card slides or sweeps."""
    username = "teclado"
    table_id = demo_table(pocha_server, username, "--round", "3")
    person = BrowserPerson(chromium, pocha_server, username, DESKTOP, reduced_motion="reduce")
    try:
        log_in(person, username)
        page = person.page
        page.goto(f"/mesa/{table_id}/")
        mine = 0
        deadline = time.monotonic() + ROUND_TIMEOUT
        while not any(e["detail"].get("round") == "3" for e in events(page, "result-shown")):
            assert time.monotonic() < deadline, f"the round did not end: {events(page)[-8:]}"
            if page.evaluate(MY_TURN, "bid"):
                tab_to(page, "#controls .bid-buttons button:not([disabled])")
                page.keyboard.press("Enter")
                page.wait_for_function("() => !document.getElementById('board-status').dataset.myTurn")
            elif page.evaluate(MY_TURN, "play"):
                tab_to(page, "#hand button.card")
                for _ in range(10):
                    if page.evaluate("() => document.activeElement.classList.contains('playable')"):
                        break
                    page.keyboard.press("ArrowRight")
                focused = page.evaluate("() => document.activeElement.dataset.card")
                assert page.evaluate("() => document.activeElement.classList.contains('playable')")
                page.keyboard.press("Enter")
                page.wait_for_function(
                    "c => !document.querySelector(`#hand button.card[data-card='${c}']`)", arg=focused
                )
                mine += 1
            else:
                page.wait_for_timeout(50)
        assert mine == 3
        cards = events(page, "card")
        assert len(cards) >= 9 and not any(e["detail"]["animated"] for e in cards)  # reduced motion: none slid
        running = page.evaluate("""() => document.getAnimations().filter(a => a.playState === 'running')
          .map(a => (a.animationName || a.transitionProperty || 'script') + ' on ' + (a.effect && a.effect.target ? a.effect.target.className : '?'))""")
        assert running == [], running
        # the focus is always visible where it lands
        outline = page.evaluate("""() => { const el = document.activeElement;
          return el && el !== document.body ? getComputedStyle(el).outlineStyle : 'none'; }""")
        assert outline != "none"
        assert not person.errors, person.errors
    finally:
        person.context.close()


def tab_to(page: Any, selector: str, limit: int = 60) -> None:
    """Press Tab until the focus is on an element matching ``selector`` (or already is)."""
    for _ in range(limit):
        if page.evaluate("s => !!document.activeElement && document.activeElement.matches(s)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_final_ranking(chromium: Any, pocha_server: Daphne, shots_dir: Path, size: str) -> None:
    viewport = PHONE if size == "phone" else DESKTOP
    username = f"final-{size}"
    table_id = demo_table(pocha_server, username, "--to-the-end")
    person = BrowserPerson(chromium, pocha_server, username, viewport)
    try:
        log_in(person, username)
        page = person.page
        page.goto(f"/mesa/{table_id}/")
        final = page.get_by_role("heading", name="Clasificación final")
        expect(final).to_be_visible()
        expect(page.locator("#controls ol.ranking li")).to_have_count(4)
        expect(page.get_by_role("link", name=re.compile("Descargar la partida"))).to_be_visible()
        expect(page.locator("#scores details")).to_have_attribute("open", "")
        violations = axe_violations(page)
        assert not violations, violations
        shot(page, shots_dir / f"{size}-final.png", full_page=size == "phone")
        # «Revancha»: the same options at a new table; alone with bots, it starts at once
        page.get_by_role("button", name="Revancha", exact=True).click()
        page.wait_for_url(re.compile(rf"/mesa/(?!{table_id}/)\d+/$"))
        expect(page.locator("#board-status .round-line")).to_contain_text("Ronda 1 de 19")
        expect(page.locator("#felt li.seat")).to_have_count(4)
        assert not person.errors, person.errors
    finally:
        person.context.close()
