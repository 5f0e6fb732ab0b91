"""Private tables by code, stakes chosen in the lobby, and the one access check behind every door.

Everything goes through the real HTTP views (and the real socket where it matters), as a browser
would: forms posted with a session, messages read off the page they redirect to.
"""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from accounts import ledger
from accounts.models import Account, Transaction
from games.models import CODE_ALPHABET, Seat, Table
from games.table import actions

from .helpers import Tab, person, play_to_the_end

CODE = re.compile(f"^[{CODE_ALPHABET}]{{5}}$")
WRONG_CODE_LIMIT = 10


def page_messages(response: Any) -> list[str]:
    return [
        html.unescape(m).strip()
        for m in re.findall(r'<ul class="messages">\s*<li[^>]*>(.*?)</li>', response.content.decode(), re.S)
    ]


def browser(user: Any, address: str = "127.0.0.1") -> Client:
    client = Client(REMOTE_ADDR=address)
    client.force_login(user)
    return client


def ledger_state() -> dict[str, Any]:
    return {
        "accounts": sorted(Account.objects.values_list("pk", "balance")),
        "transactions": Transaction.objects.count(),
    }


def everything() -> dict[str, Any]:
    return {
        **ledger_state(),
        "tables": sorted(Table.objects.values_list("pk", "status", "seq")),
        "seats": sorted(Seat.objects.values_list("table_id", "position", "user_id")),
    }


def create_private(client: Client, size: int = 3, stake: int = 500, bots: bool = True) -> Table:
    fields = {"size": str(size), "stake": str(stake)}
    if bots:
        fields["bots"] = "on"
    response = client.post("/mesas/privada/", fields)
    assert response.status_code == 302, page_messages(client.get("/"))
    table_id = int(re.search(r"/mesa/(\d+)/", response["Location"]).group(1))
    return Table.objects.get(pk=table_id)


# -- creating and joining ------------------------------------------------------------------


@pytest.mark.django_db
def test_a_private_table_gets_a_code_and_never_shows_in_the_open_list() -> None:
    host, other = person("anfitriona"), person("mirona")
    table = create_private(browser(host))
    assert CODE.match(table.code) and not table.is_public and table.stake == 500 and table.size == 3
    page = browser(host).get(f"/mesa/{table.pk}/").content.decode()
    assert f'id="table-code">{table.code}<' in page
    assert f"/mesa/privada/{table.code}/" in page  # the share link
    assert ledger.balance(host.pk) == 4_500
    lobby = browser(other).get("/").content.decode() + browser(other).get("/mesas/abiertas/").content.decode()
    assert f"Mesa {table.pk}" not in lobby and table.code not in lobby


@pytest.mark.django_db
@pytest.mark.parametrize("typed", ["{code}", "{lower}", " {a} {b} ", "\t{lower}\n"])
def test_joining_by_typing_the_code_in_any_case_with_spaces(typed: str) -> None:
    host, guest = person("anfitrion"), person("invitada")
    table = create_private(browser(host))
    code = table.code
    text = typed.format(code=code, lower=code.lower(), a=code[:2].lower(), b=code[2:])
    response = browser(guest).post("/mesas/codigo/", {"code": text})
    assert response.status_code == 302 and response["Location"] == f"/mesa/{table.pk}/"
    assert Seat.objects.filter(table=table, user=guest, position=1).exists()
    assert ledger.balance(guest.pk) == 4_500
    assert Account.objects.get(kind="pot", table=table).balance == 1_000
    table.refresh_from_db()
    assert table.status == Table.Status.WAITING  # a private table waits for its host, even when full


@pytest.mark.django_db
def test_the_share_link_shows_the_table_and_sitting_is_a_separate_post() -> None:
    host, guest = person("anfitrion"), person("enlace")
    table = create_private(browser(host), stake=100)
    client = browser(guest)
    page = client.get(f"/mesa/privada/{table.code.lower()}/")
    text = page.content.decode()
    assert page.status_code == 200 and "Mesa privada de anfitrion" in text and "Sentarse" in text
    assert not Seat.objects.filter(table=table, user=guest).exists()  # opening a link moves no chips
    assert ledger.balance(guest.pk) == 5_000
    response = client.post(f"/mesa/{table.pk}/sentarse/", {"code": table.code})
    assert response.status_code == 302 and Seat.objects.filter(table=table, user=guest).exists()
    assert ledger.balance(guest.pk) == 4_900
    assert client.get(f"/mesa/privada/{table.code}/")["Location"] == f"/mesa/{table.pk}/"  # already seated


@pytest.mark.django_db
def test_only_the_host_starts_and_bots_fill_the_rest_when_allowed() -> None:
    host, guest = person("anfitrion"), person("invitado")
    table = create_private(browser(host), size=4, stake=500)
    actions.do_take_seat(table.pk, guest, code=table.code)
    with pytest.raises(actions.ActionError) as refused:
        actions.do_start(table.pk, guest)
    assert refused.value.code == "not_host"
    assert refused.value.message("es") == "Solo quien ha creado la mesa puede empezar la partida."
    actions.do_start(table.pk, host)
    table.refresh_from_db()
    seats = list(Seat.objects.filter(table=table))
    assert table.status == Table.Status.PLAYING and [s.is_bot for s in seats] == [False, False, True, True]
    assert Account.objects.get(kind="pot", table=table).balance == 2_000
    assert Account.objects.get(kind="house").balance == -1_000  # the bots' stakes
    assert ledger.audit() == []


@pytest.mark.django_db
def test_a_table_without_bots_starts_only_with_every_seat_taken() -> None:
    host, b, c = person("anfitrion"), person("b"), person("c")
    table = create_private(browser(host), size=3, stake=0, bots=False)
    actions.do_take_seat(table.pk, b, code=table.code)
    with pytest.raises(actions.ActionError) as refused:
        actions.do_start(table.pk, host)
    assert refused.value.code == "need_players" and "tienen que estar los 3" in refused.value.message("es")
    actions.do_take_seat(table.pk, c, code=table.code)
    assert Table.objects.get(pk=table.pk).status == Table.Status.WAITING
    actions.do_start(table.pk, host)
    assert Table.objects.get(pk=table.pk).status == Table.Status.PLAYING
    assert not Seat.objects.filter(table=table, is_bot=True).exists()


@pytest.mark.django_db
def test_the_host_cancels_before_the_start_and_every_stake_comes_back() -> None:
    host, b, c = person("anfitrion"), person("b"), person("c")
    table = create_private(browser(host), size=4, stake=2000)
    for user in (b, c):
        actions.do_take_seat(table.pk, user, code=table.code)
    assert [ledger.balance(u.pk) for u in (host, b, c)] == [3_000, 3_000, 3_000]
    with pytest.raises(actions.ActionError) as refused:
        actions.do_cancel(table.pk, b)
    assert refused.value.code == "not_host"
    actions.do_cancel(table.pk, host)
    with pytest.raises(actions.ActionError):
        actions.do_cancel(table.pk, host)  # a repeated cancel refunds nothing more
    assert Table.objects.get(pk=table.pk).status == Table.Status.CANCELLED
    assert [ledger.balance(u.pk) for u in (host, b, c)] == [5_000, 5_000, 5_000]
    assert Account.objects.get(kind="pot", table=table).balance == 0
    assert Transaction.objects.filter(table=table, kind="refund").count() == 3
    response = browser(person("tarde")).post("/mesas/codigo/", {"code": table.code}, follow=True)
    assert page_messages(response) == ["Ese código ya no sirve: la partida ha empezado o se ha cancelado."]
    assert ledger.audit() == []


@pytest.mark.django_db
def test_a_guest_who_stands_up_gets_the_stake_back_once() -> None:
    host, guest = person("anfitrion"), person("indecisa")
    table = create_private(browser(host), stake=100)
    actions.do_take_seat(table.pk, guest, code=table.code)
    actions.do_leave_seat(table.pk, guest)
    assert ledger.balance(guest.pk) == 5_000 and not Seat.objects.filter(table=table, user=guest).exists()
    actions.do_take_seat(table.pk, guest, code=table.code)  # sits again: a new stake, a new seat
    assert ledger.balance(guest.pk) == 4_900
    actions.do_leave_seat(table.pk, host)  # the host standing up calls the table off
    assert Table.objects.get(pk=table.pk).status == Table.Status.CANCELLED
    assert ledger.balance(guest.pk) == 5_000 and ledger.balance(host.pk) == 5_000
    assert ledger.audit() == []


@pytest.mark.django_db
def test_a_started_tables_code_and_link_no_longer_work() -> None:
    host, guest, late = person("anfitrion"), person("invitada"), person("tardona")
    table = create_private(browser(host))
    actions.do_take_seat(table.pk, guest, code=table.code)
    actions.do_start(table.pk, host)
    client = browser(late)
    before = everything()
    for response in (
        client.post("/mesas/codigo/", {"code": table.code}, follow=True),
        client.get(f"/mesa/privada/{table.code}/", follow=True),
    ):
        assert page_messages(response) == ["Ese código ya no sirve: la partida ha empezado o se ha cancelado."]
    response = client.post(f"/mesa/{table.pk}/sentarse/", {"code": table.code}, follow=True)
    assert page_messages(response) == ["Ese código ya no sirve: la partida ha empezado o se ha cancelado."]
    response = client.post(f"/mesa/{table.pk}/sentarse/", {"code": "QQQQQ"}, follow=True)
    assert page_messages(response) == ["Esa mesa no existe."]  # no code, no hint that the table exists
    assert everything() == before


# -- one access check --------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_nobody_else_reaches_a_private_table_by_its_number(settings: Any) -> None:
    settings.POCHA_BOT_DELAY = 0
    host, guest, outsider = [await database_sync_to_async(person)(n) for n in ("anfitrion", "invitado", "fisgon")]

    def prepare() -> Table:
        table = create_private(browser(host), size=3, stake=100)
        actions.do_take_seat(table.pk, guest, code=table.code)
        return table

    table = await database_sync_to_async(prepare)()

    def http_doors() -> None:
        client = browser(outsider)
        assert client.get(f"/mesa/{table.pk}/").status_code == 404
        assert client.get(f"/mesa/{table.pk}/partida.json").status_code == 404
        before = everything()
        response = client.post(f"/mesa/{table.pk}/sentarse/", follow=True)
        assert page_messages(response) == ["Esa mesa no existe."]
        assert everything() == before
        assert browser(guest).get(f"/mesa/{table.pk}/").status_code == 200

    await database_sync_to_async(http_doors)()
    spy = Tab(outsider, table.pk)
    try:
        assert await spy.open()  # the handshake is accepted so the refusal can be said, then closed
        await spy.wait_for(lambda: spy.closed is not None)
        assert spy.closed == 4404
        assert spy.flashes() == ["Esa mesa no existe."]
        assert not any(table.code in f for f in spy.frames) and spy.boards == []
    finally:
        await spy.close()

    def finish_and_check() -> None:
        actions.do_start(table.pk, host)
        play_to_the_end(table.pk)
        assert browser(outsider).get(f"/mesa/{table.pk}/partida.json").status_code == 404
        record = browser(guest).get(f"/mesa/{table.pk}/partida.json")
        assert record.status_code == 200 and record.json()["format"] == "pocha-record/1"

    await database_sync_to_async(finish_and_check)()


# -- wrong codes -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_wrong_codes_are_limited_per_person_and_per_address() -> None:
    host = person("anfitrion")
    table = create_private(browser(host), stake=0)
    wrong = next(c * 5 for c in CODE_ALPHABET if c * 5 != table.code)
    guesser = browser(person("adivina"), "10.1.1.1")
    neighbour = browser(person("vecina"), "10.1.1.1")
    for _ in range(WRONG_CODE_LIMIT):
        response = guesser.post("/mesas/codigo/", {"code": wrong}, follow=True)
        assert page_messages(response) == [f"No hay ninguna mesa esperando con el código {wrong}."]
    before = everything()
    limited = "Demasiados códigos equivocados seguidos. Espera un minuto y vuelve a probar."
    response = guesser.post("/mesas/codigo/", {"code": table.code}, follow=True)  # even the right one
    assert page_messages(response) == [limited]
    assert page_messages(guesser.get(f"/mesa/privada/{table.code}/", follow=True)) == [limited]
    # the same person from another address, and another person from the same address: both still limited
    same_person = Client(REMOTE_ADDR="10.9.9.9")
    same_person.force_login(response.wsgi_request.user)
    assert page_messages(same_person.post("/mesas/codigo/", {"code": table.code}, follow=True)) == [limited]
    assert page_messages(neighbour.post("/mesas/codigo/", {"code": table.code}, follow=True)) == [limited]
    assert everything() == before
    # someone else, elsewhere, joins with the right code
    friend = person("amiga")
    response = browser(friend, "10.2.2.2").post("/mesas/codigo/", {"code": table.code})
    assert response["Location"] == f"/mesa/{table.pk}/" and Seat.objects.filter(table=table, user=friend).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("typed", ["", "abc", "ABCDEFGH", "12345", "KDMT0", "KDMTI", "x" * 500, "K D M"])
def test_a_malformed_code_is_explained_and_counted(typed: str) -> None:
    client = browser(person("torpe"))
    before = everything()
    response = client.post("/mesas/codigo/", {"code": typed}, follow=True)
    assert page_messages(response) == ["Un código de mesa son cinco letras, como «KDMTR»."]
    assert everything() == before


@pytest.mark.django_db
def test_an_unknown_share_link_goes_back_to_the_lobby_with_a_message() -> None:
    response = browser(person("curiosa")).get("/mesa/privada/QQQQQ/", follow=True)
    assert response.redirect_chain[-1][0] == "/"
    assert page_messages(response) == ["No hay ninguna mesa esperando con el código QQQQQ."]


# -- stakes in the lobby ---------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/jugar/", "/mesas/nueva/", "/mesas/privada/"])
@pytest.mark.parametrize("stake", ["250", "-100", "abc", "", "1e3", "2000.0"])
def test_a_stake_that_is_not_offered_creates_nothing(url: str, stake: str) -> None:
    client = browser(person("tramposo"))
    before = everything()
    response = client.post(url, {"size": "4", "stake": stake}, follow=True)
    assert page_messages(response) == ["Esa apuesta no existe: las mesas son gratis o de 100, 500 o 2.000 fichas."]
    assert everything() == before


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/jugar/", "/mesas/nueva/", "/mesas/privada/"])
def test_no_table_without_the_chips_for_its_stake(url: str) -> None:
    poor = person("pobre")
    ledger.adjust(poor.pk, -4_950, "prueba", "poor")
    before = everything()
    response = browser(poor).post(url, {"size": "4", "stake": "100"}, follow=True)
    assert page_messages(response) == [
        "No tienes fichas suficientes: tienes 50 y esta mesa pide 100. Juega en una mesa gratis o de menos "
        "fichas; si te quedan menos de 100, pide la recarga diaria de 500 en tu cartera."
    ]
    assert everything() == before


@pytest.mark.django_db
def test_sitting_without_the_chips_joining_full_or_twice_changes_nothing() -> None:
    host = person("anfitrion")
    table = actions.do_create_table(host, 3, stake=2000)
    poor = person("justo")
    ledger.adjust(poor.pk, -3_001, "prueba", "justo")
    before = everything()
    response = browser(poor).post(f"/mesa/{table.pk}/sentarse/", follow=True)
    assert page_messages(response)[0].startswith("No tienes fichas suficientes: tienes 1999 y esta mesa pide 2000.")
    response = browser(host).post(f"/mesa/{table.pk}/sentarse/", follow=True)
    assert page_messages(response) == ["Ya estás sentado en esta mesa."]
    assert everything() == before
    private = create_private(browser(person("otra")), size=3, stake=0)
    for name in ("p1", "p2"):
        actions.do_take_seat(private.pk, person(name), code=private.code)
    late = browser(person("p3"))
    before = everything()
    response = late.post("/mesas/codigo/", {"code": private.code}, follow=True)
    assert page_messages(response) == ["La mesa está completa."]
    assert everything() == before


@pytest.mark.django_db
def test_quick_play_matches_size_and_stake_and_remembers_the_choice() -> None:
    a, b, c = person("rapida"), person("rapido"), person("otra")
    client_a = browser(a)
    client_a.post("/jugar/", {"size": "3", "stake": "500"})
    table = Table.objects.get(seats__user=a)
    assert (table.size, table.stake, table.is_quick, table.is_public) == (3, 500, True, True)
    browser(b).post("/jugar/", {"size": "3", "stake": "500"})
    assert Seat.objects.get(user=b).table_id == table.pk  # the same table
    browser(c).post("/jugar/", {"size": "3", "stake": "100"})
    assert Seat.objects.get(user=c).table_id != table.pk  # another stake, another table
    assert [ledger.balance(u.pk) for u in (a, b, c)] == [4_500, 4_500, 4_900]
    home = client_a.get("/").content.decode()
    assert re.search(r'name="size" value="3" checked', home) and re.search(r'name="stake" value="500" checked', home)
    lobby = browser(person("mira")).get("/mesas/abiertas/").content.decode()
    assert re.search(
        rf"Mesa {table.pk}: 2 de 3\s*· <span class=\"rules-name\">Clásica</span>"
        r"\s*· <span class=\"game-length\">18 rondas · unos \d+ min</span>\s*· apuesta 500, bote 1.000",
        lobby,
    ), lobby


@pytest.mark.django_db(transaction=True)
async def test_a_private_table_over_the_socket_host_controls_and_errors_to_the_sender_only() -> None:
    host, guest = [await database_sync_to_async(person)(n) for n in ("anfitrion", "invitada")]

    def prepare() -> Table:
        table = create_private(browser(host), size=3, stake=100)
        actions.do_take_seat(table.pk, guest, code=table.code)
        return table

    table = await database_sync_to_async(prepare)()
    tabs = [Tab(host, table.pk), Tab(guest, table.pk)]
    try:
        for tab in tabs:
            assert await tab.open()
        for tab in tabs:
            await tab.wait_for(lambda tab=tab: tab.board)
        await asyncio.sleep(0.3)  # each socket opening redraws the others' boards (presence)
        assert "Empezar" in tabs[0].board and "Cancelar la mesa" in tabs[0].board
        assert '"action": "start"' not in tabs[1].board and '"action": "cancel"' not in tabs[1].board
        assert table.code in tabs[1].board  # the seated guest may pass the code on
        counts = [len(t.frames) for t in tabs]
        await tabs[1].send({"action": "start", "seq": tabs[1].seq})
        await tabs[1].wait_for(lambda: tabs[1].flashes(counts[1]))
        assert tabs[1].flashes(counts[1]) == ["Solo quien ha creado la mesa puede empezar la partida."]
        await tabs[1].send({"action": "cancel", "seq": tabs[1].seq})
        await tabs[1].wait_for(lambda: len(tabs[1].flashes(counts[1])) == 2)
        assert tabs[1].flashes(counts[1])[1] == "Solo quien ha creado la mesa puede cancelarla."
        assert len(tabs[0].frames) == counts[0]  # the host heard nothing of it
        seq = tabs[0].seq
        await tabs[0].send({"action": "cancel", "seq": seq})
        for tab in tabs:
            await tab.wait_for(lambda tab=tab: "Partida cancelada" in tab.board)
        assert "Se han devuelto las apuestas." in tabs[1].board
        assert 'data-chips="5000"' in tabs[1].board  # the header's count, redrawn with the refund
    finally:
        for tab in tabs:
            await tab.close()
    balances = await database_sync_to_async(lambda: [ledger.balance(host.pk), ledger.balance(guest.pk)])()
    assert balances == [5_000, 5_000]
