"""Friends in real browsers (Debian's Chromium) on the real server, through the pages and their sockets.

Ana and Bruno sign up in two browser contexts and follow each other from each other's profile («Seguir»): both
profiles then say «Sois amigos».  Ana opens «Amigos»: Bruno, whose lobby is open, is «En línea»; Bruno closes
every tab, and Ana's «Amigos» says «Desconectado» within seconds, without a reload; Bruno opens the lobby again
and he is «En línea» again, live.  Ana creates a private table with a stake and invites Bruno by name from its
waiting board: Bruno's open lobby shows the invitation live, he clicks «Unirme» and is seated, his header down by
the stake.  He stands up («Levantarse»), chooses «Nadie» under «Quién puede invitarte», and Ana's second
invitation is refused with a clear message: no banner for Bruno, nothing pending in the database.

«Ver más» adds a list's next page in place, and the lists' live drawings keep the pages it added.
"""

from __future__ import annotations

import re
import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.server import Daphne

from .pages import BrowserPerson, fichas

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the playwright package is missing (pip install -e '.[dev]')"
)
expect = sync_api.expect

VIEWPORT = {"width": 1100, "height": 900}
PASSWORD = "cuarenta-bazas-2025"
WELCOME = 5_000
STAKE = 100
SIZE = 3
PRESENCE_MS = 8_000  # how long «Amigos» may take to show a person gone or back (their sockets' notices)
LIVE_MS = 8_000  # how long a page may take to show what its socket is sent


class Person(BrowserPerson):
    """One person in their own browser context; reduced motion (no slides to render)."""

    def __init__(self, browser: Any, server: Daphne, name: str) -> None:
        super().__init__(browser, server, name, VIEWPORT, reduced_motion="reduce")

    def sign_up(self) -> None:
        page = self.page
        page.goto("/accounts/signup/")
        page.fill("input[name=username]", self.name)
        page.fill("input[name=password1]", PASSWORD)
        page.fill("input[name=password2]", PASSWORD)
        page.locator("form.stacked button[type=submit]").click()
        page.wait_for_url(re.compile(r"/$"))
        expect(page.locator(".site-nav .who")).to_have_text(self.name)
        expect_header_chips(self, WELCOME)

    def nav(self, name: str) -> None:
        """Follow a link of the site's navigation («Jugar», «Amigos»…) and wait for its page's socket."""
        self.page.get_by_role("navigation", name="Principal").get_by_role("link", name=name, exact=True).click()
        self.page.wait_for_load_state()
        expect_site_socket(self.page)


@pytest.fixture
def people(chromium: Any, pocha_server: Daphne) -> Iterator[list[Person]]:
    made: list[Person] = []
    yield made
    for person in made:
        person.context.close()


def arrive(people: list[Person], browser: Any, server: Daphne, name: str) -> Person:
    person = Person(browser, server, f"{name}_{uuid.uuid4().hex[:6]}")
    people.append(person)
    person.sign_up()
    return person


def expect_header_chips(person: Person, amount: int) -> None:
    chips = person.page.locator("#chips #chips-amount")
    expect(chips, f"{person.name}'s header should show {amount} chips").to_have_attribute("data-chips", str(amount))
    expect(chips, f"{person.name}'s header should write {amount} as {fichas(amount)}").to_have_text(fichas(amount))


def expect_site_socket(page: Any) -> None:
    """The page's socket to the site is open (htmx's ws extension keeps it on ``#site-live``'s internal data:
    the page's own element says nothing, so this asks the browser for the live sockets' state)."""
    page.wait_for_function(
        """() => {
          const el = document.getElementById('site-live');
          const data = el && el['htmx-internal-data'];
          const socket = data && data.webSocket;
          return !!socket && socket.socket && socket.socket.readyState === WebSocket.OPEN;
        }""",
        timeout=LIVE_MS,
    )


def follow_from_profile(person: Person, other: Person) -> None:
    page = person.page
    page.goto(f"/jugador/{other.name}/")
    social = page.locator("#profile-social")
    social.get_by_role("button", name="Seguir", exact=True).click()
    page.wait_for_load_state()
    expect(page.locator("#profile-social").get_by_role("button", name="Dejar de seguir")).to_be_visible()


def pending_invitations(database: Path, recipient: str) -> list[tuple[int, str]]:
    """The invitations to ``recipient`` still pending, read from the server's SQLite file: (table, sender)."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        return db.execute(
            "SELECT i.table_id, s.username FROM games_invitation i"
            " JOIN auth_user r ON r.id = i.recipient_id JOIN auth_user s ON s.id = i.sender_id"
            " WHERE r.username = ? AND i.status = 'pending'",
            (recipient,),
        ).fetchall()


def invite(host: Person, name: str | None) -> Any:
    """The host's «Invitar» on the waiting private table's board, the name typed (``None``: as it already is);
    the flash it answers into."""
    form = host.page.locator("#invite-form")
    if name is not None:
        form.get_by_label("Invitar a").fill(name)
    # A board arriving at the moment of the click (the socket's first one, someone sitting down) replaces the
    # form, and the click may land on the one going away and send nothing: then it is clicked again, as a person
    # would.  Only a click that sent no request is repeated (one that did is never sent twice).
    for attempt in range(3):
        try:
            with host.page.expect_request(
                lambda request: request.method == "POST" and "/invitaciones/invitar/" in request.url, timeout=3_000
            ):
                form.get_by_role("button", name="Invitar", exact=True).click()
            break
        except sync_api.TimeoutError:
            assert attempt < 2, "«Invitar» sent nothing, three times"
    return host.page.locator("#flash")


def test_friends_see_each_other_online_and_invite(
    chromium: Any, pocha_server: Daphne, people: list[Person], screenshot_dir: Path
) -> None:
    started = time.monotonic()
    assert pocha_server.database is not None
    ana = arrive(people, chromium, pocha_server, "ana")
    bruno = arrive(people, chromium, pocha_server, "bruno")

    # 1. they follow each other from each other's profile: both are friends
    follow_from_profile(ana, bruno)
    expect(ana.page.locator("#profile-social .friends-tag")).to_have_count(0)
    follow_from_profile(bruno, ana)
    expect(bruno.page.locator("#profile-social")).to_contain_text("Sois amigos")
    ana.page.reload()
    expect(ana.page.locator("#profile-social")).to_contain_text("Sois amigos")

    # 2. Bruno has the lobby open: on Ana's «Amigos» he is a friend, online
    bruno.nav("Jugar")
    ana.nav("Amigos")
    expect(ana.page).to_have_url(re.compile(r"/amigos/$"))
    row = ana.page.locator(f"#friends-mutual li.person[data-person='{bruno.name}']")
    presence = row.locator(".presence")
    expect(presence).to_have_text("En línea", timeout=PRESENCE_MS)
    expect(row).to_have_attribute("data-state", "online")
    ana.page.screenshot(path=str(screenshot_dir / "friends-online.png"), full_page=True)

    # Bruno closes every tab: Ana's page says he has gone, without a reload
    ana.page.evaluate("window.__sameFriendsPage = true")  # gone if the page were loaded again
    for page in list(bruno.context.pages):
        page.close()
    closed = time.monotonic()
    expect(presence, "Bruno closed every tab: Ana's «Amigos» should say so").to_have_text(
        "Desconectado", timeout=PRESENCE_MS
    )
    gone_after = time.monotonic() - closed
    expect(row).to_have_attribute("data-state", "offline")

    # he opens the lobby again: online again, live
    bruno.fresh_page().goto("/")
    expect_site_socket(bruno.page)
    opened = time.monotonic()
    expect(presence, "Bruno opened the lobby again: Ana's «Amigos» should say so").to_have_text(
        "En línea", timeout=PRESENCE_MS
    )
    back_after = time.monotonic() - opened
    assert ana.page.evaluate("window.__sameFriendsPage === true"), "Ana's «Amigos» was loaded again"
    assert ana.page.url.endswith("/amigos/"), ana.page.url

    # 3. Ana creates a private table with a stake, and invites Bruno from its waiting board
    ana.nav("Jugar")
    private = ana.page.locator("#private")
    private.get_by_label("Jugadores").select_option(str(SIZE))
    private.get_by_label("Apuesta").select_option(str(STAKE))
    private.get_by_role("button", name="Crear mesa privada").click()
    ana.page.wait_for_url(re.compile(r"/mesa/\d+/$"))
    table_url = ana.page.url
    table_id = int(re.search(r"/mesa/(\d+)/$", table_url).group(1))  # type: ignore[union-attr]
    expect(ana.page.locator("#connection")).to_have_attribute("data-state", "open")
    expect_header_chips(ana, WELCOME - STAKE)

    banner = bruno.page.locator("#invitation-banner")
    expect(banner.locator(".invitation")).to_have_count(0)
    flash = invite(ana, bruno.name)
    expect(flash).to_have_text(f"Invitación enviada a {bruno.name}.")
    assert pending_invitations(pocha_server.database, bruno.name) == [(table_id, ana.name)]

    # Bruno's open lobby shows it, live: whose, the stake, «Unirme» and «No, gracias»
    invitation = banner.locator(".invitation[data-status='pending']")
    expect(invitation, "the invitation should reach Bruno's open lobby over its socket").to_have_count(
        1, timeout=LIVE_MS
    )
    expect(invitation).to_contain_text(f"{ana.name} te invita a su mesa privada")
    expect(invitation).to_contain_text(f"apuesta {fichas(STAKE)} fichas")
    expect(invitation.get_by_role("button", name="No, gracias")).to_be_visible()
    bruno.page.screenshot(path=str(screenshot_dir / "friends-invitation-banner.png"), full_page=True)
    assert bruno.page.url.endswith("/"), bruno.page.url

    invitation.get_by_role("button", name="Unirme").click()
    expect(bruno.page, "«Unirme» should take Bruno to the table").to_have_url(table_url)
    expect(bruno.page.locator("#players li.seat.me")).to_contain_text(bruno.name)
    expect_header_chips(bruno, WELCOME - STAKE)
    for person in (ana, bruno):  # Ana's board learns of Bruno over the socket
        expect(person.page.locator("#players li.seat", has_text=bruno.name)).to_have_count(1)
        expect(person.page.locator("#board-status .stake-line")).to_have_text(
            f"Apuesta: {fichas(STAKE)} fichas · Bote: {fichas(2 * STAKE)} fichas"
        )
    assert pending_invitations(pocha_server.database, bruno.name) == []

    # 4. Ana starts typing Bruno's name again; Bruno stands up (his stake back): the board Ana's page draws
    # then keeps what she typed
    invite_name = ana.page.locator("#invite-form").get_by_label("Invitar a")
    invite_name.fill(bruno.name)
    expect(bruno.page.locator("#connection")).to_have_attribute("data-state", "open")
    bruno.page.locator("#controls").get_by_role("button", name="Levantarse").click()
    expect(ana.page.locator("#players li.seat", has_text=bruno.name)).to_have_count(0)
    expect(invite_name, "a new board should keep the name the host was typing").to_have_value(bruno.name)
    expect(invite_name).to_be_focused()
    expect_header_chips(bruno, WELCOME)

    # he chooses «Nadie» on «Amigos» and waits in the lobby
    bruno.nav("Amigos")
    preference = bruno.page.locator("#invite-preference")
    preference.get_by_label("Nadie").check()
    preference.get_by_role("button", name="Guardar").click()
    bruno.page.wait_for_load_state()
    expect(bruno.page.locator(".messages")).to_contain_text("Ahora no puede invitarte nadie.")
    expect(bruno.page.locator("#invite-preference").get_by_label("Nadie")).to_be_checked()
    bruno.nav("Jugar")
    expect(banner.locator(".invitation")).to_have_count(0)

    # Ana invites him again: a clear refusal, to her alone; nothing reaches Bruno, nothing is pending
    flash = invite(ana, None)
    expect(flash).to_have_text(f"{bruno.name} no acepta invitaciones de nadie.")
    ana.page.screenshot(path=str(screenshot_dir / "friends-invitation-refused.png"), full_page=True)
    assert pending_invitations(pocha_server.database, bruno.name) == []
    bruno.page.wait_for_timeout(1_000)  # a banner would come over the socket within its settling time (0.25 s)
    expect(banner.locator(".invitation")).to_have_count(0)
    expect(bruno.page.locator("#site-flash")).to_have_text("")

    # 5. no page reported an error (the conftest checks every page again after the test)
    for person in (ana, bruno):
        assert person.errors == [], f"{person.name}'s page reported errors: {person.errors}"
    print(
        f"\nfriends in the browser: test {time.monotonic() - started:.1f} s; «Amigos» showed Bruno gone "
        f"{gone_after:.2f} s after his last tab closed, back {back_after:.2f} s after his lobby's socket opened"
    )


#: Following many people at once (``manage.py shell``: through the page, the follows' rate limit would refuse
#: the 32nd): ``{name}`` follows ``{also}`` and ``{count}`` new people, ``{prefix}00`` … by name.
FOLLOW_MANY = """
from django.contrib.auth import get_user_model
from accounts.models import Follow
User = get_user_model()
ana = User.objects.get(username="{name}")
Follow.objects.create(follower=ana, followee=User.objects.get(username="{also}"))
for i in range({count}):
    other = User.objects.create_user("{prefix}%02d" % i, password=None)
    Follow.objects.create(follower=ana, followee=other)
print("ok")
"""


def test_ver_mas_adds_a_lists_next_page_and_the_live_drawings_keep_it(
    chromium: Any, pocha_server: Daphne, people: list[Person], screenshot_dir: Path
) -> None:
    """Ana follows Bea, whose lobby is open, and 32 people away: «A quien sigues (33)» draws Bea and 30 of the
    others, and «Ver más»; clicking it adds the last two in place through htmx (the page not loaded again).  Bea
    closes her tab: the socket draws Ana's lists again, Bea away, and the page keeps the two pages it showed
    (static/js/friends.js asks for the lists again with them).  «Dejar de seguir» on a row «Ver más» added works
    as on any other: the answer in the flash, the lists drawn again, both pages still shown."""
    ana = arrive(people, chromium, pocha_server, "ana")
    bea = arrive(people, chromium, pocha_server, "bea")
    prefix = f"sigo{uuid.uuid4().hex[:4]}_"
    script = FOLLOW_MANY.format(name=ana.name, also=bea.name, count=32, prefix=prefix)
    out = pocha_server.manage("shell", "-c", script)
    assert out.strip().endswith("ok"), out
    ana.nav("Amigos")
    following = ana.page.locator("#friends-following")
    expect(following.locator("h2")).to_contain_text("A quien sigues (33)")
    rows = following.locator("li.person")
    bea_row = following.locator(f"li.person[data-person='{bea.name}']")
    expect(bea_row).to_have_attribute("data-state", "online", timeout=PRESENCE_MS)
    expect(rows).to_have_count(31)
    expect(rows.last).to_have_attribute("data-person", f"{prefix}29")
    ana.page.evaluate("window.__sameFriendsPage = true")  # gone if the page were loaded again
    ana.page.screenshot(path=str(screenshot_dir / "friends-first-page.png"), full_page=True)

    following.get_by_role("link", name="Ver más").click()
    expect(rows, "«Ver más» should add the list's next page in place").to_have_count(33)
    expect(rows.last).to_have_attribute("data-person", f"{prefix}31")
    expect(following.get_by_role("link", name="Ver más")).to_have_count(0)
    ana.page.screenshot(path=str(screenshot_dir / "friends-ver-mas.png"), full_page=True)

    for page in list(bea.context.pages):
        page.close()
    expect(bea_row, "Bea closed her tab: Ana's «Amigos» should say so").to_have_attribute(
        "data-state", "offline", timeout=PRESENCE_MS
    )
    expect(rows, "the socket's drawing should keep the pages «Ver más» added").to_have_count(33)
    expect(following.locator("h2")).to_contain_text("A quien sigues (33)")
    expect(rows.first).to_have_attribute("data-person", bea.name)  # away now: among the others, by name

    rows.last.get_by_role("button", name="Dejar de seguir").click()
    expect(ana.page.locator("#flash")).to_have_text(f"Has dejado de seguir a {prefix}31.")
    expect(following.locator("h2")).to_contain_text("A quien sigues (32)")
    expect(rows).to_have_count(32)
    expect(rows.last).to_have_attribute("data-person", f"{prefix}30")
    assert ana.page.evaluate("window.__sameFriendsPage === true"), "«Amigos» was loaded again"
    assert ana.page.url.endswith("/amigos/"), ana.page.url
    assert ana.errors == [], f"Ana's page reported errors: {ana.errors}"
