"""Tables, seats, rounds, bids, tricks and plays.

The live engine state of a playing table is kept as a JSON snapshot on the table row
(``Table.state``), so one locked read rebuilds it; the normalised rows (rounds with their
seeds and dealt hands, bids, trump choices, tricks, plays) are the durable history from
which the same state and the game record can be rebuilt at any moment.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


#: What a seat may stake: free, or 100, 500 or 2,000 chips (RULES.md, "Chips and stakes").
STAKES = (0, 100, 500, 2000)
#: Private-table codes: capitals nobody confuses with a digit or with each other (no I, L, O, S, Z, B).
CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY"
CODE_LENGTH = 5


class Table(models.Model):
    class Status(models.TextChoices):
        WAITING = "waiting", _("esperando jugadores")
        PLAYING = "playing", _("en juego")
        FINISHED = "finished", _("terminada")
        CANCELLED = "cancelled", _("cancelada")

    size = models.PositiveSmallIntegerField(choices=[(n, str(n)) for n in range(3, 7)])
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.WAITING)
    is_public = models.BooleanField(default=True)
    is_quick = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="tables_created")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    #: Bumped on every change; every event, page and form carries it.
    seq = models.PositiveIntegerField(default=0)
    #: When a waiting quick table fills its empty seats with bots and starts.
    fill_at = models.DateTimeField(null=True, blank=True)
    #: When the next automatic step is due (a bot's move, a turn's clock, a dropped player's grace,
    #: filling a quick table); the sweeper's index.
    due_at = models.DateTimeField(null=True, blank=True)
    #: The turn clock: when the person to move runs out of time (shown as a countdown).
    turn_deadline = models.DateTimeField(null=True, blank=True)
    bid_seconds = models.PositiveSmallIntegerField(default=30)
    card_seconds = models.PositiveSmallIntegerField(default=30)
    trump_seconds = models.PositiveSmallIntegerField(default=20)
    seed = models.BigIntegerField(null=True, blank=True)
    first_dealer = models.PositiveSmallIntegerField(null=True, blank=True)
    #: Denormalised from the engine for quick queries: phase, round and seat to move.
    phase = models.CharField(max_length=20, blank=True, default="")
    round_number = models.PositiveSmallIntegerField(default=0)
    turn_seat = models.PositiveSmallIntegerField(null=True, blank=True)
    #: The engine snapshot (games.engine.snapshot): server-side only, never sent to a browser.
    state = models.JSONField(null=True, blank=True)
    #: Chips each seat puts in the pot when it sits (0: a free table).
    stake = models.PositiveIntegerField(default=0, choices=[(s, str(s)) for s in STAKES])
    #: Private tables: how others find it while it waits for players (``created_by`` is the host).
    code = models.CharField(max_length=CODE_LENGTH, null=True, blank=True)
    #: Private tables: whether bots take the seats still empty when the host starts.
    bots_allowed = models.BooleanField(default=True)

    class Meta:
        indexes = [
            models.Index(fields=["status", "is_public", "size"], name="table_lobby_idx"),
            models.Index(fields=["due_at"], name="table_due_idx", condition=models.Q(due_at__isnull=False)),
        ]
        constraints = [
            # A code works only while its table waits, so it need only be unique among those.
            models.UniqueConstraint(fields=["code"], condition=models.Q(status="waiting", code__isnull=False),
                                    name="table_code_unique_while_waiting"),
            models.CheckConstraint(condition=models.Q(stake__in=STAKES), name="table_stake_offered"),
        ]

    def __str__(self) -> str:
        return f"Mesa {self.pk} ({self.size}, {self.status})"

    @property
    def group_name(self) -> str:
        return f"table-{self.pk}"


class Seat(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seats")
    position = models.PositiveSmallIntegerField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                             related_name="seats")
    is_bot = models.BooleanField(default=False)
    name = models.CharField(max_length=150)
    joined_at = models.DateTimeField(auto_now_add=True)
    #: Turns in a row the clock played for this person; two make them away.
    timeouts = models.PositiveSmallIntegerField(default=0)
    #: Away: the bot plays their turns at once until they act again.
    away = models.BooleanField(default=False)
    #: Open sockets of this person at this table, and when the last one closed.
    sockets = models.PositiveSmallIntegerField(default=0)
    disconnected_at = models.DateTimeField(null=True, blank=True)
    #: The person left a started game: the bot plays the seat to the end, and it is still theirs.
    left = models.BooleanField(default=False)
    #: Chips this seat received from the pot when the game ended.
    winnings = models.PositiveIntegerField(default=0)
    #: Filled when the game ends, for profiles: final place (1 = won, shared places repeat), final
    #: points, rounds in which the seat bid, and how many of those it made exactly.
    place = models.PositiveSmallIntegerField(null=True, blank=True)
    final_total = models.IntegerField(null=True, blank=True)
    rounds_bid = models.PositiveSmallIntegerField(default=0)
    exact_bids = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["table", "position"], name="seat_unique_position"),
            models.UniqueConstraint(fields=["table", "user"], name="seat_unique_user",
                                    condition=models.Q(user__isnull=False)),
        ]
        indexes = [models.Index(fields=["user", "table"], name="seat_user_idx")]

    def __str__(self) -> str:
        return f"{self.name} @ {self.table_id}:{self.position}"


class Round(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveSmallIntegerField()
    dealer = models.PositiveSmallIntegerField()
    #: The deal's seed: the same seed gives the same hands.
    seed = models.BigIntegerField()
    #: By seat, the cards dealt (``[]`` for a resting dealer), in notation.
    hands = models.JSONField()
    trump_card = models.CharField(max_length=3, null=True, blank=True)
    #: Auction rounds: the suit the winner chose.
    trump_suit = models.CharField(max_length=1, null=True, blank=True)
    auction_winner = models.PositiveSmallIntegerField(null=True, blank=True)
    trump_by_clock = models.BooleanField(default=False)
    #: By seat, once the round is over.
    points = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["table", "number"], name="round_unique_number")]


class Bid(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="bids")
    index = models.PositiveSmallIntegerField()  # position in bidding order
    seat = models.PositiveSmallIntegerField()
    amount = models.PositiveSmallIntegerField()
    by_clock = models.BooleanField(default=False)
    by_bot = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["index"]
        constraints = [models.UniqueConstraint(fields=["round", "index"], name="bid_unique_index")]


class Trick(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="tricks")
    number = models.PositiveSmallIntegerField()  # from 1
    leader = models.PositiveSmallIntegerField()
    winner = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["round", "number"], name="trick_unique_number")]


class Play(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="plays")
    trick = models.ForeignKey(Trick, on_delete=models.CASCADE, related_name="plays")
    index = models.PositiveSmallIntegerField()  # position in the round's plays
    seat = models.PositiveSmallIntegerField()
    card = models.CharField(max_length=3)
    by_clock = models.BooleanField(default=False)
    by_bot = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["index"]
        constraints = [models.UniqueConstraint(fields=["round", "index"], name="play_unique_index")]
