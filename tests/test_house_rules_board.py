"""The table's board in the rounds the house rules add (``shared/VARIANTS.md``), drawn from real games of
the engine for every seat: an indias round shows each player every other card by its seat and their own
face down, never named; a subastados round shows the blind bids, the winner's trump choice and then the real
bids; a tie-break round is announced as such; se dobla's ×2 is said; the table's rules are named and linked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.utils.translation import override
from live.helpers import person

from games.engine import GameState, Phase, default_action, load_game
from games.engine.presets import Rules
from games.engine.schedule import RoundKind
from games.models import Seat, Table
from games.read import board

pytestmark = pytest.mark.django_db

PRESET_RECORDS = Path(__file__).parent / "fixtures" / "records" / "presets"
DATA_CARD = re.compile(r'data-card="([^"]+)"')


def table_of(rules: str, size: int) -> tuple[Table, list[Seat]]:
    table = Table.objects.create(size=size, rules=rules, status=Table.Status.PLAYING)
    seats = [
        Seat.objects.create(table=table, position=p, user=person(f"t{table.pk}p{p}"), name=f"Jugador{p}")
        for p in range(size)
    ]
    return table, seats


def drawn(table: Table, seats: list[Seat], game: GameState, seat: int | None, lang: str = "es") -> str:
    """The board ``seat``'s person (None: a spectator) is sent."""
    viewer = board.Viewer(seats[seat].user_id if seat is not None else None, lang)
    with override(lang):
        return str(board.draw_board(board.board_context(table, seats, viewer, 0, game)))


def advance_to(game: GameState, kind: RoundKind, phase: Phase = Phase.BIDDING) -> None:
    """Play ``game`` (default moves) until a round of ``kind`` is at ``phase``."""
    for _ in range(100_000):
        if game.spec is not None and game.spec.kind is kind and game.phase is phase:
            return
        if game.phase is Phase.ROUND_OVER:
            game.deal()
        else:
            game.apply(default_action(game))
    raise AssertionError(f"no {kind} round at {phase}")


def test_an_indias_round_shows_every_card_but_your_own() -> None:
    table, seats = table_of("indias", 4)
    game = GameState.new(4, seed=3, rules=Rules.of("indias"))
    advance_to(game, RoundKind.INDIAS)
    cards = {p: str(game.hands[p][0]) for p in range(4)}
    for seat in range(4):
        html = drawn(table, seats, game, seat)
        named = set(DATA_CARD.findall(html))
        assert cards[seat] not in named, f"seat {seat} was shown their own indias card"
        assert named >= {c for p, c in cards.items() if p != seat}
        for p, card in cards.items():  # each card in front of its seat
            if p != seat:
                assert re.search(rf'<li class="played slot-\d seen" data-seat="{p}" data-card="{card}">', html)
        own = game.hands[seat][0]
        assert own.name_es not in html.replace(f'data-card="{cards[seat]}"', "")
        assert 'aria-label="Tu carta: boca abajo, no la ves"' in html and "tu carta, boca abajo" in html
        if game.turn == seat:
            assert "Indias: ves la carta de los demás, nunca la tuya" in html
    # a spectator sees no unplayed card at all
    spectator = drawn(table, seats, game, None)
    assert not set(DATA_CARD.findall(spectator)) & set(cards.values())
    # the bids, then each card played for its player as it is: the page offers no card to click
    while game.phase is Phase.BIDDING:
        game.apply(default_action(game))
    turn = game.turn
    assert turn is not None
    html = drawn(table, seats, game, turn)
    assert "Tu carta se juega sola." in html and 'ws-send hx-vals=\'{"action": "play"' not in html


def test_a_subastados_round_shows_the_blind_bids_the_choice_and_the_real_bids() -> None:
    table, seats = table_of("indias", 4)
    game = GameState.new(4, seed=5, rules=Rules.of("indias"))
    advance_to(game, RoundKind.SUBASTADOS)
    first = game.turn
    assert first is not None
    html = drawn(table, seats, game, first)
    assert "Pide a ciegas: quien más pida elige el triunfo." in html
    assert "Subastados: primero se pide a ciegas" in html
    assert 'aria-label="Pedir 0"' in html
    for _ in range(4):
        game.apply(default_action(game))
    assert game.phase is Phase.CHOOSING_TRUMP and game.blind_bids is not None
    html = drawn(table, seats, game, game.turn)
    assert "A ciegas: " in html and html.count('class="tag blind-bid"') == 4
    assert 'aria-label="Elige el triunfo"' in html
    winner = game.turn
    game.apply(default_action(game))
    html = drawn(table, seats, game, game.turn)
    assert re.search(r"elegido por Jugador\d", html) and "A ciegas: " in html
    assert "Pide tus bazas." in html  # the real bid, knowing the trump
    assert winner is not None


def test_a_tie_break_round_is_announced() -> None:
    """The sample game of se dobla at 3 that ends level (tests/fixtures/records/presets): its first tie-break
    round, dealt."""
    record = json.loads((PRESET_RECORDS / "se-dobla-3p-desempate.json").read_text())
    rules = Rules.from_json(record["rules"])
    schedule = len(rules.schedule(3))
    assert len(record["rounds"]) > schedule
    game = load_game({**record, "rounds": record["rounds"][:schedule]})
    assert game.phase is Phase.ROUND_OVER  # the top score shared: the game goes on
    game.deal(seed=1)
    table, seats = table_of("se-dobla:sencillas", 3)
    html = drawn(table, seats, game, 0)
    assert "Ronda de desempate 1" in html and "se juegan rondas de desempate" in html
    assert "Se dobla: quien gane todas las bazas" in html  # a tie-break round has M cards


def test_the_table_names_its_rules_and_links_to_them() -> None:
    table, seats = table_of("se-dobla:dobles:frente", 5)
    game = GameState.new(5, seed=1, rules=Rules.of("se-dobla", schedule="dobles", forehead=True))
    html = drawn(table, seats, game, 0)
    assert '<a href="/reglas/se-dobla/" data-rules="se-dobla">Se dobla · dobles · en la frente</a>' in html
    assert "Ronda 1 de 24 · indias · 1 carta" in html  # «en la frente»: every one-card round is an indias one
    english = drawn(table, seats, game, 0, "en")
    assert "Se dobla (doubling) · double · on the forehead" in english


def test_a_bazas_hand_is_french() -> None:
    table, seats = table_of("bazas", 7)
    game = GameState.new(7, seed=2, rules=Rules.of("bazas"))
    html = drawn(table, seats, game, 0)
    hand = re.search(r'<section id="hand".*?</section>', html, re.S)
    assert hand is not None
    assert set(DATA_CARD.findall(hand.group(0))) == {str(c) for c in game.hands[0]}
    for card in game.hands[0]:
        assert f'aria-label="{card.name_es}"' in hand.group(0)
    assert "Juego de las Bazas" in html


@pytest.mark.parametrize("rules", ["indias", "bazas", "se-dobla:escalera"])
def test_every_board_of_a_whole_game_names_only_cards_the_viewer_may_see(rules: str) -> None:
    """Every seat's board at every decision of a whole game (3 seats): only its own hand (never its indias
    card), the trump card, the cards played this round and, in indias rounds, the others' cards."""
    table, seats = table_of(rules, 3)
    game = GameState.new(3, seed=11, rules=Table(rules=rules).game_rules)
    boards = 0
    while not game.is_over:
        if game.phase is Phase.ROUND_OVER:
            game.deal()
            continue
        if boards % 7 == 0:
            played = {str(c) for c in game.log[-1].plays}
            trump = {str(game.trump_card)} if game.trump_card else set()
            indias = game.spec is not None and game.spec.kind is RoundKind.INDIAS
            for seat in (0, 1, 2, None):
                named = set(DATA_CARD.findall(drawn(table, seats, game, seat)))
                allowed = played | trump
                if seat is not None:
                    others = {str(c) for p in range(3) if p != seat for c in game.hands[p]}
                    allowed |= others if indias else {str(c) for c in game.hands[seat]}
                assert named <= allowed, (rules, game.number, seat, named - allowed)
        boards += 1
        game.apply(default_action(game))
    assert boards > 50
