"""How long a game lasts: its rounds (the engine's schedule) and about how many minutes, for the forms that open
a table and the lists that offer one.

The minutes are ``expected_seconds``: the server's own pauses (a round's result stays up ``POCHA_ROUND_PAUSE``
before the next deal, a completed trick ``POCHA_TRICK_PAUSE`` before the next is led) plus every other move at
the pace of a table of one person and bots (``POCHA_BOT_DELAY`` a bot's move, ``PERSON_MOVE_SECONDS`` the
person's).  Tie-break rounds (indias and se dobla, only when the lead is shared at the end) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from games.engine.presets import GameLength, Rules

#: A person's seconds for one move, on average over a game's bids, trump choices and cards: a bid or a real
#: choice of card takes a few seconds, a forced card (one suit to follow, one card left) about one.
PERSON_MOVE_SECONDS = 3.0


def expected_seconds(
    length: GameLength,
    players: int,
    *,
    round_pause: float,
    trick_pause: float,
    bot_delay: float,
    person_move: float = PERSON_MOVE_SECONDS,
) -> float:
    """Seconds a game of ``length`` at ``players`` seats takes, one person and the rest bots:

    (rounds − 1) × round_pause + leads × lead + (moves − leads) × move, where
    move = (person_move + (players − 1) × bot_delay) / players and
    lead = (trick_pause + person_move + (players − 1) × max(trick_pause, bot_delay)) / players.

    A round's result stays up ``round_pause`` before the next deal (not after the last round).  A move takes its
    seat's time, the average of one person's and ``players − 1`` bots'; a trick's lead comes once the trick
    before it has been shown ``trick_pause``: a bot's wait runs inside the pause, a person's clock starts after it.
    """
    move = (person_move + (players - 1) * bot_delay) / players
    lead = (trick_pause + person_move + (players - 1) * max(trick_pause, bot_delay)) / players
    return (length.rounds - 1) * round_pause + length.leads * lead + (length.moves - length.leads) * move


def rounded_minutes(seconds: float) -> int:
    """Minutes as a player reads an estimate: to the minute below 10, to 5 minutes above (never 0)."""
    minutes = seconds / 60
    if minutes < 10:
        return max(1, round(minutes))
    return 5 * round(minutes / 5)


@dataclass(frozen=True)
class Expected:
    """A game's rounds (tie-breaks aside) and about how many minutes it takes."""

    rounds: int
    minutes: int

    def __str__(self) -> str:
        rounds = ngettext("%(n)s ronda", "%(n)s rondas", self.rounds) % {"n": self.rounds}
        return _("%(rounds)s · unos %(minutes)s min") % {"rounds": rounds, "minutes": self.minutes}


def expected(rules: Rules, players: int) -> Expected:
    """The game ``rules`` plays at ``players`` seats, with this server's pauses (ValueError for a size the rules
    are not played by)."""
    length = rules.length(players)
    seconds = expected_seconds(
        length,
        players,
        round_pause=settings.POCHA_ROUND_PAUSE,
        trick_pause=settings.POCHA_TRICK_PAUSE,
        bot_delay=settings.POCHA_BOT_DELAY,
    )
    return Expected(length.rounds, rounded_minutes(seconds))
