"""A pytest plugin for the tiers (``make test-*``: ``-p support.ordering --no-loadscope-reorder``): the longest
modules are collected first, so that pytest-xdist hands them out first.

With ``--dist loadfile`` a module runs whole on one worker.  pytest-xdist's own order puts the modules with
the most tests first, which says little about time: a module of two Hypothesis tests (five minutes against
PostgreSQL) came last, and its tier ended with one worker busy and the others idle for minutes.  Here the
modules below come first, longest first (the figures: CI's «each tier's slowest tests», on two cores with
both lanes running); the others follow in pytest-xdist's own order.  A module missing from the list,
or listed and gone, changes nothing but the order.
"""

from __future__ import annotations

from collections import Counter

import pytest

#: Modules (under tests/) in the order they should start, the longest first.
LONGEST_FIRST = (
    "test_tournament_ledger.py",  # Hypothesis: 310 s in services, 180 s in slow
    "browser/test_layout.py",  # the layout walk at both sizes: 325 s
    "live/test_secrecy_presets.py",  # 220 s in services
    "test_chips_property.py",  # Hypothesis: 175 s in services, 70 s in slow
    "browser/test_house_rules_in_browser.py",  # 180 s
    "browser/test_card_room.py",  # 130 s
    "browser/test_ranking_and_replay.py",  # 110 to 130 s
    "browser/test_private_table.py",  # 105 s
    "test_url_walk.py",  # 75 s in slow
    "engine/test_playouts.py",
    "live/test_bot_levels.py",
    "live/test_secrecy.py",
    "live/test_restart.py",
    "live/test_chips_restart.py",
    "browser/test_tournament_in_browser.py",
    "browser/test_analysis_layout.py",
)
RANK = {name: rank for rank, name in enumerate(LONGEST_FIRST)}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = config.rootpath / "tests"
    counts = Counter(item.path for item in items)

    def rank(item: pytest.Item) -> tuple[int, int]:
        try:
            name = item.path.relative_to(tests).as_posix()
        except ValueError:
            name = ""
        # the others as pytest-xdist would order them (the most tests first): a tier with none of the
        # modules above runs in the order it always did
        return RANK.get(name, len(RANK)), -counts[item.path]

    items.sort(key=rank)  # stable: each module's tests keep their order, and modules of one count theirs
