"""Leaving a started game is a forfeit (RULES.md, "Chips and stakes"): the bot plays the seat to the end, but
the seat is ranked last for the pot and the rankings, whatever the bot scored with it.  The same holds for a
seat more than half of whose decisions the bot or the clock made, without its person ever leaving.

Real staked quick games of one round (four seats: two people, two bots), dealt and played from fixed seeds,
until the seat played by the bot ends with the best total: then the pot must go to the best of the other
seats, the forfeited person's rankings move by minus the stake with no victory, and the books balance."""

from __future__ import annotations

import importlib
import random
import types
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from live.helpers import person

from accounts import ledger
from accounts.models import Account, Entry, Transaction
from games.engine import default_action, levels
from games.engine.snapshot import load
from games.models import Move, Seat, Table
from games.read import board as board_view
from games.read.rankings import rebuild_ranking_totals
from games.table import actions
from games.table.actions import common, lifecycle
from leaderboard import skill
from leaderboard.models import PeriodScore, SkillChange, SkillRating

pytestmark = pytest.mark.django_db

STAKE = 100
SIZE = 4
SEEDS = 120
REAL_DECIDE = levels.decide


@pytest.fixture(autouse=True)
def fast_short_games(settings, monkeypatch) -> None:
    """One-round games, bots that do not wait, and bots that decide from a fixed number of worlds (the
    same games on any machine, however loaded)."""
    settings.POCHA_BOT_DELAY = 0
    real = importlib.import_module("games.engine.schedule").schedule

    def one_round(players: int) -> Any:
        return real(players)[:1]

    monkeypatch.setattr(importlib.import_module("games.engine.presets"), "schedule", one_round)
    monkeypatch.setattr(common, "secrets", common.secrets)  # each game swaps it for its seed


def seeded(monkeypatch: Any, seed: int) -> None:
    """The deal, the first dealer and every bot decision from ``seed``."""
    rng = random.Random(seed)
    monkeypatch.setattr(common, "secrets", types.SimpleNamespace(randbits=rng.getrandbits, choice=rng.choice))
    bots_rng = random.Random(1000 + seed)

    def decide(view: Any, level: str, rng: Any = bots_rng, **_kw: Any) -> Any:
        return REAL_DECIDE(view, level, rng=rng, worlds=8)

    monkeypatch.setattr(levels, "decide", decide)


def quick_game(prefix: str) -> tuple[Table, Any, Any]:
    """A staked quick table of four: ana and bea «Jugar ya», the wait ends and two bots sit."""
    ana, bea = person(f"{prefix}ana"), person(f"{prefix}bea")
    table = actions.do_quick_play(ana, SIZE, STAKE)
    assert actions.do_quick_play(bea, SIZE, STAKE).pk == table.pk
    Table.objects.filter(pk=table.pk).update(due_at=timezone.now() - timedelta(seconds=1))
    table = Table.objects.get(pk=table.pk)
    assert actions.do_due(table.pk, table.seq) is not None  # the bots fill it and it starts
    table = Table.objects.get(pk=table.pk)
    assert table.status == Table.Status.PLAYING and table.is_quick and table.is_public
    return table, ana, bea


def step(table: Table, *, clock_for: int | None = None) -> None:
    """The next move: a person plays their default at once, unless it is ``clock_for``'s turn (their clock
    runs out: the clock, then the bot, plays); a bot, an away person or a seat left plays when due."""
    seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
    if seat.user_id is not None and seat.user_id == clock_for:
        past = timezone.now() - timedelta(seconds=1)
        Table.objects.filter(pk=table.pk).update(due_at=past, turn_deadline=None if seat.away else past)
        assert actions.do_due(table.pk, table.seq) is not None
    elif seat.is_bot or seat.away or seat.left:
        assert actions.do_due(table.pk, table.seq) is not None, "a bot's move was not due"
    else:
        actions.do_action(table.pk, seat.user, default_action(load(table.state)), table.seq)


def play_out(table_id: int, *, leaver: Any = None, clock_for: Any = None) -> Table:
    """Play the game to its end; ``leaver`` leaves on the first trick (once every bid is in, before the
    first card); the clock plays ``clock_for``'s turns."""
    for _ in range(500):
        table = Table.objects.get(pk=table_id)
        if table.status != Table.Status.PLAYING:
            return table
        if leaver is not None and table.phase == "playing" and not Seat.objects.get(table=table, user=leaver).left:
            assert not Move.objects.filter(
                table_id=table_id, kind=Move.Kind.PLAY
            ).exists()  # the first trick, no card yet
            actions.do_leave_seat(table_id, leaver)
            continue
        step(table, clock_for=None if clock_for is None else clock_for.pk)
    raise AssertionError("the game did not end")


def assert_books_balance() -> None:
    """``manage.py check_chips``: every transaction sums to zero, all accounts sum to zero, every balance
    equals its entries."""
    assert ledger.audit() == []
    assert (Account.objects.aggregate(t=Sum("balance"))["t"] or 0) == 0


def ranking_rows(user: Any) -> list[tuple[str, int, int, int]]:
    return sorted(PeriodScore.objects.filter(user=user).values_list("period", "net", "games", "wins"))


def kept_totals() -> dict[Any, Any]:
    return {
        (r.user_id, r.period, r.start): {"net": r.net, "games": r.games, "wins": r.wins}
        for r in PeriodScore.objects.all()
    }


def first_game_where_the_bot_wins(monkeypatch: Any, forfeiter: str, **how: bool) -> tuple[Table, Any, Any]:
    """Seeded games until the forfeiting person's seat (``forfeiter``: "ana") ends alone on the best total."""
    for seed in range(SEEDS):
        seeded(monkeypatch, seed)
        table, ana, bea = quick_game(f"s{seed}")
        table = play_out(
            table.pk, leaver=ana if how.get("leave") else None, clock_for=ana if how.get("clock") else None
        )
        assert table.status == Table.Status.FINISHED
        totals = load(table.state).totals
        mine = Seat.objects.get(table=table, user=ana).position
        if all(totals[mine] > total for p, total in enumerate(totals) if p != mine):
            return table, ana, bea
    raise AssertionError(f"in {SEEDS} seeded games the bot never won {forfeiter}'s seat")


def assert_forfeit_ranked_last(table: Table, loser: Any, other: Any, tag: str, code: str) -> None:
    game = load(table.state)
    seats = {s.position: s for s in Seat.objects.filter(table=table)}
    mine = next(p for p, s in seats.items() if s.user_id == loser.pk)
    assert game.winners() == [mine]  # the engine's ranking: the bot won the seat on points
    # ... but the seat forfeited: last place, no chips
    assert seats[mine].forfeit == code
    assert seats[mine].place == SIZE
    assert seats[mine].winnings == 0
    others = [p for p in seats if p != mine]
    best = max(game.totals[p] for p in others)
    winners = [p for p in others if game.totals[p] == best]
    assert {p for p, s in seats.items() if s.place == 1} == set(winners)
    shares = actions.split_pot(SIZE * STAKE, winners)
    assert {p: s.winnings for p, s in seats.items()} == {p: shares.get(p, 0) for p in seats}
    assert sorted(s.place for p, s in seats.items() if p != mine) == sorted(
        lifecycle.final_places([game.totals[p] for p in others])
    )
    # the ledger: the forfeiter paid the stake and got nothing back; the pot went to the others
    assert ledger.balance(loser.pk) == 5000 - STAKE
    assert Entry.objects.filter(transaction__table=table, account__user=loser).aggregate(s=Sum("amount"))["s"] == -STAKE
    payout = Transaction.objects.get(table=table, kind=Transaction.Kind.PAYOUT)
    assert payout.entries.filter(account__user=loser).count() == 0
    assert ledger.balance(other.pk) == 5000 - STAKE + next(s.winnings for s in seats.values() if s.user_id == other.pk)
    assert Account.objects.get(kind=Account.Kind.POT, table_id=table.pk).balance == 0
    assert_books_balance()
    # the rankings: minus the stake, one game, no victory, in every period
    assert ranking_rows(loser) == [(period, -STAKE, 1, 0) for period in ("all", "month", "week")]
    theirs = next(s for s in seats.values() if s.user_id == other.pk)
    won = 1 if theirs.place == 1 else 0
    assert ranking_rows(other) == [(period, theirs.winnings - STAKE, 1, won) for period in ("all", "month", "week")]
    assert kept_totals() == rebuild_ranking_totals()
    # the final board: the seat's place and why, and the chips it lost
    _seq, html = board_view.render_board(table.pk, loser.pk, "es")
    final = html.split('<ol class="ranking">', 1)[1].split("</ol>", 1)[0]
    rows = final.split("<li")[1:]
    assert len(rows) == SIZE
    last = rows[-1]
    assert f"{SIZE}. {seats[mine].name} — {game.totals[mine]}" in last
    assert f'data-forfeit="{code}">{tag}</span>' in last
    # ... and why it is below seats it outscored (it has the top score), in words beside its tag
    assert f'{tag}</span> <span class="forfeit-behind">(queda detrás aunque sumó más puntos)</span>' in last
    assert not any("queda detrás" in row for row in rows[:-1])
    assert "pierde 100 fichas" in last and "ganador" not in last
    assert "ganador" in rows[0] and "abandonó" not in rows[0] and "jugó el bot" not in rows[0]
    _seq, english = board_view.render_board(table.pk, loser.pk, "en")
    english_final = english.split('<ol class="ranking">', 1)[1]
    assert {"abandonó": "left the game", "jugó el bot": "played by the bot"}[tag] in english_final
    assert "placed behind although it scored more points" in english_final


def test_leaving_on_the_first_trick_is_a_forfeit_even_when_the_bot_wins_the_seat(monkeypatch):
    table, ana, bea = first_game_where_the_bot_wins(monkeypatch, "ana", leave=True)
    ana_seat = Seat.objects.get(table=table, user=ana)
    assert ana_seat.left
    # every decision of hers after the bids was the bot's
    assert not Move.objects.filter(table=table, seat=ana_seat.position, kind=Move.Kind.PLAY, by_bot=False).exists()
    assert_forfeit_ranked_last(table, ana, bea, "abandonó", "left")


def test_a_seat_the_bot_and_the_clock_played_more_than_half_of_is_ranked_last(monkeypatch):
    table, ana, bea = first_game_where_the_bot_wins(monkeypatch, "ana", clock=True)
    ana_seat = Seat.objects.get(table=table, user=ana)
    assert not ana_seat.left  # she never left: the bot and the clock made her decisions
    mine = ana_seat.position
    decisions = list(Move.objects.filter(table=table, seat=mine).values_list("by_bot", "by_clock"))
    assert decisions and all(by_bot or by_clock for by_bot, by_clock in decisions)
    bea_seat = Seat.objects.get(table=table, user=bea)
    assert bea_seat.forfeit == ""  # she played her own moves
    assert_forfeit_ranked_last(table, ana, bea, "jugó el bot", "bot")


def test_half_of_the_decisions_by_the_clock_is_not_a_forfeit(monkeypatch):
    """One round of one card: a bid and a card.  The clock made the bid, she played the card: exactly half,
    not more than half — her seat is ranked by its points like any other."""
    seeded(monkeypatch, 3)
    table, ana, bea = quick_game("mitad")
    clocked = False
    for _ in range(100):
        table = Table.objects.get(pk=table.pk)
        if table.status != Table.Status.PLAYING:
            break
        ana_turn = Seat.objects.get(table=table, position=table.turn_seat).user_id == ana.pk
        step(table, clock_for=ana.pk if ana_turn and not clocked else None)
        clocked = clocked or ana_turn
    table = Table.objects.get(pk=table.pk)
    assert table.status == Table.Status.FINISHED
    seat = Seat.objects.get(table=table, user=ana)
    flags = list(Move.objects.filter(table=table, seat=seat.position).values_list("by_clock", flat=True))
    assert sorted(flags) == [False, True]
    assert seat.forfeit == ""
    game = load(table.state)
    assert [s.place for s in Seat.objects.filter(table=table).order_by("position")] == lifecycle.final_places(
        game.totals
    )
    assert_books_balance()


def test_taking_the_seat_back_does_not_undo_the_forfeit(monkeypatch):
    seeded(monkeypatch, 5)
    table, ana, bea = quick_game("vuelve")
    actions.do_leave_seat(table.pk, ana)
    seat = Seat.objects.get(table=table, user=ana)
    assert (seat.left, seat.away, seat.forfeit) == (True, True, "left")
    actions.do_back(table.pk, ana, Table.objects.get(pk=table.pk).seq)  # «Vuelvo»
    seat.refresh_from_db()
    assert (seat.left, seat.away, seat.forfeit) == (False, False, "left")
    # her page says what leaving cost, and no longer offers to leave on the old terms
    _seq, html = board_view.render_board(table.pk, ana.pk, "es")
    assert "Dejaste la partida: quedas último aunque sigas jugando." in html
    table = play_out(table.pk)
    seat.refresh_from_db()
    assert seat.forfeit == "left" and seat.place == SIZE and seat.winnings == 0
    assert ranking_rows(ana) == [(period, -STAKE, 1, 0) for period in ("all", "month", "week")]
    assert_books_balance()


def test_final_places_rank_the_forfeited_seats_last():
    assert lifecycle.final_places([10, 30, 20, 30]) == [4, 1, 3, 1]
    assert lifecycle.final_places([10, 30, 20, 30], {1}) == [3, 4, 2, 1]
    assert lifecycle.final_places([10, 30, 20, 30], {1, 3}) == [2, 3, 1, 3]
    assert lifecycle.final_places([10, 30, 20, 10], {0}) == [4, 1, 2, 3]
    # every seat forfeited: nobody is ahead of anybody, nobody is first (the top score included)
    assert lifecycle.final_places([10, 30, 20], {0, 1, 2}) == [3, 3, 3]
    assert lifecycle.final_places([10, 30, 20, 5], {0, 1, 2, 3}) == [4, 4, 4, 4]


def test_a_game_you_left_stays_in_your_tables_until_it_ends(client, monkeypatch):
    seeded(monkeypatch, 7)
    table, ana, _bea = quick_game("lista")
    actions.do_leave_seat(table.pk, ana)
    client.force_login(ana)
    html = client.get("/").content.decode()
    assert "Tus mesas" in html and f'href="/mesa/{table.pk}/"' in html
    assert "la has dejado: juega el bot" in html
    # the seat she left does not hold her: she may start another game meanwhile, and both are listed
    other = actions.do_quick_play(ana, 3, 0)
    assert other.pk != table.pk
    html = client.get("/").content.decode()
    assert f'href="/mesa/{table.pk}/"' in html and f'href="/mesa/{other.pk}/"' in html
    assert html.count("la has dejado: juega el bot") == 1
    assert play_out(table.pk).status == Table.Status.FINISHED
    html = client.get("/").content.decode()
    assert f'href="/mesa/{table.pk}/"' not in html and f'href="/mesa/{other.pk}/"' in html


# -- every person's seat forfeited ------------------------------------------------------------------------


def full_quick_table(prefix: str) -> tuple[Table, list[Any]]:
    """A staked quick table of three people and no bot: the third «Jugar ya» fills it and it starts."""
    users = [person(f"{prefix}{name}") for name in ("ana", "bea", "cris")]
    table = actions.do_quick_play(users[0], 3, STAKE)
    for user in users[1:]:
        assert actions.do_quick_play(user, 3, STAKE).pk == table.pk
    table = Table.objects.get(pk=table.pk)
    assert table.status == Table.Status.PLAYING and table.is_quick and table.is_public
    assert not Seat.objects.filter(table=table, is_bot=True).exists()
    return table, users


def house_balance() -> int:
    return ledger.house_account().balance


def levels_of(users: list[Any]) -> dict[int, tuple[int, float, float]]:
    """Each person's (level, μ, σ) at Clásica, a newcomer's when they have no rating yet."""
    rows = {r.user_id: (r.level, r.mu, r.sigma) for r in SkillRating.objects.filter(preset="clasica")}
    new = (skill.NEW_LEVEL, skill.MODEL.mu, skill.MODEL.sigma)
    return {u.pk: rows.get(u.pk, new) for u in users}


def assert_no_level_went_up(users: list[Any], before: dict[int, tuple[int, float, float]], table: Table) -> None:
    after = levels_of(users)
    for user in users:
        level, mu, sigma = after[user.pk]
        was_level, was_mu, was_sigma = before[user.pk]
        assert level <= was_level and mu <= was_mu, (user, before[user.pk], after[user.pk])
        assert mu - 3 * sigma <= was_mu - 3 * was_sigma + 1e-9, (user, before[user.pk], after[user.pk])
        change = SkillChange.objects.get(table=table, user=user)  # the game was rated: a forfeit is not free
        assert change.after <= change.before == was_level


@pytest.mark.parametrize("how", ["leave", "clock"])
def test_when_everyone_at_a_staked_quick_table_forfeits_nobody_wins(monkeypatch, how):
    """Three people at a 100-chip quick table of three all press «Dejar la partida» (or all let the clock and
    the bot make their decisions): the bot plays every seat to the end, and nobody wins.  The pot (300) goes to
    the house, one ledger entry in the game's last transaction; every balance is 4,900, every ranking row says
    −100, one game, no victory; no level goes up (all three share the last place: rated as a tie, σ would
    shrink and each newcomer show 1015 without the clamp, and the leader by points took +130 before any of
    this); the final board says so."""
    seeded(monkeypatch, 11)
    table, users = full_quick_table(f"todos{how}")
    house_before, levels_before = house_balance(), levels_of(users)
    if how == "leave":
        for user in users:
            actions.do_leave_seat(table.pk, user)
        table = play_out(table.pk)
    else:
        for _ in range(200):
            table = Table.objects.get(pk=table.pk)
            if table.status != Table.Status.PLAYING:
                break
            turn = Seat.objects.get(table=table, position=table.turn_seat)
            step(table, clock_for=turn.user_id)  # every person's clock runs out (then the bot plays them away)
    assert table.status == Table.Status.FINISHED
    game = load(table.state)
    seats = list(Seat.objects.filter(table=table).order_by("position"))
    code = "left" if how == "leave" else "bot"
    assert [s.forfeit for s in seats] == [code] * 3
    assert [s.place for s in seats] == [3, 3, 3]  # nobody first: not the top score either
    assert [s.winnings for s in seats] == [0, 0, 0]
    assert [s.final_total for s in seats] == list(game.totals)
    # the chips: the pot to the house in the game's own PAYOUT; nobody's balance up
    for user in users:
        assert ledger.balance(user.pk) == 5000 - STAKE
    assert house_balance() == house_before + 3 * STAKE
    payout = Transaction.objects.get(table=table, kind=Transaction.Kind.PAYOUT)
    assert payout.key == f"payout:table:{table.pk}"
    legs = {(e.account.kind, e.amount) for e in payout.entries.select_related("account")}
    assert legs == {(Account.Kind.POT, -3 * STAKE), (Account.Kind.HOUSE, 3 * STAKE)}
    assert Account.objects.get(kind=Account.Kind.POT, table_id=table.pk).balance == 0
    assert_books_balance()
    # the rankings: a loss of the stake, no victory, for everyone; the kept rows as the ledger rebuilds them
    for user in users:
        assert ranking_rows(user) == [(period, -STAKE, 1, 0) for period in ("all", "month", "week")]
    assert kept_totals() == rebuild_ranking_totals()
    # «Nivel»: rated, and nobody's shown level (nor μ) went up, nor σ down
    assert_no_level_went_up(users, levels_before, table)
    # the final board: nobody wins, why, and where the pot went; every seat tagged, no winner's star
    _seq, html = board_view.render_board(table.pk, users[0].pk, "es")
    final = html.split('<div class="final"', 1)[1].split("</ol>", 1)[0]
    assert "Nadie gana:" in final and "El bote (300 fichas) va a la casa" in final
    rows = final.split('<ol class="ranking">', 1)[1].split("<li")[1:]
    tag = {"leave": "abandonó", "clock": "jugó el bot"}[how]
    assert len(rows) == 3 and all(f'data-forfeit="{code}">{tag}</span>' in row for row in rows)
    assert all(row.startswith(">3. ") for row in rows), rows
    assert "ganador" not in final and 'class="winner"' not in final
    assert all("pierde 100 fichas" in row for row in rows)
    _seq, english = board_view.render_board(table.pk, users[0].pk, "en")
    assert "Nobody wins:" in english and "goes to the house" in english


def test_people_who_left_lose_to_the_bots_and_the_pot_goes_back_to_the_house(monkeypatch):
    """Both people of a four-seat staked table leave: the bots are not seats handed over by anybody but the
    house's own players, staked from the house, so the best bot takes the pot, which is the house's: leaving
    never gets a stake back, nor does everyone leaving.  No person's balance, ranking or level goes up."""
    seeded(monkeypatch, 4)
    table, ana, bea = quick_game("bots")
    people = [ana, bea]
    house_before, levels_before = house_balance(), levels_of(people)
    for user in people:
        actions.do_leave_seat(table.pk, user)
    table = play_out(table.pk)
    seats = {s.position: s for s in Seat.objects.filter(table=table)}
    game = load(table.state)
    bots = [p for p, s in seats.items() if s.is_bot]
    best = max(game.totals[p] for p in bots)
    winners = [p for p in bots if game.totals[p] == best]
    assert {p for p, s in seats.items() if s.place == 1} == set(winners)
    assert all(seats[p].place > 2 and seats[p].winnings == 0 for p in seats if not seats[p].is_bot)
    assert sum(s.winnings for s in seats.values()) == SIZE * STAKE
    # the house staked 200 for its bots at the start (counted already) and takes the whole pot of 400 (+200
    # over the game); each person −100
    assert house_balance() == house_before + SIZE * STAKE
    for user in people:
        assert ledger.balance(user.pk) == 5000 - STAKE
        assert ranking_rows(user) == [(period, -STAKE, 1, 0) for period in ("all", "month", "week")]
    assert kept_totals() == rebuild_ranking_totals()
    assert_books_balance()
    assert_no_level_went_up(people, levels_before, table)
    _seq, html = board_view.render_board(table.pk, ana.pk, "es")
    assert "Nadie gana" not in html and "ganador" in html


def test_a_forfeited_seat_tied_last_never_gains_level():
    """``rate_game`` unit: three newcomers tied on the last place would each gain (σ shrinks: 1000 → 1015),
    and a weak player tied last with a strong one would gain μ; as forfeited seats, none of them goes up."""
    from games.models import Table as TableModel

    def a_table() -> Any:
        return TableModel.objects.create(size=3)

    when = timezone.now()
    free = [person(f"libre{i}") for i in range(3)]
    with transaction.atomic():
        skill.rate_game("clasica", [(u.pk, None, 3) for u in free], a_table().pk, when)
    assert all(r.level > skill.NEW_LEVEL for r in SkillRating.objects.filter(user__in=free))  # the gain clamped below
    gone = [person(f"ido{i}") for i in range(3)]
    table = a_table()
    with transaction.atomic():
        skill.rate_game("clasica", [(u.pk, None, 3) for u in gone], table.pk, when, forfeited={u.pk for u in gone})
    assert_no_level_went_up(gone, {u.pk: (skill.NEW_LEVEL, skill.MODEL.mu, skill.MODEL.sigma) for u in gone}, table)
    # a weak player tied last with a strong one, beside a bot: μ would rise for the weak one
    weak, strong = person("flojo"), person("fuerte")
    SkillRating.objects.create(
        user=weak, preset="clasica", mu=10.0, sigma=2.0, level=skill.level_of(10, 2), games=9, updated_at=when
    )
    SkillRating.objects.create(
        user=strong, preset="clasica", mu=40.0, sigma=2.0, level=skill.level_of(40, 2), games=9, updated_at=when
    )
    before = levels_of([weak, strong])
    probe = [(weak.pk, None, 2), (strong.pk, None, 2), (None, "normal", 1)]
    rated = skill.MODEL.rate(
        [
            [skill.MODEL.rating(mu=10.0, sigma=2.0)],
            [skill.MODEL.rating(mu=40.0, sigma=2.0)],
            [skill.MODEL.rating(mu=25.0, sigma=1.0)],
        ],
        ranks=[2.0, 2.0, 1.0],
    )
    assert rated[0][0].mu > 10.0  # what the model alone would do
    table = a_table()
    with transaction.atomic():
        skill.rate_game("clasica", probe, table.pk, when, forfeited={weak.pk, strong.pk})
    assert_no_level_went_up([weak, strong], before, table)
