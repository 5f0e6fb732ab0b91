"""`make up`, then a whole game in the browser against it, in the README's words (issue 11).

The stack of ``conftest.py`` is started the way operators start it (``deploy/pocha.sh up``: ``DEBUG=false``,
static files collected and served by WhiteNoise, the Content-Security-Policy on, two Daphne processes on
one port, Celery worker and beat, its own Redis and PostgreSQL database). Debian's Chromium, driven by
Playwright with the browser tests' launch options and error watch (``tests/browser/``), then does what
the README tells a new player: open the site's address, «Crear cuenta», «Jugar ya», start the table
(a quick table offers «Empezar ya con bots»), and play the whole game through the page's controls, found
by their accessible names («Pedir N», the «Elige el triunfo» group, the cards of «Tu mano» such as «as de
oros»), until «Clasificación final». Then «Descargar la partida» gives the game's record, the database
has the game finished with the same moves, and the chips ledger sums to zero.

No console error, Content-Security-Policy violation, uncaught exception, failed request or HTTP error is
allowed on any page (``browser.conftest.no_page_errors``, autouse here too).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from browser import pages
from browser.conftest import chromium, no_page_errors  # noqa: F401 (fixtures: the browser, the error watch)
from browser.pages import BrowserPerson
from browser.test_play_in_browser import WATCH_BOARD, board_seq, click_move, round_number, wait_for_newer_board
from live.wsclient import PASSWORD

from games.engine import replay, schedule

from .conftest import services_only
from .stack import Stack
from .test_faults import check_chips, check_record

pytestmark = services_only

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is missing (pip install -e '.[dev]')"
)
expect = sync_api.expect

#: The smallest table the lobby offers (the fault tests' checks are for it): 18 rounds, 88 cards a hand.
SIZE = 3
#: The smallest stake, so that the chips go through the pot and back out.
STAKE = 100
USERNAME = "nuria"

GAME_TIMEOUT = 240.0  # seconds for the whole game (about a minute on an idle machine)
VIEWPORT = {"width": 1280, "height": 900}
CARD_NAME = re.compile(r"^(as|[2-7]|sota|caballo|rey) de (oros|copas|espadas|bastos)$")


@pytest.fixture
def player(chromium: Any, stack: Stack) -> Iterator[BrowserPerson]:  # noqa: F811 (the imported fixture)
    person = BrowserPerson(chromium, SimpleNamespace(url=stack.origin), USERNAME, VIEWPORT, watch_script=WATCH_BOARD)
    yield person
    person.context.close()


def play_the_whole_game(page: Any) -> dict[str, Any]:
    """Whatever move the board offers, by the controls' accessible names, until «Clasificación final»
    (in an auction, the highest bid); returns the moves made (and the names of the cards played)."""
    bids = page.get_by_role("button", name=re.compile(r"^Pedir \d+$"))
    suits = page.get_by_role("group", name="Elige el triunfo").get_by_role("button")
    cards = page.get_by_role("region", name="Tu mano").get_by_role("button", disabled=False)
    final = page.get_by_role("heading", name="Clasificación final")
    auction = page.get_by_text("Subasta: el triunfo se elige después de pedir")
    moves: dict[str, Any] = {"bid": 0, "trump": 0, "play": 0, "cards": []}
    deadline = time.monotonic() + GAME_TIMEOUT
    while not final.count():
        assert time.monotonic() < deadline, f"still in round {round_number(page)} after {GAME_TIMEOUT} s"
        drawn_at = board_seq(page)
        move, seq, name = None, None, None
        if bids.count():
            move = "bid"
            if auction.count():
                # the most tricks, to win the auction and choose trump: in one of the three auctions
                # this seat bids first, and a tie goes to whoever bid earlier
                seq = click_move(bids.last, drawn_at)
            else:
                # not always the same bid: the second allowed one every other round
                seq = click_move(bids.nth(1) if moves["bid"] % 2 and bids.count() > 1 else bids, drawn_at)
        elif suits.count():
            move, seq = "trump", click_move(suits, drawn_at)
        elif cards.count():
            try:
                name = cards.first.get_attribute("aria-label", timeout=2_000)
            except sync_api.Error:
                name = None
            move, seq = "play", click_move(cards, drawn_at)
        if move and seq is not None:
            moves[move] += 1
            if move == "play":
                moves["cards"].append(name)
            wait_for_newer_board(page, seq)  # the server answers an accepted move with the next board
        else:
            page.wait_for_timeout(50)
    return moves


def test_make_up_then_a_whole_game_in_the_browser(player: BrowserPerson, stack: Stack, tmp_path: Path) -> None:
    page = player.page
    began = time.monotonic()

    # the site's address, as `make up` prints it: the production settings are on
    response = page.goto(stack.origin + "/")
    assert response is not None and response.status == 200
    policy = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy, f"no Content-Security-Policy header: {response.headers}"

    # «Crear cuenta»
    page.get_by_role("link", name="Crear cuenta").first.click()
    page.wait_for_url(re.compile(r"/accounts/signup/"))
    page.fill("input[name=username]", USERNAME)
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.get_by_role("button", name="Crear cuenta").click()
    page.wait_for_url(re.compile(r"/$"))
    expect(page.locator(".site-nav .who")).to_have_text(USERNAME)

    # «Jugar ya»: the smallest table, the smallest stake
    page.get_by_role("radio", name=str(SIZE), exact=True).check()
    page.get_by_role("radio", name=pages.fichas(STAKE), exact=True).check()
    page.get_by_role("button", name="Jugar ya").click()
    page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    table_id = int(re.search(r"/mesa/(\d+)/$", page.url).group(1))  # type: ignore[union-attr]

    # nobody else comes: start it now, with bots in the free seats (what a quick table offers)
    page.get_by_role("button", name="Empezar ya con bots").click()
    expect(page.locator("#players li.seat")).to_have_count(SIZE)
    expect(page.locator("#players li.seat.me")).to_have_count(1)
    expect(page.locator("#players .tag", has_text=re.compile(r"^bot · normal$"))).to_have_count(SIZE - 1)
    started = time.monotonic()

    moves = play_the_whole_game(page)
    played = time.monotonic() - started

    # the final ranking: everyone, one winner, the pot won
    expect(page.get_by_role("heading", name="Clasificación final")).to_be_visible()
    ranking = pages.read_final_ranking(page)
    assert len(ranking) == SIZE and ranking[0]["place"] == 1 and ranking[0]["winner"], ranking
    assert USERNAME in {r["name"] for r in ranking}, ranking
    assert sum(r["chips"] for r in ranking) == SIZE * STAKE, ranking

    # every round: my bid, every card of my hand (by its name), a trump chosen in an auction I won
    rounds = schedule(SIZE)
    assert moves["bid"] == len(rounds), moves
    assert moves["play"] == sum(r.cards for r in rounds), moves
    assert moves["trump"] >= 1, f"no auction won, no trump chosen: {moves}"
    assert all(name and CARD_NAME.match(name) for name in moves["cards"]), moves["cards"]
    assert page.evaluate("window.__pocha.connectionLost") == 0
    assert page.evaluate("window.__pocha.flashes") == []  # no move was refused

    # «Descargar la partida»: the record, which replays to the ranking's totals
    with page.expect_download() as download_info:
        page.get_by_role("link", name=re.compile(r"^Descargar la partida")).click()
    download = download_info.value
    assert download.suggested_filename == f"la-pocha-mesa-{table_id}.json"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    record = json.loads(saved.read_text())
    assert record["format"] == "pocha-record/1" and len(record["rounds"]) == len(rounds)
    assert USERNAME in record["players"]
    totals = dict(zip(record["players"], replay(record).game.totals))
    assert {r["name"]: r["total"] for r in ranking} == totals

    # the database: the game finished with the record's moves, no clock ran out; the ledger sums to zero
    check_record(stack, table_id, record)
    check_chips(stack, table_id)
    assert all(state == "RUNNING" for state in stack.states().values()), stack.ctl("status")
    print(
        f"\n[browser on the stack] table {table_id} of {SIZE}: {len(rounds)} rounds played in {played:.1f}s "
        f"(moves {', '.join(f'{k} {v}' for k, v in moves.items() if k != 'cards')}), "
        f"{time.monotonic() - began:.1f}s in all; ranking {[r['text'] for r in ranking]}"
    )
    assert player.errors == []
