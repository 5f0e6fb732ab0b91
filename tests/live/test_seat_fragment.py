"""The seats on the felt and the cards of a hand are drawn once per look (``games.read.seats``), and so are
the board's status, the cards on the felt and the last trick (``games.read.fragments``): a board drawn with
the kept parts is the board drawn afresh, for every viewer, in both languages, all through a game; and the
keys cover everything each part's template shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.utils.translation import override

from games.engine import default_action
from games.engine.snapshot import load
from games.live import timers
from games.models import Seat, Table
from games.read import board as board_view
from games.read import fragments, seats
from games.table import actions
from games.table import snapshot as snapshots

from .helpers import seated_table

pytestmark = [pytest.mark.django_db(transaction=True)]

TEMPLATE = Path(settings.BASE_DIR) / "jinja2/games/_seat.html"


def test_the_key_holds_everything_the_seat_shows() -> None:
    text = TEMPLATE.read_text()
    shown = set(re.findall(r"\bp\.(\w+)", text))
    assert shown, "the template names the player's fields as p.<field>"
    assert shown <= set(seats.FIELDS), shown - set(seats.FIELDS)
    # and nothing of the board's context but the player and the table's bot level (``url``: the site's routes)
    names = {m for m in re.findall(r"\{%\s*(?:if|elif)\s+(?:not\s+)?(\w+)", text)}
    names |= set(re.findall(r"\{\{\s*(\w+)", text))
    names |= set(re.findall(r"=(\w+)(?:\.\w+)?\s*(?:%\}| )", text))
    bound = set(re.findall(r"\{%\s*trans\s+(\w+)=", text))  # a trans block's own names
    assert bound, "the template's trans blocks name their values"
    assert names - bound <= {"p", "bot_level", "bot_level_name", "_", "url"}, names - bound


def test_the_key_holds_everything_a_card_of_the_hand_shows() -> None:
    text = (Path(settings.BASE_DIR) / "jinja2/games/_hand_card.html").read_text()
    shown = set(re.findall(r"\bc\.(\w+)", text))
    assert shown, "the template names the card's fields as c.<field>"
    assert shown <= set(seats.CARD_FIELDS), shown - set(seats.CARD_FIELDS)
    names = {m for m in re.findall(r"\{%\s*(?:if|elif)\s+(?:not\s+)?(\w+)", text)}
    names |= set(re.findall(r"\{\{\s*(\w+)", text))
    assert names == {"c", "seq"}, names  # nothing else of the board, and no text of its own to translate


def test_boards_drawn_with_kept_seats_are_the_boards_drawn_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timers, "arm", lambda *args, **kwargs: None)
    table_id, users = seated_table(4, 4, prefix="asiento")
    viewers = [*(u.pk for u in users), None]
    boards = moves = 0
    seats._drawn.cache_clear()
    seats._card_drawn.cache_clear()
    fragments.clear()
    while True:
        snapshot = snapshots.load_snapshot(table_id)
        assert snapshot is not None
        for language in ("es", "en"):
            for viewer in viewers:
                kept = board_view.render_snapshot(snapshot, viewer, language)  # with the seats kept so far
                with monkeypatch.context() as afresh_only:
                    afresh_only.setattr(seats, "_drawn", seats._drawn.__wrapped__)
                    afresh_only.setattr(seats, "_card_drawn", seats._card_drawn.__wrapped__)
                    for kept_part in ("_status_drawn", "_card_drawn", "_last_trick_drawn"):
                        afresh_only.setattr(fragments, kept_part, getattr(fragments, kept_part).__wrapped__)
                    afresh = board_view.render_snapshot(snapshot, viewer, language)
                assert kept == afresh, (moves, language, viewer)
                boards += 1
        table = Table.objects.get(pk=table_id)
        if table.status != Table.Status.PLAYING or moves >= 40:
            break
        seat = Seat.objects.select_related("user").get(table=table, position=table.turn_seat)
        actions.do_action(table_id, seat.user, default_action(load(table.state)), table.seq)
        moves += 1
    assert moves == 40 and boards == 41 * 10
    info = seats._drawn.cache_info()
    assert info.hits > info.misses, info  # most seats of most boards were kept ones
    cards = seats._card_drawn.cache_info()
    assert cards.hits > cards.misses, cards  # and most cards of most hands
    status = fragments._status_drawn.cache_info()
    assert status.hits > status.misses, status  # and most statuses: the seq changes, the look mostly not
    felt = fragments._card_drawn.cache_info()
    assert felt.hits > felt.misses, felt


def _names(template: str) -> set[str]:
    from django.template import engines
    from jinja2 import meta

    env = engines["jinja2"].env
    source = (Path(settings.BASE_DIR) / "jinja2" / template).read_text()
    return set(meta.find_undeclared_variables(env.parse(source))) - set(env.globals) - {"_", "gettext", "ngettext"}


def test_the_status_key_holds_everything_the_status_shows() -> None:
    assert _names("games/_board_status.html") == set(fragments.STATUS_FIELDS)
    text = (Path(settings.BASE_DIR) / "jinja2/games/_board_status.html").read_text()
    # of the table and the game's view, the status reads only what their tags in the key carry
    assert set(re.findall(r"\btable\.(\w+)", text)) <= set(fragments.TableTag._fields)
    assert set(re.findall(r"\bview\.(\w+)", text)) <= set(fragments.ViewTag._fields)
    assert "my_seat." not in text  # read as yes or no only


def test_the_felt_cards_and_the_last_trick_read_only_what_they_are_given() -> None:
    assert _names("games/_trick_card.html") == {"t"}
    assert _names("games/_last_trick.html") == {"last_trick", "last_trick_winner"}
    board = (Path(settings.BASE_DIR) / "jinja2/games/_board.html").read_text()
    assert "board_status()" in board and 'id="board-status"' not in board  # drawn only through its key


def test_a_kept_status_carries_the_boards_own_seq() -> None:
    from django.template import engines

    from pocha_site.jinja2 import LANGUAGE

    fragments.clear()
    env = engines["jinja2"].env
    values = dict.fromkeys(fragments.STATUS_FIELDS)
    values.update(
        status="playing",
        my_seat=object(),
        my_turn=False,
        i_am_away=True,
        oob=True,
        turn_name="Lola <b>",
        house_rules={"preset": "clasica", "name": "Clásica", "clasica": True},
        table=Table(pk=5),
        view=fragments.ViewTag(cards=3, number=3, rounds=19),
    )
    drawn = []
    for seq in (7, 8, 12):
        context = env.from_string("").new_context({**values, "seq": seq, LANGUAGE: "es"})
        drawn.append(fragments.board_status(context))
        assert f'data-board-seq="{seq}"' in drawn[-1] and f'"seq": "{seq}"' in drawn[-1]  # the «Vuelvo» button's too
        assert "pocha-seq" not in drawn[-1]
    assert fragments._status_drawn.cache_info().misses == 1  # one look, whatever the seq
    assert drawn[0].replace('"7"', '"8"') == drawn[1]


def test_a_seat_is_drawn_in_the_language_it_is_kept_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timers, "arm", lambda *args, **kwargs: None)
    table_id, users = seated_table(4, 4, prefix="idioma")
    snapshot = snapshots.load_snapshot(table_id)
    assert snapshot is not None
    spanish = board_view.render_snapshot(snapshot, users[0].pk, "es")
    english = board_view.render_snapshot(snapshot, users[0].pk, "en")
    assert spanish is not None and english is not None
    assert ">tú<" in spanish[1] and ">you<" in english[1]
    with override("en"):  # the language active when drawing decides, not the one kept last
        assert ">tú<" not in board_view.render_snapshot(snapshot, users[0].pk, "en")[1]


@pytest.mark.parametrize("language", ["es", "en"])
def test_a_kept_seat_shows_its_clock_as_a_seat_drawn_afresh(language: str) -> None:
    from django.template import engines

    from pocha_site.jinja2 import LANGUAGE, draw

    seats._drawn.cache_clear()
    player = dict.fromkeys(seats.FIELDS)
    player.update(position=2, slot=1, name="Lola <b>", is_turn=True, bid=1, tricks=0, total=35)
    context = engines["jinja2"].env.from_string("").new_context({LANGUAGE: language})
    for clock in (27, 26, 0):
        player["clock"] = clock
        kept = seats.seat(context, player, "medio", "medio")
        afresh = draw(
            "games/_seat.html", {"p": player, "bot_level": "medio", "bot_level_name": "medio", LANGUAGE: language}
        )
        assert kept == afresh
        assert f'data-countdown="{clock}">{clock} s<' in kept and "pocha-clock" not in kept
        assert "Lola &lt;b&gt;" in kept
    assert seats._drawn.cache_info().misses == 1  # one look, whatever the seconds
    player["clock"] = None
    assert "data-countdown" not in seats.seat(context, player, "medio", "medio")


def test_the_kept_bot_level_name_is_the_tables_own_in_each_language() -> None:
    from games.models import DIFICIL, LEVELS

    for language in ("es", "en"):
        for level in LEVELS:
            with override(language):
                assert board_view.bot_level_name(level, language) == Table(bot_level=level).get_bot_level_display()
    assert board_view.bot_level_name(DIFICIL, "es") == "difícil"
    assert board_view.bot_level_name(DIFICIL, "en") != "difícil"  # kept per language
