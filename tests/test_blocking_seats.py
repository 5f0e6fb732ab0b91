"""A block keeps the two people apart wherever the site seats people (issue 44).

Through the site's own code (the HTTP views for a code and a share link, ``games.table.actions`` for quick play,
a seat by id and the «Revancha», ``games.tournaments.runner`` for a tournament's seating), with blocks made by
``accounts.social``:

* C blocked by A (and A blocked by C) cannot sit at A's private table, by its code or its link, nor at a public
  table or a rematch where A sits; the refusal names nobody and changes nothing (seats, tables, balances);
* «Jugar ya» never seats the two together: 30 tries, the one waiting and the one playing taking turns, and the
  other always lands at another waiting table (or a new one), even behind more than five tables of people who
  blocked them;
* a tournament's seating never puts a blocked pair at one table (many seeds; duplicate and por puntos, its
  first game and the next one formed by the standings); when the tables cannot keep them apart, the best
  arrangement is kept and logged;
* unblocking lets them sit together again.
"""

from __future__ import annotations

import html
import itertools
import logging
import random
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from django.utils.translation import override
from live.helpers import person, play_to_the_end

from accounts import ledger, social
from accounts.models import Account, Transaction
from games.models import Seat, Table, Tournament
from games.table import access, actions
from games.table.actions import rematch
from games.tournaments import entries, runner

pytestmark = pytest.mark.django_db

SIT_REFUSED = "No puedes sentarte en esta mesa."
REMATCH_REFUSED = "No puedes jugar esta revancha."
_names = itertools.count()


@pytest.fixture(autouse=True)
def quick_bots(settings: Any) -> None:
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_ROUND_PAUSE = 0
    settings.POCHA_TRICK_PAUSE = 0


def people(*names: str) -> list[Any]:
    tag = next(_names)
    return [person(f"{name}{tag}") for name in names]


def browser(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page_messages(response: Any) -> list[str]:
    return [
        html.unescape(m).strip()
        for m in re.findall(r'<ul class="messages">\s*<li[^>]*>(.*?)</li>', response.content.decode(), re.S)
    ]


def everything() -> dict[str, Any]:
    return {
        "accounts": sorted(Account.objects.values_list("pk", "balance")),
        "transactions": Transaction.objects.count(),
        "tables": sorted(Table.objects.values_list("pk", "status", "seq")),
        "seats": sorted(Seat.objects.values_list("table_id", "position", "user_id", "is_bot")),
    }


def refused(call: Any, code: str = "blocked") -> actions.ActionError:
    with pytest.raises(actions.ActionError) as error:
        call()
    assert error.value.code == code, error.value
    return error.value


def seated_at(table_id: int) -> set[int]:
    return set(Seat.objects.filter(table_id=table_id, is_bot=False).values_list("user_id", flat=True))


def live_table_of(user: Any) -> int:
    table = access.live_table(user.pk)
    assert table is not None
    return table.pk


def block(blocker: Any, blocked: Any) -> None:
    assert social.block(blocker, blocked)


DIRECTIONS = ["host_blocked_the_guest", "guest_blocked_the_host"]


def blocked_pair(direction: str) -> tuple[Any, Any]:
    """A (the host) and C, blocked one way or the other."""
    a, c = people("ana", "carlos")
    if direction == "host_blocked_the_guest":
        block(a, c)
    else:
        block(c, a)
    return a, c


# -- a private table: the code, the link, a seat by id ------------------------------------------


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_a_blocked_person_cannot_sit_at_the_private_table_by_its_code(direction: str) -> None:
    a, c = blocked_pair(direction)
    table = actions.do_create_private_table(a, 4, 100, True)
    before = everything()
    response = browser(c).post("/mesas/codigo/", {"code": table.code.lower()}, follow=True)
    assert page_messages(response) == [SIT_REFUSED]
    assert a.username not in page_messages(response)[0]  # it names nobody
    assert everything() == before  # no seat, no stake held
    assert ledger.balance(c.pk) == ledger.WELCOME_CHIPS
    assert seated_at(table.pk) == {a.pk}


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_a_blocked_person_cannot_sit_by_the_share_link(direction: str) -> None:
    a, c = blocked_pair(direction)
    table = actions.do_create_private_table(a, 4, 100, True)
    client = browser(c)
    assert client.get(f"/mesa/privada/{table.code}/").status_code == 200  # (the link's page, as for anyone)
    before = everything()
    response = client.post(f"/mesa/{table.pk}/sentarse/", {"code": table.code})
    assert response.status_code == 302 and response["Location"] == "/"  # to the lobby, not a table it can't see
    assert everything() == before
    assert page_messages(client.get("/")) == [SIT_REFUSED]
    # an invitation's «Unirme» seats by the code too (``do_take_seat`` with it): the same refusal
    error = refused(lambda: actions.do_take_seat(table.pk, c, code=table.code))
    assert error.message("es") == SIT_REFUSED
    assert everything() == before


def test_a_block_either_way_refuses_whoever_comes_second_at_a_public_table_and_names_nobody() -> None:
    a, b, c = people("ana", "bea", "carlos")
    block(c, a)  # C blocked A: A may not sit where C is, and the reverse
    table = actions.do_create_table(a, 4, stake=100)
    actions.do_take_seat(table.pk, b)
    before = everything()
    error = refused(lambda: actions.do_take_seat(table.pk, c))
    assert error.message("es") == SIT_REFUSED and a.username not in error.message("es")
    with override("en"):
        assert error.message("en") == "You can't sit at this table."
    assert everything() == before
    assert [ledger.balance(u.pk) for u in (a, b, c)] == [ledger.WELCOME_CHIPS - 100] * 2 + [ledger.WELCOME_CHIPS]
    assert not access.can_sit(Table.objects.get(pk=table.pk), c)
    assert access.can_sit(Table.objects.get(pk=table.pk), person(f"dani{next(_names)}"))  # anyone else may


def test_unblocking_lets_them_sit_together_again() -> None:
    a, c = blocked_pair("host_blocked_the_guest")
    table = actions.do_create_private_table(a, 4, 100, True)
    refused(lambda: actions.do_take_seat(table.pk, c, code=table.code))
    assert social.unblock(a, c)
    response = browser(c).post("/mesas/codigo/", {"code": table.code})
    assert response["Location"] == f"/mesa/{table.pk}/"
    assert seated_at(table.pk) == {a.pk, c.pk}
    assert ledger.balance(c.pk) == ledger.WELCOME_CHIPS - 100


def test_a_block_by_the_other_one_stands_after_an_unblock() -> None:
    a, c = people("ana", "carlos")
    block(a, c)
    block(c, a)
    assert social.unblock(a, c)  # C's block of A still stands
    table = actions.do_create_table(a, 4)
    refused(lambda: actions.do_take_seat(table.pk, c))
    assert seated_at(table.pk) == {a.pk}


# -- «Jugar ya» -------------------------------------------------------------------------------------


def test_quick_play_never_seats_a_blocked_pair_together_over_many_tries() -> None:
    a, c = people("ana", "carlos")
    block(a, c)
    others = people("eva", "fede")
    # someone else's waiting quick table, older than any of A's or C's: the first candidate for both
    stranger_table = actions.do_quick_play(others[0], 4, 100).pk
    shared: list[int] = []
    landings: list[tuple[str, int]] = []
    for attempt in range(30):
        waiting, playing = (a, c) if attempt % 2 == 0 else (c, a)
        mine = actions.do_create_table(waiting, 4, quick=True, stake=100).pk  # waits at a quick table
        # the stranger's table is the oldest candidate; make the waiting one's table the first on some tries
        if attempt % 2 == 1:
            Table.objects.filter(pk=mine).update(created_at=timezone.now() - timedelta(days=1))
        else:
            Table.objects.filter(pk=mine).update(created_at=timezone.now())
        landed = actions.do_quick_play(playing, 4, 100).pk
        landings.append((playing.username, landed))
        assert landed != mine
        if {a.pk, c.pk} <= seated_at(landed) or {a.pk, c.pk} <= seated_at(mine):
            shared.append(landed)
        assert landed == stranger_table  # the other waiting table, not a new one
        actions.do_leave_seat(landed, playing)
        actions.do_leave_seat(mine, waiting)
        assert access.live_table(a.pk) is None and access.live_table(c.pk) is None
    assert shared == []
    assert len(landings) == 30
    assert ledger.balance(a.pk) == ledger.balance(c.pk) == ledger.WELCOME_CHIPS  # every stake came back


def test_quick_play_finds_a_table_behind_more_than_five_of_people_who_blocked_them() -> None:
    c = people("carlos")[0]
    blockers = people(*(f"b{i}-" for i in range(7)))
    for blocker in blockers:
        block(blocker, c)
        actions.do_create_table(blocker, 4, quick=True, stake=0)  # each waits at a quick table of their own
    free = actions.do_create_table(people("eva")[0], 4, quick=True, stake=0)  # the newest waiting table
    landed = actions.do_quick_play(c, 4, 0)
    assert landed.pk == free.pk
    assert all(c.pk not in seated_at(live_table_of(b)) for b in blockers)
    # with nobody free to sit with, a new table of their own
    d = people("dani")[0]
    block(d, c)
    for blocker in blockers:
        block(d, blocker)
    actions.do_leave_seat(free.pk, c)
    actions.do_take_seat(free.pk, d)
    mine = actions.do_quick_play(c, 4, 0)
    assert seated_at(mine.pk) == {c.pk} and mine.pk != free.pk
    assert Table.objects.filter(status=Table.Status.WAITING, is_quick=True).count() == 9


def test_quick_play_seats_the_pair_together_once_unblocked() -> None:
    a, c = people("ana", "carlos")
    block(c, a)
    waiting = actions.do_quick_play(a, 4, 0)
    assert actions.do_quick_play(c, 4, 0).pk != waiting.pk
    actions.do_leave_seat(live_table_of(c), c)
    social.unblock(c, a)
    assert actions.do_quick_play(c, 4, 0).pk == waiting.pk


# -- «Revancha» ----------------------------------------------------------------------------------------


def finished_game(humans: int = 3, *, bots: bool = True, public: bool = True, stake: int = 100) -> list[Any]:
    """A finished game of ``humans`` people (bots in the empty seats when allowed) and its people."""
    users = people(*(f"r{i}-" for i in range(humans)))
    table = actions.do_create_table(users[0], 4 if bots else humans, public=public, stake=stake, bots_allowed=bots)
    for user in users[1:]:
        actions.do_take_seat(table.pk, user, code=table.code)
    if Table.objects.get(pk=table.pk).status == Table.Status.WAITING:
        actions.do_start(table.pk, users[0])
    assert play_to_the_end(table.pk).status == Table.Status.FINISHED
    return [table, *users]


@pytest.mark.parametrize("offered_by_the_blocker", [True, False])
def test_a_rematch_never_seats_two_who_blocked_each_other_since_the_game(offered_by_the_blocker: bool) -> None:
    old, a, b, c = finished_game(3)
    block(a, c)  # since the game
    first, second = (a, c) if offered_by_the_blocker else (c, a)
    new = rematch.do_offer_rematch(old.pk, first)
    before = everything()
    error = refused(lambda: rematch.do_accept_rematch(old.pk, second))
    assert error.message("es") == REMATCH_REFUSED
    with override("en"):
        assert error.message("en") == "You can't play this rematch."
    assert everything() == before
    refused(lambda: actions.do_take_seat(new.pk, second))  # the socket's «sit» at the rematch: the same
    refused(lambda: rematch.do_offer_rematch(old.pk, second))  # «Revancha» again: an accept, refused
    assert everything() == before
    # the rematch waits for nobody the block keeps out: B's seat starts it, a bot in the empty place
    rematch.do_accept_rematch(old.pk, b)
    new.refresh_from_db()
    assert new.status == Table.Status.PLAYING
    assert seated_at(new.pk) == {first.pk, b.pk}


def test_a_rematch_starts_at_once_for_the_one_left_with_bots_and_waits_without_bots() -> None:
    old, a, c = finished_game(2)
    block(c, a)
    new = rematch.do_offer_rematch(old.pk, a)  # nobody else may come: it starts at once, bots in the rest
    assert new.status == Table.Status.PLAYING and seated_at(new.pk) == {a.pk}
    # without bots the rematch needs every seat: the host waits (and may cancel), the blocked one is refused
    old, a, b, c = finished_game(3, bots=False, public=False)
    block(c, a)
    new = rematch.do_offer_rematch(old.pk, a)
    rematch.do_accept_rematch(old.pk, b)
    before = everything()
    refused(lambda: rematch.do_accept_rematch(old.pk, c))
    assert everything() == before
    new.refresh_from_db()
    assert new.status == Table.Status.WAITING and seated_at(new.pk) == {a.pk, b.pk}


# -- a tournament's seating ----------------------------------------------------------------------------


def together(tables: list[list[int]] | list[dict[int, int]], pairs: set[frozenset[int]]) -> list[frozenset[int]]:
    found = []
    for table in tables:
        ids = list(table.values()) if isinstance(table, dict) else list(table)
        found += [frozenset(p) for p in itertools.combinations(ids, 2) if frozenset(p) in pairs]
    return found


def test_first_seating_keeps_blocked_pairs_and_addresses_apart_for_many_seeds() -> None:
    ids = list(range(1, 17))
    addresses: dict[int, str | None] = {i: None for i in ids}
    addresses.update({1: "casa", 2: "casa", 3: "casa"})
    pairs = {frozenset(p) for p in [(1, 4), (4, 5), (5, 6), (6, 7), (7, 1), (8, 9), (9, 10), (10, 8), (11, 12)]}
    for seed in range(60):
        tables = runner.first_seating(
            [(i, addresses[i]) for i in ids],
            4,
            tables_at_most=4,
            least_tables=2,
            rng=random.Random(seed),
            blocked=pairs,
        )
        assert sorted(u for t in tables for u in t.values()) == ids
        assert len(tables) == 4 and all(len(t) == 4 for t in tables)
        assert together(tables, pairs) == [], seed
        assert not any(
            len({addresses[u] for u in t.values() if addresses[u]}) < sum(1 for u in t.values() if addresses[u])
            for t in tables
        )


def test_regroup_keeps_blocked_pairs_apart_and_the_leaders_together_when_it_can() -> None:
    for seed in range(60):
        rng = random.Random(seed)
        standings = list(range(1, 13))
        rng.shuffle(standings)
        pairs = {frozenset(rng.sample(standings, 2)) for _ in range(4)}
        tables = runner.regroup(standings, {}, 4, blocked=pairs, tables_at_most=3)
        assert sorted(sum(tables, [])) == sorted(standings)
        assert together(tables, pairs) == [], (seed, pairs, tables)
    # no block: the leaders together, as before
    assert runner.regroup([5, 6, 7, 8, 1, 2], {}, 4) == [[5, 6, 7, 8], [1, 2]]
    # the two leaders blocked: the first of them swaps with the nearest one further down who clashes with nobody
    assert runner.regroup([5, 6, 7, 8, 1, 2], {}, 4, blocked={frozenset((5, 6))}) == [[1, 6, 7, 8], [5, 2]]


def test_regroup_opens_one_more_table_when_the_few_tables_cannot_keep_them_apart() -> None:
    # four people at tables of four: one table, unless the block needs two (and the places allow it)
    tables = runner.regroup([1, 2, 3, 4], {}, 4, blocked={frozenset((1, 2))}, tables_at_most=2)
    assert sorted(len(x) for x in tables) == [2, 2] and sorted(sum(tables, [])) == [1, 2, 3, 4]
    assert together(tables, {frozenset((1, 2))}) == []
    # without the places for a second table: the four at one table, the pair together (kept and logged)
    assert runner.regroup([1, 2, 3, 4], {}, 4, blocked={frozenset((1, 2))}, tables_at_most=1) == [[1, 2, 3, 4]]


def test_when_no_arrangement_keeps_them_apart_the_best_is_kept_and_logged(caplog: Any) -> None:
    with caplog.at_level(logging.WARNING, logger="games.tournaments.runner"):
        tables = runner.first_seating(
            [(1, None), (2, None), (3, None)],
            4,
            tables_at_most=1,
            rng=random.Random(1),
            blocked={frozenset((1, 2))},
        )
    assert len(tables) == 1 and sorted(tables[0].values()) == [1, 2, 3]  # everyone still plays
    assert re.search(r"kept together: \[\((1, 2|2, 1)\)\]", caplog.text), caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="games.tournaments.runner"):
        # three people who all blocked each other, two tables: one pair must share one (the fewest possible)
        tables2 = runner.regroup(
            [1, 2, 3], {}, 4, blocked={frozenset((1, 2)), frozenset((2, 3)), frozenset((1, 3))}, tables_at_most=2
        )
    assert sorted(sum(tables2, [])) == [1, 2, 3] and len(tables2) == 2
    assert len(together(tables2, {frozenset((1, 2)), frozenset((2, 3)), frozenset((1, 3))})) == 1
    assert "kept together" in caplog.text


def tournament(**fields: Any) -> Tournament:
    now = timezone.now()
    values: dict[str, Any] = {
        "name": "Torneo de prueba",
        "size": 4,
        "places": 8,
        "deals": 1,
        "entry_fee": 0,
        "prizes": "50,30,20",
        "registration_opens_at": now - timedelta(hours=1),
        "starts_at": now + timedelta(hours=1),
    }
    values.update(fields)
    return Tournament.objects.create(**values)


def start_now(t: Tournament) -> str:
    Tournament.objects.filter(pk=t.pk).update(starts_at=timezone.now() - timedelta(seconds=1))
    return runner.advance(t.pk)


def tables_of(t: Tournament, game: int) -> list[set[int]]:
    return [seated_at(x.pk) for x in Table.objects.filter(tournament=t, tournament_game=game)]


@pytest.mark.parametrize("format", [Tournament.Format.DUPLICATE, Tournament.Format.POINTS])
def test_a_tournament_never_seats_a_blocked_pair_at_one_table(format: str) -> None:
    for _run in range(6):  # six tournaments: six seeds
        t = tournament(format=format, games=1)
        players = people(*(f"t{i}-" for i in range(8)))
        for p in players:
            entries.register(p, t.pk, None)
        block(players[0], players[1])
        block(players[2], players[0])
        block(players[3], players[4])
        pairs = {frozenset((players[0].pk, players[1].pk)), frozenset((players[2].pk, players[0].pk))}
        pairs.add(frozenset((players[3].pk, players[4].pk)))
        assert start_now(t) == "started"
        tables = tables_of(t, 1)
        assert len(tables) == 2 and sorted(len(x) for x in tables) == [4, 4]
        assert together([list(x) for x in tables], pairs) == []


def test_por_puntos_opens_another_table_for_a_blocked_pair_and_forms_the_next_game_apart() -> None:
    t = tournament(format=Tournament.Format.POINTS, games=2, places=8)
    players = people("ana", "bea", "carlos", "dani")
    for p in players:
        entries.register(p, t.pk, None)
    block(players[0], players[2])
    assert start_now(t) == "started"
    first = tables_of(t, 1)
    assert len(first) == 2 and sorted(len(x) for x in first) == [2, 2]  # four at one table would seat them together
    assert not any({players[0].pk, players[2].pk} <= x for x in first)
    for x in Table.objects.filter(tournament=t, tournament_game=1):
        play_to_the_end(x.pk)
    # since the first game, the two leaders blocked each other too
    t.refresh_from_db()
    leaders = [s.user_id for s in runner.current_standings(t) if s.user_id is not None]
    if frozenset(leaders[:2]) != frozenset((players[0].pk, players[2].pk)):
        one, two = (next(p for p in players if p.pk == uid) for uid in leaders[:2])
        block(one, two)
    assert runner.advance(t.pk) == "next_game"
    second = tables_of(t, 2)
    pairs = {frozenset((players[0].pk, players[2].pk)), frozenset(leaders[:2])}
    assert together([list(x) for x in second], pairs) == []
    assert sorted(u for x in second for u in x) == sorted(p.pk for p in players)
