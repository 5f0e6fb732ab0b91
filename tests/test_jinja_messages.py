"""The board's Jinja2 templates (``jinja2/``) are translated like the rest of the site: ``make messages``
reads their texts through ``pocha_site.jinja2.messages_as_python`` (Django's ``makemessages`` reads only
Django's templates and Python), and every one of them has its English text in the compiled catalogue."""

from __future__ import annotations

import ast
import gettext
from pathlib import Path

from django.conf import settings
from django.utils.translation import gettext as translate
from django.utils.translation import override

from pocha_site.jinja2 import messages_as_python

CATALOGUE = Path(settings.BASE_DIR) / "locale/en/LC_MESSAGES/django.mo"


def calls() -> list[tuple[str, tuple[str, ...]]]:
    tree = ast.parse(messages_as_python())
    return [
        (node.func.id, tuple(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]


def test_the_boards_texts_are_read_for_make_messages() -> None:
    found = calls()
    singular = {args[0] for name, args in found if name == "gettext"}
    plural = {args for name, args in found if name == "ngettext"}
    # texts of both templates, both kinds of call, with their placeholders as Django's blocktrans writes them
    assert {"Te toca.", "Mesa %(n)s", "Pedir %(n)s", "Elige el triunfo", "Tu mano", "(le toca)"} <= singular
    assert ("%(n)s mirando", "%(n)s mirando") in plural
    assert "juega el bot por %(name)s" in singular  # from _seat.html


def test_every_text_of_the_board_has_its_english_translation() -> None:
    with CATALOGUE.open("rb") as mo:
        catalogue = gettext.GNUTranslations(mo)._catalog  # type: ignore[attr-defined]
    missing = []
    for name, args in calls():
        key = args[0] if name == "gettext" else (args[0], 0)
        if not catalogue.get(key):
            missing.append(args[0])
    assert missing == []
    with override("en"):  # the catalogue read above is the one Django answers from in English
        assert translate("Te toca.") == catalogue["Te toca."] != "Te toca."
