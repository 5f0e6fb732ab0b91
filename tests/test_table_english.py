"""The table page in English has no Spanish left: every board a game goes through (waiting, bidding,
the forbidden last bid, an auction and its trump choice, cards that may not be played and why, a trick
won, a round's result, away and back, the final ranking with chips, a cancelled table), the socket's
redraws, the refusals of every rule code of the engine and the other refusals a table sends, and the
phrases of table talk.

Two checks, each able to fail on its own:

* every text the table's templates and Python modules mark for translation has an English text in the
  compiled catalogue (a text added without ``make messages`` and a translation is caught here);
* every text an English page shows (text, labels, titles, the reasons of cards, the script's texts) is
  read word by word against the Spanish catalogue: a word that only Spanish texts use (``Ronda``,
  ``pidió``, a suit as ``oros``) is a text left untranslated.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from gettext import GNUTranslations
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils.translation import gettext, ngettext, override
from django.utils.translation.template import templatize
from live.helpers import person
from test_rule_words import SCENARIOS

from games.engine import Phase, Play, default_action
from games.engine.cards import SUITS
from games.engine.snapshot import load
from games.models import Seat, Table
from games.read import board, talk
from games.table import actions, rule_words
from games.table.errors import ActionError
from pocha_site.jinja2 import messages_as_python

ROOT = Path(settings.BASE_DIR)
PO = ROOT / "locale/en/LC_MESSAGES/django.po"
MO = ROOT / "locale/en/LC_MESSAGES/django.mo"

#: What the table page is made of: its templates and the modules whose texts it shows.
TABLE_TEMPLATES = [
    "templates/base.html",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "templates/games").glob("*.html")),
]
TABLE_MODULES = [
    "games/models.py",
    "games/web/views.py",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "games/read").glob("*.py")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "games/table").rglob("*.py")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "games/live").glob("*.py")),  # the socket's refusals
]
#: The modules whose texts reach a table's page through a push or a flash, not only through its templates.
TABLE_SIDE = ("games/table/", "games/read/", "games/live/", "games/web/")
GETTEXT_NAMES = {"_", "gettext", "gettext_lazy", "gettext_noop", "pgettext", "pgettext_lazy"}
NGETTEXT_NAMES = {"ngettext", "ngettext_lazy", "npgettext", "npgettext_lazy"}
PEOPLE = ["alice", "bruno", "carla", "dario"]
#: The game's Spanish vocabulary besides the suits' names (RULES.md keeps it in the Spanish interface).
GAME_WORDS = {"sota", "caballo", "subida", "subasta", "subastas", "bajada", "baza", "bazas", "triunfo", "pedido"}
GAME_WORDS |= {"asistir", "montar", "fallar", "contrafallar", "descansa", "reparte"}


# -- the catalogue -------------------------------------------------------------------------------


def po_entries() -> list[tuple[str, list[str]]]:
    """(msgid, [msgstr, ...]) of every entry of the English .po (plural forms: the singular msgid and the
    plural's, each paired with every msgstr)."""
    entries: list[tuple[str, list[str]]] = []
    current: dict[str, str] = {}
    key = None

    def flush() -> None:
        if "msgid" in current and current["msgid"]:
            strs = [v for k, v in current.items() if k.startswith("msgstr")]
            entries.append((current["msgid"], strs))
            if "msgid_plural" in current:
                entries.append((current["msgid_plural"], strs))

    for raw in PO.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            if not line and current:
                flush()
                current, key = {}, None
            continue
        match = re.match(r'^(msgid_plural|msgid|msgstr(?:\[\d+\])?) "(.*)"$', line)
        if match:
            key = match.group(1)
            current[key] = ast.literal_eval(f'"{match.group(2)}"')
        elif line.startswith('"') and key:
            current[key] += ast.literal_eval(line)
    if current:
        flush()
    return entries


def without_placeholders(text: str) -> str:
    return re.sub(r"%\(\w+\)[sd]|%[sd]|\{\w*\}", " ", text)


WORD = re.compile(r"[^\W\d_]+")


def words(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(without_placeholders(text)) if len(w) > 1}


def spanish_only_words() -> set[str]:
    """Words that Spanish texts of the catalogue use and no English text does, and the game's own Spanish
    words (suits, ranks, phases, moves), which an English page writes in English (coins, jack, auction,
    follow suit) even where an English text elsewhere quotes them."""
    spanish: set[str] = set()
    english: set[str] = set()
    for msgid, msgstrs in po_entries():
        spanish |= words(msgid)
        for msgstr in msgstrs:
            english |= words(msgstr)
    names = {s.name_es for s in SUITS} | GAME_WORDS
    return (spanish - english) | names


def exact_msgids() -> set[str]:
    """Spanish texts of the catalogue whose English differs: shown as they are, they were not translated."""
    return {msgid.strip() for msgid, strs in po_entries() if any(s and s != msgid for s in strs)}


def marked_texts() -> list[tuple[str, str, str | None]]:
    """(where, msgid, plural msgid or None) of every text the table's templates and modules mark for
    translation."""
    found: list[tuple[str, str, str | None]] = []
    for name in TABLE_MODULES:
        tree = ast.parse((ROOT / name).read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called not in GETTEXT_NAMES | NGETTEXT_NAMES:
                continue
            strings = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if called.startswith(("p", "np")):
                strings = strings[1:]  # the context
            if strings:
                plural = strings[1] if called in NGETTEXT_NAMES and len(strings) > 1 else None
                found.append((f"{name}:{node.lineno}", strings[0], plural))
    for name in TABLE_TEMPLATES:
        python = templatize((ROOT / name).read_text(), origin=name)
        for match in re.finditer(r"\b(n?)gettext\((.*?)\)\s*$", python, re.M):
            args = ast.literal_eval(f"({match.group(2)},)")
            found.append((name, args[0], args[1] if match.group(1) else None))
    for line in messages_as_python().splitlines():
        if line.startswith(("gettext(", "ngettext(")):
            call = ast.parse(line).body[0].value  # type: ignore[attr-defined]
            where = line.rsplit("# ", 1)[-1]
            strings = [a.value for a in call.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            found.append((where, strings[0], strings[1] if line.startswith("ngettext(") else None))
    return found


def test_every_text_of_the_table_has_its_english_in_the_compiled_catalogue() -> None:
    texts = marked_texts()
    assert len(texts) > 300, "the texts were not read (a change in how templates are read?)"
    with MO.open("rb") as mo:
        catalogue = GNUTranslations(mo)
    english = catalogue._catalog  # type: ignore[attr-defined]
    po = dict(po_entries())
    missing = []
    for where, msgid, plural in texts:
        translated = english.get((msgid, 0)) and english.get((msgid, 1)) if plural else english.get(msgid)
        if not translated and not any(po.get(msgid, [])):
            missing.append(f"{where}: {msgid!r}")
        elif not translated:
            missing.append(f"{where}: {msgid!r} (in the .po, not in the compiled .mo: run make messages)")
    assert missing == []


def test_the_checks_reader_finds_spanish() -> None:
    """The reader below flags what an untranslated page would show, and not the English."""
    spanish = spanish_only_words()
    assert {"ronda", "pidió", "oros", "bastos", "sota", "turno", "subasta"} <= spanish
    assert not {"round", "clubs", "trump", "bid", "table"} & spanish
    assert spanish_in("<p>Ronda 3 de 19 · subida</p>") == ["Ronda 3 de 19 · subida"]
    assert spanish_in('<button aria-label="7 of swords" data-reason="debes asistir: juega oros">7</button>')
    assert (
        spanish_in('<p>Round 3 of 19</p><button lang="es" title="español">ES</button><button lang="en">EN</button>')
        == []
    )
    assert spanish_in('<html lang="en"><body><p>Ronda 3</p></body></html>') == ["Ronda 3"]


# -- reading a page ---------------------------------------------------------------------------

SHOWN_ATTRIBUTES = {"aria-label", "title", "alt", "placeholder", "data-reason", "aria-description"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class ShownTexts(HTMLParser):
    """Every text a page shows or says: text, labels and titles, a card's reason, the script's texts (JSON);
    not the parts that declare their own language (``lang="es"``, ``lang="en"``: the language switch, each
    language named in itself)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self.stack: list[tuple[str, bool, str | None]] = []

    @property
    def skipping(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        skip = self.skipping or (tag != "html" and attributes.get("lang") is not None)
        if not skip:
            self.texts += [value for name, value in attrs if name in SHOWN_ATTRIBUTES and value]
        if tag not in VOID:
            self.stack.append((tag, skip, attributes.get("type") if tag == "script" else None))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        if self.skipping or not data.strip():
            return
        if self.stack and self.stack[-1][0] == "script":
            if self.stack[-1][2] == "application/json":
                self.texts += list(json_strings(json.loads(data)))
            return
        if self.stack and self.stack[-1][0] == "style":
            return
        self.texts.append(data)


def json_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


SPANISH = None


def spanish_in(html: str, names: tuple[str, ...] = ()) -> list[str]:
    """The texts of ``html`` that read as Spanish (players' ``names`` aside)."""
    global SPANISH
    if SPANISH is None:
        SPANISH = (spanish_only_words(), exact_msgids())
    only_spanish, msgids = SPANISH
    reader = ShownTexts()
    reader.feed(html)
    found = []
    for text in reader.texts:
        plain = " ".join(text.split())
        for name in names:
            plain = plain.replace(name, " ")
        if plain.strip() in msgids or words(plain) & only_spanish:
            found.append(" ".join(text.split()))
    return found


# -- a whole game, looked at in English -------------------------------------------------------


def english(user: Any) -> Client:
    client = Client()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    client.force_login(user)
    return client


class Looks:
    """Every look at the table: the English page of a seat (and the socket's redraw of it)."""

    def __init__(self, table_id: int, users: list[Any], names: tuple[str, ...]) -> None:
        self.table_id = table_id
        self.users = users
        self.names = names
        self.clients = {u.pk: english(u) for u in users}
        self.seen: set[tuple[Any, ...]] = set()
        self.untranslated: dict[str, list[str]] = {}
        self.shown: set[str] = set()  # boards with these parts were read

    def look(self, user: Any, label: str) -> str:
        page = self.clients[user.pk].get(f"/mesa/{self.table_id}/")
        assert page.status_code == 200
        html = page.content.decode()
        assert '<html lang="en">' in html
        pushed = board.render_board(self.table_id, user.pk, "en")
        assert pushed is not None
        for part in (
            'data-trick-done="1"',
            'id="last-trick"',
            'id="round-result"',
            'id="auction-rule"',
            "data-reason=",
        ):
            if part in html:
                self.shown.add(part)
        for where, drawn in (("page", html), ("push", pushed[1])):
            for text in spanish_in(drawn, self.names):
                self.untranslated.setdefault(text, []).append(f"{label} ({where})")
        return html

    def look_once(self, user: Any, kind: tuple[Any, ...], label: str) -> str | None:
        """The look, the first time a seat sees this kind of board."""
        if kind in self.seen:
            return None
        self.seen.add(kind)
        return self.look(user, label)


def board_kind(table: Table, position: int) -> tuple[Any, ...]:
    """What makes one seat's board say different things: the phase and the round's, whose turn, cards
    refused with reasons, a trick under way or one just won (held up, «Última baza»)."""
    game = load(table.state)
    view_turn = game.turn == position
    reasons = game.phase is Phase.PLAYING and game.turn == position and bool(game.trick)
    return (
        position,
        game.phase.value,
        game.spec.phase.value if game.spec else None,
        view_turn,
        reasons,
        bool(game.trick),
        bool(game.last_trick),
    )


@pytest.mark.django_db
def test_every_board_of_a_staked_game_reads_in_english() -> None:
    users = [person(name) for name in PEOPLE]
    by_seat = {}
    table = actions.do_create_table(users[0], 4, stake=100)
    looks = Looks(table.pk, users, tuple(PEOPLE))
    looks.look(users[0], "waiting, alone")
    for user in users[1:3]:
        actions.do_take_seat(table.pk, user)
    looks.look(users[1], "waiting")
    actions.do_take_seat(table.pk, users[3])  # the last seat: the game starts
    for seat in Seat.objects.filter(table_id=table.pk):
        by_seat[seat.position] = next(u for u in users if u.pk == seat.user_id)
    seen_kinds: set[str] = set()
    away_done = refused = False
    for _ in range(2_000):
        table = Table.objects.get(pk=table.pk)
        if table.status != Table.Status.PLAYING:
            break
        if table.turn_seat is None:  # a round's result is up: the next deal
            for user in users:
                looks.look_once(user, ("round over", user.pk), "round result")
            Table.objects.filter(pk=table.pk).update(due_at=table.due_at.replace(year=2000))
            assert actions.do_due(table.pk, table.seq) is not None
            continue
        game = load(table.state)
        for position, user in by_seat.items():
            looks.look_once(user, board_kind(table, position), f"round {game.number}, {game.phase.value}")
        seen_kinds.add(game.phase.value + ("/" + game.spec.phase.value if game.spec else ""))
        mover = by_seat[table.turn_seat]
        if game.phase is Phase.PLAYING and game.trick and not refused:
            # a card the rules refuse: the flash says why, in English
            view_hand = game.hands[table.turn_seat]
            illegal = [c for c in view_hand if c not in game.legal_cards()]
            if illegal:
                with pytest.raises(ActionError) as info:
                    actions.do_action(table.pk, mover, Play(illegal[0]), table.seq)
                flash = board.render_flash(info.value.message("en"), table.seq, "en")
                assert spanish_in(flash) == [], flash
                refused = True
        if game.number == 3 and not away_done:
            # the clock marks this seat away: the bot plays for them; then «I'm back» and the notice
            Seat.objects.filter(table_id=table.pk, position=table.turn_seat).update(away=True)
            looks.look(mover, "away")
            Table.objects.filter(pk=table.pk).update(due_at=table.due_at.replace(year=2000))
            assert actions.do_due(table.pk, table.seq) is not None
            actions.do_back(table.pk, mover)
            looks.look(mover, "back, with the bot's notice")
            away_done = True
            continue
        actions.do_action(table.pk, mover, default_action(game), table.seq)
    table = Table.objects.get(pk=table.pk)
    assert table.status == Table.Status.FINISHED
    for user in users:
        html = looks.look(user, "final ranking")
    assert "Final ranking" in html and "chips" in html
    assert {
        "bidding/subida",
        "bidding/subasta",
        "choosing_trump/subasta",
        "playing/subasta",
        "playing/bajada",
    } <= seen_kinds
    assert refused and away_done
    assert looks.shown == {
        'data-trick-done="1"',
        'id="last-trick"',
        'id="round-result"',
        'id="auction-rule"',
        "data-reason=",
    }
    assert looks.untranslated == {}


@pytest.mark.django_db
def test_a_private_table_waiting_and_a_cancelled_table_read_in_english() -> None:
    host, guest, moderator = person("alice"), person("bruno"), person("carla")
    table = actions.do_create_private_table(host, 3, stake=500, bots_allowed=True)
    actions.do_take_seat(table.pk, guest, code=table.code)
    looks = Looks(table.pk, [host, guest], ("alice", "bruno"))
    html = looks.look(host, "private, waiting")
    assert "Table code" in html
    actions.do_start(table.pk, host)
    actions.do_admin_cancel(table.pk, moderator, "partida amañada")
    html = looks.look(guest, "cancelled by a moderator")
    # the moderator's note is shown as written; everything around it is English
    assert "Reason: partida amañada" in html and "Game cancelled" in html
    looks.untranslated = {
        text: where for text, where in looks.untranslated.items() if text != "Reason: partida amañada"
    }
    assert looks.untranslated == {}


@pytest.mark.parametrize("rule", sorted(SCENARIOS, key=str), ids=str)
def test_every_refusal_of_the_engine_reads_in_english(rule: Any) -> None:
    error = SCENARIOS[rule]()
    message = ActionError.from_engine(error).message("en")
    assert message == rule_words.sentence(error, "en")
    assert spanish_in(f"<p>{message}</p>") == [], message
    # the card and suit names in a sentence are the names the cards use in English
    for name in re.findall(r"\b(?:coins|cups|swords|clubs)\b", message):
        assert name in {s.name_en for s in SUITS}


def test_the_tables_other_refusals_and_talk_read_in_english() -> None:
    """Every ActionError the table's modules build with a text of their own, and every phrase."""
    texts = [(msgid, plural) for where, msgid, plural in marked_texts() if where.startswith(TABLE_SIDE)]
    assert len(texts) > 40
    with override("en"):
        for msgid, plural in texts:
            shown = [ngettext(msgid, plural, 1), ngettext(msgid, plural, 2)] if plural else [gettext(msgid)]
            for text in shown:
                assert spanish_in(f"<p>{text}</p>") == [], (msgid, text)
    for phrase in talk.phrases_context("en"):
        assert spanish_in(f"<button>{phrase['text']}</button>") == [], phrase
