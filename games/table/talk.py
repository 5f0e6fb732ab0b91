"""Table talk: a fixed set of preset phrases and emotes that the people seated at a table may say.

There is no free text, so there is nothing to moderate and nothing that could carry a card.  A
phrase is not stored and does not move the table's ``seq``: the consumer checks who says it
(``check_say``), counts it against the person's limit (``allow``), and sends a small typed event
``{"type": "table.talk", "seat": position, "phrase": code}`` to the table; each socket then draws it in
its own viewer's language (``games.read.talk``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from accounts import moderation
from games.models import Seat
from games.table import access
from games.table.errors import ActionError
from pocha_site import ratelimit

#: Every phrase and emote, in the order the board offers them: (code, text).  Emotes are the emoji itself.
PHRASES: list[tuple[str, Any]] = [
    ("bien", _("¡Bien jugado!")),
    ("vaya", _("¡Vaya mano!")),
    ("suerte", _("¡Suerte!")),
    ("gracias", _("¡Gracias!")),
    ("uy", _("¡Uy!")),
    ("perdon", _("Perdón")),
    ("rapido", _("¿Jugamos un poco más rápido?")),
    ("gg", _("Buena partida")),
    ("risa", "😄"),
    ("pensando", "🤔"),
    ("aplauso", "👏"),
    ("sorpresa", "😮"),
]
PHRASE_TEXT: dict[str, Any] = dict(PHRASES)

#: A code is short: anything longer is not looked up at all.
MAX_CODE = 20


def unknown_phrase() -> ActionError:
    return ActionError("unknown_phrase", _("Esa frase no existe."))


def not_a_player() -> ActionError:
    return ActionError("not_a_player", _("Solo los jugadores de la mesa pueden hablar."))


def too_many() -> ActionError:
    return ActionError("talk_limit", _("Demasiados mensajes: espera un momento."))


def parse_phrase(value: Any) -> str:
    """The phrase code a frame's ``value`` names; ActionError("unknown_phrase") for anything else
    (not a string, too long, a list, an object, a code that does not exist)."""
    if not isinstance(value, str) or len(value) > MAX_CODE or value not in PHRASE_TEXT:
        raise unknown_phrase()
    return value


def check_say(table_id: int, user_id: int | None) -> int:
    """The seat position from which ``user_id`` may speak at the table (synchronous, two small reads,
    no lock); ActionError if they may not: not seated as a person there, or suspended."""
    if user_id is None:
        raise ActionError("login", _("Tienes que entrar con tu cuenta para jugar."))
    position = (
        Seat.objects.filter(table_id=table_id, user_id=user_id, is_bot=False).values_list("position", flat=True).first()
    )
    if position is None:
        raise not_a_player()
    reason = moderation.suspension_reason(user_id)
    if reason is not None:
        raise access.suspended_error(reason)
    return int(position)


def allow(user_id: int) -> bool:
    """Count one phrase of ``user_id``; False when it is over ``POCHA_TALK_LIMIT`` in its window of
    ``POCHA_TALK_WINDOW`` seconds.  The site's one limiter (``pocha_site.ratelimit``), in Django's cache, so
    the limit holds across processes and sockets; refused phrases count too."""
    return ratelimit.take("talk", f"user:{user_id}", settings.POCHA_TALK_LIMIT, settings.POCHA_TALK_WINDOW)


def seat_name(table_id: int, position: int) -> str | None:
    """The display name of the seat at ``position`` (synchronous, one read), or None if there is none."""
    return Seat.objects.filter(table_id=table_id, position=position).values_list("name", flat=True).first()


def seat_speaker(table_id: int, position: int) -> tuple[str, int | None] | None:
    """The display name and the person (None for a bot's own seat) of the seat at ``position`` (synchronous, one
    read), or None if there is none: a viewer blocked either way by that person never reads their phrases."""
    row = Seat.objects.filter(table_id=table_id, position=position).values_list("name", "user_id").first()
    return None if row is None else (row[0], row[1])
