"""What a person's open pages draw again over their socket when something of theirs changes
(``games.table.events.PersonNotified``): each page's socket (``games.live.consumers.SiteConsumer``, and a table's
``TableConsumer`` for the banner) says which page it is on, and gets from here the HTML to send, out-of-band swaps
of the parts that page shows live.

- ``invitations``: the invitation banner, on every page (``games.read.invitations.banner_html``);
- ``friends`` (someone followed came or went, a follow changed) and ``blocks``: «Amigos»' lists on «Amigos»
  (``games.read.friends.friends_html``), the lobby's «who is online» and «games to watch» on the lobby
  (``lobby_html``); nothing on the other pages.
"""

from __future__ import annotations

from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.translation import override

from games.read import friends, invitations, online

#: The pages a site socket may say it is on (its query string's ``p``).
LOBBY = "lobby"
AMIGOS = "amigos"
OTHER = "other"
PAGES = (LOBBY, AMIGOS, OTHER)

#: The kinds of notice a page draws something for.
KINDS = ("invitations", "friends", "blocks")


def page_of(raw: object) -> str | None:
    """The page a socket's query names (``LOBBY``, ``AMIGOS``, ``OTHER``), or None for anything else."""
    return raw if isinstance(raw, str) and raw in PAGES else None


def lobby_html(user_id: int, language: str, oob: bool = True) -> str:
    """The lobby's «who is online» and «games to watch» for ``user_id`` (``#lobby-people``)."""
    with override(language):
        return render_to_string(
            "games/_lobby_people.html", {"lobby_people": online.lobby_people(user_id), "oob": oob}
        ).strip()


def page_part(page: str, user_id: int, language: str) -> str:
    """What ``page`` shows of a person's friends, drawn afresh (an out-of-band swap; "" for a page without any)."""
    if page == AMIGOS:
        with override(language):
            return friends.friends_html(user_id, language)
    if page == LOBBY:
        return lobby_html(user_id, language)
    return ""


def fragment(kind: str, page: str, user_id: int, language: str) -> str:
    """The HTML a page (``page``; a table's page is ``OTHER`` here) sends for a notice of ``kind``; "" for none."""
    if kind == "invitations":
        with override(language):
            return invitations.banner_html(user_id, language)
    if kind in ("friends", "blocks"):
        return page_part(page, user_id, language)
    return ""


def fragments(kinds: list[str], page: str, user_id: int, language: str) -> str:
    """``fragment`` for several notices heard together, each part drawn once (``friends`` and ``blocks`` draw the
    same part)."""
    parts: list[str] = []
    for kind in kinds:
        part = fragment(kind, page, user_id, language)
        if part and part not in parts:
            parts.append(part)
    return "\n".join(parts)


def on_connect(page: str, user_id: int, language: str) -> str:
    """Everything ``page`` shows live, as it is now: what a socket sends when it opens, for whatever changed
    between the page's drawing and its socket hearing the person's notices (or while it was reconnecting)."""
    parts = [fragment("invitations", page, user_id, language), page_part(page, user_id, language)]
    return "\n".join(part for part in parts if part)


def error_html(message: str) -> str:
    """Why a page's socket refused what it was sent (or the page itself), in the page's ``#site-flash``."""
    return f'<div id="site-flash" class="site-flash" role="alert" hx-swap-oob="true">{escape(message)}</div>'
