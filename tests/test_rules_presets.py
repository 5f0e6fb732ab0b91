"""The house rules' pages, ``/reglas/<preset>/`` (shared/VARIANTS.md): each preset explained in Spanish and in
English, its numbers from the engine (``games.engine.presets``), never typed into the page.

Each page answers in both languages with every table size's biggest hand, rounds and cards taken out as
``Rules.of(preset)`` counts them (the indias page: 37 rounds at 4 players; se dobla: each schedule's rounds;
bazas: 12 rounds at 4), its examples worked from the engine's points, its sections under anchors the table
links to (``#subastados``), and no Spanish left on the English page.  Clásica's page is ``/reglas/``; an
unknown preset is a 404; ``/reglas/`` and every preset page link to the others.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from test_table_english import spanish_in

from games.engine.cards import Suit
from games.engine.presets import PLAYERS, SCHEDULES, Rules
from games.engine.rules import points

PAGES = ["indias", "se-dobla", "bazas"]
SECTIONS = {
    "indias": ["baraja", "rondas", "indias", "subastados", "oros", "baza", "puntuacion", "desempate"],
    "se-dobla": ["baraja", "rondas", "frente", "muestra", "baza", "se-dobla", "puntuacion", "desempate"],
    "bazas": ["baraja", "rondas", "triunfo", "baza", "puntuacion"],
}
NAMES = {
    "es": {"indias": "Indias, subastados y oros", "se-dobla": "Se dobla", "bazas": "Juego de las Bazas"},
    "en": {"indias": "Indias, auctions and coins", "se-dobla": "Se dobla (doubling)", "bazas": "Game of Tricks"},
}

pytestmark = pytest.mark.django_db


def get(path: str, language: str) -> str:
    response = Client(headers={"accept-language": language}).get(path)
    assert response.status_code == 200, (path, response.status_code)
    html = response.content.decode()
    assert f'<html lang="{language}">' in html
    return html


def rows(html: str) -> list[list[str]]:
    """The rules table's body, cell by cell (the row's header first)."""
    body = html.split('<table class="rules-table">')[1].split("<tbody>")[1].split("</tbody>")[0]
    return [re.findall(r"<t[hd][^>]*>([^<]*)</t[hd]>", row) for row in re.findall(r"<tr>(.*?)</tr>", body)]


def text(html: str) -> str:
    """The page's article as plain text, one space between words."""
    article = html.split("<article", 1)[1].split("</article>")[0]
    return " ".join(re.sub(r"<[^>]+>", " ", article.split(">", 1)[1]).split())


def card_names(cards: tuple, language: str) -> list[str]:
    return [c.name_es if language == "es" else c.name_en for c in cards]


def test_the_url_is_named_and_takes_the_preset() -> None:
    assert reverse("games:rules_preset", kwargs={"preset": "se-dobla"}) == "/reglas/se-dobla/"
    assert reverse("games:rules_preset", args=["indias"]) == "/reglas/indias/"


@pytest.mark.parametrize("language", ["es", "en"])
@pytest.mark.parametrize("preset", PAGES)
def test_each_page_answers_with_its_sections_and_name(preset: str, language: str) -> None:
    html = get(f"/reglas/{preset}/", language)
    assert f'data-preset="{preset}"' in html
    assert NAMES[language][preset] in html.split("<h1>")[1].split("</h1>")[0]
    for anchor in SECTIONS[preset]:  # the anchors are the same in every language (the table links to them)
        assert f'id="{anchor}"' in html, anchor
    low, high = PLAYERS[preset]
    assert (f"De {low} a {high} jugadores" if language == "es" else f"{low} to {high} players") in text(html)


@pytest.mark.parametrize("language", ["es", "en"])
def test_the_indias_page_counts_from_the_engine(language: str) -> None:
    rules = Rules.of("indias")
    html = get("/reglas/indias/", language)
    expected = [
        [
            str(players),
            str(rules.max_cards(players)),
            str(len(rules.schedule(players))),
            ", ".join(card_names(rules.removed(players), language)) or ("ninguna" if language == "es" else "none"),
        ]
        for players in range(PLAYERS["indias"][0], PLAYERS["indias"][1] + 1)
    ]
    assert rows(html) == expected
    assert ["4", "10", "37", "ninguna" if language == "es" else "none"] in rows(html)  # VARIANTS.md's example
    page = text(html)
    if language == "es":
        assert "Ejemplo, a 4 jugadores: 37 rondas." in page
        assert "siguen 4 de indias (1 carta), 4 de subastados y 4 de oros (10 cartas)" in page
        assert "1×4, 2, 3, 4, 5, 6, 7, 8, 9, 10×4, 9, 8, 7, 6, 5, 4, 3, 2, 1 cartas" in page
    else:
        assert "For example, with 4 players: 37 rounds." in page
        assert "4 indias rounds (1 card), 4 auctioned rounds and 4 coins rounds (10 cards)" in page
    # the multipliers and the worked score come from the engine
    copas, oros = rules.multiplier(4, None, Suit.COPAS), rules.multiplier(4, None, Suit.OROS)
    assert (copas, oros) == (2, 3)
    assert f"{points(2, 2)} × {oros} = {points(2, 2) * oros}" in page
    assert f"×{copas}" in page and f"×{oros}" in page
    assert f" {rules.tie_breaks}," in page.split("Desempate" if language == "es" else "Tie-break")[-1]
    # the removal order, as far as any table size needs it
    assert ", ".join(card_names(rules.removed(7), language)) in page


@pytest.mark.parametrize("language", ["es", "en"])
def test_the_se_dobla_page_counts_every_schedule_from_the_engine(language: str) -> None:
    html = get("/reglas/se-dobla/", language)
    low, high = PLAYERS["se-dobla"]
    expected = []
    for players in range(low, high + 1):
        rules = Rules.of("se-dobla")
        left = 40 - players * rules.max_cards(players)
        counts = [str(len(Rules.of("se-dobla", schedule=s).schedule(players))) for s in SCHEDULES]
        expected.append([str(players), str(rules.max_cards(players)), str(left), *counts])
    assert rows(html) == expected
    at_four = {s: len(Rules.of("se-dobla", schedule=s).schedule(4)) for s in SCHEDULES}
    assert at_four == {"sencillas": 22, "dobles": 26, "una-mas": 20, "escalera": 40}  # VARIANTS.md
    page = text(html)
    word = "rondas" if language == "es" else "rounds"
    for schedule, count in at_four.items():
        item = html.split(f'<li id="{schedule}">')[1].split("</li>")[0]
        assert f"{count} {word}:" in " ".join(re.sub(r"<[^>]+>", " ", item).split()), schedule
    # se dobla from 4 cards, made or missed, worked with the engine's points
    assert ("En una ronda de 4 cartas o más" if language == "es" else "In a round of 4 cards or more") in page
    assert f"{points(5, 5)} × 2 = {2 * points(5, 5)}" in page and f"{points(3, 5)} × 2 = {2 * points(3, 5)}" in page
    assert 'href="/reglas/indias/#indias"' in html  # «en la frente» plays the 1-card rounds as indias


@pytest.mark.parametrize("language", ["es", "en"])
def test_the_bazas_page_counts_from_the_engine_and_shows_the_french_deck(language: str) -> None:
    rules = Rules.of("bazas")
    html = get("/reglas/bazas/", language)
    low, high = PLAYERS["bazas"]
    expected = [[str(p), str(len(rules.schedule(p))), str(52 - p * rules.max_cards(p))] for p in range(low, high + 1)]
    assert rows(html) == expected and ["4", "12", "24"] in expected
    page = text(html)
    assert (
        "Ejemplo, a 4 jugadores: 12 rondas, de 3, 4, 5, 6, 7×4, 6, 5, 4, 3 cartas."
        if language == "es"
        else "For example, with 4 players: 12 rounds, of 3, 4, 5, 6, 7×4, 6, 5, 4, 3 cards."
    ) in page
    assert f"{high * rules.max_cards(high)}" in page and "52" in page
    # the order of a suit, drawn with the French deck from the ace down
    cards = html.split('<p class="rules-cards" aria-hidden="true">')[1].split("</p>")[0]
    assert re.findall(r'class="card-face fr fr-corazones" aria-hidden="true" data-r="(\w+)"', cards) == [
        "A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2"
    ]  # fmt: skip
    assert "/static/img/francesa.svg#fig-K" in cards


@pytest.mark.parametrize("preset", PAGES)
def test_no_spanish_on_the_english_pages(preset: str) -> None:
    html = get(f"/reglas/{preset}/", "en")
    assert spanish_in(html) == []


@pytest.mark.parametrize("preset", PAGES)
def test_the_spanish_pages_use_the_games_words(preset: str) -> None:
    page = text(get(f"/reglas/{preset}/", "es"))
    for word in ("baza", "triunfo", "pedido"):
        assert word in page, word
    if preset == "indias":
        assert all(w in page for w in ("indias", "subastados", "subasta", "oros", "desempate", "a ciegas"))
    if preset == "se-dobla":
        assert all(w in page for w in ("muestra", "se apunta esa ronda por dos", "desempate", "En la frente"))


@pytest.mark.parametrize("path", ["/reglas/mus/", "/reglas/clasica2/", "/reglas/se_dobla/", "/reglas/INDIAS/"])
def test_an_unknown_preset_is_not_found(path: str) -> None:
    assert Client().get(path).status_code == 404


def test_clasica_is_the_rules_page() -> None:
    response = Client().get("/reglas/clasica/")
    assert response.status_code == 302 and response["Location"] == "/reglas/"


@pytest.mark.parametrize("language", ["es", "en"])
def test_the_rules_page_links_to_every_preset_page(language: str) -> None:
    html = get("/reglas/", language)
    for preset in PAGES:
        assert f'<a href="/reglas/{preset}/">{NAMES[language][preset]}</a>' in html
    # and each preset page to Clásica's and to the other two
    for preset in PAGES:
        page = get(f"/reglas/{preset}/", language)
        others = page.split('<p class="rules-others">')[1].split("</p>")[0]
        assert 'href="/reglas/"' in others
        assert {p for p in PAGES if p != preset} == set(re.findall(r'href="/reglas/([a-z-]+)/"', others))
