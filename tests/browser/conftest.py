"""Browser-test fixtures: the real ASGI server in a subprocess (``support.server``), and Debian's Chromium
via Playwright.

Playwright's own browser downloads are never used (``playwright install`` is not run anywhere): the
tests drive the system Chromium. A failing test's report ends with the tail of the server's log (but its
requests for static files).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.server import Daphne, ServerError, migrated_sqlite, sqlite_site

from . import pages

CHROMIUM = Path("/usr/bin/chromium")
#: A bot's move as soon as it is due (``sqlite_site``'s 50 ms each was a fifth of a whole game's time in the
#: page: 62 s for seven seats' twelve rounds, 48 s without); the card-room modules (``REAL_PACE``) keep it.
NO_BOT_DELAY = {"POCHA_BOT_DELAY": "0"}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium): the browser tests drive it")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is missing (pip install -e '.[dev]')")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=60_000)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def migrated_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated SQLite file per test process, copied for each module's server."""
    try:
        return migrated_sqlite(tmp_path_factory.mktemp("migrated"))
    except ServerError as error:
        pytest.fail(str(error))


@pytest.fixture(scope="module")
def pocha_server_process(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, migrated_database: Path
) -> Iterator[Daphne]:
    """One server per test module (``support.server.sqlite_site``: its own SQLite file, in-process clock,
    quick tables that wait 1 s, bots that play at once: ``NO_BOT_DELAY``, static files the browser keeps:
    ``support.browser_settings``); a module with ``REAL_PACE = True`` gets the table's real pauses (and bots
    that wait 50 ms), and one with ``SERVER_SETTINGS`` those variables too."""
    pace = getattr(request.module, "REAL_PACE", False)
    server = sqlite_site(
        tmp_path_factory.mktemp("pocha-server"),
        pace=pace,
        copy_of=migrated_database,
        settings={
            "DJANGO_SETTINGS_MODULE": "support.browser_settings",
            "POCHA_QUICK_WAIT": "1",
            **({} if pace else NO_BOT_DELAY),
            **getattr(request.module, "SERVER_SETTINGS", {}),
        },
    )
    try:
        server.start()
    except ServerError as error:
        pytest.fail(str(error))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pocha_server(pocha_server_process: Daphne, request: pytest.FixtureRequest) -> Daphne:
    """The running server (not pytest-django's ``live_server``), linked to the test for its log."""
    request.node.pocha_server = pocha_server_process
    return pocha_server_process


@pytest.fixture(autouse=True)
def no_page_errors() -> Iterator[None]:
    """After each browser test: no page of anyone it made (``pages.BrowserPerson``) reported an error,
    a console error, a Content-Security-Policy violation, an uncaught exception, a failed request or an
    HTTP error. Nothing is ignored (the tab's icon, static/img/favicon.svg, must load like any other file)."""
    pages.PEOPLE.clear()
    yield
    reported = [f"{person.name or 'tab'}: {error}" for person in pages.PEOPLE for error in person.errors]
    pages.PEOPLE.clear()
    if reported:
        pytest.fail("the pages reported errors:\n" + "\n".join(reported), pytrace=False)


@pytest.fixture
def screenshot_dir(tmp_path: Path) -> Path:
    """Where screenshots go: ``POCHA_SCREENSHOT_DIR`` when set (to look at them), else the test's tmp dir."""
    chosen = os.environ.get("POCHA_SCREENSHOT_DIR")
    path = Path(chosen) if chosen else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    server = getattr(item, "pocha_server", None)
    if server is not None and report.failed and report.when in ("setup", "call"):
        report.sections.append(
            ("pocha server log (tail, without its requests for static files)", server.log_tail(skip_static=True))
        )
    return report
