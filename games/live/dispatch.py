"""After commit, one place: the domain's events (``games.table.events``) become pushes and timers.

``handle`` is connected to the domain's events when the app starts (``GamesConfig.ready``).  A move's
``TableChanged`` is pushed to everyone showing the table (``push.table_changed``, with the snapshot the
change packed) and arms the table's next step (``timers.arm``); a ``Redraw`` asks every viewer to draw the
table again at the same seq; ``DueMoved`` re-arms the next step; ``AccountSuspended`` closes the person's
sockets; ``PersonNotified`` tells a person's open pages (their invitations, friends, blocks); ``StudyQueued`` wakes the analysis worker; ``TournamentChanged`` redraws the tournament's pages
and, when one of its tables finished, lets the tournament move on at once.  Table talk, which changes nothing, is sent from here too (``say``).
"""

from __future__ import annotations

from games.live import push, timers
from games.models import Table
from games.table.events import (
    AccountSuspended,
    DueMoved,
    Event,
    PersonNotified,
    Redraw,
    StudyQueued,
    TableChanged,
    TournamentChanged,
)


def handle(event: Event) -> None:
    """Push and arm what one committed event asks for (on the thread that committed it)."""
    if isinstance(event, TableChanged):
        push.table_changed(event.table_id, event.seq, snapshot=event.snapshot)
        if event.due is not None:
            timers.arm(event.table_id, event.seq, event.due, person=event.person, deal=event.deal)
    elif isinstance(event, Redraw):
        seq = event.seq
        if seq is None:
            seq = Table.objects.filter(pk=event.table_id).values_list("seq", flat=True).first()
        if seq is not None:
            push.table_changed(event.table_id, seq, force=True, origin=event.origin)
    elif isinstance(event, DueMoved):
        timers.arm(event.table_id, event.seq, event.due)
    elif isinstance(event, AccountSuspended):
        push.account_suspended(event.user_id, event.reason)
    elif isinstance(event, PersonNotified):
        push.person_notice(event.user_id, event.kind)
    elif isinstance(event, StudyQueued):
        timers.queue_study()
    elif isinstance(event, TournamentChanged):
        push.tournament_changed(event.tournament_id, event.seq)
        if event.table_done:
            timers.advance_tournament(event.tournament_id)


async def say(table_id: int, seat: int, phrase: str) -> None:
    """A preset phrase said at the table, to everyone showing it (from the event loop)."""
    await push.send_events([push.talk_event(table_id, seat, phrase)])
