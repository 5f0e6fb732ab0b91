"""The garbage collector of the server processes (``pocha_site.asgi.tune_collector``,
``POCHA_GC_THRESHOLD``): what it is set to, and a clear error for a setting it cannot take."""

import gc
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from pocha_site.settings import gc_threshold


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
