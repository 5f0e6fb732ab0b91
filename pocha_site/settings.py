"""Settings for La Pocha: one module, driven by the environment.

With nothing set, the site runs on one machine with SQLite, an in-memory channel layer and the
in-process turn clock. With ``DATABASE_URL`` and ``REDIS_URL`` it uses PostgreSQL, Redis (channel
layer and Celery broker) and a Celery worker + beat, and any number of ASGI processes.
"""

from __future__ import annotations

import ipaddress
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent

INSECURE_DEV_SECRET_KEY = "django-insecure-dev-only-do-not-use-in-production"


def env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = env.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(env: Mapping[str, str], name: str, default: str) -> list[str]:
    return [item.strip() for item in env.get(name, default).split(",") if item.strip()]


# --- The site's own settings: one typed reader -------------------------------------------------

T = TypeVar("T")


@dataclass(frozen=True)
class Declared:
    """A setting of the site's own: its environment variable (the setting's name), its group, its
    default as one would write it there, and its one line of meaning (its documentation)."""

    name: str
    group: str
    default: str
    meaning: str


#: Every setting read through ``SettingsReader``, in the order first read (``python -m pocha_site.settings``).
DECLARED: dict[str, Declared] = {}


class SettingsReader:
    """The one way the site's own settings (every ``POCHA_*``, and ``TRUSTED_PROXIES``) are read from the
    environment: typed, checked, and declared once with a group, a default and one line of meaning.

    An unset or blank variable gives the default; a value the setting cannot take (``abc`` for seconds, a
    negative count) stops the start with ``ImproperlyConfigured`` naming the variable and the value."""

    def __init__(self, environ: Mapping[str, str], group: str = "") -> None:
        self.environ = environ
        self.title = group

    def group(self, title: str) -> SettingsReader:
        return SettingsReader(self.environ, title)

    def read(self, name: str, default: T, meaning: str, parse: Callable[[str], T], expected: str) -> T:
        """``parse`` the variable's text (a ValueError: not ``expected``), or ``default`` when unset."""
        shown = (
            f"{default:g}"
            if isinstance(default, float)
            else ",".join(map(str, default))
            if isinstance(default, tuple)
            else str(default)
        )
        DECLARED.setdefault(name, Declared(name, self.title, shown, meaning))
        text = (self.environ.get(name) or "").strip()
        if not text:
            return default
        try:
            return parse(text)
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be {expected}, not {text!r} ({meaning}).") from None

    def seconds(self, name: str, default: float, meaning: str, *, above_zero: bool = False) -> float:
        """A number of seconds (or any other non-negative quantity: a share of a core), 0 or more."""

        def parse(text: str) -> float:
            value = float(text)
            if not math.isfinite(value) or value < 0 or (above_zero and value == 0):
                raise ValueError(text)
            return value

        expected = "a number greater than 0" if above_zero else "a number, 0 or more"
        return self.read(name, float(default), meaning, parse, expected)

    def count(self, name: str, default: int, meaning: str, *, least: int = 0) -> int:
        """A whole number, ``least`` or more."""

        def parse(text: str) -> int:
            value = int(text)
            if value < least:
                raise ValueError(text)
            return value

        return self.read(name, default, meaning, parse, f"a whole number, {least} or more")

    def text(self, name: str, default: str, meaning: str) -> str:
        return self.read(name, default, meaning, str, "text")

    def networks(self, name: str, meaning: str) -> tuple[str, ...]:
        """Comma-separated IP addresses and networks (``127.0.0.1``, ``10.0.0.0/8``, ``::1``); none by default."""

        def parse(text: str) -> tuple[str, ...]:
            items = tuple(item.strip() for item in text.split(",") if item.strip())
            for item in items:
                (ipaddress.ip_network if "/" in item else ipaddress.ip_address)(item)
            return items

        return self.read(
            name, (), meaning, parse, "IP addresses or networks separated by commas, like 127.0.0.1,10.0.0.0/8"
        )

    def thresholds(self, name: str, default: str, meaning: str) -> tuple[int, ...]:
        DECLARED.setdefault(name, Declared(name, self.title, default, meaning))
        return gc_threshold(self.environ, name, default)


def settings_table() -> str:
    """The declared settings as Markdown tables, one per group."""
    lines: list[str] = []
    for group in dict.fromkeys(item.group for item in DECLARED.values()):
        lines += [f"**{group}**", "", "| variable | default | meaning |", "|---|---|---|"]
        lines += [
            f"| `{d.name}` | {f'`{d.default}`' if d.default else 'none'} | {d.meaning} |"
            for d in DECLARED.values()
            if d.group == group
        ]
        lines.append("")
    return "\n".join(lines)


def gc_threshold(env: Mapping[str, str], name: str, default: str) -> tuple[int, ...]:
    """One to three whole numbers for ``gc.set_threshold``, separated by commas (``50000,10,10``)."""
    text = env.get(name, "").strip() or default
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        values = ()
    if not 1 <= len(values) <= 3 or any(value < 0 for value in values):
        raise ImproperlyConfigured(f"{name} must be one to three whole numbers like 50000,10,10, not {text!r}.")
    return values


#: psycopg prepares a statement on a connection once it has run this many times (its own default).
PREPARE_THRESHOLD = 5


def database_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``DATABASES`` setting for an environment: ``DATABASE_URL``, or a local SQLite file."""
    url = env.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}"
    database_group = SettingsReader(env, "Database and messaging")
    # Persistent connections are mandatory under load: opening one per query collapses the server.
    # POCHA_CONN_MAX_AGE: the server processes set 0 (deploy/): under ASGI each HTTP request runs in a
    # thread of its own, whose kept connection would outlive it (PostgreSQL ran out of connections
    # under load); the socket path keeps its threads' connections itself (games.live.hotpath).
    max_age = database_group.count(
        "POCHA_CONN_MAX_AGE",
        600,
        "seconds Django keeps a PostgreSQL connection (the server processes run with 0: deploy/)",
    )
    pool_max = database_group.count(
        "POCHA_DB_POOL_MAX",
        24,
        "with POCHA_CONN_MAX_AGE=0, the PostgreSQL connections each process keeps in a pool for its HTTP requests "
        "(0: no pool)",
    )
    if url.startswith("sqlite"):
        database = dict(dj_database_url.parse(url))
        database["OPTIONS"] = {
            # Writers take the lock when their transaction begins, so concurrent moves queue up
            # behind each other (for up to `timeout` seconds) instead of failing mid-transaction.
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
        }
        # Tests run the server's threads against a file, where SQLite's busy timeout applies
        # (a shared in-memory database fails at once with "table is locked" instead).
        # One file per test process, so that two runs on one machine never share it.
        database["TEST"] = {"NAME": str(BASE_DIR / f".test-db-{os.getpid()}.sqlite3")}
    else:
        database = dict(dj_database_url.parse(url, conn_max_age=max_age, conn_health_checks=True))
        # Parameters bound on the server, and every statement run more than a few times on a connection
        # prepared (parsed and planned once): the moves run the same few statements all day, and planning
        # them would otherwise be most of the database's work for them (games.table.rows).
        database["OPTIONS"] = {"server_side_binding": True, "prepare_threshold": PREPARE_THRESHOLD}
        if max_age == 0 and pool_max > 0:
            # ... and so an HTTP request's connection goes back to a pool (psycopg_pool) instead of being
            # closed: a new connection costs PostgreSQL a backend process, which every request would pay,
            # a good part of the database's work during a burst of new tables.  The pool's size covers the
            # socket path's threads (POCHA_DB_THREADS), which hold theirs, the beat's thread and the
            # requests'; a request finding none free waits up to `timeout` seconds.
            database["OPTIONS"]["pool"] = {"min_size": 2, "max_size": pool_max, "timeout": 10}
    return {"default": database}


REDIS_SOCKET_TIMEOUT = 10


#: Connections each process's channel layer may hold to Redis at once (Redis itself takes 10,000).
REDIS_MAX_CONNECTIONS = 1000


def _redis_connection_class(url: str) -> Any:
    from pocha_site.redis_cancel import connection_class

    return connection_class(url)


def channel_layer_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``CHANNEL_LAYERS`` setting: Redis when ``REDIS_URL`` is set, else in-process memory."""
    redis_url = env.get("REDIS_URL")
    if redis_url:
        return {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                # Each consumer waits for its next event with a blocking pop of up to 5 s; redis-py 8
                # gives sockets a 5 s read timeout by default, which fires first and kills every
                # socket whose table stays quiet for 5 s.  Read timeout: longer than that wait.
                # redis-py's pool refuses a 101st concurrent command at once ("Too many connections"):
                # hundreds of sockets closing together, or a burst of moves, need more.
                # The connection class honours a cancellation that Python 3.11's wait_for would swallow
                # (a closed socket's consumer would otherwise never end): see pocha_site/redis_cancel.py.
                "CONFIG": {
                    "hosts": [
                        {
                            "address": redis_url,
                            "socket_timeout": REDIS_SOCKET_TIMEOUT,
                            "max_connections": REDIS_MAX_CONNECTIONS,
                            "connection_class": _redis_connection_class(redis_url),
                        }
                    ]
                },
            }
        }
    return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


def cache_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``CACHES`` setting: Redis when ``REDIS_URL`` is set, so counters such as the rate limits hold
    across every ASGI process; else this process's memory (one process in the embedded mode)."""
    redis_url = env.get("REDIS_URL")
    if redis_url:
        return {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": redis_url,
                "KEY_PREFIX": "pocha",
                "OPTIONS": {"socket_timeout": REDIS_SOCKET_TIMEOUT},
            }
        }
    return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "pocha"}}


def email_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The e-mail settings: SMTP when ``EMAIL_HOST`` is set (STARTTLS on port 587 unless told otherwise),
    else the console backend, which prints every message (password resets too) in the server's log."""
    from_email = (env.get("DEFAULT_FROM_EMAIL") or "").strip() or "La Pocha <noreply@localhost>"
    common: dict[str, Any] = {"DEFAULT_FROM_EMAIL": from_email, "SERVER_EMAIL": from_email}
    host = (env.get("EMAIL_HOST") or "").strip()
    if not host:
        return {"EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend", **common}
    use_ssl = env_bool(env, "EMAIL_USE_SSL", False)
    use_tls = env_bool(env, "EMAIL_USE_TLS", not use_ssl)
    if use_ssl and use_tls:
        raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be on.")
    port = (env.get("EMAIL_PORT") or "").strip()
    return {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": host,
        "EMAIL_PORT": int(port) if port else (465 if use_ssl else 587 if use_tls else 25),
        "EMAIL_HOST_USER": env.get("EMAIL_HOST_USER", ""),
        "EMAIL_HOST_PASSWORD": env.get("EMAIL_HOST_PASSWORD", ""),
        "EMAIL_USE_TLS": use_tls,
        "EMAIL_USE_SSL": use_ssl,
        # A stuck mail server must not hold a request (a password reset) for ever.
        "EMAIL_TIMEOUT": 10,
        **common,
    }


ONE_YEAR = 365 * 24 * 3600


def proxy_ssl_header(value: str) -> tuple[str, str] | None:
    """``SECURE_PROXY_SSL_HEADER`` from the environment: a header name, as Django's META spells it
    (``HTTP_X_FORWARDED_PROTO``) or as the proxy sends it (``X-Forwarded-Proto``), optionally with the
    value that means HTTPS after ``=`` (``https`` by default). Empty: no proxy header is trusted."""
    name, _, secure_value = value.strip().partition("=")
    name = name.strip().upper().replace("-", "_")
    if not name:
        return None
    if not name.startswith("HTTP_"):
        name = "HTTP_" + name
    return (name, secure_value.strip() or "https")


def security_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """HTTPS, cookie and HSTS settings for an environment.

    ``HTTPS`` says the site is served over HTTPS only; unset, it is on when every origin in
    ``CSRF_TRUSTED_ORIGINS`` is ``https://`` (and there is at least one). Then plain-HTTP requests are
    redirected (``SECURE_SSL_REDIRECT``), the session, CSRF and language cookies are sent over HTTPS
    only, and browsers are told to use HTTPS for ``SECURE_HSTS_SECONDS`` (a year by default), with
    ``SECURE_HSTS_INCLUDE_SUBDOMAINS`` and ``SECURE_HSTS_PRELOAD`` (both on by default). Off, as for
    ``make run`` on http://127.0.0.1, none of this applies: cookies are not marked secure and nothing
    redirects. Behind a proxy that ends TLS, ``SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto`` tells Django
    which header marks a request that came in over HTTPS (set it only if the proxy always sets it)."""
    trusted = env_list(env, "CSRF_TRUSTED_ORIGINS", "")
    https = env_bool(env, "HTTPS", bool(trusted) and all(o.lower().startswith("https://") for o in trusted))
    hsts_seconds = (env.get("SECURE_HSTS_SECONDS") or "").strip()
    return {
        "SECURE_SSL_REDIRECT": env_bool(env, "SECURE_SSL_REDIRECT", https),
        "SESSION_COOKIE_SECURE": https,
        "CSRF_COOKIE_SECURE": https,
        "LANGUAGE_COOKIE_SECURE": https,
        "SECURE_HSTS_SECONDS": int(hsts_seconds) if hsts_seconds else (ONE_YEAR if https else 0),
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": env_bool(env, "SECURE_HSTS_INCLUDE_SUBDOMAINS", https),
        "SECURE_HSTS_PRELOAD": env_bool(env, "SECURE_HSTS_PRELOAD", https),
        "SECURE_PROXY_SSL_HEADER": proxy_ssl_header(env.get("SECURE_PROXY_SSL_HEADER", "")),
    }


# The Content-Security-Policy header (django-csp) on every page: only the site's own scripts, styles,
# images and fonts, sockets to the site itself ('self' covers ws:/wss: on the same host and port), no
# plugins, no framing, forms posting only to the site. data: images are the turn alert's tab icon, drawn in
# static/js/table.js (the page's own is static/img/favicon.svg). No inline script or style anywhere:
# htmx's own indicator styles are off (the htmx-config meta in templates/base.html), and eval with them.
CONTENT_SECURITY_POLICY_DIRECTIVES: dict[str, list[str]] = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}


ENV = os.environ

# --- Core -------------------------------------------------------------------------------------

DEBUG = env_bool(ENV, "DEBUG", True)
SECRET_KEY = ENV.get("SECRET_KEY") or INSECURE_DEV_SECRET_KEY
if not DEBUG and SECRET_KEY == INSECURE_DEV_SECRET_KEY:
    raise ImproperlyConfigured("Set SECRET_KEY in the environment when DEBUG is off.")

ALLOWED_HOSTS = env_list(ENV, "ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list(ENV, "CSRF_TRUSTED_ORIGINS", "")

# --- Security (HTTPS, cookies, content policy) ------------------------------------------------

# SECURE_SSL_REDIRECT, the secure cookies, HSTS and SECURE_PROXY_SSL_HEADER: see security_settings().
globals().update(security_settings(ENV))
CONTENT_SECURITY_POLICY = {"DIRECTIVES": CONTENT_SECURITY_POLICY_DIRECTIVES}

INSTALLED_APPS = [
    # daphne first: its runserver serves the ASGI application (HTTP and WebSockets).
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "csp",
    "games",
    "accounts",
    "leaderboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # After WhiteNoise: the policy goes on pages, not on the static files WhiteNoise answers first.
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    # Before anything reads the user, the form or the database: a 400 for a request whose path, query,
    # cookies or form hold what no parameter can (a NUL byte, %ff...), in the reader's language.
    "pocha_site.bad_bytes.RefuseBadBytes",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "pocha_site.urls"
ASGI_APPLICATION = "pocha_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.debug",
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.wallet",
                "pocha_site.context_processors.tournament_notice",
                "pocha_site.context_processors.invitation_banner",
            ],
        },
    },
    {
        # The table's board and its seats (drawn for every seat at every move): pocha_site/jinja2.py.
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "pocha_site.jinja2.environment"},
    },
]

# --- Data and messaging -----------------------------------------------------------------------

DATABASES = database_settings(ENV)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = ENV.get("REDIS_URL") or None
CHANNEL_LAYERS = channel_layer_settings(ENV)
CACHES = cache_settings(ENV)

# With Redis, Celery worker + beat run the turn clock; without it, an in-process loop does.
POCHA_CELERY_CLOCK = REDIS_URL is not None
CELERY_BROKER_URL = REDIS_URL
CELERY_TASK_IGNORE_RESULT = True

# --- Accounts ---------------------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# --- E-mail (password resets) -----------------------------------------------------------------

# EMAIL_BACKEND, DEFAULT_FROM_EMAIL and SERVER_EMAIL, and with EMAIL_HOST set the SMTP settings.
globals().update(email_settings(ENV))

# --- Language and time ------------------------------------------------------------------------

LANGUAGE_CODE = "es"
LANGUAGES = [("es", _("Español")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = "Europe/Madrid"
USE_TZ = True
# Dates with the month in words and times on the 24-hour clock, in both languages (pocha_site/formats/).
FORMAT_MODULE_PATH = "pocha_site.formats"

# --- Static files -----------------------------------------------------------------------------

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Where `collectstatic` puts the files WhiteNoise serves with DEBUG off; one folder per deployment (two
# stacks started from one checkout, as the fault tests do, must not rewrite each other's files).
STATIC_ROOT = Path(ENV.get("STATIC_ROOT") or BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # In production (DEBUG off) files are served hashed and compressed after `collectstatic`.
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage",
    },
}

# === The site's own settings ==================================================================
#
# Every POCHA_* setting and TRUSTED_PROXIES, by subject, each read once through ``SettingsReader`` from the
# environment variable of the same name, with its default and one line of meaning, which is its
# documentation (``python -m pocha_site.settings`` prints them as tables).  POCHA_CONN_MAX_AGE and
# POCHA_DB_POOL_MAX are read with the database (``database_settings``).

pocha = SettingsReader(ENV)

# --- Clock and pacing: the table's pauses let people read a trick and a round's result; the server sets
# the pace, so no bot, clock or deal moves on during them (the page holds a trick up POCHA_TRICK_HOLD).

pacing = pocha.group("Clock and pacing")
POCHA_BOT_DELAY = pacing.seconds("POCHA_BOT_DELAY", 1.0, "seconds a bot waits before it plays")
POCHA_TRICK_PAUSE = pacing.seconds(
    "POCHA_TRICK_PAUSE", 2.2, "seconds after a completed trick before anyone (a bot, the clock, the next deal) moves on"
)
POCHA_TRICK_HOLD = pacing.seconds(
    "POCHA_TRICK_HOLD", 1.8, "seconds each page holds a completed trick up before sweeping it to the winner"
)
POCHA_ROUND_PAUSE = pacing.seconds(
    "POCHA_ROUND_PAUSE",
    7,
    "seconds a round's last trick and result stay up before the next deal (0: deal at once, in the same "
    "transaction as the last card)",
)
POCHA_REMATCH_WAIT = pacing.seconds(
    "POCHA_REMATCH_WAIT", 30, "seconds a rematch waits for the other players before bots take their seats"
)
POCHA_QUICK_WAIT = pacing.seconds(
    "POCHA_QUICK_WAIT", 20, "seconds a quick-play table waits for people before bots fill the empty seats"
)
POCHA_WAITING_TTL = pacing.seconds(
    "POCHA_WAITING_TTL",
    1800,
    "seconds a waiting table that is not a quick one (a new public table, a private one, a rematch without "
    "bots) waits after its last change before it is called off, every stake going back",
)

# --- Presence: one row per open socket, owned by the ASGI process holding it; a process beats to say it
# is alive, and the sockets of one that stopped beating (killed, frozen) stop counting.

presence = pocha.group("Presence")
POCHA_PRESENCE_BEAT = presence.seconds(
    "POCHA_PRESENCE_BEAT", 2, "every ASGI process records that it is alive every this many seconds", above_zero=True
)
POCHA_PRESENCE_TTL = presence.seconds(
    "POCHA_PRESENCE_TTL",
    8,
    "the sockets of a process not heard from for this many seconds stop counting, so a dropped player's "
    "grace starts anyway",
    above_zero=True,
)
POCHA_DISCONNECT_GRACE = presence.seconds(
    "POCHA_DISCONNECT_GRACE", 5, "seconds after a seated player's last socket closes before the bot plays their turns"
)
POCHA_MAX_SOCKETS = presence.count(
    "POCHA_MAX_SOCKETS",
    12,
    "open table sockets one person may have over every table and process; the next is refused «Tienes "
    "demasiadas pestañas abiertas»",
    least=1,
)
POCHA_SERVER_SWEEP_SLACK = presence.seconds(
    "POCHA_SERVER_SWEEP_SLACK",
    1.0,
    "each ASGI process also plays steps overdue by more than this many seconds (besides Celery beat), so no "
    "game waits on one process",
)

# --- Capacity and load shedding (games.live.capacity): a server process whose event loop lags, whose
# database threads make calls wait, whose moves or HTTP requests wait, or whose threads use more than a
# share of a core, each smoothed over about a second, refuses new tables and quick play with «Sala llena»
# (HTTP 503, Retry-After) until the waits are under half and the CPU under 0.8 of its limit again; running
# games go on.  0 turns a limit off.  HTTP requests run in threads that take turns with the event loop, so a
# ramp of new tables fills a process before its loop lags (benchmarks/load/README.md).

capacity = pocha.group("Capacity and load shedding")
POCHA_SHED_LOOP_LAG = capacity.seconds(
    "POCHA_SHED_LOOP_LAG", 0.1, "shed when the process's event loop lags by more than this many seconds"
)
POCHA_SHED_DB_WAIT = capacity.seconds(
    "POCHA_SHED_DB_WAIT",
    0.1,
    "shed when the socket path's database threads make a call wait more than this many seconds",
)
POCHA_SHED_CPU = capacity.seconds(
    "POCHA_SHED_CPU", 0.85, "shed when the process's threads together use more than this share of one core"
)
POCHA_SHED_MOVE_TIME = capacity.seconds(
    "POCHA_SHED_MOVE_TIME",
    0.1,
    "shed when a socket's move (its database call and its push) takes longer than this many seconds on the server",
)
POCHA_SHED_HTTP_WAIT = capacity.seconds(
    "POCHA_SHED_HTTP_WAIT", 0.5, "shed when HTTP requests wait longer than this many seconds for their turn"
)
POCHA_SHED_RETRY_AFTER = capacity.count("POCHA_SHED_RETRY_AFTER", 10, "the Retry-After seconds of that refusal")
POCHA_HTTP_CONCURRENCY = capacity.count(
    "POCHA_HTTP_CONCURRENCY",
    1,
    "HTTP requests a server process runs at once, the others waiting on its event loop (0: no limit)",
)
POCHA_DB_THREADS = capacity.count(
    "POCHA_DB_THREADS",
    4,
    "threads, each with its own connection, for the socket path's database calls in each server process with "
    "PostgreSQL (SQLite always uses one)",
    least=1,
)
# The cyclic garbage collector of each ASGI process (pocha_site.asgi), its youngest generation collected
# far less often than Python's default: a pass every 700 new objects, in the middle of moves being drawn,
# carries short-lived objects into the oldest generation, whose full passes then stop the event loop (every
# socket of the process) for as long as it takes to walk everything the process holds.  The load tool's
# figures are in benchmarks/load/README.md.
POCHA_GC_THRESHOLD = capacity.thresholds(
    "POCHA_GC_THRESHOLD",
    "50000,10,10",
    "the garbage collector's thresholds in each server process (gc.set_threshold; Python's default is 700,10,10)",
)

# --- Limits, counted in Django's cache (Redis in services mode, so they hold across processes) by
# pocha_site.ratelimit.  A name alone is never locked: a stranger's wrong passwords for someone's name, from
# other addresses, never keep its owner out.

limits = pocha.group("Limits")
POCHA_LOGIN_ATTEMPTS = limits.count(
    "POCHA_LOGIN_ATTEMPTS",
    10,
    "failed logins for one name from one address per POCHA_LOGIN_WINDOW; then that name is refused from that "
    "address, right password or not, until the window passes",
    least=1,
)
POCHA_LOGIN_ADDRESS_ATTEMPTS = limits.count(
    "POCHA_LOGIN_ADDRESS_ATTEMPTS",
    10,
    "failed logins from one address over every name per POCHA_LOGIN_WINDOW; then the address is refused "
    "(raise it when many players share one address)",
    least=1,
)
POCHA_LOGIN_WINDOW = limits.count("POCHA_LOGIN_WINDOW", 300, "seconds of the login windows", least=1)
POCHA_SIGNUP_LIMIT = limits.count(
    "POCHA_SIGNUP_LIMIT", 10, "accounts that may be created from one address per POCHA_SIGNUP_WINDOW"
)
POCHA_SIGNUP_WINDOW = limits.count("POCHA_SIGNUP_WINDOW", 3600, "seconds of the sign-up window", least=1)
POCHA_RESET_LIMIT = limits.count(
    "POCHA_RESET_LIMIT",
    5,
    "password-reset e-mails that may be asked for from one address, and for one e-mail, per POCHA_RESET_WINDOW",
)
POCHA_RESET_WINDOW = limits.count("POCHA_RESET_WINDOW", 3600, "seconds of the password-reset window", least=1)
POCHA_CODE_ATTEMPTS = limits.count(
    "POCHA_CODE_ATTEMPTS", 10, "wrong private-table codes a person, and an address, may try per minute", least=1
)
POCHA_TALK_LIMIT = limits.count("POCHA_TALK_LIMIT", 3, "table-talk phrases a person may say per POCHA_TALK_WINDOW")
POCHA_TALK_WINDOW = limits.count("POCHA_TALK_WINDOW", 10, "seconds of the table-talk window", least=1)
# Friends (accounts.social): follows and blocks a person may make per window, and invitations they may send.
POCHA_FOLLOW_LIMIT = limits.count(
    "POCHA_FOLLOW_LIMIT", 30, "follows and blocks a person may make per POCHA_FOLLOW_WINDOW"
)
POCHA_FOLLOW_WINDOW = limits.count("POCHA_FOLLOW_WINDOW", 600, "seconds of the follow and block window", least=1)
POCHA_INVITE_LIMIT = limits.count("POCHA_INVITE_LIMIT", 20, "invitations a person may send per POCHA_INVITE_WINDOW")
POCHA_INVITE_WINDOW = limits.count("POCHA_INVITE_WINDOW", 600, "seconds of the invitation window", least=1)
POCHA_RATELIMIT_PREFIX = limits.text(
    "POCHA_RATELIMIT_PREFIX", "rl", "the first part of the limits' counters' keys in the cache"
)

# --- The client's address: the connection's own, unless it comes from a trusted proxy, whose
# X-Forwarded-For (its right-most address that is not a trusted proxy) and X-Forwarded-Proto are believed
# (pocha_site/proxy.py).  The limits above count per address: a client must never choose its own.

TRUSTED_PROXIES = pocha.group("Proxies").networks(
    "TRUSTED_PROXIES",
    "addresses or networks of the proxies whose X-Forwarded-For and X-Forwarded-Proto are believed, comma-"
    "separated (nginx on this machine: 127.0.0.1); none by default",
)

# --- Analysis: «Analizar la partida» and «Juega esta mano», worked out by the worker (games.study).

study = pocha.group("Analysis")
POCHA_ANALYSIS_WORLDS = study.count(
    "POCHA_ANALYSIS_WORLDS",
    0,
    "worlds the analysis samples for each decision (0: the engine's default; fewer is faster and rougher)",
)
POCHA_ANALYSIS_THREAD = study.count(
    "POCHA_ANALYSIS_THREAD",
    1,
    "without Redis (no Celery worker), 1: each server process works out the analyses in a thread of its own "
    "(the searching in a child process); 0: nobody does",
)
POCHA_ANALYSIS_STALE = study.seconds(
    "POCHA_ANALYSIS_STALE",
    10,
    "seconds a running analysis (or practice yardstick, or par) may go without a sign of life before another "
    "worker takes it up again: its worker died (a live one signs every fifth of this, even mid-search)",
)

# --- Database and messaging (besides POCHA_CONN_MAX_AGE and POCHA_DB_POOL_MAX) ---------------------

# Pub/sub ignores Redis's database numbers: unless set, the name is made from the database and Redis in use,
# so that two sites on one Redis (or the test suites beside a running stack) are told apart.
POCHA_HUB_CHANNEL = pocha.group("Database and messaging").text(
    "POCHA_HUB_CHANNEL",
    "",
    "the prefix of the Redis pub/sub channels of the table events, one per table (games.live.hub: "
    "PREFIX:TABLE_ID); empty: made up",
)

# The beat sweeper plays every overdue step (a bot's move, a table to fill) that a lost task left behind.
CELERY_BEAT_SCHEDULE = {
    "pocha-sweep-due": {"task": "games.tasks.sweep_due", "schedule": 2.0},
    # Sockets of ASGI processes that stopped beating (killed, frozen) stop counting, even if none is left.
    "pocha-sweep-presence": {"task": "games.tasks.sweep_presence", "schedule": POCHA_PRESENCE_BEAT},
    # Analyses and practice yardsticks whose message was lost, or whose worker died mid-way (silent for
    # POCHA_ANALYSIS_STALE seconds): taken up again within 2 s of that.
    "pocha-sweep-study": {"task": "games.tasks.sweep_study", "schedule": 2.0},
    # Tournaments whose start time passed, whose tables are late, or whose table's end message was lost.
    "pocha-sweep-tournaments": {"task": "games.tasks.sweep_tournaments", "schedule": 2.0},
}


if __name__ == "__main__":
    print(settings_table())
