"""Table talk: preset phrases said by a seated person reach every socket at the table, each drawn in its
viewer's language; anything else gets a clear error to the sender alone, and nothing changes.

Four people sit at a started table (no bots, so no clock moves it behind our back); three of them and
a stranger watching are connected.  A phrase is a frame of exactly one agreed shape
(``<div id="talk-event" data-talk-seat=… data-talk-phrase=… data-talk-name=…>text</div>``), with no
seq: the table's ``seq`` and its rows stay as they were.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from accounts.models import Profile
from games.engine import ALL_CARDS
from games.models import Seat
from games.read import talk as talk_view
from games.table import talk

from .helpers import Tab, is_board, person, seated_table, settle, table_fingerprint
from .talk_helpers import Said, is_talk, parse_talk, quiet, talk_limits, talk_of  # noqa: F401 (a fixture)
from .test_secrecy import cards_named

NO_SUCH_PHRASE = "Esa frase no existe."
NOT_A_PLAYER = "Solo los jugadores de la mesa pueden hablar."
TOO_MANY = "Demasiados mensajes: espera un momento."
MALFORMED = "Mensaje no válido."

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("talk_limits")]


@dataclass
class Room:
    table_id: int
    users: list[Any]
    players: list[Tab]  # seats 0, 1 (Spanish) and 2 (English)
    spectator: Tab  # a stranger watching, in Spanish

    @property
    def tabs(self) -> list[Tab]:
        return [*self.players, self.spectator]


@contextlib.asynccontextmanager
async def room(size: int = 4, humans: int = 4) -> AsyncIterator[Room]:
    """``humans`` people at a table of ``size`` (started when full), seats 0-2 and a stranger connected."""
    table_id, users = await database_sync_to_async(seated_table)(size, humans, prefix="charla")
    stranger = await database_sync_to_async(person)("mirona")
    players = [Tab(users[0], table_id), Tab(users[1], table_id), Tab(users[2], table_id, "en")]
    spectator = Tab(stranger, table_id)
    place = Room(table_id, users, players, spectator)
    try:
        for tab in place.tabs:
            assert await tab.open()
        await settle(place.tabs, table_id)  # opening a seat's socket is itself a change
        yield place
    finally:
        for tab in place.tabs:
            await tab.close()


async def fingerprint(table_id: int) -> dict[str, Any]:
    return await database_sync_to_async(table_fingerprint)(table_id)


async def seat_name(table_id: int, position: int) -> str:
    return await database_sync_to_async(lambda: Seat.objects.get(table_id=table_id, position=position).name)()


async def said_to_all(place: Room, sender: Tab, code: str) -> dict[Tab, Said]:
    """``sender`` says ``code``; every tab gets exactly one talk frame and nothing else; the table is unchanged."""
    before = await fingerprint(place.table_id)
    counts = {t: len(t.frames) for t in place.tabs}
    await sender.send({"action": "say", "value": code})
    for tab in place.tabs:
        await tab.wait_for(lambda tab=tab: talk_of(tab, counts[tab]))
    await quiet()
    out = {}
    for tab in place.tabs:
        new = tab.frames[counts[tab] :]
        assert len(new) == 1 and is_talk(new[0]), new
        out[tab] = parse_talk(new[0])
        assert tab.closed is None
    assert await fingerprint(place.table_id) == before, "a phrase changes nothing at the table"
    return out


async def refused(place: Room, sender: Tab, frame: Any, expected: str) -> None:
    """``sender`` sends ``frame``: exactly one error to it, nothing to anybody else, nothing changed."""
    before = await fingerprint(place.table_id)
    counts = {t: len(t.frames) for t in place.tabs}
    await sender.send(frame)
    await sender.wait_for(lambda: sender.flashes(counts[sender]))
    await quiet()
    new = sender.frames[counts[sender] :]
    assert sender.flashes(counts[sender]) == [expected]
    assert len(new) == 1 and not is_board(new[0]) and not is_talk(new[0]), new
    for tab in place.tabs:
        if tab is not sender:
            assert tab.frames[counts[tab] :] == [], "somebody else was sent something for it"
    assert sender.closed is None, "a bad frame does not cost the connection"
    assert await fingerprint(place.table_id) == before


# -- the phrases --------------------------------------------------------------------------------


def test_the_phrases() -> None:
    codes = [code for code, _text in talk.PHRASES]
    assert 10 <= len(codes) <= 12 and len(set(codes)) == len(codes)
    assert all(re.fullmatch(r"[a-z]+", code) and len(code) <= talk.MAX_CODE for code in codes)
    spanish = talk_view.phrases_context("es")
    assert [p["code"] for p in spanish] == codes
    assert {"code": "suerte", "text": "¡Suerte!"} in spanish
    assert {"code": "rapido", "text": "¿Jugamos un poco más rápido?"} in spanish
    assert {"code": "risa", "text": "😄"} in spanish
    assert [p["code"] for p in talk_view.phrases_context("en")] == codes


def test_the_frame_shape_and_escaping() -> None:
    assert talk_view.render_talk(2, "suerte", "Lola", "es") == (
        '<div id="talk-event" data-talk-seat="2" data-talk-phrase="suerte" data-talk-name="Lola">¡Suerte!</div>'
    )
    frame = talk_view.render_talk(0, "bien", 'Lo"la <b>&', "es")
    assert 'data-talk-name="Lo&quot;la &lt;b&gt;&amp;"' in frame and "<b>" not in frame
    assert parse_talk(frame) == Said(0, "bien", 'Lo"la <b>&', "¡Bien jugado!")


def test_no_phrase_names_a_card() -> None:
    """Talk carries no card, in any language, whoever says it."""
    for language in ("es", "en"):
        for code, _text in talk.PHRASES:
            for seat in range(6):
                assert cards_named(talk_view.render_talk(seat, code, f"charla{seat}", language)) == set()


# -- over the socket ------------------------------------------------------------------------------


async def test_a_phrase_reaches_every_socket_in_its_language() -> None:
    async with room() as place:
        seq = place.players[0].seq
        name = await seat_name(place.table_id, 1)
        got = await said_to_all(place, place.players[1], "suerte")
        for tab in (place.players[0], place.players[1], place.spectator):  # Spanish
            assert got[tab] == Said(1, "suerte", name, "¡Suerte!")
            assert tab.frames[-1] == (
                f'<div id="talk-event" data-talk-seat="1" data-talk-phrase="suerte" '
                f'data-talk-name="{name}">¡Suerte!</div>'
            )
        english = got[place.players[2]]
        assert (english.seat, english.phrase, english.name) == (1, "suerte", name) and english.text
        # an emote, from another seat; and the table's seq never moved
        got = await said_to_all(place, place.players[2], "aplauso")
        assert {(s.seat, s.phrase, s.text) for s in got.values()} == {(2, "aplauso", "👏")}
        assert all(tab.seq == seq for tab in place.tabs)
        # no talk frame carried a card
        for tab in place.tabs:
            for frame in tab.frames:
                if is_talk(frame):
                    assert cards_named(frame) == set(), frame


async def test_every_phrase_can_be_said(talk_limits: Any) -> None:
    talk_limits.POCHA_TALK_LIMIT = 100
    async with room() as place:
        for i, (code, _text) in enumerate(talk.PHRASES):
            sender = place.players[i % 3]
            got = await said_to_all(place, sender, code)
            assert {s.phrase for s in got.values()} == {code}


async def test_the_name_is_escaped() -> None:
    async with room() as place:
        await database_sync_to_async(
            lambda: Seat.objects.filter(table_id=place.table_id, position=0).update(name='Lo"la <i>')
        )()
        got = await said_to_all(place, place.players[0], "gracias")
        assert {s.name for s in got.values()} == {'Lo"la <i>'}
        assert all("<i>" not in tab.frames[-1] for tab in place.tabs)


async def test_talk_in_the_waiting_room() -> None:
    async with room(size=4, humans=3) as place:
        got = await said_to_all(place, place.players[0], "gg")
        assert {s.phrase for s in got.values()} == {"gg"}


async def test_an_unknown_phrase() -> None:
    async with room() as place:
        for code in ["hola", "SUERTE", "suerte ", "", "bien jugado", "¡Suerte!"]:
            await refused(place, place.players[0], {"action": "say", "value": code}, NO_SUCH_PHRASE)


async def test_malformed_values() -> None:
    async with room() as place:
        sender = place.players[1]
        for value in [
            None,
            3,
            3.5,
            True,
            ["suerte"],
            {"code": "suerte"},
            [["suerte"]],
            {"value": {"value": "gg"}},
            "x" * 3000,
            json.dumps({"action": "say", "value": "suerte"}),
        ]:
            await refused(place, sender, {"action": "say", "value": value}, NO_SUCH_PHRASE)
        await refused(place, sender, {"action": "say"}, NO_SUCH_PHRASE)
        await refused(place, sender, {"action": "say", "value": "x" * 5000}, MALFORMED)  # over the frame limit
        # the socket still works
        got = await said_to_all(place, sender, "bien")
        assert {s.seat for s in got.values()} == {1}


async def test_a_spectator_cannot_talk() -> None:
    async with room() as place:
        for code in ["suerte", "gg"]:
            await refused(place, place.spectator, {"action": "say", "value": code}, NOT_A_PLAYER)


async def test_someone_not_logged_in_cannot_even_connect() -> None:
    async with room() as place:
        anonymous = Tab(None, place.table_id)
        assert not await anonymous.open()
        assert anonymous.refused == 4401


def suspend_quietly(user_id: int, moderator: Any) -> None:
    """What ``moderation.suspend`` writes, without telling the tables (which closes the person's sockets)."""
    Profile.objects.update_or_create(
        user_id=user_id,
        defaults={"suspended_at": timezone.now(), "suspended_reason": "insultos", "suspended_by_id": moderator.pk},
    )


async def test_a_suspended_player_cannot_talk() -> None:
    async with room() as place:
        moderator = await database_sync_to_async(person)("moderadora")
        # the suspension's flag alone, before the push that closes their sockets: the phrase itself is refused
        await database_sync_to_async(suspend_quietly)(place.users[0].pk, moderator)
        await refused(
            place, place.players[0], {"action": "say", "value": "suerte"}, "Tu cuenta está suspendida: insultos"
        )


async def test_the_rate_limit() -> None:
    async with room() as place:
        sender = place.players[0]
        for code in ["suerte", "bien", "uy"]:
            await said_to_all(place, sender, code)
        await refused(place, sender, {"action": "say", "value": "vaya"}, TOO_MANY)
        await refused(place, sender, {"action": "say", "value": "vaya"}, TOO_MANY)
        # the limit is per person: the others still talk
        got = await said_to_all(place, place.players[1], "perdon")
        assert {s.seat for s in got.values()} == {1}


async def test_the_rate_limit_holds_across_two_sockets_of_one_person() -> None:
    async with room() as place:
        second = Tab(place.users[0], place.table_id)
        assert await second.open()
        try:
            await settle([*place.tabs, second], place.table_id)
            place.players.append(second)
            await said_to_all(place, place.players[0], "suerte")
            await said_to_all(place, second, "bien")
            await said_to_all(place, place.players[0], "uy")
            await refused(place, second, {"action": "say", "value": "vaya"}, TOO_MANY)
        finally:
            await second.close()


def test_cards_are_not_in_the_phrases_themselves() -> None:
    names = {n for card in ALL_CARDS for n in (card.name_es, card.name_en, str(card))}
    for language in ("es", "en"):
        for phrase in talk_view.phrases_context(language):
            assert phrase["text"] not in names and phrase["code"] not in names
