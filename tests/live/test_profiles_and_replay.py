"""Player profiles and the finished game's replay, through the real HTTP views.

Games are played to the end quickly through ``games.table.actions`` (people by their default move, bots by
their due step), then the pages are read as a browser would: the profile's numbers against what the
engine says happened, the replay's embedded record and no-script summary against the stored rows.
"""

from __future__ import annotations

import html
import json
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.templatetags.chips import format_chips
from games.engine import replay
from games.models import Move, Round, Seat, Table
from games.table import actions, history
from leaderboard.models import PeriodScore

from .helpers import person, play_to_the_end

pytestmark = [pytest.mark.django_db]


@pytest.fixture(autouse=True)
def quick_bots(settings) -> None:
    settings.POCHA_BOT_DELAY = 0


def browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def embedded(text: str, element_id: str) -> Any:
    match = re.search(f'<script id="{element_id}" type="application/json">(.*?)</script>', text, re.S)
    assert match, element_id
    return json.loads(match.group(1))


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def by_id(text: str, element_id: str) -> str:
    match = re.search(f'id="{element_id}"[^>]*>(.*?)</(dd|p)>', text, re.S)
    assert match, element_id
    return text_of(match.group(1))


def recent_tables(text: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr data-table="(\d+)">', text)]


def public_quick_game(users: list[Any], stake: int) -> Table:
    """A public quick table of three people that starts when the last one sits, played to the end."""
    tables = {actions.do_quick_play(user, len(users), stake).pk for user in users}
    assert len(tables) == 1
    table_id = tables.pop()
    assert Table.objects.get(pk=table_id).status == Table.Status.PLAYING
    play_to_the_end(table_id)
    return Table.objects.get(pk=table_id)


def private_game_with_bots(host: Any) -> Table:
    table = actions.do_create_private_table(host, 3, 0, bots_allowed=True)
    actions.do_start(table.pk, host)
    return Table.objects.get(pk=table.pk)


def expected_numbers(user: Any) -> dict[str, Any]:
    """What the engine says of a player's finished games, replaying their logs (not the seats' kept counts)."""
    games = wins = rounds = exact = points = 0
    for seat in Seat.objects.filter(user=user, table__status=Table.Status.FINISHED).select_related("table"):
        game = replay(history.record(seat.table)).game
        assert game.is_over
        games += 1
        wins += seat.position in (game.winners() or [])
        for result in game.results:
            if result.bids[seat.position] is not None:
                rounds += 1
                exact += result.bids[seat.position] == result.tricks[seat.position]
        points += game.totals[seat.position]
    return {"games": games, "wins": wins, "rounds": rounds, "exact": exact, "points": points}


def test_a_profile_counts_every_finished_game_and_lists_only_games_the_viewer_may_see(django_user_model) -> None:
    ana, bea, carla, olga = (person(n) for n in ("ana", "bea", "carla", "olga"))
    boss = django_user_model.objects.create_user(username="jefa", password=None, is_staff=True)
    public = public_quick_game([ana, bea, carla], stake=100)
    private = private_game_with_bots(ana)
    play_to_the_end(private.pk)
    unfinished = private_game_with_bots(ana)  # still playing: counts nowhere yet

    numbers = expected_numbers(ana)
    assert numbers["games"] == 2 and numbers["rounds"] > 0
    own = page(browser(ana), "/jugador/ana/")
    assert by_id(own, "stat-games") == "2"
    assert by_id(own, "stat-wins") == str(numbers["wins"])
    percent = (Decimal(100 * numbers["exact"]) / Decimal(numbers["rounds"])).quantize(Decimal("0.1"), ROUND_HALF_UP)
    shown = f"{percent:f}".removesuffix(".0").replace(".", ",")  # floatformat:"-1" drops a ",0"
    assert by_id(own, "stat-exact").startswith(shown + " %")
    assert f"({numbers['exact']} de {numbers['rounds']} rondas)" in by_id(own, "stat-exact")
    # one decimal, rounded half up as the page's floatformat does (6.25 → 6,3, where f"{6.25:.1f}" gives 6.2)
    mean = (Decimal(numbers["points"]) / Decimal(numbers["rounds"])).quantize(Decimal("0.1"), ROUND_HALF_UP)
    assert by_id(own, "stat-points") == f"{mean}".replace(".", ",")
    assert "también las de mesas privadas" in own

    # Chips: the rankings' totals, which only the public quick game moved.
    seat = Seat.objects.get(table=public, user=ana)
    net = seat.winnings - 100
    for period in ("week", "month", "all"):
        assert by_id(own, f"net-{period}") == (("+" if net > 0 else "") + format_chips(net, "es"))
    # a place is claimed only from a ranking she came out of ahead (tests/test_profile_place.py)
    best = min(PeriodScore.objects.filter(user=ana, net__gt=0).values_list("best_position", flat=True), default=None)
    if best is None:
        assert by_id(own, "best-position") == "Mejor puesto alcanzado: todavía ninguno"
    else:
        assert by_id(own, "best-position").startswith(f"Mejor puesto alcanzado: {best}.º en la clasificación")

    # The private game's row is shown to those who sat there and to staff, never to anyone else,
    # though everyone sees the same numbers.
    assert recent_tables(own) == [private.pk, public.pk]
    assert f'href="/mesa/{private.pk}/repeticion/"' in own and f'href="/mesa/{public.pk}/repeticion/"' in own
    assert unfinished.pk not in recent_tables(own)
    # The same few queries however many games there are (one for bea, two for ana); «Nivel» is one of them, one is
    # the site's notice of a started tournament and one its invitation banner (every page's, for a person logged
    # in), and two say how the viewer stands with the player (follows, blocks: «Seguir», «Bloquear»).
    boss_browser = browser(boss)
    counts = []
    for name in ("bea", "ana"):
        with CaptureQueriesContext(connection) as queries:
            page(boss_browser, f"/jugador/{name}/")
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 18, counts
    for viewer, tables in ((bea, [public.pk]), (olga, [public.pk]), (boss, [private.pk, public.pk])):
        seen = page(browser(viewer), "/jugador/ana/")
        assert recent_tables(seen) == tables, viewer
        assert by_id(seen, "stat-games") == "2"
        assert f"/mesa/{private.pk}/" not in seen or viewer is boss
    # The row of the public game: place, points and chips won or lost.
    row = re.search(rf'<tr data-table="{public.pk}">(.*?)</tr>', own, re.S).group(1)
    assert f"{seat.place}.º de 3" in text_of(row) and f">{seat.final_total}<" in row
    # ... and, last, the analysis: theirs to ask for (they played it), none yet
    assert text_of(row).endswith(("+" if net > 0 else "") + format_chips(net, "es") + " Analizar la partida")

    # A player with no finished game yet: dashes, zeros, no rows; the header links to one's profile.
    fresh = page(browser(olga), "/jugador/olga/")
    assert by_id(fresh, "stat-games") == "0" and by_id(fresh, "stat-exact") == "—"
    assert by_id(fresh, "net-all") == "0" and recent_tables(fresh) == []
    assert 'class="who" href="/jugador/olga/"' in fresh
    assert re.search(r'id="chips-amount" data-chips="\d+">[\d.]+</span>', fresh)  # the header's own chips


def test_an_unknown_player_is_a_404_and_a_name_in_other_capitals_finds_the_player(settings) -> None:
    marisa = person("Marisa")
    client = browser(marisa)
    assert client.get("/jugador/nadie/").status_code == 404
    response = client.get("/jugador/marisa/")
    assert response.status_code == 302 and response["Location"] == "/jugador/Marisa/"
    settings.DEBUG = False
    assert client.get("/jugador/nadie/").status_code == 404
    assert client.get("/jugador/Marisa/").status_code == 200


def test_the_replay_is_the_stored_game_and_only_for_those_who_may_see_it(django_user_model) -> None:
    ana, olga = person("ana"), person("olga")
    boss = django_user_model.objects.create_user(username="jefa", password=None, is_staff=True)
    table = private_game_with_bots(ana)
    url = f"/mesa/{table.pk}/repeticion/"
    assert browser(ana).get(url).status_code == 404  # while playing: every hand is in it
    play_to_the_end(table.pk)
    table = Table.objects.get(pk=table.pk)
    assert table.status == Table.Status.FINISHED
    assert browser(olga).get(url).status_code == 404  # a private table is, to anyone else, not there
    assert browser(olga).get("/mesa/999999/repeticion/").status_code == 404
    assert browser(boss).get(url).status_code == 200
    text = page(browser(ana), url)

    # The embedded record is the game's log, every hand of every seat included.
    record = embedded(text, "replay-record")
    seats = list(Seat.objects.filter(table=table))
    assert record["format"] == "pocha-record/1"
    assert record["players"] == [s.name for s in seats]
    assert record["first_dealer"] == table.first_dealer
    rounds = list(Round.objects.filter(table=table).order_by("number"))
    assert len(record["rounds"]) == len(rounds) == table.round_number
    for entry, row in zip(record["rounds"], rounds):
        moves = list(Move.objects.filter(table=table, round=row.number).order_by("seq"))
        assert entry["hands"] == row.hands and len(entry["hands"]) == table.size
        assert entry["trump_card"] == row.trump_card
        trump = [m.value for m in moves if m.kind == Move.Kind.TRUMP]
        assert entry.get("trump_suit") == (trump[0] if row.trump_card is None else None)
        assert entry["bids"] == [int(m.value) for m in moves if m.kind == Move.Kind.BID]
        plays = [(m.seat, m.value) for m in moves if m.kind == Move.Kind.PLAY]
        assert entry["plays"] == [card for _seat, card in plays]
        assert sorted(entry["plays"]) == sorted(c for hand in entry["hands"] for c in hand)  # every card dealt shown

        # What the script is told beyond the record: who played each card, who won each trick (each
        # trick's winner leads the next one), and the round's tricks and points as kept on its row.
        data = embedded(text, "replay-data")["rounds"][row.number - 1]
        assert data["play_seats"] == [seat for seat, _card in plays]
        players = len([hand for hand in row.hands if hand])
        leaders = [plays[i][0] for i in range(players, len(plays), players)]
        assert data["trick_winners"][:-1] == leaders
        assert data["points"] == row.result["points"]
        won = [data["trick_winners"].count(p) for p in range(table.size)]
        assert [w if t is not None else None for w, t in zip(won, row.result["tricks"])] == row.result["tricks"]

    # The summary needs no script: each round's points, and the totals, as stored.
    for row in rounds:
        cells = re.search(rf'<tr data-round="{row.number}">(.*?)</tr>', text, re.S).group(1)
        assert [int(p) for p in re.findall(r'data-points="(-?\d+)"', cells)] == row.result["points"]
        # the trump marked with the deck's own suit picture, never a French symbol
        suit = row.result["trump_suit"]
        assert f'class="suit-mark suit-{suit}"' in cells and not set("♥♣♠♦✹⚔") & set(cells)
    # the script's trump line takes the same pictures, one template per suit
    for suit in "oceb":
        assert f'<template data-suit-mark="{suit}"><svg class="suit-mark suit-{suit}"' in text
    totals = [int(t) for t in re.findall(r'data-total="(-?\d+)"', text)]
    assert totals == [s.final_total for s in seats]
    # Every card the replay can draw is the board's own card markup, named in words.
    assert 'template data-card="' in text and 'class="card-face suit-' in text
    assert "as de oros" in text or "rey de copas" in text or "caballo de espadas" in text
    for label in ("Anterior", "Siguiente", "Ronda anterior", "Ronda siguiente"):
        assert f">{label}</button>" in text
    assert f'href="/mesa/{table.pk}/partida.json"' in text

    # The final board links to the replay, next to the record download that stays.
    board = page(browser(ana), f"/mesa/{table.pk}/")
    assert f'href="/mesa/{table.pk}/repeticion/"' in board and f'href="/mesa/{table.pk}/partida.json"' in board
