"""What a socket frame or a form asks for: the verb, the engine action and the seq, or why it is malformed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext_lazy as _

from games.engine import Action, Bid, Card, ChooseTrump, Play, Suit
from games.table.actions.play import do_back
from games.table.actions.seating import do_cancel, do_leave_seat, do_start, do_take_seat
from games.table.errors import ActionError
from games.table.events import TableChanged


def parse_request(data: dict[str, Any]) -> tuple[str, Action | None, int | None]:
    """The (verb, engine action, seq) a socket frame or form asks for; ActionError if malformed."""

    if not isinstance(data, dict):
        raise ActionError("malformed", _("Mensaje no válido."))
    verb = data.get("action")
    raw_seq = data.get("seq")
    seq: int | None = None
    if raw_seq is not None and raw_seq != "":
        # Only an integer or its digits: int() would also take 3.7 (as 3) and true (as 1).
        if isinstance(raw_seq, bool) or not isinstance(raw_seq, (int, str)):
            raise ActionError("malformed", _("Mensaje no válido."))
        try:
            seq = int(raw_seq)
        except (TypeError, ValueError):
            raise ActionError("malformed", _("Mensaje no válido.")) from None
    value = data.get("value")
    if verb in ("start", "leave", "sit", "resync", "back", "cancel"):
        return verb, None, seq
    if seq is None:
        raise ActionError("malformed", _("Mensaje no válido."))
    try:
        if verb == "bid":
            if not isinstance(value, (str, int)) or isinstance(value, bool) or not str(value).isdigit():
                raise ValueError
            return verb, Bid(int(value)), seq
        if verb == "trump":
            return verb, ChooseTrump(Suit.parse(str(value))), seq
        if verb == "play":
            return verb, Play(Card.parse(str(value))), seq
    except ValueError:
        raise ActionError("malformed_value", _("Esa jugada no existe.")) from None
    raise ActionError("unknown_action", _("Acción desconocida."))


ACTIONS_BY_VERB: dict[str, Callable[..., TableChanged]] = {
    "back": do_back,
    "cancel": do_cancel,
    "start": do_start,
    "leave": do_leave_seat,
    "sit": do_take_seat,
}
