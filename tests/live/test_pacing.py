"""The server sets the table's pace, so that every page can show each trick and each round's result:
after a completed trick no bot and no clock moves on before ``POCHA_TRICK_PAUSE``; a round's last trick
and its result stay ``POCHA_ROUND_PAUSE`` before the next deal.  And the banner about the bot playing
for a person says so only when it really does, and afterwards what it did."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from django.utils.translation import override

from games.engine import Bid, Play, default_action
from games.engine.snapshot import load
from games.live import presence
from games.models import Round, Seat, Table
from games.read import board as board_view
from games.table import actions

from .helpers import check_the_log
from .test_clock import advance_to, make_due, manual_clock, new_table, seat_row, table_row  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def board(table_id: int, user: Any) -> str:
    rendered = board_view.render_board(table_id, user.pk, "es")
    assert rendered is not None
    return rendered[1]


def play_until_a_trick_completes(table_id: int, user: Any) -> Table:
    """Play on (the person their default at once, bots when made due) until a move completes a trick;
    returns the table right after that move."""
    for _ in range(200):
        table = table_row(table_id)
        game = load(table.state)
        before = sum(game.tricks)
        seat = seat_row(table_id, table.turn_seat)
        action = default_action(game)
        if seat.is_bot:
            assert actions.do_due(table_id, make_due(table_id)) is not None
        else:
            actions.do_action(table_id, user, action, table.seq)
        after = table_row(table_id)
        if isinstance(action, Play) and sum(load(after.state).tricks) > before and after.phase == "playing":
            return after
    raise AssertionError("no trick completed")


def step(table_id: int, user: Any) -> None:
    """One move: the bot's, made due now, or the person's default at once."""
    table = table_row(table_id)
    if seat_row(table_id, table.turn_seat).is_bot:
        assert actions.do_due(table_id, make_due(table_id)) is not None
    else:
        actions.do_action(table_id, user, default_action(load(table.state)), table.seq)


def test_after_a_completed_trick_bots_and_the_clock_wait_for_the_pause(manual_clock, settings):
    settings.POCHA_TRICK_PAUSE = 3.0
    settings.POCHA_BOT_DELAY = 0.5
    table_id, (user,) = new_table(4, 1, prefix="pace")
    checked = set()
    for _ in range(60):  # tricks ending mid-round, until one led by a bot and one by the person are seen
        table = play_until_a_trick_completes(table_id, user)
        now = timezone.now()
        turn = seat_row(table_id, table.turn_seat)
        if turn.is_bot:
            # the bot leads only after the pause (longer than its own thinking delay)
            assert table.due_at >= now + timedelta(seconds=2.5)
            assert table.turn_deadline is None
            assert actions.do_due(table_id, table.seq) is None  # not yet due: nothing moves
            # someone else's connection coming and going does not cut the pause short
            presence.open_socket(table_id, user.pk, "pace.1")
            presence.close_socket("pace.1")
            assert table_row(table_id).due_at == table.due_at
        else:
            # the person's clock starts after the pause
            assert table.turn_deadline >= now + timedelta(seconds=2.5 + table.card_seconds - 1)
        html = board(table_id, user)
        assert 'data-trick-done="1"' in html and html.count('<li class="played') == 4
        assert html.count(' won"') == 1  # the winning card, marked once
        checked.add(turn.is_bot)
        if checked == {True, False}:
            return
    raise AssertionError(f"only seen: {checked}")


def test_a_rounds_last_trick_and_result_stay_up_before_the_next_deal(manual_clock, settings):
    settings.POCHA_ROUND_PAUSE = 4.0
    table_id, (user,) = new_table(3, 1, prefix="rpace")
    for _ in range(50):  # round 1 has one card each: play it out
        table = table_row(table_id)
        if table.phase == "round_over":
            break
        step(table_id, user)
    table = table_row(table_id)
    assert (table.phase, table.turn_seat, table.round_number) == ("round_over", None, 1)
    assert Round.objects.filter(table_id=table_id).count() == 1  # not dealt yet
    assert table.due_at >= timezone.now() + timedelta(seconds=3) and table.turn_deadline is None
    html = board(table_id, user)
    # the last trick is on the felt, and the result is drawn to be shown once that trick has been held
    assert 'data-trick-last="1"' in html and 'id="round-result"' in html and 'data-after-trick="1"' in html
    assert html.count('<li class="played') == 3
    assert 'ws-send hx-vals=\'{"action": "play"' not in html and '"action": "bid"' not in html
    # a move now is refused and changes nothing
    with pytest.raises(actions.ActionError):
        actions.do_action(table_id, user, Bid(0), table.seq)
    assert table_row(table_id).seq == table.seq
    assert actions.do_due(table_id, table.seq) is None  # early: nothing
    seq = make_due(table_id)
    assert actions.do_due(table_id, seq) is not None  # the next deal
    table = table_row(table_id)
    assert (table.phase, table.round_number) == ("bidding", 2)
    assert Round.objects.filter(table_id=table_id).count() == 2
    html = board(table_id, user)
    assert 'id="round-result"' not in html  # the result was up until this deal; the scoreboard keeps it
    assert html.count('class="made"') + html.count('class="missed"') >= 1  # round 1's row on the scoreboard


def test_a_whole_game_with_the_pauses_plays_out_and_replays(manual_clock, settings):
    settings.POCHA_TRICK_PAUSE = 0.5
    settings.POCHA_ROUND_PAUSE = 0.5
    table_id, (user,) = new_table(3, 1, prefix="whole")
    deals = 0
    for _ in range(2000):
        table = table_row(table_id)
        if table.status != Table.Status.PLAYING:
            break
        if table.turn_seat is None:
            assert table.phase == "round_over"
            deals += 1
            assert actions.do_due(table_id, make_due(table_id)) is not None
            continue
        step(table_id, user)
    table = table_row(table_id)
    assert table.status == Table.Status.FINISHED
    assert deals == Round.objects.filter(table_id=table_id).count() - 1  # every deal after the first waited
    from django.test import Client

    client = Client()
    client.force_login(user)
    record = client.get(f"/mesa/{table_id}/partida.json")
    assert record.status_code == 200, record.status_code
    assert json.loads(record.content) == check_the_log(table_id)  # the log replays to the stored totals


# -- the banner: the bot plays for you only when it really does ------------------------------


def test_one_timeout_is_not_away_but_says_what_the_clock_did(manual_clock):
    table_id, (user,) = new_table(3, 1, prefix="banner")
    table = advance_to(table_id, 0)
    assert table.phase == "bidding"
    assert actions.do_due(table_id, make_due(table_id, expire_turn=True)) is not None  # the clock bids for them
    seat = seat_row(table_id, 0)
    assert (seat.timeouts, seat.away) == (1, False)
    html = board(table_id, user)
    assert "El bot está jugando por ti" not in html and "away-line" not in html
    bid = seat.bot_log[0]["bid"]
    assert f"Mientras no estabas, el bot pidió {bid} por ti." in html
    # their own next move: the notice (seen) stays until the move after, which clears it
    table = advance_to(table_id, 0)
    actions.do_action(table_id, user, default_action(load(table.state)), table.seq)
    table = advance_to(table_id, 0)
    actions.do_action(table_id, user, default_action(load(table.state)), table.seq)
    assert seat_row(table_id, 0).bot_log == []
    assert "Mientras no estabas" not in board(table_id, user)


def test_away_then_back_while_connected_is_not_told_mientras_no_estabas(manual_clock):
    """Her page stays open (a socket counted) while her clock runs out: away with «Vuelvo», the bot playing her
    turns as she watches.  She was there: back, nothing says «Mientras no estabas…» (only someone really gone,
    with no page open, or who left the game, is told what the bot did: tests/live/test_coming_back.py)."""
    table_id, (user,) = new_table(3, 1, prefix="away")
    Seat.objects.filter(table_id=table_id, position=0).update(sockets=1)
    for _ in range(2):  # two turns run out: away
        advance_to(table_id, 0)
        assert actions.do_due(table_id, make_due(table_id, expire_turn=True)) is not None
    seat = seat_row(table_id, 0)
    assert seat.away
    for _ in range(3):  # the bot plays their next turns at once
        advance_to(table_id, 0)
        assert actions.do_due(table_id, make_due(table_id)) is not None
    html = board(table_id, user)
    assert "El bot está jugando por ti." in html and '"action": "back"' in html
    assert "Mientras no estabas" not in html
    assert seat_row(table_id, 0).bot_log == []  # five turns played for her, none while she was gone
    actions.do_back(table_id, user, table_row(table_id).seq)
    html = board(table_id, user)
    assert "El bot está jugando por ti." not in html and "Mientras no estabas" not in html


def test_the_summary_reads_well() -> None:
    assert (
        board_view.bot_summary([{"bid": 2}, {"play": "1o"}, {"play": "3c"}, {"play": "7e"}], "es")
        == "Mientras no estabas, el bot pidió 2 y jugó 3 cartas por ti."
    )
    assert board_view.bot_summary([{"play": "1o"}], "es") == "Mientras no estabas, el bot jugó 1 carta por ti."
    assert (
        board_view.bot_summary([{"bid": 1}, {"trump": "c"}, {"play": "1o"}], "es")
        == "Mientras no estabas, el bot pidió 1, eligió copas de triunfo y jugó 1 carta por ti."
    )
    assert board_view.bot_summary([], "es") == ""
    # a game left early: the rounds counted, not 18 bids in a row
    long = [entry for n in range(18) for entry in ({"bid": n % 3}, {"play": "1o"}, {"play": "3c"})]
    assert (
        board_view.bot_summary([*long, {"trump": "c"}, {"trump": "o"}], "es")
        == "Mientras no estabas, el bot pidió en 18 rondas, eligió el triunfo 2 veces y jugó 36 cartas por ti."
    )
    assert (
        board_view.bot_summary(long[:12], "es")
        == "Mientras no estabas, el bot pidió en 4 rondas y jugó 8 cartas por ti."
    )
    with override("en"):  # (the board draws it in the viewer's language)
        english = board_view.bot_summary(long, "en")
    assert english == "While you were away, the bot bid in 18 rounds and played 36 cards for you."


def test_a_dropped_persons_bot_waits_for_the_tricks_pause_too(manual_clock, settings):
    """Her grace is long over when a trick completes before her lead: the bot plays for her only after
    the trick has been held up, as it would for anyone."""
    settings.POCHA_TRICK_PAUSE = 3.0
    settings.POCHA_DISCONNECT_GRACE = 1.0
    table_id, (user,) = new_table(4, 1, prefix="pausa-ida")
    gone = timezone.now() - timedelta(minutes=5)
    Seat.objects.filter(table_id=table_id, user=user).update(sockets=0, disconnected_at=gone)
    for _ in range(60):
        table = play_until_a_trick_completes(table_id, user)
        if not seat_row(table_id, table.turn_seat).is_bot:  # she leads the next trick
            assert table.due_at >= timezone.now() + timedelta(seconds=2.5)
            assert actions.do_due(table_id, table.seq) is None  # not yet due: nothing moves
            return
    raise AssertionError("no trick completed with her to lead")
