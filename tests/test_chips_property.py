"""The chip books under random sequences of everything people do with chips.

A Hypothesis state machine signs people up, drains and tops them up (on a clock that crosses Madrid
days), seats them at free and staked tables (public, private with or without the code, quick), lets
them stand up, starts tables (bots fill and stake from the house), calls tables off (more than once),
leaves started games to the bot and plays games to the end, including ties.  It keeps its own model of
what every purse should hold and predicts which requests must be refused and why.  After every step:

* every transaction's entries sum to zero, all balances sum to zero, no user or pot is negative, and
  each account's balance (and each entry's running ``balance_after``) agrees with its entries;
* every user's and the house's balance is what the model says, and every pot holds exactly the stakes
  of the seats at its table: all of them while it waits or plays, none once finished or cancelled;
* a refused request changed nothing at all in the ledger.

Whole games are played through the real ``games.table.actions`` (people's moves with ``do_action``, bots'
and departed people's with ``do_due``), but shortened to their first round (one card each) so that a
run can finish dozens of them, many of them tied; ``tests/test_chips_ledger.py`` plays a full-length
staked game.  The deals are drawn from a seed Hypothesis chooses, so every example replays exactly.
``test_a_scripted_tour`` drives the same machine through every rule in a fixed order (a tie included),
so each of them is known to be exercised whatever Hypothesis happens to draw.
"""

from __future__ import annotations

import importlib
import itertools
import random
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, F, Q, Sum, Window
from django.db.models.functions import Coalesce
from hypothesis import HealthCheck, event, given, note
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from accounts import ledger
from accounts.models import Account, Entry, Transaction
from games.engine import default_action
from games.engine.snapshot import load
from games.models import STAKES, Seat, Table
from games.table import actions
from games.table.actions import common, lifecycle
from games.table.errors import ActionError

UTC = UTC
MADRID = ZoneInfo("Europe/Madrid")
#: Rounds in a game here (a real one has 19 to 22): one round still has winners, losers and ties.
ROUNDS = 1
#: What a moderator's drain leaves: around the top-up threshold (100) and the smallest stake (100).
DRAIN_TO = (0, 1, 42, 99, 100, 101, 150)
WAITING, PLAYING, FINISHED, CANCELLED = (
    Table.Status.WAITING,
    Table.Status.PLAYING,
    Table.Status.FINISHED,
    Table.Status.CANCELLED,
)


# -- the ledger, read back ------------------------------------------------------------------


def books() -> dict[str, Any]:
    """Everything in the ledger: what a refused request must leave exactly as it was."""
    return {
        "balances": dict(Account.objects.values_list("pk", "balance")),
        "transactions": Transaction.objects.count(),
        "last_transaction": Transaction.objects.order_by("-pk").values_list("pk", flat=True).first(),
        "entries": Entry.objects.count(),
    }


def check_books() -> None:
    """The bookkeeping invariants, each asserted on its own (and ``ledger.audit()`` agreeing).  Each query
    returns only the rows that break its rule: the database reads every entry, the test only what is wrong."""
    problems = ledger.audit()
    assert problems == [], problems
    total = Account.objects.aggregate(total=Sum("balance"))["total"] or 0
    assert total == 0, f"the accounts sum to {total}"
    unbalanced = list(
        Transaction.objects.annotate(n=Count("entries"), t=Sum("entries__amount"))
        .filter(Q(n__lt=2) | ~Q(t=0))
        .values_list("key", "n", "t")
    )
    assert not unbalanced, f"transactions with fewer than 2 entries or not summing to 0: {unbalanced}"
    negative = list(Account.objects.filter(kind__in=["user", "pot"], balance__lt=0).values_list("pk", "balance"))
    assert not negative, f"negative user or pot accounts: {negative}"
    running = Window(Sum("amount"), partition_by=[F("account_id")], order_by=F("pk").asc())
    wrong = list(
        Entry.objects.annotate(running=running)
        .exclude(balance_after=F("running"))
        .values_list("pk", "account_id", "balance_after", "running")
    )
    assert not wrong, f"entries (id, account, balance_after) whose balance_after is not their running sum: {wrong}"
    off = list(
        Account.objects.annotate(held=Coalesce(Sum("entries__amount"), 0))
        .exclude(balance=F("held"))
        .values_list("pk", "balance", "held")
    )
    assert not off, f"accounts (id, balance, entries' sum) whose balance is not their entries' sum: {off}"


def split(pot: int, winners: list[int]) -> dict[int, int]:
    """RULES.md, written out again: equal shares, the odd chips one each from the lowest seat."""
    order = sorted(winners)
    shares = {seat: pot // len(order) for seat in order}
    for seat in order[: pot % len(order)]:
        shares[seat] += 1
    return shares


# -- the model ------------------------------------------------------------------------------


@dataclass
class TableModel:
    pk: int
    size: int
    stake: int
    public: bool
    quick: bool
    host: int
    code: str | None
    bots_allowed: bool
    status: str = WAITING
    #: The people seated: user id -> left the started game (the bot plays for them).
    people: dict[int, bool] = field(default_factory=dict)
    #: The people who left the started game at some point: ranked last, even if they came back.
    forfeited: set[int] = field(default_factory=set)
    bots: int = 0


class ChipsMachine(RuleBasedStateMachine):
    """Every example runs inside one savepoint that is rolled back at the end."""

    stats: dict[str, int] = {}

    def __init__(self) -> None:
        super().__init__()
        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        self.users: list[Any] = []
        self.chips: dict[int, int] = {}
        self.house = ledger.house_account().balance
        self.tables: list[TableModel] = []
        # 22:30 UTC: 23:30 in Madrid, an hour before the top-up day turns (and the UTC day does not).
        self.now = datetime(2025, 1, 15, 22, 30, tzinfo=UTC)
        self.claimed: set[tuple[int, Any]] = set()
        self.adjustments: list[tuple[int, int, str]] = []
        self.names = itertools.count()
        #: Driven step by step by a plain test rather than by Hypothesis.
        self.scripted = False

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self._atomic.__exit__(None, None, None)

    def count(self, what: str) -> None:
        self.stats[what] = self.stats.get(what, 0) + 1
        if not self.scripted:
            event(what)

    # -- helpers ----------------------------------------------------------------------------

    def user(self, i: int) -> Any:
        return self.users[i % len(self.users)]

    def table(self, i: int, *statuses: str) -> TableModel | None:
        candidates = [t for t in self.tables if not statuses or t.status in statuses]
        return candidates[i % len(candidates)] if candidates else None

    def expect(self, code: str | None, call: Callable[[], Any], error: type[Exception] = ActionError) -> Any:
        """``call`` must succeed (``code`` None) or be refused with ``code`` leaving the ledger untouched."""
        if code is None:
            return call()
        before = books()
        seats_before = list(Seat.objects.order_by("pk").values_list("pk", "user_id", "left", "is_bot"))
        with pytest.raises(error) as refused:
            call()
        assert getattr(refused.value, "code", None) == code, f"refused with {refused.value!r}, expected {code}"
        assert books() == before, f"a request refused with {code} changed the ledger"
        assert list(Seat.objects.order_by("pk").values_list("pk", "user_id", "left", "is_bot")) == seats_before
        self.count(f"refused {code}" + ("" if error is ActionError else f" ({error.__name__})"))
        return None

    def live_elsewhere(self, user_id: int, exclude: int | None = None) -> bool:
        """Whether the person has a seat they have not left at a waiting or running table (not ``exclude``)."""
        return any(
            t.pk != exclude and t.status in (WAITING, PLAYING) and t.people.get(user_id) is False for t in self.tables
        )

    def refund_everyone(self, model: TableModel) -> None:
        for user_id in model.people:
            self.chips[user_id] += model.stake
        model.status = CANCELLED
        self.count("table cancelled")

    def finished(self, model: TableModel) -> None:
        """The last move was made: the pot went to the winners, in the same transaction."""
        table = Table.objects.get(pk=model.pk)
        assert table.status == FINISHED
        model.status = FINISHED
        game = load(table.state)
        seats = {s.position: s for s in Seat.objects.filter(table_id=model.pk)}
        # RULES.md: a seat whose person left the started game is ranked after every other seat; the pot
        # goes to the best of the others (everyone here plays their own moves unless they left, so no seat
        # is forfeited for the bot's share of its decisions).  If every seat forfeited, the plain ranking.
        forfeited = {p for p, s in seats.items() if not s.is_bot and s.user_id in model.forfeited}
        assert {p for p, s in seats.items() if s.forfeit} == forfeited
        assert all(seats[p].forfeit == Seat.Forfeit.LEFT for p in forfeited)
        contenders = [p for p in seats if p not in forfeited] or list(seats)
        best = max(game.totals[p] for p in contenders)
        winners = [p for p in contenders if game.totals[p] == best]
        assert winners, "a finished game has winners"
        assert {p for p, s in seats.items() if s.place == 1} == set(winners)
        if len(contenders) < len(seats):
            assert all(seats[p].place > len(contenders) for p in forfeited)
            if max(game.totals) > best:
                self.count("a forfeited seat outscored the winner")
        # A second run of the end of the game (a retried task, say) pays nothing.
        before = books()
        with transaction.atomic():
            assert lifecycle.on_finish(table, game)["status"] == FINISHED
        assert books() == before
        assert {s.position: s.winnings for s in Seat.objects.filter(table_id=model.pk)} == {
            p: s.winnings for p, s in seats.items()
        }
        payouts = Transaction.objects.filter(table_id=model.pk, kind=Transaction.Kind.PAYOUT)
        if not model.stake:
            assert not payouts.exists() and all(s.winnings == 0 for s in seats.values())
            return
        shares = split(model.stake * model.size, winners)
        assert {p: s.winnings for p, s in seats.items()} == {p: shares.get(p, 0) for p in seats}, (winners, shares)
        assert list(payouts.values_list("key", flat=True)) == [f"payout:table:{model.pk}"]
        for position, share in shares.items():
            seat = seats[position]
            if seat.is_bot:
                self.house += share
            else:
                self.chips[seat.user_id] += share
                if seat.forfeit:
                    self.count("every seat forfeited: the plain ranking paid")
        self.count("staked game finished")
        if len(winners) > 1:
            self.count(f"tie between {len(winners)}")
            if not self.scripted:
                note(f"table {model.pk}: tie between seats {winners}, shares {shares}")

    def advance(self, model: TableModel, moves: int) -> None:
        for _ in range(moves):
            table = Table.objects.get(pk=model.pk)
            if table.status != PLAYING:
                break
            seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
            if seat.is_bot or seat.away or seat.left:
                assert actions.do_due(table.pk, table.seq) is not None, "the bot's move was not due"
            else:
                actions.do_action(table.pk, seat.user, default_action(load(table.state)), table.seq)
        if Table.objects.get(pk=model.pk).status == FINISHED:
            self.finished(model)

    # -- people and their purses ------------------------------------------------------------

    @initialize(seed=st.integers(0, 2**32 - 1))
    def setup(self, seed: int) -> None:
        rng = random.Random(seed)
        # Deals, first dealers and codes from Hypothesis's seed: an example replays exactly.
        common.secrets = types.SimpleNamespace(randbits=rng.getrandbits, choice=rng.choice)  # restored by the test
        self.sign_up()
        self.sign_up()

    @precondition(lambda self: len(self.users) < 6)
    @rule()
    def sign_up(self) -> None:
        user = get_user_model().objects.create_user(username=f"p{next(self.names)}", password=None)
        self.users.append(user)
        self.chips[user.pk] = ledger.WELCOME_CHIPS
        assert Transaction.objects.filter(key=f"welcome:{user.pk}", kind=Transaction.Kind.WELCOME).count() == 1
        before = books()
        assert ledger.grant_welcome(user.pk) is None
        assert books() == before

    @precondition(lambda self: self.users)
    @rule(u=st.integers(0, 50), hours_later=st.sampled_from([0, 0, 1, 1, 2, 5, 23, 24, 25]))
    def claim_topup(self, u: int, hours_later: int) -> None:
        """Some time passes (Madrid days go by), then someone asks for the daily top-up."""
        self.now += timedelta(hours=hours_later)
        user = self.user(u)
        day = self.now.astimezone(MADRID).date()  # top-up days are Spanish days
        if (user.pk, day) in self.claimed:
            code = "topup_claimed"
        elif self.chips[user.pk] >= ledger.TOPUP_BELOW:
            code = "topup_enough"
        else:
            code = None
        status = {None: "ok", "topup_claimed": "claimed", "topup_enough": "enough"}[code]
        assert ledger.topup_status(user.pk, self.now) == status
        self.expect(code, lambda: ledger.claim_topup(user.pk, now=self.now), ledger.LedgerError)
        if code is None:
            self.chips[user.pk] += ledger.TOPUP_CHIPS
            self.claimed.add((user.pk, day))
            self.count("top-up granted")

    @precondition(lambda self: self.users)
    @rule(
        u=st.integers(0, 50),
        kind=st.sampled_from(["drain", "drain", "overdraw", "gift", "again"]),
        chips=st.integers(0, 3000),
    )
    def moderator(self, u: int, kind: str, chips: int) -> None:
        """A moderator's adjustment: drain someone to ``chips`` (maybe below the top-up threshold), try to
        take more than they have (refused, nothing moves), give chips, or record the same correction again."""
        user = self.user(u)
        key = f"adjustment-{len(self.adjustments)}"
        if kind == "again" and self.adjustments:
            user_id, amount, key = self.adjustments[chips % len(self.adjustments)]
            before = books()
            assert ledger.adjust(user_id, amount, "again", key=key) is None
            assert books() == before
        elif kind == "overdraw":
            self.expect(
                "chips",
                lambda: ledger.adjust(user.pk, -(self.chips[user.pk] + 1 + chips % 500), "too much", key=key),
                ledger.InsufficientChips,
            )
        elif kind == "drain" and self.chips[user.pk] > DRAIN_TO[chips % len(DRAIN_TO)]:
            amount = DRAIN_TO[chips % len(DRAIN_TO)] - self.chips[user.pk]
            assert ledger.adjust(user.pk, amount, "drain", key=key) is not None
            self.adjustments.append((user.pk, amount, key))
            self.chips[user.pk] += amount
        elif kind == "gift" and chips:
            assert ledger.adjust(user.pk, chips, "gift", key=key) is not None
            self.adjustments.append((user.pk, chips, key))
            self.chips[user.pk] += chips

    # -- tables ---------------------------------------------------------------------------

    @precondition(lambda self: self.users)
    @rule(
        u=st.integers(0, 50),
        size=st.integers(3, 6),
        stake=st.sampled_from(STAKES),
        kind=st.sampled_from(["public", "private", "private without bots"]),
    )
    def create_table(self, u: int, size: int, stake: int, kind: str) -> None:
        user = self.user(u)
        public = kind == "public"
        bots_allowed = kind != "private without bots"
        if public:
            call = lambda: actions.do_create_table(user, size, stake=stake)  # noqa: E731
        else:
            call = lambda: actions.do_create_private_table(user, size, stake, bots_allowed)  # noqa: E731
        if self.live_elsewhere(user.pk):
            expected = "live_elsewhere"  # one live table each
        else:
            expected = "chips" if self.chips[user.pk] < stake else None
        table = self.expect(expected, call)
        if table is None:
            return
        assert (table.code is None) == public
        self.chips[user.pk] -= stake
        self.tables.append(
            TableModel(
                table.pk,
                size,
                stake,
                public,
                False,
                user.pk,
                table.code,
                bots_allowed or public,
                people={user.pk: False},
            )
        )

    @precondition(lambda self: self.users)
    @rule(u=st.integers(0, 50), size=st.integers(3, 4), stake=st.sampled_from(STAKES))
    def quick_play(self, u: int, size: int, stake: int) -> None:
        user = self.user(u)
        mine = {t.pk for t in self.tables if t.status in (WAITING, PLAYING) and t.people.get(user.pk) is False}
        if mine:
            before = books()
            assert actions.do_quick_play(user, size, stake).pk in mine, "not sent back to their own table"
            assert books() == before
            return
        # A seat at the oldest waiting quick table of that size and stake, or a new table.
        joined = self.expect(
            "chips" if self.chips[user.pk] < stake else None, lambda: actions.do_quick_play(user, size, stake)
        )
        if joined is None:
            return
        waiting = [
            t
            for t in self.tables
            if t.status == WAITING and t.public and t.quick and t.size == size and t.stake == stake
        ]
        self.chips[user.pk] -= stake
        if waiting:
            oldest = min(Table.objects.filter(pk__in=[t.pk for t in waiting]).values_list("created_at", flat=True))
            assert joined.created_at == oldest and joined.pk in {t.pk for t in waiting}
            model = next(t for t in waiting if t.pk == joined.pk)
            model.people[user.pk] = False
            if len(model.people) == model.size:
                model.status = PLAYING
            self.count("quick play joined a table")
        else:
            assert joined.pk not in {t.pk for t in self.tables} and joined.is_quick and joined.stake == stake
            self.tables.append(
                TableModel(joined.pk, size, stake, True, True, user.pk, None, True, people={user.pk: False})
            )

    @precondition(lambda self: self.users and self.tables)
    @rule(u=st.integers(0, 50), t=st.integers(0, 50), code=st.sampled_from(["right", "none", "wrong", "other"]))
    def take_seat(self, u: int, t: int, code: str) -> None:
        model = self.table(t)
        user = self.user(u)
        given_code = {
            "right": model.code,
            "none": None,
            "wrong": "AAAAA",
            "other": next((m.code for m in self.tables if m.code and m.pk != model.pk), None),
        }[code]
        seated = user.pk in model.people
        is_host = model.host == user.pk
        matching = bool(given_code) and given_code == model.code
        if not (model.public or is_host or seated or (matching and model.status == WAITING)):
            # Someone who brings the right code to a table that has started or been called off is told so.
            expected = "code_expired" if matching else "unknown_table"
        elif not model.public and not is_host and not seated and not matching:
            expected = "unknown_table"
        elif not model.public and not is_host and not seated and model.status != WAITING:
            expected = "code_expired"
        elif model.status != WAITING:
            expected = "not_waiting"
        elif seated:
            expected = "already_seated"
        elif self.live_elsewhere(user.pk, model.pk):
            expected = "live_elsewhere"
        elif len(model.people) >= model.size:
            expected = "full"
        elif self.chips[user.pk] < model.stake:
            expected = "chips"
        else:
            expected = None
        self.expect(expected, lambda: actions.do_take_seat(model.pk, user, code=given_code))
        if expected is None:
            self.chips[user.pk] -= model.stake
            model.people[user.pk] = False
            if model.public and len(model.people) == model.size:
                model.status = PLAYING
                self.count("a full public table started")

    def pick_person(self, model: TableModel, u: int, seated: bool) -> Any:
        if seated and model.people:
            ids = sorted(model.people)
            return next(x for x in self.users if x.pk == ids[u % len(ids)])
        return self.user(u)

    @precondition(lambda self: self.tables)
    @rule(t=st.integers(0, 50), u=st.integers(0, 50), seated=st.booleans())
    def leave(self, t: int, u: int, seated: bool) -> None:
        model = self.table(t)
        user = self.pick_person(model, u, seated)
        if user.pk not in model.people:
            expected = "not_seated"
        elif model.status == PLAYING:
            expected = "already_left" if model.people[user.pk] else None
        elif model.status != WAITING:
            expected = "not_playing"
        else:
            expected = None
        self.expect(expected, lambda: actions.do_leave_seat(model.pk, user))
        if expected is not None:
            return
        if model.status == PLAYING:
            model.people[user.pk] = True  # no refund: the bot plays the seat, which is still theirs
            model.forfeited.add(user.pk)  # and ranks last, whatever it scores
            self.count("left a started game")
        elif not model.public and model.host == user.pk:
            self.refund_everyone(model)
        else:
            self.chips[user.pk] += model.stake
            del model.people[user.pk]
            self.count("stood up before the start")
            if not model.people:
                self.refund_everyone(model)

    @precondition(lambda self: self.tables)
    @rule(t=st.integers(0, 50), u=st.integers(0, 50), host=st.booleans())
    def cancel(self, t: int, u: int, host: bool) -> None:
        model = self.table(t)
        user = next(x for x in self.users if x.pk == model.host) if host else self.user(u)
        if user.pk not in model.people:
            expected = "not_seated"
        elif model.public or model.host != user.pk:
            expected = "not_host"
        elif model.status != WAITING:
            expected = "not_waiting"
        else:
            expected = None
        self.expect(expected, lambda: actions.do_cancel(model.pk, user))
        if expected is None:
            self.refund_everyone(model)

    @precondition(lambda self: self.tables)
    @rule(t=st.integers(0, 50), u=st.integers(0, 50), seated=st.booleans())
    def start(self, t: int, u: int, seated: bool) -> None:
        model = self.table(t)
        user = self.pick_person(model, u, seated)
        missing = model.size - len(model.people)
        if user.pk not in model.people:
            expected = "not_seated"
        elif model.status != WAITING:
            expected = "not_waiting"
        elif not model.public and model.host != user.pk:
            expected = "not_host"
        elif missing and not model.bots_allowed:
            expected = "need_players"
        else:
            expected = None
        self.expect(expected, lambda: actions.do_start(model.pk, user))
        if expected is None:
            self.started_with_bots(model)

    def started_with_bots(self, model: TableModel) -> None:
        model.bots = model.size - len(model.people)
        self.house -= model.bots * model.stake
        model.status = PLAYING
        if model.bots:
            self.count("bots filled seats")

    @precondition(lambda self: any(t.status == WAITING for t in self.tables))
    @rule(t=st.integers(0, 50))
    def the_wait_is_over(self, t: int) -> None:
        """The due step of a waiting table: a quick table fills with bots and starts; the others' (calling
        them off) is not due before POCHA_WAITING_TTL."""
        model = self.table(t, WAITING)
        seq = Table.objects.get(pk=model.pk).seq
        before = books()
        changed = actions.do_due(model.pk, seq)
        if model.quick:
            assert changed is not None, "a quick table's fill was due and did not happen"
            self.started_with_bots(model)
            self.count("quick table filled")
        else:
            assert changed is None and books() == before

    @precondition(lambda self: any(t.status == PLAYING for t in self.tables))
    @rule(t=st.integers(0, 50), moves=st.integers(1, 25))
    def play_some(self, t: int, moves: int) -> None:
        self.advance(self.table(t, PLAYING), moves)

    @precondition(lambda self: any(t.status == PLAYING for t in self.tables))
    @rule(t=st.integers(0, 50))
    def play_to_the_end(self, t: int) -> None:
        model = self.table(t, PLAYING)
        self.advance(model, 10_000)
        assert model.status == FINISHED

    @precondition(lambda self: any(t.status == PLAYING and any(t.people.values()) for t in self.tables))
    @rule(t=st.integers(0, 50))
    def come_back(self, t: int) -> None:
        """ "Vuelvo": someone who left a started game takes the seat back from the bot."""
        model = self.table(t, PLAYING)
        back = [pk for pk, left in model.people.items() if left]
        if not back:
            return
        user = next(x for x in self.users if x.pk == back[0])
        if self.live_elsewhere(user.pk, model.pk):  # they went on to another table meanwhile
            self.expect("live_elsewhere", lambda: actions.do_back(model.pk, user))
            return
        before = books()
        actions.do_back(model.pk, user)
        assert books() == before
        model.people[user.pk] = False

    # -- after every step -------------------------------------------------------------------

    @invariant()
    def after_every_step(self) -> None:
        check_books()
        self.every_purse_holds_what_the_model_says()
        self.every_pot_holds_the_stakes_of_its_seats()

    def every_purse_holds_what_the_model_says(self) -> None:
        users = dict(Account.objects.filter(kind=Account.Kind.USER).values_list("user_id", "balance"))
        assert users == self.chips
        house = Account.objects.filter(kind=Account.Kind.HOUSE).values_list("balance", flat=True).first() or 0
        assert house == self.house

    def every_pot_holds_the_stakes_of_its_seats(self) -> None:
        pots = dict(Account.objects.filter(kind=Account.Kind.POT).values_list("table_id", "balance"))
        statuses = dict(Table.objects.values_list("pk", "status"))
        seats: dict[int, dict[int, bool]] = {}
        bots: dict[int, int] = {}
        for table_id, user_id, left, is_bot in Seat.objects.values_list("table_id", "user_id", "left", "is_bot"):
            if is_bot:
                bots[table_id] = bots.get(table_id, 0) + 1
            else:
                seats.setdefault(table_id, {})[user_id] = left
        for model in self.tables:
            assert statuses[model.pk] == model.status, f"table {model.pk}"
            assert seats.get(model.pk, {}) == model.people, f"table {model.pk}"
            assert bots.get(model.pk, 0) == model.bots, f"table {model.pk}"
            held = pots.get(model.pk, 0)
            if model.status in (FINISHED, CANCELLED):
                assert held == 0, f"the {model.status} table {model.pk} still has {held} chips in its pot"
            elif model.status == WAITING:
                assert held == model.stake * len(model.people), f"table {model.pk}"
            else:
                assert held == model.stake * model.size, f"table {model.pk}"
            if not model.stake:
                assert model.pk not in pots, f"the free table {model.pk} has a pot"


@pytest.mark.django_db
def test_the_books_balance_whatever_people_do(settings, monkeypatch):
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_QUICK_WAIT = 0  # a quick table's fill is due as soon as it is created
    real_schedule = importlib.import_module("games.engine.schedule").schedule

    def short(players: int) -> Any:
        return real_schedule(players)[:ROUNDS]

    monkeypatch.setattr(importlib.import_module("games.engine.presets"), "schedule", short)
    monkeypatch.setattr(common, "secrets", common.secrets)  # the machine swaps it per example
    ChipsMachine.stats = {}
    run_state_machine_as_test(
        ChipsMachine,
        settings=hypothesis_settings(
            max_examples=40,
            stateful_step_count=30,
            deadline=None,
            # the coverage asserted below (a staked game finished, a table cancelled) must not hang on
            # the random seed: the same 40 runs every time
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
        ),
    )
    stats = ChipsMachine.stats
    assert stats.get("staked game finished", 0) > 0, stats
    assert stats.get("table cancelled", 0) > 0, stats


def index_of(machine: ChipsMachine, model: TableModel, *statuses: str) -> int:
    return [t for t in machine.tables if not statuses or t.status in statuses].index(model)


@pytest.mark.django_db
def test_a_scripted_tour(settings, monkeypatch):
    """Every rule of the machine, in an order that reaches each interesting case, with the same checks
    after every step."""
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_QUICK_WAIT = 0
    real_schedule = importlib.import_module("games.engine.schedule").schedule
    monkeypatch.setattr(
        importlib.import_module("games.engine.presets"), "schedule", lambda players: real_schedule(players)[:ROUNDS]
    )
    monkeypatch.setattr(common, "secrets", common.secrets)
    machine = ChipsMachine()
    machine.scripted = True
    machine.stats = {}

    def step(rule: Callable[..., None], **kwargs: Any) -> None:
        rule(**kwargs)
        machine.after_every_step()

    try:
        step(machine.setup, seed=7)
        step(machine.sign_up)
        step(machine.sign_up)
        ana, bea, cris, dani = range(4)
        # A public staked table: sit, stand up (refund), sit again, start with a bot, play it out.
        step(machine.create_table, u=ana, size=3, stake=100, kind="public")
        public = machine.tables[-1]
        step(machine.take_seat, u=bea, t=index_of(machine, public), code="none")
        step(machine.take_seat, u=bea, t=index_of(machine, public), code="none")  # already seated
        step(machine.leave, t=index_of(machine, public), u=bea, seated=False)
        step(machine.leave, t=index_of(machine, public), u=bea, seated=False)  # not seated any more
        step(machine.take_seat, u=bea, t=index_of(machine, public), code="none")
        step(machine.cancel, t=index_of(machine, public), u=ana, host=True)  # a public table: not_host
        step(machine.start, t=index_of(machine, public), u=cris, seated=False)  # not seated
        step(machine.start, t=index_of(machine, public), u=bea, seated=False)
        step(machine.leave, t=index_of(machine, public), u=bea, seated=False)  # left to the bot
        step(machine.leave, t=index_of(machine, public), u=bea, seated=False)  # already left
        step(machine.come_back, t=index_of(machine, public, PLAYING))
        step(machine.leave, t=index_of(machine, public), u=bea, seated=False)
        step(machine.play_some, t=index_of(machine, public, PLAYING), moves=2)
        step(machine.play_to_the_end, t=index_of(machine, public, PLAYING))
        step(machine.leave, t=index_of(machine, public), u=ana, seated=False)  # finished: not_playing
        step(machine.take_seat, u=cris, t=index_of(machine, public), code="none")  # not_waiting
        # A private table without bots: the code, the host's rights, need_players, full, a repeated cancel.
        step(machine.create_table, u=cris, size=3, stake=2000, kind="private without bots")
        private = machine.tables[-1]
        step(machine.take_seat, u=dani, t=index_of(machine, private), code="none")
        step(machine.take_seat, u=dani, t=index_of(machine, private), code="wrong")
        step(machine.take_seat, u=dani, t=index_of(machine, private), code="right")
        step(machine.create_table, u=dani, size=3, stake=0, kind="public")  # live_elsewhere: one table each
        step(machine.start, t=index_of(machine, private), u=cris, seated=False)  # need_players
        step(machine.start, t=index_of(machine, private), u=dani, seated=False)  # not_host
        step(machine.cancel, t=index_of(machine, private), u=dani, host=False)  # not_host
        step(machine.take_seat, u=ana, t=index_of(machine, private), code="right")
        step(machine.sign_up)
        step(machine.take_seat, u=4, t=index_of(machine, private), code="right")  # full
        step(machine.cancel, t=index_of(machine, private), u=0, host=True)
        step(machine.cancel, t=index_of(machine, private), u=0, host=True)  # again: not_waiting
        step(machine.take_seat, u=4, t=index_of(machine, private), code="right")  # code_expired
        # A private table whose host leaves; a private table with bots that starts.
        step(machine.create_table, u=ana, size=4, stake=500, kind="private")
        step(machine.take_seat, u=bea, t=index_of(machine, machine.tables[-1]), code="right")
        step(machine.leave, t=index_of(machine, machine.tables[-1]), u=ana, seated=False)
        step(machine.create_table, u=ana, size=5, stake=500, kind="private")
        step(machine.take_seat, u=bea, t=index_of(machine, machine.tables[-1]), code="other")
        step(machine.start, t=index_of(machine, machine.tables[-1]), u=ana, seated=False)
        step(machine.play_to_the_end, t=index_of(machine, machine.tables[-1], PLAYING))
        # Chips run out: refused stakes, an overdraw, a drain, the top-up across Madrid days.
        assert DRAIN_TO[4] == 100 and DRAIN_TO[2] == 42 and DRAIN_TO[0] == 0
        step(machine.moderator, u=dani, kind="drain", chips=4)
        step(machine.claim_topup, u=dani, hours_later=0)  # exactly 100: not below it
        step(machine.moderator, u=dani, kind="drain", chips=2)
        step(machine.moderator, u=dani, kind="overdraw", chips=3)
        step(machine.moderator, u=dani, kind="gift", chips=10)
        step(machine.moderator, u=dani, kind="again", chips=1)
        step(machine.create_table, u=dani, size=3, stake=100, kind="public")  # chips
        step(machine.quick_play, u=dani, size=3, stake=500)  # chips
        # The clock says 22:30 UTC on 15 January: 23:30 in Madrid.
        step(machine.claim_topup, u=dani, hours_later=0)  # granted
        step(machine.claim_topup, u=dani, hours_later=0)  # claimed today
        step(machine.moderator, u=dani, kind="drain", chips=0)
        step(machine.claim_topup, u=dani, hours_later=0)  # still claimed today
        step(machine.claim_topup, u=dani, hours_later=1)  # 23:30 UTC, still the 15th in UTC: the 16th in Madrid
        step(machine.moderator, u=dani, kind="drain", chips=0)
        step(machine.claim_topup, u=dani, hours_later=2)  # 01:30 UTC on the 16th: claimed
        step(machine.moderator, u=dani, kind="gift", chips=500)
        step(machine.claim_topup, u=dani, hours_later=24)  # the 17th, but 500 is enough
        # Quick play: a new quick table, someone joins it, then its wait is over and bots fill it.
        step(machine.quick_play, u=dani, size=4, stake=100)
        step(machine.quick_play, u=dani, size=4, stake=100)  # back to the same table
        step(machine.quick_play, u=4, size=4, stake=100)
        step(machine.the_wait_is_over, t=index_of(machine, machine.tables[-1], WAITING))
        step(machine.leave, t=index_of(machine, machine.tables[-1]), u=4, seated=False)
        step(machine.play_to_the_end, t=index_of(machine, machine.tables[-1], PLAYING))
        # A table with no due step: nothing happens.
        step(machine.create_table, u=bea, size=6, stake=0, kind="public")
        step(machine.the_wait_is_over, t=index_of(machine, machine.tables[-1], WAITING))
        step(machine.start, t=index_of(machine, machine.tables[-1]), u=bea, seated=False)
        step(machine.play_to_the_end, t=index_of(machine, machine.tables[-1], PLAYING))
        # Staked games until the pot is split in a tie.
        for _ in range(40):
            if any(k.startswith("tie") for k in machine.stats):
                break
            step(machine.create_table, u=cris, size=3, stake=100, kind="public")
            step(machine.start, t=index_of(machine, machine.tables[-1]), u=cris, seated=False)
            step(machine.play_to_the_end, t=index_of(machine, machine.tables[-1], PLAYING))
    finally:
        machine.teardown()
    stats = machine.stats
    for seen in [
        "refused unknown_table",
        "refused code_expired",
        "refused already_seated",
        "refused not_seated",
        "refused not_host",
        "refused need_players",
        "refused full",
        "refused not_waiting",
        "refused already_left",
        "refused not_playing",
        "refused chips",
        "refused live_elsewhere",
        "refused chips (InsufficientChips)",
        "refused topup_claimed (LedgerError)",
        "refused topup_enough (LedgerError)",
        "top-up granted",
        "stood up before the start",
        "table cancelled",
        "left a started game",
        "bots filled seats",
        "quick play joined a table",
        "quick table filled",
        "staked game finished",
    ]:
        assert stats.get(seen), f"the tour never reached {seen!r}: {stats}"
    assert any(k.startswith("tie between") for k in stats), stats
    assert stats["top-up granted"] == 2 and stats["table cancelled"] == 2, stats


@given(pot=st.integers(0, 100_000), winners=st.lists(st.integers(0, 5), min_size=1, max_size=6, unique=True))
@hypothesis_settings(deadline=None, max_examples=300)
def test_split_pot_creates_and_loses_no_chip(pot, winners):
    shares = actions.split_pot(pot, winners)
    assert set(shares) == set(winners)
    assert sum(shares.values()) == pot
    assert max(shares.values()) - min(shares.values()) <= 1
    # The odd chips go to the lowest seats among the winners.
    order = sorted(winners)
    assert [shares[s] for s in order] == sorted(shares.values(), reverse=True)
    assert shares == split(pot, winners)


@pytest.mark.django_db
def test_the_books_check_finds_what_it_is_for(monkeypatch):
    """``check_books`` passes on real books and fails on each kind of wrong one planted behind the ledger's back,
    by its own queries (``ledger.audit()``, which sees a wrong balance too, is silenced for that one)."""
    user = get_user_model().objects.create_user(username="planted", password=None)  # the welcome grant
    assert ledger.adjust(user.pk, 250, "a correction", key="planted") is not None
    check_books()
    last = Entry.objects.filter(account__user=user).latest("pk")
    Entry.objects.filter(pk=last.pk).update(balance_after=F("balance_after") + 1)
    with pytest.raises(AssertionError, match="running sum"):
        check_books()
    Entry.objects.filter(pk=last.pk).update(balance_after=F("balance_after") - 1)
    check_books()
    # 7 chips moved from the grants account to the person with no transaction: the books still sum to 0
    Account.objects.filter(user=user).update(balance=F("balance") + 7)
    Account.objects.filter(pk=ledger.grants_account().pk).update(balance=F("balance") - 7)
    with pytest.raises(AssertionError, match="entries sum to"):
        check_books()  # audit's own words
    monkeypatch.setattr(ledger, "audit", list)
    with pytest.raises(AssertionError, match="whose balance is not their entries' sum"):
        check_books()
