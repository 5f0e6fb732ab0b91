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
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


class Account(models.Model):
    class Kind(models.TextChoices):
        USER = "user", _("jugador")
        HOUSE = "house", _("la casa")
        GRANTS = "grants", _("regalos")
        POT = "pot", _("bote")
        POOL = "pool", _("bolsa de un torneo")

    kind = models.CharField(_("tipo"), max_length=8, choices=Kind.choices)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="chip_account",
        verbose_name=_("jugador"),
    )
    table = models.OneToOneField(
        "games.Table",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="pot_account",
        verbose_name=_("mesa"),
    )
    tournament = models.OneToOneField(
        "games.Tournament",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="pool_account",
        verbose_name=_("torneo"),
    )
    balance = models.BigIntegerField(_("saldo"), default=0)

    class Meta:
        verbose_name = _("cuenta de fichas")
        verbose_name_plural = _("cuentas de fichas")
        permissions = [("adjust_chips", _("Puede ajustar las fichas de un jugador"))]
        constraints = [
            # Users and pots can never owe chips; the grants account is where chips come from, and
            # the house may be down on its bots' stakes.
            models.CheckConstraint(
                condition=Q(kind__in=["house", "grants"]) | Q(balance__gte=0), name="account_balance_not_negative"
            ),
            models.CheckConstraint(
                condition=(
                    Q(kind="user", user__isnull=False, table__isnull=True, tournament__isnull=True)
                    | Q(kind="pot", user__isnull=True, table__isnull=False, tournament__isnull=True)
                    | Q(kind="pool", user__isnull=True, table__isnull=True, tournament__isnull=False)
                    | Q(kind__in=["house", "grants"], user__isnull=True, table__isnull=True, tournament__isnull=True)
                ),
                name="account_owner_matches_kind_v2",
            ),
            models.UniqueConstraint(
                fields=["kind"], condition=Q(kind__in=["house", "grants"]), name="account_one_house_one_grants"
            ),
        ]

    def __str__(self) -> str:
        if self.kind == self.Kind.USER:
            return gettext("%(user)s (%(balance)s fichas)") % {"user": self.user, "balance": self.balance}
        if self.kind == self.Kind.POOL:
            return gettext("Bolsa del torneo %(tournament)s (%(balance)s fichas)") % {
                "tournament": self.tournament_id,
                "balance": self.balance,
            }
        if self.kind == self.Kind.POT:
            return gettext("Bote de la mesa %(table)s (%(balance)s fichas)") % {
                "table": self.table_id,
                "balance": self.balance,
            }
        return gettext("%(kind)s (%(balance)s fichas)") % {
            "kind": self.get_kind_display().capitalize(),
            "balance": self.balance,
        }


class Transaction(models.Model):
    class Kind(models.TextChoices):
        WELCOME = "welcome", _("Regalo de bienvenida")
        TOPUP = "topup", _("Recarga diaria")
        STAKE = "stake", _("Apuesta")
        REFUND = "refund", _("Devolución")
        PAYOUT = "payout", _("Bote")
        ADJUSTMENT = "adjustment", _("Ajuste")
        ENTRY = "entry", _("Inscripción en un torneo")
        PRIZE = "prize", _("Premio de un torneo")

    kind = models.CharField(_("tipo"), max_length=12, choices=Kind.choices)
    #: The one event this transaction records; a second attempt at the same event finds it taken.
    key = models.CharField(_("clave"), max_length=80, unique=True)
    table = models.ForeignKey(
        "games.Table",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="chip_transactions",
        verbose_name=_("mesa"),
    )
    tournament = models.ForeignKey(
        "games.Tournament",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="chip_transactions",
        verbose_name=_("torneo"),
    )
    note = models.CharField(_("motivo"), max_length=200, blank=True, default="")
    created_at = models.DateTimeField(_("fecha"), auto_now_add=True)

    class Meta:
        verbose_name = _("movimiento de fichas")
        verbose_name_plural = _("movimientos de fichas")
        indexes = [models.Index(fields=["table", "kind"], name="txn_table_kind_idx")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.key}"


class Entry(models.Model):
    transaction = models.ForeignKey(
        Transaction, on_delete=models.PROTECT, related_name="entries", verbose_name=_("movimiento")
    )
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="entries", verbose_name=_("cuenta"))
    #: Chips into (+) or out of (−) the account.
    amount = models.BigIntegerField(_("fichas"))
    #: The account's balance right after this entry (the wallet page's running balance).
    balance_after = models.BigIntegerField(_("saldo después"))

    class Meta:
        verbose_name = _("apunte")
        verbose_name_plural = _("apuntes")
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="entry_amount_not_zero"),
            models.UniqueConstraint(fields=["transaction", "account"], name="entry_one_per_account"),
        ]
        indexes = [models.Index(fields=["account", "-id"], name="entry_account_idx")]

    def __str__(self) -> str:
        return gettext("Cuenta %(account)s: %(amount)s") % {"account": self.account_id, "amount": f"{self.amount:+d}"}


class Profile(models.Model):
    """What a player chose last time, so the lobby offers it again."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile", verbose_name=_("jugador")
    )
    quick_size = models.PositiveSmallIntegerField(_("jugadores en «Jugar ya»"), default=4)
    quick_stake = models.PositiveIntegerField(_("apuesta en «Jugar ya»"), default=0)
    #: The house rules last asked for (the games' rules key: ``games.models.rules_key``).
    quick_rules = models.CharField(_("reglas en «Jugar ya»"), max_length=32, default="clasica")
    #: Moderation: a suspended player cannot sit, join or play; they are told why.
    suspended_at = models.DateTimeField(_("suspendido el"), null=True, blank=True)
    suspended_reason = models.CharField(_("motivo de la suspensión"), max_length=300, blank=True, default="")
    suspended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("suspendido por"),
    )
    #: The player closed their account: the name was anonymised, the history and ledger kept.
    closed_at = models.DateTimeField(_("cuenta cerrada el"), null=True, blank=True)

    class Invites(models.TextChoices):
        """Who may invite the player to a table (people they follow may, unless it is «nadie»)."""

        EVERYONE = "everyone", _("Todos")
        FRIENDS = "friends", _("Mis amigos y a quien sigo")
        NOBODY = "nobody", _("Nadie")

    invites_from = models.CharField(
        _("quién puede invitarte"), max_length=10, choices=Invites.choices, default=Invites.EVERYONE
    )

    class Meta:
        verbose_name = _("perfil")
        verbose_name_plural = _("perfiles")
        permissions = [("suspend_user", _("Puede suspender a un jugador y levantar la suspensión"))]

    def __str__(self) -> str:
        return gettext("Perfil de %(user)s") % {"user": self.user}


class Follow(models.Model):
    """``follower`` follows ``followee``; two people who follow each other are friends (``accounts.social``)."""

    follower = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="following_rows", verbose_name=_("quien sigue")
    )
    followee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="follower_rows",
        verbose_name=_("a quien sigue"),
    )
    created_at = models.DateTimeField(_("desde"), auto_now_add=True)

    class Meta:
        verbose_name = _("seguimiento")
        verbose_name_plural = _("seguimientos")
        constraints = [
            models.UniqueConstraint(fields=["follower", "followee"], name="follow_once"),
            models.CheckConstraint(condition=~Q(follower=models.F("followee")), name="follow_not_self"),
        ]
        indexes = [models.Index(fields=["followee", "follower"], name="follow_followee_idx")]

    def __str__(self) -> str:
        return f"{self.follower_id} → {self.followee_id}"


class Block(models.Model):
    """``blocker`` blocked ``blocked``: the two are never seated together by the site, cannot invite each
    other, and neither sees the other online or reads the other's talk (``accounts.social``)."""

    blocker = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="blocking_rows",
        verbose_name=_("quien bloquea"),
    )
    blocked = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="blocked_rows", verbose_name=_("bloqueado")
    )
    created_at = models.DateTimeField(_("desde"), auto_now_add=True)

    class Meta:
        verbose_name = _("bloqueo")
        verbose_name_plural = _("bloqueos")
        constraints = [
            models.UniqueConstraint(fields=["blocker", "blocked"], name="block_once"),
            models.CheckConstraint(condition=~Q(blocker=models.F("blocked")), name="block_not_self"),
        ]
        indexes = [models.Index(fields=["blocked", "blocker"], name="block_blocked_idx")]

    def __str__(self) -> str:
        return f"{self.blocker_id} ⊘ {self.blocked_id}"
