"""The lobby's choices follow the house rules (issue 43): «Jugar ya», «Abrir mesa» and «Mesa privada» offer only
the sizes the rules chosen are played by (Clásica 3–6, Indias 3–8, Se dobla 3–8, Bazas 3–7), a forged form with
any other size is refused in words with nothing created, and each form says how long the game it opens lasts.

The options switching as the rules change in the page is ``tests/browser/test_lobby_in_browser.py``."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.test import Client
from django.utils import translation
from live.helpers import person

from accounts.models import Account, Profile
from games.engine.presets import PLAYERS, GameLength, Rules
from games.models import RULES_KEYS, Seat, Table, rules_of
from games.read import lengths
from games.table import actions

pytestmark = pytest.mark.django_db

LABELS = {
    "clasica": "Clásica",
    "indias": "Indias, subastados y oros",
    "se-dobla": "Se dobla",
    "bazas": "Juego de las Bazas",
}
FORMS = {
    "Jugar ya": "/jugar/",
    "Abrir mesa": "/mesas/nueva/",
    "Mesa privada": "/mesas/privada/",
}


def home_as(user: Any, language: str = "es") -> str:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    response = client.get("/")
    assert response.status_code == 200
    return response.content.decode()


def form_of(page: str, action: str) -> str:
    match = re.search(rf'<form method="post" action="{re.escape(action)}".*?</form>', page, re.S)
    assert match, action
    return match.group(0)


def offered_sizes(form: str) -> tuple[list[int], list[int]]:
    """(the sizes offered, the sizes in the form but disabled and hidden)."""
    offered, refused = [], []
    radios = re.findall(
        r'<label class="size-choice"( hidden)?><input type="radio" name="size" value="(\d)"([^>]*)>', form
    )
    if radios:
        for hidden, value, rest in radios:
            assert bool(hidden) == ("disabled" in rest), form  # hidden exactly when it cannot be sent
            (refused if hidden else offered).append(int(value))
        return offered, refused
    select = re.search(r'<select name="size">(.*?)</select>', form, re.S)
    assert select, form
    for value, rest in re.findall(r'<option value="(\d)"([^>]*)>', select.group(1)):
        (refused if "disabled hidden" in rest else offered).append(int(value))
    return offered, refused


@pytest.mark.parametrize("key", ["clasica", "indias", "se-dobla:dobles:frente", "bazas"])
def test_each_form_offers_the_sizes_of_the_rules_it_shows_and_says_how_long_the_game_lasts(key: str) -> None:
    ana = person("ana")
    Profile.objects.update_or_create(user=ana, defaults={"quick_size": 3, "quick_stake": 0, "quick_rules": key})
    rules = rules_of(key)
    low, high = PLAYERS[rules.preset]
    page = home_as(ana)
    for action in FORMS.values():
        form = form_of(page, action)
        assert f'<option value="{rules.preset}" selected>' in form
        offered, refused = offered_sizes(form)
        assert offered == list(range(low, high + 1))
        assert refused == [n for n in range(3, 9) if n not in offered]
        size = 4 if action == "/mesas/privada/" else 3  # the private form starts at four, the others remember
        line = re.search(r'class="hint game-length" aria-live="polite">([^<]*)<', form)
        assert line and line.group(1) == str(lengths.expected(rules, size))
        assert line.group(1).startswith(f"{len(rules.schedule(size))} rondas · unos ")
    # for the page's script: the words for every rules key and each size it is played by, in the page's language
    data = json.loads(re.search(r'<script id="game-lengths" type="application/json">(.*?)</script>', page).group(1))
    assert set(data) == set(RULES_KEYS)
    for each, by_size in data.items():
        low, high = PLAYERS[rules_of(each).preset]
        assert list(by_size) == [str(n) for n in range(low, high + 1)]
    assert data["indias"]["8"] == str(lengths.expected(Rules.of("indias"), 8)) and "47 rondas" in data["indias"]["8"]
    assert "7" not in data["clasica"] and set(data["bazas"]) == {"3", "4", "5", "6", "7"}
    assert '<script src="/static/js/lobby.js" defer></script>' in page


def test_the_length_is_written_in_english_too() -> None:
    ana = person("ana")
    page = home_as(ana, "en")
    line = re.search(r'class="hint game-length" aria-live="polite">([^<]*)<', form_of(page, "/jugar/"))
    with translation.override("en"):
        expected = str(lengths.expected(Rules(), 4))
    assert line and line.group(1) == expected and re.fullmatch(r"19 rounds · about \d+ min", expected)


@pytest.mark.parametrize(
    ("rules", "size"),
    [("clasica", 7), ("clasica", 8), ("bazas", 8), ("clasica", 2), ("indias", 9), ("se-dobla", 2)],
)
def test_a_forged_size_the_rules_cannot_honour_is_refused_in_words_and_nothing_is_made(rules: str, size: int) -> None:
    ana = person("ana")
    before = Account.objects.get(user=ana).balance
    client = Client()
    client.force_login(ana)
    preset = rules.split(":")[0]
    low, high = PLAYERS[preset]
    for name, url in FORMS.items():
        response = client.post(url, {"rules": rules, "size": str(size), "stake": "100", "bots": "on"}, follow=True)
        page = response.content.decode()
        assert response.redirect_chain == [("/", 302)], name
        assert f"Con las reglas «{LABELS[preset]}» una mesa es de {low} a {high} jugadores." in page, name
    assert not Table.objects.exists() and not Seat.objects.exists()
    assert Account.objects.get(user=ana).balance == before
    # «Jugar ya» remembers only a choice it made
    assert not Profile.objects.filter(user=ana, quick_size=size).exists()


def test_the_same_sizes_are_taken_when_the_rules_are_played_by_them() -> None:
    ana, bea = person("ana"), person("bea")
    table = actions.do_quick_play(ana, 8, 0, rules="indias")
    assert (table.size, table.rules) == (8, "indias")
    client = Client()
    client.force_login(bea)
    response = client.post("/mesas/privada/", {"rules": "bazas", "size": "7", "stake": "0", "bots": "on"})
    made = Table.objects.get(created_by=bea)
    assert response["Location"] == f"/mesa/{made.pk}/" and (made.size, made.rules) == (7, "bazas")


# -- the length --------------------------------------------------------------------------------


def test_the_expected_length_formula() -> None:
    length = GameLength(rounds=19, tricks=96, moves=464, leads=77)
    assert Rules().length(4) == length
    # (19 − 1) × 7 + 77 × (2.2 + 3 + 3 × 2.2) / 4 + (464 − 77) × (3 + 3 × 1) / 4
    seconds = lengths.expected_seconds(length, 4, round_pause=7, trick_pause=2.2, bot_delay=1, person_move=3)
    assert seconds == pytest.approx(126 + 77 * 2.95 + 387 * 1.5)
    # the bots slower than the trick's pause: a bot's lead waits its own delay
    seconds = lengths.expected_seconds(length, 4, round_pause=0, trick_pause=1, bot_delay=2, person_move=3)
    assert seconds == pytest.approx(77 * (1 + 3 + 3 * 2) / 4 + 387 * (3 + 3 * 2) / 4)
    # no pauses, every move a bot's at once but the person's: only the person's moves count
    assert lengths.expected_seconds(length, 4, round_pause=0, trick_pause=0, bot_delay=0, person_move=4) == 464
    # the person as quick as the bots: still their clock starts once the trick is shown
    seconds = lengths.expected_seconds(length, 4, round_pause=7, trick_pause=2.2, bot_delay=1, person_move=1)
    assert seconds == pytest.approx(18 * 7 + 77 * (2.2 + 1 + 3 * 2.2) / 4 + 387)
    assert [lengths.rounded_minutes(s) for s in (10, 89, 91, 599, 601, 876, 2849)] == [1, 1, 2, 10, 10, 15, 45]


def test_every_preset_counts_its_rounds_tricks_and_moves_from_its_schedule() -> None:
    # indias at eight: 47 rounds (issue 43); 8 subastados rounds of 5 cards, each bid twice, trump chosen once
    indias = Rules.of("indias").length(8)
    assert indias.rounds == 47 == len(Rules.of("indias").schedule(8))
    for rules, players in [(Rules(), 6), (Rules.of("indias"), 8), (Rules.of("se-dobla", schedule="escalera"), 3)]:
        rounds = rules.schedule(players)
        seats = 5 if rules.is_clasica and players == 6 else players  # at six the dealer rests in Clásica
        length = rules.length(players)
        assert length.tricks == sum(spec.cards for spec in rounds)
        assert length.leads == length.tricks - len(rounds)
        bids = sum(seats * (2 if spec.is_blind else 1) for spec in rounds)
        trumps = sum(1 for spec in rounds if spec.is_auction)
        assert length.moves == bids + trumps + seats * length.tricks
    assert Rules().length(6).moves == 21 * 5 + 6 + 5 * 112


def test_the_expected_length_uses_the_servers_pauses(settings: Any) -> None:
    settings.POCHA_ROUND_PAUSE, settings.POCHA_TRICK_PAUSE, settings.POCHA_BOT_DELAY = 7, 2.2, 1
    assert lengths.expected(Rules(), 4) == lengths.Expected(19, 15)
    settings.POCHA_ROUND_PAUSE = settings.POCHA_TRICK_PAUSE = settings.POCHA_BOT_DELAY = 0
    assert lengths.expected(Rules(), 4) == lengths.Expected(19, lengths.rounded_minutes(464 * 3 / 4))
    with pytest.raises(ValueError):
        lengths.expected(Rules(), 8)


def test_the_open_tables_list_says_how_long_each_game_lasts() -> None:
    ana, bea = person("ana"), person("bea")
    actions.do_create_table(ana, 8, rules="indias")
    client = Client()
    client.force_login(bea)
    listing = client.get("/mesas/abiertas/").content.decode()
    assert str(lengths.expected(Rules.of("indias"), 8)) in listing and "47 rondas" in listing


def test_the_invitation_to_a_private_table_says_how_long_the_game_lasts() -> None:
    ana, bea = person("ana"), person("bea")
    table = actions.do_create_private_table(ana, 5, 0, bots_allowed=True, rules="se-dobla:escalera")
    for language, said in (("es", "Duración de la partida: {}."), ("en", "How long the game lasts: {}.")):
        client = Client(HTTP_ACCEPT_LANGUAGE=language)
        client.force_login(bea)
        page = client.get(f"/mesa/privada/{table.code}/").content.decode()
        with translation.override(language):
            words = str(lengths.expected(Rules.of("se-dobla", schedule="escalera"), 5))
        assert f'<p class="game-length">{said.format(words)}</p>' in page
    with translation.override("es"):
        assert "40 rondas" in str(lengths.expected(Rules.of("se-dobla", schedule="escalera"), 5))
