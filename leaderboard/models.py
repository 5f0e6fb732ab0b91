"""Rankings: each player's net chips from finished quick games, per week, month and all time.

Why totals kept per period rather than an aggregation over the ledger at read time: a ranking page
must sort every player of a period by a sum.  Summing the ledger's entries (joined to their tables to
keep only quick games) on every page view costs more as the site's history grows, however it is
indexed; a row per (player, period) updated in the same transaction as the payout costs three small
upserts per seat when a game ends, and the page becomes an index scan of the top 100 on
``(period, start, -net, reached_at)`` plus one indexed count for the viewer's own position.
The ledger stays the source: ``games.read.rankings.rebuild_ranking_totals`` recomputes every row from it
and the finished games, and a test checks that the kept totals equal the recomputed ones.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class PeriodScore(models.Model):
    class Period(models.TextChoices):
        WEEK = "week", _("semana")
        MONTH = "month", _("mes")
        ALL = "all", _("siempre")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="period_scores", verbose_name=_("jugador")
    )
    period = models.CharField(_("periodo"), max_length=5, choices=Period.choices)
    #: The period's first day in Madrid (a Monday, a 1st, or 2000-01-01 for all time).
    start = models.DateField(_("desde"))
    #: Pots received minus stakes paid, in finished quick games of the period.
    net = models.BigIntegerField(_("fichas netas"), default=0)
    games = models.PositiveIntegerField(_("partidas"), default=0)
    wins = models.PositiveIntegerField(_("victorias"), default=0)
    #: When ``net`` last changed: of two equal scores, the earlier to reach it ranks higher.
    reached_at = models.DateTimeField(_("alcanzado"))
    #: The best position this player held in this period's ranking, measured whenever their score changed to
    #: above 0 (a place is claimed only while ahead: ``leaderboard.scores.record_game``).
    best_position = models.PositiveIntegerField(_("mejor puesto"), null=True, blank=True)

    class Meta:
        verbose_name = _("puntuación de un periodo")
        verbose_name_plural = _("puntuaciones por periodo")
        constraints = [models.UniqueConstraint(fields=["user", "period", "start"], name="score_one_per_period")]
        indexes = [models.Index(fields=["period", "start", "-net", "reached_at"], name="score_ranking_idx")]

    def __str__(self) -> str:
        return f"{self.user} {self.period} {self.start}: {self.net}"


#: The rule sets a skill level is kept for (``games.engine.presets``' presets; this app never imports the games).
SKILL_PRESETS = ("clasica", "indias", "se-dobla", "bazas")
#: The rule sets as players read them (the same words as ``games.models.PRESET_LABELS``).
SKILL_PRESET_LABELS = {
    "clasica": _("Clásica"),
    "indias": _("Indias, subastados y oros"),
    "se-dobla": _("Se dobla"),
    "bazas": _("Juego de las Bazas"),
}


class SkillRating(models.Model):
    """A player's skill («Nivel») at one rule set: an openskill Plackett–Luce rating (``mu``, ``sigma``), moved
    by ``leaderboard.skill.rate_game`` at the end of every rated game, and the level it shows (``level``,
    ``leaderboard.skill.level_of``), kept beside it so that the ranking reads an index.  Bots have none: they
    play at fixed ratings (``leaderboard.skill.BOT_RATINGS``)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="skill_ratings", verbose_name=_("jugador")
    )
    preset = models.CharField(_("reglas"), max_length=10, choices=list(SKILL_PRESET_LABELS.items()))
    mu = models.FloatField(_("habilidad media (μ)"))
    sigma = models.FloatField(_("incertidumbre (σ)"))
    #: What the player sees: ``leaderboard.skill.level_of(mu, sigma)``.
    level = models.IntegerField(_("nivel"))
    games = models.PositiveIntegerField(_("partidas puntuadas"), default=0)
    updated_at = models.DateTimeField(_("actualizado el"))

    class Meta:
        verbose_name = _("nivel de un jugador")
        verbose_name_plural = _("niveles de los jugadores")
        constraints = [
            models.UniqueConstraint(fields=["user", "preset"], name="skill_one_per_preset"),
            models.CheckConstraint(condition=models.Q(preset__in=SKILL_PRESETS), name="skill_preset_known"),
        ]
        indexes = [models.Index(fields=["preset", "-level", "user"], name="skill_ranking_idx")]

    def __str__(self) -> str:
        return f"{self.user} {self.preset}: {self.level}"


class SkillChange(models.Model):
    """What one rated game did to one player's level (one row per game and player): the level before and
    after, and the rating after.  The profile shows the last one; a second rating of the same game finds its
    rows taken (``skill_change_once``)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="skill_changes", verbose_name=_("jugador")
    )
    preset = models.CharField(_("reglas"), max_length=10, choices=list(SKILL_PRESET_LABELS.items()))
    table = models.ForeignKey(
        "games.Table", on_delete=models.PROTECT, related_name="skill_changes", verbose_name=_("mesa")
    )
    before = models.IntegerField(_("nivel antes"))
    after = models.IntegerField(_("nivel después"))
    mu = models.FloatField(_("habilidad media (μ)"))
    sigma = models.FloatField(_("incertidumbre (σ)"))
    created_at = models.DateTimeField(_("fecha"))

    class Meta:
        verbose_name = _("cambio de nivel")
        verbose_name_plural = _("cambios de nivel")
        constraints = [models.UniqueConstraint(fields=["table", "user"], name="skill_change_once")]
        indexes = [models.Index(fields=["user", "preset", "-created_at"], name="skill_change_user_idx")]

    def __str__(self) -> str:
        return f"{self.user} {self.preset} @ {self.table_id}: {self.before} → {self.after}"
