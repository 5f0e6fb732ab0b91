"""Tables of the house rules (``shared/VARIANTS.md``) played in Chromium against the real server, through the
page's accessible controls: «Reglas de la casa» and «Jugar ya» in the lobby, then whatever move the board
offers (a bid, a trump suit, a playable card), clicked.

* a whole ``bazas`` game at 7 seats, with the French deck; the downloaded record replays to the totals of
  the final ranking the page shows;
* ``se-dobla`` at 3 seats on a phone, to its first round of 13 cards: every card of the hand in view, its
  index uncovered, nothing drawn over anything;
* ``indias`` at 8 seats, through its indias rounds: the page never shows the player their own card before it
  is played (by code, face or name), and shows every other player's card by their seat.  The table is made
  and played on to round 22 by ``manage.py demo_table`` (the same actions as a live table); the page plays
  from there.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.server import Daphne

from games.engine import replay
from games.engine.cards import Card

from . import pages
from .layout import check_layout, index_problems
from .pages import BrowserPerson
from .test_play_in_browser import click_move, round_number

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 900}
PASSWORD = "cuarenta-bazas-2025"

# Runs in the page: while the player's own indias card is face down in their hand (before it is played),
# every card code, accessible name and text the document holds at each change, by the round line's number.
WATCH_HIDDEN = """
(() => {
  window.__hidden = {};
  const look = () => {
    if (!document.querySelector('#hand .hidden-card')) return;
    const line = document.querySelector('#board-status .round-line');
    const round = line ? (line.textContent.match(/\\d+/) || ['0'])[0] : '0';
    const seen = window.__hidden[round] || (window.__hidden[round] = {codes: {}, texts: []});
    document.querySelectorAll('[data-card]').forEach((el) => { seen.codes[el.dataset.card] = 1; });
    document.querySelectorAll('[aria-label]').forEach((el) => { seen.codes[el.getAttribute('aria-label')] = 1; });
    // the board's own text (not the screen reader's announcer, which still says the last round's plays)
    const text = Array.from(document.querySelectorAll('#board-status, #felt, #controls, #hand'))
      .map((el) => el.textContent).join('\\n');
    if (!seen.texts.includes(text)) seen.texts.push(text);
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true});
})();
"""


class Player(BrowserPerson):
    def __init__(self, browser: Any, server: Daphne, viewport: dict[str, int]) -> None:
        super().__init__(browser, server, "", viewport)


@pytest.fixture
def desktop(chromium: Any, pocha_server: Daphne) -> Iterator[Player]:
    player = Player(chromium, pocha_server, DESKTOP)
    yield player
    player.context.close()


@pytest.fixture
def phone(chromium: Any, pocha_server: Daphne) -> Iterator[Player]:
    player = Player(chromium, pocha_server, PHONE)
    yield player
    player.context.close()


def quick_table(page: Any, username: str, preset: str, size: int, schedule: str | None = None) -> int:
    """Sign up, choose the house rules and the size in «Jugar ya», and sit: the table's id."""
    pages.sign_up(page, username, PASSWORD)
    form = page.locator("form.quick-play")
    form.get_by_label("Reglas de la casa").select_option(preset)
    if schedule is not None:
        form.get_by_label("Rondas de se dobla").select_option(schedule)
    form.locator(f"input[name=size][value='{size}']").check()
    page.get_by_role("button", name="Jugar ya").click()
    page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    expect(page.locator("#players li.seat")).to_have_count(size)  # the bots sat after the 1 s wait
    return int(re.search(r"/mesa/(\d+)/", page.url).group(1))  # type: ignore[union-attr]


def one_move(page: Any, moves: dict[str, int], board: dict[str, Any]) -> bool:
    """Click the move ``board`` offers (``pages.next_turn``) on that board: a bid (a different one each time),
    the first trump suit, or the first playable card; «Vuelvo» first if a slow machine let the clock run out
    twice.  A newer board than that one may have come meanwhile: then nothing is clicked.  Whether the click
    was made."""
    offer, seq = board["offer"], board["seq"]
    if offer == "back":
        made = click_move(page.locator("#board-status .away-line button"), seq)
    elif offer == "bid":
        bids = page.locator("#controls button.bid:not([disabled])")
        count = bids.count()
        made = click_move(bids.nth(moves["bid"] % count), seq) if count else None
    elif offer == "trump":
        made = click_move(page.locator("#controls [role=group][aria-label='Elige el triunfo'] button"), seq)
    else:
        made = click_card(page.locator("#hand button.card.playable"), seq)
    if made is None:
        return False
    moves[offer] = moves.get(offer, 0) + 1
    return True


def click_card(cards: Any, drawn_at: int) -> int | None:
    """Tap the first playable card where a player can: on its strip left in view (a fanned hand of 10 or more
    cards covers the middle of each card but the last with the next one)."""
    try:
        button = cards.first.element_handle(timeout=2_000)
        seq = int(json.loads(button.get_attribute("hx-vals") or "{}")["seq"])
        if seq != drawn_at:
            return None
        button.click(timeout=2_000, position={"x": 6, "y": 30})
    except (sync_api.Error, KeyError, ValueError):
        return None
    return seq


def play(page: Any, stop: dict[str, Any], seconds: float) -> dict[str, int]:
    """Make the offered moves until a board meets ``stop`` (``pages.next_turn``).

    A move made is answered by a newer board; a click that did not land is tried again on the same board.
    It may not land when the board is drawn again at the same seq just then: the socket's first board,
    say, which replaces the page's own as soon as the socket opens (a page opened on the person's turn, as
    ``demo_table``'s can be).  Waiting for a newer board after such a click would wait for the person's
    clock to run out (30 s, as long as ``next_turn``'s wait)."""
    moves = {"bid": 0, "trump": 0, "play": 0}
    deadline = time.monotonic() + seconds
    seq = -1
    while True:
        board = pages.next_turn(page, seq, stop)
        if board["stop"]:
            return moves
        assert time.monotonic() < deadline, f"still at round {board['round']} after {seconds} s"
        before = pages.moves_sent(page)
        if one_move(page, moves, board) or pages.moves_sent(page) > before:
            seq = board["seq"]  # its answer is a newer board
        else:
            seq = board["seq"] - 1  # that board again, if it still offers the move


def test_a_whole_bazas_game_at_seven_seats_and_its_record(desktop: Player, pocha_server: Daphne) -> None:
    page = desktop.page
    quick_table(page, "bazas7", "bazas", 7)
    expect(page.locator(".rules-line a")).to_have_text("Juego de las Bazas")
    expect(page.locator(".rules-line a")).to_have_attribute("href", "/reglas/bazas/")
    # the hand is French, by name: «reina de corazones», «10 de picas»…
    hand = page.get_by_role("region", name="Tu mano")
    expect(hand.locator("button.card")).to_have_count(3)
    names = [b.get_attribute("aria-label") for b in hand.locator("button.card").all()]
    assert len(names) == 3 and all(
        re.fullmatch(r".+ de (picas|corazones|diamantes|tréboles)", n or "") for n in names
    ), names
    play(page, {"over": True}, 600)
    # 12 rounds (3, 4, 5, 6, seven of 7, 6, 5, 4, 3): the page sent a card for every card dealt
    sent = page.evaluate("window.__pocha.sent")
    assert sent.get("play") == 3 + 4 + 5 + 6 + 7 * 7 + 6 + 5 + 4 + 3 and sent.get("bid", 0) >= 12, sent
    ranking = {
        m["name"]: int(m["total"])
        for m in (
            re.match(r"^\d+\.\s+(?P<name>.+?)\s+—\s+(?P<total>-?\d+)", " ".join(li.inner_text().split()))
            for li in page.locator("#controls ol.ranking > li").all()
        )
        if m
    }
    assert len(ranking) == 7
    link = page.get_by_role("link", name=re.compile(r"^Descargar la partida"))
    expect(link).to_have_text("Descargar la partida (pocha-record/2)")
    record = json.loads(page.request.get(link.get_attribute("href") or "").text())
    assert record["format"] == "pocha-record/2" and record["rules"] == {"preset": "bazas"}
    replayed = replay(record).as_json()
    assert replayed["complete"]
    assert dict(zip(record["players"], replayed["totals"], strict=True)) == ranking
    assert page.evaluate("window.__pocha.flashes") == [] and desktop.errors == []


def test_se_dobla_at_three_on_a_phone_shows_all_thirteen_cards(phone: Player) -> None:
    page = phone.page
    quick_table(page, "dobla3", "se-dobla", 3, schedule="sencillas")
    expect(page.locator(".rules-line a")).to_have_text("Se dobla · sencillas")
    play(page, {"hand": 13}, 600)
    assert round_number(page) == 13
    sent = page.evaluate("window.__pocha.sent")
    assert sent.get("play") == sum(range(1, 13)) and "back" not in sent, sent  # every card of rounds 1-12 by hand
    if page.locator("#board-status .away-line button").count():  # (see one_move) the seat back first
        one_move(page, {"bid": 0, "trump": 0, "play": 0}, pages.next_turn(page, -1, {}))
        expect(page.locator("#board-status .away-line")).to_have_count(0)
    # every card in one view without scrolling: the hand in one row inside the screen's width and height as
    # the page shows at the top, bidding with 13 cards (measured in one step, the board may be redrawn any time)
    expect(page.locator("#controls button.bid")).to_have_count(14, timeout=30_000)
    boxes = page.evaluate(
        "() => { window.scrollTo(0, 0);"
        " return Array.from(document.querySelectorAll('#hand button.card')).map((b) => {"
        " const r = b.getBoundingClientRect(); return {x: r.left, y: r.top, width: r.width, height: r.height}; }); }"
    )
    assert len(boxes) == 13
    for box in boxes:
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 1, box
        assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"] + 1, box
    checked, problems = index_problems(page)
    assert checked == 13 and problems == []
    check_layout(page, "se dobla, 13 cards, phone", seat=3)


def indias_hands(database: Path, table_id: int) -> dict[int, list[str]]:
    """The cards dealt in each indias round of the table, by seat (read from the server's own database)."""
    from games.engine.presets import Rules
    from games.engine.schedule import RoundKind

    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT number, hands FROM games_round WHERE table_id = ?", (table_id,)).fetchall()
    rules = Rules.of("indias")
    return {
        number: [hand[0] for hand in json.loads(hands)]
        for number, hands in rows
        if rules.spec(8, number).kind is RoundKind.INDIAS
    }


def test_indias_at_eight_never_shows_you_your_own_card(chromium: Any, pocha_server: Daphne) -> None:
    player = Player(chromium, pocha_server, PHONE)
    player.context.add_init_script(WATCH_HIDDEN)
    page = player.page
    first = 8 + 3 + 8 + 4 + 1  # 8 rounds of 1 card, 2..4, 8 of 5, 4..1: then the 8 indias rounds
    # The rounds before are every table's (the other tests play them): the table is played on by the real
    # actions to round 22, and the page plays from there, into the indias rounds.
    table_id = pages.demo_table(pocha_server, "indias8", PASSWORD, "--rules", "indias", "--size", "8", "--round", "22")
    pages.log_in(page, "indias8", PASSWORD)
    page.goto(f"/mesa/{table_id}/")
    expect(page.locator(".rules-line a")).to_have_attribute("data-rules", "indias")
    assert round_number(page) == 22
    me = int(page.locator("#players li.seat.me").get_attribute("data-seat") or "-1")

    play(page, {"kind": "indias"}, 600)
    assert round_number(page) == first
    # an indias board: the others' seven cards by their seats, one's own face down, no card to click
    expect(page.locator("#felt .trick .played.seen[data-card]")).to_have_count(7)
    expect(page.locator(f"#felt .trick .played.seen[data-seat='{me}'] .card-back")).to_have_count(1)
    expect(page.get_by_role("img", name="Tu carta: boca abajo, no la ves")).to_have_count(1)
    expect(page.locator("#hand button.card")).to_have_count(0)
    check_layout(page, "indias, 8 seats, phone", seat=8)
    play(page, {"round": first + 8}, 300)
    hands = indias_hands(pocha_server.database, table_id)
    assert sorted(hands) == list(range(first, first + 8))
    shown: dict[str, dict[str, Any]] = page.evaluate("window.__hidden")
    for number, dealt in hands.items():
        seen = shown.get(str(number))
        assert seen, f"round {number}: no board with the card face down was noted"
        mine = Card.parse(dealt[me])
        assert str(mine) not in seen["codes"] and mine.name_es not in seen["codes"], (number, str(mine))
        assert not any(mine.name_es in text for text in seen["texts"]), (number, mine.name_es)
        others = {code for seat, code in enumerate(dealt) if seat != me}
        assert others <= set(seen["codes"]), (number, sorted(others - set(seen["codes"])))
    assert page.evaluate("window.__pocha.flashes") == [] and player.errors == []
