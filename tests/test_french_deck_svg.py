"""The French deck (``bazas``) drawn as SVG: the sprite static/img/francesa.svg, the French branch of the face
templates/games/_card.html and of the suit mark templates/games/_suit.html, and the four-colour suits of
static/css/cards.css.

Every one of the 52 French cards renders through the board's ``card_ctx`` with its suit spelt out, its index
text (2..10, J, Q, K, A) and ``<use>`` references to symbols that exist in the French sprite; its accessible
name is the engine's («as de picas»); the four suits differ in shape and in colour, with WCAG contrast on the
white card and apart for colour-blind players; and no class or symbol differs from a Spanish one only by case
(French «C» tréboles against Spanish «c» copas).  The Spanish cards and suit marks render exactly as they did
before the French deck came (the old face template is kept below, and the 40 faces are pinned by a digest).
"""

from __future__ import annotations

import hashlib
import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from django.template import Context, Template
from django.templatetags.static import static
from test_deck_svg import BYTE_BUDGET, CODE, FACE, HASH_EXTRA, USE, contrast, linear

from games.engine.cards import ALL_CARDS, FRENCH_CARDS, FRENCH_SUITS, SUITS, Card, Suit
from games.read import board

ROOT = Path(__file__).resolve().parent.parent
SPRITE = ROOT / "static" / "img" / "francesa.svg"
SPANISH_SPRITE = ROOT / "static" / "img" / "baraja.svg"
CSS = ROOT / "static" / "css" / "cards.css"
SVG_NS = "{http://www.w3.org/2000/svg}"

SUIT_IDS = {Suit.PICAS: "picas", Suit.CORAZONES: "corazones", Suit.DIAMANTES: "diamantes", Suit.TREBOLES: "treboles"}
INDEX = {11: "J", 12: "Q", 13: "K", 14: "A"}
FIGURES = ("J", "Q", "K")
FRENCH_FACE = re.compile(r'^<span class="card-face fr fr-([a-z]+)" aria-hidden="true" data-r="([0-9JQKA]+)">')
CORNER = re.compile(
    r'<use href="[^"#]*#([^"]+)" class="ix" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"/>'
)

#: templates/games/_card.html as it was before the French deck: a Spanish card must still come out of it.
OLD_SPANISH_CARD = (
    "{% load static %}{% static 'img/baraja.svg' as s %}"
    '<span class="card-face suit-{{ card.suit }}" aria-hidden="true" data-r="{{ card.rank }}">'
    '<svg viewBox="0 0 40 60">{% if card.rank > 9 %}'
    '<use href="{{ s }}#fig-{{ card.rank }}" x="12" y="12" width="24" height="33"/>{% else %}'
    '<use href="{{ s }}#suit-{{ card.suit }}" x="12" y="14" width="24" height="31"/>{% endif %}'
    '<use href="{{ s }}#suit-{{ card.suit }}" class="ix" x="3" y="13.5" width="8" height="10"/></svg></span>'
)
OLD_SPANISH_MARK = (
    '{% load static %}<svg class="suit-mark suit-{{ suit }}" viewBox="0 0 100 110" aria-hidden="true" '
    'focusable="false"><use href="{% static \'img/baraja.svg\' %}#suit-{{ suit }}" width="100" height="110"/></svg>'
)
#: sha256 of the 40 Spanish faces (``card_ctx(card, "es")["face"]``, by code, one a line) and of the four
#: Spanish suit marks, taken from the code before the French deck was drawn.
SPANISH_FACES_SHA256 = "2566aa8718cf90fda4eccb2758c0ca2cba6f3a02e888fbf3155ab70324e3e321"
SPANISH_MARKS_SHA256 = "2a4796a04797192a9aeac876e606b307f27db4f4d71a19f4320439f744eca4c7"


def sprite_symbols(path: Path = SPRITE) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    return {el.get("id", ""): el for el in root.iter(f"{SVG_NS}symbol")}


def face(card: Card, language: str = "es") -> str:
    return str(board.card_ctx(card, language)["face"])


# -- the sprite -------------------------------------------------------------------------------------


def test_sprite_is_well_formed_with_the_four_suits_and_three_figures() -> None:
    root = ET.parse(SPRITE).getroot()  # raises on malformed XML
    assert root.tag == f"{SVG_NS}svg"
    symbols = sprite_symbols()
    expected = set(SUIT_IDS.values()) | {f"fig-{f}" for f in FIGURES}
    assert expected == set(symbols), f"missing {expected - set(symbols)}, unexpected {set(symbols) - expected}"
    for name, symbol in symbols.items():
        numbers = [float(n) for n in (symbol.get("viewBox") or "").replace(",", " ").split()]
        assert len(numbers) == 4 and numbers[2] > 0 and numbers[3] > 0, f"{name}: bad viewBox"
        assert len(symbol), f"{name} is empty"


def test_sprite_takes_its_colours_from_css_and_stays_small() -> None:
    text = SPRITE.read_text(encoding="utf-8")
    assert len(text.encode()) < 6000, "the sprite should stay a few KB"
    assert "currentColor" in text and "var(--f" in text
    colours = set(re.findall(r"#[0-9a-fA-F]{3,6}\b", text)) - {"#fff", "#ffffff"}
    assert not colours, f"colours fixed in the sprite: {colours}"


def test_the_four_suits_have_four_different_shapes() -> None:
    symbols = sprite_symbols()
    drawings = {suit: ET.tostring(symbols[suit]).replace(f'id="{suit}"'.encode(), b"") for suit in SUIT_IDS.values()}
    assert len(set(drawings.values())) == 4
    # each pip is solid in its suit's ink, so the shape is what a player reads, with or without colour
    for suit in SUIT_IDS.values():
        assert any(el.get("fill") == "currentColor" for el in symbols[suit].iter()), suit


def test_no_class_or_symbol_differs_from_a_spanish_one_only_by_case() -> None:
    spanish = set(sprite_symbols(SPANISH_SPRITE))
    french = set(sprite_symbols())
    tokens = {"es": set(spanish), "fr": set(french)}
    for key, cards in (("es", ALL_CARDS), ("fr", FRENCH_CARDS)):
        for card in cards:
            html = face(card)
            tokens[key] |= set(re.search(r'class="([^"]+)"', html).group(1).split())  # type: ignore[union-attr]
    for key, suits in (("es", SUITS), ("fr", FRENCH_SUITS)):
        for suit in suits:
            tokens[key] |= set(re.search(r'class="([^"]+)"', board.suit_mark(suit)).group(1).split())  # type: ignore[union-attr]
    for a, b in itertools.product(tokens["es"], tokens["fr"]):
        assert a == b or a.lower() != b.lower(), f"{a!r} and {b!r} differ only by case"


# -- the faces --------------------------------------------------------------------------------------


@pytest.mark.parametrize("card", FRENCH_CARDS, ids=str)
def test_every_french_card_renders_with_its_suit_index_and_symbols(card: Card) -> None:
    html = face(card)
    suit = SUIT_IDS[card.suit]
    text = INDEX.get(card.rank, str(card.rank))
    found = FRENCH_FACE.match(html)
    assert found and found.groups() == (suit, text), html[:120]
    assert 'viewBox="0 0 40 60"' in html and "\n" not in html

    symbols = sprite_symbols()
    uses = USE.findall(html)
    for path, fragment in uses:
        assert path == static("img/francesa.svg"), "a French card draws from the French sprite only"
        assert fragment in symbols, f"#{fragment} is not in francesa.svg"
    fragments = [fragment for _, fragment in uses]
    if text in FIGURES:
        assert fragments == [f"fig-{text}", suit], "a figure, and the suit in the corner"
    else:
        assert fragments == [suit, suit], "the suit in the middle, and small in the corner"
    corner = CORNER.search(html)
    assert corner and corner.group(1) == suit, "the suit mark of the corner index is missing"
    x, y, width, height = (float(v) for v in corner.group(2, 3, 4, 5))
    assert x + width <= 0.3 * 40 and y + height <= 25, "the corner mark must stay in the top-left corner"
    # the secrecy detector of the Spanish cards must not see a Spanish card in it
    assert not CODE.search(html) and not FACE.search(html)


def test_the_ace_shows_a_large_suit_mark() -> None:
    def middle(html: str) -> float:
        sizes = re.findall(r'<use href="[^"]*" x="[\d.]+" y="[\d.]+" width="([\d.]+)"', html)
        return float(sizes[0])

    for suit in FRENCH_SUITS:
        ace, ten = face(Card(14, suit)), face(Card(10, suit))
        assert middle(ace) > middle(ten)


@pytest.mark.parametrize("card", FRENCH_CARDS, ids=str)
def test_a_french_face_stays_under_the_byte_budget(card: Card) -> None:
    html = face(card)
    assert len(html.encode()) + HASH_EXTRA * html.count("<use ") < BYTE_BUDGET


@pytest.mark.parametrize(
    ("code", "es", "en"),
    [
        ("AS", "as de picas", "ace of spades"),
        ("QH", "reina de corazones", "queen of hearts"),
        ("JC", "jota de tréboles", "jack of clubs"),
        ("10D", "10 de diamantes", "10 of diamonds"),
        ("KS", "rey de picas", "king of spades"),
        ("2H", "2 de corazones", "2 of hearts"),
    ],
)
def test_accessible_names_and_index(code: str, es: str, en: str) -> None:
    card = Card.parse(code)
    ctx_es, ctx_en = board.card_ctx(card, "es"), board.card_ctx(card, "en")
    assert (ctx_es["name"], ctx_en["name"]) == (es, en)
    assert ctx_es["code"] == code and ctx_es["rank"] == code[:-1]
    assert f'data-r="{code[:-1]}"' in ctx_es["face"]
    # the picture is decorative: the name is the button's label, never inside the face
    assert es not in ctx_es["face"] and 'aria-hidden="true"' in ctx_es["face"]


def test_french_suit_marks_draw_from_the_french_sprite() -> None:
    symbols = sprite_symbols()
    for suit in FRENCH_SUITS:
        mark = str(board.suit_mark(suit))
        ident = SUIT_IDS[suit]
        assert mark.startswith(f'<svg class="suit-mark fr-{ident}" viewBox="0 0 100 110" aria-hidden="true"')
        uses = USE.findall(mark)
        assert uses == [(static("img/francesa.svg"), ident)] and ident in symbols


# -- the Spanish deck is untouched ------------------------------------------------------------------


@pytest.mark.parametrize("language", ["es", "en"])
def test_spanish_faces_are_as_before(language: str) -> None:
    old = Template(OLD_SPANISH_CARD)
    for card in ALL_CARDS:
        ctx = board.card_ctx(card, language)
        assert "fr" not in ctx and ctx["rank"] == card.rank
        assert ctx["face"] == old.render(Context({"card": ctx})).strip(), str(card)
    faces = "\n".join(str(board.card_ctx(c, "es")["face"]) for c in sorted(ALL_CARDS, key=str))
    assert hashlib.sha256(faces.encode()).hexdigest() == SPANISH_FACES_SHA256


def test_spanish_suit_marks_are_as_before() -> None:
    old = Template(OLD_SPANISH_MARK)
    marks = []
    for suit in sorted(SUITS, key=lambda s: s.value):
        mark = str(board.suit_mark(suit))
        assert mark == old.render(Context({"suit": suit.value})).strip()
        marks.append(mark)
    assert hashlib.sha256("\n".join(marks).encode()).hexdigest() == SPANISH_MARKS_SHA256


# -- the colours ------------------------------------------------------------------------------------


def suit_colours() -> dict[str, tuple[str, str]]:
    """{suit: (ink, body)} from the `.fr-X { color: #...; --f: #...; }` rules of cards.css."""
    css = CSS.read_text(encoding="utf-8")
    found = {}
    for suit in SUIT_IDS.values():
        rule = re.search(r"^\.fr-%s\s*\{([^}]*)\}" % suit, css, re.M)
        assert rule, f"no .fr-{suit} rule in cards.css"
        ink = re.search(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{6})\b", rule.group(1))
        body = re.search(r"--f:\s*(#[0-9a-fA-F]{6})\b", rule.group(1))
        assert ink and body, f".fr-{suit} needs `color: #rrggbb` and `--f: #rrggbb`"
        found[suit] = (ink.group(1), body.group(1))
    return found


def test_french_suit_colours_meet_wcag_on_the_white_card() -> None:
    for suit, (ink, body) in suit_colours().items():
        # the ink draws the index text (AA text: 4.5) and the pips; the body fills the figures' clothes
        assert contrast(ink) >= 4.5, f"{suit}: ink {ink} is {contrast(ink):.2f}:1 (< 4.5)"
        assert contrast(body) >= 3, f"{suit}: body {body} is {contrast(body):.2f}:1 (< 3)"


def test_a_four_colour_deck() -> None:
    """Picas black, corazones red, diamantes blue, tréboles green: the dominant channel says so."""
    colours = {suit: linear(ink) for suit, (ink, _) in suit_colours().items()}
    assert max(colours["picas"]) < 0.02, "picas: near black"
    for suit, channel in (("corazones", 0), ("treboles", 1), ("diamantes", 2)):
        rgb = colours[suit]
        assert rgb[channel] == max(rgb) and rgb[channel] > 2 * sorted(rgb)[1], f"{suit}: {rgb}"


# Viénot, Brettel & Mollon (1999) for protanopia and deuteranopia, Machado, Oliveira & Fernandes (2009) at
# full severity for tritanopia, in linear RGB.
VISION = {
    "protanopia": [[0.11238, 0.88762, 0.0], [0.11238, 0.88762, 0.0], [0.00401, -0.00401, 1.0]],
    "deuteranopia": [[0.29275, 0.70725, 0.0], [0.29275, 0.70725, 0.0], [-0.02234, 0.02234, 1.0]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.3039]],
    "normal": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
}


def seen(hex_colour: str, matrix: list[list[float]]) -> list[float]:
    lin = linear(hex_colour)
    out = [min(max(sum(row[j] * lin[j] for j in range(3)), 0.0), 1.0) for row in matrix]
    return [255 * (12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055) for c in out]


@pytest.mark.parametrize("vision", sorted(VISION))
def test_french_suits_stay_apart_for_colour_blind_players(vision: str) -> None:
    colours = suit_colours()
    for which, index, least in (("ink", 0, 60), ("body", 1, 50)):
        for a, b in itertools.combinations(SUIT_IDS.values(), 2):
            ca, cb = seen(colours[a][index], VISION[vision]), seen(colours[b][index], VISION[vision])
            distance = sum((x - y) ** 2 for x, y in zip(ca, cb)) ** 0.5
            assert distance >= least, f"{vision}: the {which} colours of {a} and {b} look alike ({distance:.0f})"


def test_french_cards_have_no_frame_of_pintas() -> None:
    css = CSS.read_text(encoding="utf-8")
    assert re.search(r"^\.card-face\.fr svg\s*\{\s*background:\s*none;", css, re.M)
