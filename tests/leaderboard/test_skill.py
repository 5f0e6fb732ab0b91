"""The skill level («Nivel», ``leaderboard.skill``): openskill's Plackett–Luce ratings by the final places, one
per rule set, moved by every public quick game and every tournament game.

Beating higher-rated players gains more than beating lower-rated ones; a tie moves less than a win and draws
the tied players together; a person who leaves is rated last however the bot scored with the seat (a real
game, through ``on_finish``); the bots play at fixed ratings that never move and have no rows; a game is rated
once; private tables and practice hands are not rated, a tournament's table is.  And where it shows: by each
seat on the board, on the profile (the level and its last change), and in the ranking's «Nivel» tab."""

from __future__ import annotations

import copy
import re
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from live.helpers import person, play_to_the_end
from ranking_helpers import make_users

# One-round games, bots that decide from a fixed number of worlds, seeded deals (test_forfeit's).
from test_forfeit import fast_short_games, first_game_where_the_bot_wins, quick_game, seeded  # noqa: F401

from games.engine import levels as engine_levels
from games.engine.snapshot import load
from games.models import Seat, Table, Tournament
from games.read import board as board_view
from games.table import actions
from games.table.actions import lifecycle
from games.table.actions.practice import do_play_again
from leaderboard import skill
from leaderboard.models import SkillChange, SkillRating

pytestmark = pytest.mark.django_db

NOW = timezone.now()


def table() -> Table:
    """A table row for ``rate_game``'s changes to point at (its game is not played here)."""
    return Table.objects.create(size=4, is_quick=True)


def rated(user: Any, mu: float, sigma: float, games: int = 10, preset: str = "clasica") -> SkillRating:
    return SkillRating.objects.create(
        user=user,
        preset=preset,
        mu=mu,
        sigma=sigma,
        level=skill.level_of(mu, sigma),
        games=games,
        updated_at=NOW,
    )


def rating(user: Any, preset: str = "clasica") -> SkillRating:
    return SkillRating.objects.get(user=user, preset=preset)


# -- the scale -----------------------------------------------------------------------------------


def test_the_scale_and_the_anchors():
    assert skill.level_of(25, 25 / 3) == skill.NEW_LEVEL == 1000
    assert skill.level_of(40, 1) == 1000 + 40 * 37
    assert skill.level_of(-50, 10) == 0 and skill.level_of(200, 1) == 3000  # within 0…3000
    # one anchor per bot level of the engine, in order of strength, shown as one number each
    assert set(skill.BOT_RATINGS) == set(engine_levels.LEVELS)
    assert skill.BOT_LEVELS == {"facil": 1560, "normal": 1880, "dificil": 2440}
    assert all(sigma <= 1 for _mu, sigma in skill.BOT_RATINGS.values())
    assert skill.signed(34) == "+34" and skill.signed(-12) == "−12" and skill.signed(0) == "±0"


# -- the ratings ---------------------------------------------------------------------------------


def test_beating_higher_rated_players_gains_more_than_beating_lower_rated_ones():
    strong, weak = person("vence_fuertes"), person("vence_flojos")
    # against bots: first place over three difícil, or over three fácil
    skill.rate_game("clasica", [(strong.pk, None, 1), *[(None, "dificil", p) for p in (2, 3, 4)]], table().pk, NOW)
    skill.rate_game("clasica", [(weak.pk, None, 1), *[(None, "facil", p) for p in (2, 3, 4)]], table().pk, NOW)
    assert rating(strong).mu > rating(weak).mu > 25
    assert rating(strong).level > rating(weak).level > skill.NEW_LEVEL
    # against people: two newcomers each beat three players, rated high or low
    first, second = person("gana_a_buenos"), person("gana_a_malos")
    good = [person(f"bueno{i}") for i in range(3)]
    poor = [person(f"malo{i}") for i in range(3)]
    for user in good:
        rated(user, 35, 3)
    for user in poor:
        rated(user, 15, 3)
    skill.rate_game(
        "clasica", [(first.pk, None, 1), *[(u.pk, None, p) for u, p in zip(good, (2, 3, 4))]], table().pk, NOW
    )
    skill.rate_game(
        "clasica", [(second.pk, None, 1), *[(u.pk, None, p) for u, p in zip(poor, (2, 3, 4))]], table().pk, NOW
    )
    gain = {user: rating(user).level - skill.NEW_LEVEL for user in (first, second)}
    assert gain[first] > gain[second] > 0
    # and the strong player who came last behind the newcomer and the others comes down
    assert rating(good[2]).mu < 35


def test_a_tie_moves_less_than_a_win_and_draws_the_tied_together():
    def pair(prefix: str) -> tuple[Any, Any]:
        high, low = person(f"{prefix}_alto"), person(f"{prefix}_bajo")
        rated(high, 30, 4)
        rated(low, 20, 4)
        return high, low

    bots = [(None, "normal", 3), (None, "normal", 4)]
    high, low = pair("gana")
    skill.rate_game("clasica", [(high.pk, None, 1), (low.pk, None, 2), *bots], table().pk, NOW)
    high_won = rating(high).mu - 30
    high_second, low_won = pair("pierde")
    skill.rate_game("clasica", [(high_second.pk, None, 2), (low_won.pk, None, 1), *bots], table().pk, NOW)
    low_won = rating(low_won).mu - 20

    high_tie, low_tie = pair("empata")
    changes = skill.rate_game("clasica", [(high_tie.pk, None, 1), (low_tie.pk, None, 1), *bots], table().pk, NOW)
    assert len(changes) == 2
    tied_high = rating(high_tie).mu - 30
    tied_low = rating(low_tie).mu - 20
    # sharing first moves each less than beating the other would have
    assert 0 < tied_high < high_won and 0 < tied_low < low_won
    assert tied_low > tied_high  # and the weaker gains more from the same result: drawn together

    # everyone tied: the stronger comes down, the weaker goes up
    high_all, low_all = pair("todos")
    skill.rate_game(
        "clasica",
        [(high_all.pk, None, 1), (low_all.pk, None, 1), (None, "normal", 1), (None, "normal", 1)],
        table().pk,
        NOW,
    )
    assert rating(high_all).mu < 30 and rating(low_all).mu > 20


def test_the_bots_never_move_and_have_no_rows():
    anchors = copy.deepcopy(skill.BOT_RATINGS)
    ana = person("contra_bots")
    for level in engine_levels.LEVELS:
        skill.rate_game("clasica", [(None, level, 1), (ana.pk, None, 2), (None, level, 3)], table().pk, NOW)
    assert skill.BOT_RATINGS == anchors
    assert list(SkillRating.objects.values_list("user_id", flat=True)) == [ana.pk]
    assert SkillChange.objects.count() == 3 and set(SkillChange.objects.values_list("user_id", flat=True)) == {ana.pk}
    assert rating(ana).games == 3
    # a seat that is neither a person nor a bot of a known level is refused, and nothing is written
    with pytest.raises(ValueError):
        skill.rate_game("clasica", [(ana.pk, None, 1), (None, "experto", 2)], table().pk, NOW)
    with pytest.raises(ValueError):
        skill.rate_game("mus", [(ana.pk, None, 1), (None, "normal", 2)], table().pk, NOW)
    assert rating(ana).games == 3


def test_a_game_is_rated_once():
    ana, bea = person("una_vez_a"), person("una_vez_b")
    game = table()
    first = skill.rate_game("indias", [(ana.pk, None, 1), (bea.pk, None, 2), (None, "normal", 3)], game.pk, NOW)
    assert [(c.user_id, c.before) for c in first] == [(ana.pk, 1000), (bea.pk, 1000)]
    kept = list(SkillRating.objects.order_by("pk").values())
    # again, even with other places: nothing changes
    assert skill.rate_game("indias", [(ana.pk, None, 2), (bea.pk, None, 1), (None, "normal", 3)], game.pk, NOW) == []
    assert list(SkillRating.objects.order_by("pk").values()) == kept
    assert SkillChange.objects.filter(table=game).count() == 2
    # one rating per rule set: the other rule sets have none yet
    assert set(SkillRating.objects.values_list("preset", flat=True)) == {"indias"}
    assert skill.levels("clasica", [ana.pk]) == {ana.pk: skill.NEW_LEVEL}
    assert skill.levels("indias", [ana.pk]) == {ana.pk: rating(ana, "indias").level}


# -- real games ----------------------------------------------------------------------------------


def test_a_person_who_leaves_is_rated_last_even_with_the_best_score(monkeypatch):
    table_, ana, bea = first_game_where_the_bot_wins(monkeypatch, "ana", leave=True)
    totals = load(table_.state).totals
    seats = {s.position: s for s in Seat.objects.filter(table=table_)}
    mine = next(p for p, s in seats.items() if s.user_id == ana.pk)
    assert all(totals[mine] > t for p, t in enumerate(totals) if p != mine)  # the bot won her seat on points
    assert seats[mine].forfeit == "left" and seats[mine].place == 4
    # her rating: exactly Plackett–Luce with her seat last (from the new player's rating, bots at normal)
    teams, ranks = [], []
    for position in sorted(seats):
        seat = seats[position]
        mu, sigma = skill.BOT_RATINGS["normal"] if seat.is_bot else (skill.MODEL.mu, skill.MODEL.sigma)
        teams.append([skill.MODEL.rating(mu=mu, sigma=sigma)])
        ranks.append(float(seat.place))
    expected = skill.MODEL.rate(teams, ranks=ranks)[mine][0]
    assert rating(ana).mu == pytest.approx(expected.mu) and rating(ana).sigma == pytest.approx(expected.sigma)
    assert rating(ana).mu < skill.MODEL.mu  # last: down
    change = SkillChange.objects.get(table=table_, user=ana)
    assert (change.before, change.after) == (skill.NEW_LEVEL, rating(ana).level)
    # the people's changes only (the bots have no rows); a second end of the game changes nothing
    assert set(SkillChange.objects.filter(table=table_).values_list("user_id", flat=True)) == {ana.pk, bea.pk}
    assert set(SkillRating.objects.values_list("user__seats__is_bot", flat=True)) == {False}
    kept = list(SkillRating.objects.order_by("pk").values())
    changes = SkillChange.objects.count()
    lifecycle.on_finish(Table.objects.get(pk=table_.pk), load(table_.state))
    assert list(SkillRating.objects.order_by("pk").values()) == kept
    assert SkillChange.objects.count() == changes


def test_private_and_practice_tables_are_not_rated_a_tournament_table_is(monkeypatch):
    seeded(monkeypatch, 11)
    ana = person("torneo_ana")
    private = actions.do_create_private_table(ana, 3, 0, bots_allowed=True)
    actions.do_start(private.pk, ana)
    assert play_to_the_end(private.pk).status == Table.Status.FINISHED
    assert not SkillChange.objects.exists() and not SkillRating.objects.exists()
    # the board still shows the levels: hers a newcomer's, the bots' their anchor's
    assert sorted(Seat.objects.filter(table=private).values_list("level", flat=True)) == [1000, 1880, 1880]

    practice = do_play_again(ana, private.pk, 1)
    assert play_to_the_end(practice.pk).status == Table.Status.FINISHED
    assert not SkillChange.objects.exists()

    tournament = Tournament.objects.create(name="Copa", starts_at=timezone.now(), size=3)
    cup = actions.do_create_private_table(ana, 3, 0, bots_allowed=True, bot_level="dificil")
    Table.objects.filter(pk=cup.pk).update(tournament=tournament, tournament_game=1, tournament_number=1)
    actions.do_start(cup.pk, ana)
    assert play_to_the_end(cup.pk).status == Table.Status.FINISHED
    change = SkillChange.objects.get()
    assert (change.table_id, change.user_id, change.preset, change.before) == (cup.pk, ana.pk, "clasica", 1000)
    assert sorted(Seat.objects.filter(table=cup).values_list("level", flat=True)) == [1000, 2440, 2440]


def test_the_board_shows_each_seat_s_level_and_the_move_path_reads_nothing_more(monkeypatch):
    seeded(monkeypatch, 21)
    game, ana, bea = quick_game("tablero")
    seats = list(Seat.objects.filter(table=game))
    assert sorted((s.is_bot, s.level) for s in seats) == [(False, 1000), (False, 1000), (True, 1880), (True, 1880)]
    _seq, html = board_view.render_board(game.pk, ana.pk, "es")
    for seat in seats:
        item = re.search(rf'<li id="seat-{seat.position}".*?</li>', html, re.S).group(0)
        assert f'data-level="{seat.level}"' in item and f"Nv. {seat.level}</span>" in item
    _seq, english = board_view.render_board(game.pk, ana.pk, "en")
    assert "Lv. 1000" in english and "Nv." not in english
    # drawing the board reads the table, its seats and its watchers: the level came with the seats
    with CaptureQueriesContext(connection) as queries:
        board_view.render_board(game.pk, bea.pk, "es")
    assert len(queries) <= 3
    finished = play_to_the_end(game.pk)
    assert finished.status == Table.Status.FINISHED
    level = rating(ana).level
    assert level != skill.NEW_LEVEL

    # her next game shows the level she has now
    seeded(monkeypatch, 22)
    again = actions.do_quick_play(ana, 4, 100)
    Table.objects.filter(pk=again.pk).update(due_at=timezone.now() - timedelta(seconds=1))
    assert actions.do_due(again.pk, Table.objects.get(pk=again.pk).seq) is not None
    assert Seat.objects.get(table=again, user=ana).level == level
    _seq, html = board_view.render_board(again.pk, ana.pk, "es")
    assert f'data-level="{level}"' in html


def test_the_profile_shows_the_level_and_its_last_change(monkeypatch, client):
    seeded(monkeypatch, 31)
    game, ana, _bea = quick_game("perfil")
    play_to_the_end(game.pk)
    change = SkillChange.objects.get(table=game, user=ana)
    client.force_login(ana)
    html = client.get("/jugador/perfilana/").content.decode()
    row = re.search(r'<tr id="level-clasica".*?</tr>', html, re.S).group(0)
    assert "Clásica" in row
    assert f'id="level-value-clasica">{change.after}</strong>' in row
    shown = re.search(r'id="level-change-clasica">(.*?)</td>', row, re.S).group(1)
    assert skill.signed(change.after - change.before) in shown
    assert f'href="/mesa/{game.pk}/repeticion/"' in shown and f"en la mesa {game.pk}" in shown
    assert "indias" not in html.split('id="levels-title"', 1)[1].split("</section>", 1)[0].lower()
    # a player with no rated game: no level yet
    fresh = person("sin_nivel")
    html = client.get("/jugador/sin_nivel/").content.decode()
    assert 'id="no-levels"' in html and fresh.pk
    # in English
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    html = client.get("/jugador/perfilana/").content.decode()
    assert "Last change" in html and f"at table {game.pk}" in html and "Último cambio" not in html


# -- the ranking's «Nivel» tab ------------------------------------------------------------------


ROW = re.compile(
    r'<tr( class="me" aria-current="true")?>\s*<td class="num">([\d.]+)</td>\s*'
    r'<td><a href="/jugador/([^/]+)/">[^<]+</a></td>\s*<td class="num">(\d+)</td>\s*<td class="num">([\d.]+)</td>'
)


def test_the_level_tab_lists_players_with_five_rated_games_by_level(client):
    users = make_users("nivel", 8)
    # (level, games): nivel003 has too few games, nivel006 plays another rule set
    rows = [(1500, 5), (1800, 12), (1200, 7), (2500, 4), (1650, 5), (1650, 30), (2900, 50), (900, 5)]
    for user, (level, games) in zip(users, rows):
        SkillRating.objects.create(
            user=user,
            preset="bazas" if user.username == "nivel006" else "clasica",
            mu=0,
            sigma=1,
            level=level,
            games=games,
            updated_at=NOW,
        )
    html = client.get("/clasificacion/nivel/").content.decode()
    shown = [(m[1], m[2], m[3], m[4]) for m in ROW.findall(html)]
    assert shown == [
        ("1", "nivel001", "1800", "12"),
        ("2", "nivel004", "1650", "5"),  # a tie: the older account first
        ("3", "nivel005", "1650", "30"),
        ("4", "nivel000", "1500", "5"),
        ("5", "nivel002", "1200", "7"),
        ("6", "nivel007", "900", "5"),
    ]
    assert '<h2 id="ranking-heading">Nivel · Clásica</h2>' in html
    # the tab among the periods', and the rule sets to choose from
    assert re.search(r'class="active" aria-current="page">\s*Nivel</a>', html)
    for url in ("/clasificacion/semana/", "/clasificacion/nivel/", "/clasificacion/nivel/bazas/"):
        assert f'href="{url}" hx-get="{url}"' in html
    bazas = client.get("/clasificacion/nivel/bazas/").content.decode()
    assert [m[2] for m in ROW.findall(bazas)] == ["nivel006"]
    assert client.get("/clasificacion/nivel/mus/").status_code == 404
    # the periods' pages link to it
    assert (
        'href="/clasificacion/nivel/" hx-get="/clasificacion/nivel/"' in client.get("/clasificacion/").content.decode()
    )

    # the viewer's own: highlighted in the list; their level and the games missing; none at all
    client.force_login(users[2])
    html = client.get("/clasificacion/nivel/").content.decode()
    me, position, name, _level, _games = ROW.findall(html)[4]
    assert (bool(me), position, name) == (True, "5", "nivel002")
    assert "Tu puesto: <strong>5</strong> · nivel 1200" in html
    client.force_login(users[3])
    html = client.get("/clasificacion/nivel/").content.decode()
    assert "Tu nivel: 2500. Te falta 1 partida puntuada en estas reglas" in html
    client.force_login(users[6])
    assert "Todavía no tienes nivel en estas reglas." in client.get("/clasificacion/nivel/").content.decode()

    # an htmx fragment is the section alone
    part = client.get("/clasificacion/nivel/bazas/", headers={"HX-Request": "true"}).content.decode()
    assert part.lstrip().startswith("<title>") and "<html" not in part and '<section id="ranking"' in part


def test_the_level_tab_shows_your_place_below_the_top_and_costs_a_handful_of_queries(client):
    users = make_users("cien", 105)
    SkillRating.objects.bulk_create(
        [
            SkillRating(user=u, preset="clasica", mu=0, sigma=1, level=2000 - i, games=5 + i, updated_at=NOW)
            for i, u in enumerate(users)
        ]
    )
    client.force_login(users[102])
    with CaptureQueriesContext(connection) as queries:
        html = client.get("/clasificacion/nivel/").content.decode()
    listed = ROW.findall(html)
    assert len(listed) == 101  # the top 100, then the viewer's own row below them
    assert listed[-1][1:4] == ("103", "cien102", "1898") and listed[-1][0]
    assert "Tu puesto: <strong>103</strong> · nivel 1898" in html
    ours = [q["sql"] for q in queries.captured_queries if "leaderboard_skillrating" in q["sql"]]
    assert len(ours) == 3, ours  # the top 100, your row, your place
    assert len(queries) <= 9  # and the site's frame: session, user, chips, tournament notice, suspension, invitations


def test_a_fresh_client_sees_the_tab_without_a_position(client):
    html = Client().get("/clasificacion/nivel/indias/").content.decode()
    assert "Nadie tiene todavía 5 partidas puntuadas en estas reglas." in html
    assert "Entra con tu cuenta" in html
