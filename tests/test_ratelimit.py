"""The site's one rate limiter, ``pocha_site.ratelimit``: fixed windows, where a count holds for the rest of
its window and starts again in the next one (the suite's other tests stand the windows' clock still:
``conftest``); ``blocked`` and ``hit`` for what counts after the fact; ``take`` for a count per person that
refuses past its limit (table talk)."""

from types import SimpleNamespace

from pocha_site import ratelimit

#: The module's own function, taken before the suite's fixture stands it still.
REAL_WINDOW_SLOT = ratelimit.window_slot


def test_a_count_holds_to_the_end_of_its_window_and_starts_again_in_the_next(monkeypatch) -> None:
    now = [60_000_000.0 + 5]  # five seconds into a minute
    monkeypatch.setattr(ratelimit, "window_slot", REAL_WINDOW_SLOT)
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: now[0]))
    for _ in range(3):
        ratelimit.hit("prueba", ["10.0.0.1"], window=60)
    assert ratelimit.blocked("prueba", ["10.0.0.1"], limit=3, window=60)
    assert not ratelimit.blocked("prueba", ["10.0.0.2"], limit=3, window=60)
    assert not ratelimit.blocked("prueba", ["10.0.0.1"], limit=4, window=60)
    now[0] += 54  # 59 s into the same minute
    assert ratelimit.blocked("prueba", ["10.0.0.1"], limit=3, window=60)
    now[0] += 1  # the next minute
    assert not ratelimit.blocked("prueba", ["10.0.0.1"], limit=3, window=60)
    ratelimit.hit("prueba", ["10.0.0.1"], window=60)
    assert ratelimit.blocked("prueba", ["10.0.0.1"], limit=1, window=60)
    assert not ratelimit.blocked("prueba", ["10.0.0.1"], limit=2, window=60)


def test_the_suite_stands_the_windows_clock_still() -> None:
    assert ratelimit.window_slot(60) == ratelimit.window_slot(1) == 0
    assert REAL_WINDOW_SLOT(60) != 0


def test_hit_counts_each_identity_and_says_the_counts() -> None:
    assert ratelimit.hit("prueba", ["user:1", "addr:10.0.0.1"]) == [1, 1]
    assert ratelimit.hit("prueba", ["user:1", "", "addr:10.0.0.2"]) == [2, 1]  # an empty identity is none
    assert ratelimit.count("prueba", "user:1") == 2
    assert ratelimit.count("otra", "user:1") == 0  # scopes are apart


def test_take_refuses_past_the_limit_and_refusals_count(monkeypatch) -> None:
    """Table talk: N per window per person; the (N+1)th is refused, and so is every one after it until the
    next window, however hard the person hammers."""
    now = [120_000_000.0]
    monkeypatch.setattr(ratelimit, "window_slot", REAL_WINDOW_SLOT)
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: now[0]))
    said = [ratelimit.take("talk", "user:7", 3, 10) for _ in range(5)]
    assert said == [True, True, True, False, False]
    assert ratelimit.take("talk", "user:8", 3, 10)  # per person
    assert ratelimit.count("talk", "user:7", 10) == 5
    now[0] += 10  # the next window
    assert ratelimit.take("talk", "user:7", 3, 10)


def test_any_identity_is_safe_in_a_cache_key(settings) -> None:
    """What a person typed (a name, an e-mail) or a proxy reported may hold anything: such an identity is
    hashed into the key, a plain one is kept readable."""
    for ident in ["fantasma con espacios", "a\x00b", "ñ" * 400, "x" * 101]:
        key = ratelimit._key("prueba", ident, 60)
        assert key.startswith(f"{settings.POCHA_RATELIMIT_PREFIX}:prueba:") and key.isascii() and len(key) < 150
        ratelimit.hit("prueba", [ident])
        assert ratelimit.count("prueba", ident) == 1
    assert ratelimit._key("prueba", "2001:db8::7", 60).endswith(":prueba:2001:db8::7:0")
    assert ratelimit.hashed(" Lola ") == ratelimit.hashed("lola")
