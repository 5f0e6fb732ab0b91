"""«Amigos» as a person's pages show it (owned by the friends page work: a stub until then)."""

from __future__ import annotations


def friends_html(user_id: int, language: str) -> str:
    """The live part of «Amigos» for ``user_id`` (an out-of-band swap of ``#friends-live``)."""
    return ""
