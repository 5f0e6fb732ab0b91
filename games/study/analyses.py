"""«Analizar la partida»: asking for a finished game's analysis, the queue, and the job that works it out.

Only the people who played the game may ask, once it is over; an analysis is kept with the table, so whoever
looks next (a player or, on a public table, anyone who may see its replay) gets it at once.  One analysis at
a time per person: while theirs waits or runs, asking for another is refused with the table it is for.
The queue is first come, first served; a waiting analysis's place counts the ones asked for before it that
have not finished (the running ones included).

The job (``run``) takes the oldest waiting analysis with a compare-and-set on its status, so that two
workers never work on the same one, and analyses the game round by round from its record
(``games.engine.analysis.analyse_round``: every decision from its seat's view, a fixed number of worlds from
the analysis's seed, so the same seed gives the same marks).  Each finished round is saved as it comes: the
page's progress bar fills from ``rounds_done``.

A claim is the worker's: its ``started_at`` is the claim's own mark, and every later write of that worker
(``touch``, a round saved, the end) is a compare-and-set on it, so that a worker that lost its claim writes
nothing more.  While it searches, the worker signs its life (``touch``, ``beat_at``) every fifth of
``POCHA_ANALYSIS_STALE`` (``games.study.worker.beating``); an analysis not heard from for that long (10 s) is
taken up again by the next worker that looks, from its last saved round: its worker died.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from games.engine import analysis as engine_analysis
from games.models import Analysis, Seat, Table
from games.table import access, events, history
from games.table.actions.common import User, lock_person
from games.table.errors import ActionError

log = logging.getLogger(__name__)

#: ``compute(function, *args)``: where the searching runs (the worker's own process, or a process of its own).
Compute = Callable[..., Any]


def direct(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return function(*args, **kwargs)


def worlds() -> int:
    return int(settings.POCHA_ANALYSIS_WORLDS) or engine_analysis.DEFAULT_WORLDS


def can_request(table: Table, user: User, seats: list[Seat]) -> bool:
    """Whether «Analizar la partida» is offered to ``user``: a finished game (not a practice hand) they played."""
    return (
        table.status == Table.Status.FINISHED
        and not table.is_practice
        and table.first_dealer is not None
        and access.player_seat(seats, user) is not None
    )


def do_request(table_id: int, user: User) -> Analysis:
    """Ask for the analysis of a finished game one played: the analysis (new and queued, or the one kept
    already: waiting, running or done).  A failed one is queued again.  ActionError, changing nothing, for a
    table one may not see, a game not over or not played by them, or while another of theirs is pending."""
    if not user.is_authenticated:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    with transaction.atomic():
        lock_person(user)  # one pending analysis each: the check and the new row in one step for them
        table, seats, _mine = access.finished_game_played(
            table_id,
            user,
            not_player=_("Solo quienes jugaron la partida pueden pedir su análisis."),
            practice=_("Una mano de práctica no se analiza."),
        )
        kept = Analysis.objects.select_for_update().filter(table=table).first()
        if kept is not None and kept.status != Analysis.Status.FAILED:
            return kept
        other = (
            Analysis.objects.filter(requested_by_id=user.pk, status__in=PENDING)
            .exclude(table=table)
            .values_list("table_id", flat=True)
            .first()
        )
        if other is not None:
            raise ActionError(
                "one_at_a_time",
                _("Ya tienes un análisis en marcha (mesa %(id)s): espera a que termine para pedir otro."),
                params={"id": other},
            )
        record = history.record(table, log=history.read_log(table, seats))
        if record is None:
            raise ActionError("not_finished", _("La partida aún no ha terminado: se analiza al acabar."))
        fields = {
            "status": Analysis.Status.QUEUED,
            "requested_by_id": user.pk,
            "requested_at": timezone.now(),
            "started_at": None,
            "beat_at": None,
            "finished_at": None,
            "seed": table.seed if table.seed is not None else table.pk,
            "worlds": worlds(),
            "rounds_total": engine_analysis.rounds_in(record),
            "rounds_done": 0,
            "rounds": [],
            "summary": None,
            "error": "",
        }
        if kept is None:
            kept = Analysis.objects.create(table=table, **fields)
        else:
            for name, value in fields.items():
                setattr(kept, name, value)
            kept.save()
        events.emit(events.StudyQueued())
        return kept


PENDING = (Analysis.Status.QUEUED, Analysis.Status.RUNNING)


def place(analysis: Analysis) -> int:
    """A pending analysis's place in the queue, from 1: the pending ones asked for before it, and itself."""
    earlier = Q(requested_at__lt=analysis.requested_at) | Q(requested_at=analysis.requested_at, pk__lt=analysis.pk)
    return 1 + Analysis.objects.filter(earlier, status__in=PENDING).count()


def status_of(analysis: Analysis) -> dict[str, Any]:
    """What the page's progress shows: the status, the place in the queue, the rounds done of how many."""
    total = max(1, analysis.rounds_total)
    return {
        "status": analysis.status,
        "place": place(analysis) if analysis.status == Analysis.Status.QUEUED else None,
        "done": analysis.rounds_done,
        "total": analysis.rounds_total,
        "percent": round(100 * analysis.rounds_done / total),
    }


# -- the job --------------------------------------------------------------------------------------


def _stale() -> Q:
    """Running analyses whose worker has not signed its life for ``POCHA_ANALYSIS_STALE`` seconds."""
    cutoff = timezone.now() - timedelta(seconds=float(settings.POCHA_ANALYSIS_STALE))
    return Q(status=Analysis.Status.RUNNING) & (Q(beat_at__lt=cutoff) | Q(beat_at__isnull=True))


def _mine(analysis: Analysis) -> Q:
    """The row as long as it is still this worker's claim: running, and claimed when this one claimed it."""
    return Q(pk=analysis.pk, status=Analysis.Status.RUNNING, started_at=analysis.started_at)


def touch(analysis: Analysis) -> bool:
    """The worker's sign of life on the analysis it is working out: whether it is still its own (False once
    another worker took it up, or it was asked for again after a failure)."""
    return bool(Analysis.objects.filter(_mine(analysis)).update(beat_at=timezone.now()))


def claim() -> Analysis | None:
    """The oldest waiting analysis (or a running one whose worker went quiet), now this worker's: None if
    there is none.  A compare-and-set on the row's status and sign of life: another worker that read the same
    row loses and looks again.  The claim's time (``started_at``) marks it as this worker's."""
    for _attempt in range(5):
        candidate = (
            Analysis.objects.filter(Q(status=Analysis.Status.QUEUED) | _stale())
            .order_by("requested_at", "pk")
            .values_list("pk", "status", "beat_at")
            .first()
        )
        if candidate is None:
            return None
        pk, status, beat_at = candidate
        now = timezone.now()
        won = Analysis.objects.filter(pk=pk, status=status, beat_at=beat_at).update(
            status=Analysis.Status.RUNNING, beat_at=now, started_at=now
        )
        if won:
            return Analysis.objects.get(pk=pk)
    return None


def run(analysis: Analysis, compute: Compute = direct) -> Analysis:
    """Work out ``analysis`` from its next round to the end, saving each round as it is done."""
    table = Table.objects.get(pk=analysis.table_id)
    record = history.record(table)
    if record is None:
        return _fail(analysis, "the game has no record")
    rounds = list(analysis.rounds)[: analysis.rounds_done]
    try:
        for number in range(len(rounds) + 1, analysis.rounds_total + 1):
            done = compute(engine_analysis.analyse_round, record, number, seed=analysis.seed, worlds=analysis.worlds)
            rounds.append(done.as_json())
            saved = Analysis.objects.filter(_mine(analysis)).update(
                rounds=rounds, rounds_done=number, beat_at=timezone.now()
            )
            if not saved:  # taken up by another worker, queued again (a new request after a failure) or gone
                return analysis
        parsed = [engine_analysis.RoundAnalysis.from_json(r) for r in rounds]
        summary = engine_analysis.summary(parsed, table.size)
    except Exception as error:
        log.exception("analysis of table %s failed", table.pk)
        return _fail(analysis, f"{type(error).__name__}: {error}")
    Analysis.objects.filter(_mine(analysis)).update(
        status=Analysis.Status.DONE, summary=summary, finished_at=timezone.now(), beat_at=timezone.now()
    )
    analysis.refresh_from_db()
    return analysis


def _fail(analysis: Analysis, why: str) -> Analysis:
    Analysis.objects.filter(_mine(analysis)).update(
        status=Analysis.Status.FAILED, error=why[:200], finished_at=timezone.now()
    )
    analysis.refresh_from_db()
    return analysis


def has_work() -> bool:
    return Analysis.objects.filter(Q(status=Analysis.Status.QUEUED) | _stale()).exists()
