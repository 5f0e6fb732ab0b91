"""The garbage collector of the server processes (``pocha_site.asgi.tune_collector``,
``POCHA_GC_THRESHOLD``): what it is set to, and a clear error for a setting it cannot take."""

import gc
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from pocha_site.settings import BASE_DIR, gc_threshold


@pytest.fixture
def collector_restored() -> Iterator[None]:
    threshold = gc.get_threshold()
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def test_the_default_collects_the_youngest_objects_every_fifty_thousand() -> None:
    assert gc_threshold({}, "POCHA_GC_THRESHOLD", "50000,10,10") == (50000, 10, 10)
    assert gc_threshold({"POCHA_GC_THRESHOLD": " "}, "POCHA_GC_THRESHOLD", "50000,10,10") == (50000, 10, 10)
    assert gc_threshold({"POCHA_GC_THRESHOLD": "700,10,10"}, "POCHA_GC_THRESHOLD", "50000,10,10") == (700, 10, 10)
    assert gc_threshold({"POCHA_GC_THRESHOLD": "20000"}, "POCHA_GC_THRESHOLD", "50000,10,10") == (20000,)


@pytest.mark.parametrize("text", ["abc", "1,2,3,4", "-1", "50000,,10", "5e4"])
def test_a_threshold_the_collector_cannot_take_stops_the_start_with_its_name(text: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="POCHA_GC_THRESHOLD"):
        gc_threshold({"POCHA_GC_THRESHOLD": text}, "POCHA_GC_THRESHOLD", "50000,10,10")


def test_the_server_process_sets_the_collector_and_freezes_what_it_has_loaded(collector_restored: None) -> None:
    from pocha_site import asgi

    assert settings.POCHA_GC_THRESHOLD == (50000, 10, 10)
    gc.set_threshold(700, 10, 10)
    frozen = gc.get_freeze_count()
    kept = [[] for _ in range(1000)]  # new objects, loaded "before start-up"
    asgi.tune_collector((12345, 6, 7))
    assert gc.get_threshold() == (12345, 6, 7)
    assert gc.get_freeze_count() >= frozen + len(kept)


def _start_a_server_process(threshold: str | None) -> subprocess.CompletedProcess[str]:
    """Import the ASGI application in a fresh interpreter, as Daphne does at start, and print the
    collector's thresholds and how many objects start-up left frozen."""
    script = "import gc, pocha_site.asgi; print(list(gc.get_threshold()), gc.get_freeze_count())"
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "POCHA_GC_THRESHOLD"}}
    env["DJANGO_SETTINGS_MODULE"] = "pocha_site.settings"
    if threshold is not None:
        env["POCHA_GC_THRESHOLD"] = threshold
    return subprocess.run([sys.executable, "-c", script], cwd=BASE_DIR, env=env, capture_output=True, text=True)


def test_a_server_process_starts_with_the_thresholds_of_its_environment() -> None:
    default = _start_a_server_process(None)
    assert default.returncode == 0, default.stderr
    thresholds, frozen = default.stdout.strip().rsplit(" ", 1)
    assert thresholds == "[50000, 10, 10]"
    assert int(frozen) > 10_000  # Django, the apps and the engine, kept out of every pass
    chosen = _start_a_server_process("40000,9,8")
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.stdout.startswith("[40000, 9, 8] ")


def test_a_server_process_refuses_to_start_with_a_threshold_it_cannot_take() -> None:
    started = _start_a_server_process("lots")
    assert started.returncode != 0
    assert "POCHA_GC_THRESHOLD must be one to three whole numbers" in started.stderr
