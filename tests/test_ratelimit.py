"""The fixed windows of ``pocha_site.ratelimit``: a count holds for the rest of its window and starts
again in the next one (the suite's other tests stand the windows' clock still: ``conftest``)."""

from types import SimpleNamespace

from pocha_site import ratelimit

#: The module's own function, taken before the suite's fixture stands it still.
REAL_WINDOW_SLOT = ratelimit.window_slot


def test_a_count_holds_to_the_end_of_its_window_and_starts_again_in_the_next(monkeypatch) -> None:
    now = [60_000_000.0 + 5]  # five seconds into a minute
    monkeypatch.setattr(ratelimit, "window_slot", REAL_WINDOW_SLOT)
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: now[0]))
    for _ in range(3):
        ratelimit.fail("prueba", ["10.0.0.1"], window=60)
    assert ratelimit.blocked("prueba", ["10.0.0.1"], limit=3, window=60)
    assert not ratelimit.blocked("prueba", ["10.0.0.2"], limit=3, window=60)
    assert not ratelimit.blocked("prueba", ["10.0.0.1"], limit=4, window=60)
    now[0] += 54  # 59 s into the same minute
    assert ratelimit.blocked("prueba", ["10.0.0.1"], limit=3, window=60)
    now[0] += 1  # the next minute
    assert not ratelimit.blocked("prueba", ["10.0.0.1"], limit=3, window=60)
    ratelimit.fail("prueba", ["10.0.0.1"], window=60)
    assert ratelimit.blocked("prueba", ["10.0.0.1"], limit=1, window=60)
    assert not ratelimit.blocked("prueba", ["10.0.0.1"], limit=2, window=60)


def test_the_suite_stands_the_windows_clock_still() -> None:
    assert ratelimit.window_slot(60) == ratelimit.window_slot(1) == 0
    assert REAL_WINDOW_SLOT(60) != 0
