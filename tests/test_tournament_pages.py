"""The tournaments' pages through the site's own views and socket: the list and a tournament's page in each of its
states (registration open, not open yet, being played, finished with its prizes, cancelled), registering and
withdrawing through the page's forms (the fee moving, every refusal told and nothing changed), the board of a
tournament's table (which tournament, which deal, and «Clasificación del torneo» instead of «Revancha»), a
person's tournaments on their profile, the pages in English, and the page's socket drawing the standings again
once a table has finished a deal."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings as django_settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from live.helpers import Tab, person, play_to_the_end
from test_table_english import spanish_in

from accounts import ledger
from games.engine import default_action
from games.engine.levels import FACIL
from games.engine.snapshot import load
from games.models import Registration, Round, Seat, Table, Tournament
from games.read import tournaments as pages
from games.table import actions
from games.table.errors import ActionError
from games.tournaments import entries, runner

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick_bots(settings: Any) -> None:
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_ROUND_PAUSE = 0
    settings.POCHA_TRICK_PAUSE = 0


def tournament(**fields: Any) -> Tournament:
    now = timezone.now()
    values: dict[str, Any] = {
        "name": "Torneo del Casino",
        "size": 4,
        "places": 8,
        "deals": 2,
        "entry_fee": 100,
        "prizes": "50,30,20",
        "registration_opens_at": now - timedelta(hours=1),
        "starts_at": now + timedelta(hours=1),
    }
    values.update(fields)
    return Tournament.objects.create(**values)


def rich(name: str) -> Any:
    user = person(name)
    ledger.grant_welcome(user.pk)
    return user


def start_now(t: Tournament) -> None:
    Tournament.objects.filter(pk=t.pk).update(starts_at=timezone.now() - timedelta(seconds=1))
    assert runner.advance(t.pk) == "started"
    Table.objects.filter(tournament=t).update(bot_level=FACIL)  # quicker bots: what is looked at is the pages
    t.refresh_from_db()


def browser(user: Any = None, language: str = "es") -> Client:
    client = Client()
    client.cookies[django_settings.LANGUAGE_COOKIE_NAME] = language
    if user is not None:
        client.force_login(user)
    return client


def page_messages(response: Any) -> list[str]:
    """The messages the page shows (each once: a message is shown on the next page only)."""
    box = re.search(r'<ul class="messages">(.*?)</ul>', response.content.decode(), re.S)
    return [html.unescape(m).strip() for m in re.findall(r"<li[^>]*>(.*?)</li>", box.group(1), re.S)] if box else []


def section(page: str, element_id: str) -> str:
    """The HTML of the page's section with this id (the live parts are sections)."""
    match = re.search(rf'<section[^>]* id="{element_id}".*?</section>', page, re.S)
    assert match, f"no section #{element_id}"
    return match.group(0)


def text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def play_deal(table_id: int) -> None:
    """One deal of the table played to its end (people their default move, bots when due)."""
    done = Round.objects.filter(table_id=table_id, result__isnull=False).count()
    for _ in range(500):
        if Round.objects.filter(table_id=table_id, result__isnull=False).count() > done:
            return
        table = Table.objects.get(pk=table_id)
        assert table.status == Table.Status.PLAYING
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        if seat.is_bot or seat.away or seat.left:
            Table.objects.filter(pk=table_id).update(due_at=timezone.now() - timedelta(seconds=1))
            assert actions.do_due(table.pk, table.seq) is not None
        else:
            actions.do_action(table.pk, seat.user, default_action(load(table.state)), table.seq)
    raise AssertionError("the deal did not end")


def finished_tournament(fee: int = 100) -> tuple[Tournament, list[Any]]:
    """A duplicate tournament of three people (two tables), played to its end."""
    t = tournament(entry_fee=fee)
    people = [rich(n) for n in ("ana", "bea", "carla")]
    for p, address in zip(people, ("10.0.0.1", "10.0.0.1", "10.0.0.2"), strict=True):
        entries.register(p, t.pk, address)
    start_now(t)
    for table in Table.objects.filter(tournament=t):
        play_to_the_end(table.pk)
    assert runner.advance(t.pk) == "finished"
    t.refresh_from_db()
    return t, people


# -- words --------------------------------------------------------------------------------------------


def test_scores_are_written_with_halves() -> None:
    assert [pages.score_text(x) for x in (0, 0.5, 1, 2.5, 3.0, 10.5)] == ["0", "½", "1", "2½", "3", "10½"]
    assert pages.countdown_text(timezone.now() + timedelta(seconds=65.4), timezone.now()) in ("1:05", "1:04")
    now = timezone.now()
    assert pages.countdown_text(now + timedelta(hours=2, minutes=3, seconds=4), now) == "2:03:04"
    assert pages.countdown_text(now + timedelta(days=1, seconds=5), now) == "1 d 00:00:05"
    assert pages.countdown_text(now - timedelta(seconds=5), now) == "0:00"


# -- the list ----------------------------------------------------------------------------------------------


def test_the_list_shows_each_tournament_under_its_state_for_anyone() -> None:
    open_ = tournament(name="Abierto de otoño", entry_fee=0)
    later = tournament(
        name="El de Navidad",
        registration_opens_at=timezone.now() + timedelta(days=1),
        starts_at=timezone.now() + timedelta(days=2),
    )
    entries.register(rich("ana"), open_.pk, None)
    playing = tournament(name="Jugándose", entry_fee=0)
    for n in ("bea", "carla"):
        entries.register(person(n), playing.pk, None)
    start_now(playing)
    cancelled = tournament(name="Suspendido por lluvia")
    runner.cancel(cancelled.pk, "lluvia")
    response = browser().get("/torneos/")
    assert response.status_code == 200
    page = response.content.decode()
    upcoming = section(page, "tournaments-upcoming")
    assert "Abierto de otoño" in upcoming and "El de Navidad" in upcoming and "Jugándose" not in upcoming
    row = re.search(rf'<tr data-tournament="{open_.pk}".*?</tr>', upcoming, re.S)
    assert row is not None
    line = text(row.group(0))
    for words in ("Inscripción abierta", "Clásica", "duplicado", "mesas de 4", "2 manos", "gratis", "1 / 8"):
        assert words in line, (words, line)
    assert f'href="/torneos/{open_.pk}/"' in row.group(0)
    waiting = re.search(rf'<tr data-tournament="{later.pk}" data-state="not_open">.*?</tr>', upcoming, re.S)
    assert waiting is not None and "Inscripción aún cerrada" in text(waiting.group(0))
    assert "100 fichas" in text(waiting.group(0))
    assert "Jugándose" in section(page, "tournaments-playing")
    recent = section(page, "tournaments-recent")
    assert "Suspendido por lluvia" in recent and "Cancelado" in text(recent)
    # the site's navigation leads there from every page
    assert '<a href="/torneos/">Torneos</a>' in browser().get("/").content.decode()


# -- registering -----------------------------------------------------------------------------------------


def test_registering_and_withdrawing_through_the_page_move_the_fee() -> None:
    t = tournament(entry_fee=100)
    ana = rich("ana")
    anonymous = browser().get(f"/torneos/{t.pk}/").content.decode()
    state = section(anonymous, "tournament-state")
    assert "Entra con tu cuenta para inscribirte." in text(state) and "Inscribirme" not in state
    assert f'href="/accounts/login/?next=/torneos/{t.pk}/"' in state
    assert re.search(r'<time class="countdown" datetime="[^"]+" data-countdown="(\d+)">', state)
    assert f'ws-connect="/ws/torneo/{t.pk}/"' in anonymous and "/static/js/tournament.js" in anonymous

    client = browser(ana)
    page = client.get(f"/torneos/{t.pk}/").content.decode()
    form = re.search(r'<form method="post" action="([^"]+)"[^>]*>(?:(?!</form>).)*>Inscribirme</button>', page, re.S)
    assert form is not None and form.group(1) == f"/torneos/{t.pk}/inscribirse/"
    response = client.post(form.group(1), REMOTE_ADDR="10.1.2.3")
    assert response.status_code == 302 and response["Location"] == f"/torneos/{t.pk}/"
    registration = Registration.objects.get(tournament=t, user=ana)
    assert registration.address == "10.1.2.3" and registration.paid == 100
    assert ledger.balance(ana.pk) == 4900 and ledger.pool_account(t.pk).balance == 100
    response = client.get(f"/torneos/{t.pk}/")
    assert page_messages(response) == ["Te has inscrito en «Torneo del Casino»."]
    page = response.content.decode()
    state = text(section(page, "tournament-state"))
    assert "Estás inscrito." in state and "Retirarme" in state and "Inscribirme" not in state
    assert "Plazas: 1 de 8" in state
    assert "ana" in text(section(page, "tournament-players"))
    prizes = section(page, "tournament-prizes")  # 50/30/20 of the 100 chips in the pool
    assert [text(cell) for cell in re.findall(r'<td class="num">([^<]*)</td></tr>', prizes)] == ["50", "30", "20"]

    # an htmx post (the page's forms, also when drawn by its socket): the same, then the page loads itself
    response = client.post(f"/torneos/{t.pk}/retirarse/", HTTP_HX_REQUEST="true")
    assert response.status_code == 204 and response["HX-Redirect"] == f"/torneos/{t.pk}/"
    assert not Registration.objects.filter(tournament=t).exists()
    assert ledger.balance(ana.pk) == 5000 and ledger.pool_account(t.pk).balance == 0
    page = client.get(f"/torneos/{t.pk}/")
    assert page_messages(page) == ["Te has retirado del torneo."]
    assert "Inscribirme" in section(page.content.decode(), "tournament-state")
    assert ledger.audit() == []


def test_every_refusal_is_told_and_changes_nothing() -> None:
    t = tournament(entry_fee=100, places=4)
    ana = rich("ana")
    client = browser(ana)
    assert client.post(f"/torneos/{t.pk}/inscribirse/").status_code == 302
    client.get(f"/torneos/{t.pk}/")  # (its message shown)
    # twice (a second tab, a double click)
    response = client.post(f"/torneos/{t.pk}/inscribirse/", follow=True)
    assert page_messages(response) == ["Ya estás inscrito en este torneo."]
    assert Registration.objects.filter(tournament=t).count() == 1 and ledger.balance(ana.pk) == 4900
    # withdrawing from one they are not in
    other = tournament(name="Otro")
    response = client.post(f"/torneos/{other.pk}/retirarse/", follow=True)
    assert page_messages(response) == ["No estás inscrito en este torneo."]
    # an unknown tournament: told, and back to the list (its page is a 404)
    response = client.post("/torneos/999999/inscribirse/", follow=True)
    assert response.redirect_chain[-1][0] == "/torneos/" and page_messages(response) == ["Ese torneo no existe."]
    assert client.get("/torneos/999999/").status_code == 404
    assert client.get("/torneos/abc/").status_code == 404
    # the writes are POST only, with the CSRF token, and for people logged in
    assert client.get(f"/torneos/{t.pk}/inscribirse/").status_code == 405
    assert client.get(f"/torneos/{t.pk}/retirarse/").status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(rich("beto"))
    assert strict.post(f"/torneos/{t.pk}/inscribirse/").status_code == 403
    anonymous = browser().post(f"/torneos/{t.pk}/inscribirse/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    assert Registration.objects.filter(tournament=t).count() == 1
    # not enough chips
    dear = tournament(name="Caro", entry_fee=6000)
    response = client.post(f"/torneos/{dear.pk}/inscribirse/", follow=True, REMOTE_ADDR="10.0.0.5")
    assert page_messages(response) == ["No tienes fichas suficientes: tienes 4900 y la inscripción cuesta 6000."]
    assert not Registration.objects.filter(tournament=dear).exists() and ledger.balance(ana.pk) == 4900
    # full
    for n in ("bea", "carla", "dario"):
        entries.register(rich(n), t.pk, None)
    eva = rich("eva")
    page = browser(eva).get(f"/torneos/{t.pk}/").content.decode()
    assert "El torneo está completo." in text(section(page, "tournament-state")) and "Inscribirme" not in page
    response = browser(eva).post(f"/torneos/{t.pk}/inscribirse/", follow=True, REMOTE_ADDR="10.0.0.6")
    assert page_messages(response) == ["Este torneo está completo."]
    # a page drawn before the start, posted after it (stale): told, nothing changes
    Tournament.objects.filter(pk=t.pk).update(starts_at=timezone.now() - timedelta(seconds=1))
    response = client.post(f"/torneos/{t.pk}/retirarse/", follow=True)
    assert response.status_code == 200
    registered = Registration.objects.filter(tournament=t).count()
    response = browser(eva).post(f"/torneos/{t.pk}/inscribirse/", follow=True, REMOTE_ADDR="10.0.0.6")
    assert page_messages(response) == ["Este torneo ya ha empezado: la inscripción está cerrada."]
    assert Registration.objects.filter(tournament=t).count() == registered
    assert ledger.balance(eva.pk) == 5000 and ledger.audit() == []
    # registration not open yet
    later = tournament(
        registration_opens_at=timezone.now() + timedelta(days=1), starts_at=timezone.now() + timedelta(days=2)
    )
    page = browser(eva).get(f"/torneos/{later.pk}/").content.decode()
    assert "La inscripción aún no está abierta." in text(section(page, "tournament-state"))
    response = browser(eva).post(f"/torneos/{later.pk}/inscribirse/", follow=True)
    assert page_messages(response) == ["La inscripción de este torneo aún no está abierta."]


# -- playing, finished, cancelled ------------------------------------------------------------------------------


def test_a_playing_tournament_shows_its_tables_and_standings_that_move_with_each_deal() -> None:
    t = tournament(entry_fee=0)
    ana, bea, carla = (person(n) for n in ("ana", "bea", "carla"))
    for p in (ana, bea, carla):
        entries.register(p, t.pk, None)
    start_now(t)
    tables = list(Table.objects.filter(tournament=t).order_by("tournament_number"))
    mine = next(x for x in tables if Seat.objects.filter(table=x, user=ana).exists())
    page = browser(ana).get(f"/torneos/{t.pk}/").content.decode()
    state = text(section(page, "tournament-state"))
    assert "En juego" in state and f"Juegas en la mesa {mine.pk}." in state
    listed = section(page, "tournament-tables")
    assert "hidden" not in listed.split(">", 1)[0]
    rows = re.findall(r'<tr data-table="(\d+)"[^>]*>(.*?)</tr>', listed, re.S)
    assert [int(pk) for pk, _row in rows] == [x.pk for x in tables]
    for pk, row in rows:
        assert "mano 1 de 2" in text(row)
        assert ("Tu mesa" in row) == (int(pk) == mine.pk)
        # while the game is played, only one's own table may be watched (they all play the same cards)
        assert (f'href="/mesa/{pk}/">Ver la mesa</a>' in row) == (int(pk) == mine.pk)
        assert ("Se podrá mirar al terminar todas" in row) == (int(pk) != mine.pk)
    assert text(row).count("bot") >= 2
    standings = section(page, "tournament-standings")
    assert "Clasificación del torneo" in standings and "En directo" in text(standings)
    lines = re.findall(r'<tr data-name="([^"]+)" data-score="([^"]+)"', standings)
    assert len(lines) == 8 and {"ana", "bea", "carla"} <= {name for name, _score in lines}
    assert standings.count("bot-tag") == 5
    assert 'class="me" aria-current="true"' in standings
    # the players' list is for before the start
    assert " hidden" in section(page, "tournament-players").split(">", 1)[0]

    play_deal(tables[0].pk)
    play_deal(tables[1].pk)  # deal 1 at both tables: scored seat by seat
    page = browser().get(f"/torneos/{t.pk}/").content.decode()
    shown = re.findall(r'<tr data-name="([^"]+)" data-score="([^"]+)"', section(page, "tournament-standings"))
    expected = runner.current_standings(Tournament.objects.get(pk=t.pk))
    assert sum(float(score) for _name, score in shown) == 4.0  # one deal, four seats, two tables: 1 point a seat
    assert [(name, float(score)) for name, score in shown] == [(line.name, line.score) for line in expected]
    assert "mano 2 de 2" in text(section(page, "tournament-tables"))


def test_a_por_puntos_tournament_shows_its_game_and_position_points() -> None:
    t = tournament(format=Tournament.Format.POINTS, games=2, deals=1, entry_fee=0, places=8)
    people = [person(f"p{i}") for i in range(5)]
    for p in people:
        entries.register(p, t.pk, None)
    start_now(t)
    for table in Table.objects.filter(tournament=t, tournament_game=1):
        play_to_the_end(table.pk)
    assert runner.advance(t.pk) == "next_game"
    Table.objects.filter(tournament=t).update(bot_level=FACIL)
    page = browser(people[0]).get(f"/torneos/{t.pk}/").content.decode()
    assert "Partida 2 de 2." in text(section(page, "tournament-state"))
    listed = section(page, "tournament-tables")
    assert "Mesas de la partida 2" in text(listed)
    second = list(Table.objects.filter(tournament=t, tournament_game=2).values_list("pk", flat=True))
    assert sorted(int(pk) for pk in re.findall(r'<tr data-table="(\d+)"', listed)) == sorted(second)
    assert "mano 1 de 1" in text(listed)
    standings = section(page, "tournament-standings")
    assert ">Partidas</th>" in standings and ">Puntuación</th>" in standings
    expected = runner.current_standings(Tournament.objects.get(pk=t.pk))
    shown = re.findall(r'<tr data-name="([^"]+)" data-score="([^"]+)"', standings)
    assert [(name, float(score)) for name, score in shown] == [(line.name, line.score) for line in expected]
    people_lines = [line for line in standings_of(page) if line[0].startswith("p")]
    assert len(people_lines) == 5 and all(played == 1 for _name, _score, played in people_lines)


def test_a_finished_tournament_shows_the_final_standings_with_the_prizes() -> None:
    t, people = finished_tournament(fee=100)
    page = browser(people[0]).get(f"/torneos/{t.pk}/").content.decode()
    state = text(section(page, "tournament-state"))
    registration = Registration.objects.get(tournament=t, user=people[0])
    assert "Terminado" in state and f"Has quedado {registration.place}.º de 3 personas." in state
    standings = section(page, "tournament-standings")
    assert "Definitiva." in text(standings) and 'data-final="1"' in standings and ">Premio</th>" in standings
    paid = {r.user.username: r.prize for r in Registration.objects.filter(tournament=t).select_related("user")}
    assert sum(paid.values()) == 300
    for name, prize in paid.items():
        row = re.search(rf'<tr data-name="{name}".*?</tr>', standings, re.S)
        assert row is not None and re.findall(r"<td[^>]*>([^<]*)</td>\s*</tr>", row.group(0))[-1].strip() == str(prize)
    for line in t.results or []:
        assert f'data-score="{line["score"]}"' in standings
    prizes = section(page, "tournament-prizes")  # 50/30/20 of the 300 chips of the entries
    assert re.findall(r'<td class="num">(\d+)</td></tr>', prizes) == ["150", "90", "60"]
    # the last game's tables stay, to look at their final boards
    assert text(section(page, "tournament-tables")).count("terminada") == 2


def test_a_cancelled_tournament_says_so_and_that_the_entries_went_back() -> None:
    t = tournament(entry_fee=100)
    ana = rich("ana")
    entries.register(ana, t.pk, None)
    runner.cancel(t.pk, "poca gente")
    page = browser(ana).get(f"/torneos/{t.pk}/").content.decode()
    state = text(section(page, "tournament-state"))
    assert "Torneo cancelado · Motivo: poca gente" in state and "Se han devuelto las inscripciones." in state
    assert "Inscribirme" not in state and "Retirarme" not in state
    assert ledger.balance(ana.pk) == 5000


# -- the board and the profile ---------------------------------------------------------------------------------


def test_a_tournament_table_says_which_tournament_and_deal_and_has_no_rematch() -> None:
    t = tournament(entry_fee=0, name="Copa Pocha")
    ana, bea = person("ana"), person("bea")
    for p in (ana, bea):
        entries.register(p, t.pk, None)
    start_now(t)
    table = Table.objects.get(tournament=t, seats__user=ana)
    page = browser(ana).get(f"/mesa/{table.pk}/").content.decode()
    line = re.search(r'<p class="stake-line tournament-line"[^>]*>.*?</p>', page, re.S)
    assert line is not None
    assert f'<a href="/torneos/{t.pk}/">Copa Pocha</a>' in line.group(0)
    assert text(line.group(0)) == "Torneo: Copa Pocha · Mano 1 de 2"
    play_deal(table.pk)
    page = browser(ana).get(f"/mesa/{table.pk}/").content.decode()
    assert "Mano 2 de 2" in page
    play_to_the_end(table.pk)
    page = browser(ana).get(f"/mesa/{table.pk}/").content.decode()
    assert "Clasificación final" in page
    assert f'href="/torneos/{t.pk}/#tournament-standings">Clasificación del torneo</a>' in page
    assert "Revancha" not in page
    with pytest.raises(ActionError) as refused:
        actions.do_offer_rematch(table.pk, ana)
    assert refused.value.code == "tournament_table"
    assert not Table.objects.filter(rematch_of=table).exists()
    response = browser(ana).post(f"/mesa/{table.pk}/revancha/", follow=True)
    assert page_messages(response) == ["Una mesa de torneo no tiene revancha: mira la clasificación del torneo."]


def test_the_profile_lists_the_persons_tournaments() -> None:
    t, people = finished_tournament(fee=100)
    upcoming = tournament(name="El siguiente", entry_fee=0)
    entries.register(people[0], upcoming.pk, None)
    page = browser(people[1]).get("/jugador/ana/").content.decode()
    listed = section(page, "tournaments")
    rows = re.findall(r'<tr data-tournament="(\d+)">(.*?)</tr>', listed, re.S)
    assert [int(pk) for pk, _row in rows] == [upcoming.pk, t.pk]  # the latest first
    registration = Registration.objects.get(tournament=t, user=people[0])
    done = text(rows[1][1])
    assert f'href="/torneos/{t.pk}/"' in rows[1][1] and "Torneo del Casino" in done
    assert f"{registration.place}.º de 3" in done and pages.score_text(registration.score) in done
    assert (str(registration.prize) in done) if registration.prize else done.endswith("0")
    assert "Inscripción abierta" in text(rows[0][1])
    nobody = section(browser(people[1]).get("/jugador/bea/").content.decode(), "tournaments")
    assert "Torneo del Casino" in nobody
    assert "Todavía no se ha inscrito" in section(
        browser(people[1]).get(f"/jugador/{person('dario').username}/").content.decode(), "tournaments"
    )


# -- English --------------------------------------------------------------------------------------------------


def test_the_tournament_pages_read_in_english() -> None:
    t, people = finished_tournament(fee=100)
    open_ = tournament(name="Open", entry_fee=50)
    cancelled = tournament(name="Called off")
    runner.cancel(cancelled.pk, "")
    names = ("Torneo del Casino", "Open", "Called off", "ana", "bea", "carla", *(f"Bot {n}" for n in BOT_NAMES))
    english = browser(people[0], "en")
    for path in (
        "/torneos/",
        f"/torneos/{t.pk}/",
        f"/torneos/{open_.pk}/",
        f"/torneos/{cancelled.pk}/",
        "/jugador/ana/",
    ):
        page = english.get(path).content.decode()
        assert spanish_in(page, names) == [], path
    anonymous = browser(None, "en").get(f"/torneos/{open_.pk}/").content.decode()
    assert spanish_in(anonymous, names) == [] and "Log in to register." in anonymous
    table = Table.objects.filter(tournament=t).first()
    assert table is not None
    board = english.get(f"/mesa/{table.pk}/").content.decode()
    assert "Tournament standings" in board and "Hand 2 of 2" in board


BOT_NAMES = ("Lola", "Paco", "Carmen", "Manolo", "Pilar", "Curro", "Rocío", "Pepe")


# -- the reads' cost ------------------------------------------------------------------------------------------


def test_a_tournament_is_read_in_two_or_three_queries() -> None:
    t = tournament(entry_fee=100)
    people = [rich(n) for n in ("ana", "bea", "carla")]
    for p in people:
        entries.register(p, t.pk, None)
    with CaptureQueriesContext(connection) as before_start:
        rows = pages.read_tournament(t.pk)
    assert len(before_start) == 2 and rows is not None and rows.pool == 300 and len(rows.registrations) == 3
    start_now(t)
    with CaptureQueriesContext(connection) as playing:
        rows = pages.read_tournament(t.pk)
    assert len(playing) == 3 and rows is not None and len(rows.standings) == 8
    with CaptureQueriesContext(connection) as drawing:
        pages.render_live(rows, people[0].pk, "es")
    assert len(drawing) == 0
    assert pages.read_tournament(999999) is None


# -- the socket ------------------------------------------------------------------------------------------------


@pytest.fixture
def fresh_channel_layer() -> Iterator[None]:
    """As in tests/live: every test runs on a new event loop, so each gets its own channel layer."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture
async def server_connections_closed() -> Any:
    """As in tests/live: the connections the consumers' database threads kept open are closed at the end."""
    yield
    from django.db import connections

    from games.live import hotpath

    await database_sync_to_async(connections.close_all)()
    hotpath.shutdown()


def standings_of(frame: str) -> list[tuple[str, float, int]]:
    """(name, score, deals played) of each line of the standings in a frame (two bots may share a name)."""
    part = section(frame, "tournament-standings")
    found = []
    for name, score, row in re.findall(r'<tr data-name="([^"]+)" data-score="([^"]+)"[^>]*>(.*?)</tr>', part, re.S):
        cells = re.findall(r'<td class="num[^"]*">([^<]*)</td>', row)
        found.append((name, float(score), int(cells[3])))  # place, place among people, score, played
    return found


@pytest.mark.django_db(transaction=True)
async def test_the_pages_socket_draws_the_standings_again_when_a_table_finishes_a_deal(
    fresh_channel_layer: None, server_connections_closed: None, settings: Any
) -> None:
    settings.POCHA_BOT_DELAY = 30  # nothing moves by itself: the test plays every move

    def setup() -> tuple[int, list[int], Any]:
        t = tournament(entry_fee=0)
        ana, bea = person("ana"), person("bea")
        for p in (ana, bea):
            entries.register(p, t.pk, None)
        start_now(t)
        return (
            t.pk,
            list(Table.objects.filter(tournament=t).order_by("tournament_number").values_list("pk", flat=True)),
            ana,
        )

    tournament_id, table_ids, ana = await database_sync_to_async(setup)()
    path = f"/ws/torneo/{tournament_id}/"
    watcher, player = Tab(None, 0), Tab(ana, 0)
    try:
        assert await watcher.open(path=path) and await player.open(path=path)
        for tab in (watcher, player):
            await tab.wait_for(lambda tab=tab: bool(tab.frames))
            first = tab.frames[0]
            for part in ("tournament-state", "tournament-prizes", "tournament-players", "tournament-tables"):
                assert re.search(rf'<section id="{part}"[^>]*hx-swap-oob="true"', first), part
            assert len(standings_of(first)) == 8 and all(played == 0 for _n, _s, played in standings_of(first))
        assert "Tu mesa" in player.frames[0] and "Tu mesa" not in watcher.frames[0]
        assert "Inscribirme" not in watcher.frames[0]
        seen = len(watcher.frames), len(player.frames)

        await database_sync_to_async(play_deal)(table_ids[0])
        finished_at = asyncio.get_running_loop().time()
        for tab, count in zip((watcher, player), seen, strict=True):
            await tab.wait_for(lambda tab=tab, count=count: len(tab.frames) > count, timeout=2)
            assert asyncio.get_running_loop().time() - finished_at < 2
            # the other table still plays that deal: its results are not counted yet (they tell of its cards)
            standings = standings_of(tab.frames[-1])
            assert len(standings) == 8 and all(played == 0 for _name, _score, played in standings)
            assert "mano 2 de 2" in text(section(tab.frames[-1], "tournament-tables"))
        # the same rows are not drawn twice: nothing more came for that one change
        await asyncio.sleep(0.6)
        assert len(watcher.frames) == seen[0] + 1
        # the deal finished at both tables: now it counts, seat by seat
        await database_sync_to_async(play_deal)(table_ids[1])
        for tab in (watcher, player):
            await tab.wait_for(
                lambda tab=tab: [played for _name, _score, played in standings_of(tab.frames[-1])] == [1] * 8,
                timeout=2,
            )
    finally:
        for tab in (watcher, player):
            await tab.close()


@pytest.mark.django_db(transaction=True)
async def test_an_unknown_tournaments_socket_is_closed(
    fresh_channel_layer: None, server_connections_closed: None
) -> None:
    tab = Tab(None, 0)
    try:
        assert await tab.open(path="/ws/torneo/999999/")
        await tab.wait_for(lambda: tab.closed is not None)
        assert tab.closed == 4404 and tab.frames == []
    finally:
        await tab.close()


@pytest.mark.django_db(transaction=True)
async def test_a_page_opened_before_registration_opens_shows_it_open_when_it_does(
    fresh_channel_layer: None, server_connections_closed: None
) -> None:
    """Nothing in the rows changes when registration opens, only the time: the page's socket draws it again then."""

    def setup() -> tuple[int, Any]:
        t = tournament(entry_fee=0)
        Tournament.objects.filter(pk=t.pk).update(registration_opens_at=timezone.now() + timedelta(seconds=1.5))
        return t.pk, person("clara")

    tournament_id, clara = await database_sync_to_async(setup)()
    tab = Tab(clara, 0)
    try:
        assert await tab.open(path=f"/ws/torneo/{tournament_id}/")
        await tab.wait_for(lambda: bool(tab.frames))
        first = section(tab.frames[0], "tournament-state")
        assert "La inscripción se abre el" in first and "Inscribirme" not in first
        await tab.wait_for(lambda: len(tab.frames) > 1, timeout=5)
        opened = section(tab.frames[-1], "tournament-state")
        assert "Inscripción abierta hasta el" in opened and "Inscribirme" in opened
        await asyncio.sleep(0.5)
        assert len(tab.frames) == 2  # drawn once when it opened, and nothing more
    finally:
        await tab.close()
