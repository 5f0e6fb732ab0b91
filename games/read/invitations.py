"""A person's invitations as their pages show them (owned by the invitations work: a stub until then)."""

from __future__ import annotations


def banner_html(user_id: int, language: str) -> str:
    """The invitation banner of every page of ``user_id`` (an out-of-band swap of ``#invitation-banner``)."""
    return ""
