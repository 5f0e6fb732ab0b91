"""The skill level («Nivel»): one rating per player and rule set, from the openskill library's Plackett–Luce
model (Weng and Lin's Bayesian approximation), moved by the final places of every rated game.

Which games: every public quick game and every tournament game (never a private table, nor a practice
hand): ``games.table.actions.lifecycle.on_finish`` calls ``rate_game`` in the transaction of the game's last
move, with the places it settled the game with.  A seat whose person forfeited (they left, or the bot and the
clock made most of their decisions) is already ranked after every other there, so it is rated as last
whatever the bot scored with it; equal places are ties.  And its level never goes up: being rated last lowers
μ, but a seat tied on the last place with a stronger one gains μ, and every game shrinks σ (one more game
known), which alone raises μ − 3σ: three newcomers at a table whose every seat forfeited (all tied last,
nobody wins) would each go from 1000 to 1015.  For a forfeited seat the new μ is kept no higher than before,
and σ no narrower than keeps μ − 3σ where it was, so the shown level can only fall or stay (``_no_gain``);
where the model lowers it (as it does a seat alone on the last place) it is rated exactly as the model says.

The bots play at fixed ratings by level (``BOT_RATINGS``): their games count for the people at the table,
and the bots' levels are the anchors of the scale; a bot's rating is never stored nor moved.  The means are
fitted to the arena's full-game win rates at four players, Clásica (README, "Bots": normal won 45.6 % of the
games against three fácil, difícil 59.4 % against three normal and 86.2 % against three fácil).  Under
Plackett–Luce with the model's β = 25/6 and σ = 1 the means 17, 25 and 39 give 45.9 %, 63.1 % and 81.3 %.
σ = 1 (a new player's is 25/3): an anchor's game moves the people's ratings by what the anchor is known to be.

The level shown is one integer, a conservative estimate of the skill on a readable scale:

    level = 1000 + 40 · (μ − 3σ), rounded, within 0…3000

A new player (μ 25, σ 25/3) shows 1000; the bots show 1560 (fácil), 1880 (normal) and 2440 (difícil).  As a
player's games add up their σ shrinks, so their level rises towards 1000 + 40 · μ even with μ unchanged.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Q, Subquery
from openskill.models import PlackettLuce

from leaderboard.models import SKILL_PRESET_LABELS, SKILL_PRESETS, SkillChange, SkillRating

#: openskill's defaults: μ 25, σ 25/3, β 25/6, τ 25/300 (σ grows by τ before each game, so a level never
#: stops moving altogether).
MODEL = PlackettLuce()

#: The bots' fixed (μ, σ) by level (``games.engine.levels``' codes), at every rule set.
BOT_RATINGS: dict[str, tuple[float, float]] = {
    "facil": (17.0, 1.0),
    "normal": (25.0, 1.0),
    "dificil": (39.0, 1.0),
}

LEVEL_BASE = 1000
LEVEL_SCALE = 40
LEVEL_MAX = 3000

#: A player is listed in a rule set's «Nivel» ranking from this many rated games on.
RANKED_GAMES = 5


def level_of(mu: float, sigma: float) -> int:
    """The level a rating shows: 1000 + 40 · (μ − 3σ), rounded, within 0…3000."""
    return max(0, min(LEVEL_MAX, round(LEVEL_BASE + LEVEL_SCALE * (mu - 3 * sigma))))


#: A player's level before their first rated game at a rule set.
NEW_LEVEL = level_of(MODEL.mu, MODEL.sigma)
#: The level each bot shows, by the table's bot level.
BOT_LEVELS: dict[str, int] = {code: level_of(mu, sigma) for code, (mu, sigma) in BOT_RATINGS.items()}

#: One seat of a finished game: (the person's user id, or None for a bot; the bot's level, or None for a
#: person; the seat's final place, 1 the best, a shared place a tie).
Participant = tuple[int | None, str | None, int]


def levels(preset: str, user_ids: Iterable[int]) -> dict[int, int]:
    """The people's levels at ``preset`` (``NEW_LEVEL`` for one with no rated game there), in one query."""
    wanted = set(user_ids)
    found = dict(
        SkillRating.objects.filter(preset=preset, user_id__in=wanted).values_list("user_id", "level") if wanted else []
    )
    return {user_id: found.get(user_id, NEW_LEVEL) for user_id in wanted}


def _lock_ratings(preset: str, user_ids: list[int], when: datetime) -> dict[int, SkillRating]:
    """The people's rating rows at ``preset``, locked in user-id order until the transaction ends; the missing
    ones created at the new player's rating first."""

    def locked() -> dict[int, SkillRating]:
        rows = SkillRating.objects.select_for_update().filter(preset=preset, user_id__in=user_ids).order_by("user_id")
        return {row.user_id: row for row in rows}

    found = locked()
    missing = [user_id for user_id in user_ids if user_id not in found]
    if missing:
        SkillRating.objects.bulk_create(
            [
                SkillRating(
                    user_id=user_id,
                    preset=preset,
                    mu=MODEL.mu,
                    sigma=MODEL.sigma,
                    level=NEW_LEVEL,
                    games=0,
                    updated_at=when,
                )
                for user_id in missing
            ],
            ignore_conflicts=True,  # (created meanwhile by another game: locked below all the same)
        )
        found = locked()
    return found


def rate_game(
    preset: str,
    participants: Sequence[Participant],
    table_id: int,
    when: datetime,
    forfeited: Collection[int] = (),
) -> list[SkillChange]:
    """Rate one finished game: every seat a team of one at its rating (a person's own, a bot's fixed one by
    its level), ranked by its place (equal places tie), through Plackett–Luce; then store each person's new
    rating and a ``SkillChange``.  A bot's rating is neither stored nor moved.  ``forfeited``: the people whose
    seat forfeited (ranked last by the caller): their rating may fall, never rise (``_no_gain``).

    Runs inside the caller's transaction (the game's last move): the people's rows are locked in user-id
    order, so two games ending at once never wait on each other in a cycle.  A second call for the same table
    changes nothing (and returns no change).  Returns the changes written."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("rate_game runs inside the transaction that finishes the game")
    if preset not in SKILL_PRESETS:
        raise ValueError(f"not a rule set with a level: {preset!r}")
    people = [user_id for user_id, _bot, _place in participants if user_id is not None]
    if len(set(people)) != len(people):
        raise ValueError(f"a person in two seats: {participants!r}")
    for user_id, bot, _place in participants:
        if user_id is None and bot not in BOT_RATINGS:
            raise ValueError(f"a seat that is neither a person nor a bot of a known level: {user_id!r}, {bot!r}")
    if not people or len(participants) < 2:
        return []
    rows = _lock_ratings(preset, sorted(people), when)
    if SkillChange.objects.filter(table_id=table_id).exists():
        return []  # rated already
    teams = []
    for user_id, bot, _place in participants:
        if user_id is not None:
            teams.append([MODEL.rating(mu=rows[user_id].mu, sigma=rows[user_id].sigma)])
        else:
            mu, sigma = BOT_RATINGS[str(bot)]
            teams.append([MODEL.rating(mu=mu, sigma=sigma)])
    rated = MODEL.rate(teams, ranks=[float(place) for _user, _bot, place in participants])
    changes = []
    for (user_id, _bot, _place), (after,) in zip(participants, rated):
        if user_id is None:
            continue  # a bot: its rating is the anchor's, for ever
        row = rows[user_id]
        before = row.level
        mu, sigma = float(after.mu), float(after.sigma)
        if user_id in forfeited:
            mu, sigma = _no_gain(row.mu, row.sigma, mu, sigma)
        row.mu, row.sigma = mu, sigma
        row.level = level_of(row.mu, row.sigma)
        row.games += 1
        row.updated_at = when
        changes.append(
            SkillChange(
                user_id=user_id,
                preset=preset,
                table_id=table_id,
                before=before,
                after=row.level,
                mu=row.mu,
                sigma=row.sigma,
                created_at=when,
            )
        )
    SkillRating.objects.bulk_update(
        [rows[user_id] for user_id in sorted(people)], ["mu", "sigma", "level", "games", "updated_at"]
    )
    SkillChange.objects.bulk_create(changes)
    return changes


def _no_gain(mu: float, sigma: float, new_mu: float, new_sigma: float) -> tuple[float, float]:
    """A forfeited seat's rating after the game: Plackett–Luce's, but with μ no higher than before, and μ − 3σ
    (the level shown) no higher than before either: where it would rise, σ is kept just wide enough to hold it
    where it was.  A seat alone on the last place is rated exactly as the model says (it never gains)."""
    new_mu = min(mu, new_mu)
    floor = mu - 3 * sigma
    if new_mu - 3 * new_sigma > floor:
        new_sigma = (new_mu - floor) / 3  # (μ' − 3σ' = μ − 3σ: the level it showed)
    return new_mu, new_sigma


def player_levels(user_id: int) -> list[dict[str, Any]]:
    """A player's level at each rule set they have rated games in, in the rule sets' order, with the last
    change and its game (one query)."""
    last = SkillChange.objects.filter(user_id=OuterRef("user_id"), preset=OuterRef("preset")).order_by(
        "-created_at", "-pk"
    )
    rows = (
        SkillRating.objects.filter(user_id=user_id, games__gt=0)
        .annotate(
            last_before=Subquery(last.values("before")[:1]),
            last_after=Subquery(last.values("after")[:1]),
            last_table=Subquery(last.values("table_id")[:1]),
        )
        .values("preset", "level", "games", "last_before", "last_after", "last_table")
    )
    by_preset = {row["preset"]: row for row in rows}
    shown = []
    for preset in SKILL_PRESETS:
        row = by_preset.get(preset)
        if row is None:
            continue
        change = None if row["last_after"] is None else row["last_after"] - row["last_before"]
        shown.append(
            {
                "preset": preset,
                "label": SKILL_PRESET_LABELS[preset],
                "level": row["level"],
                "games": row["games"],
                "ranked": row["games"] >= RANKED_GAMES,
                "change": change,
                "change_text": None if change is None else signed(change),
                "table_id": row["last_table"],
            }
        )
    return shown


def signed(change: int) -> str:
    """A level's change as players read it: «+34», «−12» (a true minus sign), «±0»."""
    if change > 0:
        return f"+{change}"
    if change < 0:
        return f"−{-change}"
    return "±0"


def ranked(preset: str) -> Any:
    """The players listed in ``preset``'s «Nivel» ranking, best first (the level, then the older account)."""
    return SkillRating.objects.filter(preset=preset, games__gte=RANKED_GAMES).order_by("-level", "user_id")


def position_of(row: SkillRating) -> int:
    """``row``'s place in its rule set's ranking (it has ``RANKED_GAMES`` games at least): 1 + how many are
    listed before it."""
    return (
        SkillRating.objects.filter(preset=row.preset, games__gte=RANKED_GAMES)
        .filter(Q(level__gt=row.level) | Q(level=row.level, user_id__lt=row.user_id))
        .count()
        + 1
    )
