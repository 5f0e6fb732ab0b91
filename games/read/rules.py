"""What the rules pages show that comes from the engine, so that a page cannot tell a different game from the
one the server enforces: for Clásica (``/reglas/``) each table size's rounds and the ranks taken out of the
deck; for the other presets (``/reglas/<preset>/``, ``preset_rules_context``) each table size's biggest hand,
rounds and cards taken out, se dobla's schedules, and the examples' scores.  The pages' sentences are in
``templates/games/rules.html`` and ``rules_preset.html``."""

from __future__ import annotations

from typing import Any

from games.engine.cards import ALL_CARDS, FRENCH_CARDS, REMOVED_RANKS, Card, Suit
from games.engine.presets import PLAYERS, PRESETS, SCHEDULES, Rules
from games.engine.rules import points
from games.engine.schedule import MAX_CARDS, MAX_PLAYERS, MIN_PLAYERS, RoundKind, RoundSpec, schedule
from games.models import PRESET_LABELS, SCHEDULE_LABELS
from games.read.board import card_ctx


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
    return {"sizes": sizes, "max_cards": MAX_CARDS, "presets": other_presets()}


# -- the house rules' pages (``/reglas/<preset>/``) ------------------------------------------------

#: The table size every preset page's examples are worked for (VARIANTS.md's examples are for 4 too).
EXAMPLE_PLAYERS = 4


def other_presets() -> list[dict[str, Any]]:
    """The presets that have a page of their own (all but Clásica, which is ``/reglas/``), with their names."""
    return [{"preset": p, "name": PRESET_LABELS[p]} for p in PRESETS if p != "clasica"]


def _card_name(card: Card, language: str) -> str:
    return card.name_es if language.startswith("es") else card.name_en


def _hands(rounds: tuple[RoundSpec, ...]) -> str:
    """The cards of each round in a row, a run of equal rounds once with its count: «1×4, 2, 3, 4×4, 3, 2, 1»."""
    runs: list[list[int]] = []
    for spec in rounds:
        if runs and runs[-1][0] == spec.cards:
            runs[-1][1] += 1
        else:
            runs.append([spec.cards, 1])
    return ", ".join(str(cards) if times == 1 else f"{cards}×{times}" for cards, times in runs)


def _kinds(rounds: tuple[RoundSpec, ...]) -> dict[str, int]:
    counts = dict.fromkeys((k.value for k in RoundKind), 0)
    for spec in rounds:
        counts[spec.kind.value] += 1
    return counts


def preset_rules_context(preset: str, language: str) -> dict[str, Any]:
    """What ``templates/games/rules_preset.html`` shows of a preset other than Clásica, every number from the
    engine (``games.engine.presets``): per table size the biggest hand, the rounds and the cards taken out,
    and the examples worked for ``EXAMPLE_PLAYERS``.  KeyError for a preset without a page."""
    if preset not in PRESETS or preset == "clasica":
        raise KeyError(preset)
    rules = Rules.of(preset)
    low, high = PLAYERS[preset]
    n = EXAMPLE_PLAYERS
    sizes = []
    for players in range(low, high + 1):
        rounds = rules.schedule(players)
        biggest = rules.max_cards(players)
        sizes.append(
            {
                "players": players,
                "max_cards": biggest,
                "rounds": len(rounds),
                "removed": [_card_name(c, language) for c in rules.removed(players)],
                "left_over": len(rules.deck(players)) - players * biggest,
                **_kinds(rounds),
            }
        )
    example = rules.schedule(n)
    normal = tuple(spec for spec in example if spec.kind is RoundKind.NORMAL)
    ctx: dict[str, Any] = {
        "preset": preset,
        "name": PRESET_LABELS[preset],
        "low": low,
        "high": high,
        "sizes": sizes,
        "n": n,
        "example": {
            "rounds": len(example),
            "max_cards": rules.max_cards(n),
            "hands": _hands(normal),
            "normal": len(normal),
            **_kinds(example),
        },
        "deck": len(FRENCH_CARDS if preset == "bazas" else ALL_CARDS),
        "tie_breaks": rules.tie_breaks,
        "presets": other_presets(),
    }
    # the examples' scores: a bid of 2 made, and missed by taking 4
    ctx.update(bid=2, over=4, points=points(2, 2), missed=points(2, 4))
    if preset == "indias":
        ctx["copas"] = rules.multiplier(n, None, Suit.COPAS)
        ctx["oros"] = rules.multiplier(n, None, Suit.OROS)
        ctx["points_oros"] = ctx["points"] * ctx["oros"]
        ctx["removal"] = [_card_name(Card.parse(c), language) for c in _removal_order(rules)]
    elif preset == "se-dobla":
        specs = [spec for players in range(low, high + 1) for spec in rules.schedule(players)]
        ctx["doubles_from"] = min(spec.cards for spec in specs if rules.doubles(spec))
        for size in sizes:
            size["schedule_rounds"] = [len(Rules.of(preset, schedule=s).schedule(size["players"])) for s in SCHEDULES]
        ctx["schedules"] = [
            {
                "name": SCHEDULE_LABELS[name],
                "schedule": name,
                "example": len(Rules.of(preset, schedule=name).schedule(n)),
                "hands": _hands(Rules.of(preset, schedule=name).schedule(n)),
            }
            for name in SCHEDULES
        ]
        # a made contract of all the tricks, and a miss: both ×2 when one player wins every trick
        cards = ctx["doubles_from"] + 1
        ctx["double_made"] = {"cards": cards, "points": points(cards, cards), "doubled": 2 * points(cards, cards)}
        ctx["double_missed"] = {"bid": cards - 2, "points": points(cards - 2, cards)}
        ctx["double_missed"]["doubled"] = 2 * ctx["double_missed"]["points"]
    else:
        ctx["biggest_deal"] = high * rules.max_cards(high)
        ctx["first_cards"] = example[0].cards
        hearts = sorted((c for c in FRENCH_CARDS if c.suit is Suit.CORAZONES), key=lambda c: -c.strength)
        ctx["order"] = [{"name": _card_name(c, language), "face": card_ctx(c, language)["face"]} for c in hearts]
    return ctx


def _removal_order(rules: Rules) -> list[str]:
    """Indias: the order the cards go out of the deck, as many as a table needs (the most a table takes out)."""
    most = max((rules.removed(p) for p in range(PLAYERS[rules.preset][0], PLAYERS[rules.preset][1] + 1)), key=len)
    return [str(c) for c in most]
