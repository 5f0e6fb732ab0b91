"""Every write to a table, one module per kind of write (as Zulip keeps its ``zerver/actions``):

- ``seating``: tables and seats (create, «Jugar ya», sit, stand up, the host's start and cancel);
- ``play``: a person's bid, trump or card, «Vuelvo», and ``apply``, the path every move takes;
- ``due``: the table's next automatic step (a bot's move, the clock, a quick table's bots, the next deal);
- ``lifecycle``: a game's start, end and cancellation, the only places that move chips;
- ``rematch``: «Revancha»;
- ``invitations``: the host's invitations to a waiting private table, accepted or declined;
- ``moderation``: the seats of a suspended or closed account, a moderator's cancellation;
- ``requests``: what a frame or a form asks for;
- ``common``: the lock, the seq check and ``commit``.

Each ``do_*`` function is one transaction: lock the table row, check with the engine, write the rows, bump
``seq`` with a compare-and-set, and return what changed (``games.table.events.TableChanged``), which is
emitted for after the commit.  Bad input raises ``ActionError`` and changes nothing.
"""

from games.table.actions.common import User, check_bot_level
from games.table.actions.due import Thinking, apply_due, do_due, prepare_due, sweep, think
from games.table.actions.invitations import do_accept_invitation, do_decline_invitation, do_invite
from games.table.actions.lifecycle import split_pot
from games.table.actions.moderation import do_admin_cancel
from games.table.actions.play import do_action, do_back
from games.table.actions.rematch import do_accept_rematch, do_decline_rematch, do_offer_rematch
from games.table.actions.requests import ACTIONS_BY_VERB, parse_request
from games.table.actions.seating import (
    do_cancel,
    do_create_private_table,
    do_create_table,
    do_leave_seat,
    do_quick_play,
    do_start,
    do_take_seat,
)
from games.table.errors import ActionError
from games.table.events import TableChanged

__all__ = [
    "ACTIONS_BY_VERB",
    "ActionError",
    "TableChanged",
    "Thinking",
    "User",
    "apply_due",
    "check_bot_level",
    "do_accept_invitation",
    "do_accept_rematch",
    "do_action",
    "do_admin_cancel",
    "do_back",
    "do_cancel",
    "do_create_private_table",
    "do_create_table",
    "do_decline_invitation",
    "do_decline_rematch",
    "do_due",
    "do_invite",
    "do_leave_seat",
    "do_offer_rematch",
    "do_quick_play",
    "do_start",
    "do_take_seat",
    "parse_request",
    "prepare_due",
    "split_pot",
    "sweep",
    "think",
]
