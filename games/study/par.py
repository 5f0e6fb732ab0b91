"""A duplicate tournament's par: every deal of its game played again by difícil in every seat (the same cards
the tables were dealt), worked out by the worker once the tournament has started and kept on it
(``Tournament.par``).  Once both the par is known and the tournament is over, the results far from it are
flagged for staff (``games.tournaments.fairplay``)."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from games.engine import analysis as engine_analysis
from games.models import Tournament
from games.study.analyses import Compute, direct
from games.tournaments import fairplay

log = logging.getLogger(__name__)


def _waiting() -> Q:
    cutoff = (timezone.now() - timedelta(seconds=float(settings.POCHA_ANALYSIS_STALE))).isoformat()
    return Q(
        format=Tournament.Format.DUPLICATE,
        status__in=[Tournament.Status.PLAYING, Tournament.Status.FINISHED],
    ) & (Q(par__isnull=True) | Q(par__working__lt=cutoff))


def has_work() -> bool:
    return Tournament.objects.filter(_waiting()).exists()


def claim() -> Tournament | None:
    """A started duplicate tournament without its par, now this worker's (compare-and-set on the field)."""
    for _attempt in range(5):
        row = Tournament.objects.filter(_waiting()).order_by("pk").values_list("pk", "par").first()
        if row is None:
            return None
        pk, before = row
        same = Q(par__isnull=True) if before is None else Q(par=before)
        if Tournament.objects.filter(same, pk=pk).update(par={"working": timezone.now().isoformat()}):
            return Tournament.objects.get(pk=pk)
    return None


def run(tournament: Tournament, compute: Compute = direct) -> dict[str, object] | None:
    """Play the par and keep it; flag the results far from it if the tournament is over."""
    inputs = fairplay.par_inputs(tournament)
    if inputs is None:
        Tournament.objects.filter(pk=tournament.pk).update(par=None)
        return None
    try:
        points = compute(engine_analysis.play_deals, **inputs, seed=int(tournament.seed or tournament.pk))
    except Exception as error:
        log.exception("the par of tournament %s failed", tournament.pk)
        Tournament.objects.filter(pk=tournament.pk).update(par={"error": type(error).__name__})
        return None
    par = {"rounds": inputs["rounds"], "points": points}
    with transaction.atomic():
        locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
        locked.par = par
        locked.save(update_fields=["par"])
        if locked.status == Tournament.Status.FINISHED:
            fairplay.flag(locked)
    return par


def renew_mark(tournament_id: int, last: object, mark: dict[str, str]) -> bool:
    """The par's «working» mark renewed (the worker's sign of life, ``games.study.worker``), if it is still
    ``last``, the one that worker wrote: False if the job is no longer that worker's (a compare-and-set)."""
    return bool(Tournament.objects.filter(pk=tournament_id, par=last).update(par=mark))


def release_marks(mark: dict[str, str]) -> int:
    """Every par a worker is working on marked ``mark`` (``games.study.worker.release_held``): how many."""
    return Tournament.objects.filter(par__has_key="working").update(par=mark)
