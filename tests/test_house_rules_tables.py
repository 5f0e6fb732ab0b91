"""Tables of every house-rule preset (``shared/VARIANTS.md``) through the site's own actions and forms: «Jugar
ya», «Abrir mesa» and «Mesa privada» take the preset and its options, «Jugar ya» remembers them and only
matches tables of the same rules, a bad choice is refused with nothing created, a rematch keeps the rules,
and quick games of every preset play to their end, pay the pot, count for the rankings and download as
records that replay to the totals the table shows.

The games here are short (one round of each kind the preset has, through the engine's own round specs), so
that the quick tier stays quick; whole games of every preset are played in ``test_house_rules_games.py``."""

from __future__ import annotations

import dataclasses
import importlib
from datetime import timedelta
from typing import Any

import pytest
from django.db.models import Sum
from django.test import Client
from django.utils import timezone
from live.helpers import person, play_to_the_end

from accounts import ledger
from accounts.models import Account, Profile
from games.engine import replay
from games.engine.presets import Rules
from games.engine.schedule import RoundKind
from games.engine.snapshot import load
from games.models import Move, Seat, Table, rules_key, rules_of
from games.table import actions, history
from games.table.actions import rematch
from leaderboard.models import PeriodScore

pytestmark = pytest.mark.django_db

presets = importlib.import_module("games.engine.presets")


def short_schedule(monkeypatch: Any) -> None:
    """Every preset's game cut to the first round of each kind it has (indias: normal, indias, subastados,
    oros), renumbered: the same rules, a few rounds."""
    real = presets.Rules.schedule

    def short(self: Rules, players: int) -> Any:
        rounds = real(self, players)
        if self.is_clasica:
            return rounds[:2]
        kept: dict[RoundKind, Any] = {}
        for spec in rounds:
            kept.setdefault(spec.kind, spec)
        return tuple(dataclasses.replace(spec, number=n) for n, spec in enumerate(kept.values(), start=1))

    monkeypatch.setattr(presets.Rules, "schedule", short)


@pytest.fixture(autouse=True)
def quick_bots(settings: Any, monkeypatch: Any) -> None:
    settings.POCHA_BOT_DELAY = 0
    settings.POCHA_ROUND_PAUSE = 0
    settings.POCHA_TRICK_PAUSE = 0
    short_schedule(monkeypatch)


def filled(table: Table) -> Table:
    """The quick table's wait is over: the bots sit and it starts."""
    Table.objects.filter(pk=table.pk).update(due_at=timezone.now() - timedelta(seconds=1))
    table.refresh_from_db()
    assert actions.do_due(table.pk, table.seq) is not None
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    return table


def books_balance() -> None:
    assert ledger.audit() == []
    assert (Account.objects.aggregate(t=Sum("balance"))["t"] or 0) == 0


CASES = [
    ("indias", 4),
    ("indias", 8),
    ("se-dobla:sencillas", 3),
    ("se-dobla:escalera:frente", 5),
    ("bazas", 7),
    ("clasica", 4),
]


@pytest.mark.parametrize(("key", "size"), CASES)
def test_a_quick_game_of_every_preset_plays_to_its_end_and_counts(key: str, size: int) -> None:
    ana, bea = person(f"ana{size}"), person(f"bea{size}")
    table = actions.do_quick_play(ana, size, 100, rules=key)
    assert (table.rules, table.size, table.is_quick) == (key, size, True)
    assert actions.do_quick_play(bea, size, 100, rules=key).pk == table.pk
    table = filled(table)
    assert Seat.objects.filter(table=table).count() == size
    assert load(table.state).rules == rules_of(key)
    table = play_to_the_end(table.pk)
    assert table.status == Table.Status.FINISHED
    game = load(table.state)
    rounds = game.rules.schedule(size)
    assert game.number >= len(rounds)  # (a tie-break round or more, where the preset has them)
    kinds = {game.rules.spec(size, n).kind for n in range(1, game.number + 1)}
    assert kinds >= {spec.kind for spec in rounds}
    # the download replays, round by round, to the totals the table keeps
    record = history.record(table)
    assert record is not None
    assert record["format"] == ("pocha-record/1" if key == "clasica" else "pocha-record/2")
    if key != "clasica":
        assert record["rules"] == rules_of(key).as_json()
        assert [r["kind"] for r in record["rounds"]][: len(rounds)] == [s.kind.value for s in rounds]
    replayed = replay(record).as_json()
    assert replayed["complete"] and replayed["totals"] == list(game.totals)
    # settled: the pot paid, the places written, the rankings moved for both people (a quick public game)
    seats = {s.position: s for s in Seat.objects.filter(table=table)}
    assert sum(s.winnings for s in seats.values()) == 100 * size
    assert all(s.place is not None and s.final_total == game.totals[p] for p, s in seats.items())
    for user in (ana, bea):
        mine = next(s for s in seats.values() if s.user_id == user.pk)
        rows = PeriodScore.objects.filter(user=user)
        assert rows.count() == 3 and all(r.games == 1 and r.net == mine.winnings - 100 for r in rows)
    books_balance()


def test_indias_cards_are_played_by_nobody_and_the_blind_bids_are_logged() -> None:
    ana = person("ana")
    table = filled(actions.do_quick_play(ana, 4, 0, rules="indias"))
    table = play_to_the_end(table.pk)
    game = history.rebuild(table)
    assert game is not None
    indias = next(n for n in range(1, game.number + 1) if game.rules.spec(4, n).kind is RoundKind.INDIAS)
    plays = Move.objects.filter(table=table, round=indias, kind=Move.Kind.PLAY)
    assert plays.count() == 4
    # nobody chose those cards: neither the bot's nor the clock's decisions, so nobody's forfeit counts them
    assert not plays.filter(by_bot=True).exists() and not plays.filter(by_clock=True).exists()
    subastados = next(n for n in range(1, game.number + 1) if game.rules.spec(4, n).kind is RoundKind.SUBASTADOS)
    moves = list(Move.objects.filter(table=table, round=subastados).order_by("seq").values_list("kind", flat=True))
    # four blind bids, the winner's trump, four bids, then the cards
    bid, trump, play = Move.Kind.BID, Move.Kind.TRUMP, Move.Kind.PLAY
    assert moves[:9] == [bid] * 4 + [trump] + [bid] * 4 and set(moves[9:]) == {play}
    entry = history.record(table)["rounds"][subastados - 1]  # type: ignore[index]
    assert entry["kind"] == "subastados" and len(entry["blind_bids"]) == 4 and entry["trump_suit"]
    # the replay and the download, as the page's people get them
    client = Client()
    client.force_login(ana)
    page = client.get(f"/mesa/{table.pk}/repeticion/").content.decode()
    assert f"Ronda {subastados} de " in page and "subastados" in page
    assert "a ciegas: " + ", ".join(str(b) for b in entry["blind_bids"]) in page
    download = client.get(f"/mesa/{table.pk}/partida.json")
    assert download.status_code == 200 and download.json()["format"] == "pocha-record/2"


def test_jugar_ya_only_matches_tables_of_the_same_rules_and_remembers_them() -> None:
    ana, bea, cris, dani = (person(n) for n in ("ana", "bea", "cris", "dani"))
    indias = actions.do_quick_play(ana, 4, 0, rules="indias")
    dobla = actions.do_quick_play(bea, 4, 0, rules="se-dobla:dobles")
    assert dobla.pk != indias.pk
    # the same preset with other options is another table
    assert actions.do_quick_play(cris, 4, 0, rules="se-dobla:dobles:frente").pk not in (indias.pk, dobla.pk)
    assert actions.do_quick_play(dani, 4, 0, rules="se-dobla:dobles").pk == dobla.pk
    assert Profile.objects.get(user=bea).quick_rules == "se-dobla:dobles"
    client = Client()
    client.force_login(bea)
    page = client.get("/").content.decode()
    assert '<option value="se-dobla" selected>' in page and '<option value="dobles" selected>' in page


def test_the_forms_open_tables_of_every_preset() -> None:
    ana = person("ana")
    client = Client()
    client.force_login(ana)
    response = client.post(
        "/mesas/privada/",
        {
            "size": "8",
            "stake": "0",
            "bots": "on",
            "bot_level": "facil",
            "rules": "se-dobla",
            "schedule": "escalera",
            "forehead": "on",
        },
    )
    table = Table.objects.get(created_by=ana)
    assert response.status_code == 302 and response["Location"] == f"/mesa/{table.pk}/"
    assert (table.rules, table.size, table.is_public) == ("se-dobla:escalera:frente", 8, False)
    assert table.game_rules == Rules.of("se-dobla", schedule="escalera", forehead=True)
    actions.do_leave_seat(table.pk, ana)  # the host cancels it
    client.post("/mesas/nueva/", {"size": "7", "stake": "0", "rules": "bazas"})
    table = Table.objects.get(created_by=ana, status=Table.Status.WAITING)
    assert (table.rules, table.size, table.is_public, table.is_quick) == ("bazas", 7, True, False)


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"size": "8", "rules": "bazas"}, "Con las reglas «Juego de las Bazas» una mesa es de 3 a 7 jugadores."),
        ({"size": "7", "rules": "clasica"}, "Con las reglas «Clásica» una mesa es de 3 a 6 jugadores."),
        ({"size": "4", "rules": "mus"}, "Esas reglas no existen."),
        ({"size": "4", "rules": "se-dobla", "schedule": "triples"}, "Esas reglas no existen."),
        ({"size": "4", "rules": "se-dobla:dobles"}, "Esas reglas no existen."),
    ],
)
def test_a_bad_choice_is_refused_and_nothing_is_created(form: dict[str, str], message: str) -> None:
    ana = person("ana")
    client = Client()
    client.force_login(ana)
    for url in ("/jugar/", "/mesas/nueva/", "/mesas/privada/"):
        response = client.post(url, {"stake": "0", **form}, follow=True)
        assert message in response.content.decode()
    assert not Table.objects.exists() and not Profile.objects.filter(user=ana, quick_rules=form["rules"]).exists()


def test_a_rematch_keeps_the_rules() -> None:
    ana, bea = person("ana"), person("bea")
    table = actions.do_create_table(ana, 3, rules="se-dobla:una-mas:frente")
    actions.do_take_seat(table.pk, bea)
    actions.do_start(table.pk, ana)
    table = play_to_the_end(table.pk)
    again = rematch.do_offer_rematch(table.pk, bea)
    assert (again.rules, again.size) == ("se-dobla:una-mas:frente", 3)


def test_every_rules_key_names_its_rules_and_back() -> None:
    from games.models import RULES_KEYS

    assert len(RULES_KEYS) == 3 + 4 * 2
    for key in RULES_KEYS:
        assert rules_key(rules_of(key)) == key
    with pytest.raises(ValueError, match="not a rules key"):
        rules_of("se-dobla")
