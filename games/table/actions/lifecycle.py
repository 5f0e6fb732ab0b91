"""The lifecycle: the only places where a game starts, ends or is called off, and (with the stakes held and
given back as people sit and stand) the only places that move chips.  Each runs inside the caller's
transaction, under the table's lock, and is idempotent: a second call changes nothing."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts import ledger
from accounts.models import Account
from accounts.models import Transaction as LedgerTransaction
from games.engine import Card, GameState
from games.models import Invitation, Move, Round, Seat, Table, Tournament
from games.table import access, events, history
from games.table.actions.common import commit, new_seed, state_fields
from games.table.errors import ActionError
from games.table.events import PersonNotified, TableChanged
from leaderboard import scores, skill

BOT_NAMES = ["Lola", "Paco", "Carmen", "Manolo", "Pilar", "Curro", "Rocío", "Pepe"]


def hold_stake(table: Table, seat: Seat) -> None:
    """The seat's stake goes from its owner (the house for a bot) into the table's pot.

    Every person's seat comes through here (a new table, a seat taken, a rematch proposed or accepted),
    under their user row's lock: the last word on one live table each."""
    if not seat.is_bot and seat.user_id is not None and access.live_table(seat.user_id, exclude=table.pk) is not None:
        raise access.live_elsewhere_error()
    if not table.stake:
        return
    payer = ledger.house_account() if seat.is_bot else ledger.user_account(seat.user_id)
    try:
        ledger.post(
            LedgerTransaction.Kind.STAKE,
            f"stake:seat:{seat.pk}",
            [(payer, -table.stake), (ledger.pot_account(table.pk), table.stake)],
            table_id=table.pk,
        )
    except ledger.InsufficientChips as error:
        raise access.no_chips_error(error.balance, table.stake) from None


def refund_stake(table: Table, seat: Seat) -> None:
    """The seat's stake, exactly as it was held, back from the pot (once)."""
    held = LedgerTransaction.objects.filter(key=f"stake:seat:{seat.pk}").first()
    if held is None:
        return
    legs = [(entry.account, -entry.amount) for entry in held.entries.select_related("account")]
    ledger.post(LedgerTransaction.Kind.REFUND, f"refund:seat:{seat.pk}", legs, table_id=table.pk)


def expire_invitations(table: Table) -> None:
    """A private table that starts or is called off: every invitation to it still pending expires, in the same
    transaction (invitations are made under the table's lock: ``actions.invitations``), and each invited
    person's pages are told.  A public table has none: no query."""
    if table.is_public:
        return
    pending = Invitation.objects.filter(table_id=table.pk, status=Invitation.Status.PENDING)
    recipients = list(pending.values_list("recipient_id", flat=True))
    if recipients:
        pending.update(status=Invitation.Status.EXPIRED, answered_at=timezone.now())
        for recipient in recipients:
            events.emit(PersonNotified(recipient, "invitations"))


def split_pot(pot: int, winners: list[int]) -> dict[int, int]:
    """RULES.md: an equal split; chips that do not divide go one each to the winners in seat order from 0."""
    order = sorted(winners)
    share, left_over = divmod(pot, len(order))
    return {seat: share + (1 if i < left_over else 0) for i, seat in enumerate(order)}


def on_start(table: Table) -> TableChanged:
    """Bots take the empty seats (staking from the house), the first dealer is drawn and round 1 dealt."""
    if table.status != Table.Status.WAITING:
        raise ActionError("not_waiting", _("Esta partida ya ha empezado."))
    expire_invitations(table)
    seats = list(Seat.objects.filter(table=table))
    taken = {s.position for s in seats}
    names = [n for n in BOT_NAMES]
    random.shuffle(names)
    for position in range(table.size):
        if position not in taken:
            bot = Seat.objects.create(
                table=table,
                position=position,
                is_bot=True,
                name=f"Bot {names.pop()}",
                level=skill.BOT_LEVELS.get(table.bot_level),
            )
            hold_stake(table, bot)
            seats.append(bot)
    show_levels(table, seats)
    by_position = {s.position: s.name for s in seats}
    # A tournament's table is given its seed: every table of the same game gets the same first dealer and deals.
    seed = table.seed if table.tournament_id is not None and table.seed is not None else new_seed()
    names = [by_position[p] for p in range(table.size)]
    if table.practice_of_id is not None:  # «Juega esta mano»: that round of that game, dealt as it was
        source = Table.objects.get(pk=table.practice_of_id)
        first_dealer = int(source.first_dealer or 0)
        game = GameState.practice(table.game_rules, names, first_dealer, int(table.practice_round or 0))
        deal(table, game, Round.objects.get(table_id=source.pk, number=table.practice_round))
    else:
        rng = random.Random(seed)
        first_dealer = rng.randrange(table.size)
        if table.deals:  # some rounds of the schedule only (a tournament's deals)
            game = GameState.of_rounds(table.game_rules, names, first_dealer, [int(n) for n in table.deals])
        else:
            game = GameState(names, first_dealer, rules=table.game_rules)
        deal(table, game)
    return commit(
        table,
        table.seq,
        status=Table.Status.PLAYING,
        started_at=timezone.now(),
        fill_at=None,
        seed=seed,
        first_dealer=first_dealer,
        **state_fields(game),
    )


def show_levels(table: Table, seats: list[Seat]) -> None:
    """Each person's skill level at the table's rules as the game starts (``leaderboard.skill``), kept on their
    seat for the board to show by the name: one read and one write here rather than a read at every move."""
    people = [s for s in seats if not s.is_bot and s.user_id is not None]
    if not people:
        return
    levels = skill.levels(table.game_rules.preset, [s.user_id for s in people])
    for seat in people:
        seat.level = levels[seat.user_id]
    Seat.objects.bulk_update(people, ["level"])


def deal(table: Table, game: GameState, same_as: Round | None = None) -> Round:
    """The next round dealt from a new seed (or, ``same_as``, with that round's cards) and its row.  A
    tournament's table deals each round from its own seed and the round's number (``round_seed``): every
    table of the game gets the same cards, seat by seat."""
    if same_as is not None:
        seed = same_as.seed
    elif table.tournament_id is not None:
        seed = round_seed(int(table.seed or 0), game.next_spec.number if game.next_spec is not None else 0)
    else:
        seed = new_seed()
    if same_as is None:
        the_deal = game.deal(seed=seed)
    else:
        the_deal = game.deal(
            [[Card.parse(c) for c in hand] for hand in same_as.hands],
            Card.parse(same_as.trump_card) if same_as.trump_card else None,
        )
    return Round.objects.create(
        table=table,
        number=game.number,
        dealer=game.dealer,
        seed=seed,
        hands=[[str(c) for c in hand] for hand in the_deal.hands],
        trump_card=None if the_deal.trump_card is None else str(the_deal.trump_card),
    )


def round_seed(seed: int, *parts: int) -> int:
    """A seed worked out of ``seed`` and ``parts`` (a round's number; a tournament's game), the same on every
    table and machine: a tournament's tables deal round ``n`` from ``round_seed(table.seed, n)``."""
    text = ":".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 2


def on_finish(table: Table, game: GameState) -> dict[str, Any]:
    """The game is over: the pot goes to the winner, or is split among those sharing first place, each
    seat's record is written, and the rankings and the skill levels («Nivel», public quick and tournament games)
    move, all in the same transaction as the last move.  A person's seat that forfeited (``Seat.forfeit``: they
    left the started game, or the bot and the clock made most of their decisions) is ranked after every other
    seat, whatever its points: the bot's play wins nobody chips, a victory or a level.

    The pot goes to the best of the seats that did not forfeit: the people who played their own seats, and the
    bots (the house's own players, staking from the house: a bot that wins takes the pot back to the house).
    When no seat may win (every seat a person's, every one forfeited) nobody wins: every seat shares the last
    place and the pot goes to the house, as each forfeited stake does when someone else wins (``NOBODY_WINS``).
    A second call (the table already finished) changes nothing."""
    finished = {"status": Table.Status.FINISHED, "finished_at": table.finished_at or timezone.now()}
    seats = {s.position: s for s in Seat.objects.filter(table=table)}
    # Settled already (the places, the payout and the rankings are written together): nothing more.
    if table.status == Table.Status.FINISHED or any(s.place is not None for s in seats.values()):
        return finished
    for position in mostly_automated(table, [s for s in seats.values() if not s.is_bot and not s.forfeit]):
        seats[position].forfeit = Seat.Forfeit.BOT
    forfeited = {p for p, s in seats.items() if s.forfeit}
    places = final_places(game.totals, forfeited)
    results = history.results(table.pk)  # every round's, the last one's included (``apply`` wrote it)
    if forfeited:  # the best of the others, if any (a forfeited seat is never placed first)
        winners = [p for p in range(len(places)) if places[p] == 1 and p not in forfeited]
    else:
        winners = list(game.winners() or [])
    pot = Account.objects.filter(kind=Account.Kind.POT, table_id=table.pk).first()
    shares: dict[int, int] = {}
    if pot is not None and pot.balance > 0:
        legs: list[tuple[Account, int]] = [(pot, -pot.balance)]
        if winners:
            shares = split_pot(pot.balance, winners)
            for position, share in shares.items():
                seat = seats[position]
                legs.append((ledger.house_account() if seat.is_bot else ledger.user_account(seat.user_id), share))
        else:  # nobody wins: the forfeited stakes go to the house, as they do when someone else wins
            legs.append((ledger.house_account(), pot.balance))
        if ledger.post(LedgerTransaction.Kind.PAYOUT, f"payout:table:{table.pk}", legs, table_id=table.pk) is None:
            raise RuntimeError(f"table {table.pk}: the pot was paid but the seats were not settled")
    for position, seat in seats.items():
        bids = [(r.bids[position], r.tricks[position]) for r in results if r.bids[position] is not None]
        seat.winnings = shares.get(position, 0)
        seat.place = places[position]
        seat.final_total = game.totals[position]
        seat.rounds_bid = len(bids)
        seat.exact_bids = sum(1 for bid, tricks in bids if bid == tricks)
    Seat.objects.bulk_update(
        list(seats.values()), ["winnings", "place", "final_total", "rounds_bid", "exact_bids", "forfeit"]
    )
    if table.is_quick and table.is_public:  # private tables and bots never count in the rankings
        scores.record_game(
            [
                (s.user_id, s.winnings - table.stake, s.place == 1 and not s.forfeit)
                for s in seats.values()
                if not s.is_bot and s.user_id is not None
            ],
            finished["finished_at"],
        )
    if table.tournament_id is not None or (table.is_quick and table.is_public and not table.is_practice):
        # «Nivel»: by the places just settled (a forfeited seat is last), bots at their level's fixed rating;
        # a forfeited seat's level never goes up (``skill.rate_game``'s ``forfeited``)
        skill.rate_game(
            table.game_rules.preset,
            [
                (None, table.bot_level, int(s.place or 0)) if s.is_bot else (s.user_id, None, int(s.place or 0))
                for s in seats.values()
                if s.is_bot or s.user_id is not None
            ],
            table.pk,
            finished["finished_at"],
            forfeited={int(s.user_id) for s in seats.values() if s.forfeit and s.user_id is not None},
        )
    return finished


def mostly_automated(table: Table, seats: list[Seat]) -> set[int]:
    """The positions among ``seats`` more than half of whose own decisions (bids, cards, the trump chosen
    after winning an auction) the bot or the clock made.  One query, at the end of the game: counted from
    the moves' rows rather than kept move by move, which would cost every move a write."""
    positions = [s.position for s in seats]
    if not positions:
        return set()
    moves = Move.objects.filter(table_id=table.pk, seat__in=positions)
    hurried = hurried_since(table)
    if hurried is not None:
        # A late tournament table was hurried (``actions.hurry``): the bot's moves from then on were the
        # tournament's doing, not the person's, and count for nothing either way; their own moves still count.
        moves = moves.filter(Q(made_at__lt=hurried) | Q(by_bot=False, by_clock=False))
    counts = (
        moves.order_by()
        .values("seat")
        .annotate(n=Count("pk"), auto=Count("pk", filter=Q(by_bot=True) | Q(by_clock=True)))
    )
    decisions: dict[int, int] = {}
    made: dict[int, int] = {}
    for row in counts:
        decisions[row["seat"]] = decisions.get(row["seat"], 0) + row["n"]
        made[row["seat"]] = made.get(row["seat"], 0) + row["auto"]
    return {p for p, n in decisions.items() if 2 * made[p] > n}


def hurried_since(table: Table) -> datetime | None:
    """When a tournament's late table was hurried (the tournament's first table of the game finished
    ``late_minutes`` before; ``runner.advance``), or None if it never was."""
    if table.tournament_id is None:
        return None
    row = Tournament.objects.filter(pk=table.tournament_id).values("first_done_at", "late_minutes").first()
    if row is None or row["first_done_at"] is None:
        return None
    since: datetime = row["first_done_at"] + timedelta(minutes=row["late_minutes"])
    return since


def final_places(totals: list[int] | tuple[int, ...], forfeited: Collection[int] = ()) -> list[int]:
    """Each seat's final place: the seats that did not forfeit by total among themselves (1 + how many of
    them scored more; a shared total shares its place), then the forfeited ones after them, by total among
    themselves.  If every seat forfeited, nobody is placed ahead of anybody: they all share the last place
    (nobody wins, and nobody's place says otherwise)."""
    last = set(forfeited)
    if len(totals) and last >= set(range(len(totals))):
        return [len(totals)] * len(totals)
    ahead = len(totals) - len(last)
    return [
        (ahead if p in last else 0)
        + 1
        + sum(1 for q, other in enumerate(totals) if (q in last) == (p in last) and other > mine)
        for p, mine in enumerate(totals)
    ]


def on_cancel(table: Table, reason: Table.CancelReason, note: str = "") -> TableChanged:
    """A table called off (before the start, or by a moderator during the game): every stake still in
    the pot goes back to whoever put it in.  ``reason`` (and a moderator's ``note``) is kept on the table:
    its page tells the players why."""
    expire_invitations(table)
    seats = list(Seat.objects.filter(table=table))
    if table.stake:
        # Several refunds in one transaction: take every account's lock first, in the ledger's order.
        ledger.lock_accounts(
            Account.objects.filter(
                Q(kind=Account.Kind.POT, table_id=table.pk)
                | Q(kind=Account.Kind.USER, user_id__in=[s.user_id for s in seats if s.user_id])
            )
        )
    for seat in seats:
        refund_stake(table, seat)
    return commit(table, table.seq, status=Table.Status.CANCELLED, fill_at=None, cancel_reason=reason, cancel_note=note)
