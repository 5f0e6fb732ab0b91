"""No card of another seat reaches a browser before it is played.

Whole games are played through the real consumer while every frame each seat (and a spectator)
receives is kept, together with table pages fetched over HTTP at several moments, a reconnection
mid-game and error frames.  Afterwards the dealt hands and the plays are read back from the
database, and every payload is searched for every way a card can be written (its code as in
``data-card="12b"`` or ``"value": "12b"``, its face ``class="card-face suit-b" … data-r="12"`` with the suit
class, and its Spanish and English names).  Each card found must be the viewer's own (dealt to them
that round), the round's trump card (shown to all; in the 8-card subida round it is also in the
dealer's hand), or a card already played at the ``seq`` the payload was drawn at.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from games.engine import ALL_CARDS
from games.live import hub
from games.models import Move, Round, Table
from games.table import rows

from .helpers import SEQ, Tab, is_board, person, seated_table, settle

CODE = re.compile(r"(?<![A-Za-z0-9])(1[0-2]|[1-7])([oceb])(?![A-Za-z0-9])")
FACE = re.compile(r'class="card-face suit-([oceb])"[^>]*? data-r="(\d+)"')
NAME = re.compile(
    r"(?<!\w)(?:(?:as|[2-7]|sota|caballo|rey) de (?:oros|copas|espadas|bastos)"
    r"|(?:ace|[2-7]|jack|knight|king) of (?:coins|cups|swords|clubs))(?!\w)"
)
NAME_TO_CARD = {name: str(card) for card in ALL_CARDS for name in (card.name_es, card.name_en)}
HAND = re.compile(r'<section id="hand".*?</section>', re.S)
DATA_CARD = re.compile(r'data-card="([^"]+)"')


@pytest.fixture
def fast_bots(settings: Any, celery_clock_worker: Any) -> None:
    """Bots play at once: through the in-process clock, or a real Celery worker in services mode."""
    settings.POCHA_BOT_DELAY = 0


def cards_by_code(text: str) -> set[str]:
    return {m.group(1) + m.group(2) for m in CODE.finditer(text)}


def cards_by_face(text: str) -> set[str]:
    return {m.group(2) + m.group(1) for m in FACE.finditer(text)}


def cards_by_name(text: str) -> set[str]:
    return {NAME_TO_CARD[m.group(0)] for m in NAME.finditer(text)}


def cards_named(text: str) -> set[str]:
    """Every card the payload mentions, however it is written."""
    return cards_by_code(text) | cards_by_face(text) | cards_by_name(text)


def test_detector_finds_every_spelling() -> None:
    for card in ALL_CARDS:
        code = str(card)
        assert cards_named(f'<button data-card="{code}">') == {code}
        assert cards_named(f'aria-label="{card.name_es}"') == {code}
        assert cards_named(f'aria-label="{card.name_en}"') == {code}
        assert cards_named(
            f'<span class="card-face suit-{card.suit.value}" aria-hidden="true" data-r="{card.rank}">'
        ) == {code}
    assert cards_named('<button data-card="12b">') == {"12b"}
    assert cards_named("""hx-vals='{"action": "play", "value": "3c", "seq": "9"}'""") == {"3c"}
    assert cards_named('<span class="card-face suit-e" aria-hidden="true" data-r="11">') == {"11e"}
    assert cards_named('aria-label="rey de bastos"') == {"12b"}
    assert cards_named('aria-label="king of clubs"') == {"12b"}
    assert cards_named("as de oros, sota de copas, knight of swords, 7 of cups") == {"1o", "10c", "11e", "7c"}
    assert cards_named('<section id="board-status" data-board-seq="12">Ronda 3 de 19 · 3 cartas') == set()


@dataclass
class Payload:
    viewer: str  # a label for messages
    seat: int | None  # None: a spectator
    kind: str  # "frame" or "page"
    seq: int  # the table's seq it was drawn at
    text: str
    found: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.found = cards_named(self.text)


class CommitLog:
    """What every commit of a table's ``seq`` left: ``(round number, plays made in it)``, or None
    when the game did not change (a seat taken, a socket opened or closed: ``seq`` moves on all the same).

    Installed around ``rows.update_table``, through which every change's commit (``actions.common.commit``)
    writes the table inside its transaction, so the entry for ``seq`` is exactly what a page drawn at
    ``seq`` was drawn from.
    """

    def __init__(self) -> None:
        self.entries: dict[tuple[int, int], tuple[int, int] | None] = {}
        #: Every table event sent between processes, as JSON (``install_hub_log``).
        self.events: list[str] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = rows.update_table

        def recording_update(table_id: int, old_seq: int, fields: dict[str, Any], log: Any = None) -> int:
            updated = original(table_id, old_seq, fields, log)
            entry = None
            if fields.get("state") is not None:
                number = fields["round_number"]
                entry = (number, Move.objects.filter(table_id=table_id, round=number, kind=Move.Kind.PLAY).count())
            self.entries[(table_id, old_seq + 1)] = entry
            return updated

        monkeypatch.setattr(rows, "update_table", recording_update)


@pytest.fixture
def commits(monkeypatch: pytest.MonkeyPatch) -> CommitLog:
    log = CommitLog()
    log.install(monkeypatch)
    install_hub_log(log, monkeypatch)
    return log


def install_hub_log(log: CommitLog, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every table event sent between server processes (``hub.publish``, ``hub.publish_sync``), as the JSON
    another process receives: a change, a redraw, a phrase."""
    published, published_sync = hub.publish, hub.publish_sync

    async def recording(event: dict[str, Any]) -> None:
        log.events.append(json.dumps(event))
        await published(event)

    def recording_sync(event: dict[str, Any]) -> None:
        log.events.append(json.dumps(event))
        published_sync(event)

    monkeypatch.setattr(hub, "publish", recording)
    monkeypatch.setattr(hub, "publish_sync", recording_sync)


def check_events(table_id: int, timeline: Timeline, log: CommitLog) -> int:
    """No event between processes names a card nobody may see yet: each event at ``seq`` names only the
    cards public at that seq (the trump card, the cards played), as a spectator's board would; returns
    how many of the table's events carried a move."""
    moves = 0
    for text in log.events:
        event = json.loads(text)
        if event.get("table") != table_id or "seq" not in event:
            continue
        leaked = cards_named(text) - timeline.allowed(None, int(event["seq"])) if event["seq"] else cards_named(text)
        assert not leaked, f"an event at seq {event['seq']} named {sorted(leaked)}: {text[:3000]}"
        moves += (event.get("snapshot") or {}).get("game") == "move"
    return moves


@dataclass
class Timeline:
    """Who holds and who has played what, at every seq of a finished game (read from the database)."""

    at_seq: dict[int, tuple[int, int] | None]  # seq -> (round, plays made in it); None before the game
    hands: dict[int, list[list[str]]]  # round number -> dealt hands by seat
    plays: dict[int, list[tuple[int, str]]]  # round number -> (seat, card) in order
    trump_card: dict[int, str | None]

    def state(self, seq: int) -> tuple[int, tuple[tuple[int, str], ...]] | None:
        assert seq in self.at_seq, f"no commit made seq {seq}"
        entry = self.at_seq[seq]
        if entry is None:
            return None  # still waiting for players: no cards anywhere
        number, made = entry
        return number, tuple(self.plays[number][:made])

    def allowed(self, seat: int | None, seq: int) -> set[str]:
        state = self.state(seq)
        if state is None:
            return set()
        number, played = state
        cards = {card for _seat, card in played}
        if self.trump_card[number]:
            cards.add(self.trump_card[number])
        if seat is not None:
            cards |= set(self.hands[number][seat])
        return cards

    def hand_at(self, seat: int, seq: int) -> set[str] | None:
        state = self.state(seq)
        if state is None:
            return None
        number, played = state
        return set(self.hands[number][seat]) - {card for s, card in played if s == seat}


def read_timeline(table_id: int, log: CommitLog) -> Timeline:
    table = Table.objects.get(pk=table_id)
    assert table.status == Table.Status.FINISHED
    rounds = list(Round.objects.filter(table=table).order_by("number"))
    plays = {
        r.number: [(m.seat, m.value) for m in Move.objects.filter(table=table, round=r.number, kind=Move.Kind.PLAY)]
        for r in rounds
    }
    at_seq: dict[int, tuple[int, int] | None] = {}
    current: tuple[int, int] | None = None
    for seq in range(1, table.seq + 1):
        assert (table_id, seq) in log.entries, f"seq {seq} of table {table_id} was not committed through _commit"
        entry = log.entries[(table_id, seq)]
        if entry is not None:
            current = entry
        at_seq[seq] = current
    # the log agrees with the rows: every round was played out, in order
    assert current == (rounds[-1].number, len(plays[rounds[-1].number]))
    assert [r.number for r in rounds] == list(range(1, len(rounds) + 1))
    return Timeline(at_seq, {r.number: r.hands for r in rounds}, plays, {r.number: r.trump_card for r in rounds})


def board_seq(text: str) -> int:
    seqs = {int(s) for s in SEQ.findall(text)}
    assert len(seqs) == 1, f"one board, one seq: {sorted(seqs)}"
    return seqs.pop()


def payloads_of(tab: Tab, label: str, seat: int | None) -> list[Payload]:
    """Every frame the tab received, with the seq it was drawn at (an error: the board it followed)."""
    out = []
    seq = -1
    for frame in tab.frames:
        if is_board(frame):
            seq = board_seq(frame)
        assert seq >= 0, "the first frame of a connection is the board"
        out.append(Payload(label, seat, "frame", seq, frame))
    return out


@dataclass
class Game:
    table_id: int
    seats: dict[Tab, int | None]  # every tab and its seat (None: spectator)
    pages: list[Payload] = field(default_factory=list)
    clients: dict[int, Client] = field(default_factory=dict)
    moves: int = 0
    stale_sent: int = 0
    out_of_turn_sent: int = 0
    illegal_sent: int = 0
    reconnections: int = 0

    async def fetch_pages(self) -> None:
        """GET /mesa/<id>/ as every person at the table, the spectator included."""
        for tab, seat in self.seats.items():
            client = self.clients.get(tab.user.pk)
            if client is None:
                client = self.clients[tab.user.pk] = Client()
                await database_sync_to_async(client.force_login)(tab.user)
                client.cookies["django_language"] = tab.language
            response = await database_sync_to_async(client.get)(f"/mesa/{self.table_id}/")
            assert response.status_code == 200
            text = response.content.decode()
            self.pages.append(Payload(f"{tab.user.username} page", seat, "page", board_seq(text), text))


async def play_whole_game(game: Game, humans: list[Tab], activity: asyncio.Event, seconds: float = 90) -> None:
    """Each person plays an offered move whenever their board offers one, until the final ranking.

    On the way: stale frames, moves out of turn and illegal cards (error frames), pages fetched
    over HTTP, and a reconnection of one tab mid-game.
    """
    moved_at: dict[Tab, set[int]] = {tab: set() for tab in humans}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not all(tab.over for tab in humans):
        activity.clear()
        for tab in humans:
            moves = tab.game_moves()
            if not moves or tab.seq in moved_at[tab] or tab.over:
                continue
            moved_at[tab].add(tab.seq)
            game.moves += 1
            await inject_errors(game, humans, tab)
            await tab.send(moves[game.moves % len(moves)])
        if all(tab.over for tab in humans):
            break
        left = deadline - loop.time()
        assert left > 0, "the game did not finish in time"
        try:
            async with asyncio.timeout(min(left, 20)):
                await activity.wait()
        except TimeoutError:
            raise AssertionError(
                "nothing happened for 20 s; boards:\n" + "\n".join(t.board[:1500] for t in humans)
            ) from None


async def inject_errors(game: Game, humans: list[Tab], mover: Tab) -> None:
    """Before ``mover`` makes its move: now and then, requests that must be refused, pages and a reconnection."""
    n = game.moves
    seq = mover.seq
    if n % 23 == 5 and seq > 0:  # a stale frame: the server answers with a fresh board and an error
        before = len(mover.frames)
        await mover.send({**mover.game_moves()[0], "seq": seq - 1})
        await mover.wait_for(lambda: len(mover.flashes(before)) == 1)
        game.stale_sent += 1
    others = [t for t in humans if t is not mover]
    if n % 31 == 7 and others:  # someone else tries to move with one of their own cards: not their turn
        other = others[0]
        own = DATA_CARD.findall(other.board)
        if own:
            before = len(other.frames)
            await other.send({"action": "play", "value": own[0], "seq": other.seq})
            await other.wait_for(lambda: len(other.flashes(before)) == 1)
            game.out_of_turn_sent += 1
    if game.illegal_sent < 6:  # a card of one's own hand that the rules forbid now: the error lists the legal ones
        hand = HAND.search(mover.board)
        playable = {o["value"] for o in mover.game_moves() if o["action"] == "play"}
        forbidden = [c for c in DATA_CARD.findall(hand.group(0) if hand else "") if c not in playable]
        if playable and forbidden:
            before = len(mover.frames)
            await mover.send({"action": "play", "value": forbidden[0], "seq": seq})
            await mover.wait_for(lambda: len(mover.flashes(before)) == 1)
            game.illegal_sent += 1
    if n in (1, 45, 90):
        await game.fetch_pages()
    if n in (30, 80):  # a tab drops and connects again mid-game (the first time not the mover's, if any)
        other = others[0] if n == 30 and others else mover
        await other.close()
        before = len(other.frames)
        assert await other.open()
        await other.wait_for(lambda: any(is_board(f) for f in other.frames[before:]))  # the page's state, at once
        game.reconnections += 1


def check_payloads(game: Game, timeline: Timeline, payloads: list[Payload]) -> dict[str, int]:
    """Every card in every payload is the viewer's, the trump card, or already played; returns counters."""
    stats = {"payloads": 0, "own_hands_seen": 0, "errors": 0, "pages": 0, "hands_kept": 0}
    #: The hand each tab's page shows: a push leaves the hand out while the page's is still right.
    page_hand: dict[str, set[str]] = {}
    for p in payloads:
        found = p.found
        allowed = timeline.allowed(p.seat, p.seq)
        leaked = found - allowed
        assert not leaked, (
            f"{p.viewer} ({p.kind}, seq {p.seq}) was sent {sorted(leaked)}, "
            f"not theirs and not yet played:\n{p.text[:4000]}"
        )
        stats["payloads"] += 1
        stats["pages"] += p.kind == "page"
        stats["errors"] += not is_board(p.text)
        if not is_board(p.text):
            continue
        # The detector sees the viewer's own hand, by code, face and name: a leaked hand would be seen too.
        hand_section = HAND.search(p.text)
        if hand_section is None:  # left out: the page keeps the hand it shows, which must be the one held now
            assert p.kind == "frame" and p.viewer in page_hand, f"{p.viewer} at seq {p.seq}: no hand, none before"
            shown = page_hand[p.viewer]
            stats["hands_kept"] += 1
        else:
            shown = set(DATA_CARD.findall(hand_section.group(0)))
            if p.kind == "frame":
                page_hand[p.viewer] = shown
        if p.seat is None or timeline.state(p.seq) is None:
            assert not shown, f"{p.viewer} is shown a hand at seq {p.seq}"
            continue
        expected = timeline.hand_at(p.seat, p.seq)
        assert shown == expected, f"{p.viewer} at seq {p.seq}: hand shown {sorted(shown)}, held {sorted(expected)}"
        if shown and hand_section is not None:
            section = hand_section.group(0)
            assert cards_by_code(section) == shown
            assert cards_by_face(section) == shown
            assert cards_by_name(section) == shown
            stats["own_hands_seen"] += 1
    return stats


def check_mutation(timeline: Timeline, payloads: list[Payload], seats: list[int]) -> None:
    """The same check, told the payload was for another seat, must catch the hand as a leak."""
    for viewer in seats:
        for other in seats:
            if other == viewer:
                continue
            caught = sum(
                1
                for p in payloads
                if p.seat == viewer and is_board(p.text) and p.found - timeline.allowed(other, p.seq)
            )
            assert caught > 0, f"seat {viewer}'s payloads would not reveal a leak to seat {other}"


async def finish(game: Game, log: CommitLog) -> tuple[Timeline, list[Payload]]:
    for tab in game.seats:
        await tab.close()
    timeline = await database_sync_to_async(read_timeline)(game.table_id, log)
    payloads = list(game.pages)
    for tab, seat in game.seats.items():
        payloads.extend(payloads_of(tab, tab.user.username, seat))
    return timeline, payloads


async def secret_game(
    size: int, languages: list[str], spectator_language: str | None, log: CommitLog
) -> tuple[Game, dict[str, int]]:
    """People at seats 0.. (one per language), bots in the other seats, maybe a spectator: play it all, check it all."""
    table_id, users = await database_sync_to_async(seated_table)(size, len(languages), prefix=f"secret{size}-")
    activity = asyncio.Event()
    humans = [Tab(u, table_id, languages[i], activity) for i, u in enumerate(users)]
    seats: dict[Tab, int | None] = {t: i for i, t in enumerate(humans)}
    if spectator_language is not None:
        watcher = await database_sync_to_async(person)(f"mirona{size}")
        seats[Tab(watcher, table_id, spectator_language, activity)] = None
    game = Game(table_id, seats)
    for tab in seats:
        assert await tab.open()
    await game.fetch_pages()  # the waiting room
    await settle(list(seats), table_id)
    await humans[0].send({"action": "start", "seq": humans[0].seq})  # the empty seats fill with bots
    await play_whole_game(game, humans, activity)
    await game.fetch_pages()  # the final ranking

    timeline, payloads = await finish(game, log)
    stats = check_payloads(game, timeline, payloads)
    stats["event_moves"] = check_events(table_id, timeline, log)
    assert stats["event_moves"] > 19, "the events carried the moves (and no hand)"
    check_mutation(timeline, payloads, list(range(len(humans))))
    # the run really covered what it claims
    assert game.stale_sent >= 3 and game.illegal_sent >= 3
    assert game.out_of_turn_sent >= (3 if len(humans) > 1 else 0)
    assert game.reconnections == 2
    assert stats["pages"] == 5 * len(seats)
    assert stats["errors"] >= game.stale_sent + game.out_of_turn_sent + game.illegal_sent
    assert any(timeline.state(p.seq) is None for p in payloads), "the waiting room was captured too"
    return game, stats


@pytest.mark.django_db(transaction=True)
@pytest.mark.smoke  # make test's secrecy check
async def test_two_people_two_bots_and_a_spectator_see_only_what_they_may(fast_bots: None, commits: CommitLog) -> None:
    """Four seats: a Spanish and an English player, two bots, and an English-speaking spectator."""
    game, stats = await secret_game(4, ["es", "en"], "en", commits)
    assert stats["own_hands_seen"] > 2 * 19
    assert stats["hands_kept"] > 19, "pushes left out a hand the page already showed (and it was the right one)"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("size", [3, 6])
async def test_one_person_among_bots_sees_only_what_they_may(size: int, fast_bots: None, commits: CommitLog) -> None:
    """Three seats (24-card deck) and six (the dealer rests; the 8-card trump is the seat at the dealer's right)."""
    game, stats = await secret_game(size, ["es"], None, commits)
    assert stats["own_hands_seen"] > 19


@pytest.mark.django_db(transaction=True)
async def test_the_card_room_payloads_leak_nothing_with_the_table_pauses(
    settings: Any, fast_bots: None, commits: CommitLog
) -> None:
    """With the pauses on (short), boards also show each completed trick held up with its winner, and each
    round's last trick with its result before the next deal; the seats' cards on the felt (the slide and
    sweep animations' data) and everything else still name only cards the viewer may see."""
    settings.POCHA_TRICK_PAUSE = 0.02
    settings.POCHA_ROUND_PAUSE = 0.05
    game, stats = await secret_game(4, ["es", "en"], "es", commits)
    frames = [f for tab in game.seats for f in tab.frames if is_board(f)]
    held = [f for f in frames if 'data-trick-done="1"' in f]
    round_ends = [f for f in frames if 'data-trick-last="1"' in f and 'data-after-trick="1"' in f]
    assert held and round_ends, "the paused states were never drawn"
    # a held trick shows exactly its cards, the winner marked once
    for frame in held:
        felt = re.search(r'<section id="felt".*?</section>', frame, re.S)
        assert felt is not None
        assert felt.group(0).count('<li class="played') == 4 and felt.group(0).count(' won"') == 1
    assert stats["own_hands_seen"] > 2 * 19
