"""The examples in the engine's docstrings run and hold."""

import doctest
import importlib

import pytest

MODULES = [
    "games.engine",
    "games.engine.cards",
    "games.engine.errors",
    "games.engine.schedule",
    "games.engine.presets",
    "games.engine.rules",
    "games.engine.state",
    "games.engine.actions",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, verbose=False)
    assert attempted > 0, f"{name} has no examples"
    assert failed == 0
