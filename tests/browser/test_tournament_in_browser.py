"""A tournament in Chromium against the real server: two people sign up, find a free duplicate tournament of 8
places (tables of 4, two deals) under «Torneos», register with «Inscribirme», and wait on its page; the start
comes (the server's own loop sweeps the tournaments every 2 s) and the page, over its socket, shows each of them
«Tu mesa» without being reloaded.  Each opens their table with «Ver la mesa», where the board names the
tournament and the deal («Mano 1 de 2»), and plays both deals through the page's controls («Pedir N», the cards
by their names, «Elige el triunfo» if asked), the bots (difícil) filling the six other places.  At the end of
their table «Clasificación del torneo» takes them back to the tournament's page, which shows the final standings
once the other table has finished too, with both of them in it; and their profile shows their level («Nivel»)
at Clásica with its change, and the tournament among theirs.

The tournament is made in the server's database through the ORM (``manage.py shell``), as staff would make it
in the admin; its start is then moved to a few seconds ahead.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from support.server import Daphne

from . import pages
from .layout import check_layout
from .pages import BrowserPerson
from .test_play_in_browser import wait_for_newer_board

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 812}
PASSWORD = "cuarenta-bazas-2025"
NAME = "Torneo de los jueves"
PLAY_SECONDS = 240.0  # both tables' two deals (difícil bots think up to 0.6 s a move)

MAKE_TOURNAMENT = f"""
from datetime import timedelta
from django.utils import timezone
from games.models import Tournament
now = timezone.now()
t = Tournament.objects.create(
    name={NAME!r}, format="duplicate", rules="clasica", size=4, places=8, deals=2, entry_fee=0,
    registration_opens_at=now - timedelta(minutes=5), starts_at=now + timedelta(hours=1),
)
print(t.pk)
"""

START_SOON = """
from datetime import timedelta
from django.utils import timezone
from games.models import Tournament
when = timezone.now() + timedelta(seconds=4)
print(Tournament.objects.filter(pk={pk}).update(starts_at=when))
"""


def table_board_seq(page: Any) -> int:
    return int(page.locator("#table-root").get_attribute("data-seq") or "0")


def click_at(button: Any, drawn_at: int) -> int | None:
    """Click a move's button if it belongs to the board drawn at ``drawn_at``; the seq it was made at, or None
    when the board moved on meanwhile (the bots play fast): look again."""
    try:
        handle = button.element_handle(timeout=2_000)
        seq = int(json.loads(handle.get_attribute("hx-vals") or "{}")["seq"])
        if seq != drawn_at:
            return None
        handle.click(timeout=2_000, position={"x": 6, "y": 20})
    except (sync_api.Error, KeyError, ValueError):
        return None
    return seq


def one_move(page: Any, moves: dict[str, int]) -> None:
    """Whatever the board asks of its player now, through the page's accessible controls: a bid («Pedir N»), a
    trump suit («Elige el triunfo»), a card (by its name); then the board after it."""
    drawn_at = table_board_seq(page)
    back = page.get_by_role("button", name="Vuelvo")  # a busy machine let the clock run out twice
    bids = page.get_by_role("button", name=re.compile(r"^Pedir \d+$"))
    suits = page.get_by_role("group", name="Elige el triunfo").get_by_role("button")
    cards = page.locator("#hand").get_by_role("button", disabled=False)
    kind, seq = None, None
    if back.count():
        kind, seq = "back", click_at(back.first, drawn_at)
        if seq is None:  # «Vuelvo» carries the seq in its own hx-vals too
            page.wait_for_timeout(50)
            return
    elif bids.count():
        kind, seq = "bid", click_at(bids.nth(moves["bid"] % bids.count()), drawn_at)
    elif suits.count():
        kind, seq = "trump", click_at(suits.first, drawn_at)
    elif cards.count():
        name = cards.first.get_attribute("aria-label", timeout=2_000) if cards.count() else None
        if name:
            kind, seq = "play", click_at(page.locator("#hand").get_by_role("button", name=name, exact=True), drawn_at)
    if kind is None or seq is None:
        page.wait_for_timeout(50)
        return
    moves[kind] = moves.get(kind, 0) + 1
    wait_for_newer_board(page, seq)


def table_over(page: Any) -> bool:
    return page.get_by_role("heading", name="Clasificación final").count() > 0


def test_two_people_play_a_free_duplicate_tournament_and_see_the_standings_and_their_level(
    chromium: Any, pocha_server: Daphne, screenshot_dir: Path
) -> None:
    people = {name: BrowserPerson(chromium, pocha_server, name, DESKTOP) for name in ("ana", "bea")}
    for name, person in people.items():
        pages.sign_up(person.page, name, PASSWORD)
    tournament_id = int(pocha_server.manage("shell", "-c", MAKE_TOURNAMENT).splitlines()[-1])

    # «Torneos» in the site's navigation, the tournament in the list, «Inscribirme» on its page
    for name, person in people.items():
        page = person.page
        page.get_by_role("navigation", name="Principal").get_by_role("link", name="Torneos").click()
        page.wait_for_url(re.compile(r"/torneos/$"))
        page.get_by_role("link", name=NAME).click()
        page.wait_for_url(re.compile(rf"/torneos/{tournament_id}/$"))
        expect(page.locator("#tournament-state")).to_contain_text("Inscripción abierta")
        page.get_by_role("button", name="Inscribirme").click()
        page.wait_for_url(re.compile(rf"/torneos/{tournament_id}/$"))
        expect(page.locator("#tournament-state")).to_contain_text("Estás inscrito.")
        expect(page.get_by_role("button", name="Retirarme")).to_be_visible()
        expect(page.locator("#tournament-players")).to_contain_text(name)
    # ana's page heard bea register (its socket), without being reloaded
    expect(people["ana"].page.locator("#tournament-players")).to_contain_text("bea")
    expect(people["ana"].page.locator("#tournament-state .places-line")).to_contain_text("Plazas: 2 de 8")

    # the start, a few seconds ahead: the countdown counts, then the tables come over the socket
    assert pocha_server.manage("shell", "-c", START_SOON.format(pk=tournament_id)).splitlines()[-1] == "1"
    for person in people.values():
        person.page.reload()
        countdown = person.page.locator("#tournament-state time.countdown")
        expect(countdown).to_have_text(re.compile(r"^0:0[0-5]$"))
    tables: dict[str, int] = {}
    for name, person in people.items():
        page = person.page
        mine = page.locator("#tournament-tables tr.mine")
        expect(mine).to_contain_text("Tu mesa", timeout=30_000)
        expect(page.locator("#tournament-tables tbody tr")).to_have_count(2)  # one person at each table
        expect(page.locator("#tournament-standings tbody tr")).to_have_count(8)  # six bots fill the places
        page.screenshot(path=str(screenshot_dir / f"tournament-playing-{name}.png"), full_page=True)
        mine.get_by_role("link", name="Ver la mesa").click()
        page.wait_for_url(re.compile(r"/mesa/\d+/$"))
        tables[name] = int(re.search(r"/mesa/(\d+)/", page.url).group(1))  # type: ignore[union-attr]
        line = page.locator("#board-status .tournament-line")
        expect(line).to_contain_text(f"Torneo: {NAME}")
        expect(line).to_contain_text("Mano 1 de 2")
        page.screenshot(path=str(screenshot_dir / f"tournament-table-{name}.png"))
    assert tables["ana"] != tables["bea"]

    # both play their two deals, taking turns at the keyboard
    moves = {name: {"bid": 0, "trump": 0, "play": 0} for name in people}
    deals_seen: dict[str, set[str]] = {name: set() for name in people}
    deadline = time.monotonic() + PLAY_SECONDS
    while not all(table_over(person.page) for person in people.values()):
        assert time.monotonic() < deadline, f"the tables did not finish: {moves}"
        for name, person in people.items():
            page = person.page
            if table_over(page):
                continue
            deals_seen[name].update(page.locator("#board-status .tournament-line strong").all_inner_texts())
            one_move(page, moves[name])
    for name, person in people.items():
        assert moves[name]["bid"] == 2 and moves[name]["play"] >= 2, moves[name]
        assert {"Mano 1 de 2", "Mano 2 de 2"} <= deals_seen[name] | set(
            person.page.locator("#board-status .tournament-line strong").all_inner_texts()
        ), deals_seen[name]
        assert person.page.get_by_role("button", name="Revancha").count() == 0

    # «Clasificación del torneo»: the final standings, both people in them
    for name, person in people.items():
        page = person.page
        page.get_by_role("link", name="Clasificación del torneo").click()
        page.wait_for_url(re.compile(rf"/torneos/{tournament_id}/#tournament-standings$"))
        standings = page.locator("#tournament-standings")
        expect(standings.get_by_role("heading", name="Clasificación del torneo")).to_be_visible()
        expect(standings.locator("table")).to_have_attribute("data-final", "1", timeout=60_000)
        expect(standings.locator("tbody tr")).to_have_count(8)
        for who in people:
            expect(standings.get_by_role("link", name=who, exact=True)).to_have_count(1)
        expect(page.locator("#tournament-state")).to_contain_text("Has quedado")
        expect(standings.locator("tr.me")).to_have_count(1)
        page.screenshot(path=str(screenshot_dir / f"tournament-final-{name}.png"), full_page=True)
    # on a phone too, nothing of the page drawn over anything else nor wider than the screen
    page = people["ana"].page
    page.set_viewport_size(PHONE)
    check_layout(page, "phone: the tournament's final standings", table=2, heading=5)
    page.get_by_role("link", name="Todos los torneos").click()
    page.wait_for_url(re.compile(r"/torneos/$"))
    check_layout(page, "phone: the tournaments' list", table=1, heading=4)
    page.set_viewport_size(DESKTOP)

    # the profile: the level at Clásica and its change, and the tournament among theirs
    for name, person in people.items():
        page = person.page
        page.locator(".site-nav a.who").click()
        page.wait_for_url(re.compile(rf"/jugador/{name}/$"))
        expect(page.get_by_role("heading", name="Nivel")).to_be_visible()
        expect(page.locator("#level-value-clasica")).to_have_text(re.compile(r"^\d+$"))
        expect(page.locator("#level-change-clasica")).to_contain_text(re.compile(r"^\s*(\+\d+|−\d+|±0)"))
        row = page.locator(f"#tournaments tr[data-tournament='{tournament_id}']")
        expect(row).to_contain_text(NAME)
        expect(row).to_contain_text(re.compile(r"[12]\.º de 2"))
        page.screenshot(path=str(screenshot_dir / f"tournament-profile-{name}.png"), full_page=True)
        assert person.errors == []
