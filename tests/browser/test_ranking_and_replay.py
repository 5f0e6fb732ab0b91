"""After a staked quick game the person shows in this week's ranking, and the game's replay steps through it.

Everything goes through the page, as a player would do it, in a real browser (Debian's Chromium) against
the real ASGI server: sign up, choose 3 players and a stake of 100 in «Jugar ya», wait for the two bots,
and play the whole game (18 rounds) by clicking the bids, the «Elige el triunfo» buttons and the playable
cards of «Tu mano» that the board offers, until «Clasificación final» shows.

The person plays sensibly (the bots' own reasoning, from what their page shows: their hand, the trump,
the cards on the table), and wins about one game in four. The ranking is checked after every game
against what the final boards said: the person's row has the net chips (pots won minus the stakes), the
games and the wins, and no bot is ever listed. A game lost is followed by another, up to three (about a
minute each on two busy cores), so that the "the winner appears in this week's ranking" case is seen in
more than half the runs; the bots may legitimately win them all, and then the losses are what is checked
(rankings rows with wins and won pots are checked in every run without a browser, in
tests/leaderboard/test_ranking_page.py).

The first game's replay: every hand of round 1 (a list labelled with its player's name), then «Siguiente»
and → through the bids and the first trick, the live region describing each step, against the game's
record downloaded with the page's session; «Anterior» and ← go back.
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

VIEWPORT = {"width": 1280, "height": 900}
PASSWORD = "cuarenta-bazas-2025"
WELCOME = 5_000
SIZE = 3
STAKE = 100
POT = SIZE * STAKE
MAX_GAMES = 3  # a game lost, another: the person wins about one in four
ROUNDS = 18  # at three players: 1..8 cards, three auctions of 8, 7..1
GAME_TIMEOUT = 150.0  # seconds for one whole game (the bots think for 0.05 s)

# What the person sees on the board, in one look: what is offered, their hand, the trump, the trick.
READ_BOARD = """() => {
  const all = (s) => Array.from(document.querySelectorAll(s));
  const suitOf = (el) => {
    const m = (el.getAttribute('class') || '').match(/\\bsuit-(\\w)\\b/);
    return m ? m[1] : null;
  };
  const trumpCard = document.querySelector('#board-status .trump-line .trump-card');
  const trumpSuit = document.querySelector('#board-status .trump-line strong[class^="suit-"]');
  // my seat's badge: "bid/tricks" ("–/0" before bidding)
  const mine = document.querySelector('#players li.seat.me .bid-tricks');
  const bidTricks = mine ? mine.textContent.replace(/[^0-9/–]/g, '').split('/') : ['', ''];
  const cell = (i) => (bidTricks[i] || '').replace('–', '');
  return {
    over: !!document.querySelector('#controls ol.ranking'),
    bids: all('#controls button.bid:not([disabled])').map((b) => parseInt(b.textContent.trim(), 10)),
    suits: all('#controls .trump-buttons button.suit').map(suitOf),
    hand: all('#hand button.card').map((b) => ({code: b.dataset.card, playable: b.classList.contains('playable')})),
    trumpName: trumpCard ? trumpCard.getAttribute('aria-label') : null,
    trumpSuit: trumpSuit ? suitOf(trumpSuit) : null,
    trick: all('#felt ul.trick:not(.done) li.played span[role=img]').map((s) => s.getAttribute('aria-label')),
    myBid: cell(0),
    myTricks: cell(1),
  };
}"""

# -- the cards, as the rules and the Spanish pages name them (written out here, not taken from the app)
STRENGTH_ORDER = (1, 3, 12, 11, 10, 7, 6, 5, 4, 2)  # strongest first, in every suit
STRENGTH = {rank: len(STRENGTH_ORDER) - i for i, rank in enumerate(STRENGTH_ORDER)}  # ace 10 .. two 1
SUIT_NAMES = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
SUIT_BY_NAME = {name: code for code, name in SUIT_NAMES.items()}
RANK_WORDS = {1: "as", 10: "sota", 11: "caballo", 12: "rey"}
RANK_BY_WORD = {word: rank for rank, word in RANK_WORDS.items()}

Card = tuple[int, str]  # (rank, suit letter)


def parse_code(code: str) -> Card:
    """``12b`` → (12, "b")."""
    return int(code[:-1]), code[-1]


def card_name(code: str) -> str:
    """``1o`` → «as de oros», ``3c`` → «3 de copas»."""
    rank, suit = parse_code(code)
    return f"{RANK_WORDS.get(rank, str(rank))} de {SUIT_NAMES[suit]}"


def parse_name(name: str) -> Card:
    """«caballo de bastos» → (11, "b")."""
    word, _de, suit = name.strip().split(" ")
    return RANK_BY_WORD.get(word) or int(word), SUIT_BY_NAME[suit]


def trick_winner(cards: list[Card], trump: str) -> int:
    """Index of the card that takes the trick: the highest trump, else the highest of the suit led."""
    best = 0
    for i in range(1, len(cards)):
        rank, suit = cards[i]
        if suit == cards[best][1]:
            if STRENGTH[rank] > STRENGTH[cards[best][0]]:
                best = i
        elif suit == trump:
            best = i
    return best


# -- how the person plays: the bots' own reasoning (games/engine/bot.py), on what their page shows
TRUMP_VALUE = {10: 1.0, 9: 0.95, 8: 0.8, 7: 0.7, 6: 0.6, 5: 0.5, 4: 0.45, 3: 0.4, 2: 0.35, 1: 0.3}
SIDE_VALUE = {10: 0.85, 9: 0.55, 8: 0.3, 7: 0.15, 6: 0.05}


def hand_value(hand: list[Card], trump: str | None) -> float:
    """The tricks a hand can expect with ``trump`` (None: not known yet), at three players."""
    if not hand:
        return 0.0
    length_penalty = max(0.4, 1.0 - 0.06 * (len(hand) - 1))
    total = 0.0
    for suit in SUIT_NAMES:
        cards = sorted((c for c in hand if c[1] == suit), key=lambda c: -STRENGTH[c[0]])
        if suit == trump:
            total += sum(TRUMP_VALUE[STRENGTH[r]] for r, _s in cards) + 0.15 * max(0, len(cards) - 2)
            continue
        for i, (rank, _s) in enumerate(cards):
            value = SIDE_VALUE.get(STRENGTH[rank], 0.0)
            if i > 0 and STRENGTH[rank] < 10:
                value *= 0.8
            if len(cards) >= 5:
                value *= 0.6
            total += value * length_penalty
        if trump is not None and not cards:
            total += 0.25 * min(sum(1 for c in hand if c[1] == trump), 2) * (len(hand) / 8)
    return total


def best_suit(hand: list[Card], offered: list[str]) -> str:
    order = list(SUIT_NAMES)
    return max(offered, key=lambda s: (hand_value(hand, s), sum(1 for c in hand if c[1] == s), -order.index(s)))


def choose_bid(board: dict[str, Any]) -> int:
    hand = [parse_code(c["code"]) for c in board["hand"]]
    trump = board["trumpSuit"] or (parse_name(board["trumpName"])[1] if board["trumpName"] else None)
    if trump is None:  # an auction: the trump is chosen after the bids, by the highest bid
        estimate = hand_value(hand, best_suit(hand, list(SUIT_NAMES))) * 0.85
    elif len(hand) == 1:
        rank, suit = hand[0]
        estimate = 1.0 if (STRENGTH[rank] >= 8 if suit == trump else STRENGTH[rank] == 10) else 0.0
    else:
        estimate = hand_value(hand, trump)
    offered: list[int] = board["bids"]
    return min(offered, key=lambda n: (abs(n - estimate), n))


def choose_card(board: dict[str, Any]) -> str:
    legal: list[str] = [c["code"] for c in board["hand"] if c["playable"]]
    if len(legal) == 1:
        return legal[0]
    trump = board["trumpSuit"] or (parse_name(board["trumpName"])[1] if board["trumpName"] else None)
    assert trump is not None, f"cards to play and no trump on the board: {board}"
    need = int(board["myBid"] or 0) - int(board["myTricks"] or 0)
    trick = [parse_name(n) for n in board["trick"]]

    def weight(code: str) -> int:
        rank, suit = parse_code(code)
        return STRENGTH[rank] + (20 if suit == trump else 0)

    if not trick:
        if need > 0:
            side_aces = [c for c in legal if parse_code(c)[1] != trump and parse_code(c)[0] == 1]
            return side_aces[0] if side_aces else max(legal, key=weight)
        return min(legal, key=weight)
    last_to_play = len(trick) == SIZE - 1
    winners = [c for c in legal if trick_winner([*trick, parse_code(c)], trump) == len(trick)]
    losers = [c for c in legal if c not in winners]
    if need > 0:
        if winners:
            return min(winners, key=weight) if last_to_play else max(winners, key=weight)
        return min(legal, key=weight)
    if losers:
        return max(losers, key=weight)
    return min(winners, key=weight) if not last_to_play else max(winners, key=weight)


# -- the person and their browser


class Person(BrowserPerson):
    def __init__(self, browser: Any, server: Daphne, name: str) -> None:
        # These players ask for reduced motion (cards do not slide): the slides are the card room's tests'
        # subject, and here they would only cost a whole game's worth of rendering.
        super().__init__(browser, server, name, VIEWPORT, reduced_motion="reduce")
        self.flashes: list[str] = []

    def note_page_watch(self) -> None:
        """Before leaving a table page: what its watcher saw (refused moves, a lost connection)."""
        seen = self.page.evaluate("window.__pocha")
        assert seen["connectionLost"] == 0, f"{self.name} lost the connection to the table"
        self.flashes += seen["flashes"]


@pytest.fixture
def person(chromium: Any, pocha_server: Daphne) -> Iterator[Person]:
    made = Person(chromium, pocha_server, f"rosa_{uuid.uuid4().hex[:6]}")
    yield made
    made.context.close()


def signed_fichas(n: int) -> str:
    """Net chips as the ranking writes them: +200, −100, 0."""
    return ("+" if n > 0 else "") + fichas(n)


def sign_up(person: Person) -> None:
    page = person.page
    page.goto("/accounts/signup/")
    page.fill("input[name=username]", person.name)
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.locator("form.stacked button[type=submit]").click()
    page.wait_for_url(re.compile(r"/$"))
    expect(page.locator(".site-nav .who")).to_have_text(person.name)
    expect_header_chips(page, WELCOME)


def expect_header_chips(page: Any, amount: int) -> None:
    chips = page.locator("#chips #chips-amount")
    expect(chips, f"the header should show {amount} chips").to_have_attribute("data-chips", str(amount))
    expect(chips).to_have_text(fichas(amount))


def table_id_of(page: Any) -> int:
    match = re.search(r"/mesa/(\d+)/$", page.url)
    assert match, page.url
    return int(match.group(1))


def click_move(locator: Any) -> int | None:
    """Click an offered move; return the board seq it was made at, or None if it went away meanwhile."""
    try:
        button = locator.first.element_handle(timeout=2_000)
        seq = int(json.loads(button.get_attribute("hx-vals") or "{}")["seq"])
        button.click(timeout=2_000)
    except (sync_api.Error, KeyError, ValueError):
        return None
    return seq


def play_to_the_end(person: Person, shots: Path, game_no: int) -> dict[str, int]:
    """Make the move the board offers, the person's own choice among them, until the game is over."""
    page = person.page
    moves = {"bid": 0, "trump": 0, "play": 0}
    deadline = time.monotonic() + GAME_TIMEOUT
    shot_taken = False
    seq = -1  # the board of the last move: the next one is made on a newer board
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(
                f"game {game_no} has not ended after {GAME_TIMEOUT} s: "
                f"{page.locator('#board-status .round-line').all_inner_texts()}, moves {moves}"
            )
        turn = pages.next_turn(page, seq, {"over": True}, int(min(STEP_TIMEOUT, left * 1000)))
        board = page.evaluate(READ_BOARD)
        if board["over"]:
            return moves
        controls = page.locator("#controls")
        if board["bids"]:
            move, locator = "bid", controls.get_by_role("button", name=f"Pedir {choose_bid(board)}", exact=True)
        elif board["suits"]:
            choice = best_suit([parse_code(c["code"]) for c in board["hand"]], board["suits"])
            move = "trump"
            locator = controls.get_by_role("group", name="Elige el triunfo").locator(f"button.suit-{choice}")
        elif any(c["playable"] for c in board["hand"]):
            if not shot_taken and game_no == 1 and len(board["hand"]) >= 6:
                page.screenshot(path=str(shots / "ranking-replay-mid-game.png"), full_page=True)
                shot_taken = True
            move = "play"
            locator = page.locator(f"#hand button.card.playable[data-card='{choose_card(board)}']")
        else:
            seq = turn["seq"]  # the offer went away between the two looks: wait for a newer board
            continue
        made = click_move(locator)
        if made is not None:
            moves[move] += 1
            seq = made


def seat_names(page: Any) -> list[str]:
    """The players in seat order, as the scoreboard's columns show them."""
    heads = [t.strip() for t in page.locator("#scores table.scoreboard thead th").all_inner_texts()]
    assert heads and heads[0] == "Ronda", heads
    return heads[1:]


def first_round_points(page: Any) -> list[str]:
    """The scoreboard's round-1 row, in seat order (as the page writes them: 15, -5)."""
    row = page.locator("#scores table.scoreboard tbody tr").first
    return [t.strip() for t in row.locator("td .pts").all_inner_texts()]


def quick_game(person: Person, game_no: int, chips_before: int, shots: Path) -> dict[str, Any]:
    """From the lobby: «Jugar ya» at 3 players for 100 chips, the whole game, and what its final board says."""
    page = person.page
    quick = page.locator("form.quick-play")
    quick.locator("input[name=size][value='3']").check()
    quick.locator("input[name=stake][value='100']").check()
    page.locator("#quick-play").click()
    page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    table_id = table_id_of(page)
    expect_header_chips(page, chips_before - STAKE)

    # nobody else comes: after POCHA_QUICK_WAIT (1 s) two bots sit down and the game starts
    expect(page.locator("#players li.seat")).to_have_count(SIZE)
    expect(page.locator("#players li.seat.me")).to_contain_text(person.name)
    expect(page.locator("#players .tag", has_text=re.compile(r"^bot · normal$"))).to_have_count(SIZE - 1)
    expect(page.locator("#board-status .stake-line")).to_have_text(
        f"Apuesta: {fichas(STAKE)} fichas · Bote: {fichas(POT)} fichas"
    )

    started = time.monotonic()
    sent_before = page.evaluate("window.__pocha.sent")
    moves = play_to_the_end(person, shots, game_no)
    sent_after = page.evaluate("window.__pocha.sent")
    sent = {action: sent_after.get(action, 0) - sent_before.get(action, 0) for action in ("bid", "play")}
    seconds = time.monotonic() - started

    expect(page.locator("#controls").get_by_role("heading", name="Clasificación final")).to_be_visible()
    page.screenshot(path=str(shots / f"ranking-replay-final-{game_no}.png"), full_page=True)
    names = seat_names(page)
    assert len(names) == SIZE and person.name in names, names
    bots = [name for name in names if name != person.name]
    bot_rows = page.locator("#players li.seat").filter(has=page.locator(".tag", has_text=re.compile(r"^bot · normal$")))
    for bot in bots:
        expect(bot_rows.filter(has_text=bot), f"{bot} should be one of the two bots").to_have_count(1)
    ranking = read_final_ranking(page)
    assert sorted(r["name"] for r in ranking) == sorted(names), ranking
    best = max(r["total"] for r in ranking)
    assert [r["name"] for r in ranking if r["winner"]] == [r["name"] for r in ranking if r["total"] == best], (
        f"«ganador» should mark exactly those with the top total: {ranking}"
    )
    assert sum(r["chips"] for r in ranking) == POT, f"the pot should be paid out whole: {ranking}"
    for r in ranking:
        assert (r["chips"] > 0) == r["winner"], r
        said = f"gana {fichas(r['chips'])} fichas" if r["chips"] else f"pierde {fichas(STAKE)} fichas"
        assert r["chips_text"] == said, r["text"]
    mine = next(r for r in ranking if r["name"] == person.name)
    expect_header_chips(page, chips_before - STAKE + mine["chips"])
    # the person's own bid in every round, and 1..8 + 3 × 8 + 7..1 cards, sent by their page (none by the
    # clock or a bot)
    assert sent == {"bid": ROUNDS, "play": 88}, (sent, moves)
    return {
        "table_id": table_id,
        "names": names,
        "bots": bots,
        "ranking": ranking,
        "won": mine["winner"],
        "chips": mine["chips"],
        "round1_points": first_round_points(page),
        "seconds": seconds,
        "moves": moves,
    }


def check_week_ranking(person: Person, net: int, games: int, wins: int, bots: set[str], shots: Path) -> None:
    """«Clasificación» in the header: this week, the person alone (bots never count), with these numbers."""
    page = person.page
    page.locator(".site-nav").get_by_role("link", name="Clasificación", exact=True).click()
    page.wait_for_url(re.compile(r"/clasificacion/$"))
    ranking = page.locator("#ranking")
    expect(ranking.locator(".ranking-tabs a.active")).to_have_text("Esta semana")
    rows = ranking.locator("table.ranking-table tbody tr")
    expect(rows).to_have_count(1)
    cells = [" ".join(t.split()) for t in rows.first.locator("td").all_inner_texts()]
    expected = ["1", person.name, signed_fichas(net), str(games), str(wins)]
    page.screenshot(path=str(shots / f"ranking-replay-week-{games}.png"), full_page=True)
    assert cells == expected, (
        f"this week's ranking after {games} game(s) should list {person.name} as "
        f"{expected} (position, name, net chips, games, wins); it shows {cells}"
    )
    expect(rows.first).to_have_class(re.compile(r"\bme\b"))
    expect(ranking.locator("#my-position")).to_have_text(f"Tu puesto: 1 · {signed_fichas(net)} fichas")
    shown = ranking.locator("table.ranking-table").inner_text()
    for bot in bots:
        assert bot not in shown, f"the bot {bot} should never be in a ranking: {shown!r}"
    link = rows.first.get_by_role("link", name=person.name, exact=True)
    expect(link).to_have_attribute("href", f"/jugador/{person.name}/")
    # the row leads to the person's profile, which agrees
    link.click()
    page.wait_for_url(re.compile(rf"/jugador/{person.name}/$"))
    expect(page.locator("#profile-title")).to_contain_text(person.name)
    expect(page.locator("#net-week")).to_have_text(signed_fichas(net))
    expect(page.locator("#stat-games")).to_have_text(str(games))
    expect(page.locator("#stat-wins")).to_have_text(str(wins))


def check_replay(person: Person, game: dict[str, Any], shots: Path) -> None:
    """From the final board, «Ver la repetición»: round 1's hands, its bids and first trick step by step."""
    page = person.page
    table_id = game["table_id"]
    page.locator("#controls").get_by_role("link", name="Ver la repetición").click()
    page.wait_for_url(re.compile(rf"/mesa/{table_id}/repeticion/$"))
    expect(page.get_by_role("heading", name=f"Mesa {table_id} · repetición")).to_be_visible()

    # the record, downloaded with the page's own session
    response = page.request.get(f"/mesa/{table_id}/partida.json")
    assert response.status == 200, response.status
    record = response.json()
    assert record["format"] == "pocha-record/1", record.get("format")
    assert record["players"] == game["names"], (record["players"], game["names"])
    assert len(record["rounds"]) == ROUNDS
    first = record["rounds"][0]
    names = record["players"]
    assert first["trump_card"], first  # round 1 turns up a card for trump
    trump = parse_code(first["trump_card"])[1]
    assert [len(h) for h in first["hands"]] == [1] * SIZE and len(first["bids"]) == SIZE, first
    assert len(first["plays"]) == SIZE, first  # one card each: the one trick
    holder = {code: seat for seat, hand in enumerate(first["hands"]) for code in hand}

    viewer = page.locator("#replay-viewer")
    expect(viewer).to_be_visible()
    now = page.locator("#replay-now")
    expect(now).to_have_attribute("aria-live", "polite")
    position = page.locator("#replay-position")

    def hand_list(name: str) -> Any:
        return viewer.get_by_role("list", name=name, exact=True)

    def hand_cards(name: str) -> list[str]:
        cards: list[str] = (
            hand_list(name).locator("[role=img]").evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
        )
        return cards

    # the first step: round 1 dealt, every hand shown, named by its player
    expect(now).to_have_text(
        re.compile(r"^Ronda 1 · reparte (.+)\. Triunfo: " + re.escape(card_name(first["trump_card"])) + r"\.$")
    )
    dealer = re.match(r"^Ronda 1 · reparte (.+?)\. Triunfo", now.inner_text()).group(1)  # type: ignore[union-attr]
    assert dealer in names, (dealer, names)
    expect(position).to_have_text(re.compile(r"^Paso 1 de \d+$"))
    for seat, name in enumerate(names):
        expect(hand_list(name)).to_be_visible()
        assert hand_cards(name) == [card_name(c) for c in first["hands"][seat]], (
            f"{name}'s round-1 hand in the replay: {hand_cards(name)}, in the record: {first['hands'][seat]}"
        )
    page.screenshot(path=str(shots / "ranking-replay-deal.png"), full_page=True)

    # forward, by button and by key in turn: the three bids, then the first trick card by card
    texts = [now.inner_text()]
    forward = viewer.get_by_role("button", name="Siguiente", exact=True)
    back = viewer.get_by_role("button", name="Anterior", exact=True)
    bidders: list[str] = []
    for step in range(1, 2 * SIZE + 1):
        if step % 2:
            forward.click()
        else:
            page.keyboard.press("ArrowRight")
        expect(position).to_have_text(re.compile(rf"^Paso {step + 1} de \d+$"))
        text = now.inner_text()
        assert text != texts[-1], f"the live region did not change at step {step + 1}: {text!r}"
        texts.append(text)
        if step <= SIZE:  # a bid
            match = re.fullmatch(r"Ronda 1 · (.+) pide (\d+)\.", text)
            assert match and match[1] in names, f"step {step + 1} should be a bid: {text!r}"
            assert int(match[2]) == first["bids"][step - 1], (text, first["bids"])
            bidders.append(match[1])
            continue
        k = step - SIZE - 1  # the k-th card of the first trick
        code = first["plays"][k]
        who = names[holder[code]]
        said = f"Ronda 1 · baza 1: {who}, {card_name(code)}."
        if k == SIZE - 1:
            winner = names[holder[first["plays"][trick_winner([parse_code(c) for c in first["plays"]], trump)]]]
            said += f" Gana la baza {winner}."
        assert text == said, f"step {step + 1} of the replay says {text!r}, the record {said!r}"
        on_table = page.locator("#replay-trick [role=img]").evaluate_all(
            "els => els.map(e => e.getAttribute('aria-label'))"
        )
        assert on_table == [card_name(c) for c in first["plays"][: k + 1]], on_table
        assert card_name(code) not in hand_cards(who), f"{who} still holds the {card_name(code)} once played"
    assert dealer == names[record["first_dealer"]], (dealer, record["first_dealer"])
    assert sorted(bidders) == sorted(names), f"each player bids once in round 1: {bidders}"
    assert bidders[-1] == dealer, f"the dealer bids last: {bidders}, dealer {dealer}"
    assert names[holder[first["plays"][0]]] == bidders[0], "whoever bids first leads the first trick"
    expect(page.locator("#replay-trick-title")).to_contain_text("Baza 1 de 1")
    page.screenshot(path=str(shots / "ranking-replay-first-trick.png"), full_page=True)

    # back: «Anterior», then ←, each one step; → again
    back.click()
    expect(now).to_have_text(texts[-2])
    expect(position).to_have_text(re.compile(rf"^Paso {len(texts) - 1} de \d+$"))
    page.keyboard.press("ArrowLeft")
    expect(now).to_have_text(texts[-3])
    expect(position).to_have_text(re.compile(rf"^Paso {len(texts) - 2} de \d+$"))
    expect(page.locator("#replay-trick [role=img]")).to_have_count(SIZE - 2)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(now).to_have_text(texts[-1])
    # one more: the end of round 1, with the points the final board's scoreboard gave it
    forward.click()
    points = ", ".join(f"{name} {signed_fichas(int(p))}" for name, p in zip(names, game["round1_points"]))
    expect(now).to_have_text(f"Fin de la ronda 1: {points}.")


def test_a_staked_quick_game_ranks_its_player_and_replays(
    chromium: Any, pocha_server: Daphne, person: Person, screenshot_dir: Path
) -> None:
    started = time.monotonic()
    page = person.page
    sign_up(person)

    chips = WELCOME
    net = wins = 0
    bots: set[str] = set()
    played: list[dict[str, Any]] = []
    for game_no in range(1, MAX_GAMES + 1):
        if game_no > 1:
            page.locator(".site-nav").get_by_role("link", name="Jugar", exact=True).click()
            page.wait_for_url(re.compile(r"/$"))
        game = quick_game(person, game_no, chips, screenshot_dir)
        person.note_page_watch()
        played.append(game)
        chips += game["chips"] - STAKE
        net += game["chips"] - STAKE
        wins += 1 if game["won"] else 0
        bots.update(game["bots"])
        if game_no == 1:
            check_replay(person, game, screenshot_dir)
        check_week_ranking(person, net, game_no, wins, bots, screenshot_dir)
        if game["won"]:
            break  # the winner is in this week's ranking: seen

    assert net == chips - WELCOME
    assert person.flashes == [], f"a move of {person.name}'s was refused: {person.flashes}"
    assert person.errors == [], f"{person.name}'s pages reported errors: {person.errors}"
    summary = "; ".join(
        f"table {g['table_id']}: {'won' if g['won'] else 'lost'} ({g['chips']} chips), {g['seconds']:.1f} s"
        for g in played
    )
    print(
        f"\n{summary}; ranking net {signed_fichas(net)}, {len(played)} game(s), {wins} win(s); "
        f"test {time.monotonic() - started:.1f} s"
    )
