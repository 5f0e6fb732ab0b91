"""The cost of a move: one short transaction with a handful of queries, and a render per viewer
that does not grow with the game (no replay from scratch, no N+1)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from games.engine import Play, default_action
from games.models import Table
from games.read import board as board_view
from games.table import actions
from games.table.snapshot import game_state

pytestmark = pytest.mark.django_db


@pytest.fixture
def started_table(django_user_model, settings):
    settings.POCHA_BOT_DELAY = 0
    user = django_user_model.objects.create_user(username="coste", password="x-cuarenta-bazas")
    table = actions.do_create_table(user, 4)
    actions.do_start(table.pk, user)
    return Table.objects.get(pk=table.pk), user


def advance(table_id: int, user) -> int:
    """Make the next move (the person's default, or a due bot step); return the queries it took."""
    table = Table.objects.get(pk=table_id)
    game = game_state(table)
    with CaptureQueriesContext(connection) as queries:
        if table.turn_seat == 0:
            actions.do_action(table_id, user, default_action(game), table.seq)
        else:
            assert actions.do_due(table_id, table.seq) is not None
    return len(queries)


def test_every_move_is_a_handful_of_queries_all_game_long(started_table):
    table, user = started_table
    counts = []
    while Table.objects.get(pk=table.pk).status == Table.Status.PLAYING:
        counts.append(advance(table.pk, user))
    assert len(counts) > 400  # a whole 4-seat game: 19 rounds of bids and cards
    # lock, seat, round, trick, play (+ winner, round points, next deal), update table, next seat to move
    *moves, last = counts
    assert max(moves) <= 14, counts
    assert sum(moves) / len(moves) <= 10
    # The last move also settles the game: the pot (none at a free table) and each seat's record.
    assert last <= 14 + 4, last


def test_rendering_a_seat_costs_the_same_at_the_start_and_at_the_end(started_table):
    table, user = started_table
    with CaptureQueriesContext(connection) as first:
        seq, html = board_view.render_board(table.pk, user.pk, "es")
    while Table.objects.get(pk=table.pk).status == Table.Status.PLAYING:
        advance(table.pk, user)
    with CaptureQueriesContext(connection) as last:
        _, final_html = board_view.render_board(table.pk, user.pk, "es")
    # The table, its seats and how many watch.  The finished board also redraws the header's chip
    # count (the pot has just been paid) and looks for a rematch: one read each.
    assert len(first) <= 3 and len(last) == len(first) + 2, (len(first), len(last))
    assert any("accounts_account" in q["sql"] for q in last.captured_queries)
    assert any("rematch_of_id" in q["sql"] for q in last.captured_queries)
    assert "ranking" in final_html and "data-board-seq" in html


TRANSACTION_CONTROL = ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK")


def test_a_card_inside_a_trick_is_three_statements(started_table):
    """A person's card that neither opens nor closes a trick: the table's lock with their seat (one
    statement), the seats and spectators for the push, and the table's update with the move's row in the
    game's log (one statement on PostgreSQL, the insert just before it on SQLite) — and nothing else."""
    table, user = started_table
    seen = 0
    while seen < 5 and Table.objects.get(pk=table.pk).status == Table.Status.PLAYING:
        current = Table.objects.get(pk=table.pk)
        game = game_state(current)
        action = default_action(game)
        if current.turn_seat == 0 and isinstance(action, Play) and 0 < len(game.trick) < len(game.order) - 1:
            with CaptureQueriesContext(connection) as queries:
                actions.do_action(current.pk, user, action, current.seq)
            statements = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith(TRANSACTION_CONTROL)]
            kinds = [sql.split()[0] + (" move" if "games_move" in sql.split("(")[0] else "") for sql in statements]
            if connection.vendor == "postgresql":
                assert kinds == ["SELECT", "SELECT", "WITH"], statements
                assert "INSERT INTO games_move" in statements[2] and "UPDATE games_table" in statements[2]
            else:
                assert kinds == ["SELECT", "SELECT", "INSERT move", "UPDATE"], statements
            assert "games_seat" in statements[0] and "accounts_profile" in statements[0]
            assert "FOR UPDATE" in statements[0] or connection.vendor == "sqlite"
            seen += 1
        else:
            advance(current.pk, user)
    assert seen == 5
