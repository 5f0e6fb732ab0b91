"""What each pytest-xdist worker keeps to itself when the suite runs in parallel (``-n``).

* Its test database: pytest-django names it per worker (``test_pocha_gw0``; the SQLite test file is per
  process already, see ``pocha_site.settings``).
* Its ports: every server the tests start takes a free port from the kernel (``support.server``).
* Its files: tests write under their own ``tmp_path`` (a base per worker).
* Its Redis, in services mode: a Redis database number of its own (``redis://host:6379/N`` becomes
  ``/N+1+i`` for worker ``gwi``; emptied when the worker starts), so that the channel layer's groups (``table-1`` exists in every worker's
  database), the Celery queue (a worker's Celery would play another worker's timers) and the cache never
  meet.  The hub's pub/sub channels (one per table), which ignore database numbers, are named after the
  database and Redis in use (``games.live.hub.prefix``), so they differ per worker too; an explicit
  ``POCHA_HUB_CHANNEL`` gets the worker's name appended.

Django's settings are read before any conftest (pytest-django sets Django up first), so ``isolate`` changes
the environment (for the servers and workers the tests start) and the settings that were made from it.
"""

from __future__ import annotations

import os
import urllib.parse

#: Redis's default number of databases (``databases 16``).
REDIS_DATABASES = 16


def worker_index() -> int | None:
    """0 for ``gw0``, ... under pytest-xdist; None in a run without workers."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker.removeprefix("gw")) if worker.startswith("gw") else None


def worker_redis_url(url: str, index: int) -> str:
    """``url`` on a database number of the worker's own: the URL's number + 1 + ``index``."""
    parts = urllib.parse.urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    number = base + 1 + index
    if number >= REDIS_DATABASES:
        raise RuntimeError(
            f"worker gw{index} would use Redis database {number} of {REDIS_DATABASES}: run fewer workers (-n) "
            f"or point REDIS_URL at a lower database than {base}"
        )
    return urllib.parse.urlunsplit(parts._replace(path=f"/{number}"))


def isolate() -> None:
    """Give this worker its own Redis database (and hub channel), in the environment and the settings."""
    index = worker_index()
    url = os.environ.get("REDIS_URL")
    if index is None or not url:
        return
    from django.conf import settings
    from django.core.signals import setting_changed

    from pocha_site.settings import cache_settings, channel_layer_settings

    mine = worker_redis_url(url, index)
    os.environ["REDIS_URL"] = mine
    changed = {
        "REDIS_URL": mine,
        "CELERY_BROKER_URL": mine,
        "CHANNEL_LAYERS": channel_layer_settings({"REDIS_URL": mine}),
        "CACHES": cache_settings({"REDIS_URL": mine}),
    }
    if settings.POCHA_HUB_CHANNEL:
        changed["POCHA_HUB_CHANNEL"] = os.environ["POCHA_HUB_CHANNEL"] = f"{settings.POCHA_HUB_CHANNEL}-gw{index}"
    for name, value in changed.items():
        setattr(settings, name, value)
        setting_changed.send(sender=type(settings), setting=name, value=value, enter=True)
    from pocha_site.celery import app

    app.conf.broker_url = mine
    # The database is this worker's alone: what an earlier run left in it (timers armed for the tables of
    # an earlier test database, whose ids the new one reuses, channel groups, counters) goes.
    import redis

    redis.Redis.from_url(mine).flushdb()
