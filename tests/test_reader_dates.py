"""Dates and times as their reader reads them (issue 43): every page that prints one, in Spanish and in English,
writes the day, the month in words and the year (6 dic 2026 / 6 Dec 2026, never the US 12/06/2026) and the time
on the 24-hour clock (09:05, never «9:05 a.m.», which ended a sentence in «a.m..»): ``pocha_site/formats/``.
And the site's icon: linked from every page, and ``/favicon.ico`` answered."""

from __future__ import annotations

import html
import re
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings as django_settings
from django.test import Client
from live.helpers import person, play_to_the_end

from accounts import ledger
from accounts.models import Transaction
from games.models import Table, Tournament
from games.table import actions
from leaderboard.scores import record_game

pytestmark = pytest.mark.django_db

MADRID = ZoneInfo("Europe/Madrid")
MONTHS = {
    "es": ["ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sep", "oct", "nov", "dic"],
    "en": ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
}
MORNING = datetime(2026, 12, 6, 9, 5, tzinfo=MADRID)  # a 6 December that US style would write 12/06
EVENING = datetime(2026, 3, 4, 21, 40, tzinfo=MADRID)
LATER = datetime(2030, 1, 2, 8, 0, tzinfo=MADRID)
SHORT = {
    "es": {MORNING: "6 dic 2026, 09:05", EVENING: "4 mar 2026, 21:40", LATER: "2 ene 2030, 08:00"},
    "en": {MORNING: "6 Dec 2026, 09:05", EVENING: "4 Mar 2026, 21:40", LATER: "2 Jan 2030, 08:00"},
}
US_DATE = re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b")
TWELVE_HOUR = re.compile(r"\b\d{1,2}(:\d\d)? ?[ap]\.?m\b|\b(a\.m|p\.m|noon|midnight)\b", re.I)
TIME = re.compile(r'<time datetime="([^"]+)"[^>]*>([^<]*)</time>')


@pytest.fixture(autouse=True)
def quick_bots(settings: Any) -> None:
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_ROUND_PAUSE = 0
    settings.POCHA_TRICK_PAUSE = 0


def reader(user: Any, language: str) -> Client:
    client = Client()
    client.cookies[django_settings.LANGUAGE_COOKIE_NAME] = language
    client.force_login(user)
    return client


def page(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def written(moment: datetime, language: str) -> str:
    """How a page writes ``moment`` in ``language`` (a short date and time, in Madrid)."""
    local = moment.astimezone(MADRID)
    return f"{local.day} {MONTHS[language][local.month - 1]} {local.year}, {local:%H:%M}"


def check_dates(text: str, language: str) -> list[str]:
    """Every <time> of the page written as ``written`` says; no US-style date and no 12-hour time anywhere in
    what the page shows (its scripts and attributes aside); the times' texts."""
    shown = []
    for iso, words in TIME.findall(text):
        if not re.match(r"\d{4}-\d\d-\d\dT", iso) or re.fullmatch(r"[\d:\s]+", words or "x"):
            continue  # a countdown (its datetime is the start, its text the time left)
        assert words == written(datetime.fromisoformat(iso), language), (iso, words)
        shown.append(words)
    visible = text_of(re.sub(r"<script.*?</script>", "", text, flags=re.S))
    assert not US_DATE.search(visible), US_DATE.search(visible)
    assert not TWELVE_HOUR.search(visible), TWELVE_HOUR.search(visible)
    assert ".." not in visible.replace("...", "")
    return shown


def finished_private_game(host: Any) -> Table:
    table = actions.do_create_private_table(host, 3, 0, bots_allowed=True, bot_level="facil")
    actions.do_start(table.pk, host)
    play_to_the_end(table.pk)
    Table.objects.filter(pk=table.pk).update(finished_at=MORNING)
    return Table.objects.get(pk=table.pk)


@pytest.mark.parametrize("language", ["es", "en"])
def test_every_page_with_a_date_writes_it_in_the_readers_language(language: str) -> None:
    ana = person("ana")
    ledger.grant_welcome(ana.pk)
    Transaction.objects.filter(entries__account__user=ana).update(created_at=EVENING)
    game = finished_private_game(ana)
    not_open = Tournament.objects.create(
        name="Torneo de Reyes", size=4, places=8, registration_opens_at=LATER, starts_at=LATER + timedelta(hours=2)
    )
    finished = Tournament.objects.create(
        name="Torneo de Otoño",
        size=4,
        places=8,
        registration_opens_at=MORNING - timedelta(days=2),
        starts_at=MORNING - timedelta(hours=3),
        status=Tournament.Status.FINISHED,
        finished_at=MORNING,
    )
    client = reader(ana, language)
    said = SHORT[language]

    wallet = page(client, "/accounts/fichas/")
    assert said[EVENING] in check_dates(wallet, language)

    replay = page(client, f"/mesa/{game.pk}/repeticion/")
    assert check_dates(replay, language) == [said[MORNING]]

    profile = page(client, "/jugador/ana/")
    assert said[MORNING] in check_dates(profile, language)

    listing = page(client, "/torneos/")
    shown = check_dates(listing, language)  # each tournament's start (or end)
    assert len(shown) == 2 and written(LATER + timedelta(hours=2), language) in shown

    coming = page(client, f"/torneos/{not_open.pk}/")
    check_dates(coming, language)
    opens = {"es": "La inscripción se abre el ", "en": "Registration opens on "}[language] + said[LATER] + "."
    assert opens in text_of(coming)

    over = page(client, f"/torneos/{finished.pk}/")
    check_dates(over, language)
    ended = {"es": "Terminó el ", "en": "It finished on "}[language] + said[MORNING] + ". "
    assert ended in text_of(over) + " "

    # the rankings: a past week's title and heading, a past month's heading
    record_game([(ana.pk, 100, True)], datetime(2026, 11, 18, 10, 0, tzinfo=MADRID))
    week = page(client, "/clasificacion/semana/2026-11-16/")
    check_dates(week, language)
    title = html.unescape(re.search(r"<title>(.*?)</title>", week, re.S).group(1))
    assert {"es": "Clasificación de la semana del 16 nov 2026", "en": "Leaderboard for the week of 16 Nov 2026"}[
        language
    ] in title
    heading = {
        "es": "Semana del 16 de noviembre al 22 de noviembre de 2026",
        "en": "Week of 16 November to 22 November 2026",
    }
    assert heading[language] in text_of(week)
    month = page(client, "/clasificacion/mes/2026-11-01/")
    check_dates(month, language)
    assert {"es": "Noviembre de 2026", "en": "November 2026"}[language] in text_of(month)


def test_the_admin_writes_a_suspension_date_the_same_way() -> None:
    from django.contrib.auth import get_user_model

    from accounts.models import Profile

    boss = get_user_model().objects.create_user(username="jefa", password=None, is_staff=True, is_superuser=True)
    ana = person("ana")
    Profile.objects.update_or_create(user=ana, defaults={"suspended_at": MORNING, "suspended_reason": "trampas"})
    for language in ("es", "en"):
        text = page(reader(boss, language), f"/admin/auth/user/{ana.pk}/change/")
        said = {"es": "Suspendido el {} por —: trampas", "en": "Suspended on {} by —: trampas"}[language]
        assert said.format(SHORT[language][MORNING]) in text_of(text)
        assert not US_DATE.search(text_of(re.sub(r"<script.*?</script>", "", text, flags=re.S)))


def test_every_page_links_the_icon_and_favicon_ico_answers() -> None:
    client = Client()
    home = page(client, "/")
    icon = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', home)
    assert icon and icon.group(1).endswith("img/favicon.svg")
    assert '<link rel="apple-touch-icon" href="' in home
    assert len(re.findall(r'<link rel="icon"', home)) == 1  # the one static/js/table.js swaps on your turn
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response["Location"].endswith("img/favicon-32.png")
    # (the files themselves, served to a browser: tests/browser/test_lobby_in_browser.py)
