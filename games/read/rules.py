"""What the rules page (``/reglas/``) shows that comes from the engine, so that the page cannot tell a
different game from the one the server enforces: each table size's rounds, and the ranks taken out of the
deck.  The page's sentences are in ``templates/games/rules.html``."""

from __future__ import annotations

from typing import Any

from games.engine.cards import REMOVED_RANKS
from games.engine.schedule import MAX_CARDS, MAX_PLAYERS, MIN_PLAYERS, schedule


def rules_context() -> dict[str, Any]:
    """The classic rules' numbers, per table size (3 to 6 players)."""
    sizes = []
    for players in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        rounds = schedule(players)
        sizes.append(
            {
                "players": players,
                "auctions": sum(1 for r in rounds if r.is_auction),
                "rounds": len(rounds),
                "removed": sorted(REMOVED_RANKS[players]),
            }
        )
    return {"sizes": sizes, "max_cards": MAX_CARDS}
