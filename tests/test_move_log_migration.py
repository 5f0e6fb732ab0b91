"""The migration to the move log (``games/migrations/0011_move_log.py``) carries every stored game over.

A database is migrated up to the schema before it (``0010``), and games are stored there as the code of
that schema stored them: the engine's whole state on the table row (every round's log and result), and
the round, bid, trick and play rows, with some decisions flagged as the clock's or the bot's.  One game
is finished, one stopped in the middle of a round (a card on the felt), one in an auction round before
the trump was chosen.  Then the database is migrated to the end, and every game downloads the same record
as before, its moves carry the old rows' flags, its rounds their results, and its table row keeps only the
round in play, which is what the log rebuilds.  Each step runs in a fresh interpreter on its own SQLite
file, as an operator's ``manage.py migrate`` would.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from support.server import child_env, manage, run

BEFORE = "0010_table_cancel_reason"

# Stores three games with the models of the schema before the move log (run after ``migrate games 0010``).
STORE = textwrap.dedent(
    """
    import json, sys
    import django
    django.setup()
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor
    from django.utils import timezone
    from games.engine import Bid, ChooseTrump, GameState, Phase, Play, default_action, export_record
    from games.engine.snapshot import dump

    apps = MigrationExecutor(connection).loader.project_state(("games", "%(before)s")).apps
    Table, Seat, Round = (apps.get_model("games", n) for n in ("Table", "Seat", "Round"))
    BidRow, TrickRow, PlayRow = (apps.get_model("games", n) for n in ("Bid", "Trick", "Play"))

    def stop_finished(game):
        return game.is_over

    def stop_mid_trick(game):
        return game.number == 6 and game.phase is Phase.PLAYING and len(game.trick) == 2

    def stop_choosing(game):
        return game.phase is Phase.CHOOSING_TRUMP

    out = {}
    for name, players, seed, stop in (
        ("finished", 4, 11, stop_finished),
        ("mid-trick", 5, 12, stop_mid_trick),
        ("choosing", 3, 13, stop_choosing),
    ):
        game = GameState([f"{name}-{p}" for p in range(players)], seed %% players, seed=seed)
        seeds, decisions = [], []
        while not stop(game):
            if game.phase in (Phase.DEALING, Phase.ROUND_OVER):
                seeds.append(seed * 1000 + game.number)
                game.deal(seed=seeds[-1])
                continue
            seat = game.turn
            action = default_action(game)
            decisions.append((game.number, seat, action))
            game.apply(action, seat)
        over = game.is_over
        table = Table.objects.create(
            size=players,
            status="finished" if over else "playing",
            seq=len(decisions) + players + 3,
            first_dealer=game.first_dealer,
            phase=game.phase.value,
            round_number=game.number,
            turn_seat=game.turn,
            state=dump(game),
            started_at=timezone.now(),
        )
        for p in range(players):
            Seat.objects.create(table=table, position=p, name=game.names[p], is_bot=p > 0)
        rounds = {}
        for number, log in enumerate(game.log, start=1):
            result = game.results[number - 1] if number <= len(game.results) else None
            rounds[number] = Round.objects.create(
                table=table,
                number=number,
                dealer=(game.first_dealer + number - 1) %% players,
                seed=seeds[number - 1],
                hands=[[str(c) for c in hand] for hand in log.hands],
                trump_card=None if log.trump_card is None else str(log.trump_card),
                trump_suit=None if log.trump_card is not None or log.trump_suit is None else log.trump_suit.value,
                auction_winner=None if result is None else result.auction_winner,
                trump_by_clock=log.trump_card is None and number %% 2 == 0,
                points=None if result is None else list(result.points),
            )
        flags = {}
        counters, tricks = {}, {}
        for i, (number, seat, action) in enumerate(decisions):
            by_clock, by_bot = i %% 7 == 3, seat > 0
            if isinstance(action, Bid):
                index = counters.get(("b", number), 0)
                counters[("b", number)] = index + 1
                BidRow.objects.create(
                    round=rounds[number], index=index, seat=seat, amount=action.amount,
                    by_clock=by_clock, by_bot=by_bot,
                )
                flags[f"b{number}.{index}"] = [by_bot, by_clock]
            elif isinstance(action, Play):
                index = counters.get(("p", number), 0)
                counters[("p", number)] = index + 1
                order = len([h for h in rounds[number].hands if h])
                trick_number = index // order + 1
                trick = tricks.get((number, trick_number))
                if trick is None:
                    trick = tricks[(number, trick_number)] = TrickRow.objects.create(
                        round=rounds[number], number=trick_number, leader=seat
                    )
                PlayRow.objects.create(
                    round=rounds[number], trick=trick, index=index, seat=seat, card=str(action.card),
                    by_clock=by_clock, by_bot=by_bot,
                )
                flags[f"p{number}.{index}"] = [by_bot, by_clock]
            else:
                flags[f"t{number}.0"] = [False, rounds[number].trump_by_clock]
        out[name] = {
            "table": table.pk,
            "record": export_record(game, include_current=not over),
            "state": dump(game, history=False),
            "results": [r.as_json() for r in game.results],
            "flags": flags,
            "decisions": len(decisions),
        }
    json.dump(out, sys.stdout)
    """
) % {"before": BEFORE}

# Reads what the migration left (run after ``migrate``).
READ = textwrap.dedent(
    """
    import json, sys
    import django
    django.setup()
    from games.models import Move, Round, Table
    from games.table import history

    out = {}
    for name, table_id in json.loads(sys.argv[1]).items():
        table = Table.objects.get(pk=table_id)
        flags, counters = {}, {}
        for move in Move.objects.filter(table=table).order_by("seq"):
            index = counters.get((move.kind, move.round), 0)
            counters[(move.kind, move.round)] = index + 1
            flags[f"{move.kind}{move.round}.{index}"] = [move.by_bot, move.by_clock]
        out[name] = {
            "record": history.record(table, include_current=table.status != "finished"),
            "state": table.state,
            "rebuilt": history.current_state(history.rebuild(table)),
            "results": list(Round.objects.filter(table=table, result__isnull=False).values_list("result", flat=True)),
            "flags": flags,
            "seqs": list(Move.objects.filter(table=table).order_by("seq").values_list("seq", flat=True)),
            "table_seq": table.seq,
        }
    json.dump(out, sys.stdout)
    """
)


def test_every_stored_game_is_carried_over_to_the_log_with_the_same_record(tmp_path: Path) -> None:
    env = child_env({"DATABASE_URL": f"sqlite:///{tmp_path / 'old.sqlite3'}"})
    manage(env, "migrate", "games", BEFORE, "--no-input", timeout=180)
    before = json.loads(run([sys.executable, "-c", STORE], env).strip().splitlines()[-1])
    assert set(before) == {"finished", "mid-trick", "choosing"}
    assert before["choosing"]["record"]["rounds"][-1].get("trump_suit") is None  # chosen after the migration

    manage(env, "migrate", "--no-input", timeout=180)
    tables = {name: game["table"] for name, game in before.items()}
    after = json.loads(run([sys.executable, "-c", READ, json.dumps(tables)], env).strip().splitlines()[-1])

    for name, game in before.items():
        carried = after[name]
        # the same record as before, to the last card (and the round in play, for a game under way)
        assert carried["record"] == game["record"], name
        # every decision once, in order, numbered below the table's own seq, with the old rows' flags
        assert len(carried["seqs"]) == game["decisions"] and carried["seqs"] == sorted(set(carried["seqs"]))
        assert carried["seqs"][-1] <= carried["table_seq"]
        assert carried["flags"] == game["flags"], name
        # every finished round's result on its row; the table keeps the round in play only, as the log
        # rebuilds it
        assert carried["results"] == game["results"], name
        assert carried["state"] == game["state"] == carried["rebuilt"], name
        assert len(carried["state"]["log"]) == 1 and len(carried["state"]["results"]) <= 1


def test_the_carried_over_game_under_way_goes_on(tmp_path: Path) -> None:
    """After the migration the game stopped mid-trick takes its next moves through the site's own path."""
    env = child_env({"DATABASE_URL": f"sqlite:///{tmp_path / 'old.sqlite3'}"})
    manage(env, "migrate", "games", BEFORE, "--no-input", timeout=180)
    before = json.loads(run([sys.executable, "-c", STORE], env).strip().splitlines()[-1])
    manage(env, "migrate", "--no-input", timeout=180)
    table_id = before["mid-trick"]["table"]
    script = textwrap.dedent(
        f"""
        import django
        django.setup()
        from datetime import timedelta
        from django.utils import timezone
        from games.models import Move, Table
        from games.table import actions, history
        from games.engine import replay
        for _ in range(12):  # every seat is a bot's or played by the bot: make each step due and run it
            table = Table.objects.get(pk={table_id})
            Table.objects.filter(pk=table.pk).update(due_at=timezone.now() - timedelta(seconds=1))
            assert actions.do_due(table.pk, table.seq) is not None
        table = Table.objects.get(pk={table_id})
        assert history.current_state(history.rebuild(table)) == table.state
        moves = list(Move.objects.filter(table=table).order_by("seq").values_list("seq", flat=True))
        replay(history.record(table))
        print(len(moves), moves[-1] == table.seq)
        """
    )
    out = run([sys.executable, "-c", script], env).strip().splitlines()[-1]
    count, last_is_seq = out.split()
    assert int(count) == before["mid-trick"]["decisions"] + 12 and last_is_seq == "True"
