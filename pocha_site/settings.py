"""Settings for La Pocha: one module, driven by the environment.

With nothing set, the site runs on one machine with SQLite, an in-memory channel layer and the
in-process turn clock. With ``DATABASE_URL`` and ``REDIS_URL`` it uses PostgreSQL, Redis (channel
layer and Celery broker) and a Celery worker + beat, and any number of ASGI processes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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


def database_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``DATABASES`` setting for an environment: ``DATABASE_URL``, or a local SQLite file."""
    url = env.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}"
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
        # Persistent connections are mandatory under load: opening one per query collapses the server.
        # POCHA_CONN_MAX_AGE: the server processes set 0 (deploy/): under ASGI each HTTP request runs in a
        # thread of its own, whose kept connection would outlive it (PostgreSQL ran out of connections
        # under load); the socket path keeps its threads' connections itself (games.hotpath).
        max_age = int(env.get("POCHA_CONN_MAX_AGE", "600"))
        database = dict(dj_database_url.parse(url, conn_max_age=max_age, conn_health_checks=True))
        pool_max = int(env.get("POCHA_DB_POOL_MAX", "24"))
        if max_age == 0 and pool_max > 0:
            # ... and so an HTTP request's connection goes back to a pool (psycopg_pool) instead of being
            # closed: a new connection costs PostgreSQL a backend process (about 7 ms of CPU), each request
            # paid it, and during a burst of new tables that was a quarter of the database's CPU.  The
            # pool's size covers the socket path's threads (POCHA_DB_THREADS), which hold theirs, the
            # beat's thread and the requests'; a request finding none free waits up to `timeout` seconds.
            database["OPTIONS"] = {"pool": {"min_size": 2, "max_size": pool_max, "timeout": 10}}
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
# plugins, no framing, forms posting only to the site. data: images are the tab's icons (the page's
# blank one and the turn alert's, drawn in static/js/table.js). No inline script or style anywhere:
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
# The Redis pub/sub channel of this site's table events (games.hub).  Pub/sub ignores Redis's database
# numbers: unless set, the name is made from the database and Redis in use, so that two sites on one Redis
# (or the test suites beside a running stack) are told apart.
POCHA_HUB_CHANNEL = ENV.get("POCHA_HUB_CHANNEL", "")
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

# Failed logins allowed per client address, and per account, in POCHA_LOGIN_WINDOW seconds; after that
# even the right password is refused until the window passes.
POCHA_LOGIN_ATTEMPTS = int(ENV.get("POCHA_LOGIN_ATTEMPTS", "10"))
POCHA_LOGIN_WINDOW = int(ENV.get("POCHA_LOGIN_WINDOW", "300"))
# Accounts that may be created from one client address in POCHA_SIGNUP_WINDOW seconds.
POCHA_SIGNUP_LIMIT = int(ENV.get("POCHA_SIGNUP_LIMIT", "10"))
POCHA_SIGNUP_WINDOW = int(ENV.get("POCHA_SIGNUP_WINDOW", "3600"))
# Password-reset e-mails that may be asked for from one address, or for one e-mail, in POCHA_RESET_WINDOW s.
POCHA_RESET_LIMIT = int(ENV.get("POCHA_RESET_LIMIT", "5"))
POCHA_RESET_WINDOW = int(ENV.get("POCHA_RESET_WINDOW", "3600"))

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

# --- Static files -----------------------------------------------------------------------------

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # In production (DEBUG off) files are served hashed and compressed after `collectstatic`.
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage",
    },
}

# --- The game ---------------------------------------------------------------------------------

# Seconds a bot "thinks" before it plays, so people can follow the table.
POCHA_BOT_DELAY = float(ENV.get("POCHA_BOT_DELAY", "1.0"))
# Seconds after a seated player's last socket closes before the bot plays their turns.
POCHA_DISCONNECT_GRACE = float(ENV.get("POCHA_DISCONNECT_GRACE", "5"))
# Wrong private-table codes a person (and an address) may try in a minute.
POCHA_CODE_ATTEMPTS = int(ENV.get("POCHA_CODE_ATTEMPTS", "10"))
# Seconds a completed trick stays on the table before anyone (a bot, or the next deal) moves on: every
# page shows it at least POCHA_TRICK_HOLD seconds (the browser's own hold) with the winning card marked.
POCHA_TRICK_PAUSE = float(ENV.get("POCHA_TRICK_PAUSE", "2.2"))
POCHA_TRICK_HOLD = float(ENV.get("POCHA_TRICK_HOLD", "1.8"))
# Seconds between a round's last trick and the next deal: the last trick, then the round's result.
# 0 deals the next round at once, in the same transaction as the last card (the tests' default).
POCHA_ROUND_PAUSE = float(ENV.get("POCHA_ROUND_PAUSE", "7"))
# Phrases a person may say at the table (table talk) per POCHA_TALK_WINDOW seconds.
POCHA_TALK_LIMIT = int(ENV.get("POCHA_TALK_LIMIT", "3"))
POCHA_TALK_WINDOW = int(ENV.get("POCHA_TALK_WINDOW", "10"))
# Seconds a rematch («Revancha») waits for the other players before bots take their seats.
POCHA_REMATCH_WAIT = float(ENV.get("POCHA_REMATCH_WAIT", "30"))
# Seconds a quick-play table waits for people before bots fill the empty seats.
POCHA_QUICK_WAIT = float(ENV.get("POCHA_QUICK_WAIT", "20"))

# --- Running as a service (issue 11) ---------------------------------------------------------

# Presence: every ASGI process beats every POCHA_PRESENCE_BEAT seconds; the sockets of a process not heard
# from for POCHA_PRESENCE_TTL seconds (killed, frozen) stop counting, and the sweeper removes them.
POCHA_PRESENCE_BEAT = float(ENV.get("POCHA_PRESENCE_BEAT", "2"))
POCHA_PRESENCE_TTL = float(ENV.get("POCHA_PRESENCE_TTL", "8"))
# Open sockets one person may have at once, over every table and process.
POCHA_MAX_SOCKETS = int(ENV.get("POCHA_MAX_SOCKETS", "12"))
# Seconds a waiting table that is not a quick one (a new public table, a private one) waits for its
# players before it is called off and every stake goes back.
POCHA_WAITING_TTL = float(ENV.get("POCHA_WAITING_TTL", "1800"))
# Each ASGI process also sweeps overdue steps (besides Celery beat in services mode), so that no game
# waits on one process; it leaves a step to its precise timer for this many seconds first.
POCHA_SERVER_SWEEP_SLACK = float(ENV.get("POCHA_SERVER_SWEEP_SLACK", "1.0"))

# Threads for the socket path's database calls in each server process, with PostgreSQL (games.hotpath);
# each holds a connection of its own.  SQLite always uses one.
POCHA_DB_THREADS = int(ENV.get("POCHA_DB_THREADS", "4"))

# The cyclic garbage collector of each ASGI process (pocha_site.asgi): how many new objects before its
# youngest generation is collected, and how many such passes before each older one (Python's default is
# 700,10,10).  Measured at 375 tables in late rounds: with 700, each process made a full collection every
# ~6 s, stopping its event loop (every socket of the process) for up to 180 ms; with 50000, none in the
# 30 s window, and p95 went from 128-185 ms to 42-60 ms.  Most likely, fewer passes in the middle of
# moves carry fewer short-lived objects into the oldest generation.  See benchmarks/load/README.md,
# "Seventh session".
POCHA_GC_THRESHOLD = gc_threshold(ENV, "POCHA_GC_THRESHOLD", "50000,10,10")

# Load shedding (games.capacity): a server process whose event loop lags, or whose database thread makes
# calls wait, by more than these many seconds, or whose threads use more than this share of a core
# (smoothed over about a second; 0 turns a limit off) refuses new tables and quick play with «Sala llena»
# (HTTP 503, Retry-After) until the waits are under half and the CPU under 0.8 of its limit again.
POCHA_SHED_LOOP_LAG = float(ENV.get("POCHA_SHED_LOOP_LAG", "0.1"))
POCHA_SHED_DB_WAIT = float(ENV.get("POCHA_SHED_DB_WAIT", "0.1"))
POCHA_SHED_CPU = float(ENV.get("POCHA_SHED_CPU", "0.85"))
# ... or whose moves take longer than this on the server (a socket's move: its database call and its push),
# or whose HTTP requests wait longer than this for their turn (POCHA_HTTP_CONCURRENCY), smoothed too.
POCHA_SHED_MOVE_TIME = float(ENV.get("POCHA_SHED_MOVE_TIME", "0.1"))
POCHA_SHED_HTTP_WAIT = float(ENV.get("POCHA_SHED_HTTP_WAIT", "0.5"))
POCHA_SHED_RETRY_AFTER = int(ENV.get("POCHA_SHED_RETRY_AFTER", "10"))
# HTTP requests a server process runs at once (each in a thread that takes turns with the event loop);
# the others wait on the loop (pocha_site/http_limit.py).  0: no limit.
POCHA_HTTP_CONCURRENCY = int(ENV.get("POCHA_HTTP_CONCURRENCY", "1"))

# The beat sweeper plays every overdue step (a bot's move, a table to fill) that a lost task left behind.
CELERY_BEAT_SCHEDULE = {
    "pocha-sweep-due": {"task": "games.tasks.sweep_due", "schedule": 2.0},
    # Sockets of ASGI processes that stopped beating (killed, frozen) stop counting, even if none is left.
    "pocha-sweep-presence": {"task": "games.tasks.sweep_presence", "schedule": POCHA_PRESENCE_BEAT},
}
