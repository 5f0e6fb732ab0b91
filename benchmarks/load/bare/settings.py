"""Settings of the bare stack (``DJANGO_SETTINGS_MODULE=bare.settings``, with ``benchmarks/load`` on the path).

DATABASE_URL and REDIS_URL as the site reads them; the database connection and the channel layer are
configured like the site's (``pocha_site/settings.py``): persistent connections with health checks, and
channels_redis with a 10 s socket timeout.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

HERE = Path(__file__).resolve().parent

DEBUG = False
SECRET_KEY = "bare-stack-load-test-only"  # noqa: S105 (no sessions, no signing: nothing to protect)
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "bare.urls"
ASGI_APPLICATION = "bare.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": False,
        "OPTIONS": {},  # DEBUG off: Django's cached loader, as on the site
    }
]

DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=600, conn_health_checks=True)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [{"address": os.environ["REDIS_URL"], "socket_timeout": 10}], "prefix": "bare"},
    }
}

LANGUAGE_CODE = "es"
USE_I18N = True
USE_TZ = True
TIME_ZONE = "Europe/Madrid"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}
