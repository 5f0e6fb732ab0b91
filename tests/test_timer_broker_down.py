"""With the broker down, arming a step's timer after a commit logs and returns: the move is already saved,
and the sweepers (every ASGI process, Celery beat) play the step when it is due."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone
from kombu.exceptions import OperationalError

from games.live import timers
from games.live.tasks import run_due


def test_a_timer_that_cannot_be_queued_is_logged_not_raised(settings, monkeypatch, caplog):
    settings.POCHA_CELERY_CLOCK = True
    calls = []

    def broker_down(*args, **kwargs):
        calls.append((args, kwargs))
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(run_due, "apply_async", broker_down)
    with caplog.at_level(logging.WARNING, logger="games.live.timers"):
        timers.arm(7, 3, timezone.now() + timedelta(seconds=1))
    assert len(calls) == 1 and calls[0][0] == ((7, 3),)
    assert "could not be queued" in caplog.text
