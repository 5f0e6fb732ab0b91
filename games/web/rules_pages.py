"""The house rules' pages: ``/reglas/<preset>/`` explains a preset of ``shared/VARIANTS.md`` in a few lines with
examples (``templates/games/rules_preset.html``), its numbers from the engine (``games.read.rules``).  Clásica's
page is ``/reglas/``; an unknown preset is a 404."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language

from games.read.rules import preset_rules_context


def rules_preset(request: HttpRequest, preset: str) -> HttpResponse:
    if preset == "clasica":
        return redirect("games:rules")
    try:
        context = preset_rules_context(preset, get_language() or "es")
    except KeyError:
        raise Http404 from None
    return render(request, "games/rules_preset.html", context)
