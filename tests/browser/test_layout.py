"""Every screen a player sees, laid out without overlaps at 375×812 (a phone, by touch) and 1280×800 (a
desktop): nothing drawn over anything else and nothing wider than the screen (``layout.check_layout``),
every card of a fanned hand showing its whole index (``layout.index_problems``), every seat's plate
showing its name, level, tags, score and clock whole (``layout.check_plates``), and every card of a long
hand keeping a part in view that a tap reaches (``layout.tap_problems``).

The walk, at each size, in one browser (a person of its own for each demo table: nobody plays two at once):

* the lobby (with «Tus mesas»), a private table waiting (the code box under the felt), the same table
  cancelled, a public table waiting;
* an auction round at four: the bidding with the 8-card hand (each card's index in view), «Frases»
  opened, the «Demasiados mensajes» warning, the trump choice;
* the last two tricks of a round at four: a trick in play, «Última baza», each completed trick held up
  with every seat's card on the felt, the round's result;
* a round at six and one at eight (se dobla): the bidding, a trick in play, a completed trick with every
  active seat's card, the plates whole each time;
* a hand of 13 (se dobla at three) while bidding: the index and a tap target for every card, and the note
  a refused card gives, over nothing and moving nothing;
* the final board (ranking, rematch, links, «Marcador por rondas»), and on it, with the DOM altered, the
  felt at 3 to 8 seats with a card played in every slot, the plates at their fullest (long names, levels,
  away, the turn's clock and the deal at each seat in turn, blind bids at 7 and 8) over a hand of 13
  cards, and the note on a refused card;
* the replay (at the start and with a trick on its felt), the profile, the rankings and the wallet.

A completed trick, a round's result and «Última baza» (opened with the first card of a trick that has it)
are checked the moment the page shows them, by a listener on the page's own events (``pocha:trick-complete``,
``pocha:result-shown``, ``pocha:card``); the page asks for reduced motion, so no card is in flight then.
``test_the_checker_finds_what_it_is_for`` plants overlaps and a page too wide, and checks that the same
check fails on them; the final board's walk breaks a plate, the hand and a card's place and sees the
plate, index, tap and overlap checks fail.  The screens of the tables at four, six and eight and of the
hand of 13 are saved in ``screenshot_dir`` (``POCHA_SCREENSHOT_DIR``; README's pictures come from them).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.template.loader import render_to_string
from playwright.sync_api import expect
from support.server import Daphne

from . import pages
from .layout import (
    FANNED,
    KINDS,
    OVERLAPS,
    PLATE_PARTS,
    PLATES,
    TOLERANCE,
    add_width_problem,
    check_layout,
    check_plates,
    index_problems,
    layout_report,
    plate_report,
    tap_problems,
)
from .pages import BrowserPerson, came

REAL_PACE = True  # tricks held up and rounds' results shown, as people see them (conftest.pocha_server_process)

PASSWORD = "cuarenta-bazas-2025"
VIEWPORTS = {"phone": {"width": 375, "height": 812}, "desktop": {"width": 1280, "height": 800}}
WALK_TIMEOUT = 90.0  # seconds for any one stretch of live play (the bots think 0.05 s, tricks pause 2.2 s)

MY_TURN = """kind => {
  const status = document.getElementById('board-status');
  return !!status && (kind ? status.dataset.myTurn === kind : !!status.dataset.myTurn)
    && !document.getElementById('table-root').classList.contains('holding');
}"""

# Checks the layout the moment the page holds a completed trick up, shows a round's result or the final
# ranking (the page's own events), and keeps what it found in window.__layoutLog.
CHECK_ON_EVENTS = """
(() => {
  const check = %s;
  const plates = %s;
  const parts = %s;
  const options = {kinds: %s, fanned: %s, tolerance: %s, overlays: [], width: %s};
  window.__layoutLog = [];
  for (const type of ['trick-complete', 'result-shown', 'final-shown']) {
    document.addEventListener('pocha:' + type, (event) => {
      const root = document.getElementById('table-root');
      window.__layoutLog.push({type, detail: event.detail.detail, report: check(options), plates: plates(parts),
                               held: !!root && root.classList.contains('holding')});
    });
  }
  // The first card down on a trick with «Última baza» on the felt: the panel opened, checked, closed.
  document.addEventListener('pocha:card', () => {
    const toggle = document.querySelector('.last-trick-toggle');
    if (!toggle || window.__layoutLog.some((e) => e.type === 'last-trick')) return;
    toggle.click();
    const report = check(Object.assign({}, options, {overlays: ['#last-trick']}));
    const open = !document.getElementById('last-trick').hidden;
    toggle.click();
    window.__layoutLog.push({type: 'last-trick', detail: {open}, report, held: false});
  });
})();
"""

LONG_NAMES = [
    "maximiliano_fernandez",
    "Bartolomé Ruiz-Gallardo",
    "Inmaculada Concepción",
    "Wenceslao_de_la_Torre",
    "Guadalupe Etxeberria",
    "Fulgencio Santamaría",
    "Remedios Villalobos",
    "Hermenegildo López",
]


def visit(server: Daphne, page: Any, username: str, *args: str) -> int:
    """A demo table for a person of its own (nobody may play two tables at once), logged in and looking."""
    table_id = demo_table(server, username, *args)
    page.context.clear_cookies()  # out of the previous person's session
    log_in(page, username)
    page.goto(f"/mesa/{table_id}/")
    return table_id


def demo_table(server: Daphne, username: str, *args: str) -> int:
    return pages.demo_table(server, username, PASSWORD, *args)


def log_in(page: Any, username: str) -> None:
    pages.log_in(page, username, PASSWORD)


def press(page: Any, locator: Any, touch: bool) -> None:
    if touch:
        locator.tap()
    else:
        locator.click()


def log(page: Any, kind: str) -> list[dict[str, Any]]:
    return [e for e in page.evaluate("() => window.__layoutLog || []") if e["type"] == kind]


def check_logged(page: Any, entry: dict[str, Any], where: str, plates: int = 0, **at_least: int) -> None:
    """A check the page made at one of its events (CHECK_ON_EVENTS), as ``check_layout`` would; ``plates``:
    how many seats' plates it must have found, none of them cut (``check_plates``)."""
    if plates:
        assert len(entry["plates"]) == plates, f"{where}: {len(entry['plates'])} plates, expected {plates}"
        cut = [f"{p['seat']}: {problem}" for p in entry["plates"] for problem in p["problems"]]
        assert not cut, f"{where}:\n  " + "\n  ".join(cut)
    report = entry["report"]
    add_width_problem(report, page.viewport_size["width"])
    assert not report["problems"], f"{where}:\n  " + "\n  ".join(report["problems"])
    for kind, n in at_least.items():
        shown = report["counts"].get(kind.replace("_", " "), 0)
        assert shown >= n, f"{where}: {shown} {kind}(s) compared, expected {n}: {report['counts']}"


def check_index(page: Any, where: str, cards: int) -> None:
    checked, problems = index_problems(page)
    assert checked == cards, f"{where}: {checked} cards in the hand, expected {cards}"
    assert not problems, f"{where}:\n  " + "\n  ".join(problems)


def in_view_unscrolled(page: Any, selector: str) -> None:
    """The element is on the screen as the page first shows (not scrolled).  A board redrawn at that
    moment swaps the element for a new one: its box is read again once the new one is shown."""
    page.evaluate("() => window.scrollTo(0, 0)")
    element = page.locator(selector).first
    box = None
    for _ in range(3):
        expect(element).to_be_visible()
        box = element.bounding_box()
        if box is not None:
            break
    viewport = page.viewport_size
    assert box is not None, f"{selector} is not shown"
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], (selector, box, viewport)
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], (selector, box, viewport)


def face(rank: int, suit: str) -> str:
    return render_to_string("games/_card.html", {"card": {"rank": rank, "suit": suit}}).strip()


@pytest.fixture
def walker(chromium: Any, pocha_server: Daphne, request: pytest.FixtureRequest) -> Any:
    size = request.param
    touch = size == "phone"
    person = BrowserPerson(
        chromium,
        pocha_server,
        LONG_NAMES[0] + "_" + size[0],
        VIEWPORTS[size],
        has_touch=touch,
        is_mobile=touch,
        reduced_motion="reduce",
    )
    person.context.add_init_script(
        CHECK_ON_EVENTS
        % (OVERLAPS, PLATES, _js(PLATE_PARTS), _js(KINDS), _js(FANNED), TOLERANCE, VIEWPORTS[size]["width"])
    )
    yield size, person
    person.context.close()


def _js(value: Any) -> str:
    return json.dumps(value)


# -- the checker itself -------------------------------------------------------------------------------

PLANTED = """<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width">
<style>body { margin: 0; font: 16px sans-serif; } .abs { position: absolute; } h2 { margin: 0; font-size: 14px; }
.scroll { overflow-x: auto; } .wide { width: 900px; }</style></head><body>
<h1 id="title">Mesa 7</h1>
<button id="a" class="abs" style="left: 10px; top: 60px; width: 120px; height: 40px">Descargar la partida</button>
<details open><summary id="s" class="abs" style="left: 60px; top: 80px">Marcador por rondas</summary></details>
<a id="parent" href="#" class="abs" style="left: 10px; top: 200px; width: 200px; height: 40px"><h2>dentro</h2></a>
<section id="hand"><button class="card abs" style="left: 10px; top: 300px; width: 60px; height: 90px">1</button>
<button class="card abs" style="left: 40px; top: 300px; width: 60px; height: 90px">2</button></section>
<div class="scroll abs" style="left: 0; top: 450px; width: 375px"><table class="wide"><tr><td>ancha</td></tr></table></div>
<button id="hidden" class="abs" style="left: 10px; top: 60px; visibility: hidden">oculto</button>
</body></html>"""


def test_the_checker_finds_what_it_is_for(chromium: Any) -> None:
    """Planted: a link over a summary (the final screen's defect), a card of the hand over another (allowed),
    an element over its own child (allowed), a hidden button (left out), a wide table in a scrolling box
    (allowed), then a page wider than the screen (reported)."""
    context = chromium.new_context(viewport=VIEWPORTS["phone"])
    try:
        page = context.new_page()
        page.set_content(PLANTED)
        report = layout_report(page)
        assert len(report["problems"]) == 1, report["problems"]
        assert re.search(
            r'control <button#a[.\w]*> "Descargar la partida".* overlaps control <summary#s[.\w]*>',
            report["problems"][0],
        )
        assert report["counts"]["control"] == 5  # a, s, parent and the two cards; not the hidden one
        assert report["counts"] == {"control": 5, "heading": 2, "table": 1, "seat": 0, "played card": 0, "panel": 0}
        with pytest.raises(AssertionError, match="overlaps"):
            check_layout(page, "planted")
        # moved apart, nothing is left to report
        page.evaluate("() => { document.getElementById('a').style.top = '400px'; }")
        assert layout_report(page)["problems"] == []
        # a page wider than the screen, and a control half off it
        page.evaluate("""() => { const b = document.getElementById('parent');
          b.style.left = '300px'; document.getElementById('title').style.width = '500px'; }""")
        problems = layout_report(page)["problems"]
        assert any("is outside the 375 px wide viewport" in p and "<a#parent" in p for p in problems), problems
        assert any("px wide in a 375 px wide viewport" in p for p in problems), problems
    finally:
        context.close()


# -- the walk -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("walker", ["phone", "desktop"], indirect=True)
def test_every_screen_at_both_sizes(pocha_server: Daphne, walker: Any, screenshot_dir: Path) -> None:
    size, person = walker
    page = person.page
    touch = size == "phone"
    name = person.name
    final_id = demo_table(pocha_server, name, "--to-the-end", "--stake", "100")  # also creates the account
    log_in(page, name)

    # the lobby, with the finished table among «Tus mesas»
    check_layout(page, f"{size}: the lobby", control=10, heading=4)

    # a private table waiting: the code box under the felt, the empty seats around it
    page.locator("#private form.private-table button[type=submit]").click()
    page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    expect(page.locator("#table-code")).to_be_visible()
    check_layout(page, f"{size}: a private table waiting", seat=4, panel=1)
    press(page, page.get_by_role("button", name="Cancelar la mesa"), touch)
    expect(page.locator("#board-status")).to_have_attribute("data-status", "cancelled")
    check_layout(page, f"{size}: the private table cancelled", seat=4)

    # a public table waiting for players
    page.goto("/")
    page.locator("form.create-table button[type=submit]").click()
    page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    expect(page.locator("#board-status")).to_have_attribute("data-status", "waiting")
    check_layout(page, f"{size}: a public table waiting", seat=4)
    press(page, page.get_by_role("button", name="Levantarse"), touch)
    expect(page.get_by_role("button", name="Levantarse")).to_have_count(0)

    walk_an_auction(pocha_server, page, name, size, touch)
    walk_the_last_tricks(pocha_server, page, name, size, touch, screenshot_dir)
    walk_a_trick_at(pocha_server, page, name, size, touch, screenshot_dir, 6, 5, "--round", "8")
    walk_a_trick_at(
        pocha_server, page, name, size, touch, screenshot_dir, 8, 8, "--rules", "se-dobla:sencillas", "--round", "4"
    )
    walk_a_hand_of_13(pocha_server, page, name, size, touch, screenshot_dir)
    page.context.clear_cookies()
    log_in(page, name)  # back to the person who played the finished table
    walk_the_final_board(page, size, final_id)
    # the final board was made wider than the screen on purpose (the checks must fail there), and a phone
    # zooms out to show it all: the next pages in a new tab, so that no zoom of that page can count for them.
    # (The replay seen 436 and 446 px wide at 375 in CI was not that zoom: the summary's visually hidden
    # trump names escaped its scrolling box, see WIDEN_THE_SUMMARY.)
    page = person.fresh_page()
    walk_the_other_pages(page, size, final_id, name)
    assert not person.errors, person.errors


def walk_an_auction(server: Daphne, page: Any, name: str, size: str, touch: bool) -> None:
    """An auction round at four (8 cards): the bidding, «Frases», the flood warning, the trump choice.
    The person bids 8, the most there is: a bot that bid 8 before would win the auction instead (it never
    has), and then the round is tried again at a new table."""
    for attempt in range(3):
        visit(server, page, f"{name}-a{attempt}", "--round", "9")
        page.wait_for_function(MY_TURN, arg="bid", timeout=WALK_TIMEOUT * 1000)
        check_layout(page, f"{size}: bidding in an auction", seat=4, panel=1)
        check_index(page, f"{size}: the 8-card hand while bidding", 8)
        in_view_unscrolled(page, "#hand ul.hand")

        # «Frases»: on the felt, in view with the hand; the panel opens over the felt
        toggle = page.get_by_role("button", name="Frases", exact=True)
        in_view_unscrolled(page, ".talk-toggle")
        press(page, toggle, touch)
        panel = page.get_by_role("group", name="Frases")
        expect(panel).to_be_visible()
        in_view_unscrolled(page, "#talk-panel")
        check_layout(page, f"{size}: the phrases open", overlays=("#talk-panel",), seat=4, panel=2)
        # phrases in a row: a fourth in one window is one too many (three per 10 s), and the warning says so.
        # The windows are fixed (``pocha_site.ratelimit``): four phrases may straddle two of them, so the
        # phrases go on until the warning comes; seven in a few seconds put four in one window.
        # Said in the flash, and read from the flashes the page recorded as shown (a board pushed right after
        # it, a seat's presence say, empties it).
        warned = "() => window.__pocha.flashes.some((text) => text.startsWith('Demasiados mensajes'))"
        for said in range(1, 8):
            if not panel.is_visible():
                press(page, toggle, touch)
            press(page, panel.get_by_role("button", name="¡Suerte!"), touch)
            expect(panel).to_be_hidden()
            if said >= 4 and came(page, warned, 2_000 if said < 7 else 5_000):
                break
        assert page.evaluate(warned), f"no «Demasiados mensajes» after {said} phrases in a row"
        check_layout(page, f"{size}: the «Demasiados mensajes» warning", seat=4, panel=2)

        press(page, page.get_by_role("button", name="Pedir 8", exact=True), touch)
        page.wait_for_function(
            """() => { const s = document.getElementById('board-status');
              return s.dataset.myTurn === 'trump' || s.dataset.myTurn === 'play'
                || !!document.querySelector('#felt .trick .played'); }""",
            timeout=WALK_TIMEOUT * 1000,
        )
        if page.evaluate(MY_TURN, "trump"):
            expect(page.get_by_role("group", name="Elige el triunfo")).to_be_visible()
            check_layout(page, f"{size}: choosing the trump", seat=4, panel=1)
            press(page, page.get_by_role("group", name="Elige el triunfo").get_by_role("button").first, touch)
            return
    raise AssertionError("a bot outbid 8 in three auctions in a row: the trump choice was never offered")


def walk_the_last_tricks(server: Daphne, page: Any, name: str, size: str, touch: bool, shots: Path) -> None:
    """The last two tricks of round 8 at four: a trick in play (every plate whole), «Última baza», both
    completed tricks (checked the moment they are held up, every seat's card on the felt), and the
    round's result."""
    visit(server, page, f"{name}-t", "--round", "8", "--tricks", "6")
    played = 0
    deadline = time.monotonic() + WALK_TIMEOUT
    while not log(page, "result-shown"):
        assert time.monotonic() < deadline, (
            f"round 8 did not end: {page.evaluate('() => window.pochaEvents.slice(-8)')}"
        )
        if page.evaluate(MY_TURN, "play"):
            check_layout(page, f"{size}: a trick in play (trick {7 + played})", seat=4)
            check_plates(page, f"{size}: the plates at four", 4, name=4, level=1, dealer=1, clock=1)
            if not played:
                shoot(page, shots / f"{size}-seats-4.png")
            before = len(log(page, "trick-complete"))
            press(page, page.locator("#hand button.card.playable").first, touch)
            page.wait_for_function(
                "n => (window.__layoutLog || []).filter(e => e.type === 'trick-complete').length > n",
                arg=before,
                timeout=WALK_TIMEOUT * 1000,
            )
            played += 1
            continue
        page.wait_for_timeout(50)
    completed = log(page, "trick-complete")
    # (the page may first hold up trick 6, the last one completed when it opened)
    assert {"8-7", "8-8"} <= {e["detail"]["key"] for e in completed}, completed
    for entry in completed:
        assert entry["held"], "the trick was checked after it had been swept"
        assert entry["detail"]["cards"] == 4
        where = f"{size}: trick {entry['detail']['key']} held up at four"
        check_logged(page, entry, where, plates=4, seat=4, played_card=4)
    last_tricks = log(page, "last-trick")
    assert last_tricks, "«Última baza» never showed"  # it does once a card is down in trick 7 or 8
    for entry in last_tricks:
        assert entry["detail"]["open"], "«Última baza» did not open"
        check_logged(page, entry, f"{size}: «Última baza» open", seat=4, panel=1)
    check_logged(page, log(page, "result-shown")[0], f"{size}: the result of round 8", seat=4, panel=1)
    expect(page.locator("#round-result")).to_be_visible()
    check_layout(page, f"{size}: the result of round 8, still up", seat=4, panel=1)


def walk_a_trick_at(
    server: Daphne, page: Any, name: str, size: str, touch: bool, shots: Path, seats: int, cards: int, *args: str
) -> None:
    """A round at six (five play, the dealer rests) or at eight (se dobla): the bidding and a trick in
    play if the person is dealt in (every plate whole), and the first trick held up with every active
    seat's card (``cards``)."""
    visit(server, page, f"{name}-s{seats}", "--size", str(seats), *args)
    expect(page.locator("#felt li.seat")).to_have_count(seats)
    shot = False
    deadline = time.monotonic() + WALK_TIMEOUT
    while not log(page, "trick-complete"):
        assert time.monotonic() < deadline, f"the first trick at {seats} never completed"
        for kind in ("bid", "play"):
            if page.evaluate(MY_TURN, kind):
                seq = page.evaluate("() => document.getElementById('table-root').dataset.seq")
                check_layout(page, f"{size}: {seats} seats, {kind}", seat=seats)
                check_plates(
                    page, f"{size}: the plates at {seats}, {kind}", seats, name=seats, level=1, dealer=1, clock=1
                )
                if kind == "bid":
                    check_index(page, f"{size}: the hand at {seats}", page.locator("#hand button.card").count())
                    press(page, page.locator("#controls button.bid:not([disabled])").first, touch)
                else:
                    if not shot:
                        shoot(page, shots / f"{size}-seats-{seats}.png")
                        shot = True
                    press(page, page.locator("#hand button.card.playable").first, touch)
                # the next board (a tap lost under load is made by the clock, in the end)
                page.wait_for_function(
                    "seq => document.getElementById('table-root').dataset.seq !== seq",
                    arg=seq,
                    timeout=WALK_TIMEOUT * 1000,
                )
                break
        else:
            page.wait_for_timeout(50)
    entry = log(page, "trick-complete")[0]
    assert entry["held"] and entry["detail"]["cards"] == cards, entry["detail"]
    where = f"{size}: the first trick held up at {seats}"
    check_logged(page, entry, where, plates=seats, seat=seats, played_card=cards)
    if not shot:
        shoot(page, shots / f"{size}-seats-{seats}.png")


def walk_a_hand_of_13(server: Daphne, page: Any, name: str, size: str, touch: bool, shots: Path) -> None:
    """Round 13 of se dobla at three: 13 cards each.  While bidding: every card of the hand shows its index
    and keeps a part in view that a tap at its middle reaches (two rows on a phone); the plates whole; a
    tap there on a card that may not be played yet says why, just above the hand, over nothing, and the
    hand stays where it was on the screen (on a phone the felt is at its smallest here: the page scrolls
    by the note's height)."""
    visit(server, page, f"{name}-13", "--size", "3", "--rules", "se-dobla:sencillas", "--round", "13")
    page.wait_for_function(MY_TURN, arg="bid", timeout=WALK_TIMEOUT * 1000)
    check_layout(page, f"{size}: bidding with 13 cards", seat=3, panel=1)
    check_index(page, f"{size}: the hand of 13 while bidding", 13)
    check_plates(page, f"{size}: the plates at three", 3, name=3, level=1, dealer=1, clock=1)
    targets, problems = tap_problems(page)
    assert len(targets) == 13 and not problems, f"{size}: the hand of 13:\n  " + "\n  ".join(problems)
    shoot(page, shots / f"{size}-hand-13.png")
    # a tap at the middle of the last card's part in view (all are refused while bidding)
    target = targets[-1]
    hand_top = page.locator("#hand").bounding_box()["y"]
    reason = page.locator(f'#hand button.card[data-card="{target["card"]}"]').get_attribute("data-reason")
    assert reason, target
    if touch:
        page.touchscreen.tap(target["x"], target["y"])
    else:
        page.mouse.click(target["x"], target["y"])
    expect(page.locator("#hand-hint")).to_have_text(reason)
    assert (
        page.evaluate("() => window.pochaEvents.filter(e => e.type === 'illegal').pop().detail.card") == target["card"]
    )
    check_layout(page, f"{size}: the note on a refused card", seat=3, panel=2)
    hint = page.locator("#hand-hint").bounding_box()
    assert hint["y"] >= 0 and hint["y"] + hint["height"] <= page.locator("#hand").bounding_box()["y"] + TOLERANCE
    assert abs(page.locator("#hand").bounding_box()["y"] - hand_top) <= TOLERANCE, "the note moved the hand"


def shoot(page: Any, path: Path) -> None:
    """A picture of the screen as it is, across the page's column (``screenshot_dir``: README's pictures are
    made from these, run through ``pngquant``)."""
    column = page.locator("main.content").bounding_box()
    viewport = page.viewport_size
    clip = {
        "x": max(0, column["x"]),
        "y": 0,
        "width": min(column["width"], viewport["width"]),
        "height": viewport["height"],
    }
    page.screenshot(path=str(path), clip=clip)


FABRICATE = """
({n, names, faces, hand, turn, blind}) => {
  const felt = document.getElementById('felt');
  felt.className = felt.className.replace(/\\bn-\\d+\\b/, 'n-' + n);
  const seats = felt.querySelector('#players');
  const model = seats.querySelector('li.seat');
  seats.textContent = '';
  for (let k = 0; k < n; k++) {
    const li = model.cloneNode(true);
    const on = k === turn;  // the turn (the clock) and the deal, at the same seat
    const person = k % 2 === 0;
    li.id = 'seat-x' + k;
    li.dataset.seat = String(k);
    li.className = 'seat slot-' + k + (k === 0 ? ' me' : '') + (on ? ' turn' : '') + (person && k ? ' offline' : '');
    li.querySelector('.seat-name').textContent = names[k];
    // the most tags a seat gets: a person's level, the deal (at six the dealer rests), away; a bot's level
    const dealer = on ? '<span class="tag dealer" title="reparte">reparte</span>' + (n === 6 ? '<span class="tag">descansa</span>' : '') : '';
    li.querySelector('.seat-tags').innerHTML = k === 0
      ? '<span class="tag">tú</span><span class="tag seat-level" title="Nivel">Nv. 1234</span>' + dealer
      : person ? '<span class="tag seat-level" title="Nivel">Nv. 1234</span>' + dealer + '<span class="tag bot-plays">desconectado</span>'
      : '<span class="tag bot-tag">bot · difícil</span><span class="tag seat-level" title="Nivel">Nv. 1880</span>' + dealer;
    const badge = li.querySelector('.badge');
    badge.querySelectorAll('.clock, .thinking, .blind-bid').forEach((e) => e.remove());
    if (blind) badge.insertAdjacentHTML('beforeend', '<span class="tag blind-bid">a ciegas: 10</span>');
    if (on) badge.insertAdjacentHTML('beforeend', '<span class="clock" role="timer">30 s</span>');
    seats.appendChild(li);
  }
  const center = felt.querySelector('.center');
  center.innerHTML = '<ul class="trick done" id="trick">' + faces.slice(0, n).map((f, k) =>
    `<li class="played slot-${k}${k === n - 1 ? ' won' : ''}" data-seat="${k}"><span class="played-card" role="img" aria-label="carta ${k}">${f}</span></li>`
  ).join('') + '</ul><button type="button" class="last-trick-toggle" aria-expanded="false">Última baza</button>';
  document.getElementById('controls').textContent = '';
  if (!document.querySelector('#hand .hand[data-made]')) {
    document.getElementById('hand').innerHTML = '<ul class="hand" role="list" data-made="1">' + hand.map((f, i) =>
      `<li><button type="button" class="card${i % 4 === 1 ? ' playable' : ''}" aria-label="carta ${i}" data-card="c${i}"`
      + `${i % 4 === 1 ? '' : ' data-reason="Tienes que asistir."'}>${f}</button></li>`
    ).join('') + '</ul>';
  }
}
"""

RANKS = [1, 2, 3, 4, 5, 6, 7, 10, 11, 12]

# The badges above and below the trick (those across the felt's middle line) against the room the felt
# leaves them (--badge-h): the cards are sized for badges up to that tall.
BADGE_HEIGHTS = """() => {
  const felt = document.getElementById('felt');
  const f = felt.getBoundingClientRect(), middle = (f.left + f.right) / 2;
  const rem = parseFloat(getComputedStyle(document.documentElement).fontSize);
  const across = Array.from(felt.querySelectorAll('.badge')).map((b) => b.getBoundingClientRect())
    .filter((r) => r.left < middle && r.right > middle);
  return [Math.max(...across.map((r) => r.height)), parseFloat(getComputedStyle(felt).getPropertyValue('--badge-h')) * rem, across.length];
}"""


def check_fabricated_plates(page: Any, where: str, n: int, turn: int) -> None:
    """The plates FABRICATE drew: every part whole, and shown where it must be (each person's level, the
    dealer's tag, the away tags; a bot's level may give way on a phone, its «bot · difícil» says it)."""
    people = [f"seat-x{k}" for k in range(0, n, 2)]
    check_plates(
        page,
        where,
        n,
        name=[f"seat-x{k}" for k in range(n)],
        level=people,
        dealer=[f"seat-x{turn}"],
        away=people[1:],
        clock=[f"seat-x{turn}"],
        bot=[f"seat-x{k}" for k in range(1, n, 2)],
    )


def walk_the_final_board(page: Any, size: str, final_id: int) -> None:
    """The final board as it is, then (the DOM altered) the felt at 3 to 8 seats with a card in every slot
    over a hand of 13, the turn and the deal at each seat in turn (blind bids too at 7 and 8), the note on
    a refused card, and then cards, plates and a hand broken on purpose to see the checks fail."""
    page.goto(f"/mesa/{final_id}/")
    expect(page.get_by_role("heading", name="Clasificación final")).to_be_visible()
    expect(page.get_by_role("button", name="Revancha", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name=re.compile("Descargar la partida"))).to_be_visible()
    expect(page.locator("#scores details")).to_have_attribute("open", "")
    check_layout(page, f"{size}: the final board", seat=4, table=1, panel=3)

    # From here on the page applies no more boards (a presence change would redraw it over the changes).
    page.wait_for_function("() => (window.pochaEvents || []).some(e => e.type === 'final-shown')")
    page.evaluate("""() => window.addEventListener('htmx:wsBeforeMessage', (event) => {
      event.preventDefault(); event.stopImmediatePropagation(); }, true)""")
    faces = [face(rank, suit) for suit in "oceb" for rank in (12, 11, 10)]
    hand = [face(rank, suit) for suit in "oc" for rank in RANKS][:13]
    for n in range(3, 9):
        for blind in (False, True) if n >= 7 else (False,):
            for turn in range(n):
                where = f"{size}: {n} seats, the turn and the deal at seat {turn}{', blind bids' if blind else ''}"
                page.evaluate(
                    FABRICATE,
                    {"n": n, "names": LONG_NAMES, "faces": faces, "hand": hand, "turn": turn, "blind": blind},
                )
                check_layout(page, f"{where}, a card in every slot", seat=n, played_card=n)
                check_fabricated_plates(page, where, n, turn)
                # the felt sizes the trick for badges up to --badge-h above and below it
                tallest, allowed, counted = page.evaluate(BADGE_HEIGHTS)
                assert counted >= 1 and tallest <= allowed, (
                    f"{where}: a badge {tallest} px tall, the felt leaves {allowed} px"
                )
        check_index(page, f"{size}: a hand of 13 at {n} seats", 13)
    targets, problems = tap_problems(page)
    assert len(targets) == 13 and not problems, f"{size}: the hand of 13:\n  " + "\n  ".join(problems)

    # a refused card says why just above the hand, over nothing
    hand_top = page.locator("#hand").bounding_box()["y"]
    page.evaluate("() => document.querySelector('#hand button.card[data-card=\"c0\"]').click()")
    expect(page.locator("#hand-hint")).to_have_text("Tienes que asistir.")
    check_layout(page, f"{size}: the note on a refused card", seat=8, panel=1)
    assert abs(page.locator("#hand").bounding_box()["y"] - hand_top) <= TOLERANCE, "the note moved the hand"
    page.evaluate("() => { document.getElementById('hand-hint').textContent = ''; }")

    # a name cut short (as the plates were on a phone) is found
    page.evaluate("""() => { const name = document.querySelector('#seat-x1 .seat-name');
      Object.assign(name.style, {whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis'}); }""")
    problems = [p for plate in plate_report(page) for p in plate["problems"]]
    assert any(p.startswith('name "Bartolomé Ruiz-Gallardo"') for p in problems), problems
    # the index and tap checks, with the cards of one row overlapping more than the hand allows, fail
    page.evaluate("""() => { const hand = document.querySelector('#hand .hand'); hand.style.flexWrap = 'nowrap';
      hand.querySelectorAll('li').forEach((li) => { li.style.cssText = 'flex: 0 0 0.9rem; min-width: 0; margin-top: 0; order: 0'; }); }""")
    checked, problems = index_problems(page)
    assert checked == 13 and any("under the next card" in p for p in problems), problems
    _, problems = tap_problems(page)
    assert any("in view, less than" in p for p in problems), problems
    # the same layout check, with a played card moved onto its player's badge, fails
    page.evaluate("""() => { const card = document.querySelector('#felt .played.slot-1');
      const badge = document.querySelector('#felt .seat.slot-1 .badge').getBoundingClientRect();
      const felt = document.querySelector('#felt .center').getBoundingClientRect();
      card.style.left = (badge.left + badge.width / 2 - felt.left) + 'px';
      card.style.top = (badge.top + badge.height / 2 - felt.top) + 'px'; }""")
    problems = layout_report(page)["problems"]
    assert any(re.search(r"(played card .* overlaps seat|seat .* overlaps played card)", p) for p in problems), problems


WIDEN_THE_SUMMARY = """wide => {
  const first = document.querySelector('#replay-summary thead th');
  for (const side of ['width', 'minWidth', 'maxWidth']) first.style[side] = wide ? (window.innerWidth + 40) + 'px' : '';
  const hidden = document.querySelectorAll('#replay-summary tbody td .visually-hidden');
  if (!hidden.length) throw new Error('no visually hidden trump in the summary');
}"""


def walk_the_other_pages(page: Any, size: str, final_id: int, name: str) -> None:
    page.goto(f"/mesa/{final_id}/repeticion/")
    expect(page.locator("#replay-viewer")).to_be_visible()
    check_layout(page, f"{size}: the replay, first step", table=2)
    # the summary's first column made wider than the screen: the turned-up trumps' names, visually hidden in
    # the column after it, stay inside the scrolling box (they once stretched the page past a phone's edge
    # whenever a game's first column came out that wide)
    page.evaluate(WIDEN_THE_SUMMARY, True)
    check_layout(page, f"{size}: the replay, its summary wider than the screen", table=2)
    page.evaluate(WIDEN_THE_SUMMARY, False)
    next_step = page.locator('[data-go="next"]')
    for _ in range(12):  # the deal and the bids of round 1, then its trick
        if page.locator("#replay-trick li").count():
            break
        next_step.click()
    expect(page.locator("#replay-trick li")).not_to_have_count(0)
    check_layout(page, f"{size}: the replay, a trick on its felt", table=2)

    page.goto(f"/jugador/{name}/")
    expect(page.locator("#profile-title")).to_contain_text(name)
    check_layout(page, f"{size}: the profile", table=1)

    page.goto("/clasificacion/")
    expect(page.locator("#ranking")).to_be_visible()
    check_layout(page, f"{size}: the rankings", table=1)

    page.locator("#chips").click()  # the header's chip count opens the wallet
    expect(page.locator("#wallet-balance")).to_be_visible()
    check_layout(page, f"{size}: the wallet", table=1)

    # the rules, and a page per house-rules preset (the bazas page draws a suit of the French deck)
    for path in ("/reglas/", "/reglas/indias/", "/reglas/se-dobla/", "/reglas/bazas/"):
        page.goto(path)
        expect(page.locator("article.rules h1")).to_be_visible()
        check_layout(page, f"{size}: the rules page {path}", table=1, heading=5)
