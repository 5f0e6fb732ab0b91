"""The Spanish deck drawn as SVG: the sprite static/img/baraja.svg, the face templates/games/_card.html and
the colours of static/css/cards.css.

Every one of the 40 cards renders with its suit class, its number as text and `<use>` references to
symbols that exist in the sprite; the markup stays small (it goes over the WebSocket for every card on
every move); and the suit colours keep WCAG AA contrast on the white card and stay apart for
colour-blind players (computed from the hex values in cards.css, so a bad colour change fails here).
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from django.template.loader import render_to_string
from django.templatetags.static import static

ROOT = Path(__file__).resolve().parent.parent
SPRITE = ROOT / "static" / "img" / "baraja.svg"
CSS = ROOT / "static" / "css" / "cards.css"
SVG_NS = "{http://www.w3.org/2000/svg}"

RANKS = [1, 2, 3, 4, 5, 6, 7, 10, 11, 12]
SUITS = ["o", "c", "e", "b"]
SUIT_WORDS = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
RANK_WORDS = {1: "as", 10: "sota", 11: "caballo", 12: "rey"}
CARDS = [(rank, suit) for suit in SUITS for rank in RANKS]

BYTE_BUDGET = 450
# In production the sprite is served under a hashed name (ManifestStaticFilesStorage adds ".<12 hex>").
HASH_EXTRA = len(".0123456789ab")

# The card detector of tests/live/test_secrecy.py: a face must still be recognisable by it.
FACE = re.compile(r'class="card-face suit-([oceb])"[^>]*? data-r="(\d+)"')
CODE = re.compile(r"(?<![A-Za-z0-9])(1[0-2]|[1-7])([oceb])(?![A-Za-z0-9])")
USE = re.compile(r'<use href="([^"#]*)#([^"]+)"')
CORNER = re.compile(
    r'<use href="[^"#]*#([^"]+)" class="ix" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"/>'
)


def card_ctx(rank: int, suit: str) -> dict[str, object]:
    return {
        "code": f"{rank}{suit}",
        "rank": rank,
        "suit": suit,
        "name": f"{RANK_WORDS.get(rank, rank)} de {SUIT_WORDS[suit]}",
    }


def render(rank: int, suit: str) -> str:
    return str(render_to_string("games/_card.html", {"card": card_ctx(rank, suit)}))


def sprite_symbols() -> dict[str, ET.Element]:
    root = ET.parse(SPRITE).getroot()
    return {el.get("id", ""): el for el in root.iter(f"{SVG_NS}symbol")}


# -- the sprite -------------------------------------------------------------------------------------


def test_sprite_is_well_formed_with_a_viewbox_on_every_symbol() -> None:
    root = ET.parse(SPRITE).getroot()  # raises on malformed XML
    assert root.tag == f"{SVG_NS}svg"
    symbols = sprite_symbols()
    expected = {f"suit-{s}" for s in SUITS} | {"fig-10", "fig-11", "fig-12"}
    assert expected <= set(symbols), f"missing symbols: {expected - set(symbols)}"
    for name, symbol in symbols.items():
        box = symbol.get("viewBox")
        assert box, f"{name} has no viewBox"
        numbers = [float(n) for n in box.replace(",", " ").split()]
        assert len(numbers) == 4 and numbers[2] > 0 and numbers[3] > 0, f"{name}: bad viewBox {box!r}"
        assert len(symbol), f"{name} is empty"


def test_sprite_takes_its_colours_from_css_and_stays_small() -> None:
    text = SPRITE.read_text(encoding="utf-8")
    assert len(text.encode()) < 6000, "the sprite should stay a few KB"
    # no hard-coded suit colours: outlines use currentColor, bodies the --f variable of cards.css
    assert "currentColor" in text and "var(--f" in text
    colours = set(re.findall(r"#[0-9a-fA-F]{3,6}\b", text)) - {"#fff", "#ffffff"}
    assert not colours, f"colours fixed in the sprite: {colours}"
    # the light gold coin needs its dark outline (that is what gives oros its 3:1 as a graphic)
    coin = sprite_symbols()["suit-o"]
    assert any(el.get("stroke") == "currentColor" for el in coin.iter()), "the coin lost its outline"


# -- the faces --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("rank", "suit"), CARDS, ids=[f"{r}{s}" for r, s in CARDS])
def test_every_card_renders_with_its_suit_rank_and_symbols(rank: int, suit: str) -> None:
    html = render(rank, suit)
    assert html.startswith(f'<span class="card-face suit-{suit}" aria-hidden="true"')
    assert f' data-r="{rank}"' in html and 'class="rank"' not in html
    assert f'data-r="{rank}"' in html  # the turned number in the bottom-right corner
    face = FACE.search(html)
    assert face and (face.group(1), int(face.group(2))) == (suit, rank), "the secrecy detector must see it"
    assert 'viewBox="0 0 40 60"' in html, "the face must scale with the card (a viewBox, no fixed size)"

    symbols = sprite_symbols()
    uses = USE.findall(html)
    assert uses, "no <use> in the face"
    for path, fragment in uses:
        assert path == static("img/baraja.svg")
        assert fragment in symbols, f"#{fragment} is not in baraja.svg"
    fragments = [fragment for _, fragment in uses]
    assert f"suit-{suit}" in fragments
    if rank >= 10:
        assert fragments == [f"fig-{rank}", f"suit-{suit}"], "a figure shows its mark, and the suit in the corner"
    else:
        assert fragments == [f"suit-{suit}", f"suit-{suit}"], "the suit in the middle, and small in the corner"
    # the corner mark sits under the number, in the left strip an overlapped card of the hand keeps in view
    # (cards.css: a fanned card shows at least --fan of its width, 42 %)
    corner = CORNER.search(html)
    assert corner and corner.group(1) == f"suit-{suit}", "the suit mark of the corner index is missing"
    x, y, width, height = (float(v) for v in corner.group(2, 3, 4, 5))
    assert x + width <= 0.3 * 40 and y + height <= 25, "the corner mark must stay in the top-left corner"
    # nothing in the drawing reads as a card code to the secrecy detector (it would see cards not there)
    assert not CODE.search(html), CODE.search(html)


@pytest.mark.parametrize(("rank", "suit"), CARDS, ids=[f"{r}{s}" for r, s in CARDS])
def test_a_face_stays_under_the_byte_budget(rank: int, suit: str) -> None:
    html = render(rank, suit)
    size = len(html.encode())
    assert size < BYTE_BUDGET, f"{rank}{suit}: {size} bytes"
    # and still so with the hashed file name of production
    assert size + HASH_EXTRA * html.count("<use ") < BYTE_BUDGET


def test_the_face_markup_is_one_line() -> None:
    html = render(12, "o").rstrip("\n")
    assert "\n" not in html and "  " not in html


# -- the colours ------------------------------------------------------------------------------------


def suit_colours() -> dict[str, tuple[str, str]]:
    """{suit: (ink, body)} from the `.suit-X { color: #...; --f: #...; }` rules of cards.css."""
    css = CSS.read_text(encoding="utf-8")
    found = {}
    for suit in SUITS:
        rule = re.search(r"^\.suit-%s\s*\{([^}]*)\}" % suit, css, re.M)
        assert rule, f"no .suit-{suit} rule in cards.css"
        ink = re.search(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{6})\b", rule.group(1))
        body = re.search(r"--f:\s*(#[0-9a-fA-F]{6})\b", rule.group(1))
        assert ink and body, f".suit-{suit} needs `color: #rrggbb` and `--f: #rrggbb`"
        found[suit] = (ink.group(1), body.group(1))
    return found


def linear(hex_colour: str) -> list[float]:
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    return [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]


def luminance(hex_colour: str) -> float:
    r, g, b = linear(hex_colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str = "#ffffff") -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_contrast_helper_matches_known_values() -> None:
    assert contrast("#000000") == pytest.approx(21.0)
    assert contrast("#ffffff") == pytest.approx(1.0)
    assert contrast("#777777") == pytest.approx(4.48, abs=0.01)


def test_suit_colours_meet_wcag_aa_on_the_white_card() -> None:
    for suit, (ink, body) in suit_colours().items():
        assert contrast(ink) >= 4.5, f"{suit}: rank text {ink} is {contrast(ink):.2f}:1 (< 4.5)"
        # an emblem is seen by its outline (ink) and its body: the outline must always pass 3:1, and
        # the body too except for the light gold coin, which is drawn inside its dark outline
        assert contrast(ink) >= 3
        if suit != "o":
            assert contrast(body) >= 3, f"{suit}: emblem body {body} is {contrast(body):.2f}:1 (< 3)"


def test_the_card_background_is_white() -> None:
    css = CSS.read_text(encoding="utf-8")
    face = re.search(r"^\.card-face\s*\{([^}]*)\}", css, re.M)
    assert face and re.search(r"background:\s*(#fff\b|#ffffff\b|white\b)", face.group(1))


# Viénot, Brettel & Mollon (1999), in linear RGB.
DICHROMACY = {
    "protanopia": [[0.11238, 0.88762, 0.0], [0.11238, 0.88762, 0.0], [0.00401, -0.00401, 1.0]],
    "deuteranopia": [[0.29275, 0.70725, 0.0], [0.29275, 0.70725, 0.0], [-0.02234, 0.02234, 1.0]],
    "normal": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
}


def seen(hex_colour: str, matrix: list[list[float]]) -> list[float]:
    lin = linear(hex_colour)
    out = [min(max(sum(row[j] * lin[j] for j in range(3)), 0.0), 1.0) for row in matrix]
    return [255 * (12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055) for c in out]


@pytest.mark.parametrize("vision", sorted(DICHROMACY))
def test_suits_stay_apart_for_colour_blind_players(vision: str) -> None:
    colours = suit_colours()
    for which, index in (("ink", 0), ("body", 1)):
        for a, b in itertools.combinations(SUITS, 2):
            ca, cb = seen(colours[a][index], DICHROMACY[vision]), seen(colours[b][index], DICHROMACY[vision])
            distance = sum((x - y) ** 2 for x, y in zip(ca, cb)) ** 0.5
            assert distance >= 50, f"{vision}: the {which} colours of {a} and {b} look alike ({distance:.0f})"
