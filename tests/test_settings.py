"""The site's own settings (every ``POCHA_*`` and ``TRUSTED_PROXIES``) are read in one place, through one
typed reader (``pocha_site.settings.SettingsReader``), grouped by subject and documented once, one line
each, in the settings module: a value a setting cannot take stops the start, naming the setting and the
value; every default is the one the site always had."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from pocha_site import settings as site_settings

BASE_DIR = Path(__file__).resolve().parent.parent
SETTINGS_FILE = BASE_DIR / "pocha_site" / "settings.py"

#: The defaults as they were before the reader (and the new ones: the address limit and the proxies).
DEFAULTS: dict[str, Any] = {
    "POCHA_BOT_DELAY": 1.0,
    "POCHA_TRICK_PAUSE": 2.2,
    "POCHA_TRICK_HOLD": 1.8,
    "POCHA_ROUND_PAUSE": 7.0,
    "POCHA_REMATCH_WAIT": 30.0,
    "POCHA_QUICK_WAIT": 20.0,
    "POCHA_WAITING_TTL": 1800.0,
    "POCHA_DISCONNECT_GRACE": 5.0,
    "POCHA_PRESENCE_BEAT": 2.0,
    "POCHA_PRESENCE_TTL": 8.0,
    "POCHA_MAX_SOCKETS": 12,
    "POCHA_SERVER_SWEEP_SLACK": 1.0,
    "POCHA_SHED_LOOP_LAG": 0.1,
    "POCHA_SHED_DB_WAIT": 0.1,
    "POCHA_SHED_CPU": 0.85,
    "POCHA_SHED_MOVE_TIME": 0.1,
    "POCHA_SHED_HTTP_WAIT": 0.5,
    "POCHA_SHED_RETRY_AFTER": 10,
    "POCHA_HTTP_CONCURRENCY": 1,
    "POCHA_DB_THREADS": 4,
    "POCHA_GC_THRESHOLD": (50000, 10, 10),
    "POCHA_LOGIN_ATTEMPTS": 10,
    "POCHA_LOGIN_ADDRESS_ATTEMPTS": 10,
    "POCHA_LOGIN_WINDOW": 300,
    "POCHA_SIGNUP_LIMIT": 10,
    "POCHA_SIGNUP_WINDOW": 3600,
    "POCHA_RESET_LIMIT": 5,
    "POCHA_RESET_WINDOW": 3600,
    "POCHA_CODE_ATTEMPTS": 10,
    "POCHA_TALK_LIMIT": 3,
    "POCHA_TALK_WINDOW": 10,
    "POCHA_FOLLOW_LIMIT": 30,
    "POCHA_FOLLOW_WINDOW": 600,
    "POCHA_INVITE_LIMIT": 20,
    "POCHA_INVITE_WINDOW": 600,
    "POCHA_RATELIMIT_PREFIX": "rl",
    "POCHA_HUB_CHANNEL": "",
    "POCHA_ANALYSIS_WORLDS": 0,
    "POCHA_ANALYSIS_THREAD": 1,
    "POCHA_ANALYSIS_STALE": 10.0,
    "TRUSTED_PROXIES": (),
}
#: Read with the database (``database_settings``), not module attributes of their own.
DATABASE_DEFAULTS = {"POCHA_CONN_MAX_AGE": 600, "POCHA_DB_POOL_MAX": 24}


def load_settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, Any]:
    """Run the settings module afresh, in this process, with the site's own settings unset but ``env``."""
    for name in list(os.environ):
        if name.startswith("POCHA_") or name in {"TRUSTED_PROXIES", "DATABASE_URL", "REDIS_URL"}:
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS_FILE))


def test_every_default_is_the_one_the_site_always_had(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings(monkeypatch)
    for name, default in DEFAULTS.items():
        assert loaded[name] == default and type(loaded[name]) is type(default), name
    postgres = loaded["database_settings"]({"DATABASE_URL": "postgres://pocha@db/pocha"})["default"]
    assert postgres["CONN_MAX_AGE"] == DATABASE_DEFAULTS["POCHA_CONN_MAX_AGE"]


def test_values_from_the_environment_are_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_settings(
        monkeypatch,
        POCHA_TRICK_PAUSE="0",
        POCHA_BOT_DELAY=" 0.05 ",
        POCHA_MAX_SOCKETS="2",
        POCHA_ROUND_PAUSE="",  # blank: the default
        TRUSTED_PROXIES="127.0.0.1, 10.0.0.0/8,::1",
        POCHA_GC_THRESHOLD="700,10,10",
    )
    assert (loaded["POCHA_TRICK_PAUSE"], loaded["POCHA_BOT_DELAY"], loaded["POCHA_ROUND_PAUSE"]) == (0.0, 0.05, 7.0)
    assert loaded["POCHA_MAX_SOCKETS"] == 2
    assert loaded["TRUSTED_PROXIES"] == ("127.0.0.1", "10.0.0.0/8", "::1")
    assert loaded["POCHA_GC_THRESHOLD"] == (700, 10, 10)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("POCHA_TRICK_PAUSE", "abc"),
        ("POCHA_BOT_DELAY", "-1"),
        ("POCHA_SHED_CPU", "nan"),
        ("POCHA_PRESENCE_BEAT", "0"),
        ("POCHA_MAX_SOCKETS", "-1"),
        ("POCHA_TALK_LIMIT", "2.5"),
        ("POCHA_LOGIN_WINDOW", "0"),
        ("POCHA_DB_THREADS", "0"),
        ("POCHA_CONN_MAX_AGE", "forever"),
        ("POCHA_DB_POOL_MAX", "-3"),
        ("TRUSTED_PROXIES", "nginx"),
        ("TRUSTED_PROXIES", "10.0.0.1/8"),  # host bits set: which network was meant?
        ("POCHA_GC_THRESHOLD", "lots"),
    ],
)
def test_a_value_a_setting_cannot_take_stops_the_start_naming_both(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings(monkeypatch, **{name: value})
    assert name in str(refused.value) and repr(value) in str(refused.value)


def start_django(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``django.setup()`` in a fresh interpreter, as every process of the site starts."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("POCHA_") and k not in {"TRUSTED_PROXIES", "DATABASE_URL", "REDIS_URL"}
    }
    clean["DJANGO_SETTINGS_MODULE"] = "pocha_site.settings"
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('started')"],
        cwd=BASE_DIR,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("name", "value"), [("POCHA_TRICK_PAUSE", "abc"), ("POCHA_MAX_SOCKETS", "-2"), ("TRUSTED_PROXIES", "proxy.local")]
)
def test_a_bad_value_stops_a_process_at_its_start(name: str, value: str) -> None:
    started = start_django({name: value})
    assert started.returncode != 0 and "started" not in started.stdout
    last = started.stderr.strip().splitlines()[-1]
    assert last.startswith("django.core.exceptions.ImproperlyConfigured: ") and name in last and repr(value) in last


def test_a_good_environment_starts() -> None:
    started = start_django({"POCHA_TRICK_PAUSE": "1.5", "TRUSTED_PROXIES": "127.0.0.1"})
    assert started.returncode == 0, started.stderr


def test_every_setting_of_the_site_is_declared_once_with_a_group_and_one_line() -> None:
    declared = site_settings.DECLARED
    assert set(declared) == set(DEFAULTS) | set(DATABASE_DEFAULTS)
    for item in declared.values():
        assert item.group and item.meaning and "\n" not in item.meaning, item
    # ... and the running site has each (code reads settings.POCHA_X, with no default of its own)
    for name in DEFAULTS:
        assert hasattr(settings, name), name
    # every POCHA_* of the module is declared, but the one made from REDIS_URL
    own = {name for name in vars(site_settings) if name.startswith("POCHA_")}
    assert own - set(declared) == {"POCHA_CELERY_CLOCK"}
    groups = {item.group for item in declared.values()}
    assert {"Clock and pacing", "Presence", "Capacity and load shedding", "Limits", "Proxies"} <= groups


def test_the_settings_module_reads_the_environment_only_through_the_reader() -> None:
    source = SETTINGS_FILE.read_text()
    assert not re.search(r"""(?:ENV|env|environ)\.get\(\s*["'](?:POCHA_|TRUSTED_PROXIES)""", source)
    assert not re.search(r"""(?:int|float)\(\s*(?:ENV|env)""", source)


def test_the_settings_are_documented_in_one_place() -> None:
    """The settings module's lines are the documentation; the README points there and repeats none."""
    readme = (BASE_DIR / "README.md").read_text()
    assert "python -m pocha_site.settings" in readme
    for name in site_settings.DECLARED:
        assert not re.search(rf"^\| `{name}`", readme, re.MULTILINE), name
    table = site_settings.settings_table()
    assert "| `POCHA_TRICK_PAUSE` | `2.2` |" in table and "| `TRUSTED_PROXIES` | none |" in table
