"""Tables, seats, rounds and moves.

A game's history is its log: one ``Round`` row per deal (the seed and the hands dealt) and one ``Move``
row per accepted decision (a bid, a trump choice, a card), appended in the order the table accepted
them.  Everything else is derived from it: the game record, the replay, the profiles' figures, and the
table row's ``state``, which holds only what the next move needs (the round in play, the totals and the
last round's result) and is rebuilt from the log whenever it is missing (``games.table.history``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from games.engine.levels import DIFICIL, FACIL, LEVELS, NORMAL
from games.engine.presets import CLASICA, MOST_PLAYERS, SCHEDULES, Rules

#: What a seat may stake: free, or 100, 500 or 2,000 chips (RULES.md, "Chips and stakes").
STAKES = (0, 100, 500, 2000)
#: Private-table codes: capitals nobody confuses with a digit or with each other (no I, L, O, S, Z, B).
CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY"
CODE_LENGTH = 5
#: The bots' levels as players read them (the engine has the codes, the site the words).
BOT_LEVEL_LABELS = {FACIL: _("fácil"), NORMAL: _("normal"), DIFICIL: _("difícil")}
BOT_LEVEL_CHOICES = [(level, BOT_LEVEL_LABELS[level]) for level in LEVELS]

#: The house rules (``shared/VARIANTS.md``) as players read them, in the order a host is offered them.
PRESET_LABELS = {
    "clasica": _("Clásica"),
    "indias": _("Indias, subastados y oros"),
    "se-dobla": _("Se dobla"),
    "bazas": _("Juego de las Bazas"),
}
#: Se dobla's round schedules, as players read them.
SCHEDULE_LABELS = {
    "sencillas": _("sencillas"),
    "dobles": _("dobles"),
    "una-mas": _("una más"),
    "escalera": _("escalera"),
}
#: The kinds of round the house rules add, as players read them (a normal round has no name of its own).
ROUND_KIND_LABELS = {
    "indias": _("indias"),
    "subastados": _("subastados"),
    "oros": _("oros"),
    "desempate": _("desempate"),
}
#: The longest rules key (``rules_key``): «se-dobla:sencillas:frente».
RULES_KEY_LENGTH = 32


def rules_key(rules: Rules) -> str:
    """The rules as one word the table row keeps and «Jugar ya» matches on: ``clasica``, ``indias``,
    ``bazas``, ``se-dobla:<schedule>``, and ``…:frente`` when every one-card round is played «en la frente»."""
    if rules.preset != "se-dobla":
        return rules.preset
    return f"se-dobla:{rules.schedule_name}" + (":frente" if rules.forehead else "")


def rules_of(key: str) -> Rules:
    """The rules ``rules_key`` wrote; ValueError for any other text."""
    try:
        return _RULES_BY_KEY[key]
    except (KeyError, TypeError):
        raise ValueError(f"not a rules key: {key!r}") from None


_RULES_BY_KEY: dict[str, Rules] = {
    rules_key(r): r
    for r in (
        CLASICA,
        Rules.of("indias"),
        Rules.of("bazas"),
        *(Rules.of("se-dobla", schedule=name, forehead=f) for name in SCHEDULES for f in (False, True)),
    )
}


def rules_name(rules: Rules) -> str:
    """The rules as players read them, in the active language: «Se dobla · dobles · en la frente»."""
    parts = [str(PRESET_LABELS[rules.preset])]
    if rules.preset == "se-dobla":
        parts.append(str(SCHEDULE_LABELS[rules.schedule_name]))
        if rules.forehead:
            parts.append(gettext("en la frente"))
    return " · ".join(parts)


#: Every rules key a table may have (the check constraint's list).
RULES_KEYS = tuple(_RULES_BY_KEY)


class Table(models.Model):
    class Status(models.TextChoices):
        WAITING = "waiting", _("esperando jugadores")
        PLAYING = "playing", _("en juego")
        FINISHED = "finished", _("terminada")
        CANCELLED = "cancelled", _("cancelada")

    class CancelReason(models.TextChoices):
        """Why a table was called off (its page says it in a sentence: ``games.read.board``)."""

        MODERATOR = "moderator", _("un moderador")
        HOST = "host", _("quien creó la mesa")
        NOBODY_CAME = "nobody_came", _("no llegaron jugadores")
        EVERYONE_LEFT = "everyone_left", _("se levantaron todos")

    size = models.PositiveSmallIntegerField(_("jugadores"), choices=[(n, str(n)) for n in range(3, MOST_PLAYERS + 1)])
    #: The house rules the game is played by (``rules_key``; ``game_rules`` for the engine's value).
    rules = models.CharField(_("reglas"), max_length=RULES_KEY_LENGTH, default="clasica")
    status = models.CharField(_("estado"), max_length=10, choices=Status.choices, default=Status.WAITING)
    is_public = models.BooleanField(_("pública"), default=True)
    is_quick = models.BooleanField(_("partida rápida"), default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tables_created",
        verbose_name=_("creada por"),
    )
    created_at = models.DateTimeField(_("creada el"), auto_now_add=True)
    started_at = models.DateTimeField(_("empezada el"), null=True, blank=True)
    finished_at = models.DateTimeField(_("terminada el"), null=True, blank=True)
    #: Bumped on every change; every event, page and form carries it.
    seq = models.PositiveIntegerField(_("versión"), default=0)
    #: When a waiting quick table fills its empty seats with bots and starts.
    fill_at = models.DateTimeField(_("se llena con bots el"), null=True, blank=True)
    #: When the next automatic step is due (a bot's move, a turn's clock, a dropped player's grace,
    #: filling a quick table).  Set only while the table waits or plays; not indexed: it changes at every
    #: move, and a move that changes no indexed column is a HOT update on PostgreSQL (the row rewritten in
    #: its own page, no index touched).  The sweeper finds due tables among the live ones by ``status``
    #: (``table_lobby_idx``), see ``games.table.actions.due.overdue_steps``.
    due_at = models.DateTimeField(_("próximo paso automático"), null=True, blank=True)
    #: The turn clock: when the person to move runs out of time (shown as a countdown).
    turn_deadline = models.DateTimeField(_("fin del turno"), null=True, blank=True)
    bid_seconds = models.PositiveSmallIntegerField(_("segundos para pedir"), default=30)
    card_seconds = models.PositiveSmallIntegerField(_("segundos para jugar carta"), default=30)
    trump_seconds = models.PositiveSmallIntegerField(_("segundos para elegir triunfo"), default=20)
    seed = models.BigIntegerField(_("semilla"), null=True, blank=True)
    first_dealer = models.PositiveSmallIntegerField(_("primer repartidor"), null=True, blank=True)
    #: Denormalised from the engine for quick queries: phase, round and seat to move.
    phase = models.CharField(_("fase"), max_length=20, blank=True, default="")
    round_number = models.PositiveSmallIntegerField(_("ronda"), default=0)
    turn_seat = models.PositiveSmallIntegerField(_("asiento en turno"), null=True, blank=True)
    #: What the next move needs (``games.engine.snapshot.dump(game, history=False)``: the round in play, the
    #: totals and the last round's result), a cache of the log rebuilt when missing; server-side only.
    state = models.JSONField(_("estado del motor"), null=True, blank=True)
    #: Chips each seat puts in the pot when it sits (0: a free table).
    stake = models.PositiveIntegerField(_("apuesta"), default=0, choices=[(s, str(s)) for s in STAKES])
    #: Private tables: how others find it while it waits for players (``created_by`` is the host).
    code = models.CharField(_("código"), max_length=CODE_LENGTH, null=True, blank=True)
    #: Private tables: whether bots take the seats still empty when the host starts.
    bots_allowed = models.BooleanField(_("se admiten bots"), default=True)
    #: How well the bots play (``games.engine.levels``): every bot seat, and — normal at least — the
    #: bot that plays for a person whose clock ran out, who is away or whose connection dropped.
    bot_level = models.CharField(_("nivel de los bots"), max_length=10, choices=BOT_LEVEL_CHOICES, default=NORMAL)
    #: «Revancha»: the finished table this one replays, with the same options, for the same players.
    rematch_of = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="rematch", verbose_name=_("revancha de")
    )

    #: «Juega esta mano»: a free table replaying one round of a finished game (``practice_of``, round
    #: ``practice_round``) with its deal, for the person in seat ``practice_seat``, against bots.  It counts
    #: for nothing: no chips, no rankings, not in the profiles.
    practice_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="practices",
        verbose_name=_("práctica de"),
    )
    practice_round = models.PositiveSmallIntegerField(_("ronda practicada"), null=True, blank=True)
    practice_seat = models.PositiveSmallIntegerField(_("asiento practicado"), null=True, blank=True)
    #: What difícil made of that seat on the same deal (the others bots of the table's level): its bid, its
    #: tricks and its points, worked out by the worker once the table is made (None until then).
    practice_baseline = models.JSONField(_("resultado de difícil"), null=True, blank=True)

    #: A tournament's table: which tournament, which of its games (from 1) and which table of that game (from 1).
    tournament = models.ForeignKey(
        "Tournament",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="tables",
        verbose_name=_("torneo"),
    )
    tournament_game = models.PositiveSmallIntegerField(_("partida del torneo"), null=True, blank=True)
    tournament_number = models.PositiveSmallIntegerField(_("mesa del torneo"), null=True, blank=True)
    #: The rounds of the schedule this game plays (a tournament's deals), in order; null: the whole game.
    deals = models.JSONField(_("manos que se juegan"), null=True, blank=True)

    #: Set when the table is cancelled (blank for a table that never was, or was cancelled before it was kept).
    cancel_reason = models.CharField(
        _("motivo de la cancelación"), max_length=20, choices=CancelReason.choices, blank=True, default=""
    )
    #: A moderator's own words on why (``accounts.moderation.clean_reason``), shown to the players.
    cancel_note = models.CharField(_("nota del moderador"), max_length=200, blank=True, default="")

    class Meta:
        verbose_name = _("mesa")
        verbose_name_plural = _("mesas")
        permissions = [("cancel_table", _("Puede cancelar una partida"))]
        indexes = [
            models.Index(fields=["status", "is_public", "size"], name="table_lobby_idx"),
        ]
        constraints = [
            # A code works only while its table waits, so it need only be unique among those.
            models.UniqueConstraint(
                fields=["code"],
                condition=models.Q(status="waiting", code__isnull=False),
                name="table_code_unique_while_waiting",
            ),
            models.CheckConstraint(condition=models.Q(stake__in=STAKES), name="table_stake_offered"),
            models.CheckConstraint(condition=models.Q(bot_level__in=LEVELS), name="table_bot_level_known"),
            models.CheckConstraint(condition=models.Q(rules__in=RULES_KEYS), name="table_rules_known"),
        ]

    def __str__(self) -> str:
        return gettext("Mesa %(id)s (%(size)s jugadores, %(status)s)") % {
            "id": self.pk,
            "size": self.size,
            "status": self.get_status_display(),
        }

    @property
    def game_rules(self) -> Rules:
        """The engine's rules for this table."""
        return rules_of(self.rules)

    def rules_name(self) -> str:
        """The table's rules as players read them (``rules_name``), in the active language."""
        return rules_name(self.game_rules)

    @property
    def is_practice(self) -> bool:
        return self.practice_of_id is not None

    @property
    def is_tournament(self) -> bool:
        return self.tournament_id is not None


class Seat(models.Model):
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seats", verbose_name=_("mesa"))
    position = models.PositiveSmallIntegerField(_("asiento"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="seats",
        verbose_name=_("jugador"),
    )
    is_bot = models.BooleanField(_("bot"), default=False)
    name = models.CharField(_("nombre"), max_length=150)
    joined_at = models.DateTimeField(_("sentado el"), auto_now_add=True)
    #: Turns in a row the clock played for this person; two make them away.
    timeouts = models.PositiveSmallIntegerField(_("turnos agotados seguidos"), default=0)
    #: Away: the bot plays their turns at once until they act again.
    away = models.BooleanField(_("ausente"), default=False)
    #: Open sockets of this person at this table, and when the last one closed.
    sockets = models.PositiveSmallIntegerField(_("conexiones abiertas"), default=0)
    disconnected_at = models.DateTimeField(_("desconectado el"), null=True, blank=True)
    #: The person left a started game: the bot plays the seat to the end (the seat stays theirs, and they
    #: may take it back), but the forfeit it cost them stands (``forfeit``).
    left = models.BooleanField(_("ha dejado la partida"), default=False)

    class Forfeit(models.TextChoices):
        """Why a person's seat is ranked last when the game ends, whatever its points: the bot's play
        must not win a person chips or a victory."""

        NONE = "", _("no")
        LEFT = "left", _("abandonó")
        BOT = "bot", _("jugó el bot")

    #: Set for good when the person leaves the started game (or is made to leave by a suspension), and at
    #: the end for a seat more than half of whose decisions the bot or the clock made.
    forfeit = models.CharField(_("renuncia"), max_length=5, choices=Forfeit.choices, blank=True, default="")
    #: Chips this seat received from the pot when the game ended.
    winnings = models.PositiveIntegerField(_("fichas ganadas"), default=0)
    #: Filled when the game ends, for profiles: final place (1 = won, shared places repeat), final
    #: points, rounds in which the seat bid, and how many of those it made exactly.
    place = models.PositiveSmallIntegerField(_("puesto final"), null=True, blank=True)
    final_total = models.IntegerField(_("puntos finales"), null=True, blank=True)
    rounds_bid = models.PositiveSmallIntegerField(_("rondas en que pidió"), default=0)
    exact_bids = models.PositiveSmallIntegerField(_("pedidos exactos"), default=0)
    #: What the bot or the clock did for this person while they had no page of the table open, or after they
    #: left the game (``{"bid": 2}``, ``{"trump": "c"}``, ``{"play": "1o"}``…), told to them when they are back
    #: («Mientras no estabas…»); a turn played while they watched is not kept (``actions.due.apply_due``).
    bot_log = models.JSONField(_("jugadas del bot por el jugador"), default=list, blank=True)
    #: The seat's skill level («Nivel») at the table's rules when the game started (``leaderboard.skill``: the
    #: person's, or the bots' fixed one), shown by the name; kept here so that drawing the board reads nothing
    #: more.  None before the start.
    level = models.IntegerField(_("nivel"), null=True, blank=True)

    class Meta:
        verbose_name = _("asiento")
        verbose_name_plural = _("asientos")
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["table", "position"], name="seat_unique_position"),
            models.UniqueConstraint(
                fields=["table", "user"], name="seat_unique_user", condition=models.Q(user__isnull=False)
            ),
        ]
        indexes = [models.Index(fields=["user", "table"], name="seat_user_idx")]

    def __str__(self) -> str:
        return gettext("%(name)s (mesa %(table)s, asiento %(position)s)") % {
            "name": self.name,
            "table": self.table_id,
            "position": self.position,
        }


class Round(models.Model):
    """One deal of a game: the log's chance step.  ``result`` is derived (written once the round is over,
    from its moves) for the scoreboards; the log alone rebuilds it."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="rounds", verbose_name=_("mesa"))
    number = models.PositiveSmallIntegerField(_("número"))
    dealer = models.PositiveSmallIntegerField(_("reparte"))
    #: The deal's seed: the same seed gives the same hands.
    seed = models.BigIntegerField(_("semilla"))
    #: By seat, the cards dealt (``[]`` for a resting dealer), in notation.
    hands = models.JSONField(_("manos repartidas"))
    trump_card = models.CharField(_("carta de triunfo"), max_length=3, null=True, blank=True)
    #: Once the round is over: its result as the engine scores it (``RoundResult.as_json``).
    result = models.JSONField(_("resultado"), null=True, blank=True)

    class Meta:
        verbose_name = _("ronda")
        verbose_name_plural = _("rondas")
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["table", "number"], name="round_unique_number")]

    def __str__(self) -> str:
        return gettext("Ronda %(number)s de la mesa %(table)s") % {"number": self.number, "table": self.table_id}


class Move(models.Model):
    """One decision the table accepted, appended in order: a bid (``value`` the number), the auction winner's
    trump (the suit's letter) or a card (its code).  ``seq`` is the table's seq once the move was made, so a
    game's moves in ``seq`` order are its history; never changed once written."""

    class Kind(models.TextChoices):
        BID = "b", _("pedido")
        TRUMP = "t", _("triunfo")
        PLAY = "p", _("carta")

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="moves", verbose_name=_("mesa"))
    seq = models.PositiveIntegerField(_("versión"))
    round = models.PositiveSmallIntegerField(_("ronda"))
    seat = models.PositiveSmallIntegerField(_("asiento"))
    kind = models.CharField(_("tipo"), max_length=1, choices=Kind.choices)
    value = models.CharField(_("valor"), max_length=3)
    #: Made for the person by the clock (their time ran out) or by the bot (away, gone, or a bot's seat).
    by_clock = models.BooleanField(_("por el reloj"), default=False)
    by_bot = models.BooleanField(_("por el bot"), default=False)
    made_at = models.DateTimeField(_("hecha el"))

    class Meta:
        verbose_name = _("jugada")
        verbose_name_plural = _("jugadas")
        ordering = ["table", "seq"]
        constraints = [models.UniqueConstraint(fields=["table", "seq"], name="move_unique_seq")]

    def __str__(self) -> str:
        return gettext("Asiento %(seat)s: %(kind)s %(value)s") % {
            "seat": self.seat,
            "kind": self.get_kind_display(),
            "value": self.value,
        }


class ServerProcess(models.Model):
    """One ASGI server process, alive while it beats (``games.live.presence``): its sockets count only as long
    as it does, so that a process killed without closing them cannot leave anyone counted online."""

    id = models.UUIDField(primary_key=True, editable=False)
    #: host:pid, for the admin (two processes never share an id, even on one host).
    name = models.CharField(_("nombre"), max_length=200, blank=True, default="")
    started_at = models.DateTimeField(_("arrancado el"), auto_now_add=True)
    #: The last beat: not seen for ``POCHA_PRESENCE_TTL`` seconds, the process is dead.
    seen_at = models.DateTimeField(_("visto el"), db_index=True)

    class Meta:
        verbose_name = _("proceso del servidor")
        verbose_name_plural = _("procesos del servidor")

    def __str__(self) -> str:
        return self.name or str(self.pk)


class Watcher(models.Model):
    """One open socket showing a table (a seated player's or a spectator's): who watches, and who of
    the seated people is present (``games.live.presence``).  It lives as long as its server process."""

    # No database constraint: inserting a row would otherwise wait for the table row's lock (a key-share
    # lock against a move's FOR UPDATE), and opening a socket must never wait for a move.
    table = models.ForeignKey(
        Table, on_delete=models.CASCADE, related_name="watchers", verbose_name=_("mesa"), db_constraint=False
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", verbose_name=_("usuario")
    )
    channel_name = models.CharField(_("canal"), max_length=200, unique=True)
    #: The process holding the socket (null: a row from before processes were recorded).
    process = models.ForeignKey(
        ServerProcess,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="watchers",
        verbose_name=_("proceso"),
    )
    seen_at = models.DateTimeField(_("visto el"), auto_now=True)

    class Meta:
        verbose_name = _("espectador")
        verbose_name_plural = _("espectadores")
        indexes = [models.Index(fields=["table", "user"], name="watcher_table_user_idx")]

    def __str__(self) -> str:
        return f"{self.user_id} @ {self.table_id}"


class PageSocket(models.Model):
    """One open socket of a page of the site other than a table's (the lobby, «Amigos», a profile…): its
    person is online (``games.read.online``), and hears their invitations live.  Like ``Watcher``, it lives as
    long as its server process (``games.live.presence`` sweeps a dead process's rows)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", verbose_name=_("usuario")
    )
    channel_name = models.CharField(_("canal"), max_length=200, unique=True)
    process = models.ForeignKey(
        ServerProcess,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="page_sockets",
        verbose_name=_("proceso"),
    )
    opened_at = models.DateTimeField(_("abierto el"), auto_now_add=True)

    class Meta:
        verbose_name = _("página abierta")
        verbose_name_plural = _("páginas abiertas")
        indexes = [models.Index(fields=["user"], name="pagesocket_user_idx")]

    def __str__(self) -> str:
        return f"{self.user_id} ({self.channel_name})"


class Invitation(models.Model):
    """The host of a waiting private table asks someone to sit at it (``games.table.actions.invitations``).
    Pending until answered, or until the table starts or is cancelled (then expired)."""

    class Status(models.TextChoices):
        PENDING = "pending", _("pendiente")
        ACCEPTED = "accepted", _("aceptada")
        DECLINED = "declined", _("rechazada")
        EXPIRED = "expired", _("caducada")

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="invitations", verbose_name=_("mesa"))
    sender = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", verbose_name=_("quien invita")
    )
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations", verbose_name=_("invitado")
    )
    status = models.CharField(_("estado"), max_length=10, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(_("enviada el"), auto_now_add=True)
    answered_at = models.DateTimeField(_("respondida el"), null=True, blank=True)

    class Meta:
        verbose_name = _("invitación")
        verbose_name_plural = _("invitaciones")
        constraints = [
            models.UniqueConstraint(
                fields=["table", "recipient"], condition=models.Q(status="pending"), name="invitation_one_pending"
            ),
        ]
        indexes = [
            models.Index(fields=["recipient", "status"], name="invitation_recipient_idx"),
            models.Index(fields=["table", "status"], name="invitation_table_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.sender_id} → {self.recipient_id} @ {self.table_id} ({self.status})"


class Analysis(models.Model):
    """«Analizar la partida»: the bot's analysis of every decision of a finished game, worked out by the
    worker (``games.study.analyses``) round by round and kept: whoever looks next gets it at once.

    ``rounds`` holds each analysed round (``games.engine.analysis.RoundAnalysis.as_json``), in order, as the
    worker finishes them; ``summary`` the per-seat figures once every round is done."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("en cola")
        RUNNING = "running", _("analizando")
        DONE = "done", _("terminado")
        FAILED = "failed", _("fallido")

    table = models.OneToOneField(Table, on_delete=models.CASCADE, related_name="analysis", verbose_name=_("mesa"))
    status = models.CharField(_("estado"), max_length=10, choices=Status.choices, default=Status.QUEUED)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="analyses",
        verbose_name=_("pedido por"),
    )
    requested_at = models.DateTimeField(_("pedido el"), default=timezone.now)
    started_at = models.DateTimeField(_("empezado el"), null=True, blank=True)
    #: The worker's last sign of life on this analysis: a running one not heard from for a while is taken up
    #: again from its last finished round (its worker died).
    beat_at = models.DateTimeField(_("último latido"), null=True, blank=True)
    finished_at = models.DateTimeField(_("terminado el"), null=True, blank=True)
    seed = models.BigIntegerField(_("semilla"))
    worlds = models.PositiveSmallIntegerField(_("mundos por decisión"))
    rounds_total = models.PositiveSmallIntegerField(_("rondas"))
    rounds_done = models.PositiveSmallIntegerField(_("rondas analizadas"), default=0)
    rounds = models.JSONField(_("rondas analizadas"), default=list, blank=True)
    summary = models.JSONField(_("resumen"), null=True, blank=True)
    error = models.CharField(_("error"), max_length=200, blank=True, default="")

    class Meta:
        verbose_name = _("análisis")
        verbose_name_plural = _("análisis")
        indexes = [models.Index(fields=["status", "requested_at"], name="analysis_queue_idx")]

    def __str__(self) -> str:
        return gettext("Análisis de la mesa %(id)s (%(status)s)") % {
            "id": self.table_id,
            "status": self.get_status_display(),
        }

    @property
    def pending(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)


class Tournament(models.Model):
    """A tournament: staff create it (in the admin), players register (paying the entry fee, if any) until it
    starts; then ``games.tournaments`` seats them at tables of ``size`` (difícil bots in the empty places) and
    runs it to the end, when the prizes are paid out of the entries (``prizes``, percentages by final place).

    * Duplicate («duplicado»): one game; every table plays the same deals in the same seat order (dealt from
      ``seed``), and each seat's points on each deal are compared with the same seat at every other table
      (matchpoints: 1 for each player beaten, ½ for each tie).
    * Por puntos: ``games`` games; after each, the tables are formed again by the standings (the leaders
      together) and each seat scores position points at its table (1 for each player it beat, ½ for each tie).

    ``deals``: how many rounds of the rules' schedule each game plays (0: the whole game), spread over it
    (``games.tournaments.scoring.deal_rounds``)."""

    class Format(models.TextChoices):
        DUPLICATE = "duplicate", _("duplicado")
        POINTS = "points", _("por puntos")

    class Status(models.TextChoices):
        SCHEDULED = "scheduled", _("inscripción")
        PLAYING = "playing", _("en juego")
        FINISHED = "finished", _("terminado")
        CANCELLED = "cancelled", _("cancelado")

    name = models.CharField(_("nombre"), max_length=100)
    format = models.CharField(_("formato"), max_length=10, choices=Format.choices, default=Format.DUPLICATE)
    rules = models.CharField(_("reglas"), max_length=RULES_KEY_LENGTH, default="clasica")
    size = models.PositiveSmallIntegerField(
        _("jugadores por mesa"), default=4, choices=[(n, str(n)) for n in range(3, MOST_PLAYERS + 1)]
    )
    #: Places on offer (a multiple of ``size``): also the most tables a game can have, times ``size``.
    places = models.PositiveSmallIntegerField(_("plazas"), default=16)
    deals = models.PositiveSmallIntegerField(_("manos por partida"), default=0, help_text=_("0: la partida entera"))
    games = models.PositiveSmallIntegerField(_("partidas"), default=1, help_text=_("por puntos: cuántas partidas"))
    entry_fee = models.PositiveIntegerField(_("inscripción (fichas)"), default=0)
    #: The prize table: percentages of the entries for the 1st, 2nd… place among the people («50,30,20»).
    prizes = models.CharField(_("premios (%)"), max_length=100, default="50,30,20", blank=True)
    registration_opens_at = models.DateTimeField(_("inscripción desde"), default=timezone.now)
    starts_at = models.DateTimeField(_("empieza el"))
    #: Repeats: a new tournament like this one, this many days after it starts (0: once; 7: every week).
    repeat_days = models.PositiveSmallIntegerField(_("se repite cada (días)"), default=0)
    #: A game may last this many minutes past the first table's end before its late tables are hurried
    #: (every seat played by the bot at once) so as not to hold up the others.
    late_minutes = models.PositiveSmallIntegerField(_("espera máxima por una mesa (minutos)"), default=10)
    bid_seconds = models.PositiveSmallIntegerField(_("segundos para pedir"), default=30)
    card_seconds = models.PositiveSmallIntegerField(_("segundos para jugar carta"), default=30)
    #: A duplicate result this many points away from the deal's par is flagged for staff.
    flag_points = models.PositiveSmallIntegerField(_("aviso si se aleja del par (puntos)"), default=40)
    status = models.CharField(_("estado"), max_length=10, choices=Status.choices, default=Status.SCHEDULED)
    #: The deals of every table come from it (the same seed: the same cards, seat by seat).
    seed = models.BigIntegerField(_("semilla"), null=True, blank=True)
    #: The game being played (0 before the start).
    current_game = models.PositiveSmallIntegerField(_("partida en juego"), default=0)
    #: When the first table of the current game finished (the late limit counts from it).
    first_done_at = models.DateTimeField(_("primera mesa terminada el"), null=True, blank=True)
    finished_at = models.DateTimeField(_("terminado el"), null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tournaments_created",
        verbose_name=_("creado por"),
    )
    created_at = models.DateTimeField(_("creado el"), auto_now_add=True)
    #: The next one of a repeating tournament, once created.
    next = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="previous", verbose_name=_("siguiente")
    )
    #: Bumped on every change the tournament's page shows (registrations, tables, deals finished).
    seq = models.PositiveIntegerField(_("versión"), default=0)
    cancel_note = models.CharField(_("motivo de la cancelación"), max_length=200, blank=True, default="")
    #: Once finished: the final standings as shown (``games.tournaments.scoring.Standing.as_json``), kept.
    results = models.JSONField(_("clasificación final"), null=True, blank=True)
    #: Duplicate: difícil's points on each deal by seat (the par), worked out by the worker.
    par = models.JSONField(_("par de cada mano"), null=True, blank=True)

    class Meta:
        verbose_name = _("torneo")
        verbose_name_plural = _("torneos")
        ordering = ["-starts_at"]
        indexes = [
            # the sweeper's: the scheduled ones whose start has come, and those playing
            models.Index(fields=["status", "starts_at"], name="tournament_status_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(rules__in=RULES_KEYS), name="tournament_rules_known"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def game_rules(self) -> Rules:
        return rules_of(self.rules)

    def rules_name(self) -> str:
        return rules_name(self.game_rules)

    def prize_percentages(self) -> list[int]:
        """``prizes`` as numbers («50,30,20» → [50, 30, 20]); ValueError for anything else."""
        text = (self.prizes or "").replace(" ", "")
        if not text:
            return []
        values = [int(part) for part in text.split(",")]
        if any(v <= 0 for v in values) or sum(values) > 100:
            raise ValueError(text)
        return values


class Registration(models.Model):
    """A person's place in a tournament: the entry fee went into the tournament's pool when they registered,
    and comes back if they withdraw before the start or the tournament is cancelled."""

    tournament = models.ForeignKey(
        Tournament, on_delete=models.CASCADE, related_name="registrations", verbose_name=_("torneo")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="registrations", verbose_name=_("jugador")
    )
    registered_at = models.DateTimeField(_("inscrito el"), auto_now_add=True)
    #: The address they registered from: no two people of one address share a tournament table.
    address = models.GenericIPAddressField(_("dirección"), null=True, blank=True)
    #: Chips paid (the fee at the time): they come back if the person withdraws before the start (the
    #: registration is then deleted) or the tournament is cancelled.
    paid = models.PositiveIntegerField(_("pagado"), default=0)
    refunded = models.BooleanField(_("devuelto"), default=False)
    #: Once finished: final place among the people, points, and chips won.
    place = models.PositiveSmallIntegerField(_("puesto"), null=True, blank=True)
    score = models.FloatField(_("puntos"), null=True, blank=True)
    prize = models.PositiveIntegerField(_("premio"), default=0)

    class Meta:
        verbose_name = _("inscripción")
        verbose_name_plural = _("inscripciones")
        ordering = ["registered_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["tournament", "user"], name="registration_once")]

    def __str__(self) -> str:
        return f"{self.user} @ {self.tournament}"


class Flag(models.Model):
    """A duplicate result far from the deal's par, for staff to look at (fair play)."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="flags", verbose_name=_("torneo"))
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="+", verbose_name=_("mesa"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", verbose_name=_("jugador")
    )
    deal = models.PositiveSmallIntegerField(_("mano"))
    seat = models.PositiveSmallIntegerField(_("asiento"))
    points = models.IntegerField(_("puntos"))
    par = models.IntegerField(_("par"))
    reviewed = models.BooleanField(_("revisado"), default=False)

    class Meta:
        verbose_name = _("aviso de juego limpio")
        verbose_name_plural = _("avisos de juego limpio")
        constraints = [models.UniqueConstraint(fields=["table", "deal", "seat"], name="flag_once")]

    def __str__(self) -> str:
        return f"{self.user} {self.deal}: {self.points} / {self.par}"
