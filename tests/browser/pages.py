"""What the browser tests share: a person in their own browser context who notes every error their
page reports, the page watcher, and readers of what the pages show (chip counts, the final ranking)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from support.server import Daphne

STEP_TIMEOUT = 30_000  # ms for any one change of the page

# Runs in each page before its own scripts: notes every flash message (a refused move), lost connection and
# frame the page's socket sent, by action (``sent``: kept for the tab across reloads).  What the page sent,
# not what the test meant to click: under load a click can land after Playwright has given up on it.
WATCH_PAGE = """
(() => {
  const sent = JSON.parse(sessionStorage.getItem('pocha-sent') || '{}');
  window.__pocha = {connectionLost: 0, flashes: [], sent};
  document.addEventListener('htmx:wsAfterSend', (event) => {
    let action = '?';
    try { action = JSON.parse(event.detail.message).action || '?'; } catch (error) { /* not JSON */ }
    sent[action] = (sent[action] || 0) + 1;
    sessionStorage.setItem('pocha-sent', JSON.stringify(sent));
  });
  const look = () => {
    const flash = document.getElementById('flash');
    const said = flash ? flash.textContent.trim() : '';
    if (said && !window.__pocha.flashes.includes(said)) window.__pocha.flashes.push(said);
    if (document.querySelector('#connection[data-state="closed"]')) window.__pocha.connectionLost += 1;
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true});
})();
"""


# Runs in each page first: every Content-Security-Policy violation becomes a console error (Chromium logs
# most of them there itself; this also catches any it would not), so that the tests see them all.
WATCH_POLICY = """
document.addEventListener('securitypolicyviolation', (e) => {
  console.error(`CSP violation: ${e.effectiveDirective} blocked ${e.blockedURI || 'inline'}`
                + ` at ${e.sourceFile || e.documentURI}:${e.lineNumber} (${e.disposition})`);
});
"""

# Every person made during the running test: the browser tests' conftest fails the test if any of their
# pages reported an error, even where the test itself forgot to look.
PEOPLE: list[BrowserPerson] = []

# Test-only scripts (axe-core) are served to the page at this same-origin path by the browser itself
# (a Playwright route), so that the site's policy ('self' scripts only) applies to them unchanged.
TEST_SCRIPTS = "/__browser-tests__/"


class BrowserPerson:
    """One person in their own browser context (own cookies), and every error their page reported:
    console errors (Content-Security-Policy violations among them), uncaught exceptions, failed requests
    and HTTP errors."""

    def __init__(
        self,
        browser: Any,
        server: Daphne,
        name: str,
        viewport: dict[str, int],
        watch_script: str = WATCH_PAGE,
        **context_options: Any,
    ) -> None:
        self.name = name
        self.context = browser.new_context(base_url=server.url, viewport=viewport, locale="es-ES", **context_options)
        self.context.set_default_timeout(STEP_TIMEOUT)
        self.context.add_init_script(WATCH_POLICY)
        self.context.add_init_script(watch_script)
        self.errors: list[str] = []
        PEOPLE.append(self)
        self.page = self._new_page()

    def _new_page(self) -> Any:
        page = self.context.new_page()
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        page.on("requestfailed", self._request_failed)
        page.on("response", self._response)
        return page

    def fresh_page(self) -> Any:
        """Close this person's page and open another in the same context (the same cookies and scripts, its
        errors noted the same way): a phone's page scale, zoomed out by a page made wider on purpose, can
        stay on the next page the same tab opens."""
        self.page.close()
        self.page = self._new_page()
        return self.page

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(f"console.error: {message.text} ({message.location})")

    def _request_failed(self, request: Any) -> None:
        if "ERR_ABORTED" not in (request.failure or ""):  # leaving a page cancels its pending requests
            self.errors.append(f"request failed: {request.method} {request.url}: {request.failure}")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.errors.append(f"HTTP {response.status}: {response.request.method} {response.url}")


def add_test_script(page: Any, path: Path) -> None:
    """Load a test-only script (axe-core) into the page as a script of the site's own origin: the
    page's Content-Security-Policy (script-src 'self') forbids the inline script that Playwright's
    ``add_script_tag(path=...)`` would insert."""
    url = TEST_SCRIPTS + path.name
    page.route("**" + url, lambda route: route.fulfill(path=str(path), content_type="text/javascript"))
    page.add_script_tag(url=url)


def fichas(n: int) -> str:
    """A chip count as the Spanish pages write it: 4.500, −100."""
    return ("−" if n < 0 else "") + f"{abs(n):,}".replace(",", ".")


RANKING_LINE = re.compile(r"^(?P<place>\d+)\.\s+(?P<name>.+?)\s+—\s+(?P<total>-?\d+)\b")


def read_final_ranking(page: Any) -> list[dict[str, Any]]:
    """The final ranking as a staked table's board shows it: place, name, total, winner mark, chips won."""
    rows = []
    for li in page.locator("#controls ol.ranking > li").all():
        text = " ".join(li.inner_text().split())
        match = RANKING_LINE.match(text)
        assert match, f"unreadable ranking line: {text!r}"
        won = li.locator(".won-chips")
        assert won.count() == 1, f"a staked table's ranking line should say the chips won or lost: {text!r}"
        rows.append(
            {
                "place": int(match["place"]),
                "name": match["name"],
                "total": int(match["total"]),
                "winner": "ganador" in text,
                "chips": int(won.get_attribute("data-chips") or "-1"),
                "chips_text": won.inner_text().strip(),
                "text": text,
            }
        )
    return rows


# Runs in the page: waits (in the page, not by asking it over and over) for the first board newer than
# ``after`` that offers the person a move or meets ``stop``, and says what it shows.  A move is offered when
# its button is on the board and no completed trick is held up; ``stop`` holds when the game is over, or
# the round is ``round`` or later, or of kind ``kind``, or the hand holds ``hand`` cards (each if given).
NEXT_TURN = """
(args) => new Promise((resolve) => {
  const deadline = performance.now() + args.timeout;
  const read = () => {
    const root = document.getElementById('table-root');
    const line = document.querySelector('#board-status .round-line');
    const offer = !root || root.classList.contains('holding') ? null
      : document.querySelector('#board-status .away-line button') ? 'back'
      : document.querySelector('#controls button.bid:not([disabled])') ? 'bid'
      : document.querySelector("#controls [role=group][aria-label='Elige el triunfo'] button") ? 'trump'
      : document.querySelector('#hand button.card.playable') ? 'play' : null;
    return {
      seq: root ? parseInt(root.dataset.seq || '0', 10) : 0,
      round: line ? parseInt((line.textContent.match(/\\d+/) || ['0'])[0], 10) : 0,
      kind: line ? line.dataset.kind || '' : '',
      hand: document.querySelectorAll('#hand button.card').length,
      over: !!document.querySelector('#controls ol.ranking'),
      offer,
    };
  };
  const check = () => {
    const board = read();
    const stop = args.stop;
    board.stop = (stop.over && board.over) || (stop.round != null && board.round >= stop.round)
      || (stop.kind != null && board.kind === stop.kind) || (stop.hand != null && board.hand === stop.hand);
    if (board.seq > args.after && (board.offer || board.stop)) resolve(board);
    else if (performance.now() > deadline) { board.timeout = true; resolve(board); }
    else setTimeout(check, 20);
  };
  check();
})
"""


# Runs in the page: what it shows and has done lately, for a failure's message: whether a completed trick
# is held up (``holding``) and whose turn the board says it is (``my_turn``: bid, trump or play, or '' when
# not the person's), the status and controls as text, what the hand offers, the socket's state, the last
# steps of static/js/table.js (``pochaEvents``, ms since the page opened, as ``now``), and the moves sent.
PAGE_STATE = """
() => {
  const text = (el) => (el ? el.textContent.replace(/\\s+/g, ' ').trim().slice(0, 240) : null);
  const root = document.getElementById('table-root');
  const status = document.getElementById('board-status');
  const felt = document.getElementById('felt');
  const connection = document.getElementById('connection');
  const pocha = window.__pocha || {};
  return {
    holding: !!root && root.classList.contains('holding'),
    my_turn: status ? status.dataset.myTurn || '' : null,
    status: text(status),
    controls: text(document.getElementById('controls')),
    bids_enabled: document.querySelectorAll('#controls button.bid:not([disabled])').length,
    cards: document.querySelectorAll('#hand button.card').length,
    playable: document.querySelectorAll('#hand button.card.playable').length,
    trick: felt ? {done: felt.dataset.trickDone || '', key: felt.dataset.trickKey || ''} : null,
    connection: connection ? connection.dataset.state || '' : null,
    events: (window.pochaEvents || []).slice(-12).map((e) => `${e.type}@${Math.round(e.at)}`),
    now: Math.round(performance.now()),
    sent: pocha.sent || null,
    flashes: pocha.flashes || null,
  };
}
"""


def page_state(page: Any) -> dict[str, Any]:
    """What the page shows and did lately (``PAGE_STATE``), for a failure's message."""
    try:
        state: dict[str, Any] = page.evaluate(PAGE_STATE)
    except PlaywrightError as error:  # the page is gone or stuck: say so rather than hide the failure
        return {"unreadable": str(error)}
    return state


def moves_sent(page: Any) -> int:
    """How many moves the page's socket has sent so far (every action, as ``WATCH_PAGE`` counts them)."""
    return int(page.evaluate("Object.values(window.__pocha.sent).reduce((a, b) => a + b, 0)"))


def look_for_turn(page: Any, after: int, stop: dict[str, Any], timeout_ms: int) -> dict[str, Any]:
    """What the page shows once it has a board newer than ``after`` that offers a move or meets ``stop``
    (NEXT_TURN), or after ``timeout_ms`` what it shows then, marked ``timeout``."""
    board: dict[str, Any] = page.evaluate(NEXT_TURN, {"after": after, "stop": stop, "timeout": timeout_ms})
    return board


def next_turn(page: Any, after: int, stop: dict[str, Any], timeout_ms: int = STEP_TIMEOUT) -> dict[str, Any]:
    """``look_for_turn``, where a board that neither offers a move nor meets ``stop`` within ``timeout_ms``
    fails the test, saying what the page shows (``page_state``; the server's log follows in the report)."""
    board = look_for_turn(page, after, stop, timeout_ms)
    assert not board.get("timeout"), (
        f"no move offered nor {stop} within {timeout_ms} ms after board {after}: {board}\nthe page: {page_state(page)}"
    )
    return board


def demo_table(server: Daphne, username: str, password: str, *args: str) -> int:
    """``manage.py demo_table`` on the test server: a table for ``username`` (made with ``password`` if new)
    and bots, played on through the real actions to where ``args`` say; its id."""
    out = server.manage("demo_table", "--user", username, "--password", password, *args)
    return int(out.splitlines()[-1])


def log_in(page: Any, username: str, password: str) -> None:
    """Log in through the login page; the page ends on the lobby."""
    page.goto("/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.locator("main form button[type=submit]").click()
    page.wait_for_url(re.compile(r"/$"))


def sign_up(page: Any, username: str, password: str) -> None:
    """Create an account through the sign-up page; the page ends on the lobby, logged in."""
    page.goto("/accounts/signup/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password1]", password)
    page.fill("input[name=password2]", password)
    page.locator("form.stacked button[type=submit]").click()
    page.wait_for_url(re.compile(r"/$"))


def came(page: Any, predicate: str, timeout_ms: int) -> bool:
    """Whether ``predicate`` (a page function) held within ``timeout_ms``."""
    try:
        page.wait_for_function(predicate, timeout=timeout_ms)
    except PlaywrightTimeoutError:
        return False
    return True
