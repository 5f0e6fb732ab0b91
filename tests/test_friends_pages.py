"""«Amigos» and following and blocking from the pages (``games.web.friends``, ``games.read.friends``): the
posts change only the signed-in person's follows and blocks, refuse bad input with a clear message and
change nothing, and tell both people's pages; the page lists friends, people followed, followers and
people blocked, each as the viewer sees them now (online, at a table with a link to watch it when it may be
watched, offline: a blocked person always offline), in a bounded number of queries; the preference of who
may invite you; and the forms on a profile, a seat plate and a final board, for people only."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import override
from live.helpers import person
from test_board_details import game_until
from test_table_english import english, spanish_in

from accounts import social
from accounts.models import Block, Follow, Profile
from accounts.views import close_account
from games.engine import GameState, Phase
from games.models import PageSocket, Seat, ServerProcess, Table, Watcher
from games.read import board
from games.read import friends as friends_read
from games.table import actions, events
from games.table.events import PersonNotified

pytestmark = pytest.mark.django_db

FOLLOW = "/amigos/seguir/"
UNFOLLOW = "/amigos/dejar-de-seguir/"
BLOCK = "/amigos/bloquear/"
UNBLOCK = "/amigos/desbloquear/"
PREFERENCE = "/amigos/invitaciones/"
PAGE = "/amigos/"
HTMX = {"HX-Request": "true"}


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def said(response: Any) -> list[str]:
    """The messages a plain post left for the page it goes back to (this request's own)."""
    return [str(m) for m in response.wsgi_request._messages._queued_messages]


def follows() -> set[tuple[str, str]]:
    return {(f.follower.username, f.followee.username) for f in Follow.objects.select_related("follower", "followee")}


def blocks() -> set[tuple[str, str]]:
    return {(b.blocker.username, b.blocked.username) for b in Block.objects.select_related("blocker", "blocked")}


def section(html: str, ident: str) -> str:
    """The part of the page in ``<section ... id="ident">`` (empty when the page has none)."""
    if f'id="{ident}"' not in html:
        return ""
    return html.split(f'id="{ident}"', 1)[1].split("</section>", 1)[0]


def row(html: str, name: str) -> str:
    """A person's line in a list of «Amigos»."""
    match = re.search(rf'<li class="person" data-person="{re.escape(name)}".*?</li>', html, re.S)
    return match.group(0) if match else ""


def listed(html: str) -> list[str]:
    return re.findall(r'<li class="person" data-person="([^"]+)"', html)


@pytest.fixture
def notices(monkeypatch: pytest.MonkeyPatch) -> list[PersonNotified]:
    """Every ``PersonNotified`` delivered (after commit: see ``committed``)."""
    seen: list[PersonNotified] = []
    handlers = [*events._handlers, lambda e: seen.append(e) if isinstance(e, PersonNotified) else None]
    monkeypatch.setattr(events, "_handlers", handlers)
    return seen


@pytest.fixture
def committed(django_capture_on_commit_callbacks: Any) -> Any:
    """``committed(client.post, url, form)``: the post, then what it left to do once its changes commit
    (the test's transaction never does)."""

    def post(send: Any, *args: Any, **kwargs: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return send(*args, **kwargs)

    return post


@pytest.fixture
def live_process() -> ServerProcess:
    """A server process beating now: the sockets it holds count."""
    return ServerProcess.objects.create(id=uuid.uuid4(), name="prueba:1", seen_at=timezone.now())


def page_open(user: Any, process: ServerProcess) -> PageSocket:
    return PageSocket.objects.create(user=user, channel_name=f"pagina.{uuid.uuid4().hex}", process=process)


def watching(user: Any, table_id: int, process: ServerProcess) -> Watcher:
    return Watcher.objects.create(
        table_id=table_id, user=user, channel_name=f"mesa.{uuid.uuid4().hex}", process=process
    )


# -- following and unfollowing ------------------------------------------------------------------


def test_follow_and_unfollow_change_only_the_senders_follow_and_say_so() -> None:
    ana, beto = person("ana"), person("beto")
    client = signed_in(ana)
    response = client.post(FOLLOW, {"name": "beto"})
    assert (response.status_code, response["Location"]) == (302, PAGE)
    assert said(response) == ["Ahora sigues a beto."]
    assert follows() == {("ana", "beto")}
    again = client.post(FOLLOW, {"name": " beto "})  # a second click (spaces around the name are no matter)
    assert said(again) == ["Ya sigues a beto."] and follows() == {("ana", "beto")}
    gone = client.post(UNFOLLOW, {"name": "beto"})
    assert said(gone) == ["Has dejado de seguir a beto."] and follows() == set()
    assert said(client.post(UNFOLLOW, {"name": "beto"})) == ["No seguías a beto."]
    assert Follow.objects.filter(follower=beto).count() == 0


def test_two_people_who_follow_each_other_are_friends() -> None:
    ana, beto, carla = person("ana"), person("beto"), person("carla")
    signed_in(ana).post(FOLLOW, {"name": "beto"})
    signed_in(ana).post(FOLLOW, {"name": "carla"})
    signed_in(beto).post(FOLLOW, {"name": "ana"})
    assert social.friend_ids(ana.pk) == {beto.pk}
    html = signed_in(ana).get(PAGE).content.decode()
    assert listed(section(html, "friends-mutual")) == ["beto"]
    assert listed(section(html, "friends-following")) == ["carla"]
    assert section(html, "friends-followers") == ""  # nobody follows ana without ana following back
    # carla sees ana among those who follow her, with «Seguir» to follow back
    carlas = signed_in(carla).get(PAGE).content.decode()
    assert listed(section(carlas, "friends-followers")) == ["ana"]
    assert ">Seguir</button>" in row(carlas, "ana") and ">Bloquear</button>" in row(carlas, "ana")


def test_a_block_ends_both_follows_and_unblocking_brings_none_back() -> None:
    ana, beto = person("ana"), person("beto")
    social.follow(ana, beto)
    social.follow(beto, ana)
    response = signed_in(ana).post(BLOCK, {"name": "beto"})
    assert said(response) == ["Has bloqueado a beto."]
    assert follows() == set() and blocks() == {("ana", "beto")}
    assert said(signed_in(ana).post(BLOCK, {"name": "beto"})) == ["Ya habías bloqueado a beto."]
    # neither may follow the other while the block stands
    assert said(signed_in(beto).post(FOLLOW, {"name": "ana"})) == ["No puedes seguir a esa persona."]
    assert said(signed_in(ana).post(FOLLOW, {"name": "beto"})) == ["No puedes seguir a esa persona."]
    assert follows() == set()
    # beto cannot lift ana's block
    assert said(signed_in(beto).post(UNBLOCK, {"name": "ana"})) == ["No tenías bloqueado a ana."]
    assert blocks() == {("ana", "beto")}
    assert said(signed_in(ana).post(UNBLOCK, {"name": "beto"})) == ["Has desbloqueado a beto."]
    assert blocks() == set() and follows() == set()


def test_forged_fields_are_ignored_the_sender_is_always_the_one_signed_in() -> None:
    ana, carla = person("ana"), person("carla")
    person("beto")
    forged = {
        "name": "beto",
        "follower": str(carla.pk),
        "follower_id": str(carla.pk),
        "user": "carla",
        "user_id": str(carla.pk),
        "blocker": str(carla.pk),
        "blocker_id": str(carla.pk),
    }
    signed_in(ana).post(FOLLOW, forged)
    assert follows() == {("ana", "beto")}
    signed_in(ana).post(BLOCK, forged)
    assert blocks() == {("ana", "beto")} and follows() == set()
    # and nobody can act for another by naming them in the address either
    assert signed_in(ana).post(f"{FOLLOW}?name=carla&follower={carla.pk}", {"name": "carla"}).status_code == 302
    assert follows() == {("ana", "carla")}


@pytest.mark.parametrize("name", ["nadie-asi", "", "   ", "x" * 300, None])
def test_an_unknown_name_is_refused_clearly_and_changes_nothing(
    name: str | None, notices: list[Any], committed: Any
) -> None:
    ana = person("ana")
    person("beto")
    form = {} if name is None else {"name": name}
    for url in (FOLLOW, UNFOLLOW, BLOCK, UNBLOCK):
        response = committed(signed_in(ana).post, url, form)
        assert (response.status_code, response["Location"]) == (302, PAGE)
        assert said(response) == ["No hay ningún jugador con ese nombre."]
        flash = committed(signed_in(ana).post, url, form, headers=HTMX)
        assert flash.status_code == 200
        assert 'id="flash"' in (text := flash.content.decode()) and "No hay ningún jugador con ese nombre." in text
        assert 'class="flash"' in text  # an error (without ``ok``)
    assert follows() == set() and blocks() == set() and notices == []


def test_a_closed_account_cannot_be_followed() -> None:
    ana, beto = person("ana"), person("beto")
    Profile.objects.update_or_create(user=beto, defaults={"closed_at": timezone.now()})
    assert said(signed_in(ana).post(FOLLOW, {"name": "beto"})) == ["No hay ningún jugador con ese nombre."]
    assert follows() == set()


def test_following_or_blocking_yourself_is_refused() -> None:
    ana = person("ana")
    assert said(signed_in(ana).post(FOLLOW, {"name": "ana"})) == ["No puedes seguirte a ti mismo."]
    assert said(signed_in(ana).post(BLOCK, {"name": "ana"})) == ["No puedes bloquearte a ti mismo."]
    assert follows() == set() and blocks() == set()


def test_a_flood_of_follows_is_refused_past_the_limit_and_changes_nothing(
    settings: Any, notices: list[Any], committed: Any
) -> None:
    """The window's clock stands still in the suite (``conftest.fresh_rate_limits``): every post counts in
    the same window."""
    settings.POCHA_FOLLOW_LIMIT = 3
    ana = person("ana")
    others = [person(f"otro{i}") for i in range(6)]
    client = signed_in(ana)
    answers = [said(committed(client.post, FOLLOW, {"name": other.username})) for other in others[:5]]
    assert answers[:3] == [[f"Ahora sigues a otro{i}."] for i in range(3)]
    too_many = "Demasiados cambios seguidos: espera un poco antes de seguir o bloquear a más gente."
    assert answers[3:] == [[too_many], [too_many]]
    assert follows() == {("ana", "otro0"), ("ana", "otro1"), ("ana", "otro2")}
    # a block counts in the same limit, and through htmx it is refused the same way
    flash = committed(client.post, BLOCK, {"name": "otro5"}, headers=HTMX).content.decode()
    assert too_many in flash
    assert blocks() == set()
    assert {n.user_id for n in notices} == {ana.pk, others[0].pk, others[1].pk, others[2].pk}
    # another person has their own count
    assert said(signed_in(others[5]).post(FOLLOW, {"name": "ana"})) == ["Ahora sigues a ana."]


def test_a_change_tells_both_peoples_pages_after_commit_and_nothing_else_does(
    notices: list[Any], committed: Any
) -> None:
    ana, beto = person("ana"), person("beto")
    client = signed_in(ana)
    committed(client.post, FOLLOW, {"name": "beto"})
    assert sorted((n.user_id, n.kind) for n in notices) == sorted([(beto.pk, "friends"), (ana.pk, "friends")])
    notices.clear()
    committed(client.post, FOLLOW, {"name": "beto"})  # nothing changed: nobody is told
    committed(client.post, UNBLOCK, {"name": "beto"})
    committed(client.post, FOLLOW, {"name": "ana"})  # refused
    assert notices == []
    committed(client.post, BLOCK, {"name": "beto"}, headers=HTMX)
    expected = [(u, k) for u in (ana.pk, beto.pk) for k in ("friends", "blocks")]
    assert sorted((n.user_id, n.kind) for n in notices) == sorted(expected)
    notices.clear()
    committed(client.post, UNBLOCK, {"name": "beto"})
    assert sorted((n.user_id, n.kind) for n in notices) == sorted(expected)
    notices.clear()
    committed(client.post, UNFOLLOW, {"name": "beto"})  # (the block ended the follow already)
    assert notices == []


def test_next_is_followed_within_the_site_only() -> None:
    ana = person("ana")
    person("beto")
    client = signed_in(ana)
    assert client.post(FOLLOW, {"name": "beto", "next": "/jugador/beto/"})["Location"] == "/jugador/beto/"
    for elsewhere in ("https://evil.example/", "//evil.example/", "javascript:alert(1)", "jugador/beto/"):
        assert client.post(UNFOLLOW, {"name": "beto", "next": elsewhere})["Location"] == PAGE, elsewhere


def test_the_pages_need_a_signed_in_person_and_the_changes_a_post() -> None:
    beto = person("beto")
    for url in (PAGE, FOLLOW, BLOCK):
        response = Client().post(url, {"name": "beto"})
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert follows() == set() and blocks() == set()
    client = signed_in(beto)
    for url in (FOLLOW, UNFOLLOW, BLOCK, UNBLOCK, PREFERENCE):
        assert client.get(url, {"name": "beto"}).status_code == 405
    # and a post without the CSRF token is refused
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(person("ana"))
    assert strict.post(FOLLOW, {"name": "beto"}).status_code == 403
    assert follows() == set()


def test_an_htmx_post_is_answered_in_the_flash_and_from_amigos_with_the_list_again() -> None:
    ana = person("ana")
    person("beto")
    client = signed_in(ana)
    plate = client.post(FOLLOW, {"name": "beto"}, headers=HTMX)
    text = plate.content.decode()
    assert plate.status_code == 200 and 'id="flash"' in text and 'hx-swap-oob="true"' in text
    assert "Ahora sigues a beto." in text and 'class="flash ok"' in text
    assert 'id="friends-live"' not in text  # a table's plate: the flash alone
    page = client.post(UNFOLLOW, {"name": "beto", "live": "1"}, headers=HTMX).content.decode()
    assert "Has dejado de seguir a beto." in page
    assert '<div id="friends-live" class="friends-live" hx-swap-oob="true">' in page
    assert listed(page) == []
    assert "Ahora sigues" not in str(list(client.get(PAGE).context["messages"]))  # (htmx leaves no message)


# -- the «Amigos» page -------------------------------------------------------------------------------


def test_the_page_shows_how_each_person_is_now_friends_online_first(live_process: ServerProcess) -> None:
    ana = person("ana")
    people = {name: person(name) for name in ("bea", "ciro", "dora", "eloy", "fausto", "gala")}
    for name, user in people.items():
        social.follow(ana, user)
        if name in ("bea", "ciro", "dora"):
            social.follow(user, ana)  # friends
    # bea (a friend): a page open -> online; ciro (a friend): seated at a public table he shows -> at a table,
    # watchable; dora (a friend): away; eloy (followed): at a private table -> at a table, not watchable;
    # fausto (followed): a page open; gala (followed): her process is dead -> away
    page_open(people["bea"], live_process)
    public = actions.do_create_table(people["ciro"], 4)
    watching(people["ciro"], public.pk, live_process)
    private = actions.do_create_private_table(people["eloy"], 4, 0, True)
    watching(people["eloy"], private.pk, live_process)
    page_open(people["fausto"], live_process)
    dead = ServerProcess.objects.create(id=uuid.uuid4(), name="muerto:1", seen_at=timezone.now() - timedelta(hours=1))
    page_open(people["gala"], dead)

    html = signed_in(ana).get(PAGE).content.decode()
    friends = section(html, "friends-mutual")
    assert listed(friends) == ["ciro", "bea", "dora"]  # at a table, online, then away
    assert 'Amigos (3) <span class="hint">· 2 en línea</span>' in friends  # everyone counted, those online too
    assert 'A quien sigues (3) <span class="hint">· 2 en línea</span>' in section(html, "friends-following")
    assert 'data-state="online"' in row(html, "bea") and "En línea" in row(html, "bea")
    ciro = row(html, "ciro")
    assert 'data-state="table"' in ciro and "En una mesa" in ciro
    assert f'<a class="watch" href="/mesa/{public.pk}/">Mirar la partida</a>' in ciro
    assert 'data-state="offline"' in row(html, "dora") and "Desconectado" in row(html, "dora")
    following = section(html, "friends-following")
    assert listed(following) == ["eloy", "fausto", "gala"]
    eloy = row(html, "eloy")
    assert "En una mesa" in eloy and "Mirar la partida" not in eloy and "/mesa/" not in eloy  # a private table
    assert "En línea" in row(html, "fausto") and "Desconectado" in row(html, "gala")
    # each person: their profile, «Invitar», «Dejar de seguir», «Bloquear»
    for name in people:
        line = row(html, name)
        assert f'href="/jugador/{name}/"' in line
        for button in ("Invitar", "Dejar de seguir", "Bloquear"):
            assert f">{button}</button>" in line, (name, button)
        assert f'<input type="hidden" name="name" value="{name}">' in line
    # the socket's drawing of the same lists
    live = friends_read.friends_html(ana.pk, "es")
    assert live.lstrip().startswith('<div id="friends-live" class="friends-live" hx-swap-oob="true">')
    assert listed(live) == listed(section(html, "friends-mutual")) + listed(following)
    assert "csrfmiddlewaretoken" not in live and 'hx-post="/amigos/dejar-de-seguir/"' in live


def test_blocked_people_are_shown_offline_and_listed_under_bloqueados(live_process: ServerProcess) -> None:
    ana, fede, gus = person("ana"), person("fede"), person("gus")
    social.follow(ana, fede)
    social.follow(ana, gus)
    page_open(fede, live_process)
    page_open(gus, live_process)
    response = signed_in(ana).post(BLOCK, {"name": "fede"})
    assert said(response) == ["Has bloqueado a fede."]
    social.block(gus, ana)  # gus blocks ana: ana's follow of him ends, and she never sees him online
    html = signed_in(ana).get(PAGE).content.decode()
    blocked = section(html, "friends-blocked")
    assert listed(blocked) == ["fede"]
    fede_row = row(blocked, "fede")
    assert "Desconectado" in fede_row and "En línea" not in fede_row
    assert ">Desbloquear</button>" in fede_row and ">Dejar de seguir</button>" not in fede_row
    assert "gus" not in listed(html) and "En línea" not in html
    # one click lifts it, from the list itself
    answer = signed_in(ana).post(UNBLOCK, {"name": "fede", "live": "1"}, headers=HTMX).content.decode()
    assert "Has desbloqueado a fede." in answer and listed(answer) == []
    assert blocks() == {("gus", "ana")}


def test_a_closed_account_leaves_the_lists() -> None:
    """Closing an account (``accounts.views.close_account``, the only way one closes) makes it inactive: it
    leaves every list, and every list's count."""
    ana, beto = person("ana"), person("beto")
    carla, dani, eva = person("carla"), person("dani"), person("eva")
    social.follow(ana, beto)
    social.follow(ana, carla)
    social.follow(carla, ana)  # a friend
    social.follow(dani, ana)  # a follower
    social.block(ana, eva)
    for gone in (carla, dani, eva):
        close_account(gone)
    html = signed_in(ana).get(PAGE).content.decode()
    assert listed(html) == ["beto"]
    assert "Amigos (0)" in section(html, "friends-mutual") and "A quien sigues (1)" in section(
        html, "friends-following"
    )
    assert section(html, "friends-followers") == "" and section(html, "friends-blocked") == ""


def more_links(html: str) -> list[tuple[str, str]]:
    """The «Anteriores» / «Ver más» links of a list: (text, the plain link)."""
    return [
        (text, href.replace("&amp;", "&"))
        for href, text in re.findall(r'<a class="button secondary" href="([^"]+)"[^>]*>([^<]+)</a>', html)
    ]


def test_the_lists_are_drawn_a_page_at_a_time_those_online_all(
    live_process: ServerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Those online or at a table in full, then the others a page at a time: «Ver más» through htmx brings one
    list's next page alone; without JavaScript a link to the page showing one page more of that list (the other
    lists kept as they are); the page's script asks for the lists alone with the pages they show; every heading
    counts everyone in its list."""
    monkeypatch.setattr(friends_read, "PAGE_SIZE", 3)
    ana = person("ana")
    friends = [person(f"amiga{i}") for i in range(9)]
    for other in friends:
        social.follow(ana, other)
        social.follow(other, ana)
    page_open(friends[8], live_process)  # two friends online: drawn first, on every page
    page_open(friends[7], live_process)
    followed = [person(f"sigo{i}") for i in range(4)]
    for other in followed:
        social.follow(ana, other)
    fans = [person(f"fan{i}") for i in range(7)]
    for fan in fans:
        social.follow(fan, ana)
    for i in range(4):
        social.block(ana, person(f"pesado{i}"))
    client = signed_in(ana)

    html = client.get(PAGE).content.decode()
    mutual = section(html, "friends-mutual")
    assert "Amigos (9)" in mutual and "· 2 en línea" in mutual
    assert listed(mutual) == ["amiga7", "amiga8", "amiga0", "amiga1", "amiga2"]
    assert '<ul class="people" data-list="amigos" data-pages="1">' in mutual
    assert more_links(mutual) == [("Ver más", "/amigos/?amigos=2")]
    assert 'hx-get="/amigos/?amigos=2" hx-target="closest li" hx-swap="outerHTML" data-more="2"' in mutual
    following = section(html, "friends-following")
    assert "A quien sigues (4)" in following and listed(following) == ["sigo0", "sigo1", "sigo2"]
    followers = section(html, "friends-followers")
    assert "Te siguen (7)" in followers and listed(followers) == ["fan6", "fan5", "fan4"]  # the newest first
    blocked = section(html, "friends-blocked")
    assert "Bloqueados (4)" in blocked and listed(blocked) == ["pesado0", "pesado1", "pesado2"]
    assert more_links(blocked) == [("Ver más", "/amigos/?bloqueados=2")]
    assert '<script src="/static/js/friends.js" defer></script>' in html

    # «Ver más» through htmx: that list's next page alone, to put in the place of its «Ver más»
    more = client.get(PAGE, {"amigos": "2"}, headers=HTMX)
    rows = more.content.decode()
    assert more.status_code == 200 and "<section" not in rows and 'id="friends-live"' not in rows
    assert rows.startswith('<li class="person" data-person="amiga3"')
    assert listed(rows) == ["amiga3", "amiga4", "amiga5"] and more_links(rows) == [("Ver más", "/amigos/?amigos=3")]
    assert "csrfmiddlewaretoken" not in rows and 'hx-post="/amigos/dejar-de-seguir/"' in rows
    last = client.get(PAGE, {"amigos": "3"}, headers=HTMX).content.decode()
    assert listed(last) == ["amiga6"] and 'class="more"' not in last
    assert listed(client.get(PAGE, {"te-siguen": "3"}, headers=HTMX).content.decode()) == ["fan0"]
    assert listed(client.get(PAGE, {"bloqueados": "2"}, headers=HTMX).content.decode()) == ["pesado3"]
    assert listed(client.get(PAGE, {"sigues": "2"}, headers=HTMX).content.decode()) == ["sigo3"]

    # without JavaScript: the page with one page more of that list, those online still first, the others kept
    html = client.get(PAGE, {"amigos": "3", "te-siguen": "2"}).content.decode()
    mutual = section(html, "friends-mutual")
    assert listed(mutual) == ["amiga7", "amiga8", *(f"amiga{i}" for i in range(7))]
    assert '<ul class="people" data-list="amigos" data-pages="3">' in mutual and more_links(mutual) == []
    followers = section(html, "friends-followers")
    assert listed(followers) == ["fan6", "fan5", "fan4", "fan3", "fan2", "fan1"]
    assert more_links(followers) == [("Ver más", "/amigos/?amigos=3&te-siguen=3")]
    assert 'hx-get="/amigos/?te-siguen=3"' in followers
    lists = html.split('<div id="friends-live"', 1)[1].split('id="invite-preference"', 1)[0]
    assert lists.count('name="csrfmiddlewaretoken"') == lists.count("<form") == len(listed(html))  # a form a row

    # the page's script, when the socket draws the lists again: the lists alone, with the pages they show
    again = client.get(PAGE, {"listas": "1", "amigos": "2", "te-siguen": "3"}, headers=HTMX).content.decode()
    assert again.startswith('<div id="friends-live" class="friends-live">') and "<html" not in again
    assert listed(section(again, "friends-mutual")) == ["amiga7", "amiga8", *(f"amiga{i}" for i in range(6))]
    assert listed(section(again, "friends-followers")) == [f"fan{i}" for i in range(6, -1, -1)]
    assert listed(section(again, "friends-following")) == ["sigo0", "sigo1", "sigo2"]

    # a page that is none: the first; past the last: the last
    for bad in ("0", "-1", "x", "", "1.5", "٣", "01"):
        assert listed(section(client.get(PAGE, {"amigos": bad}).content.decode(), "friends-mutual"))[2:] == [
            "amiga0",
            "amiga1",
            "amiga2",
        ], bad
    for far in ("3", "4", "99", "9" * 18):
        drawn = section(client.get(PAGE, {"amigos": far}).content.decode(), "friends-mutual")
        assert len(listed(drawn)) == 9 and 'data-pages="3"' in drawn, far
    assert client.get(PAGE, {"amigos": "9" * 30}).status_code == 400  # past the integers: no parameter holds it
    for key in ("amigos", "te-siguen", "bloqueados"):  # «Ver más» of a list grown shorter meanwhile: nothing
        assert listed(client.get(PAGE, {key: "99"}, headers=HTMX).content.decode()) == [], key

    # the live redraw: every list at its first page
    live = friends_read.friends_html(ana.pk, "es")
    assert (
        listed(live)
        == listed(client.get(PAGE).content.decode())
        == [
            *("amiga7", "amiga8", "amiga0", "amiga1", "amiga2"),
            *("sigo0", "sigo1", "sigo2"),
            *("fan6", "fan5", "fan4"),
            *("pesado0", "pesado1", "pesado2"),
        ]
    )
    assert "Ver más" in live and "Anteriores" not in live


def test_a_drawing_shows_the_last_pages_asked_for_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages past ``MOST_PAGES`` show the last ones asked for, and «Anteriores» links to those before."""
    monkeypatch.setattr(friends_read, "PAGE_SIZE", 2)
    monkeypatch.setattr(friends_read, "MOST_PAGES", 2)
    ana = person("ana")
    for i in range(7):
        social.block(ana, person(f"pesado{i}"))
    client = signed_in(ana)
    blocked = section(client.get(PAGE, {"bloqueados": "3"}).content.decode(), "friends-blocked")
    assert listed(blocked) == ["pesado2", "pesado3", "pesado4", "pesado5"]
    assert more_links(blocked) == [("Anteriores", "/amigos/"), ("Ver más", "/amigos/?bloqueados=4")]
    blocked = section(client.get(PAGE, {"bloqueados": "4"}).content.decode(), "friends-blocked")
    assert listed(blocked) == ["pesado4", "pesado5", "pesado6"]
    assert more_links(blocked) == [("Anteriores", "/amigos/?bloqueados=2")]


def test_names_are_escaped_and_linked_as_the_profiles_route_reads_them(live_process: ServerProcess) -> None:
    """A row is drawn once per look and its person filled in: every name escaped wherever it is written, its
    profile linked as ``reverse`` writes the address (a name the route cannot hold, not linked), on the page,
    over the socket and on the lobby."""
    ana = person("ana")
    names = ["Zoë", "b.c+d@e-f_g", "<b>x</b> & 'co'"]
    for name in names:
        other = person(name)
        social.follow(ana, other)
        page_open(other, live_process)
    html = signed_in(ana).get(PAGE).content.decode()
    live = friends_read.friends_html(ana.pk, "es")
    for drawn in (html, live):
        following = section(drawn, "friends-following")
        assert sorted(listed(following)) == sorted(["Zoë", "b.c+d@e-f_g", "&lt;b&gt;x&lt;/b&gt; &amp; &#39;co&#39;"])
        for name in names[:2]:
            line = row(following, name)
            assert f'<a class="person-name" href="{reverse("games:player", args=[name])}">{name}</a>' in line
            assert f'<input type="hidden" name="name" value="{name}">' in line
        odd = row(following, "&lt;b&gt;x&lt;/b&gt; &amp; &#39;co&#39;")
        assert (
            '<span class="person-name">&lt;b&gt;x&lt;/b&gt; &amp; &#39;co&#39;</span>' in odd
            and 'href="/jugador/' not in odd
        )
        assert '<input type="hidden" name="name" value="&lt;b&gt;x&lt;/b&gt; &amp; &#39;co&#39;">' in odd
        assert "<b>x</b>" not in drawn
    assert 'href="/jugador/Zo%C3%AB/"' in html
    lobby = Client()
    lobby.force_login(ana)
    online_part = section(lobby.get("/").content.decode(), "who-is-online")
    assert 'href="/jugador/Zo%C3%AB/">Zoë</a>' in online_part and 'href="/jugador/b.c+d@e-f_g/"' in online_part
    assert '<span class="person-name">&lt;b&gt;x&lt;/b&gt; &amp; &#39;co&#39;</span>' in online_part
    assert "<b>x</b>" not in online_part


def test_the_page_reads_a_bounded_number_of_queries(
    live_process: ServerProcess, django_assert_max_num_queries: Any
) -> None:
    """Following 50 people (half friends, some online, some at tables, followers and blocks besides): the page
    costs the same handful of queries as for one."""
    ana = person("ana")
    people = [person(f"amigo{i:02d}") for i in range(50)]
    for i, other in enumerate(people):
        Follow.objects.create(follower=ana, followee=other)
        if i % 2:
            Follow.objects.create(follower=other, followee=ana)
        if i % 5 == 0:
            page_open(other, live_process)
    for other in people[1:4]:
        table = actions.do_create_table(other, 4)
        watching(other, table.pk, live_process)
    for i in range(10):
        Follow.objects.create(follower=person(f"fan{i}"), followee=ana)
    for i in range(5):
        Block.objects.create(blocker=ana, blocked=person(f"pesado{i}"))
    client = signed_in(ana)
    client.get(PAGE)  # (the session's first read)
    # the page: the session, the person, what every page reads (chips, invitations, tables, suspension), who
    # may invite her and the lists' four
    with django_assert_max_num_queries(11):
        html = client.get(PAGE).content.decode()
    assert len(listed(html)) == 50 + 10 + 5
    # the lists: those followed (names, friends or not), who is online among them (their table sockets with
    # their seats, and page sockets), a page of the followers not followed back, a page of the blocked (each
    # with its count)
    with django_assert_max_num_queries(4):
        friends_read.friends_html(ana.pk, "es")
    # «Ver más»: the session, the person, and one list's (for one followed: those followed and who is online)
    with django_assert_max_num_queries(4):
        client.get(PAGE, {"sigues": "2"}, headers=HTMX)


def test_the_preference_of_who_may_invite_is_saved() -> None:
    ana = person("ana")
    client = signed_in(ana)
    html = client.get(PAGE).content.decode()
    assert '<input type="radio" name="invites_from" value="everyone" checked>' in html
    response = client.post(PREFERENCE, {"invites_from": "nobody"})
    assert (response.status_code, response["Location"]) == (302, PAGE)
    assert said(response) == ["Ahora no puede invitarte nadie."]
    assert Profile.objects.get(user=ana).invites_from == Profile.Invites.NOBODY
    assert '<input type="radio" name="invites_from" value="nobody" checked>' in client.get(PAGE).content.decode()
    assert said(client.post(PREFERENCE, {"invites_from": "friends"})) == [
        "Ahora solo pueden invitarte tus amigos y la gente a la que sigues."
    ]
    assert Profile.objects.get(user=ana).invites_from == Profile.Invites.FRIENDS
    for bad in ("Todos", "todos", "", "everyone ", "x" * 50):
        refused = client.post(PREFERENCE, {"invites_from": bad})
        assert said(refused) == ["Elige quién puede invitarte: Todos, Mis amigos y a quien sigo, o Nadie."]
    assert said(client.post(PREFERENCE, {})) != [] and Profile.objects.get(user=ana).invites_from == "friends"
    # and it rules who may invite her
    beto = person("beto")
    assert social.may_invite(beto.pk, ana.pk, "ana") is not None
    social.follow(ana, beto)
    assert social.may_invite(beto.pk, ana.pk, "ana") is None


def test_the_page_in_english() -> None:
    ana, beto, carla = person("ana"), person("beto"), person("carla")
    social.follow(ana, beto)
    social.follow(beto, ana)
    social.follow(carla, ana)
    social.block(ana, person("dani"))
    client = english(ana)
    html = client.get(PAGE).content.decode()
    assert "People you follow" in html and "Following you" in html and "Blocked" in html
    assert ">Unfollow</button>" in html and ">Unblock</button>" in html and ">Follow</button>" in html
    assert spanish_in(html, names=("ana", "beto", "carla", "dani")) == []
    assert said(client.post(FOLLOW, {"name": "carla"})) == ["You now follow carla."]
    assert "Offline" in friends_read.friends_html(ana.pk, "en")


def test_the_site_nav_links_amigos_for_signed_in_people() -> None:
    link = '<a href="/amigos/">Amigos</a>'
    assert link in signed_in(person("ana")).get("/").content.decode()
    assert link not in Client().get("/").content.decode()


def test_the_rules_page_says_what_a_block_does() -> None:
    html = Client().get("/reglas/").content.decode()
    part = section(html, "amigos")
    assert 'href="#amigos"' in html
    for words in ("nunca os sienta juntos", "«Jugar ya»", "torneo", "invitar", "mesa privada", "en línea", "clic"):
        assert words in part, words


# -- the profile -------------------------------------------------------------------------------------


def buttons(html: str) -> list[str]:
    part = html.split('id="profile-social"', 1)[1].split("</div>\n  </div>", 1)[0] if "profile-social" in html else ""
    return re.findall(r'<button type="submit" class="button[^"]*">([^<]+)</button>', part)


def test_the_profile_offers_follow_and_block_and_says_how_you_stand() -> None:
    ana, beto = person("ana"), person("beto")
    client = signed_in(ana)
    own = client.get("/jugador/ana/").content.decode()
    assert "profile-social" not in own
    html = client.get("/jugador/beto/").content.decode()
    assert buttons(html) == ["Seguir", "Bloquear"]
    assert '<input type="hidden" name="next" value="/jugador/beto/">' in html
    response = client.post(FOLLOW, {"name": "beto", "next": "/jugador/beto/"})
    assert response["Location"] == "/jugador/beto/"
    html = client.get("/jugador/beto/").content.decode()
    assert buttons(html) == ["Dejar de seguir", "Bloquear"] and "Sois amigos" not in html
    social.follow(beto, ana)
    assert "Sois amigos" in client.get("/jugador/beto/").content.decode()
    assert "Sois amigos" in signed_in(beto).get("/jugador/ana/").content.decode()
    social.unfollow(ana, beto)
    html = client.get("/jugador/beto/").content.decode()
    assert "Te sigue" in html and buttons(html) == ["Seguir", "Bloquear"]
    client.post(BLOCK, {"name": "beto"})
    html = client.get("/jugador/beto/").content.decode()
    assert buttons(html) == ["Desbloquear"] and "Has bloqueado a beto" in html
    # beto, blocked, is not offered to follow ana
    assert buttons(signed_in(beto).get("/jugador/ana/").content.decode()) == ["Bloquear"]


# -- a table's seat plates and final board ----------------------------------------------------------


def drawn(game: GameState, viewer_seat: int | None, people: set[int]) -> str:
    """The board of ``game`` as seen from ``viewer_seat`` (None: a spectator), seats in ``people`` people."""
    table = Table(pk=7, size=game.players, status=Table.Status.PLAYING, stake=0, seq=3)
    seats = [
        Seat(
            table=table,
            position=p,
            name=f"p{p}" if p in people else f"Bot{p}",
            user_id=100 + p if p in people else None,
            is_bot=p not in people,
            sockets=1,
        )
        for p in range(game.players)
    ]
    viewer = 100 + viewer_seat if viewer_seat is not None else 999
    with override("es"):
        ctx = board.board_context(table, seats, board.Viewer(viewer, "es"), spectators=0, game=game)
        ctx["oob"] = False
        return str(board.draw_board(ctx))


def seat_html(html: str, position: int) -> str:
    return html.split(f'<li id="seat-{position}"', 1)[1].split("</li>", 1)[0]


def menu_names(html: str) -> list[str]:
    """The names the follow / block menus post, in order."""
    return re.findall(
        r'<input type="hidden" name="name" value="([^"]+)"><button type="submit" class="link-button"', html
    )


def test_a_seat_plate_has_follow_and_block_for_people_but_the_viewer() -> None:
    game = game_until(4, 3, lambda g: g.phase is Phase.BIDDING)
    html = drawn(game, 0, people={0, 1, 3})
    felt = html.split('id="felt"', 1)[1].split("</section>", 1)[0]
    assert menu_names(felt) == ["p1", "p3"]  # not the viewer's own seat, not the bot's
    for position in (1, 3):
        plate = seat_html(html, position)
        name = f"p{position}"
        assert '<details class="seat-menu">' in plate
        assert f'hx-post="/amigos/seguir/">Seguir a {name}</button>' in plate
        assert f'formaction="/amigos/bloquear/" hx-post="/amigos/bloquear/">Bloquear a {name}</button>' in plate
        assert f'<span class="visually-hidden">Seguir o bloquear a {name}</span>' in plate
    for position in (0, 2):
        assert "seat-menu" not in seat_html(html, position)
    # a spectator sees it on every person's seat
    assert menu_names(drawn(game, None, people={0, 1, 3}).split('id="felt"', 1)[1].split("</section>", 1)[0]) == [
        "p0",
        "p1",
        "p3",
    ]


def test_the_final_board_has_follow_and_block_for_people_but_the_viewer() -> None:
    game = game_until(4, 11, lambda g: g.phase is Phase.GAME_OVER)
    html = drawn(game, 1, people={0, 1, 2})
    ranking = html.split('<ol class="ranking">', 1)[1].split("</ol>", 1)[0]
    assert sorted(menu_names(ranking)) == ["p0", "p2"]
    for name in ("p0", "p2"):
        assert f"Seguir a {name}</button>" in ranking and f"Bloquear a {name}</button>" in ranking
    assert "Seguir a p1" not in ranking and "Seguir a Bot3" not in ranking
    assert ranking.count('<details class="rank-menu">') == 2
