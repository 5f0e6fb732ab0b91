"""«Analizar la partida» and «Juega esta mano» through the site: who may ask, the queue and its places, the
worker's job (the real one: ``games.study.worker.work``, as the Celery task and the server's thread run it),
its progress and what the pages show; the practice table, its deal, its yardstick and its end; the profile's
figures.  Whole games here are short (two rounds, as ``test_house_rules_tables`` cuts them) and the analysis
samples few worlds: this is the site's plumbing, the analysis itself is tested in ``tests/engine``."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from live.helpers import person, play_to_the_end
from test_house_rules_tables import filled, short_schedule

from games.engine.analysis import RoundAnalysis
from games.engine.snapshot import load
from games.models import Analysis, Move, Round, Seat, Table
from games.study import analyses, practice, worker
from games.table import actions, history
from games.table.actions.practice import do_play_again
from leaderboard.models import PeriodScore

pytestmark = pytest.mark.django_db


#: Tests whose game is a whole one's first rounds (a hand-built record), not the cut schedule.
WHOLE_SCHEDULE = {"test_the_classic_blunders_are_marked_by_the_worker_and_shown_on_the_replay"}


@pytest.fixture(autouse=True)
def quick(settings: Any, monkeypatch: Any, request: pytest.FixtureRequest) -> None:
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_ROUND_PAUSE = 0
    settings.POCHA_TRICK_PAUSE = 0
    settings.POCHA_ANALYSIS_WORLDS = 6
    monkeypatch.setattr(practice, "BASELINE_WORLDS", 6)
    if request.node.name not in WHOLE_SCHEDULE:
        short_schedule(monkeypatch)


def finished_game(name: str, rules: str = "clasica", size: int = 4) -> tuple[Table, Any]:
    """A finished quick game of ``rules`` with one person (``name``) and bots."""
    user = person(name)
    table = filled(actions.do_quick_play(user, size, 0, rules=rules))
    table = play_to_the_end(table.pk)
    assert table.status == Table.Status.FINISHED
    return table, user


def page(user: Any, url: str, **extra: Any) -> Any:
    client = Client()
    client.force_login(user)
    return client.get(url, **extra)


def post(user: Any, url: str, data: dict[str, Any] | None = None, **extra: Any) -> Any:
    client = Client()
    client.force_login(user)
    return client.post(url, data or {}, **extra)


# -- asking -----------------------------------------------------------------------------------------


def test_only_a_player_of_a_finished_game_may_ask_and_nothing_changes_otherwise() -> None:
    table, ana = finished_game("ana")
    stranger = person("extraña")
    with pytest.raises(actions.ActionError) as refused:
        analyses.do_request(table.pk, stranger)
    assert refused.value.code == "not_player"
    with pytest.raises(actions.ActionError) as refused:
        analyses.do_request(999_999, ana)
    assert refused.value.code == "unknown_table"
    live = filled(actions.do_quick_play(person("bea"), 4, 0))
    with pytest.raises(actions.ActionError) as refused:
        analyses.do_request(live.pk, Seat.objects.get(table=live, is_bot=False).user)
    assert refused.value.code == "not_finished"
    assert Analysis.objects.count() == 0
    # the page says so to the one who asked, and nothing is queued
    response = post(stranger, f"/mesa/{table.pk}/analizar/", follow=True)
    assert "Solo quienes jugaron la partida pueden pedir su análisis." in response.content.decode()
    assert Analysis.objects.count() == 0
    # a player gets it queued, and a second request finds the same one
    first = analyses.do_request(table.pk, ana)
    again = analyses.do_request(table.pk, ana)
    assert first.pk == again.pk and first.status == Analysis.Status.QUEUED
    assert first.rounds_total == len(history.record(table)["rounds"]) == 2


def test_one_analysis_at_a_time_per_person_and_the_queue_counts_places() -> None:
    one, ana = finished_game("ana")
    two = filled(actions.do_quick_play(ana, 4, 0))
    two = play_to_the_end(two.pk)
    three, bea = finished_game("bea")
    mine = analyses.do_request(one.pk, ana)
    with pytest.raises(actions.ActionError) as refused:
        analyses.do_request(two.pk, ana)
    assert refused.value.code == "one_at_a_time"
    assert str(one.pk) in refused.value.message("es")
    theirs = analyses.do_request(three.pk, bea)
    assert analyses.status_of(mine)["place"] == 1
    assert analyses.status_of(theirs)["place"] == 2
    # the worker takes the oldest first; once ana's is done she may ask for the next one
    claimed = analyses.claim()
    assert claimed is not None and claimed.pk == mine.pk
    assert analyses.status_of(Analysis.objects.get(pk=theirs.pk))["place"] == 2  # the running one is ahead
    analyses.run(claimed)
    assert Analysis.objects.get(pk=mine.pk).status == Analysis.Status.DONE
    assert analyses.status_of(Analysis.objects.get(pk=theirs.pk))["place"] == 1
    assert analyses.do_request(two.pk, ana).status == Analysis.Status.QUEUED


# -- the job --------------------------------------------------------------------------------------


def test_the_worker_analyses_every_round_keeps_it_and_the_second_viewer_gets_it_at_once() -> None:
    table, ana = finished_game("ana")
    analysis = analyses.do_request(table.pk, ana)
    pending = page(ana, f"/mesa/{table.pk}/repeticion/").content.decode()
    assert 'id="analysis-progress"' in pending and "En cola: puesto 1" in pending
    status = page(ana, f"/mesa/{table.pk}/analisis/estado/")
    assert status.status_code == 200 and "<progress" in status.content.decode()

    assert worker.work() == 1
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE and analysis.rounds_done == analysis.rounds_total == 2
    rounds = [RoundAnalysis.from_json(r) for r in analysis.rounds]
    assert [r.number for r in rounds] == [1, 2]
    game = load(table.state)
    for r in rounds:
        assert len(r.par_bids) == len(r.loss) == table.size
        assert r.decisions and all(d.loss >= 0 for d in r.decisions)
        assert {d.seat for d in r.decisions} == set(range(table.size))
    assert len(analysis.summary["seats"]) == table.size
    # the status poll now asks the page to reload itself, and the page shows the analysis
    done = page(ana, f"/mesa/{table.pk}/analisis/estado/", HTTP_HX_REQUEST="true")
    assert done.status_code == 204 and done["HX-Refresh"] == "true"
    shown = page(ana, f"/mesa/{table.pk}/repeticion/").content.decode()
    assert "Por jugador" in shown and "<svg" in shown and "Ronda a ronda" in shown
    assert '"analysis"' in shown  # the script's part, with every decision by its step
    # anyone who may see the public game's replay sees the analysis, without asking for it again
    bea = person("bea")
    assert "Por jugador" in page(bea, f"/mesa/{table.pk}/repeticion/").content.decode()
    assert worker.work() == 0 and Analysis.objects.count() == 1
    assert game.is_over


def test_an_analysis_whose_worker_died_is_taken_up_from_its_last_round(settings: Any) -> None:
    table, ana = finished_game("ana")
    analysis = analyses.do_request(table.pk, ana)
    claimed = analyses.claim()
    assert claimed is not None
    # the worker saved round 1 and died
    first = analyses.run  # (the real job, stopped after one round by a compute that fails on round 2)

    def one_round(function: Any, record: Any, number: int, **kwargs: Any) -> Any:
        if number == 2:
            raise SystemExit("the worker died")
        return function(record, number, **kwargs)

    with pytest.raises(SystemExit):
        first(claimed, one_round)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.RUNNING and analysis.rounds_done == 1
    assert analyses.claim() is None  # not stale yet: nobody takes it
    settings.POCHA_ANALYSIS_STALE = 0
    seen: list[int] = []

    def counting(function: Any, record: Any, number: int, **kwargs: Any) -> Any:
        seen.append(number)
        return function(record, number, **kwargs)

    assert worker.work(counting) == 1
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE and seen == [2]


def test_a_failed_analysis_says_so_and_may_be_asked_for_again() -> None:
    table, ana = finished_game("ana")
    analyses.do_request(table.pk, ana)

    def broken(function: Any, *args: Any, **kwargs: Any) -> Any:
        raise ValueError("no")

    assert worker.work(broken) == 1
    assert Analysis.objects.get(table=table).status == Analysis.Status.FAILED
    assert "El análisis no pudo terminar" in page(ana, f"/mesa/{table.pk}/repeticion/").content.decode()
    assert analyses.do_request(table.pk, ana).status == Analysis.Status.QUEUED


def test_the_final_board_and_the_profile_offer_the_analysis() -> None:
    table, ana = finished_game("ana")
    board = page(ana, f"/mesa/{table.pk}/").content.decode()
    assert "Analizar la partida" in board and f"/mesa/{table.pk}/analizar/" in board
    profile = page(ana, "/jugador/ana/").content.decode()
    assert "Analizar la partida de la mesa" in profile
    response = post(ana, f"/mesa/{table.pk}/analizar/")
    assert response.status_code == 302 and response["Location"].endswith(f"/mesa/{table.pk}/repeticion/#analisis")
    worker.work()
    profile = page(ana, "/jugador/ana/").content.decode()
    figures = Analysis.objects.get(table=table).summary["seats"]
    mine = next(f for f in figures if f["seat"] == Seat.objects.get(table=table, user=ana).position)
    assert f"precisión {round(mine['accuracy'])} %" in profile
    assert 'id="stat-accuracy">—' not in profile
    stats = page(person("bea"), "/jugador/ana/").content.decode()
    assert "Analizar la partida de la mesa" not in stats  # only those who played it may ask


# -- «Juega esta mano» ----------------------------------------------------------------------------------


def test_a_practice_hand_deals_the_same_cards_to_the_same_seat_and_counts_for_nothing() -> None:
    table, ana = finished_game("ana")
    mine = Seat.objects.get(table=table, user=ana)
    before = PeriodScore.objects.filter(user=ana).values_list("period", "games", "net").order_by("period")
    before = list(before)
    stats = page(ana, "/jugador/ana/").content.decode()
    practice_table = do_play_again(ana, table.pk, 2)
    assert practice_table.is_practice and not practice_table.is_public and practice_table.stake == 0
    assert practice_table.status == Table.Status.PLAYING
    seat = Seat.objects.get(table=practice_table, user=ana)
    assert seat.position == mine.position
    assert Seat.objects.filter(table=practice_table, is_bot=True).count() == table.size - 1
    then = Round.objects.get(table=table, number=2)
    now = Round.objects.get(table=practice_table)
    assert now.number == 2 and now.hands == then.hands and now.trump_card == then.trump_card
    assert now.dealer == then.dealer
    # a second live table is refused while this one runs
    with pytest.raises(actions.ActionError) as refused:
        do_play_again(ana, table.pk, 1)
    assert refused.value.code == "live_elsewhere"
    # difícil's yardstick, worked out by the worker
    assert worker.work() == 1
    practice_table.refresh_from_db()
    assert set(practice_table.practice_baseline) == {"bid", "tricks", "points"}
    finished = play_to_the_end(practice_table.pk)
    assert finished.status == Table.Status.FINISHED
    game = load(finished.state)
    assert game.is_over and len(game.results) == 1 and game.results[0].number == 2
    board = page(ana, f"/mesa/{finished.pk}/").content.decode()
    assert "Tu mano, otra vez" in board and "En la partida" in board and "Difícil en tu asiento" in board
    assert "Analizar la partida" not in board and "Revancha" not in board
    # nothing counted: the rankings and the profile's figures as they were; no record, no replay
    after = list(PeriodScore.objects.filter(user=ana).values_list("period", "games", "net").order_by("period"))
    assert after == before
    assert page(ana, "/jugador/ana/").content.decode().count('data-table="') == stats.count('data-table="')
    assert page(ana, f"/mesa/{finished.pk}/repeticion/").status_code == 404
    assert page(ana, f"/mesa/{finished.pk}/partida.json").status_code == 404
    with pytest.raises(actions.ActionError) as refused:
        analyses.do_request(finished.pk, ana)
    assert refused.value.code == "practice"


def test_a_practice_hand_is_refused_with_a_reason_and_nothing_created() -> None:
    table, ana = finished_game("ana")
    bea = person("bea")
    count = Table.objects.count()
    for user, table_id, number, code in [
        (bea, table.pk, 1, "not_player"),
        (ana, table.pk, 99, "bad_round"),
        (ana, table.pk, "x", "bad_round"),
        (ana, 999_999, 1, "unknown_table"),
    ]:
        with pytest.raises(actions.ActionError) as refused:
            do_play_again(user, table_id, number)  # type: ignore[arg-type]
        assert refused.value.code == code
    response = post(ana, f"/mesa/{table.pk}/jugar-mano/", {"round": "99"}, follow=True)
    assert "Esa ronda no existe." in response.content.decode()
    assert Table.objects.count() == count
    # through the replay's form: to the new table
    response = post(ana, f"/mesa/{table.pk}/jugar-mano/", {"round": "1"})
    assert response.status_code == 302
    new = Table.objects.get(practice_of=table)
    assert response["Location"] == f"/mesa/{new.pk}/"


def test_the_replay_offers_each_round_to_the_player_only() -> None:
    table, ana = finished_game("ana")
    mine = page(ana, f"/mesa/{table.pk}/repeticion/").content.decode()
    assert "Juega esta mano" in mine and "Juega la mano de la ronda 2" in mine
    other = page(person("bea"), f"/mesa/{table.pk}/repeticion/").content.decode()
    assert "Juega esta mano" not in other and "Juega la mano de la ronda" not in other
    assert "Solo quienes jugaron la partida pueden pedir su análisis." in other


# -- hand-built positions, through the real task --------------------------------------------------------


def table_from_record(record: dict[str, Any], people: dict[int, Any]) -> Table:
    """A finished table whose log is ``record`` (a Clásica one): its rounds' rows and every move's row, in
    order, as the site writes them (each move's seat as the engine says it was that seat's turn)."""
    from django.utils import timezone

    from games.engine import Bid, Card, ChooseTrump, GameState, Play, Suit
    from games.table.history import move_fields

    names = record["players"]
    table = Table.objects.create(
        size=len(names),
        status=Table.Status.FINISHED,
        is_public=False,
        first_dealer=record["first_dealer"],
        seed=7,
        finished_at=timezone.now(),
    )
    for position, name in enumerate(names):
        user = people.get(position)
        Seat.objects.create(table=table, position=position, user=user, is_bot=user is None, name=name)
    game = GameState(names, record["first_dealer"])
    seq = 0
    for number, entry in enumerate(record["rounds"], start=1):
        game.deal([[Card.parse(c) for c in hand] for hand in entry["hands"]], Card.parse(entry["trump_card"]))
        Round.objects.create(
            table=table, number=number, dealer=game.dealer, seed=0, hands=entry["hands"], trump_card=entry["trump_card"]
        )
        steps: list[Any] = [Bid(b) for b in entry["bids"]]
        if entry.get("trump_suit"):
            steps.append(ChooseTrump(Suit.parse(entry["trump_suit"])))
        steps += [Play(Card.parse(c)) for c in entry["plays"]]
        for action in steps:
            seat = game.turn
            assert seat is not None
            game.apply(action)
            seq += 1
            kind, value = move_fields(action)
            Move.objects.create(
                table=table, seq=seq, round=number, seat=seat, kind=kind, value=value, made_at=timezone.now()
            )
    assert history.record(table) == record
    return table


def test_the_classic_blunders_are_marked_by_the_worker_and_shown_on_the_replay(settings: Any) -> None:
    from engine.test_analysis import ROUND_1, ROUND_2, ROUND_8, play_record

    settings.POCHA_ANALYSIS_WORLDS = 40
    record = play_record({1: ROUND_1, 2: ROUND_2, 8: ROUND_8}, 8)
    bea, carla = person("bea"), person("carla")
    table = table_from_record(record, {1: bea, 2: carla})
    analyses.do_request(table.pk, carla)
    assert worker.work() == 1
    analysis = Analysis.objects.get(table=table)
    assert analysis.status == Analysis.Status.DONE and analysis.rounds_done == 8
    rounds = {r["number"]: RoundAnalysis.from_json(r) for r in analysis.rounds}

    def decision(number: int, kind: str, index: int) -> Any:
        return next(d for d in rounds[number].decisions if d.kind == kind and d.index == index)

    # bidding 0 with the ace of trump when 1 is allowed (bea, round 1)
    assert (decision(1, "bid", 0).seat, decision(1, "bid", 0).best, decision(1, "bid", 0).mark) == (1, "1", "blunder")
    # leading the low trump when every trick is needed (carla, round 2)
    low = decision(2, "play", 0)
    assert (low.seat, low.played, low.best) == (2, "5e", "1e") and low.mark in ("error", "blunder")
    # the ace not shed once the bid is made (carla, round 8)
    kept = decision(8, "play", 27)
    assert (kept.seat, kept.played, kept.best, kept.mark) == (2, "5o", "1c", "blunder")
    # a forced move is never marked
    forced = [d for r in rounds.values() for d in r.decisions if d.forced]
    assert forced and all(d.mark is None and d.loss == 0 for d in forced)
    # the replay lists them, worded, and hands the script each one by its step
    shown = page(carla, f"/mesa/{table.pk}/repeticion/").content.decode()
    assert 'data-step="0:bid:0" data-mark="blunder"' in shown
    assert 'data-step="7:play:27" data-mark="blunder"' in shown
    assert "5 de oros; mejor as de copas" in shown
    # the same seed gives the same marks
    again = [d.mark for d in analyses_marks(record, analysis.seed)]
    assert again == [d.mark for n in sorted(rounds) for d in rounds[n].decisions]


def analyses_marks(record: dict[str, Any], seed: int) -> list[Any]:
    from games.engine.analysis import analyse_round

    return [d for n in range(1, 9) for d in analyse_round(record, n, seed=seed, worlds=40).decisions]


def test_a_private_games_analysis_is_for_those_who_may_see_its_replay_only() -> None:
    ana, stranger = person("ana"), person("extraña")
    table = actions.do_create_private_table(ana, 4, 0, True)
    actions.do_start(table.pk, ana, table.seq)
    table = play_to_the_end(table.pk)
    # while it was played, nothing could be asked (not finished); now its player asks
    analyses.do_request(table.pk, ana)
    worker.work()
    assert "Por jugador" in page(ana, f"/mesa/{table.pk}/repeticion/").content.decode()
    # to someone who was not at the table it does not exist: no analysis, no status, no asking
    with pytest.raises(actions.ActionError) as refused:
        analyses.do_request(table.pk, stranger)
    assert refused.value.code == "unknown_table"
    assert page(stranger, f"/mesa/{table.pk}/repeticion/").status_code == 404
    assert page(stranger, f"/mesa/{table.pk}/analisis/estado/").status_code == 404
    assert post(stranger, f"/mesa/{table.pk}/jugar-mano/", {"round": "1"}).status_code == 302
    assert not Table.objects.filter(practice_of=table).exists()


def test_a_request_sends_for_the_celery_worker_after_commit_and_its_tasks_do_the_work(
    settings: Any, monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from games.live import tasks

    table, ana = finished_game("ana")
    sent: list[Any] = []
    monkeypatch.setattr(tasks.run_study, "apply_async", lambda *args, **kwargs: sent.append(args))
    settings.POCHA_CELERY_CLOCK = True  # services mode: the Celery worker does the work
    with django_capture_on_commit_callbacks(execute=True):
        analyses.do_request(table.pk, ana)
        assert sent == []  # not before the commit
    assert len(sent) == 1
    # the task the worker runs, and beat's sweep, which finds nothing left after it
    assert tasks.run_study() == 1
    assert Analysis.objects.get(table=table).status == Analysis.Status.DONE
    assert tasks.sweep_study() == 0
