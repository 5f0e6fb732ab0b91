"""Shedding load instead of collapsing: is this server process past what it can serve?

Each ASGI process watches its own bottlenecks from its event loop (``watch``, started by
``games.live.loop.bind_loop``):

* **the event loop's lag**: how late a short sleep wakes up — every socket's frames, pushes and redraws
  wait behind it;
* **the database threads' wait**: how long a no-op waits for the threads the per-move path's database
  calls go through (``games.live.hotpath``);
* **the process's CPU**: the share of one core its threads use together.  Python runs one thread at a
  time, so a process near a whole core has no room left, yet its loop can still wake on time: HTTP
  requests (each in a thread of its own) take turns with it every few hundred microseconds, and every
  move waits its turn many times over.  A ramp of new tables is mostly such requests;
* **the moves' time**: how long a socket's move takes on the server (its database call, its push sent),
  noted by the consumer (``note_move``) — what the players feel, whatever the cause (a machine whose
  cores are all busy shows in none of the above);
* **the HTTP requests' wait**: how long requests wait for their turn (``games.live.http_limit`` runs a
  few at a time, ``note_http_wait``).

All are smoothed (an exponentially weighted mean over about a second).  When any passes its limit
(``POCHA_SHED_LOOP_LAG``, ``POCHA_SHED_DB_WAIT``, ``POCHA_SHED_MOVE_TIME``, ``POCHA_SHED_HTTP_WAIT`` in
seconds, ``POCHA_SHED_CPU`` as a share of a core) the process is *full*: new tables and quick play are
refused with «Sala llena, prueba en un momento» (HTTP 503 with ``Retry-After``), while every running game
goes on.  It is free again only once all are back under
their release levels (half the limit for the waits, 0.8 of it for the CPU: hysteresis, so that it does
not flap at the edge).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from games.live import hotpath

log = logging.getLogger(__name__)

#: Seconds between two readings of the loop's lag, and of the database thread's wait.
LAG_PERIOD = 0.1
DB_PERIOD = 0.25
#: Weight of a new reading in the smoothed means (about a second of readings counts).
WEIGHT = 0.2


class _State:
    def __init__(self) -> None:
        self.loop_lag = 0.0
        self.db_wait = 0.0
        self.cpu = 0.0
        self.move_time = 0.0
        self.http_wait = 0.0
        self.full = False
        self.refused = 0
        self.watching = False


state = _State()


#: A signal is back to normal under this share of its limit (loop lag, database wait, CPU, move time,
#: HTTP wait).
RELEASE = (0.5, 0.5, 0.8, 0.5, 0.5)

#: Samples noted since the loop watcher's last reading: [sum, count] of move times and of HTTP waits.
_moves = [0.0, 0]
_http = [0.0, 0]
#: Readings with no sample after which a sampled signal starts decaying towards 0 (a quiet second).
QUIET_READINGS = 10


def limits() -> tuple[float, float, float, float, float]:
    return (
        float(settings.POCHA_SHED_LOOP_LAG),
        float(settings.POCHA_SHED_DB_WAIT),
        float(settings.POCHA_SHED_CPU),
        float(settings.POCHA_SHED_MOVE_TIME),
        float(settings.POCHA_SHED_HTTP_WAIT),
    )


def _note(samples: list[Any], seconds: float) -> None:
    samples[0] += seconds
    samples[1] += 1


def note_move(seconds: float) -> None:
    """A socket's move took this long on the server (its database call, the push sent); on the loop."""
    _note(_moves, seconds)


def note_http_wait(seconds: float) -> None:
    """An HTTP request waited this long for its turn (``games.live.http_limit``); on the loop."""
    _note(_http, seconds)


def _sampled(value: float, samples: list[Any], quiet: int) -> tuple[float, int]:
    """The smoothed ``value`` after this reading's samples (reset), and the count of quiet readings."""
    total, count = samples
    samples[0], samples[1] = 0.0, 0
    if count:
        return value + WEIGHT * (total / count - value), 0
    quiet += 1
    return (value - WEIGHT * value if quiet >= QUIET_READINGS else value), quiet


def _update() -> None:
    signals = [
        (value, limit, release)
        for value, limit, release in zip(
            (state.loop_lag, state.db_wait, state.cpu, state.move_time, state.http_wait), limits(), RELEASE, strict=True
        )
        if limit > 0
    ]
    if not signals:
        state.full = False
        return
    over = any(value > limit for value, limit, _ in signals)
    under = all(value < limit * release for value, limit, release in signals)
    if over and not state.full:
        log.warning(
            "server full: loop lag %.0f ms, database wait %.0f ms, CPU %.0f %% of a core, move %.0f ms,"
            " HTTP wait %.0f ms",
            state.loop_lag * 1000,
            state.db_wait * 1000,
            state.cpu * 100,
            state.move_time * 1000,
            state.http_wait * 1000,
        )
        state.full = True
    elif under and state.full:
        log.warning("server no longer full (%s new tables refused)", state.refused)
        state.full = False


def is_full() -> bool:
    """Whether this process refuses new tables now (read from any thread)."""
    return state.full


async def _watch_loop() -> None:
    loop = asyncio.get_running_loop()
    cpu_start = time.process_time()
    quiet_moves = quiet_http = 0
    _moves[:] = [0.0, 0]
    _http[:] = [0.0, 0]
    while True:
        start = loop.time()
        await asyncio.sleep(LAG_PERIOD)
        now, cpu_now = loop.time(), time.process_time()
        lag = max(0.0, now - start - LAG_PERIOD)
        state.loop_lag += WEIGHT * (lag - state.loop_lag)
        cpu = (cpu_now - cpu_start) / max(now - start, 1e-3)  # every thread of this process
        state.cpu += WEIGHT * (cpu - state.cpu)
        cpu_start = cpu_now
        state.move_time, quiet_moves = _sampled(state.move_time, _moves, quiet_moves)
        state.http_wait, quiet_http = _sampled(state.http_wait, _http, quiet_http)
        _update()


async def _watch_db() -> None:
    while True:
        await asyncio.sleep(DB_PERIOD)
        start = time.monotonic()
        await hotpath.probe()
        state.db_wait += WEIGHT * (time.monotonic() - start - state.db_wait)
        _update()


async def watch() -> None:
    """Measure them all, forever, on this process's loop."""
    state.watching = True
    try:
        await asyncio.gather(_watch_loop(), _watch_db())
    finally:
        state.watching = False
        state.full = False  # nothing measures it any more (the loop is going away)
        state.loop_lag = state.db_wait = state.cpu = state.move_time = state.http_wait = 0.0


def refuse_when_full(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A view that starts a new table: refused with «Sala llena» (503) while this process is full."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if is_full():
            state.refused += 1
            response = render(
                request,
                "games/full.html",
                {"message": _("Sala llena, prueba en un momento.")},
                status=503,
            )
            response["Retry-After"] = str(int(settings.POCHA_SHED_RETRY_AFTER))
            # Refusing is the server working as meant, not an error: one warning per full spell (``_update``)
            # rather than one error line per refused request just when the server is busiest.
            response._has_been_logged = True  # type: ignore[attr-defined]
            return response
        return view(request, *args, **kwargs)

    return wrapper
