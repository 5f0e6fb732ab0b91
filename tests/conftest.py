"""Shared fixtures for the site tests (the engine's tests live in tests/engine/)."""

from collections.abc import Iterator

import pytest

PASSWORD = "cuarenta-bazas-2025"


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture
def player(django_user_model, password):
    return django_user_model.objects.create_user(username="marisa", password=password)


# CI replays the same Hypothesis examples every run (a red CI run must be reproducible);
# local runs keep exploring new ones.
import os  # noqa: E402

from hypothesis import settings as hypothesis_settings  # noqa: E402

hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


@pytest.fixture(autouse=True)
def fresh_rate_limits(settings, monkeypatch) -> None:
    """Each test counts its own failures: in services mode the counters live in Redis, shared by every
    test (and every run), so each test gets its own key prefix instead of a flushed cache.

    The windows are fixed (one minute from :00): a test's attempts could straddle the turn of a minute and
    start counting again halfway, so within a test the clock of the windows stands still."""
    import uuid

    from pocha_site import ratelimit

    settings.POCHA_RATELIMIT_PREFIX = f"rl-test-{uuid.uuid4().hex}"
    monkeypatch.setattr(ratelimit, "window_slot", lambda window: 0)


@pytest.fixture(autouse=True)
def no_table_pauses(settings) -> None:
    """The pauses that let people read a trick and a round's result are for people: the suite plays
    on at once (the pacing tests and the browser tests set them back)."""
    settings.POCHA_TRICK_PAUSE = 0
    settings.POCHA_ROUND_PAUSE = 0


@pytest.fixture(autouse=True)
def no_load_shedding(settings) -> None:
    """The suite's event loops run test code between awaits, which would read as lag: no process of the
    suite sheds load (the shedding tests turn it on)."""
    settings.POCHA_SHED_LOOP_LAG = 0
    settings.POCHA_SHED_DB_WAIT = 0
    settings.POCHA_SHED_CPU = 0
    settings.POCHA_SHED_MOVE_TIME = 0
    settings.POCHA_SHED_HTTP_WAIT = 0


@pytest.fixture(autouse=True)
def no_database_threads_left() -> Iterator[None]:
    """The socket path's database threads (PostgreSQL) close their connections after every test, so no
    session outlives it (a kept one blocks the next test's flush, and the test database's teardown)."""
    yield
    from games import hotpath, presence

    hotpath.shutdown()
    presence.close_beat_connection()  # and the presence beat's thread, which keeps its own
