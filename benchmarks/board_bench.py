"""How long a server process takes to draw a move's boards, the biggest part of its work at every move.

Usage::

    make bench-board            # .venv/bin/python benchmarks/board_bench.py

It makes a few four-seat tables in a SQLite database of its own, with DEBUG off and the static files
collected as in production (a temporary directory, removed after),
plays them to round 11 through the server's own code (the load tool's ``advance_rounds``, as the load
windows do), then goes on playing random legal moves and keeps the table's snapshot before each one
(``games.table.snapshot.load_snapshot``: what a process holds while it shows the table).  For every kept
snapshot it draws each seat's board as the sockets get it at a move (``games.read.board.draw_push``: the
hand and the scoreboard left out while the page's are still right), and prints microseconds per board,
the best of several passes over the same snapshots, and for comparison:

* the board's context alone (``board_context``) and its template alone (``draw_board``), which make it up;
* the whole board (``render_snapshot`` with nothing left out), what a socket's first board costs.

Run it on two commits to compare them: the figures are only comparable within one machine and one session
(the shared machines vary by tens of percent between runs).  A benchmark prints figures; nothing here fails
on a slow machine.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def setup(directory: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/bench.sqlite3"
    os.environ.pop("REDIS_URL", None)
    os.environ["POCHA_VAR"] = directory
    os.environ["STATIC_ROOT"] = f"{directory}/static"  # DEBUG off, as in production: hashed static files
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pocha_site.settings")
    os.environ["DEBUG"] = "false"
    os.environ.setdefault("SECRET_KEY", "board-bench-" + "x" * 40)
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks" / "load"))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)


def snapshots(tables: int, moves: int, seed: int) -> list[Any]:
    """The snapshot of each table before each of ``moves`` moves, the tables taken in turn from round 11."""
    import run as load  # benchmarks/load/run.py: the load windows' own setup
    from django.utils import timezone

    from games.engine.snapshot import load as load_state
    from games.engine.view import seat_view
    from games.models import Seat, Table
    from games.table import actions
    from games.table.snapshot import load_snapshot

    made, _moderator, people = load.make_tables(tables)
    load.advance_rounds(people, 10, seed=seed)
    rng = random.Random(seed)
    kept = []
    ids = [table_id for table_id, _cookies in made]
    by_table = {
        table_id: {s.position: s.user for s in Seat.objects.filter(table_id=table_id).select_related("user")}
        for table_id in ids
    }
    for n in range(moves):
        table_id = ids[n % len(ids)]
        row = Table.objects.get(pk=table_id)
        if row.status != Table.Status.PLAYING:
            continue
        if row.phase == "round_over":
            Table.objects.filter(pk=table_id).update(due_at=timezone.now())
            actions.do_due(table_id, row.seq)
            continue
        snapshot = load_snapshot(table_id)
        assert snapshot is not None
        kept.append(snapshot)
        view = seat_view(load_state(row.state), row.turn_seat, reasons=False)
        actions.do_action(table_id, by_table[table_id][row.turn_seat], rng.choice(view.legal), row.seq)
    return kept


def best_of(passes: int, count: int, work: Callable[[], object]) -> float:
    """Microseconds per board: the best pass of ``passes`` over ``count`` boards."""
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--moves", type=int, default=200, help="moves played (and snapshots kept) past round 11")
    parser.add_argument("--passes", type=int, default=7)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--language", default="es")
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="pocha-board-bench-")
    try:
        setup(directory)
        bench(args)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def bench(args: argparse.Namespace) -> None:
    from django.utils.translation import override

    from games.read import board

    kept = snapshots(args.tables, args.moves, args.seed)
    lang = args.language
    viewers = [(snapshot, seat.user_id) for snapshot in kept for seat in snapshot.seats]
    count = len(viewers)
    # what each socket's page shows after the board before (its hand's key), as the consumer keeps it
    shown: dict[Any, Any] = {}
    previous: dict[int | None, Any] = {}
    for snapshot, user in viewers:
        shown[snapshot.seq, user] = previous.get(user)
        drawn = board.draw_push(snapshot, user, lang, board.rounds_done(snapshot), previous.get(user))
        assert drawn is not None
        previous[user] = drawn.hand

    def pushes() -> None:
        for snapshot, user in viewers:
            board.draw_push(snapshot, user, lang, board.rounds_done(snapshot), shown[snapshot.seq, user])

    def whole() -> None:
        for snapshot, user in viewers:
            board.render_snapshot(snapshot, user, lang)

    contexts: list[dict[str, Any]] = []

    def context() -> None:
        contexts.clear()
        with override(lang):
            for snapshot, user in viewers:
                ctx = board.board_context(
                    snapshot.table,
                    list(snapshot.seats),
                    board.Viewer(user, lang),
                    snapshot.spectators,
                    snapshot.game,
                    scores=False,
                    results=snapshot.results,
                    tournament=snapshot.tournament,
                )
                ctx.update(oob=True, scores_unchanged=True, hand_unchanged=shown[snapshot.seq, user] is not None)
                contexts.append(ctx)

    def template() -> None:
        with override(lang):
            for ctx in contexts:
                board.draw_board(ctx)

    pushes()  # (once, to fill the kept drawings as a process showing these tables has them)
    sizes = [
        len(board.draw_push(s, u, lang, board.rounds_done(s), shown[s.seq, u]).html.encode())  # type: ignore[union-attr]
        for s, u in viewers
    ]
    whole_sizes = [len(board.render_snapshot(s, u, lang)[1].encode()) for s, u in viewers]  # type: ignore[index]
    print(f"{len(kept)} snapshots of {args.tables} tables from round 11, {count} boards (4 seats each), {lang}")
    print(f"  a move's board, as pushed:  {best_of(args.passes, count, pushes):7.1f} us  {sum(sizes) / count:7.0f} B")
    print(f"  - its context:              {best_of(args.passes, count, context):7.1f} us")
    print(f"  - its template:             {best_of(args.passes, count, template):7.1f} us")
    print(
        f"  the whole board:            {best_of(args.passes, count, whole):7.1f} us  {sum(whole_sizes) / count:7.0f} B"
    )


if __name__ == "__main__":
    main()
