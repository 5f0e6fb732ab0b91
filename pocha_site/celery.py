"""The Celery app: worker and beat run the turn clock when REDIS_URL is set.

Redis going away and coming back (a restart, a failover) must not leave the clock dead:

* the worker retries the broker for ever, at startup and after a loss, at most 2 s apart, and beat
  logs a sweep it could not send and sends the next one;
* the broker's sockets are health-checked and kept alive, so a half-open one is noticed;
* a publish from a web process (arming a bot's timer) gives up after about half a second instead of
  holding the move's thread: a lost timer is caught by the beat sweeper within seconds;
* ``PochaConsumer`` works around a crash of kombu's Redis transport: when the connection drops while
  the worker holds unacknowledged messages (every armed timer with an ETA is one), closing the
  broken connection tries to put them back through a pool whose connection was already collected,
  and raises ``AttributeError: 'NoneType' object has no attribute 'hostname'``.  Celery treats that
  as an «Unrecoverable error» and the worker (and an embedded beat) exits.  Here the error is logged
  and the consumer reconnects as for any connection loss.  The messages stay in Redis's ``unacked``
  set and come back after the visibility timeout; meanwhile the sweeper plays every overdue step, and
  ``do_due`` is idempotent, so a step that comes back twice is played once.

The worker keeps its database connections between tasks (``KeptConnectionsFixup``): Celery's Django
fixup closes them before and after every task, so each bot's move and each deal would open a new
PostgreSQL connection, whose new backend process costs the database more than the task's own queries.

Supervision (``deploy/supervisord.conf``, the systemd units) restarts a worker or beat that exits
anyway.

A worker that starts (``worker_ready``) looks for study work at once and again once a claim left by a worker
that died just before is silent enough to be taken up (``POCHA_ANALYSIS_STALE``): an analysis cut short by a
worker's death goes on as soon as a worker is back, even without beat (whose ``sweep_study`` looks every 2 s).
"""

from __future__ import annotations

import functools
import logging
import os
from typing import Any

from celery import Celery
from celery.fixups.django import DjangoFixup, DjangoWorkerFixup
from celery.signals import worker_ready
from celery.worker.consumer import Consumer

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pocha_site.settings")

log = logging.getLogger(__name__)


#: The worker tries the broker again this often (seconds) once it has lost it: 0.5, 1, 1.5, 2, 2, 2…
#: (Celery's own steps grow to 30 s, so a worker could sleep on long after Redis is back.)
RECONNECT_INTERVALS = {"interval_start": 0.5, "interval_step": 0.5, "interval_max": 2.0}


class PochaConsumer(Consumer):
    """The worker's consumer, which survives kombu's ``'NoneType' object has no attribute 'hostname'``
    (and the like) while it closes a connection that Redis dropped, and retries every 2 s at most."""

    def ensure_connected(self, conn: Any) -> Any:
        retry = conn.ensure_connection
        conn.ensure_connection = functools.partial(retry, **RECONNECT_INTERVALS)
        try:
            return super().ensure_connected(conn)
        finally:
            del conn.ensure_connection

    def on_connection_error_after_connected(self, exc: Exception) -> None:
        try:
            super().on_connection_error_after_connected(exc)
        except (AttributeError, TypeError):
            # The base method clears ``self.connection`` before it closes the old one, where this is
            # raised; what it would do after (cancel acks_late tasks) does not apply: no task is acks_late.
            log.warning(
                "broker connection lost (%r); the old connection could not be closed cleanly, reconnecting anyway",
                exc,
                exc_info=True,
            )
            self.connection = None


class KeptConnectionsWorkerFixup(DjangoWorkerFixup):
    """Around each task, Django's own rule for a kept connection instead of Celery's close: a connection
    older than ``CONN_MAX_AGE``, or one that failed (PostgreSQL restarted), is closed and the next query
    opens a new one; a good one is kept, and health-checked (``CONN_HEALTH_CHECKS``) by its next query.
    A forked child still drops the connections it inherited (``on_worker_process_init``, unchanged)."""

    def close_database(self, **kwargs: Any) -> None:
        self._db.close_old_connections()


class KeptConnectionsFixup(DjangoFixup):
    @property
    def worker_fixup(self) -> DjangoWorkerFixup:
        if self._worker_fixup is None:
            self._worker_fixup = KeptConnectionsWorkerFixup(self.app)
        return self._worker_fixup

    @worker_fixup.setter
    def worker_fixup(self, value: DjangoWorkerFixup) -> None:
        self._worker_fixup = value


def fixup(app: Celery) -> DjangoFixup | None:
    """Celery's Django fixup (``celery.fixups.django.fixup``), with ``KeptConnectionsWorkerFixup``."""
    if not os.environ.get("DJANGO_SETTINGS_MODULE"):
        return None
    return KeptConnectionsFixup(app).install()


app = Celery("pocha_site", fixups=["pocha_site.celery:fixup"])
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    worker_consumer="pocha_site.celery:PochaConsumer",
    # Reconnect for ever (the default gives up after 100 attempts, and the worker exits), at startup too.
    broker_connection_retry=True,
    broker_connection_retry_on_startup=True,
    broker_connection_max_retries=None,
    broker_connection_timeout=5,
    # A channel error (a Redis error reply while reconnecting) is retried like a connection error.
    broker_channel_error_retry=True,
    broker_transport_options={
        "socket_connect_timeout": 5,
        "socket_keepalive": True,
        # PING an idle connection before using it when it has been idle this long (seconds).
        "health_check_interval": 10,
    },
    # Publishing from a web process (a bot's timer) while Redis is down: a few quick tries, then give up
    # (the sweeper catches the step) rather than hold the player's move.
    task_publish_retry=True,
    task_publish_retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2},
    # No task is acks_late, so this changes nothing but the pending-deprecation warning at every loss.
    worker_cancel_long_running_tasks_on_connection_loss=True,
    # The worker's own heartbeats and events are not used; fewer sockets to lose.
    worker_send_task_events=False,
    # The tasks live with the rest of the live transport (games/live/), not in an app's ``tasks`` module.
    imports=("games.live.tasks",),
)


@worker_ready.connect
def look_for_study_work(sender: Any = None, **kwargs: Any) -> None:
    """The worker is up: study work is looked for now (work whose message was lost while no worker ran) and
    once more when the first job held by a worker (its dead predecessor, say) has been silent long enough to
    be taken up (``games.study.worker.next_takeover``)."""
    from django.db import close_old_connections, connections

    from games.study import worker

    try:
        close_old_connections()
        app.send_task("games.tasks.run_study")
        wait = worker.next_takeover()
        if wait is not None:
            app.send_task("games.tasks.run_study", countdown=wait + 0.5)
    except Exception:
        log.warning("the worker could not send for the study work at its start; beat's sweep will", exc_info=True)
    finally:
        connections.close_all()  # the worker's main process runs no task: it keeps no connection


def ping(timeout: float = 1.0) -> Any:
    """The workers that answer within ``timeout`` (for ``make status``)."""
    return app.control.ping(timeout=timeout)
