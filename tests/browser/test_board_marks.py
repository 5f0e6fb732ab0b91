"""The trump buttons and the final board as laid out by the browser: the four suits' buttons, each with
the deck's own suit mark, are one size at every width, in one row, with their names whole; a stake lost
is drawn in the loss colour and chips won in the gain colour.

The boards are drawn by the site's own code (``games.read.board`` from a game in memory) and served with
the site's stylesheets, sprite and Content-Security-Policy from a same-origin address the browser itself
answers (a Playwright route): what is measured is the layout, not a game's way there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.utils.translation import override

from games.engine import GameState, Phase, default_action
from games.models import Seat, Table
from games.read import board

ORIGIN = "http://pocha.test"
STATIC = Path(settings.BASE_DIR) / "static"
WIDTHS = [320, 375, 414, 768, 1024, 1280]
TYPES = {".css": "text/css", ".svg": "image/svg+xml", ".js": "text/javascript"}
POLICY = "; ".join(f"{name} {' '.join(values)}" for name, values in settings.CONTENT_SECURITY_POLICY_DIRECTIVES.items())


def game_until(stop: Any, seed: int) -> GameState:
    game = GameState.new(4, seed=seed)
    while not stop(game):
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        else:
            game.apply(default_action(game))
    return game


def page_of(game: GameState, seat: int, language: str, winnings: dict[int, int] | None = None) -> str:
    table = Table(pk=7, size=game.players, status=Table.Status.PLAYING, stake=100, seq=3)
    seats = [
        Seat(
            table=table,
            position=p,
            name=f"Jugador {p}",
            user_id=100 + p,
            sockets=1,
            winnings=(winnings or {}).get(p, 0),
        )
        for p in range(game.players)
    ]
    with override(language):
        ctx = board.board_context(table, seats, board.Viewer(100 + seat, language), spectators=0, game=game)
        ctx["oob"] = False
        drawn = board.draw_board(ctx)
    return (
        f'<!DOCTYPE html><html lang="{language}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/css/pocha.css"><link rel="stylesheet" href="/static/css/cards.css">'
        f'</head><body class="at-table"><main class="content"><div id="table-root" class="table-root">{drawn}</div>'
        "</main></body></html>"
    )


@pytest.fixture
def open_page(chromium: Any) -> Iterator[Any]:
    contexts = []
    errors: list[str] = []

    def open_page(html: str, width: int) -> Any:
        context = chromium.new_context(viewport={"width": width, "height": 800})
        contexts.append(context)
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("requestfailed", lambda r: errors.append(f"{r.url}: {r.failure}"))

        def answer(route: Any) -> None:
            path = route.request.url.removeprefix(ORIGIN).split("?")[0]
            if path == "/":
                route.fulfill(body=html, content_type="text/html", headers={"Content-Security-Policy": POLICY})
            elif path.startswith("/static/") and (STATIC / path.removeprefix("/static/")).is_file():
                file = STATIC / path.removeprefix("/static/")
                route.fulfill(path=str(file), content_type=TYPES.get(file.suffix, "application/octet-stream"))
            else:
                route.fulfill(status=404, body="")

        page.route(f"{ORIGIN}/**", answer)
        page.goto(f"{ORIGIN}/")
        page.wait_for_load_state("load")
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert errors == []


MEASURE = """() => Array.from(document.querySelectorAll('#controls .trump-buttons button.suit')).map((b) => {
  const box = b.getBoundingClientRect();
  const mark = b.querySelector('svg.suit-mark').getBoundingClientRect();
  const name = b.querySelector('.suit-name');
  return {label: b.getAttribute('aria-label'), x: box.x, y: box.y, w: box.width, h: box.height,
          right: box.right, markW: mark.width, markH: mark.height, markInside: mark.left >= box.left && mark.right <= box.right,
          nameWhole: name.scrollWidth <= name.clientWidth + 1 && name.getBoundingClientRect().right <= box.right + 0.5
            && name.getBoundingClientRect().height < 1.6 * parseFloat(getComputedStyle(name).lineHeight)};
})"""


@pytest.mark.parametrize("language", ["es", "en"])
def test_the_four_trump_buttons_are_one_size_in_one_row_at_every_width(open_page: Any, language: str) -> None:
    game = game_until(lambda g: g.phase is Phase.CHOOSING_TRUMP, seed=3)
    html = page_of(game, game.turn, language)
    for width in WIDTHS:
        page = open_page(html, width)
        buttons = page.evaluate(MEASURE)
        assert len(buttons) == 4, width
        first = buttons[0]
        for b in buttons:
            assert abs(b["w"] - first["w"]) < 0.5 and abs(b["h"] - first["h"]) < 0.5, (width, buttons)
            assert abs(b["y"] - first["y"]) < 0.5, f"not in one row at {width}px: {buttons}"
            assert b["right"] <= width, (width, b)
            assert b["markW"] > 10 and b["markH"] > 10 and b["markInside"], (width, b)
            assert b["nameWhole"], f"{b['label']}'s name is cut or broken at {width}px"
            assert b["h"] >= 44, f"a suit's button is too small to tap at {width}px: {b}"
        # the group keeps its name, and each button its suit's
        group = page.get_by_role("group", name="Elige el triunfo" if language == "es" else "Choose trump")
        names = ["oros", "copas", "espadas", "bastos"] if language == "es" else ["coins", "cups", "swords", "clubs"]
        for name in names:
            assert group.get_by_role("button", name=name, exact=True).count() == 1


def test_a_stake_lost_is_drawn_in_the_loss_colour_and_chips_won_in_the_gain_colour(open_page: Any) -> None:
    game = game_until(lambda g: g.phase is Phase.GAME_OVER, seed=11)
    winners = game.winners() or []
    html = page_of(game, 0, "es", winnings={p: 400 // len(winners) for p in winners})
    page = open_page(html, 375)
    colours = page.evaluate(
        """() => Array.from(document.querySelectorAll('#controls .won-chips')).map((s) => ({
          text: s.textContent.trim(), colour: getComputedStyle(s).color}))"""
    )
    assert len(colours) == 4
    danger, felt = "rgb(185, 28, 28)", "rgb(20, 83, 45)"  # --danger #b91c1c, --felt #14532d
    for row in colours:
        assert row["colour"] == (danger if row["text"].startswith("pierde") else felt), colours
    assert sum(1 for row in colours if row["colour"] == danger) == 4 - len(winners)


@pytest.mark.parametrize("width", [375, 1280])
def test_the_rules_page_fits_the_screen(open_page: Any, width: int) -> None:
    from django.test import Client

    html = Client(headers={"accept-language": "es"}).get("/reglas/").content.decode()
    page = open_page(html, width)
    sizes = page.evaluate(
        """() => ({page: document.documentElement.scrollWidth,
                   table: document.querySelector('.rules-table').getBoundingClientRect().right,
                   tableScroll: document.querySelector('.rules .scroll').scrollWidth,
                   tableBox: document.querySelector('.rules .scroll').clientWidth})"""
    )
    assert sizes["page"] <= width, sizes
    assert sizes["table"] <= width and sizes["tableScroll"] <= sizes["tableBox"], f"the rounds table scrolls: {sizes}"
