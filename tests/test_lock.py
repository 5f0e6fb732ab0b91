"""requirements.lock pins every dependency pyproject.toml names, at a version inside its range, with hashes:
`make venv` installs from the lock alone, so a range changed without `make lock` must fail here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\]+)", re.MULTILINE)


def pins() -> dict[str, str]:
    text = (ROOT / "requirements.lock").read_text()
    return {canonicalize_name(name): version for name, version in PIN.findall(text)}


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        names.extend(extra)
    return [Requirement(name) for name in names]


def test_every_declared_dependency_is_pinned_inside_its_range():
    pinned = pins()
    assert len(pinned) > 20
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{requirement.name} is not in requirements.lock: run `make lock`"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"requirements.lock pins {name}=={pinned[name]}, outside {requirement}: run `make lock`"
        )


def test_every_pin_carries_a_hash():
    text = (ROOT / "requirements.lock").read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 1)[1])
    pinned_blocks = [block for block in blocks if PIN.match(block)]
    assert len(pinned_blocks) == len(pins())
    assert all("--hash=sha256:" in block for block in pinned_blocks)
