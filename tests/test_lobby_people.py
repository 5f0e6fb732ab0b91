"""The lobby's «who is online» and «games to watch» (issue 44): how many people are online and at tables (from the
sockets the site counts, a dead process's never), the people one follows who are online with friends first (the
blocked either way never), and the tables being played that anyone may watch (public ones; never a private one,
nor a tournament's whose deals are still secret), friends' first, each with its rules, round and players, in a
number of queries that does not grow with them.

The live redraw of these parts over the lobby's socket is ``tests/live/test_site_socket.py``."""

from __future__ import annotations

import html
import re
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from live.helpers import person, seated_table
from test_tournament_pages import start_now, tournament

from accounts.models import Block, Follow
from games.models import PageSocket, ServerProcess, Table, Watcher
from games.read import live_pages, online
from games.tournaments import entries

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_counts() -> Any:
    online.forget_counts()
    yield
    online.forget_counts()


def process(alive: bool = True) -> ServerProcess:
    seen = timezone.now() if alive else timezone.now() - timedelta(hours=1)
    return ServerProcess.objects.create(id=uuid.uuid4(), name="prueba:1", seen_at=seen)


def on_page(user: Any, proc: ServerProcess) -> PageSocket:
    return PageSocket.objects.create(user=user, channel_name=f"pagina.{uuid.uuid4().hex}", process=proc)


def at_table(user: Any, table_id: int, proc: ServerProcess) -> Watcher:
    return Watcher.objects.create(table_id=table_id, user=user, channel_name=f"mesa.{uuid.uuid4().hex}", process=proc)


def follow(a: Any, b: Any) -> None:
    Follow.objects.create(follower=a, followee=b)


def friends(a: Any, b: Any) -> None:
    follow(a, b)
    follow(b, a)


def lobby(user: Any, language: str = "es") -> str:
    client = Client()
    client.cookies["django_language"] = language
    client.force_login(user)
    response = client.get("/")
    assert response.status_code == 200
    return response.content.decode()


def part(page: str, element_id: str) -> str:
    found = re.search(rf'<section class="card" id="{element_id}".*?</section>', page, re.S)
    assert found, element_id
    return found.group(0)


def words(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def listed_people(page: str) -> list[tuple[str, str]]:
    return re.findall(r'<li class="person" data-person="([^"]+)" data-state="([a-z]+)"', part(page, "who-is-online"))


def listed_games(page: str) -> list[int]:
    return [int(t) for t in re.findall(r'<li data-table="(\d+)"', part(page, "games-to-watch"))]


def playing(prefix: str, humans: int = 3) -> tuple[int, list[Any]]:
    """A public table of three people, being played."""
    table_id, users = seated_table(3, humans, prefix=prefix)
    assert Table.objects.get(pk=table_id).status == Table.Status.PLAYING
    return table_id, users


# -- the counts ---------------------------------------------------------------------------------------------


def test_the_counts_are_the_live_sockets_distinct_people_and_the_seated_ones() -> None:
    live, dead = process(), process(alive=False)
    table_id, (ana, bea, carla) = playing("cuenta")
    viewer, mirona, lola, fantasma = (person(n) for n in ("mira", "mirona", "lola", "fantasma"))
    at_table(ana, table_id, live)
    at_table(ana, table_id, live)  # two tabs: one person
    on_page(ana, live)
    at_table(bea, table_id, live)
    at_table(mirona, table_id, live)  # watching, not seated: online, not at a table
    on_page(lola, live)
    on_page(viewer, live)
    on_page(fantasma, dead)  # a dead process's rows count for nothing
    at_table(carla, table_id, dead)
    assert online.counts() == online.Counts(online=5, at_tables=2)
    line = words(re.search(r'<p class="online-count".*?</p>', lobby(viewer), re.S).group(0))
    assert line == "5 personas en línea · 2 en mesas"
    online.forget_counts()
    english = words(re.search(r'<p class="online-count".*?</p>', lobby(viewer, "en"), re.S).group(0))
    assert english == "5 people online · 2 at tables"


@pytest.mark.parametrize("socket", [True, False])
def test_one_person_online_is_said_in_the_singular(socket: bool) -> None:
    """The viewer is online, counted or not yet (their lobby's socket opens after the page is drawn)."""
    viewer = person("sola")
    if socket:
        on_page(viewer, process())
    line = words(re.search(r'<p class="online-count".*?</p>', lobby(viewer), re.S).group(0))
    assert line == "1 persona en línea · 0 en mesas"


def test_the_lobby_counts_are_kept_a_moment_in_the_process() -> None:
    live = process()
    on_page(person("primera"), live)
    assert online.lobby_counts().online == 1
    on_page(person("segunda"), live)
    with CaptureQueriesContext(connection) as kept:
        assert online.lobby_counts().online == 1  # counted a moment ago: not counted again
    assert len(kept) == 0
    online.forget_counts()
    assert online.lobby_counts().online == 2


# -- the people one follows who are online ------------------------------------------------------------------


def test_friends_online_first_then_the_others_followed_never_the_blocked_nor_the_offline() -> None:
    live = process()
    viewer = person("yo")
    zoe, amaia, bruno, carmen, dario, elena = (person(n) for n in ("zoe", "amaia", "bruno", "carmen", "dario", "elena"))
    table_id, (sentado, *_rest) = playing("lista")
    friends(viewer, zoe)  # a friend, online
    follow(viewer, amaia)  # followed only, online
    friends(viewer, bruno)  # a friend, away
    friends(viewer, sentado)  # a friend, at a public table
    follow(viewer, carmen)
    Block.objects.create(blocker=carmen, blocked=viewer)  # follows but blocked the viewer: never seen
    follow(viewer, dario)
    Block.objects.create(blocker=viewer, blocked=dario)  # blocked by the viewer: never seen
    follow(elena, viewer)  # follows the viewer, not followed: not listed
    for who in (zoe, amaia, carmen, dario, elena, viewer):
        on_page(who, live)
    at_table(sentado, table_id, live)
    page = lobby(viewer)
    assert listed_people(page) == [("lista0", "table"), ("zoe", "online"), ("amaia", "online")]
    people = part(page, "who-is-online")
    row = re.search(r'<li class="person" data-person="lista0".*?</li>', people, re.S).group(0)
    assert f'<a class="watch" href="/mesa/{table_id}/">Mirar la partida</a>' in row
    assert "amigo" in words(row) and "En una mesa" in words(row)
    amaia_row = re.search(r'<li class="person" data-person="amaia".*?</li>', people, re.S).group(0)
    assert "amigo" not in words(amaia_row) and "En línea" in words(amaia_row)
    for hidden in ("bruno", "carmen", "dario", "elena"):
        assert f'data-person="{hidden}"' not in people


def test_nobody_followed_online_says_so() -> None:
    viewer = person("solitaria")
    follow(viewer, person("ausente"))
    people = part(lobby(viewer), "who-is-online")
    assert "Nadie a quien sigues está en línea ahora." in words(people)
    assert 'class="person"' not in people


def test_a_friend_at_a_private_table_is_at_a_table_with_no_link_to_watch_it() -> None:
    live = process()
    viewer = person("curiosa")
    table_id, (host, *_rest) = playing("privada")
    Table.objects.filter(pk=table_id).update(is_public=False)
    friends(viewer, host)
    on_page(viewer, live)
    at_table(host, table_id, live)
    people = part(lobby(viewer), "who-is-online")
    assert listed_people(lobby(viewer)) == [("privada0", "table")]
    assert f"/mesa/{table_id}/" not in people


# -- the games to watch -------------------------------------------------------------------------------------


def test_games_to_watch_public_ones_only_friends_first_with_rules_round_and_players() -> None:
    viewer = person("espectadora")
    older, _ = playing("vieja")
    followed_table, (amiga, *_rest) = playing("amiga")
    newer, _ = playing("nueva")
    private, _ = playing("oculta")
    Table.objects.filter(pk=private).update(is_public=False)
    blocked_table, (pesado, *_others2) = playing("pesado")
    Block.objects.create(blocker=pesado, blocked=viewer)  # blocked either way: their table is not offered
    waiting = Table.objects.create(size=4)  # waiting, not being played
    friends(viewer, amiga)
    page = lobby(viewer)
    shown = listed_games(page)
    assert shown[0] == followed_table  # someone followed plays there
    assert set(shown) == {followed_table, older, newer}
    assert shown.index(newer) < shown.index(older)  # then the latest started
    for never in (private, blocked_table, waiting.pk):
        assert never not in shown
    games = part(page, "games-to-watch")
    row = re.search(rf'<li data-table="{followed_table}".*?</li>', games, re.S).group(0)
    assert words(row) == "juega alguien a quien sigues Clásica · ronda 1 de 18 — amiga0, amiga1, amiga2 Mirar"
    assert f'<a class="button secondary" href="/mesa/{followed_table}/">Mirar</a>' in row
    english = part(lobby(viewer, "en"), "games-to-watch")
    row = re.search(rf'<li data-table="{newer}".*?</li>', english, re.S).group(0)
    assert words(row) == "Classic · round 1 of 18 — nueva0, nueva1, nueva2 Watch"


def test_a_viewers_own_table_is_not_offered_to_them() -> None:
    table_id, (sentada, *_rest) = playing("mia")
    assert table_id not in listed_games(lobby(sentada))
    assert table_id in listed_games(lobby(person("otra")))


def test_a_tournament_table_being_played_is_never_offered() -> None:
    """Its deals are secret while any table of its game is played (``access.deals_secret``), itself included."""
    t = tournament(entry_fee=0)
    for name in ("t1", "t2", "t3"):
        entries.register(person(name), t.pk, None)
    start_now(t)
    tables = list(Table.objects.filter(tournament=t, status=Table.Status.PLAYING).values_list("pk", flat=True))
    assert tables and Table.objects.filter(pk__in=tables, is_public=True).count() == len(tables)
    public, _ = playing("publica")
    shown = listed_games(lobby(person("mirando")))
    assert shown == [public]
    assert online.games_to_watch(None) == [g for g in online.games_to_watch(None) if g.table_id == public]


def test_nothing_to_watch_says_so() -> None:
    games = part(lobby(person("aburrida")), "games-to-watch")
    assert "Ahora mismo no se juega ninguna partida que se pueda mirar." in words(games)


def test_the_list_is_limited() -> None:
    for n in range(online.GAMES_SHOWN + 2):
        playing(f"m{n}x")
    assert len(listed_games(lobby(person("mucha")))) == online.GAMES_SHOWN


# -- the cost -----------------------------------------------------------------------------------------------


def lobby_queries(user: Any) -> int:
    client = Client()
    client.force_login(user)
    client.get("/")
    online.forget_counts()
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/").status_code == 200
    return len(queries)


def test_the_lobby_reads_who_is_online_and_the_games_in_a_bounded_number_of_queries() -> None:
    live = process()
    viewer = person("medida")
    table_id, (first, *_rest) = playing("uno")
    friends(viewer, first)
    on_page(viewer, live)
    at_table(first, table_id, live)
    few = lobby_queries(viewer)
    for n in range(12):
        other, seated = playing(f"mas{n}x")
        for who in seated:
            friends(viewer, who)
            at_table(who, other, live)
        fan = person(f"fan{n}")
        follow(viewer, fan)
        on_page(fan, live)
    page = lobby(viewer)
    assert len(listed_people(page)) == online.PEOPLE_SHOWN and "Y 19 personas más." in words(
        page
    )  # 1 + 12 × 3 at tables, 12 fans
    assert len(listed_games(page)) == 13
    assert lobby_queries(viewer) == few
    # and the counts, kept a moment, are not read at every request
    client = Client()
    client.force_login(viewer)
    client.get("/")
    with CaptureQueriesContext(connection) as kept:
        client.get("/")
    assert len(kept) < few


def test_the_live_redraw_is_the_same_part_marked_out_of_band() -> None:
    viewer = person("redibujo")
    on_page(viewer, process())
    drawn = live_pages.lobby_html(viewer.pk, "es")
    assert drawn.startswith('<div id="lobby-people" class="lobby-people" hx-swap-oob="true">')
    page = lobby(viewer)
    assert '<div id="lobby-people" class="lobby-people">' in page
    assert words(drawn) == words(re.search(r'<div id="lobby-people".*?</section>\s*</div>', page, re.S).group(0))
