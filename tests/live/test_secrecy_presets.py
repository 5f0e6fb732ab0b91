"""No card a viewer may not see reaches them, at tables of the house rules (``shared/VARIANTS.md``).

Whole games of each preset played through the real consumer, as in ``test_secrecy`` (whose checks these
reuse: every frame, pages fetched over HTTP, a reconnection, refused moves, the events between processes),
with what the presets change:

* the French deck (``bazas``): its cards are looked for by code (``QH``, ``10S``), by face and by name in
  both languages («reina de corazones», «queen of hearts»);
* indias rounds (``indias``, and se dobla «en la frente»): each player sees every other player's card of
  the round, by its seat, and never their own until it is played — their hand shows no card then;
* a spectator sees no unplayed card at all.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games.engine.cards import FRENCH_CARDS
from games.engine.schedule import RoundKind
from games.models import Table
from games.read.board import card_ctx

from . import test_secrecy as base
from .helpers import Tab, person, settle
from .test_secrecy import CommitLog, Game, Payload, Timeline, commits, fast_bots  # noqa: F401 (fixtures)

FRENCH_CODE = re.compile(r"(?<![A-Za-z0-9])(10|[2-9JQKA])([SHDC])(?![A-Za-z0-9])")
FRENCH_NAME = re.compile(
    r"(?<!\w)(?:(?:as|[2-9]|10|jota|reina|rey) de (?:picas|corazones|diamantes|tréboles)"
    r"|(?:ace|[2-9]|10|jack|queen|king) of (?:spades|hearts|diamonds|clubs))(?!\w)"
)
FRENCH_FACE = re.compile(r'class="card-face fr fr-(picas|corazones|diamantes|treboles)"[^>]*? data-r="(10|[2-9JQKA])"')
FRENCH_SUIT_LETTER = {"picas": "S", "corazones": "H", "diamantes": "D", "treboles": "C"}
FRENCH_NAME_TO_CARD = {name: str(card) for card in FRENCH_CARDS for name in (card.name_es, card.name_en)}
DATA_CARD = re.compile(r'(?:data-card="|"value": ")([^"]+)"')


def french_named(text: str) -> set[str]:
    """The French cards a payload names: by the code in a card's attributes, and by name."""
    codes = {m.group(1) for m in DATA_CARD.finditer(text) if FRENCH_CODE.fullmatch(m.group(1))}
    return codes | {FRENCH_NAME_TO_CARD[m.group(0)] for m in FRENCH_NAME.finditer(text)}


SPANISH_CODE, SPANISH_FACE, SPANISH_NAME = base.cards_by_code, base.cards_by_face, base.cards_by_name


#: The deck the running game is dealt from: the English names of bastos and of tréboles are both «clubs»
#: («ace of clubs»), so a payload's names are read for the one deck in play.
DECK = {"french": False}


def by_code(text: str) -> set[str]:
    french = {m.group(1) for m in DATA_CARD.finditer(text) if FRENCH_CODE.fullmatch(m.group(1))}
    return SPANISH_CODE(text) | (french if DECK["french"] else set())


def by_name(text: str) -> set[str]:
    if not DECK["french"]:
        return SPANISH_NAME(text)
    return {FRENCH_NAME_TO_CARD[m.group(0)] for m in FRENCH_NAME.finditer(text)}


def by_face(text: str) -> set[str]:
    return SPANISH_FACE(text) | {m.group(2) + FRENCH_SUIT_LETTER[m.group(1)] for m in FRENCH_FACE.finditer(text)}


def every_card_named(text: str) -> set[str]:
    return by_code(text) | by_face(text) | by_name(text)


@pytest.fixture(autouse=True)
def both_decks(monkeypatch: pytest.MonkeyPatch) -> None:
    """``test_secrecy``'s payloads look for the French cards too, by code, face and name."""
    monkeypatch.setattr(base, "cards_named", every_card_named)
    monkeypatch.setattr(base, "cards_by_code", by_code)
    monkeypatch.setattr(base, "cards_by_name", by_name)
    monkeypatch.setattr(base, "cards_by_face", by_face)
    monkeypatch.setitem(DECK, "french", False)


def test_the_detector_finds_every_french_spelling() -> None:
    DECK["french"] = True
    for card in FRENCH_CARDS:
        code = str(card)
        assert every_card_named(f'<button data-card="{code}">') == {code}
        assert every_card_named(f'aria-label="{card.name_es}"') == {code}
        assert every_card_named(f'aria-label="{card.name_en}"') == {code}
        assert every_card_named(str(card_ctx(card, "es")["face"])) == {code}
    assert every_card_named("""hx-vals='{"action": "play", "value": "QH", "seq": "9"}'""") == {"QH"}
    DECK["french"] = False  # a Spanish game: «ace of clubs» is the as de bastos
    assert every_card_named('aria-label="ace of clubs"') == {"1b"}
    assert every_card_named('<button data-card="QH">') == set()


class PresetTimeline(Timeline):
    """``Timeline`` knowing the indias rounds: there the seat's own card is never theirs to see before it is
    played, and every other seat's card of the round is."""

    kinds: dict[int, RoundKind]

    def allowed(self, seat: int | None, seq: int) -> set[str]:
        state = self.state(seq)
        if state is None or seat is None or self.kinds[state[0]] is not RoundKind.INDIAS:
            return super().allowed(seat, seq)
        number, played = state
        cards = super().allowed(None, seq)
        return cards | {c for s, hand in enumerate(self.hands[number]) if s != seat for c in hand}

    def hand_at(self, seat: int, seq: int) -> set[str] | None:
        state = self.state(seq)
        if state is not None and self.kinds[state[0]] is RoundKind.INDIAS:
            return set()  # face down: no card in the hand's section
        return super().hand_at(seat, seq)


def preset_timeline(table_id: int, log: CommitLog) -> PresetTimeline:
    timeline = base.read_timeline(table_id, log)
    out = PresetTimeline(timeline.at_seq, timeline.hands, timeline.plays, timeline.trump_card)
    rules = Table.objects.get(pk=table_id).game_rules
    size = len(next(iter(timeline.hands.values())))
    out.kinds = {n: rules.spec(size, n).kind for n in timeline.hands}
    return out


def preset_table(rules: str, size: int, humans: int, prefix: str) -> tuple[int, list[Any]]:
    from games.table import actions

    users = [person(f"{prefix}{i}") for i in range(humans)]
    table = actions.do_create_table(users[0], size, rules=rules)
    Table.objects.filter(pk=table.pk).update(bot_level="facil")  # quick bots: the game is long
    for user in users[1:]:
        actions.do_take_seat(table.pk, user)
    return table.pk, users


async def secret_preset_game(rules: str, size: int, languages: list[str], log: CommitLog) -> dict[str, Any]:
    table_id, users = await database_sync_to_async(preset_table)(rules, size, len(languages), f"{rules[:6]}{size}-")
    activity = asyncio.Event()
    humans = [Tab(u, table_id, languages[i], activity) for i, u in enumerate(users)]
    seats: dict[Tab, int | None] = {t: i for i, t in enumerate(humans)}
    watcher = await database_sync_to_async(person)(f"mirona-{rules[:6]}{size}")
    seats[Tab(watcher, table_id, "es", activity)] = None
    game = Game(table_id, seats)
    for tab in seats:
        assert await tab.open()
    await game.fetch_pages()
    await settle(list(seats), table_id)
    await humans[0].send({"action": "start", "seq": humans[0].seq})
    await base.play_whole_game(game, humans, activity, seconds=400)  # a long game
    await game.fetch_pages()

    for tab in game.seats:
        await tab.close()
    timeline = await database_sync_to_async(preset_timeline)(table_id, log)
    payloads: list[Payload] = list(game.pages)
    for tab, seat in game.seats.items():
        payloads.extend(base.payloads_of(tab, tab.user.username, seat))
    stats: dict[str, Any] = base.check_payloads(game, timeline, payloads)
    stats["event_moves"] = base.check_events(table_id, timeline, log)
    base.check_mutation(timeline, payloads, list(range(len(humans))))
    assert game.stale_sent >= 3 and game.reconnections == 2
    assert stats["pages"] == 5 * len(seats)
    stats["timeline"] = timeline
    stats["payload_list"] = payloads
    return stats


def indias_boards(stats: dict[str, Any], seat: int) -> list[Payload]:
    timeline: PresetTimeline = stats["timeline"]
    return [
        p
        for p in stats["payload_list"]
        if p.seat == seat
        and timeline.state(p.seq) is not None
        and timeline.kinds[timeline.state(p.seq)[0]] is RoundKind.INDIAS  # type: ignore[index]
        and 'id="board-status"' in p.text
    ]


@pytest.mark.django_db(transaction=True)
async def test_indias_two_people_two_bots_and_a_spectator(fast_bots: None, commits: CommitLog) -> None:
    stats = await secret_preset_game("indias", 4, ["es", "en"], commits)
    timeline: PresetTimeline = stats["timeline"]
    assert set(timeline.kinds.values()) >= {RoundKind.INDIAS, RoundKind.SUBASTADOS, RoundKind.OROS}
    for seat in (0, 1):
        boards = indias_boards(stats, seat)
        assert boards, "the indias rounds were drawn"
        # each board of an indias round before the seat's card was played showed the others' cards, by
        # their seats, and the seat's own face down
        others_seen = 0
        for p in boards:
            number, played = timeline.state(p.seq)  # type: ignore[misc]
            mine = timeline.hands[number][seat][0]
            if any(s == seat for s, _ in played):
                continue
            assert mine not in p.found
            others = {h[0] for s, h in enumerate(timeline.hands[number]) if s != seat}
            others_seen += others <= p.found
        assert others_seen > 0


@pytest.mark.django_db(transaction=True)
async def test_se_dobla_en_la_frente_one_person_and_a_spectator(fast_bots: None, commits: CommitLog) -> None:
    stats = await secret_preset_game("se-dobla:una-mas:frente", 4, ["es"], commits)
    assert RoundKind.INDIAS in stats["timeline"].kinds.values() and indias_boards(stats, 0)


@pytest.mark.django_db(transaction=True)
async def test_bazas_at_seven_one_person_and_a_spectator(fast_bots: None, commits: CommitLog) -> None:
    DECK["french"] = True
    stats = await secret_preset_game("bazas", 7, ["en"], commits)
    assert stats["own_hands_seen"] > 12
    # the French hands were really looked for: every payload of the person's own hand names French cards
    assert any(french_named(p.text) for p in stats["payload_list"] if p.seat == 0)
