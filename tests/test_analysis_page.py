"""The analysis as the replay page shows it, in plain words: what it is in one sentence and each player's
figures first; the method (sampled deals, the 95 % margin, the accuracy's formula) only behind «Cómo se
calcula»; the long lists (the marked mistakes, player by player, and round by round) behind disclosures; the
chart drawn for any width (its labels in the page's pixels).  In Spanish and in English.  The layout on a
phone and a desktop: ``tests/browser/test_analysis_layout.py``."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import translation
from test_analysis_site import finished_game, quick  # noqa: F401 (the fixture: short games, few worlds)

from games.engine.analysis import RoundAnalysis
from games.models import Analysis
from games.read.analysis import round_ticks, score_chart
from games.study import analyses, worker

pytestmark = pytest.mark.django_db


def analysed_page(language: str) -> tuple[str, Analysis]:
    table, ana = finished_game("ana")
    analyses.do_request(table.pk, ana)
    assert worker.work() == 1
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(ana)
    response = client.get(f"/mesa/{table.pk}/repeticion/")
    assert response.status_code == 200
    return response.content.decode(), Analysis.objects.get(table=table)


def section(page: str) -> str:
    return page[page.index('<section id="analisis"') : page.index("</section>", page.index('<section id="analisis"'))]


def _closing(html: str, start: int) -> int:
    """Where the <details> opened at ``start`` ends (after its </details>), nested ones counted."""
    depth, at = 0, start
    for tag in re.finditer(r"<details\b|</details>", html[start:]):
        depth += 1 if tag.group(0) == "<details" else -1
        if depth == 0:
            return start + tag.end()
        at = tag.end()
    raise AssertionError(f"unclosed <details> at {start}: {html[start : start + at + 200]}")


def details(html: str, css_class: str) -> str:
    start = html.index(f'<details class="analysis-more {css_class}"')
    return html[start : _closing(html, start)]


def outside_details(html: str) -> str:
    while (start := html.find('<details class="analysis-more')) >= 0:
        html = html[:start] + html[_closing(html, start) :]
    return html


def test_the_analysis_in_plain_words_and_its_method_behind_a_disclosure() -> None:
    page, analysis = analysed_page("es")
    assert "css/analysis.css" in page
    shown = section(page)
    plain = outside_details(shown)
    assert "Un bot ha repasado cada decisión de la partida" in plain
    assert "Por jugador" in plain and "Pierde de media" in plain and "<svg" in plain
    # no statistics in the open: the formula, the sample and the margin are in «Cómo se calcula»
    for jargon in ("e^(", "al 95", "repartos posibles", "margen", "muestra", "esperados"):
        assert jargon not in plain, jargon
    method = details(shown, "analysis-method")
    assert "<summary>Cómo se calcula</summary>" in method
    assert f"sortea {analysis.worlds} repartos posibles" in method
    assert "al 95 %" in method and "100 × e^(−pérdida/10,0)" in method and "61 % si se pierden 5" in method
    # the long lists shut at first, the mistakes player by player and counted
    mistakes = details(shown, "analysis-mistakes")
    count = sum(1 for r in analysis.rounds for d in RoundAnalysis.from_json(r).decisions if d.mark)
    assert f"Errores marcados ({count})" in mistakes
    assert mistakes.count("<li data-step=") == count
    assert "Ronda a ronda" in details(shown, "analysis-by-round")
    assert not re.search(r'<details class="analysis-more[^"]*" open', shown) or count == 0


def test_the_same_in_english() -> None:
    page, analysis = analysed_page("en")
    shown = section(page)
    plain = outside_details(shown)
    assert "A bot has gone over every decision of the game" in plain
    assert "By player" in plain
    assert "Loses on average" in plain and "The decisions that cost the most are marked:" in plain
    method = details(shown, "analysis-method")
    assert "<summary>How it is worked out</summary>" in method
    assert f"draws {analysis.worlds} possible deals" in method and "100 % if nothing is lost" in method
    assert "Marked mistakes (" in details(shown, "analysis-mistakes")
    assert "Round by round" in details(shown, "analysis-by-round")
    for spanish in ("Cómo se calcula", "Pierde de media", "Errores marcados", "Desliza la tabla"):
        assert spanish not in shown, spanish


def test_the_chart_is_drawn_for_any_width() -> None:
    totals = [[10, -5, 0], [25, -10, 12], [40, 5, 12]]
    with translation.override("es"):
        chart = score_chart(["ana", "bea", "carla"], totals)
    assert chart["plot"] == 1000 and len(chart["lines"]) == 3
    # the lines in the plot's square, the ticks in percents of it
    xs_ys = [tuple(map(float, p.split(","))) for p in chart["lines"][0]["points"].split()]
    assert xs_ys[0][0] == 0 and xs_ys[-1][0] == 1000
    assert all(0 <= x <= 1000 and 0 <= y <= 1000 for x, y in xs_ys)
    assert [t["x"] for t in chart["x_ticks"]] == ["33.33", "66.67", "100.00"]
    assert all(0 <= float(t["y"]) <= 100 for t in chart["y_ticks"])
    assert chart["description"] == "ana termina con 40; bea termina con 5; carla termina con 12"


@pytest.mark.parametrize(
    ("rounds", "ticks"),
    [
        (2, [1, 2]),
        (8, [1, 2, 3, 4, 5, 6, 7, 8]),
        (19, [5, 10, 15, 19]),
        (21, [5, 10, 15, 21]),
        (37, [5, 10, 15, 20, 25, 30, 37]),
        (0, []),
    ],
)
def test_the_chart_names_few_enough_rounds_for_a_phone(rounds: int, ticks: list[int]) -> None:
    assert round_ticks(rounds) == ticks
