"""The board's smaller things: the auction explained where it happens (with the rules page it links to),
the deck's own suit marks wherever the board names a trump suit, losses in the loss colour, and a
cancelled table that says why and offers the way back to the lobby, whichever way it was called off."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone
from django.utils.translation import override
from live.helpers import person
from test_table_english import english, spanish_in

from games.engine import GameState, Phase, default_action
from games.engine.cards import SUITS
from games.engine.snapshot import load
from games.models import Seat, Table
from games.read import board
from games.table import actions

FRENCH_SUITS = re.compile("[♥♣♠♦✹⚔]")


# -- boards drawn from a game in memory (no database: the board reads only what it is given) -----------


def game_until(players: int, seed: int, stop: Any) -> GameState:
    """A game of ``players`` played by the default moves until ``stop(game)``."""
    game = GameState.new(players, seed=seed)
    for _ in range(10_000):
        if stop(game):
            return game
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        else:
            game.apply(default_action(game))
    raise AssertionError("the game never got there")


def drawn(
    game: GameState, seat: int, language: str = "es", *, stake: int = 0, winnings: dict[int, int] | None = None
) -> str:
    table = Table(pk=7, size=game.players, status=Table.Status.PLAYING, stake=stake, seq=3)
    seats = [
        Seat(table=table, position=p, name=f"p{p}", user_id=100 + p, sockets=1, winnings=(winnings or {}).get(p, 0))
        for p in range(game.players)
    ]
    with override(language):
        ctx = board.board_context(table, seats, board.Viewer(100 + seat, language), spectators=0, game=game)
        ctx["oob"] = False
        return str(board.draw_board(ctx))


def section(html: str, name: str) -> str:
    return html.split(f'id="{name}"', 1)[1].split("</section>", 1)[0]


def auction_bidding(game: GameState) -> bool:
    return game.phase is Phase.BIDDING and game.spec is not None and game.spec.is_auction


def choosing_trump(game: GameState) -> bool:
    return game.phase is Phase.CHOOSING_TRUMP


# -- the auction, explained where it happens --------------------------------------------------


def test_an_auction_round_says_how_the_auction_is_won_and_links_to_the_rules() -> None:
    game = game_until(4, 5, auction_bidding)
    html = drawn(game, game.turn)
    rule = re.search(r'<p class="auction-rule" id="auction-rule">(.*?)</p>', html, re.S)
    assert rule is not None
    text = rule.group(1)
    assert "Subasta: el triunfo se elige después de pedir" in text
    assert "quien más pide lo elige" in text and "en un empate, quien pidió antes" in text
    assert "el último puede pedir lo que quiera" in text  # no last-bidder restriction in an auction
    assert 'href="/reglas/#subasta"' in text
    # the same line in English
    english_rule = re.search(r'id="auction-rule">(.*?)</p>', drawn(game, game.turn, "en"), re.S)
    assert english_rule is not None and spanish_in(english_rule.group(0)) == []
    assert "highest bid" in english_rule.group(1)
    # still there once trump is chosen and the cards are played
    playing = game_until(4, 5, lambda g: g.phase is Phase.PLAYING and g.spec is not None and g.spec.is_auction)
    assert 'id="auction-rule"' in drawn(playing, 0)


def test_a_normal_round_has_no_auction_line() -> None:
    game = game_until(4, 5, lambda g: g.phase is Phase.BIDDING and g.number == 8)
    html = drawn(game, 0)
    assert 'id="auction-rule"' not in html and "Subasta:" not in html


# -- the deck's own suits ----------------------------------------------------------------------


@pytest.mark.parametrize("language", ["es", "en"])
def test_the_trump_buttons_show_the_decks_suit_marks_and_keep_the_suits_names(language: str) -> None:
    game = game_until(4, 3, choosing_trump)
    html = drawn(game, game.turn, language)
    controls = section(html, "controls")
    group = re.search(r'<div role="group" aria-label="([^"]+)" class="trump-buttons">(.*?)</div>', controls, re.S)
    assert group is not None
    assert group.group(1) == ("Elige el triunfo" if language == "es" else "Choose trump")
    buttons = re.findall(
        r'<button type="button" class="suit suit-(\w)"[^>]*aria-label="([^"]+)">(.*?)</button>', group.group(2), re.S
    )
    names = {s.value: (s.name_es if language == "es" else s.name_en) for s in SUITS}
    assert [(code, label) for code, label, _ in buttons] == [(s.value, names[s.value]) for s in SUITS]
    for code, label, inside in buttons:
        assert f'<use href="/static/img/baraja.svg#suit-{code}"' in inside, inside
        assert 'aria-hidden="true"' in inside.split("<use")[0]  # the picture is not read out: the label is
        assert f'<span class="suit-name">{label}</span>' in inside
    assert not FRENCH_SUITS.search(html)


def test_the_trump_line_and_the_scoreboard_mark_trump_with_the_decks_suits() -> None:
    # an auction's trump is a suit, not a card: the line names it with its mark
    game = game_until(4, 3, lambda g: g.phase is Phase.PLAYING and g.spec is not None and g.spec.is_auction)
    html = drawn(game, 0)
    status = section(html, "board-status")
    suit = game.trump_suit
    assert suit is not None
    line = re.search(r'<strong class="suit-(\w) trump-suit">(.*?)</strong>', status, re.S)
    assert line is not None and line.group(1) == suit.value
    assert f"baraja.svg#suit-{suit.value}" in line.group(2) and suit.name_es in line.group(2)
    # every row of the scoreboard: the round's trump as its mark, named for screen readers
    heads = re.findall(r'<span class="round-trump suit-(\w)" role="img" aria-label="([^"]+)">(.*?)</span>', html, re.S)
    assert len(heads) == len(game.results) >= 8
    for code, label, inside in heads:
        assert f"baraja.svg#suit-{code}" in inside and label in {s.name_es for s in SUITS}
    assert not FRENCH_SUITS.search(html)


# -- losses in the loss colour ------------------------------------------------------------------


def test_the_final_board_marks_chips_won_as_gains_and_the_stake_lost_as_a_loss() -> None:
    game = game_until(4, 11, lambda g: g.phase is Phase.GAME_OVER)
    winners = game.winners()
    assert winners
    share = 400 // len(winners)
    html = drawn(game, 0, stake=100, winnings={p: share for p in winners})
    chips = re.findall(r'<span class="won-chips (in|out)" data-chips="(\d+)">([^<]+)</span>', section(html, "controls"))
    assert len(chips) == 4
    for kind, amount, text in chips:
        if int(amount):
            assert kind == "in" and text.startswith("gana")
        else:
            assert kind == "out" and text == "pierde 100 fichas"
    assert [kind for kind, _, _ in chips].count("out") == 4 - len(winners)


def test_the_stylesheet_draws_a_loss_in_the_loss_colour_on_the_board_wallet_ranking_and_profile() -> None:
    css = re.sub(r"/\*.*?\*/", "", (settings.BASE_DIR / "static/css/pocha.css").read_text(), flags=re.S)

    def colour(selector: str) -> str:
        """The colour the last rule naming exactly ``selector`` gives it."""
        found = None
        for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
            if selector in [s.strip() for s in selectors.split(",")]:
                value = re.search(r"(?<![-\w])color:\s*([^;]+);", body)
                found = value.group(1).strip() if value else found
        assert found, f"no colour for {selector}"
        return found

    assert colour(".won-chips.out") == "var(--danger)"
    assert colour(".won-chips") == "var(--felt)"
    for page in (".movements .out", ".ranking-table .out", ".profile-stats .out", ".recent-games .out"):
        assert colour(page) == "var(--danger)", page


# -- a cancelled table ----------------------------------------------------------------------


def past(table_id: int) -> Table:
    Table.objects.filter(pk=table_id).update(due_at=timezone.now() - timedelta(seconds=1))
    return Table.objects.get(pk=table_id)


def in_spanish(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def cancelled_page(client: Client, table_id: int) -> str:
    page = client.get(f"/mesa/{table_id}/")
    assert page.status_code == 200
    return page.content.decode()


def check_cancelled(html: str, reason: str, *, staked: bool, note: str | None = None) -> None:
    status = section(html, "board-status")
    assert "Partida cancelada" in status and reason in status
    assert ("Se han devuelto las apuestas." in status) is staked
    if note is not None:
        assert f"Motivo: {note}" in status
    else:
        assert "Motivo:" not in status
    assert "Bote" not in status and "stake-line" not in status  # the pot went back: no pot
    controls = section(html, "controls")
    assert re.search(r'<a class="button" href="/">Volver a las mesas</a>', controls)
    assert "ws-send" not in controls
    assert 'class="hand"' not in section(html, "hand")  # no hand
    felt = section(html, "felt")
    assert not re.search(r'class="seat [^"]*\bturn\b', felt)  # no turn ring
    assert 'role="timer"' not in html and "data-countdown" not in felt  # no clock
    assert 'data-my-turn=""' in html


@pytest.mark.django_db
def test_a_game_the_moderator_cancelled_says_why_and_offers_the_lobby() -> None:
    host, guest, moderator = person("uno"), person("dos"), person("mod")
    table = actions.do_create_table(host, 3, stake=500)
    actions.do_take_seat(table.pk, guest)
    actions.do_start(table.pk, host)
    for _ in range(2):  # two bids in: hands dealt, someone's turn on the clock
        table = Table.objects.get(pk=table.pk)
        seat = Seat.objects.get(table=table, position=table.turn_seat)
        if seat.is_bot:
            assert actions.do_due(table.pk, past(table.pk).seq) is not None
        else:
            mover = host if seat.user_id == host.pk else guest
            actions.do_action(table.pk, mover, default_action(load(table.state)), table.seq)
    before = cancelled_page(in_spanish(host), table.pk)
    assert "Bote" in before and 'class="hand"' in before  # what the cancel takes away was there
    actions.do_admin_cancel(table.pk, moderator, "  trampas   con bots ")
    table.refresh_from_db()
    assert (table.cancel_reason, table.cancel_note) == ("moderator", "trampas con bots")
    for user in (host, guest):
        check_cancelled(
            cancelled_page(in_spanish(user), table.pk),
            "La ha cancelado un moderador.",
            staked=True,
            note="trampas con bots",
        )
    # the socket's redraw is the same board
    pushed = board.render_board(table.pk, host.pk, "es")
    assert pushed is not None
    check_cancelled(pushed[1], "La ha cancelado un moderador.", staked=True, note="trampas con bots")
    # and in English
    html = cancelled_page(english(guest), table.pk)
    assert "Game cancelled" in html and "Reason: trampas con bots" in html and "Back to the tables" in html


@pytest.mark.django_db
def test_the_hosts_cancel_says_so() -> None:
    host, guest = person("uno"), person("dos")
    table = actions.do_create_private_table(host, 3, stake=100, bots_allowed=True)
    actions.do_take_seat(table.pk, guest, code=table.code)
    actions.do_cancel(table.pk, host)
    assert Table.objects.get(pk=table.pk).cancel_reason == "host"
    check_cancelled(cancelled_page(in_spanish(guest), table.pk), "La ha cancelado quien creó la mesa.", staked=True)


@pytest.mark.django_db
def test_the_host_leaving_a_waiting_private_table_cancels_it_as_the_host() -> None:
    host = person("uno")
    table = actions.do_create_private_table(host, 4, stake=0, bots_allowed=False)
    actions.do_leave_seat(table.pk, host)
    table.refresh_from_db()
    assert (table.status, table.cancel_reason) == (Table.Status.CANCELLED, "host")
    check_cancelled(cancelled_page(in_spanish(host), table.pk), "La ha cancelado quien creó la mesa.", staked=False)


@pytest.mark.django_db
def test_a_table_everyone_stood_up_from_says_so() -> None:
    first, second = person("uno"), person("dos")
    table = actions.do_create_table(first, 4, stake=100)
    actions.do_take_seat(table.pk, second)
    actions.do_leave_seat(table.pk, second)
    assert Table.objects.get(pk=table.pk).status == Table.Status.WAITING
    actions.do_leave_seat(table.pk, first)
    assert Table.objects.get(pk=table.pk).cancel_reason == "everyone_left"
    check_cancelled(
        cancelled_page(in_spanish(first), table.pk), "Se levantaron todos los jugadores antes de empezar.", staked=True
    )


@pytest.mark.django_db
def test_a_table_nobody_came_to_says_so() -> None:
    host = person("uno")
    table = actions.do_create_table(host, 4)
    assert table.fill_at is None  # not a quick table: nobody fills it, it is called off after a while
    assert actions.do_due(table.pk, past(table.pk).seq) is not None
    table.refresh_from_db()
    assert (table.status, table.cancel_reason, table.cancel_note) == (Table.Status.CANCELLED, "nobody_came", "")
    check_cancelled(cancelled_page(in_spanish(host), table.pk), "No llegaron jugadores a tiempo.", staked=False)


# -- the rules page -------------------------------------------------------------------------


SECTIONS = ["rondas", "pedido", "baza", "subasta", "puntuacion"]


@pytest.mark.django_db
def test_the_rules_page_has_the_classic_rules_in_sections_and_is_linked_from_every_page() -> None:
    page = Client().get("/reglas/")  # anyone may read the rules
    assert page.status_code == 200
    html = page.content.decode()
    for anchor in SECTIONS:
        assert f'<section class="card" id="{anchor}"' in html and f'href="#{anchor}"' in html
    # the numbers come from the engine's schedule and deck
    rows = re.findall(r'<tr><th scope="row">(\d)</th><td>(\d+)</td><td>(\d+)</td><td>([^<]+)</td></tr>', html)
    assert rows == [
        ("3", "3", "18", "2, 4, 5, 6"),
        ("4", "4", "19", "2, 4"),
        ("5", "5", "20", "ninguna"),
        ("6", "6", "21", "ninguna"),
    ]
    subasta = section(html, "subasta")
    assert "quien más pide" in subasta and "quien pidió antes" in subasta and "el último puede pedir" in subasta
    pedido = section(html, "pedido")
    assert "no puede hacer que la suma de los pedidos sea igual" in pedido
    baza = section(html, "baza")
    assert "Asistir" in baza and "Montar" in baza and "Fallar" in baza
    # the footer of every page links to it, the home page too
    home = Client().get("/").content.decode()
    assert 'href="/reglas/"' in home.split('<footer class="site-footer">')[1]


@pytest.mark.django_db
def test_the_rules_page_in_english() -> None:
    page = Client(headers={"accept-language": "en"}).get("/reglas/")
    html = page.content.decode()
    assert '<html lang="en">' in html and "Rules of La Pocha" in html
    for anchor in SECTIONS:  # the anchors stay as they are in every language (the table links to them)
        assert f'id="{anchor}"' in html
    assert spanish_in(html) == []
