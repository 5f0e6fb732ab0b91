"""The rankings page: this week, this month and all time, and the past weeks and months; and «Nivel», the
players by skill level at each rule set (``leaderboard.skill``), from 5 rated games.

A page is a handful of queries whatever the number of players (see ``leaderboard.models``): the top
100 of the period read off the ranking index, and for a signed-in player their own row and one
count for their position.  Tabs and the previous/next links are plain URLs that htmx fetches as a
fragment (the ranking section alone) and pushes into the history.  «Nivel» reads the same way, off the
``(preset, -level, user)`` index.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from leaderboard import scores, skill
from leaderboard.models import SKILL_PRESET_LABELS, SKILL_PRESETS, PeriodScore, SkillRating

#: How many players a ranking lists; everyone else sees their own position below it.
TOP = 100
#: URL words for the periods, and back.
PERIOD_BY_SLUG = {"semana": PeriodScore.Period.WEEK, "mes": PeriodScore.Period.MONTH, "siempre": PeriodScore.Period.ALL}
SLUG_BY_PERIOD = {period: slug for slug, period in PERIOD_BY_SLUG.items()}
#: No period starts before the site's beginning of time (and dates near year 1 cannot go back a week).
FIRST_DAY = scores.ALL_TIME


def _period_and_start(slug: str, start: date | None, today_start: dict[str, date]) -> tuple[str, date]:
    """The period and first day a URL asks for; 404 for an unknown period, a day that does not start
    one (not a Monday, not a 1st), a future period, or one before the site's beginning."""
    period = PERIOD_BY_SLUG.get(slug)
    if period is None:
        raise Http404
    if start is None:
        return period, today_start[period]
    if period == PeriodScore.Period.ALL or start < FIRST_DAY or start > today_start[period]:
        raise Http404
    if scores.period_start(period, scores.madrid_midnight(start)) != start:
        raise Http404
    return period, start


def _url(period: str, start: date, current: date) -> str:
    slug = SLUG_BY_PERIOD[period]
    if start == current:
        return reverse("leaderboard:current", kwargs={"slug": slug})
    return reverse("leaderboard:past", kwargs={"slug": slug, "start": start})


#: The «Nivel» tab's name among the periods' (``_tabs``).
SKILL_TAB = "skill"


def _tabs(active: str) -> list[dict[str, Any]]:
    """The ranking's tabs: this week, this month, all time, and «Nivel»."""
    tabs = [
        {"period": p, "active": p == active, "url": reverse("leaderboard:current", kwargs={"slug": SLUG_BY_PERIOD[p]})}
        for p in scores.PERIODS
    ]
    tabs.append({"period": SKILL_TAB, "active": active == SKILL_TAB, "url": reverse("leaderboard:skill")})
    return tabs


def _skill_url(preset: str) -> str:
    if preset == "clasica":
        return reverse("leaderboard:skill")
    return reverse("leaderboard:skill_preset", kwargs={"preset": preset})


def ranking_context(request: HttpRequest, period: str, start: date, now: datetime) -> dict[str, Any]:
    """The top of the period, the viewer's own row and place, and the ways to other periods."""
    current = scores.period_start(period, now)
    rows = list(
        PeriodScore.objects.filter(period=period, start=start, games__gt=0)
        .order_by("-net", "reached_at", "user_id")
        .values("user_id", "user__username", "net", "games", "wins")[:TOP]
    )
    me = request.user.pk if request.user.is_authenticated else None
    for position, row in enumerate(rows, start=1):
        row["position"] = position
        row["name"] = row.pop("user__username")
        row["me"] = row["user_id"] == me

    mine: dict[str, Any] | None = None
    if me is not None:
        mine = next((row for row in rows if row["me"]), None)
        if mine is None:
            own = (
                PeriodScore.objects.filter(user_id=me, period=period, start=start, games__gt=0)
                .only("user_id", "period", "start", "net", "games", "wins", "reached_at")
                .first()
            )
            if own is not None:
                mine = {
                    "user_id": own.user_id,
                    "me": True,
                    "name": request.user.get_username(),
                    "net": own.net,
                    "games": own.games,
                    "wins": own.wins,
                    "position": scores.position_of(own),
                    "outside": True,
                }

    previous = scores.previous_start(period, start)
    following = scores.next_start(period, start)
    end = following - timedelta(days=1) if following is not None else None
    return {
        "period": period,
        "start": start,
        "end": end,
        "is_current": start == current,
        "is_final": scores.is_final(period, start, now),
        "rows": rows,
        "mine": mine,
        "top": TOP,
        "tabs": _tabs(period),
        "previous_url": _url(period, previous, current) if previous is not None and previous >= FIRST_DAY else None,
        "next_url": _url(period, following, current) if following is not None and start < current else None,
    }


@require_safe
@vary_on_headers("HX-Request", "HX-History-Restore-Request")
def ranking(request: HttpRequest, slug: str, start: date | None = None) -> HttpResponse:
    """One ranking.  htmx asks for the ranking section alone (a tab, the previous or next period);
    a plain visit, or htmx restoring a page missing from its history cache, gets the whole page.
    Query parameters are not used: whatever they say, the page is the same."""
    now = timezone.now()
    today_start = {p: scores.period_start(p, now) for p in scores.PERIODS}
    period, start = _period_and_start(slug, start, today_start)
    context = ranking_context(request, period, start, now)
    htmx = getattr(request, "htmx", None)  # django_htmx's middleware
    fragment = htmx is not None and bool(htmx) and not htmx.history_restore_request
    context["fragment"] = fragment
    template = "leaderboard/_ranking.html" if fragment else "leaderboard/ranking.html"
    return render(request, template, context)


def skill_context(request: HttpRequest, preset: str) -> dict[str, Any]:
    """«Nivel» at one rule set: the top players with ``skill.RANKED_GAMES`` rated games or more, by level, and
    the viewer's own row and place (or how many games they still need)."""
    rows = list(skill.ranked(preset).values("user_id", "user__username", "level", "games")[:TOP])
    me = request.user.pk if request.user.is_authenticated else None
    for position, row in enumerate(rows, start=1):
        row["position"] = position
        row["name"] = row.pop("user__username")
        row["me"] = row["user_id"] == me

    mine: dict[str, Any] | None = None
    if me is not None:
        mine = next((row for row in rows if row["me"]), None)
        if mine is None:
            own = SkillRating.objects.filter(user_id=me, preset=preset, games__gt=0).first()
            if own is not None:
                mine = {
                    "user_id": own.user_id,
                    "me": True,
                    "name": request.user.get_username(),
                    "level": own.level,
                    "games": own.games,
                    "ranked": own.games >= skill.RANKED_GAMES,
                    "missing": max(0, skill.RANKED_GAMES - own.games),
                }
                if mine["ranked"]:
                    mine["position"] = skill.position_of(own)
                    mine["outside"] = True
        else:
            mine["ranked"] = True
    return {
        "period": SKILL_TAB,
        "preset": preset,
        "preset_label": SKILL_PRESET_LABELS[preset],
        "presets": [
            {"preset": p, "label": SKILL_PRESET_LABELS[p], "active": p == preset, "url": _skill_url(p)}
            for p in SKILL_PRESETS
        ],
        "is_current": True,
        "rows": rows,
        "mine": mine,
        "top": TOP,
        "ranked_games": skill.RANKED_GAMES,
        "tabs": _tabs(SKILL_TAB),
    }


@require_safe
@vary_on_headers("HX-Request", "HX-History-Restore-Request")
def skill_ranking(request: HttpRequest, preset: str) -> HttpResponse:
    """«Nivel» at one rule set (Clásica under the tab's own address), as the periods' pages: the whole page,
    or for htmx the ranking section alone."""
    if preset not in SKILL_PRESETS:
        raise Http404
    context = skill_context(request, preset)
    htmx = getattr(request, "htmx", None)
    fragment = htmx is not None and bool(htmx) and not htmx.history_restore_request
    context["fragment"] = fragment
    template = "leaderboard/_skill.html" if fragment else "leaderboard/skill.html"
    return render(request, template, context)
