"""A study job's sign of life (``games.study.worker.beating``, ``games.study.analyses.touch``): a worker that
searches for a long time keeps its job, a worker that lost its claim writes nothing more, and the yardsticks'
and pars' «working» marks are renewed the same way.  The job taken up after a worker's death, through the
real worker processes: ``tests/faults/test_analysis_worker.py`` (Celery) and
``tests/live/test_analysis_restart.py`` (the server's own thread)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from django.db import connections
from django.utils import timezone
from test_analysis_site import finished_game, quick  # noqa: F401 (the fixture: short games, few worlds)

from games.models import Analysis, Table
from games.study import analyses, worker
from games.table.actions.practice import do_play_again

pytestmark = pytest.mark.django_db


def test_beating_signs_while_the_search_runs_and_stops_once_the_job_is_lost(settings: Any) -> None:
    settings.POCHA_ANALYSIS_STALE = 0  # a sign every 0.05 s
    signed = threading.Event()
    calls: list[str] = []

    def search(function: Any, *args: Any) -> Any:
        assert signed.wait(60), "the job never signed its life while the search ran"
        return function(*args)

    def touch() -> bool:
        calls.append(threading.current_thread().name)
        if len(calls) == 3:
            signed.set()
        return True

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="search") as searcher:
        assert worker.beating(search, touch, searcher)(sum, [1, 2, 3]) == 6
    assert len(calls) >= 3
    # the signs come from the job's own thread (its own database connection), not the search's
    assert set(calls) == {threading.current_thread().name}

    lost = threading.Event()
    told: list[bool] = []

    def slow(function: Any, *args: Any) -> Any:
        assert lost.wait(60)
        threading.Event().wait(0.5)  # time enough for more signs, if the job kept signing a lost claim
        return function(*args)

    def gone() -> bool:
        told.append(False)
        if len(told) == 2:
            lost.set()
            return False
        return True

    with ThreadPoolExecutor(max_workers=1) as searcher:
        assert worker.beating(slow, gone, searcher)(max, [4, 7]) == 7
    assert len(told) == 2  # not signed again once lost, and the search's result still returned


def test_a_claim_taken_over_writes_nothing_more(settings: Any) -> None:
    table, ana = finished_game("ana")
    analyses.do_request(table.pk, ana)
    first = analyses.claim()
    assert first is not None and first.started_at is not None
    assert analyses.touch(first)
    assert analyses.claim() is None  # signed a moment ago: nobody else takes it
    settings.POCHA_ANALYSIS_STALE = 0  # the first worker falls silent
    second = analyses.claim()
    assert second is not None and second.pk == first.pk and second.started_at != first.started_at
    assert not analyses.touch(first) and analyses.touch(second)
    searched: list[int] = []

    def counting(function: Any, record: Any, number: int, **kwargs: Any) -> Any:
        searched.append(number)
        return function(record, number, **kwargs)

    analyses.run(first, counting)  # the old worker searches round 1, cannot save it, and stops
    assert searched == [1]
    kept = Analysis.objects.get(pk=first.pk)
    assert kept.status == Analysis.Status.RUNNING and kept.rounds_done == 0 and kept.started_at == second.started_at
    analyses.run(second, counting)
    kept.refresh_from_db()
    assert kept.status == Analysis.Status.DONE and kept.rounds_done == kept.rounds_total == 2
    assert searched == [1, 1, 2]


@pytest.mark.django_db(transaction=True)
def test_a_slow_worker_keeps_its_analysis_while_it_searches(settings: Any) -> None:
    """The first round's search takes more than twice the silence after which a job is taken up; meanwhile
    another worker looks again and again and never gets it, and each round is searched once."""
    settings.POCHA_ANALYSIS_STALE = 2  # signs every 0.4 s; a search of 5 s
    table, ana = finished_game("ana")
    analysis = analyses.do_request(table.pk, ana)
    searched: list[int] = []
    beats: set[Any] = set()
    errors: list[BaseException] = []

    def slow(function: Any, record: Any, number: int, **kwargs: Any) -> Any:
        searched.append(number)
        if number == 1:
            threading.Event().wait(5)
        return function(record, number, **kwargs)

    def run() -> None:
        try:
            assert worker.work(slow) == 1
        except BaseException as error:  # noqa: BLE001 (reported by the test's own thread)
            errors.append(error)
        finally:
            connections.close_all()

    job = threading.Thread(target=run)
    job.start()
    while Analysis.objects.filter(pk=analysis.pk, status=Analysis.Status.QUEUED).exists():  # its worker claims it
        assert job.is_alive(), errors
        threading.Event().wait(0.02)
    looks = 0
    while job.is_alive():
        assert analyses.claim() is None, "another worker took up a job whose worker was alive and searching"
        looks += 1
        row = Analysis.objects.filter(pk=analysis.pk).values("rounds_done", "beat_at").first()
        if row and row["rounds_done"] == 0 and row["beat_at"] is not None:
            beats.add(row["beat_at"])
        threading.Event().wait(0.1)
    job.join()
    assert not errors, errors
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE and searched == [1, 2]
    assert looks > 10
    assert len(beats) >= 3, f"the job signed its life {len(beats)} time(s) during a 5 s search"


def test_a_practice_yardstick_mark_is_renewed_and_a_lost_one_is_not() -> None:
    table, ana = finished_game("ana")
    practice_table = do_play_again(ana, table.pk, 1)
    claimed = worker.practice.claim()
    assert claimed is not None and claimed.pk == practice_table.pk
    mark = worker.practice_mark(claimed)
    before = Table.objects.get(pk=claimed.pk).practice_baseline
    assert set(before) == {"working"}
    threading.Event().wait(0.01)
    assert mark.touch()
    after = Table.objects.get(pk=claimed.pk).practice_baseline
    assert set(after) == {"working"} and after["working"] > before["working"]
    stale = worker.practice_mark(Table.objects.get(pk=claimed.pk))
    stale.mark = before  # a worker whose claim another one renewed since
    assert not stale.touch()
    assert Table.objects.get(pk=claimed.pk).practice_baseline == after


def test_a_starting_worker_knows_when_a_held_job_may_be_taken_up(settings: Any) -> None:
    """``worker.next_takeover``: what a Celery worker that starts waits before it looks again."""
    settings.POCHA_ANALYSIS_STALE = 10
    assert worker.next_takeover() is None  # nothing held
    table, ana = finished_game("ana")
    analyses.do_request(table.pk, ana)
    assert worker.next_takeover() is None  # queued, not held: taken at once by any look
    claimed = analyses.claim()
    assert claimed is not None
    wait = worker.next_takeover()
    assert wait is not None and 5 < wait <= 10
    Analysis.objects.filter(pk=claimed.pk).update(beat_at=timezone.now() - timedelta(seconds=4))
    wait = worker.next_takeover()
    assert wait is not None and 5 < wait <= 6
    Analysis.objects.filter(pk=claimed.pk).update(beat_at=timezone.now() - timedelta(seconds=30))
    assert worker.next_takeover() == 0
    # a yardstick held a moment ago counts too: the first to fall silent decides
    practice_table = do_play_again(ana, table.pk, 1)
    assert worker.practice.claim() is not None
    Analysis.objects.filter(pk=claimed.pk).delete()
    wait = worker.next_takeover()
    assert wait is not None and 5 < wait <= 10
    Table.objects.filter(pk=practice_table.pk).update(practice_baseline={"bid": 1, "tricks": 1, "points": 12})
    assert worker.next_takeover() is None
