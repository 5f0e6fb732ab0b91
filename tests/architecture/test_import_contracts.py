"""The packages' layers hold (``.importlinter``, run by ``make lint``), and the contracts really catch what
they are for: the same check on a copy of the code with one import planted fails, naming the contract."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("games", "accounts", "leaderboard", "pocha_site")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(tree / ".importlinter")],
        cwd=tree,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the project's packages and contracts (no tests, no migrations' data)."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def plant(path: Path, line: str) -> None:
    """Add an import at the end of a module: a function-level import counts as much as a top-level one."""
    text = path.read_text()
    path.write_text(text + f"\n\ndef _planted() -> None:\n    {line}  # noqa\n")


def test_the_project_keeps_its_contracts(tree: Path) -> None:
    result = lint_imports(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout.lower().replace("0 broken", "")


def test_an_import_of_django_in_the_engine_fails(tree: Path) -> None:
    plant(tree / "games" / "engine" / "cards.py", "from django.conf import settings")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "The rules engine is pure" in result.stdout
    assert "games.engine.cards -> django" in result.stdout


def test_a_circle_between_two_kinds_of_write_fails(tree: Path) -> None:
    # play.py already imports lifecycle.py (a finished game is settled there): the other way is a circle.
    plant(tree / "games" / "table" / "actions" / "lifecycle.py", "from games.table.actions.play import apply")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "games.table.actions.lifecycle -> games.table.actions.play" in result.stdout


def test_a_circle_between_two_live_modules_fails(tree: Path) -> None:
    # timers.py imports tasks.py (a bot's timer is a Celery task in services mode): the other way is a circle.
    plant(tree / "games" / "live" / "tasks.py", "from games.live import timers")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "No circles between sibling modules" in result.stdout


def test_accounts_importing_the_live_transport_fails(tree: Path) -> None:
    plant(tree / "accounts" / "views.py", "from games.live import push")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "Accounts and the rankings never import the games" in result.stdout
