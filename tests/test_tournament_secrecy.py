"""A tournament's deals kept secret until every table of the game has played them, through the site's own views
and a real tournament run by the runner: while one table of a duplicate tournament (and of a por-puntos game)
still plays, the finished table's record, replay, analysis, «Juega esta mano» and page give nothing of its
deals to a stranger, a player of another table, staff (the admin's rounds, moves and flags included) or the
table's own players (but its own players still see their own table's final board); once all have finished,
they all do.  The tournament's live standings count a deal once every table has finished it.  The replay, the analysis and «Juega esta mano» of a table played with chosen deals (rounds 5 and
15 of the schedule) work, and the replay goes to the table's totals.  A private table's analysis counts on a
profile only for those who may see its replay."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from live.helpers import person, play_to_the_end
from test_tournament_pages import play_deal

from games.engine import replay as replay_record
from games.engine.levels import FACIL
from games.models import Analysis, Flag, Move, Round, Seat, Table, Tournament
from games.read import profiles
from games.read import tournaments as pages
from games.study import analyses, practice, worker
from games.table import access, actions
from games.tournaments import entries, fairplay, runner

pytestmark = pytest.mark.django_db

SECRET = "Las manos de esta partida del torneo se verán cuando terminen todas sus mesas."
WATCH = "Esta mesa del torneo se podrá mirar cuando terminen todas las mesas de la partida"


@pytest.fixture(autouse=True)
def quick(settings: Any, monkeypatch: Any) -> None:
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_ROUND_PAUSE = 0
    settings.POCHA_TRICK_PAUSE = 0
    settings.POCHA_ANALYSIS_WORLDS = 4
    monkeypatch.setattr(practice, "BASELINE_WORLDS", 4)


def started(
    fmt: str = Tournament.Format.DUPLICATE, names: tuple[str, ...] = ("ana", "bea", "carla"), **fields: Any
) -> tuple[Tournament, list[Any]]:
    """A free tournament of ``names`` (two tables of four) started by the runner, bots at fácil."""
    now = timezone.now()
    values: dict[str, Any] = {
        "name": "Copa del Secreto",
        "format": fmt,
        "size": 4,
        "places": 8,
        "deals": 2,
        "entry_fee": 0,
        "prizes": "",
        "registration_opens_at": now - timedelta(hours=1),
        "starts_at": now + timedelta(hours=1),
    }
    values.update(fields)
    t = Tournament.objects.create(**values)
    people = [person(n) for n in names]
    for p in people:
        entries.register(p, t.pk, None)
    Tournament.objects.filter(pk=t.pk).update(starts_at=timezone.now() - timedelta(seconds=1))
    assert runner.advance(t.pk) == "started"
    Table.objects.filter(tournament=t).update(bot_level=FACIL)
    t.refresh_from_db()
    return t, people


def game_tables(t: Tournament, game: int = 1) -> list[Table]:
    return list(Table.objects.filter(tournament=t, tournament_game=game).order_by("tournament_number"))


def people_at(table: Table) -> list[Any]:
    return [s.user for s in Seat.objects.filter(table=table, is_bot=False).select_related("user")]


def client(user: Any) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def staff(name: str = "moderadora") -> Any:
    user = person(name)
    user.is_staff = user.is_superuser = True
    user.save()
    return user


def shown_messages(response: Any) -> list[str]:
    box = re.search(r'<ul class="messages">(.*?)</ul>', response.content.decode(), re.S)
    return [m.strip() for m in re.findall(r"<li[^>]*>(.*?)</li>", box.group(1), re.S)] if box else []


def cards_of(table: Table) -> set[str]:
    """Every card dealt at the table (its hands and turned trump cards)."""
    cards: set[str] = set()
    for hands, trump in Round.objects.filter(table=table).values_list("hands", "trump_card"):
        cards.update(c for hand in hands for c in hand)
        if trump:
            cards.add(trump)
    return cards


def deal_doors(user: Any, table: Table, round_number: int) -> dict[str, Any]:
    """What each door to a finished table's deals answers ``user``: the record, the replay, the analysis's
    status (answers), and whether asking for the analysis or «Juega esta mano» made anything (True: it did)."""
    browser = client(user)
    analysed = Analysis.objects.filter(table=table).exists()
    practised = Table.objects.filter(practice_of=table).count()
    doors: dict[str, Any] = {
        "record": browser.get(f"/mesa/{table.pk}/partida.json"),
        "replay": browser.get(f"/mesa/{table.pk}/repeticion/"),
        "status": browser.get(f"/mesa/{table.pk}/analisis/estado/"),
    }
    asked = browser.post(f"/mesa/{table.pk}/analizar/", follow=True)
    doors["analyse"] = Analysis.objects.filter(table=table).exists() and not analysed
    doors["analyse_page"] = asked
    played = browser.post(f"/mesa/{table.pk}/jugar-mano/", {"round": str(round_number)}, follow=True)
    doors["practice"] = Table.objects.filter(practice_of=table).count() > practised
    doors["practice_page"] = played
    return doors


def assert_kept_secret(user: Any, table: Table, round_number: int, *, player: bool) -> None:
    """Nothing of ``table``'s deals reaches ``user`` through any door, each refusal said in words."""
    cards = cards_of(table)
    doors = deal_doors(user, table, round_number)
    for name in ("record", "replay", "status"):
        response = doors[name]
        assert response.status_code == 403, (name, response.status_code)
        page = response.content.decode()
        assert SECRET in page and "Ver el torneo" in page, name
        assert "replay-record" not in page and '"hands"' not in page, name
    assert not doors["analyse"] and not doors["practice"]
    not_theirs = {
        "analyse_page": "Solo quienes jugaron la partida pueden pedir su análisis.",
        "practice_page": "Solo quien jugó en esa partida puede volver a jugar sus manos.",
    }
    for name, words in not_theirs.items():
        said = shown_messages(doors[name])
        assert said == [SECRET if player else words], (name, said)  # (not theirs to ask for: said so)
        page = doors[name].content.decode()
        assert "replay-record" not in page and '"hands"' not in page
    # and the table's own page: its players see their own final board (no hand on it, no way to the deals);
    # anyone else is refused
    response = client(user).get(f"/mesa/{table.pk}/")
    page = response.content.decode()
    if player:
        assert response.status_code == 200 and "Clasificación final" in page
        assert SECRET in page
        assert f"/mesa/{table.pk}/repeticion/" not in page and f"/mesa/{table.pk}/partida.json" not in page
        assert f"/mesa/{table.pk}/analizar/" not in page
    else:
        assert response.status_code == 403 and WATCH in page
        assert "Clasificación final" not in page
    named = {c for c in cards if re.search(rf'data-card="{re.escape(c)}"', page)}
    last = Round.objects.filter(table=table).order_by("number").last()
    last_trick = set(
        Move.objects.filter(table=table, round=last.number, kind=Move.Kind.PLAY)
        .order_by("-seq")
        .values_list("value", flat=True)[: table.size]
    )
    assert named <= (last_trick if player else set()), named  # (the last trick stays up on the felt)


def assert_open(user: Any, table: Table, round_number: int, *, player: bool) -> None:
    """Every door to ``table``'s deals answers ``user`` (the asking ones only to a player of the table)."""
    doors = deal_doors(user, table, round_number)
    record = json.loads(doors["record"].content)
    assert doors["record"].status_code == 200
    assert [r["hands"] for r in record["rounds"]] == list(
        Round.objects.filter(table=table).order_by("number").values_list("hands", flat=True)
    )
    assert doors["replay"].status_code == 200 and "replay-record" in doors["replay"].content.decode()
    assert doors["analyse"] == player and doors["practice"] == player
    assert client(user).get(f"/mesa/{table.pk}/").status_code == 200
    assert SECRET not in client(user).get(f"/mesa/{table.pk}/").content.decode()


# -- duplicate ---------------------------------------------------------------------------------------------


def test_a_duplicate_tables_deals_reach_nobody_until_every_table_has_played_them() -> None:
    t, _people = started()
    first, second = game_tables(t)
    play_to_the_end(first.pk)
    assert Table.objects.get(pk=second.pk).status == Table.Status.PLAYING
    first.refresh_from_db()
    # the same cards at both tables: what the first has played is what the second is playing
    assert (
        list(Round.objects.filter(table=first).values_list("number", "hands"))[:1]
        == list(Round.objects.filter(table=second).values_list("number", "hands"))[:1]
    )
    assert access.deals_secret(first) and access.deals_secret(second)
    stranger, moderator = person("extraña"), staff()
    mine, theirs = people_at(first)[0], people_at(second)[0]
    for user, player in ((stranger, False), (theirs, False), (moderator, False), (mine, True)):
        assert_kept_secret(user, first, 5, player=player)
    assert not Analysis.objects.exists() and not Table.objects.filter(practice_of__isnull=False).exists()
    # the table still playing: only its own people may look at it
    for user in (stranger, mine, moderator):
        response = client(user).get(f"/mesa/{second.pk}/")
        assert response.status_code == 403 and WATCH in response.content.decode()
    assert client(theirs).get(f"/mesa/{second.pk}/").status_code == 200
    # the tournament's page leads nobody to a table that is not theirs
    page = client(stranger).get(f"/torneos/{t.pk}/").content.decode()
    assert f'href="/mesa/{first.pk}/"' not in page and f'href="/mesa/{second.pk}/"' not in page
    assert "Se podrá mirar al terminar todas" in page
    page = client(mine).get(f"/torneos/{t.pk}/").content.decode()
    assert f'href="/mesa/{first.pk}/"' in page and f'href="/mesa/{second.pk}/"' not in page
    # the admin: no round, move or seed of either table
    admin = client(moderator)
    for table in (first, second):
        change = admin.get(f"/admin/games/table/{table.pk}/change/").content.decode()
        assert str(table.seed) not in change and "Repetición" not in change
        assert not [c for c in cards_of(table) if f">{c}<" in change]
        moves = admin.get(f"/admin/games/move/?table__id__exact={table.pk}").content.decode()
        assert "0 jugadas" in moves
    rounds = admin.get("/admin/games/round/").content.decode()
    for pk in Round.objects.filter(table__tournament=t).values_list("pk", flat=True):
        assert f"/admin/games/round/{pk}/change/" not in rounds
        assert admin.get(f"/admin/games/round/{pk}/change/").status_code == 302  # «does not exist»

    # the refusals in English
    english = client(stranger)
    english.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    said = english.get(f"/mesa/{first.pk}/repeticion/").content.decode()
    assert "The deals of this tournament game will be shown once all its tables have finished." in said
    said = english.get(f"/mesa/{second.pk}/").content.decode()
    assert "This tournament table can be watched once every table of the game has finished" in said
    # nor does a profile list the finished table (its points) yet
    profile = client(stranger).get(f"/jugador/{mine.get_username()}/").content.decode()
    assert f'data-table="{first.pk}"' not in profile and 'id="stat-games">0<' in profile
    # the standings count nothing of a deal a table still plays (a result tells of the cards) ...
    live = pages.read_tournament(t.pk)
    assert live is not None and len(live.standings) == 8
    assert all(line["played"] == 0 and line["points"] == 0 and line["score"] == 0 for line in live.standings)
    # ... and a deal once every table has finished it
    play_deal(second.pk)
    live = pages.read_tournament(t.pk)
    assert live is not None and [line["played"] for line in live.standings] == [1] * 8
    assert sum(line["score"] for line in live.standings) == 4.0  # one deal, four seats, two tables
    assert access.deals_secret(first)  # (the record waits for the whole game)

    # the last table finishes: everything at once, to everyone
    play_to_the_end(second.pk)
    assert not access.deals_secret(first) and not access.deals_secret(second)
    assert_open(stranger, first, 5, player=False)
    assert_open(theirs, first, 5, player=False)
    assert_open(mine, first, 5, player=True)
    page = client(stranger).get(f"/torneos/{t.pk}/").content.decode()
    assert f'href="/mesa/{first.pk}/"' in page and f'href="/mesa/{second.pk}/"' in page
    profile = client(stranger).get(f"/jugador/{mine.get_username()}/").content.decode()
    assert f'data-table="{first.pk}"' in profile and 'id="stat-games">1<' in profile
    change = admin.get(f"/admin/games/table/{first.pk}/change/").content.decode()
    assert "Repetición" in change
    rounds = admin.get("/admin/games/round/").content.decode()
    assert all(
        f"/admin/games/round/{pk}/change/" in rounds
        for pk in Round.objects.filter(table__tournament=t).values_list("pk", flat=True)
    )
    assert "0 jugadas" not in admin.get(f"/admin/games/move/?table__id__exact={first.pk}").content.decode()


def test_the_fair_play_flags_wait_for_every_table(monkeypatch: Any) -> None:
    """The staff's «Avisos de juego limpio»: nothing from a game a table is still playing, even with the par
    known and a result far from it; then the flags."""
    t, _people = started(flag_points=1)
    first, second = game_tables(t)
    play_to_the_end(first.pk)
    rounds = [int(n) for n in first.deals]
    # a par every person's result is far from (the worker's own is tested in test_tournaments)
    Tournament.objects.filter(pk=t.pk).update(
        par={"rounds": rounds, "points": [[1000] * 4 for _ in rounds]}, status=Tournament.Status.FINISHED
    )
    assert fairplay.flag(Tournament.objects.get(pk=t.pk)) == 0 and not Flag.objects.exists()
    Tournament.objects.filter(pk=t.pk).update(status=Tournament.Status.PLAYING)
    play_to_the_end(second.pk)
    assert runner.advance(t.pk) == "finished"
    assert Flag.objects.filter(tournament=t).count() == 2 * len(Seat.objects.filter(table__tournament=t, is_bot=False))
    flags = client(staff()).get("/admin/games/flag/").content.decode()
    assert all(f"/admin/games/flag/{pk}/change/" in flags for pk in Flag.objects.values_list("pk", flat=True))


# -- por puntos --------------------------------------------------------------------------------------------


def test_each_por_puntos_game_keeps_its_own_deals_until_its_tables_have_played_them() -> None:
    # (five people: a por-puntos game has as few tables as hold them, and this one two)
    t, _people = started(Tournament.Format.POINTS, ("ana", "bea", "carla", "dani", "eva"), games=2, deals=1)
    first, second = game_tables(t, 1)
    number = int(first.deals[0])
    play_to_the_end(first.pk)
    live = pages.read_tournament(t.pk)
    assert live is not None and all(line["played"] == 0 and line["score"] == 0 for line in live.standings)
    stranger = person("extraña")
    assert_kept_secret(stranger, first, number, player=False)
    assert_kept_secret(people_at(second)[0], first, number, player=False)
    assert_kept_secret(people_at(first)[0], first, number, player=True)
    play_to_the_end(second.pk)
    live = pages.read_tournament(t.pk)
    assert live is not None and {line["played"] for line in live.standings} == {1}
    assert runner.advance(t.pk) == "next_game"
    third, fourth = game_tables(t, 2)
    # the tables of one game share their deals; the games have deals of their own
    one = {table.pk: Round.objects.get(table=table).hands for table in (first, second, third, fourth)}
    assert one[first.pk] == one[second.pk] and one[third.pk] == one[fourth.pk] != one[first.pk]
    assert Table.objects.get(pk=third.pk).seed != first.seed
    Table.objects.filter(tournament=t).update(bot_level=FACIL)
    # the first game is over: its deals are everyone's, while the second game's are secret
    assert_open(stranger, first, number, player=False)
    play_to_the_end(third.pk)
    assert access.deals_secret(third) and not access.deals_secret(first)
    assert_kept_secret(stranger, third, number, player=False)
    assert_kept_secret(people_at(fourth)[0], third, number, player=False)
    assert_kept_secret(people_at(third)[0], third, number, player=True)
    play_to_the_end(fourth.pk)
    assert_open(stranger, third, number, player=False)
    assert_open(people_at(third)[0], third, number, player=True)


# -- chosen deals: the replay, the analysis, «Juega esta mano» ----------------------------------------------


def test_a_chosen_deals_table_replays_to_its_totals_is_analysed_and_practised() -> None:
    t, _people = started()
    first, second = game_tables(t)
    for table in (first, second):
        play_to_the_end(table.pk)
    first.refresh_from_db()
    assert first.deals == [5, 15]
    ana = people_at(first)[0]
    totals = [s.final_total for s in Seat.objects.filter(table=first).order_by("position")]
    response = client(person("extraña")).get(f"/mesa/{first.pk}/repeticion/")
    assert response.status_code == 200
    page = response.content.decode()
    data = json.loads(re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', page, re.S)[1])
    assert [r["number"] for r in data["rounds"]] == [5, 15]
    assert data["rounds"][-1]["totals"] == totals and data["total_rounds"] == 2
    record = json.loads(re.search(r'<script id="replay-record" type="application/json">(.*?)</script>', page, re.S)[1])
    assert record["rounds_played"] == [5, 15] and replay_record(record).as_json()["totals"] == totals
    assert "Ronda 15 de 19" in page and "Descargar la partida (pocha-record/2)" in page
    # the engine's command line checks the record the page holds, to the same totals
    checked = subprocess.run(
        [sys.executable, "-m", "games.engine", "replay", "-"],
        input=json.dumps(record),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(checked.stdout)["totals"] == totals
    # the analysis: asked by a player, worked out by the worker, shown by the schedule's numbers
    asked = client(ana).post(f"/mesa/{first.pk}/analizar/")
    assert asked.status_code == 302 and asked["Location"].endswith("/repeticion/#analisis")
    worker.work()
    analysis = Analysis.objects.get(table=first)
    assert analysis.status == Analysis.Status.DONE, analysis.error
    shown = client(ana).get(f"/mesa/{first.pk}/repeticion/").content.decode()
    assert "Por jugador" in shown
    by_round = re.search(r'<table class="scoreboard analysis-rounds">.*?</table>', shown, re.S)
    assert by_round is not None and re.findall(r'<tr data-round="(\d+)">', by_round[0]) == ["5", "15"]
    # «Juega esta mano» of round 15, and difícil's yardstick for it
    played = client(ana).post(f"/mesa/{first.pk}/jugar-mano/", {"round": "15"})
    new = Table.objects.get(practice_of=first)
    assert played["Location"] == f"/mesa/{new.pk}/"
    assert Round.objects.get(table=new).hands == Round.objects.get(table=first, number=15).hands
    worker.work()
    new.refresh_from_db()
    assert set(new.practice_baseline) == {"bid", "tricks", "points"}, new.practice_baseline
    finished = play_to_the_end(new.pk)
    assert finished.status == Table.Status.FINISHED
    assert "En la partida" in client(ana).get(f"/mesa/{new.pk}/").content.decode()


# -- a private table's analysis -----------------------------------------------------------------------------


def test_a_private_tables_analysis_counts_on_a_profile_only_for_those_who_may_see_it() -> None:
    ana, bea, stranger = person("ana"), person("bea"), person("extraña")
    table = actions.do_create_private_table(ana, 4, 0, True)
    actions.do_take_seat(table.pk, bea, code=table.code)
    actions.do_start(table.pk, ana, Table.objects.get(pk=table.pk).seq)
    play_to_the_end(table.pk)
    analyses.do_request(table.pk, ana)
    worker.work()
    assert Analysis.objects.get(table=table).status == Analysis.Status.DONE
    assert profiles.analysis_stats(ana.pk, ana)["games"] == 1
    assert profiles.analysis_stats(ana.pk, bea)["games"] == 1  # she sat there: she may see its replay
    assert profiles.analysis_stats(ana.pk, stranger) == {"games": 0, "accuracy": None, "average_loss": None}
    assert client(stranger).get(f"/mesa/{table.pk}/repeticion/").status_code == 404
    theirs = client(stranger).get("/jugador/ana/").content.decode()
    assert 'id="stat-accuracy">—' in theirs
    hers = client(bea).get("/jugador/ana/").content.decode()
    assert 'id="stat-accuracy">—' not in hers
