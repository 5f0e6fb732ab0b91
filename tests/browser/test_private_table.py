"""Two friends play a private table for chips in real browsers (Debian's Chromium) on the real server.

Everything goes through the page, as people would do it. Ana signs up and creates a private table in
the lobby («Mesa privada»: 3 players, a stake of 500, bots allowed); Bruno signs up in another browser,
types the table's code in lower case with a space in it, and sits. Both now hold 4.500 chips. Ana (the
host) starts, a bot takes the third seat, and both play the whole game (18 rounds at three) by clicking
whatever their board offers, at the same time, until the final ranking shows. Then the chips: the pot of
1.500 goes to the winner(s) as the rules split it, the headers and the wallet page agree, and the code no
longer lets anyone in.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.server import Daphne

from . import pages
from .pages import STEP_TIMEOUT, BrowserPerson, fichas, read_final_ranking

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is missing (pip install -e '.[dev]')"
)
expect = sync_api.expect

VIEWPORT = {"width": 1100, "height": 900}
PASSWORD = "cuarenta-bazas-2025"
WELCOME = 5_000
STAKE = 500
SIZE = 3
POT = STAKE * SIZE
GAME_TIMEOUT = 240.0  # seconds for the whole game (18 rounds at three; the bots think for 0.05 s)
AUCTION_BID = 4  # what the people bid in auction rounds (the highest bid chooses the trump)


class Person(BrowserPerson):
    """One person in their own browser context, with the game loop's bookkeeping."""

    def __init__(self, browser: Any, server: Daphne, name: str) -> None:
        # These players ask for reduced motion (cards do not slide): the slides are the card room's tests'
        # subject, and here they would only cost a whole game's worth of rendering.
        super().__init__(browser, server, name, VIEWPORT, reduced_motion="reduce")
        self.seq = -1  # the board of the last move made: the next is made on a newer one
        self.sent_at = 0.0  # when that move was made
        self.over = False
        self.moves = {"bid": 0, "trump": 0, "play": 0}

    def sign_up(self) -> None:
        page = self.page
        page.goto("/accounts/signup/")
        page.fill("input[name=username]", self.name)
        page.fill("input[name=password1]", PASSWORD)
        page.fill("input[name=password2]", PASSWORD)
        page.locator("form.stacked button[type=submit]").click()
        page.wait_for_url(re.compile(r"/$"))
        expect(page.locator(".site-nav .who")).to_have_text(self.name)
        expect_header_chips(self, WELCOME)

    def join_by_code(self, typed: str) -> None:
        form = self.page.locator("#private form.join-code")
        form.get_by_label("Código de la mesa").fill(typed)
        form.get_by_role("button", name="Unirse").click()
        self.page.wait_for_load_state()


@pytest.fixture
def people(chromium: Any, pocha_server: Daphne) -> Iterator[list[Person]]:
    """Up to three people, each in a fresh browser context; made on demand by ``arrive``."""
    made: list[Person] = []
    yield made
    for person in made:
        person.context.close()


def arrive(people: list[Person], browser: Any, server: Daphne, name: str) -> Person:
    person = Person(browser, server, f"{name}_{uuid.uuid4().hex[:6]}")
    people.append(person)
    person.sign_up()
    return person


def header_chips(person: Person) -> int:
    return int(person.page.locator("#chips-amount").get_attribute("data-chips") or "-1")


def expect_header_chips(person: Person, amount: int) -> None:
    chips = person.page.locator("#chips #chips-amount")
    expect(chips, f"{person.name}'s header should show {amount} chips").to_have_attribute("data-chips", str(amount))
    expect(chips, f"{person.name}'s header should write {amount} as {fichas(amount)}").to_have_text(fichas(amount))


def click_move(locator: Any) -> int | None:
    """Click the first offered move; return the board seq it was made at, or None if it went away.

    The seq comes from the button itself (its ``hx-vals``), not from the page: a newer board may arrive
    between looking and clicking, and the answer to the move is the board after *its* seq.
    """
    try:
        button = locator.first.element_handle(timeout=1_000)
        seq = int(json.loads(button.get_attribute("hx-vals") or "{}")["seq"])
        button.click(timeout=1_000)
    except (sync_api.Error, KeyError, ValueError):
        return None  # the board moved on under us: look again
    return seq


def take_a_turn(person: Person, wait_ms: int) -> bool:
    """If the page offers this person a move on a board newer than their last move's (waiting up to
    ``wait_ms`` in the page for one), make it: a bid (in an auction a high one, else the first or second
    allowed one in turn), a trump suit or the first playable card.  Whether a move was made."""
    page = person.page
    board = pages.look_for_turn(page, person.seq, {"over": True}, wait_ms)
    if board["stop"]:
        person.over = True
        return False
    if board.get("timeout"):
        if person.seq >= 0 and board["seq"] <= person.seq:
            waited = time.monotonic() - person.sent_at
            assert waited < STEP_TIMEOUT / 1000, (
                f"{person.name}'s move at board {person.seq} got no newer board in {waited:.0f} s; "
                f"flashes: {page.evaluate('window.__pocha.flashes')}"
            )
        return False
    controls = page.locator("#controls")
    move = board["offer"]
    if move == "bid":
        bids = controls.get_by_role("group", name="Tu pedido").get_by_role("button", name=re.compile(r"^Pedir \d+$"))
        if "subasta" in " ".join(page.locator("#board-status .round-line").all_inner_texts()):
            # an auction: bid high (up to AUCTION_BID), to win it now and then and choose the trump
            offered = [int(b) for b in bids.evaluate_all("bs => bs.map(b => b.textContent.trim())")]
            if not offered:
                return False  # the board moved on under us: look again
            pick = bids.nth(max(i for i, b in enumerate(offered) if b <= AUCTION_BID or i == 0))
        else:
            pick = bids.nth(1) if person.moves["bid"] % 2 and bids.count() > 1 else bids
    elif move == "trump":
        pick = controls.get_by_role("group", name="Elige el triunfo").get_by_role("button")
    elif move == "play":
        pick = page.get_by_role("region", name="Tu mano").locator("button.card.playable")
    else:
        return False
    seq = click_move(pick)
    if seq is None:
        return False  # the board moved on under us: look again
    person.moves[move] += 1
    person.seq, person.sent_at = seq, time.monotonic()
    return True


def play_to_the_end(players: list[Person], shots: Path) -> None:
    """Both people play at once: each pass gives every page in turn a moment to offer its person a move."""
    deadline = time.monotonic() + GAME_TIMEOUT
    shot_taken = False
    while not all(p.over for p in players):
        if time.monotonic() > deadline:
            rounds = {p.name: p.page.locator("#board-status .round-line").all_inner_texts() for p in players}
            pytest.fail(f"the game has not ended after {GAME_TIMEOUT} s: {rounds}")
        for person in players:
            if person.over:
                continue
            if not shot_taken and person.page.locator("#hand button.card.playable").count() > 3:
                person.page.screenshot(path=str(shots / "private-mid-game.png"), full_page=True)
                shot_taken = True
            take_a_turn(person, wait_ms=100)


def seat_names(page: Any) -> list[str]:
    """The players in seat order, as the scoreboard's columns show them (seat 0 first)."""
    heads = [t.strip() for t in page.locator("#scores table.scoreboard thead th").all_inner_texts()]
    assert heads and heads[0] == "Ronda", heads
    return heads[1:]


def seat_totals(page: Any) -> list[int]:
    return [int(t.strip()) for t in page.locator("#scores table.scoreboard tfoot td").all_inner_texts()]


def expected_split(pot: int, winner_seats: list[int]) -> dict[int, int]:
    """RULES: equal shares; the chips that do not divide go one each to the winners in seat order from 0."""
    order = sorted(winner_seats)
    share, left_over = divmod(pot, len(order))
    return {seat: share + (1 if i < left_over else 0) for i, seat in enumerate(order)}


def wallet_rows(page: Any) -> list[tuple[str, str]]:
    page.goto("/accounts/fichas/")
    rows = []
    for tr in page.locator("table.movements tbody tr").all():
        cells = [c.strip() for c in tr.locator("td").all_inner_texts()]
        rows.append((cells[1], cells[2]))
    return rows


def test_two_friends_play_a_private_table_for_chips(
    chromium: Any, pocha_server: Daphne, people: list[Person], screenshot_dir: Path
) -> None:
    started = time.monotonic()
    ana = arrive(people, chromium, pocha_server, "ana")
    bruno = arrive(people, chromium, pocha_server, "bruno")

    # Ana, in the lobby's «Mesa privada»: 3 players, 500 chips, bots allowed, «Crear mesa privada»
    private = ana.page.locator("#private")
    expect(private.get_by_role("heading", name="Mesa privada")).to_be_visible()
    private.get_by_label("Jugadores").select_option(str(SIZE))
    private.get_by_label("Apuesta").select_option(str(STAKE))
    bots = private.get_by_label("Los bots ocupan los asientos libres")
    expect(bots).to_be_checked()
    private.get_by_role("button", name="Crear mesa privada").click()
    ana.page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    table_id = int(re.search(r"/mesa/(\d+)/$", ana.page.url).group(1))  # type: ignore[union-attr]
    table_url = ana.page.url

    code = ana.page.locator("#table-code").inner_text().strip()
    assert re.fullmatch(r"[A-Z]{5}", code), f"the table code should be five capital letters, not {code!r}"
    invite = ana.page.get_by_role("link", name="Enlace para invitar")
    expect(invite).to_have_attribute("href", f"/mesa/privada/{code}/")
    expect(ana.page.locator("#board-status .tag", has_text="privada")).to_be_visible()
    expect(ana.page.locator("#board-status .stake-line")).to_have_text(
        f"Apuesta: {fichas(STAKE)} fichas · Bote: {fichas(STAKE)} fichas"
    )
    expect_header_chips(ana, WELCOME - STAKE)

    # the table is not among the lobby's open tables: only the code leads to it (the lobby test below
    # looks at that list closely)
    bruno.page.goto("/")
    expect(bruno.page.locator("#open-tables").first).to_be_visible()
    expect(bruno.page.locator("#open-tables").first).not_to_contain_text(ana.name)
    expect(bruno.page.locator(f"a[href='{table_url.removeprefix(pocha_server.url)}']")).to_have_count(0)

    # Bruno types the code as people do: lower case, with a space in it
    typed = f"{code[:3].lower()} {code[3:].lower()}"
    bruno.join_by_code(typed)
    expect(bruno.page, f"the code typed as {typed!r} should seat Bruno at the table").to_have_url(table_url)
    expect(bruno.page.locator("#players li", has_text=bruno.name)).to_contain_text("tú")
    for person in (ana, bruno):  # Ana's page learns of Bruno over the socket
        expect(person.page.locator("#players li.seat", has_text=bruno.name)).to_have_count(1)
        expect(person.page.locator("#players li.seat", has_text=ana.name)).to_have_count(1)
        expect(person.page.locator("#board-status .stake-line")).to_have_text(
            f"Apuesta: {fichas(STAKE)} fichas · Bote: {fichas(2 * STAKE)} fichas"
        )
        expect_header_chips(person, WELCOME - STAKE)
        expect(person.page.locator("#connection")).to_have_attribute("data-state", "open")

    # only the host may start
    expect(bruno.page.locator("#controls").get_by_role("button", name="Empezar", exact=True)).to_have_count(0)
    expect(bruno.page.locator("#controls")).to_contain_text("Quien ha creado la mesa empieza la partida")
    start = ana.page.locator("#controls").get_by_role("button", name="Empezar", exact=True)
    expect(start).to_be_visible()
    ana.page.screenshot(path=str(screenshot_dir / "private-waiting-host.png"), full_page=True)
    start.click()

    # a bot takes the third seat; the pot holds three stakes
    for person in (ana, bruno):
        players = person.page.locator("#players li.seat")
        expect(players).to_have_count(SIZE)
        expect(person.page.locator("#players li.seat.me")).to_contain_text(person.name)
        expect(person.page.locator("#players .tag", has_text=re.compile(r"^bot · normal$"))).to_have_count(1)
        expect(person.page.locator("#board-status .stake-line")).to_have_text(
            f"Apuesta: {fichas(STAKE)} fichas · Bote: {fichas(POT)} fichas"
        )
        expect(person.page.locator("#table-code")).to_have_count(0)

    game_started = time.monotonic()
    play_to_the_end([ana, bruno], screenshot_dir)
    game_seconds = time.monotonic() - game_started

    # the final ranking, on both pages
    outcome: dict[str, int] = {}
    for person in (ana, bruno):
        page = person.page
        expect(page.locator("#controls").get_by_role("heading", name="Clasificación final")).to_be_visible()
        page.screenshot(path=str(screenshot_dir / f"private-final-{person.name.split('_')[0]}.png"), full_page=True)
        names = seat_names(page)
        totals = seat_totals(page)
        assert len(names) == SIZE and ana.name in names and bruno.name in names, names
        ranking = read_final_ranking(page)
        assert sorted(r["name"] for r in ranking) == sorted(names), (ranking, names)
        by_name = {r["name"]: r for r in ranking}
        for seat, name in enumerate(names):
            assert by_name[name]["total"] == totals[seat], f"{name}: ranking and scoreboard totals differ"
        best = max(totals)
        winner_seats = [seat for seat, name in enumerate(names) if by_name[name]["winner"]]
        assert winner_seats == [seat for seat, total in enumerate(totals) if total == best], (
            f"the winners marked «ganador» should be exactly those with the top total: {ranking}"
        )

        split = expected_split(POT, winner_seats)
        for seat, name in enumerate(names):
            row = by_name[name]
            want = split.get(seat, 0)
            assert row["chips"] == want, (
                f"{name} (seat {seat}) should win {want} of the {POT} pot "
                f"(winners' seats {winner_seats}), the page says {row['chips']}: {ranking}"
            )
            said = f"gana {fichas(want)} fichas" if want else f"pierde {fichas(STAKE)} fichas"
            assert row["chips_text"] == said, row["text"]
        assert sum(r["chips"] for r in ranking) == POT, f"the chips won should add up to the pot: {ranking}"
        mine = by_name[person.name]["chips"]
        assert outcome.setdefault(person.name, mine) == mine
        for other in (ana, bruno):  # both pages tell the same story
            outcome.setdefault(other.name, by_name[other.name]["chips"])
            assert outcome[other.name] == by_name[other.name]["chips"], (person.name, ranking)

    # each header: 4.500 plus what they won, on the final board and after a reload
    for person in (ana, bruno):
        expect_header_chips(person, WELCOME - STAKE + outcome[person.name])
        person.page.reload()
        expect(person.page.locator("#controls ol.ranking")).to_be_visible()
        expect_header_chips(person, WELCOME - STAKE + outcome[person.name])

    # the wallet lists the stake and, for a winner, the pot
    for person in (ana, bruno):
        rows = wallet_rows(person.page)
        person.page.screenshot(
            path=str(screenshot_dir / f"private-wallet-{person.name.split('_')[0]}.png"), full_page=True
        )
        expect(person.page.locator("#wallet-balance")).to_have_text(fichas(WELCOME - STAKE + outcome[person.name]))
        what = {w: amount for w, amount in rows}
        assert what.get(f"Apuesta en la mesa {table_id}") == f"−{fichas(STAKE)}", rows
        if outcome[person.name]:
            assert what.get(f"Bote de la mesa {table_id}") == f"+{fichas(outcome[person.name])}", rows
        else:
            assert f"Bote de la mesa {table_id}" not in what, rows
        assert what.get("Regalo de bienvenida") == f"+{fichas(WELCOME)}", rows

    # the code is spent: a third person typing it is told so, and keeps their chips
    carla = arrive(people, chromium, pocha_server, "carla")
    carla.join_by_code(code)
    expect(carla.page).to_have_url(re.compile(r"/$"))
    expect(carla.page.locator(".messages")).to_contain_text("Ese código ya no sirve")
    carla.page.screenshot(path=str(screenshot_dir / "private-code-spent.png"), full_page=True)
    expect_header_chips(carla, WELCOME)
    carla.page.goto(f"/mesa/privada/{code}/")  # the invitation link says the same
    expect(carla.page).to_have_url(re.compile(r"/$"))
    expect(carla.page.locator(".messages")).to_contain_text("Ese código ya no sirve")

    for person in (ana, bruno):
        assert person.page.evaluate("window.__pocha.connectionLost") == 0, f"{person.name} lost the connection"
        assert person.page.evaluate("window.__pocha.flashes") == [], f"a move of {person.name}'s was refused"
        # Every bid and card of theirs was sent by their own page (none by the clock or a bot): their bid in
        # each of the 18 rounds, and 1..8, 3 × 8, 7..1 cards.
        sent = person.page.evaluate("window.__pocha.sent")
        assert (sent.get("bid"), sent.get("play")) == (18, 88), (person.name, sent, person.moves)
    for person in people:
        assert person.errors == [], f"{person.name}'s page reported errors: {person.errors}"
    # the table itself is, to Carla, a table that does not exist: asked with her cookies, not shown in her
    # page (a page showing a 404 reports it as an error, and every page must end the test without any)
    response = carla.page.request.get(table_url)
    assert response.status == 404, f"{table_url} for Carla: {response.status}"
    print(
        f"\nprivate table {table_id}: game {game_seconds:.1f} s, test {time.monotonic() - started:.1f} s; "
        f"moves {ana.name} {ana.moves}, {bruno.name} {bruno.moves}; chips won {outcome}"
    )


def test_the_lobby_lists_open_tables_but_not_a_private_one(
    chromium: Any, pocha_server: Daphne, people: list[Person]
) -> None:
    """Ana opens a private table and Carla a public one (one live table each); Bruno's lobby lists the
    public one only, in one list that it refreshes every 5 s."""
    ana = arrive(people, chromium, pocha_server, "ana")
    ana.page.locator("#private").get_by_label("Apuesta").select_option(str(STAKE))
    ana.page.locator("#private").get_by_role("button", name="Crear mesa privada").click()
    ana.page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    private_id = int(re.search(r"/mesa/(\d+)/$", ana.page.url).group(1))  # type: ignore[union-attr]
    carla = arrive(people, chromium, pocha_server, "carla")
    carla.page.get_by_role("button", name="Abrir mesa").click()
    carla.page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    public_id = int(re.search(r"/mesa/(\d+)/$", carla.page.url).group(1))  # type: ignore[union-attr]

    bruno = arrive(people, chromium, pocha_server, "bruno")
    polls: list[str] = []

    def note_poll(request: Any) -> None:
        if "/mesas/abiertas/" in request.url:
            polls.append(request.url)

    bruno.page.on("request", note_poll)
    bruno.page.goto("/")
    lists_on_load = bruno.page.locator("#open-tables").count()
    listed = bruno.page.locator("#open-tables li")
    expect(listed.filter(has_text=f"Mesa {public_id}:").first).to_contain_text(carla.name)
    expect(listed.filter(has_text=f"Mesa {private_id}:")).to_have_count(0)
    bruno.page.wait_for_timeout(5_600)  # one refresh
    expect(listed.filter(has_text=f"Mesa {private_id}:")).to_have_count(0)
    expect(listed.filter(has_text=f"Mesa {public_id}:").first).to_contain_text(carla.name)
    assert ana.errors == [] and bruno.errors == [] and carla.errors == [], ana.errors + bruno.errors + carla.errors
    # one list, refreshed once per 5 s: the lobby must not wrap the refreshed fragment (which is itself the
    # ``#open-tables`` element, with its own poll) in a second element with the same id and the same poll
    assert (lists_on_load, len(polls)) == (1, 1), (
        f"the lobby opened with {lists_on_load} elements with id open-tables, and fetched the open tables "
        f"{len(polls)} times in its first 5.6 s: {polls}"
    )
