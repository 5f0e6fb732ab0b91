"""Table talk as each viewer sees it: the phrase buttons of the board, and a phrase said at the table."""

from __future__ import annotations

from django.template.loader import render_to_string
from django.utils.translation import override

from games.table.talk import PHRASE_TEXT, PHRASES


def phrases_context(language: str) -> list[dict[str, str]]:
    """The phrase buttons of the board, in ``language``: ``[{"code": ..., "text": ...}, ...]``."""
    with override(language):
        return [{"code": code, "text": str(text)} for code, text in PHRASES]


def render_talk(seat: int, phrase: str, name: str, language: str) -> str:
    """The talk frame one viewer is sent, in their language:
    ``<div id="talk-event" data-talk-seat="2" data-talk-phrase="suerte" data-talk-name="Lola">¡Suerte!</div>``"""
    with override(language):
        return render_to_string(
            "games/_talk.html",
            {
                "seat": int(seat),
                "phrase": phrase,
                "name": name,
                "text": str(PHRASE_TEXT[phrase]),
            },
        ).strip()
