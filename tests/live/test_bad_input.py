"""Bad input gets a clear error to the sender alone, and nothing changes.

Every socket test seats four people (no bots, so no clock moves the table behind our back),
connects the one whose turn it is and another seat, sends one bad request, and then checks:
the sender got exactly one error frame with the expected words (plus a fresh board when its
page was stale), the other seat got nothing at all, and the table's row (``seq``, state, phase,
turn) and its rows of rounds, bids, tricks, plays and seats are exactly as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from games.engine import Bid as BidAction
from games.engine import Phase, default_action
from games.engine.snapshot import load
from games.models import Move, Round, Seat, Table
from games.table import actions, rule_words

from .helpers import (
    SEQ,
    Tab,
    flash_message,
    is_board,
    person,
    seated_table,
    settle,
    table_fingerprint,
)

MALFORMED = "Mensaje no válido."
NO_SUCH_MOVE = "Esa jugada no existe."
STALE = "Tu pantalla no estaba al día: la mesa ha cambiado. Mira de nuevo."
NOT_YOUR_TURN = "no es tu turno"
#: Seconds of quiet after sockets open before a bad frame is sent: each opening redraws the board, through Redis
#: in services mode, and a redraw late on a loaded machine must not be taken for an answer to the frame.
OPENING_QUIET = 0.5


# -- setting a table up -----------------------------------------------------------------------


def advance(table_id: int, users: list[Any], until: Callable[[Any], bool], limit: int = 3000) -> Any:
    """Play the default move for whoever is to move until ``until(game)`` holds; the game then."""
    for _ in range(limit):
        table = Table.objects.get(pk=table_id)
        game = load(table.state)
        if until(game):
            return game
        assert table.status == Table.Status.PLAYING, "the game ended before the wanted position came up"
        actions.do_action(table_id, users[table.turn_seat], default_action(game), table.seq)
    raise AssertionError("the wanted position never came up")


def must_follow_suit(game: Any) -> bool:
    """The seat to move holds the suit led and some card of another suit, which it may not play."""
    if game.phase is not Phase.PLAYING or not game.trick:
        return False
    return any(why.code == "must_follow_suit" for why in game.play_reasons(game.turn).values())


@dataclass
class Arena:
    table_id: int
    users: list[Any]
    mover: Tab  # the seat to move
    witness: Tab  # another seat, also connected
    game: Any  # the engine state when the tabs connected

    @property
    def tabs(self) -> list[Tab]:
        return [self.mover, self.witness]


@contextlib.asynccontextmanager
async def arena(
    prepare: Callable[[int, list[Any]], Any] | None = None, mover_language: str = "es"
) -> AsyncIterator[Arena]:
    """Four people at a started table (after ``prepare(table_id, users)``), two of them connected."""
    table_id, users = await database_sync_to_async(seated_table)(4, 4, prefix="bad")
    if prepare is not None:
        await database_sync_to_async(prepare)(table_id, users)
    table = await database_sync_to_async(Table.objects.get)(pk=table_id)
    game = load(table.state)
    turn = table.turn_seat
    mover = Tab(users[turn], table_id, mover_language)
    witness = Tab(users[(turn + 1) % 4], table_id)
    try:
        for tab in (mover, witness):
            assert await tab.open()
        await settle([mover, witness], table_id, quiet=OPENING_QUIET)  # opening a seat's socket is a change
        yield Arena(table_id, users, mover, witness, game)
    finally:
        for tab in (mover, witness):
            await tab.close()


async def fingerprint(table_id: int) -> dict[str, Any]:
    return await database_sync_to_async(table_fingerprint)(table_id)


async def refused(
    place: Arena,
    sender: Tab,
    frame: Any,
    expected: str | re.Pattern[str],
    *,
    resync: bool = False,
    raw: bytes | None = None,
    bystanders: list[Tab] | None = None,
) -> str:
    """Send ``frame`` from ``sender``; check it was refused as described above; return the message."""
    before = await fingerprint(place.table_id)
    tabs = [sender] + [t for t in place.tabs + (bystanders or []) if t is not sender]
    counts = {t: len(t.frames) for t in tabs}
    if raw is not None:
        await sender.send_bytes(raw)
    else:
        await sender.send(frame)
    await sender.wait_for(lambda: sender.flashes(counts[sender]))
    await asyncio.sleep(0.1)  # room for anything else the server might (wrongly) send
    new = sender.frames[counts[sender] :]
    messages = sender.flashes(counts[sender])
    assert len(messages) == 1, messages
    message = messages[0]
    if isinstance(expected, str):
        assert message == expected
    else:
        assert expected.fullmatch(message), message
    boards = [f for f in new if is_board(f)]
    if resync:  # a fresh board at the table's seq, then the error
        assert len(boards) == 1 and new.index(boards[0]) < new.index(next(f for f in new if not is_board(f)))
        assert {int(s) for s in SEQ.findall(boards[0])} == {before["seq"]}
        assert flash_message(boards[0]) == ""
    else:
        assert boards == [], "a refused request changes nothing, so no board is sent"
    for tab in tabs[1:]:
        assert tab.frames[counts[tab] :] == [], "somebody else was sent something for it"
    assert sender.closed is None, "a bad frame does not cost the connection"
    assert await fingerprint(place.table_id) == before
    return message


pytestmark = [pytest.mark.django_db(transaction=True)]


# -- frames that are not requests at all ----------------------------------------------------


async def test_frames_that_are_not_a_json_object() -> None:
    async with arena() as place:
        for frame in [
            "this is not json",
            '{"action": "bid", ',
            '["bid", 0]',
            '"bid"',
            "17",
            "null",
            '{"action": "bid", "value": "0", "seq": NaN}',
            # nested so deep that the parser gives up (RecursionError), under the size limit
            "[" * 2000 + "]" * 2000,
            '{"action": ' + "[" * 1900 + "]" * 1900 + "}",
        ]:
            await refused(place, place.mover, frame, MALFORMED)


async def test_a_huge_frame_is_refused_even_when_its_request_is_legal() -> None:
    async with arena() as place:
        move = place.mover.game_moves()[0]
        big = json.dumps({**move, "padding": "x" * 5000})
        assert len(big) > 4096
        await refused(place, place.mover, big, MALFORMED)
        # the same move without the padding is fine
        seq = place.mover.seq
        await place.mover.send(move)
        await place.witness.wait_for(lambda: place.witness.seq == seq + 1)


async def test_a_bytes_frame() -> None:
    async with arena() as place:
        move = place.mover.game_moves()[0]
        await refused(place, place.mover, None, MALFORMED, raw=json.dumps(move).encode())


async def test_an_unknown_action() -> None:
    async with arena() as place:
        await refused(
            place, place.mover, {"action": "cheat", "value": "1o", "seq": place.mover.seq}, "Acción desconocida."
        )
        await refused(place, place.mover, {"value": "0", "seq": place.mover.seq}, "Acción desconocida.")


async def test_a_move_without_seq() -> None:
    async with arena() as place:
        move = place.mover.game_moves()[0]
        await refused(place, place.mover, {"action": move["action"], "value": move["value"]}, MALFORMED)
        await refused(place, place.mover, {**move, "seq": None}, MALFORMED)
        await refused(place, place.mover, {**move, "seq": ""}, MALFORMED)


async def test_a_move_with_a_seq_that_is_not_an_integer() -> None:
    async with arena() as place:
        move = place.mover.game_moves()[0]
        seq = place.mover.seq
        for bad in ["abc", f"{seq}.5", f"{seq}x", seq + 0.5, float(seq), True, [seq], {"seq": seq}]:
            await refused(place, place.mover, {**move, "seq": bad}, MALFORMED)


# -- requests the rules refuse ----------------------------------------------------------------


async def test_a_move_out_of_turn() -> None:
    async with arena() as place:
        await refused(place, place.witness, {"action": "bid", "value": "0", "seq": place.witness.seq}, NOT_YOUR_TURN)


async def test_a_move_out_of_turn_in_english() -> None:
    async with arena() as place:
        english = Tab(place.users[(place.game.turn + 2) % 4], place.table_id, "en")
        assert await english.open()
        try:
            await settle([english, *place.tabs], place.table_id, quiet=OPENING_QUIET)
            await refused(place, english, {"action": "bid", "value": "0", "seq": english.seq}, "it is not your turn")
        finally:
            await english.close()


async def test_a_card_that_does_not_follow_suit() -> None:
    async with arena(lambda t, u: advance(t, u, must_follow_suit)) as place:
        game = place.game
        hand = {str(c) for c in game.hands[game.turn]}
        led = game.trick[0].card.suit
        wrong, why = next(
            (str(c), why) for c, why in game.play_reasons(game.turn).items() if why.code == "must_follow_suit"
        )
        assert wrong in hand and any(c.suit is led for c in game.hands[game.turn])
        # the sentence names the suit led in the reader's words, and no card codes
        await refused(
            place,
            place.mover,
            {"action": "play", "value": wrong, "seq": place.mover.seq},
            f"debes asistir: juega {led.name_es}",
        )
        # the cards that may be played instead (the engine's parameter): the mover's own, of the suit led
        allowed = why.params["legal"].split()
        assert allowed and set(allowed) <= hand and all(c.endswith(led.value) for c in allowed)
        # and the page had offered none but those
        offered = {o["value"] for o in place.mover.game_moves()}
        assert wrong not in offered and offered == set(allowed)


async def test_a_card_that_is_not_in_your_hand() -> None:
    async with arena(lambda t, u: advance(t, u, lambda g: g.phase is Phase.PLAYING)) as place:
        game = place.game
        elsewhere = str(game.hands[(game.turn + 1) % 4][0])
        await refused(
            place,
            place.mover,
            {"action": "play", "value": elsewhere, "seq": place.mover.seq},
            f"no tienes {rule_words.card_words(elsewhere, 'es')}",
        )
        # a card that is not a card at all
        await refused(place, place.mover, {"action": "play", "value": "13o", "seq": place.mover.seq}, NO_SUCH_MOVE)
        await refused(place, place.mover, {"action": "play", "value": ["1o"], "seq": place.mover.seq}, NO_SUCH_MOVE)


async def test_a_card_while_bidding() -> None:
    async with arena() as place:
        own = str(place.game.hands[place.game.turn][0])
        await refused(
            place, place.mover, {"action": "play", "value": own, "seq": place.mover.seq}, "ahora no se juegan cartas"
        )


def three_bids_of_nothing(table_id: int, users: list[Any]) -> None:
    """Round 1 (one card): the first three bid 0, so the last may not bid 1."""
    for _ in range(3):
        table = Table.objects.get(pk=table_id)
        actions.do_action(table_id, users[table.turn_seat], BidAction(0), table.seq)


async def test_the_forbidden_last_bid() -> None:
    async with arena(three_bids_of_nothing) as place:
        assert place.game.forbidden_bid() == 1
        await refused(
            place,
            place.mover,
            {"action": "bid", "value": "1", "seq": place.mover.seq},
            "eres el último en cantar: la suma de los pedidos no puede ser 1, no puedes pedir 1",
        )
        assert [o["value"] for o in place.mover.game_moves()] == ["0"], "the page offers only the allowed bid"


async def test_a_bid_out_of_range() -> None:
    async with arena() as place:
        seq = place.mover.seq
        await refused(place, place.mover, {"action": "bid", "value": "2", "seq": seq}, "el pedido debe ser de 0 a 1")
        await refused(place, place.mover, {"action": "bid", "value": 99, "seq": seq}, "el pedido debe ser de 0 a 1")
        for bad in ["-1", "uno", "1.0", "", None, True, 1.5, [0]]:
            await refused(place, place.mover, {"action": "bid", "value": bad, "seq": seq}, NO_SUCH_MOVE)


async def test_a_trump_choice_in_a_normal_round() -> None:
    async with arena() as place:
        assert place.game.trump_card is not None
        await refused(
            place, place.mover, {"action": "trump", "value": "o", "seq": place.mover.seq}, "ahora no se elige triunfo"
        )
        await refused(place, place.mover, {"action": "trump", "value": "x", "seq": place.mover.seq}, NO_SUCH_MOVE)


async def test_start_and_leave_once_the_game_is_on() -> None:
    """Starting again is refused; leaving a started game hands the seat to the bot (the seat stays theirs),
    and leaving a second time is refused."""
    async with arena() as place:
        await refused(place, place.mover, {"action": "start", "seq": place.mover.seq}, "Esta partida ya ha empezado.")
        seq = place.witness.seq
        await place.witness.send({"action": "leave", "seq": seq})
        await place.witness.wait_for(lambda: place.witness.seq == seq + 1)
        seat = await database_sync_to_async(Seat.objects.get)(table_id=place.table_id, user=place.witness.user)
        assert seat.left and seat.away and not seat.is_bot and seat.forfeit == "left"
        board = place.witness.board
        assert "Has dejado la partida: el bot juega tu asiento hasta el final y quedas último." in board
        assert '"action": "back"' in board and 'class="leave-line"' not in board
        await refused(
            place,
            place.witness,
            {"action": "leave", "seq": place.witness.seq},
            "Ya has dejado esta partida: el bot juega por ti.",
        )


# -- stale pages and repeated frames ----------------------------------------------------------


async def test_a_stale_seq_gets_a_fresh_board() -> None:
    async with arena() as place:
        move = place.mover.game_moves()[0]
        seq = place.mover.seq
        await refused(place, place.mover, {**move, "seq": seq - 1}, STALE, resync=True)
        await refused(place, place.mover, {**move, "seq": seq + 1}, STALE, resync=True)
        await refused(place, place.mover, {**move, "seq": str(seq - 1)}, STALE, resync=True)


async def test_a_resync_request_answers_the_sender_only() -> None:
    async with arena() as place:
        before = await fingerprint(place.table_id)
        mover, witness = len(place.mover.frames), len(place.witness.frames)
        await place.mover.send({"action": "resync"})
        await place.mover.wait_for(lambda: len(place.mover.frames) > mover)
        await asyncio.sleep(0.15)
        assert len(place.mover.frames) == mover + 1 and is_board(place.mover.frames[-1])
        assert place.mover.seq == before["seq"]
        assert len(place.witness.frames) == witness
        assert await fingerprint(place.table_id) == before


async def test_the_same_frame_twice_is_applied_once() -> None:
    async with arena() as place:
        before = await fingerprint(place.table_id)
        move = place.mover.game_moves()[0]
        mover, witness = len(place.mover.frames), len(place.witness.frames)
        await place.mover.send(move)
        await place.mover.send(move)  # a double click: same seq
        await place.mover.wait_for(lambda: place.mover.flashes(mover))
        await place.witness.wait_for(lambda: place.witness.seq == before["seq"] + 1)
        await asyncio.sleep(0.2)
        after = await fingerprint(place.table_id)
        assert after["seq"] == before["seq"] + 1
        assert len(after["moves"]) == len(before["moves"]) + 1 and after["moves"][-1][2] == "b"
        assert place.mover.flashes(mover) == [STALE]
        assert place.mover.seq == before["seq"] + 1
        # the other seat saw the one move, and nothing of the refused copy
        new = place.witness.frames[witness:]
        assert len(new) == 1 and is_board(new[0]) and flash_message(new[0]) == ""


# -- people who may not act here ----------------------------------------------------------------


async def test_a_spectator_cannot_play() -> None:
    async with arena() as place:
        user = await database_sync_to_async(person)("mirón")
        spectator = Tab(user, place.table_id)
        assert await spectator.open()
        try:
            for tab in place.tabs:  # every seat has been told of the spectator (a redraw at the same seq)
                await tab.wait_for(lambda tab=tab: 'data-watchers="1"' in tab.board)
            await settle([spectator, *place.tabs], place.table_id, quiet=OPENING_QUIET)
            assert spectator.game_moves() == [] and 'data-card="' not in spectator.board
            own = str(place.game.hands[place.game.turn][0])
            for frame in [
                {"action": "bid", "value": "0", "seq": spectator.seq},
                {"action": "play", "value": own, "seq": spectator.seq},
                {"action": "start", "seq": spectator.seq},
                {"action": "leave", "seq": spectator.seq},
            ]:
                await refused(place, spectator, frame, "No estás sentado en esta mesa.")
        finally:
            await spectator.close()


async def test_an_unknown_table_closes_the_socket() -> None:
    user = await database_sync_to_async(person)("perdida")
    tab = Tab(user, 999999)
    assert await tab.open()
    await tab.wait_for(lambda: tab.closed is not None)
    assert tab.closed == 4404
    assert tab.flashes() == ["Esa mesa no existe."]
    assert not any(is_board(f) for f in tab.frames)
    assert not await database_sync_to_async(Table.objects.filter(pk=999999).exists)()


async def test_an_anonymous_visitor_is_refused() -> None:
    async with arena() as place:
        before = await fingerprint(place.table_id)
        counts = [len(t.frames) for t in place.tabs]
        anonymous = Tab(None, place.table_id)
        assert not await anonymous.open()
        assert anonymous.refused == 4401
        assert anonymous.frames == []
        await asyncio.sleep(0.1)
        assert [len(t.frames) for t in place.tabs] == counts
        assert await fingerprint(place.table_id) == before


@pytest.mark.parametrize("origin", [b"http://evil.example", b"https://testserver.evil.example", b""])
async def test_a_foreign_origin_is_refused(origin: bytes) -> None:
    async with arena() as place:
        before = await fingerprint(place.table_id)
        counts = [len(t.frames) for t in place.tabs]
        intruder = Tab(place.users[place.game.turn], place.table_id)  # even with a valid session
        assert not await intruder.open(origin=origin)
        assert intruder.frames == []
        await asyncio.sleep(0.1)
        assert [len(t.frames) for t in place.tabs] == counts
        assert await fingerprint(place.table_id) == before


# -- HTTP ------------------------------------------------------------------------------------------


def db_counts() -> dict[str, int]:
    return {
        "tables": Table.objects.count(),
        "seats": Seat.objects.count(),
        "rounds": Round.objects.count(),
        "moves": Move.objects.count(),
    }


@pytest.mark.django_db
def test_an_unknown_table_page_is_404(client: Client, player: Any) -> None:
    client.force_login(player)
    assert client.get("/mesa/999999/").status_code == 404
    assert client.get("/mesa/999999/partida.json").status_code == 404


@pytest.mark.django_db
def test_the_record_is_not_served_before_the_game_ends(client: Client) -> None:
    table_id, users = seated_table(4, 3, prefix="rec")
    client.force_login(users[0])
    assert client.get(f"/mesa/{table_id}/partida.json").status_code == 404  # waiting
    actions.do_take_seat(table_id, person("rec3"))
    assert Table.objects.get(pk=table_id).status == Table.Status.PLAYING
    response = client.get(f"/mesa/{table_id}/partida.json")  # playing: the record holds every hand
    assert response.status_code == 404
    assert b'"hands"' not in response.content
    assert client.get(f"/mesa/{table_id}/").status_code == 200


@pytest.mark.django_db
def test_posting_without_csrf_token_is_forbidden(player: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(player)
    before = db_counts()
    for url in ["/jugar/", "/mesas/nueva/"]:
        assert client.post(url, {"size": "4"}).status_code == 403
    assert db_counts() == before


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/jugar/", "/mesas/nueva/"])
@pytest.mark.parametrize("size", ["9", "2", "0", "-4", "abc", ""])
def test_a_bad_table_size_creates_nothing(client: Client, player: Any, url: str, size: str) -> None:
    client.force_login(player)
    response = client.post(url, {"size": size}, follow=True)
    assert response.redirect_chain and response.redirect_chain[-1][0] == "/"
    assert "Con las reglas «Clásica» una mesa es de 3 a 6 jugadores." in response.content.decode()
    assert db_counts() == {"tables": 0, "seats": 0, "rounds": 0, "moves": 0}


@pytest.mark.django_db
def test_quick_play_needs_a_login_and_a_post(client: Client, player: Any) -> None:
    response = client.post("/jugar/", {"size": "4"})
    assert response.status_code == 302 and "/jugar/" in response["Location"]  # to the login page, back here
    client.force_login(player)
    assert client.get("/jugar/").status_code == 405
    assert db_counts()["tables"] == 0


@pytest.mark.django_db
def test_sitting_at_an_unknown_table(client: Client, player: Any) -> None:
    client.force_login(player)
    response = client.post("/mesa/999999/sentarse/", follow=True)
    assert "Esa mesa no existe." in response.content.decode()
    assert db_counts()["seats"] == 0
