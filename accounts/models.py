"""The chip wallet: double-entry bookkeeping.

Every chip lives in an account: one per user, the house (the bots' purse), the grants account
(where welcome grants and top-ups come from, so it runs negative) and one pot per staked table.
Chips move only in a ``Transaction`` whose ``Entry`` rows sum to zero, and an account's
``balance`` changes only together with its entries, in the same database transaction
(``accounts.ledger.post`` is the one function that does it).  So the sum of every balance is
always zero, and each balance equals the sum of its entries.

Each transaction carries a unique ``key`` that names the one event it records (``welcome:7``,
``stake:seat:42``, ``payout:table:9``…): processing the same event twice cannot move chips twice.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class Account(models.Model):
    class Kind(models.TextChoices):
        USER = "user", _("jugador")
        HOUSE = "house", _("la casa")
        GRANTS = "grants", _("regalos")
        POT = "pot", _("bote")

    kind = models.CharField(max_length=8, choices=Kind.choices)
    user = models.OneToOneField(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                related_name="chip_account")
    table = models.OneToOneField("games.Table", null=True, blank=True, on_delete=models.PROTECT,
                                 related_name="pot_account")
    balance = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            # Users and pots can never owe chips; the grants account is where chips come from, and
            # the house may be down on its bots' stakes.
            models.CheckConstraint(condition=Q(kind__in=["house", "grants"]) | Q(balance__gte=0),
                                   name="account_balance_not_negative"),
            models.CheckConstraint(
                condition=(Q(kind="user", user__isnull=False, table__isnull=True)
                           | Q(kind="pot", user__isnull=True, table__isnull=False)
                           | Q(kind__in=["house", "grants"], user__isnull=True, table__isnull=True)),
                name="account_owner_matches_kind"),
            models.UniqueConstraint(fields=["kind"], condition=Q(kind__in=["house", "grants"]),
                                    name="account_one_house_one_grants"),
        ]

    def __str__(self) -> str:
        if self.kind == self.Kind.USER:
            return f"{self.user} ({self.balance})"
        if self.kind == self.Kind.POT:
            return f"bote de la mesa {self.table_id} ({self.balance})"
        return f"{self.get_kind_display()} ({self.balance})"


class Transaction(models.Model):
    class Kind(models.TextChoices):
        WELCOME = "welcome", _("Regalo de bienvenida")
        TOPUP = "topup", _("Recarga diaria")
        STAKE = "stake", _("Apuesta")
        REFUND = "refund", _("Devolución")
        PAYOUT = "payout", _("Bote")
        ADJUSTMENT = "adjustment", _("Ajuste")

    kind = models.CharField(max_length=12, choices=Kind.choices)
    #: The one event this transaction records; a second attempt at the same event finds it taken.
    key = models.CharField(max_length=80, unique=True)
    table = models.ForeignKey("games.Table", null=True, blank=True, on_delete=models.PROTECT,
                              related_name="chip_transactions")
    note = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["table", "kind"], name="txn_table_kind_idx")]

    def __str__(self) -> str:
        return f"{self.kind} {self.key}"


class Entry(models.Model):
    transaction = models.ForeignKey(Transaction, on_delete=models.PROTECT, related_name="entries")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="entries")
    #: Chips into (+) or out of (−) the account.
    amount = models.BigIntegerField()
    #: The account's balance right after this entry (the wallet page's running balance).
    balance_after = models.BigIntegerField()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="entry_amount_not_zero"),
            models.UniqueConstraint(fields=["transaction", "account"], name="entry_one_per_account"),
        ]
        indexes = [models.Index(fields=["account", "-id"], name="entry_account_idx")]

    def __str__(self) -> str:
        return f"{self.account_id} {self.amount:+d}"


class Profile(models.Model):
    """What a player chose last time, so the lobby offers it again."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    quick_size = models.PositiveSmallIntegerField(default=4)
    quick_stake = models.PositiveIntegerField(default=0)
    #: Moderation: a suspended player cannot sit, join or play; they are told why.
    suspended_at = models.DateTimeField(null=True, blank=True)
    suspended_reason = models.CharField(max_length=300, blank=True, default="")
    suspended_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    #: The player closed their account: the name was anonymised, the history and ledger kept.
    closed_at = models.DateTimeField(null=True, blank=True)
