"""The rankings page: three tabs (plain URLs and htmx fragments), the top 100, your own place even far
below it, past periods that are final, and bad addresses answered with the site's 404 page."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from ranking_helpers import add_scores, freeze, madrid, make_users

from leaderboard import scores
from leaderboard.models import PeriodScore

pytestmark = pytest.mark.django_db

WEEK, MONTH, ALL = PeriodScore.Period.WEEK, PeriodScore.Period.MONTH, PeriodScore.Period.ALL
#: A Wednesday: this week started on Monday 23 November, this month on the 1st.
NOW = madrid(2026, 11, 25, 12, 0)
THIS_WEEK, LAST_WEEK, THIS_MONTH, LAST_MONTH = (
    date(2026, 11, 23),
    date(2026, 11, 16),
    date(2026, 11, 1),
    date(2026, 10, 1),
)
ROW = re.compile(
    r'<tr( class="me" aria-current="true")?>\s*<td class="num">([\d.]+)</td>\s*'
    r'<td><a href="/jugador/([^/]+)/">([^<]+)</a></td>\s*<td class="num[^"]*">([^<]+)</td>\s*'
    r'<td class="num">([\d.]+)</td>\s*<td class="num">([\d.]+)</td>'
)


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch):
    freeze(monkeypatch, NOW)


def table_rows(html: str) -> list[tuple[str, ...]]:
    """(me?, position, name, net, games, wins) for each row the ranking table shows."""
    return [(bool(m[0]), m[1], m[3], m[4], m[5], m[6]) for m in ROW.findall(html)]


def names(html: str) -> list[str]:
    return [row[2] for row in table_rows(html)]


@pytest.fixture
def crowd():
    """150 players this week: player k has 10·k chips (k = 1..150) and k games, so the ranking is
    crowd149 (1,500) down to crowd000 (10)."""
    users = make_users("crowd", 150)
    add_scores(
        [(u, 10 * (i + 1), i + 1, i // 10, NOW - timedelta(hours=1)) for i, u in enumerate(users)], WEEK, THIS_WEEK
    )
    return users


# -- what the page shows ------------------------------------------------------------------


def test_the_top_100_in_order_with_name_net_games_and_wins(client, crowd):
    response = client.get("/clasificacion/")
    assert response.status_code == 200
    rows = table_rows(response.content.decode())
    assert len(rows) == 100
    assert rows[0] == (False, "1", "crowd149", "+1.500", "150", "14")
    assert rows[99] == (False, "100", "crowd050", "+510", "51", "5")
    assert [r[2] for r in rows] == [f"crowd{i:03d}" for i in range(149, 49, -1)]


def test_ties_go_to_whoever_reached_the_score_first(client):
    early, late, middle, rich = make_users("tie", 4)
    add_scores(
        [
            (late, 200, 3, 1, NOW - timedelta(minutes=1)),
            (early, 200, 5, 2, NOW - timedelta(hours=2)),
            (middle, 200, 1, 1, NOW - timedelta(hours=1)),
            (rich, 900, 1, 1, NOW),
        ],
        WEEK,
        THIS_WEEK,
    )
    assert names(client.get("/clasificacion/").content.decode()) == ["tie003", "tie000", "tie002", "tie001"]
    for expected, user in enumerate([rich, early, middle, late], start=1):
        assert scores.position_of(PeriodScore.objects.get(user=user, period=WEEK)) == expected


def test_ties_through_record_game_keep_the_first_to_get_there_ahead(client):
    first, second = make_users("carrera", 2)
    scores.record_game([(first.pk, 500, True)], NOW - timedelta(hours=3))
    scores.record_game([(second.pk, 300, True)], NOW - timedelta(hours=2))
    scores.record_game([(second.pk, 200, False)], NOW - timedelta(hours=1))  # 500 too, but later
    # a free game later changes nothing for the first: net is the same, so is the moment it was reached
    scores.record_game([(first.pk, 0, False)], NOW - timedelta(minutes=5))
    html = client.get("/clasificacion/").content.decode()
    assert names(html) == ["carrera000", "carrera001"]
    assert table_rows(html)[0][3:] == ("+500", "2", "1")


def test_your_own_row_is_highlighted_in_the_top_100(client, crowd):
    client.force_login(crowd[140])  # 1,410 chips: 10th
    html = client.get("/clasificacion/").content.decode()
    rows = table_rows(html)
    assert [r for r in rows if r[0]] == [(True, "10", "crowd140", "+1.410", "141", "14")]
    assert "Tu puesto: <strong>10</strong> · +1.410 fichas" in html


def test_your_position_and_score_even_outside_the_top_100(client, crowd):
    client.force_login(crowd[4])  # 50 chips: 146th of 150
    html = client.get("/clasificacion/").content.decode()
    assert "Tu puesto: <strong>146</strong> · +50 fichas" in html
    rows = table_rows(html)
    assert len(rows) == 101 and rows[-1] == (True, "146", "crowd004", "+50", "5", "0")
    assert not any(me for me, *_ in rows[:100])


def test_positions_agree_with_the_order_of_the_list_ties_included(client):
    """Equal nets reached at different moments, and at the very same moment (two winners of one game):
    ``position_of`` counts exactly those the page lists above."""
    users = make_users("empate", 130)
    moments = [NOW - timedelta(minutes=m) for m in (5, 5, 5, 30, 30, 90)]
    rows = [(u, 100 * (i % 7) - 200, 1 + i % 3, i % 2, moments[i % len(moments)]) for i, u in enumerate(users)]
    add_scores(rows, WEEK, THIS_WEEK)
    ordered = list(PeriodScore.objects.filter(period=WEEK, start=THIS_WEEK).order_by("-net", "reached_at", "user_id"))
    assert [scores.position_of(row) for row in ordered] == list(range(1, 131))
    listed = names(client.get("/clasificacion/").content.decode())
    assert listed == [row.user.username for row in ordered[:100]]
    # the 101st is told so, below the table; the 100th is in it
    client.force_login(ordered[100].user)
    html = client.get("/clasificacion/").content.decode()
    assert "Tu puesto: <strong>101</strong>" in html and table_rows(html)[-1][:3] == (
        True,
        "101",
        ordered[100].user.username,
    )
    client.force_login(ordered[99].user)
    html = client.get("/clasificacion/").content.decode()
    assert "Tu puesto: <strong>100</strong>" in html and len(table_rows(html)) == 100 and table_rows(html)[-1][0]


def test_a_thousand_separator_in_a_far_position_and_negative_scores(client):
    users = make_users("lejos", 3)
    # 1,200 others above, without creating 1,200 users: the count is over the period's rows.
    add_scores([(users[0], -2500, 7, 0, NOW)], WEEK, THIS_WEEK)
    others = make_users("arriba", 1200)
    add_scores([(u, 1, 1, 0, NOW) for u in others], WEEK, THIS_WEEK)
    client.force_login(users[0])
    html = client.get("/clasificacion/").content.decode()
    assert "Tu puesto: <strong>1.201</strong> · −2.500 fichas" in html


def test_you_have_not_played_in_this_period_and_anonymous_visitors(client, crowd, django_user_model):
    newcomer = make_users("novata", 1)[0]
    client.force_login(newcomer)
    html = client.get("/clasificacion/").content.decode()
    assert "No has jugado partidas rápidas en este periodo." in html and "Tu puesto" not in html
    assert "novata000" in html  # the header names who is signed in
    client.logout()
    html = client.get("/clasificacion/").content.decode()
    assert len(table_rows(html)) == 100 and "Tu puesto" not in html
    assert 'href="/accounts/login/?next=/clasificacion/"' in html


def test_rows_without_games_never_show(client):
    played, idle = make_users("cero", 2)
    add_scores([(played, -100, 1, 0, NOW), (idle, 0, 0, 0, NOW - timedelta(days=1))], WEEK, THIS_WEEK)
    assert names(client.get("/clasificacion/").content.decode()) == ["cero000"]
    client.force_login(idle)
    assert "Tu puesto" not in client.get("/clasificacion/").content.decode()


def test_closed_accounts_show_under_their_anonymised_name_and_names_link_to_profiles(client, django_user_model):
    closing, other = make_users("cierre", 2)
    add_scores([(closing, 700, 2, 2, NOW), (other, 10, 1, 0, NOW)], WEEK, THIS_WEEK)
    django_user_model.objects.filter(pk=closing.pk).update(username=f"cuenta-cerrada-{closing.pk}", is_active=False)
    html = client.get("/clasificacion/").content.decode()
    assert names(html) == [f"cuenta-cerrada-{closing.pk}", "cierre001"]
    assert f'<a href="/jugador/cuenta-cerrada-{closing.pk}/">' in html
    assert "cierre000" not in html


def test_names_are_escaped_and_their_links_encoded(client, django_user_model):
    odd = django_user_model.objects.create_user(username="a+b@c.d", password="x-cuarenta-bazas")
    add_scores([(odd, 5, 1, 1, NOW)], WEEK, THIS_WEEK)
    html = client.get("/clasificacion/").content.decode()
    assert '<a href="/jugador/a%2Bb%40c.d/">a+b@c.d</a>' in html


# -- tabs: plain URLs and htmx fragments ----------------------------------------------------


def three_periods(users):
    add_scores([(users[0], 100, 1, 1, NOW)], WEEK, THIS_WEEK)
    add_scores([(users[1], 200, 2, 1, NOW)], MONTH, THIS_MONTH)
    add_scores([(users[2], 300, 3, 1, NOW)], ALL, scores.ALL_TIME)
    add_scores([(users[3], 400, 4, 1, NOW - timedelta(days=7))], WEEK, LAST_WEEK)
    add_scores([(users[4], 500, 5, 1, NOW - timedelta(days=30))], MONTH, LAST_MONTH)


@pytest.mark.parametrize(
    "url, who, tab, heading",
    [
        ("/clasificacion/", "tab000", "Esta semana", "Semana del 23 de noviembre al 29 de noviembre de 2026"),
        ("/clasificacion/semana/", "tab000", "Esta semana", "Semana del 23 de noviembre al 29 de noviembre de 2026"),
        ("/clasificacion/mes/", "tab001", "Este mes", "Noviembre de 2026"),
        ("/clasificacion/siempre/", "tab002", "Siempre", "Desde siempre"),
        (
            "/clasificacion/semana/2026-11-16/",
            "tab003",
            "Esta semana",
            "Semana del 16 de noviembre al 22 de noviembre de 2026",
        ),
        ("/clasificacion/mes/2026-10-01/", "tab004", "Este mes", "Octubre de 2026"),
    ],
)
def test_each_tab_is_a_plain_url_and_an_htmx_fragment(client, url, who, tab, heading):
    three_periods(make_users("tab", 5))
    page = client.get(url)
    html = page.content.decode()
    assert page.status_code == 200 and html.lstrip().startswith("<!DOCTYPE html>")
    assert names(html) == [who]
    assert re.search(r'class="active" aria-current="(page|true)">\s*' + tab + "</a>", html)
    assert f'<h2 id="ranking-heading">{heading}</h2>' in html
    assert "HX-Request" in page["Vary"]

    fragment = client.get(url, headers={"HX-Request": "true"})
    part = fragment.content.decode()
    assert fragment.status_code == 200 and "<html" not in part and "site-header" not in part
    assert part.lstrip().startswith("<title>") and '<section id="ranking"' in part
    assert names(part) == [who]
    assert "HX-Request" in fragment["Vary"]
    # the fragment is the page's ranking section, as it is on the page
    section = part[part.index('<section id="ranking"') :]
    assert section.strip() in html

    # htmx restoring a page its history cache lost asks for the whole page
    restored = client.get(url, headers={"HX-Request": "true", "HX-History-Restore-Request": "true"})
    assert "<!DOCTYPE html>" in restored.content.decode()


def test_tabs_and_period_links_swap_the_ranking_and_push_the_url(client):
    html = client.get("/clasificacion/semana/2026-11-16/").content.decode()
    for url in ["/clasificacion/semana/", "/clasificacion/mes/", "/clasificacion/siempre/"]:
        assert f'<a href="{url}" hx-get="{url}" hx-target="#ranking" hx-swap="outerHTML" hx-push-url="true"' in html
    assert (
        '<a href="/clasificacion/semana/2026-11-09/" hx-get="/clasificacion/semana/2026-11-09/" '
        'hx-target="#ranking" hx-swap="outerHTML" hx-push-url="true" rel="prev">← Semana anterior</a>'
    ) in html
    # the week after last week is this week, under its own address
    assert 'href="/clasificacion/semana/" hx-get="/clasificacion/semana/"' in html and "Semana siguiente →" in html
    assert 'aria-current="true">' in html  # the week tab is the kind of period shown, not this page


def test_the_site_navigation_links_to_the_rankings(client):
    assert '<a href="/clasificacion/">Clasificación</a>' in client.get("/").content.decode()


# -- past periods ---------------------------------------------------------------------------


def test_this_week_is_running_and_links_only_back(client):
    html = client.get("/clasificacion/").content.decode()
    assert "Periodo cerrado" not in html and "En curso" in html
    assert 'rel="prev">← Semana anterior' in html and "Semana siguiente" not in html
    assert 'href="/clasificacion/semana/2026-11-16/"' in html


def test_past_weeks_and_months_are_browsable_and_final(client):
    users = make_users("pasado", 2)
    add_scores([(users[0], 100, 1, 1, NOW - timedelta(days=14))], WEEK, date(2026, 11, 9))
    add_scores([(users[1], 900, 9, 9, NOW - timedelta(days=90))], MONTH, date(2026, 8, 1))
    week = client.get("/clasificacion/semana/2026-11-09/").content.decode()
    assert names(week) == ["pasado000"]
    assert "Periodo cerrado: esta clasificación ya es definitiva." in week
    assert 'rel="prev">← Semana anterior' in week and 'href="/clasificacion/semana/2026-11-16/"' in week
    month = client.get("/clasificacion/mes/2026-08-01/").content.decode()
    assert names(month) == ["pasado001"] and "Periodo cerrado" in month
    assert "Mes anterior" in month and 'href="/clasificacion/mes/2026-09-01/"' in month and "Mes siguiente" in month
    # an old week nobody played in is just empty
    empty = client.get("/clasificacion/semana/2020-01-06/").content.decode()
    assert names(empty) == [] and "Nadie ha terminado todavía una partida rápida en este periodo." in empty
    # the current period under its dated address is the same, still running
    assert "Periodo cerrado" not in client.get("/clasificacion/semana/2026-11-23/").content.decode()
    assert "Periodo cerrado" not in client.get("/clasificacion/siempre/").content.decode()


def test_the_first_week_offers_no_way_further_back(client):
    html = client.get("/clasificacion/semana/2000-01-03/").content.decode()
    assert "Semana anterior" not in html and "Semana siguiente" in html
    assert client.get("/clasificacion/semana/1999-12-27/").status_code == 404


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/clasificacion/anio/",
        "/clasificacion/Semana/",
        "/clasificacion/semana/2026-11-24/",  # a Tuesday
        "/clasificacion/mes/2026-11-02/",  # not the 1st
        "/clasificacion/semana/2026-11-30/",  # next week: not yet
        "/clasificacion/mes/2026-12-01/",  # next month
        "/clasificacion/semana/9999-12-27/",
        "/clasificacion/siempre/2026-11-23/",  # all time has no dates
        "/clasificacion/semana/2026-02-30/",
        "/clasificacion/semana/2026-13-01/",
        "/clasificacion/semana/0001-01-01/",  # a Monday, before anything
        "/clasificacion/semana/hola/",
        "/clasificacion/semana/20261123/",
        "/clasificacion/semana/2026-11-23/extra/",
        "/jugador/nadie-se-llama-asi/",  # the names in the table link there
    ],
)
def test_unknown_periods_and_bad_dates_get_the_site_s_404_page(client, settings, url):
    settings.DEBUG = False
    client.force_login(make_users("visita", 1)[0])
    response = client.get(url)
    assert response.status_code == 404
    html = response.content.decode()
    assert "Esta página no existe" in html
    assert 'class="site-header"' in html and "pocha.css" in html and '<a href="/clasificacion/">' in html


def test_the_404_page_in_english_too(client, settings):
    settings.DEBUG = False
    response = client.get("/clasificacion/semana/2026-11-24/", headers={"accept-language": "en"})
    assert response.status_code == 404 and '<html lang="en">' in response.content.decode()


@pytest.mark.parametrize(
    "query",
    [
        "?pagina=-1",
        "?pagina=abc",
        "?pagina=9223372036854775807",
        "?pagina=0&pagina=5",
        "?periodo=anio",
        "?start=2026-11-30",
        "?n=1000000",
    ],
)
def test_query_parameters_change_nothing(client, crowd, query):
    client.force_login(crowd[4])
    plain = client.get("/clasificacion/").content.decode()
    response = client.get("/clasificacion/" + query)
    assert response.status_code == 200
    html = response.content.decode()
    assert table_rows(html) == table_rows(plain) and "Tu puesto: <strong>146</strong>" in html


@pytest.mark.parametrize("query", ["?pagina=99999999999999999999999", "?%00=%00", "?pagina=" + "9" * 5000])
def test_what_no_parameter_holds_is_a_400(client, crowd, query):
    # a NUL byte, a number past the database's integers: refused before the page (pocha_site/bad_bytes.py)
    client.force_login(crowd[4])
    assert client.get("/clasificacion/" + query).status_code == 400


def test_only_reading(client):
    assert client.post("/clasificacion/").status_code == 405
    assert client.head("/clasificacion/").status_code == 200


# -- cost -----------------------------------------------------------------------------------


def queries_for(client, url: str, **headers) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url, headers=headers).status_code == 200
    return [q["sql"] for q in captured.captured_queries]


def test_a_page_is_a_handful_of_queries_however_many_rows(client, crowd, django_user_model):
    outside = crowd[4]
    client.force_login(outside)
    full = queries_for(client, "/clasificacion/")
    # the ranking's own: the top 100 (names joined), your row, your position (one query of three counts);
    # the rest is the site's frame (session, user, the header's chips, the tournament notice, the suspension, the
    # invitation banner)
    ranking = [q for q in full if "leaderboard_periodscore" in q]
    assert len(ranking) == 3, "\n".join(ranking)
    assert len(full) <= 9, "\n".join(full)
    assert len(queries_for(client, "/clasificacion/", **{"HX-Request": "true"})) <= len(full)
    # inside the top 100 your row is already read: one query fewer
    client.force_login(crowd[149])
    assert len(queries_for(client, "/clasificacion/")) == len(full) - 2
    # ten times the players: the same queries
    more = make_users("mas", 1000)
    add_scores([(u, -i, 1, 0, NOW) for i, u in enumerate(more)], WEEK, THIS_WEEK)
    client.force_login(more[-1])
    assert len(queries_for(client, "/clasificacion/")) == len(full)
    client.logout()
    assert len(queries_for(client, "/clasificacion/siempre/")) <= 2  # anonymous: the top 100 (+ the session)
