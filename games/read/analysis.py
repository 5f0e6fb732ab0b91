"""A finished game's analysis as its replay page shows it (``games.models.Analysis``, worked out by
``games.study``): the marks and their thresholds, each seat's accuracy and points lost, the «par» bids and
the losses round by round, the list of mistakes (each a step of the replay; also player by player), the chart
of the scores, and,
for the replay's script, every decision by its step.

The analysis is shown with the replay: to whoever may see that (the game is over and every hand is in the
replay already), so it reveals no card the replay does not.  Each decision was weighed from its own seat's
view at the time, which is what the page says it is: a sample, with its margin.
"""

from __future__ import annotations

import math
from typing import Any

from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from games.engine import Card, Suit
from games.engine.analysis import ACCURACY_SCALE, MARKS, RoundAnalysis
from games.models import Analysis
from games.read.board import card_name, suit_name

#: The marks as the page names them, from the mildest.
MARK_LABELS = {
    "imprecision": gettext_lazy("imprecisión"),
    "error": gettext_lazy("error"),
    "blunder": gettext_lazy("error grave"),
}
KIND_LABELS = {
    "blind_bid": gettext_lazy("pedido a ciegas"),
    "bid": gettext_lazy("pedido"),
    "trump": gettext_lazy("triunfo"),
    "play": gettext_lazy("carta"),
}
#: Line styles of the chart, one per seat (a dash pattern as well as a colour: told apart without colour).
CHART_DASHES = ("", "6 3", "2 3", "8 3 2 3", "1 2", "10 4", "4 2 1 2", "12 3 3 3")
#: The chart's lines are drawn in a square of this many units, stretched to its plot area.
PLOT = 1000
#: The most rounds the chart's axis names.
MAX_X_TICKS = 8


def points_text(value: float) -> str:
    return number_format(round(value, 1), decimal_pos=1)


def _loss_text(value: float) -> str:
    """Points lost as the round table writes them: «0» when nothing (to a tenth) was lost."""
    return "0" if value < 0.05 else "−" + points_text(value)


def action_label(kind: str, text: str, language: str) -> str:
    """A decision's option as a player reads it: «2», «oros», «as de oros»."""
    if kind == "play":
        return card_name(Card.parse(text), language)
    if kind == "trump":
        return suit_name(Suit.parse(text), language)
    return text


def thresholds() -> list[dict[str, Any]]:
    """The marks and the points lost from which each is given, from the mildest (as the page writes them)."""
    return [
        {"key": key, "label": str(MARK_LABELS[key]), "points": points_text(limit)} for key, limit in reversed(MARKS)
    ]


def step_key(decision: dict[str, Any]) -> str:
    """The replay script's step for a decision: round index from 0, kind, index (a blind bid: the deal)."""
    if decision["kind"] == "blind_bid":
        return f"{decision['round'] - 1}:deal:0"
    return f"{decision['round'] - 1}:{decision['kind']}:{decision['index']}"


def analysis_context(analysis: Analysis, names: list[str], totals: list[list[int]], language: str) -> dict[str, Any]:
    """The page's analysis section and the script's data, for a finished analysis.  ``totals``: each round's
    running totals by seat (the chart)."""
    rounds = [RoundAnalysis.from_json(r) for r in analysis.rounds]
    summary = analysis.summary or {"seats": []}
    by_seat = {s["seat"]: s for s in summary.get("seats", [])}
    seat_rows = []
    for position, name in enumerate(names):
        figures = by_seat.get(position, {})
        accuracy = figures.get("accuracy")
        average = figures.get("average_loss")
        marks = figures.get("marks", {})
        seat_rows.append(
            {
                "position": position,
                "name": name,
                "decisions": figures.get("decisions", 0),
                "accuracy": None if accuracy is None else number_format(round(accuracy), decimal_pos=0),
                "average_loss": None if average is None else number_format(round(average, 2), decimal_pos=2),
                "loss": points_text(figures.get("loss", 0.0)),
                "marks": [
                    {"key": key, "label": str(MARK_LABELS[key]), "count": marks.get(key, 0)} for key, _limit in MARKS
                ],
            }
        )
    round_rows = []
    decisions: dict[str, dict[str, Any]] = {}
    mistakes: list[dict[str, Any]] = []
    for ra in rounds:
        cells = []
        for position in range(len(names)):
            par = ra.par_bids[position] if position < len(ra.par_bids) else None
            cells.append(
                {
                    "par": par,
                    "loss": _loss_text(ra.loss[position]) if position < len(ra.loss) else "",
                    "lost": position < len(ra.loss) and ra.loss[position] >= 0.05,
                    "resting": par is None,
                }
            )
        round_rows.append({"number": ra.number, "cells": cells})
        for d in ra.decisions:
            data = d.as_json()
            played = action_label(d.kind, d.played, language)
            best = action_label(d.kind, d.best, language)
            entry = {
                "round": d.round,
                "kind": d.kind,
                "index": d.index,
                "seat": d.seat,
                "name": names[d.seat],
                "kind_label": str(KIND_LABELS[d.kind]),
                "played": played,
                "best": best,
                "expected_played": points_text(d.expected_played),
                "expected_best": points_text(d.expected_best),
                "loss": points_text(d.loss),
                "margin": points_text(d.margin),
                "forced": d.forced,
                "mark": d.mark,
                "mark_label": str(MARK_LABELS[d.mark]) if d.mark else "",
                "is_best": d.played == d.best,
                "options": [
                    {"label": action_label(d.kind, text, language), "expected": points_text(value)}
                    for text, value in sorted(data["options"], key=lambda o: -o[1])
                ],
            }
            key = step_key(data)
            entry["step"] = key
            if key not in decisions or d.kind != "blind_bid":
                decisions[key] = entry
            if d.mark:
                mistakes.append(entry)
    return {
        "state": "done",
        "thresholds": thresholds(),
        "accuracy_scale": points_text(ACCURACY_SCALE),
        # the accuracy of a decision that lost 5 and 10 points, for the method's note («Cómo se calcula»)
        "accuracy_at": {key: round(100 * math.exp(-loss / ACCURACY_SCALE)) for key, loss in (("five", 5), ("ten", 10))},
        "worlds": analysis.worlds,
        "seed": analysis.seed,
        "seats": seat_rows,
        "rounds": round_rows,
        "mistakes": mistakes,
        # the same, player by player (those with any), each in the order of the game
        "mistakes_by_seat": [
            {"position": position, "name": name, "mistakes": [m for m in mistakes if m["seat"] == position]}
            for position, name in enumerate(names)
            if any(m["seat"] == position for m in mistakes)
        ],
        "chart": score_chart(names, totals),
        "script": {
            "decisions": decisions,
            "marks": [m["step"] for m in mistakes],
            "strings": _script_strings(),
        },
    }


def _script_strings() -> dict[str, str]:
    return {
        "decision": _("%(name)s · %(kind_label)s: %(played)s (%(expected_played)s puntos esperados)."),
        "best": _("Lo mejor según el análisis: %(best)s (%(expected_best)s)."),
        "is_best": _("Es lo que el análisis prefiere."),
        "loss": _("Pierde %(loss)s ± %(margin)s puntos esperados: %(mark)s."),
        "small_loss": _("Pierde %(loss)s ± %(margin)s puntos esperados."),
        "forced": _("Jugada obligada: no había elección."),
        "none": _("Sin decisión que analizar en este paso."),
        "no_more": _("No hay más errores en esa dirección."),
    }


def score_chart(names: list[str], totals: list[list[int]]) -> dict[str, Any]:
    """Each player's total after each round as lines in an SVG (drawn on the server), for any width: the
    lines in a box of ``PLOT`` units a side stretched to the chart's plot area (their strokes keep their
    width: ``vector-effect``), the axes' ticks and grid in percents of that area, so that their labels are
    written in the page's own pixels (12 px on a phone as on a desktop: ``static/css/analysis.css``), never
    scaled down with the drawing.  A text description for those who do not see it."""
    rounds = len(totals)
    low = min([0, *(t for row in totals for t in row)])
    high = max([0, *(t for row in totals for t in row)])
    if high == low:
        high = low + 10

    def x(i: int) -> float:  # percent of the plot's width
        return 100 * i / rounds if rounds else 0.0

    def y(value: float) -> float:  # percent of the plot's height, from its top
        return 100 * (high - value) / (high - low)

    lines = []
    for seat, name in enumerate(names):
        points = [(x(0), y(0))] + [(x(i + 1), y(row[seat])) for i, row in enumerate(totals)]
        lines.append(
            {
                "seat": seat,
                "name": name,
                "points": " ".join(f"{px * PLOT / 100:.1f},{py * PLOT / 100:.1f}" for px, py in points),
                "dash": CHART_DASHES[seat % len(CHART_DASHES)],
                "final": totals[-1][seat] if totals else 0,
            }
        )
    step = _nice_step((high - low) / 5)
    first = int(low // step) * step
    y_ticks = [
        {"value": v, "y": f"{y(v):.2f}"} for v in range(int(first), int(high) + 1, int(step)) if low <= v <= high
    ]
    return {
        "plot": PLOT,
        "zero_y": f"{y(0):.2f}",
        "lines": lines,
        "y_ticks": y_ticks,
        "x_ticks": [{"value": i, "x": f"{x(i):.2f}"} for i in round_ticks(rounds)],
        "description": "; ".join(
            _("%(name)s termina con %(total)s") % {"name": line["name"], "total": line["final"]} for line in lines
        ),
    }


def round_ticks(rounds: int) -> list[int]:
    """The rounds the chart's axis names: every 1, 2, 5, 10… rounds, no more than ``MAX_X_TICKS`` of them (a
    phone's width holds that many at 12 px), and the last round unless it would crowd the one before."""
    every = next((s for s in (1, 2, 5, 10, 20, 50) if rounds / s <= MAX_X_TICKS), 100)
    ticks = list(range(every, rounds + 1, every))
    if rounds and (not ticks or ticks[-1] != rounds):
        if ticks and rounds - ticks[-1] < every / 2:
            ticks.pop()
        ticks.append(rounds)
    return ticks


def _nice_step(raw: float) -> int:
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if step >= raw:
            return step
    return 1000
