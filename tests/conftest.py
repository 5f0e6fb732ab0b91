"""Shared fixtures for the site tests (the engine's tests live in tests/engine/), and the suite's tiers.

The tiers are pytest markers given here by directory (``pytest_collection_modifyitems``; registered in
pyproject.toml), which the ``make`` targets select:

* ``engine``: tests/engine, the rules engine (standard library only);
* ``live``: tests/live, tables driven through the real consumer, sockets and database;
* ``browser``: tests/browser, Playwright driving Debian's Chromium against a real server;
* ``faults``: tests/faults, a supervised services-mode stack with faults done to it;
* ``services``: the test reaches the database or Redis, so ``make test-services`` runs it again against
  PostgreSQL and Redis (the live, leaderboard and fault tests, any test with database access, and
  ``REDIS_MODULES``); the others (the engine, the browser tests, whose server runs on its own SQLite file
  in any mode, checks of templates, static files and code) run once;
* ``services_only``: needs PostgreSQL and Redis (the fault tests, tests named ``test_services_*``, tests
  skipped as "PostgreSQL only"): skipped otherwise, and left out of the embedded tiers;
* ``slow``: the long checks outside those directories (``SLOW_MODULES``: random playouts, fuzzing,
  property-based and whole-game runs, fresh interpreters), left out of ``make test``;
* ``smoke``: ``make test``'s pick from the tiers above, one of each kind (a whole game through the real
  socket, secrecy, a game in the browser), put on the test itself.
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import workers

PASSWORD = "cuarenta-bazas-2025"
TESTS = Path(__file__).resolve().parent

# Under pytest-xdist each worker gets a Redis database of its own (services mode): before any test runs.
workers.isolate()

#: tests/<directory>/ -> its tier's marker.
DIRECTORY_TIERS = {"engine": "engine", "live": "live", "browser": "browser", "faults": "faults"}
#: Directories whose tests all reach the database or Redis.
SERVICES_DIRECTORIES = {"live", "leaderboard", "faults"}
#: Directories whose tests never reach the suite's database or Redis.
ONCE_DIRECTORIES = {"engine", "browser", "architecture"}
#: Modules whose tests talk only to servers of their own on SQLite files (``support.server.sqlite_site``),
#: whatever the suite's database: they run once.
ONCE_MODULES = {"live/test_restart.py", "live/test_chips_restart.py", "live/test_analysis_restart.py"}
#: Modules that reach Redis (the cache, the channel layer) in services mode without a database.
REDIS_MODULES = {"test_ratelimit.py", "test_redis_cancel.py"}
#: Fixtures that give a test the database (or a client whose requests use it).
DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
    "client",
    "async_client",
    "admin_client",
    "admin_user",
    "django_user_model",
    "live_server",
}
#: Modules of long checks (tens of seconds each on two cores), in the ``slow`` tier (``make test`` leaves them
#: out; their kinds stay in it through quicker tests: the engine's rules, the ledger, the site's pages).
SLOW_MODULES = {
    "engine/test_playouts.py",  # random playouts of whole rounds, every invariant checked at every step
    "engine/test_preset_playouts.py",  # random whole games of every preset and size, against the reference
    "engine/test_preset_bot_games.py",  # the search bots over whole games of every preset, option and size
    "engine/test_broken_records.py",  # mutated records replayed
    "engine/test_arena.py",  # bots against bots over whole games, and through the protocol
    "engine/test_bot_protocol.py",  # bot programs answering over pipes for whole games
    "engine/test_cli.py",  # the command line in fresh interpreters
    "test_chips_property.py",  # the ledger under random sequences of everything people do (Hypothesis)
    "test_tournament_ledger.py",  # tournaments' fees, refunds and prizes under random sequences (Hypothesis)
    "test_url_walk.py",  # every URL of the site with every kind of bad value
    "test_collector.py",  # server processes started in fresh interpreters
    "leaderboard/test_ranking_game.py",  # whole staked games, then the rankings
    "test_move_log_migration.py",  # stored games carried over by the migration, in fresh interpreters
    # (test_load_tool.py marks its tests against a real server ``slow`` one by one: those of its pure
    # functions stay in ``make test``)
}
#: Seconds a test of a tier may take before it fails (pyproject.toml's ``timeout`` for the others): the
#: fault tests start a whole stack and play a whole game under a fault.
TIER_TIMEOUTS = {"faults": 900, "browser": 600}


def touches_services(item: pytest.Item, directory: str | None) -> bool:
    if "/".join(item.path.relative_to(TESTS).parts) in ONCE_MODULES:
        return False
    if directory in SERVICES_DIRECTORIES:
        return True
    if directory in ONCE_DIRECTORIES:
        return False
    return (
        item.get_closest_marker("django_db") is not None
        or bool(DATABASE_FIXTURES.intersection(getattr(item, "fixturenames", ())))
        or item.path.name in REDIS_MODULES
    )


def needs_services(item: pytest.Item, directory: str | None) -> bool:
    """Runs only against PostgreSQL and Redis (skipped otherwise): the fault tests, tests named
    ``test_services_*``, and tests skipped unless the database is PostgreSQL."""
    return (
        directory == "faults"
        or item.name.startswith("test_services_")
        or any("PostgreSQL only" in str(mark.kwargs.get("reason", "")) for mark in item.iter_markers("skipif"))
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        relative = item.path.relative_to(TESTS).parts
        directory = relative[0] if len(relative) > 1 else None
        tier = DIRECTORY_TIERS.get(directory or "")
        if tier:
            item.add_marker(tier)
        if "/".join(relative) in SLOW_MODULES:
            item.add_marker("slow")
        if touches_services(item, directory):
            item.add_marker("services")
        if needs_services(item, directory):
            item.add_marker("services_only")
        if tier in TIER_TIMEOUTS and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TIER_TIMEOUTS[tier]))
        if directory == "faults":
            # one stack for the package: every fault test on the same worker (``--dist loadgroup``)
            item.add_marker(pytest.mark.xdist_group("faults-stack"))


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture
def player(django_user_model, password):
    return django_user_model.objects.create_user(username="marisa", password=password)


# CI replays the same Hypothesis examples every run (a red CI run must be reproducible);
# local runs keep exploring new ones.
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
def fast_password_hashing(settings) -> None:
    """Django's own hasher (PBKDF2, the site's: ``test_site``) spends about half a second of CPU on every
    account made and every password checked, by design; the suite makes hundreds.  Its tests hash with MD5
    (and so do the servers and commands it starts, through ``support/site_settings.py``)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def no_table_pauses(settings) -> None:
    """The pauses that let people read a trick and a round's result are for people: the suite plays
    on at once (the pacing tests and the browser tests set them back)."""
    settings.POCHA_TRICK_PAUSE = 0
    settings.POCHA_ROUND_PAUSE = 0


@pytest.fixture(autouse=True)
def no_analysis_thread(settings) -> None:
    """An analysis asked for in a test is worked out where the test says (``games.study.worker.work``), not
    by a thread of the test's process racing it (the live and browser servers run their own)."""
    settings.POCHA_ANALYSIS_THREAD = 0


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
def no_snapshots_left() -> Iterator[None]:
    """The table snapshots the socket path cached during a test go with the test's event loop: they are
    forgotten by timers on that loop (2 s on), which never fire once the loop is closed, and a later test's
    table with the same id (SQLite reuses the ids a rolled-back test took) was drawn from the earlier
    table's snapshot, its game stalled."""
    yield
    from games.live import consumers

    consumers._snapshots.clear()
    consumers._latest.clear()


@pytest.fixture(autouse=True)
def no_database_threads_left() -> Iterator[None]:
    """The socket path's database threads (PostgreSQL) close their connections after every test, so no
    session outlives it (a kept one blocks the next test's flush, and the test database's teardown)."""
    yield
    from games.live import hotpath, presence

    hotpath.shutdown()
    presence.close_beat_connection()  # and the presence beat's thread, which keeps its own


@pytest.fixture(autouse=True)
def commits_without_fsync(django_db_blocker: Any) -> Iterator[None]:
    """Durability is not what the suite is about (the restart tests kill servers of their own), and
    waiting for the disk at every commit makes a whole game several times slower.  Commits skip that wait
    (SQLite ``synchronous=OFF``, PostgreSQL ``synchronous_commit=off``); locking and isolation are
    unchanged."""
    from django.db import connections
    from django.db.backends.signals import connection_created

    def no_fsync(sender: object, connection: Any, **kwargs: object) -> None:
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute("PRAGMA synchronous=OFF")
            elif connection.vendor == "postgresql":
                cursor.execute("SET synchronous_commit TO OFF")

    connection_created.connect(no_fsync)
    with django_db_blocker.unblock():  # a connection an earlier test opened (set once more: it is cheap)
        for conn in connections.all():
            if conn.connection is not None and not conn.in_atomic_block:
                no_fsync(None, conn)
    yield
    connection_created.disconnect(no_fsync)
