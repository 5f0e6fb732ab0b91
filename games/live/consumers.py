"""The table's WebSocket: a thin adapter from frames to actions, and from events to each viewer's fragments; a
tournament's page's WebSocket, which only listens (``TournamentConsumer``); and every other page's
(``SiteConsumer``), which only listens too: its person is online while it is open, and it draws the page's live
parts again when something of theirs changes (their invitations, their friends)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

from autobahn.exception import Disconnected
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import override

from accounts import moderation, social
from games.live import capacity, dispatch, hub, presence, push, timers
from games.live.hotpath import db
from games.models import Table, Tournament
from games.read import board, live_pages
from games.read import talk as talk_view
from games.read import tournaments as tournament_pages
from games.table import access, actions, talk
from games.table.snapshot import NotApplicable, Snapshot, apply_change, load_snapshot

log = logging.getLogger(__name__)

MAX_FRAME = 4096


def scope_language(scope: dict[str, Any]) -> str:
    """The viewer's language: the language cookie, else Accept-Language, else Spanish."""
    supported = [code for code, _name in settings.LANGUAGES]
    cookies = scope.get("cookies") or {}
    chosen = cookies.get(settings.LANGUAGE_COOKIE_NAME)
    if chosen in supported:
        return str(chosen)
    for name, value in scope.get("headers") or []:
        if name == b"accept-language":
            for part in value.decode("latin-1").split(","):
                code = part.split(";")[0].strip().lower()[:2]
                if code in supported:
                    return code
    return settings.LANGUAGE_CODE


class ConnectionFailed(Exception):
    """A table socket could not be set up (logged already): the server closes it with 1011."""


class TableConsumer(AsyncWebsocketConsumer):
    """One socket showing one table.  Whatever fails in it is logged and handled: the socket's row and
    groups are undone on every way out (a refused or failed connection, a clean close, an exception
    escaping a handler, the task being cancelled), and a failed redraw leaves the socket open."""

    table_id: int
    user_id: int | None
    language: str
    sent_seq: int
    #: How many rounds' results this socket's scoreboard shows (None: unknown, draw it).
    shown_rounds: int | None = None
    #: What this socket's hand shows (``board.Push.hand``; None: unknown, draw it).
    shown_hand: Hashable | None = None
    #: This socket's row is written (it counts as showing the table, and its person as present).
    watching = False
    #: The groups this socket has joined (discarded on the way out).
    joined: tuple[str, ...] = ()
    #: This socket hears its table's events (``games.live.hub``).
    listening = False
    #: Its board is a tournament table's final one that keeps the deals for later (``access.deals_secret``): it
    #: listens to its tournament's changes, and is drawn again once the game's last table has finished.
    awaiting_deals = False
    #: The people blocked by this socket's person or who blocked them (``accounts.social.blocked_ids``): their
    #: talk is not drawn here.  Read when the socket opens, and again at each ``blocks`` notice.
    blocked: frozenset[int] = frozenset()
    #: The seats' names and people, read at the first phrase after a change of the table.
    seat_names: dict[int, tuple[str, int | None]] | None = None
    #: The table's events not handled yet, handled one after the other (``deliver``).
    _events: asyncio.Queue[dict[str, Any]] | None = None
    _handler: asyncio.Task[None] | None = None
    _main: asyncio.Task[Any] | None = None
    _crash: BaseException | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self._main = asyncio.current_task()
        try:
            await super().__call__(scope, receive, send)
        except asyncio.CancelledError:
            if self._crash is not None:  # a table event's handler raised (``_handle_events``): as if here
                raise self._crash from None
            raise
        finally:  # an exception escaped, or the task was cancelled: no disconnect ran
            try:
                await self.leave()
            except BaseException:  # the loop is going away: the process's death will undo the rest
                log.exception("table %s: leaving failed", getattr(self, "table_id", None))

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.user = user
        self.user_id = user.pk
        self.language = scope_language(self.scope)
        self.sent_seq = -1
        try:
            self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        except (KeyError, TypeError, ValueError):
            await self.close(code=4404)
            return
        await self.accept()
        try:
            await self.join_and_draw()
        except Exception:
            log.exception("table %s: connection of user %s failed", self.table_id, self.user_id)
            await self.leave()
            await self.close_failed()

    async def join_and_draw(self) -> None:
        # Join the person's group before looking at their suspension: one written in between is then
        # either seen here or heard there.
        await self.join(push.user_group(self.user_id))
        reason = await db(moderation.suspension_reason, self.user_id)
        if reason is not None:
            await self.refuse_suspended(reason)
            return
        await self.read_blocks()
        refused = await db(access.can_watch_id, self.table_id, self.user)
        if refused is not None:
            # A private table is, to anyone not at it, a table that does not exist; a tournament's table whose
            # deals are still being played elsewhere is for the people seated at it only (4403).
            await self.refuse(refused, 4404 if refused.code == "unknown_table" else 4403)
            return
        # Counted (as watching, and present if seated) before hearing the table's events (``games.live.hub``):
        # the redraw pushed for everyone else does not come back to this socket, whose first board (drawn
        # after registering, so no change is missed) already counts it.
        try:
            await db(presence.open_socket, self.table_id, self.user_id, self.channel_name)
        except actions.ActionError as error:  # too many sockets: nothing was written
            await self.refuse(error, 4429)
            return
        self.watching = True
        self.listening = True  # before: a registration that fails half way is undone too
        await hub.register(self.table_id, self)
        if not await self.send_board():
            await self.refuse(actions.ActionError("unknown_table", _("Esa mesa no existe.")), 4404)

    async def close_failed(self) -> None:
        """Close with 1011 (a server error), which the page's socket answers by connecting again.  Daphne
        refuses that code from an application (only 1000 and 3000-4999) and sends it itself for one that
        raised: then the refusal is raised on."""
        try:
            await self.close(code=1011)
        except Exception as refused:
            raise ConnectionFailed("closed with 1011") from refused

    async def join(self, group: str) -> None:
        self.joined = (*self.joined, group)  # before: a join that fails half way is discarded too
        await self.channel_layer.group_add(group, self.channel_name)

    async def refuse(self, error: actions.ActionError, code: int) -> None:
        """Say why to this socket alone, undo what it joined and wrote, and close it."""
        await self.send_error(error)
        await self.leave()
        await self.close(code=code)

    async def leave(self) -> None:
        """Undo what the socket joined and wrote (idempotent: any way out may call it again)."""
        if self.listening:
            self.listening = False
            hub.unregister(self.table_id, self)
            if not hub.listeners(self.table_id):
                forget_table(self.table_id)
        joined, self.joined = self.joined, ()
        for group in joined:
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except Exception:  # the channel layer is down: its group expiry forgets the channel
                log.exception("table %s: leaving group %s failed", getattr(self, "table_id", None), group)
        if self.watching:
            self.watching = False
            try:
                await db(presence.close_socket, self.channel_name)
            except Exception:  # the process's next beats delete the row (``presence.check_own_rows``)
                log.exception("table %s: presence update failed", self.table_id)

    async def disconnect(self, code: int) -> None:
        await self.leave()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            if text_data is None or len(text_data) > MAX_FRAME:
                raise ValueError
            data = json.loads(text_data)
            if not isinstance(data, dict):
                raise ValueError
        except (ValueError, RecursionError):  # RecursionError: a few KB of nested brackets
            await self.answer(actions.ActionError("malformed", _("Mensaje no válido.")))
            return
        data.pop("HEADERS", None)
        if data.get("action") == "say":  # table talk: not a move, parse_request does not know it
            await self.say(data.get("value"))
            return
        try:
            verb, action, seq = actions.parse_request(data)
            if verb == "resync":
                await self.send_board(force=True)
                return
            if action is not None:
                started = time.monotonic()
                try:
                    await db(actions.do_action, self.table_id, self.user, action, seq)
                finally:
                    capacity.note_move(time.monotonic() - started)
            else:
                await db(actions.ACTIONS_BY_VERB[verb], self.table_id, self.user, seq)
                if verb == "sit":  # a seat taken from an open socket: its person is present at once
                    await db(presence.refresh, self.table_id, self.user_id)
        except actions.ActionError as error:
            await self.answer(error)
        except Exception:
            log.exception("table %s: frame failed", getattr(self, "table_id", None))
            await self.answer(actions.ActionError("server", _("Algo ha fallado en el servidor.")))

    async def answer(self, error: actions.ActionError) -> None:
        """Tell this socket alone why its frame was refused (and redraw it first if its page was stale)."""
        try:
            if error.resync:
                await self.send_board(force=True)
            await self.send_error(error)
        except Exception:  # the answer is lost, the socket is not
            log.exception("table %s: answering a frame failed", getattr(self, "table_id", None))

    async def say(self, value: Any) -> None:
        """A preset phrase from a person seated here, to everyone at the table; errors to the sender alone."""
        try:
            phrase = talk.parse_phrase(value)
            position = await db(talk.check_say, self.table_id, self.user_id)
            if not await db(talk.allow, self.user_id):
                raise talk.too_many()
            await dispatch.say(self.table_id, position, phrase)
        except actions.ActionError as error:
            await self.answer(error)
        except Exception:
            log.exception("table %s: phrase failed", getattr(self, "table_id", None))
            await self.answer(actions.ActionError("server", _("Algo ha fallado en el servidor.")))

    def deliver(self, event: dict[str, Any]) -> None:
        """An event of the table, from the hub (on the loop): handled after the ones before it."""
        if not self.listening:
            return
        if self._events is None:
            self._events = asyncio.Queue()
        self._events.put_nowait(event)
        if self._handler is None or self._handler.done():
            self._handler = asyncio.get_running_loop().create_task(self._handle_events())

    async def _handle_events(self) -> None:
        queue = self._events
        try:
            while queue is not None and not queue.empty() and self.listening:
                event = queue.get_nowait()
                if event.get("type") == "table.talk":
                    await self.table_talk(event)
                else:
                    await self.table_changed(event)
        except Exception as error:  # a bug in a handler: the socket ends as if it had raised in Channels'
            # own dispatch (undone on the way out, and closed with 1011, which the page reconnects on)
            log.exception("table %s: an event's handler failed", getattr(self, "table_id", None))
            self._crash = error
            if self._main is not None and not self._main.done():
                self._main.cancel()

    async def table_talk(self, event: dict[str, Any]) -> None:
        """Someone at the table said a phrase: draw it in this viewer's language, unless the one who said it and
        this viewer are blocked either way (then it is never drawn here)."""
        try:
            seat, phrase = int(event["seat"]), str(event["phrase"])
            if phrase not in talk.PHRASE_TEXT:
                return
            names = self.seat_names or {}
            if seat not in names:
                speaker = await db(talk.seat_speaker, self.table_id, seat)
                if speaker is None:
                    return
                names[seat] = speaker
                self.seat_names = names
            name, speaker_id = names[seat]
            if speaker_id is not None and speaker_id in self.blocked:
                return
            await self.send(text_data=talk_view.render_talk(seat, phrase, name, self.language))
        except Exception:  # a phrase lost is nothing; a consumer lost is a table gone dark
            log.exception("table %s: talk event failed", getattr(self, "table_id", None))

    async def account_suspended(self, event: dict[str, Any]) -> None:
        """A moderator has just suspended this person: say why and close."""
        try:
            await self.refuse_suspended(str(event.get("reason", "")))
        except Exception:
            log.exception("table %s: closing a suspended person's socket failed", getattr(self, "table_id", None))
            await self.leave()
            await self.close(code=4403)

    async def refuse_suspended(self, reason: str) -> None:
        await self.refuse(access.suspended_error(reason), 4403)

    async def person_notice(self, event: dict[str, Any]) -> None:
        """Something of this person's changed (``push.person_notice``): their invitations (the banner, which a
        table's page shows too) or their blocks (whose talk this socket lets through); their friends are not on
        a table's page."""
        kind = event.get("kind")
        try:
            if kind == "blocks":
                await self.read_blocks()
            elif kind == "invitations":
                html = await db(live_pages.fragment, "invitations", live_pages.OTHER, self.user_id, self.language)
                if html:
                    await self.send(text_data=html)
        except Disconnected:
            pass
        except Exception:  # drawn again at the next notice or load; the socket stays
            log.exception("table %s: the notice %r failed", getattr(self, "table_id", None), kind)

    async def read_blocks(self) -> None:
        if self.user_id is not None:
            self.blocked = frozenset(await db(social.blocked_ids, self.user_id))

    async def table_changed(self, event: dict[str, Any]) -> None:
        self.seat_names = None  # seats change only with the table: names are read again at the next phrase
        try:
            seq = int(event.get("seq", 0))
            timers.saw_seq(self.table_id, seq)
            force = bool(event.get("force"))
            if event.get("origin") == self.channel_name:  # its own arrival: its first board counts it
                return
            if event.get("resync"):  # events may have been lost (``hub``): draw it again from the database
                snapshot = await shared_snapshot(self.table_id, seq, str(event.get("id", "")))
                await self.send_board(force=True, snapshot=snapshot)
            elif seq > self.sent_seq or (force and seq == self.sent_seq):
                snapshot = await shared_snapshot(
                    self.table_id, seq, str(event.get("id", "")) if force else None, event.get("snapshot")
                )
                await self.send_board(force=True, snapshot=snapshot)
        except Disconnected:  # the socket closed while its board was being drawn: its disconnect follows
            log.debug(
                "table %s: redraw at seq %s for a closed socket", getattr(self, "table_id", None), event.get("seq")
            )
        except Exception:  # a board not drawn is caught up at the next change or resync; a consumer lost is not
            log.exception("table %s: redraw at seq %s failed", getattr(self, "table_id", None), event.get("seq"))

    async def send_board(self, force: bool = False, snapshot: Snapshot | None = None) -> bool:
        """Draw this viewer's board: from ``snapshot`` when given (a game in play is drawn right here, with
        no database access), else read afresh."""
        rendered = None
        rounds = None
        hand = None
        shown_rounds, shown_hand = self.shown_rounds, self.shown_hand
        if snapshot is None:
            # A whole board read afresh (a first board, a stale page: it must show every change committed so
            # far), kept as this process's latest: the table's next change is then applied to it rather than
            # read again, and the push after it leaves out the scoreboard and the hand this board shows.
            snapshot = await db(load_snapshot, self.table_id)
            if snapshot is None:
                return False
            remember(self.table_id, snapshot)
            shown_rounds, shown_hand = None, None
        if snapshot is not None:
            try:
                drawn = board.draw_push(snapshot, self.user_id, self.language, shown_rounds, shown_hand)
                if drawn is not None:
                    rendered, hand = (drawn.seq, drawn.html), drawn.hand
                    rounds = board.rounds_done(snapshot)
            except Exception:  # drawn the slow way below rather than not at all
                log.exception("table %s: drawing from the shared snapshot failed", self.table_id)
        if rendered is None:
            rendered = await db(board.render_board, self.table_id, self.user_id, self.language, snapshot)
            rounds = None  # a whole board: the scoreboard is in it (and the next push draws it again)
        if rendered is None:
            return False
        seq, html = rendered
        if seq > self.sent_seq or force:
            self.sent_seq = seq
            # A push leaves the scoreboard and the hand out while the page's are still right (``draw_push``).
            self.shown_rounds = rounds
            self.shown_hand = hand
            await self.send(text_data=html)
            table = snapshot.table if snapshot is not None else None
            if table is not None and table.tournament_id is not None and table.status == Table.Status.FINISHED:
                await self.await_deals(table)
        return True

    async def await_deals(self, table: Table) -> None:
        """A tournament table's final board drawn while another table of its game still plays the deals: hear
        the tournament's changes (``tournament_changed``), to draw it again once they are everyone's."""
        if self.awaiting_deals or not await db(access.deals_secret, table):
            return
        self.awaiting_deals = True
        await self.join(push.tournament_group(int(table.tournament_id or 0)))

    async def tournament_changed(self, event: dict[str, Any]) -> None:
        """The tournament of this socket's finished table changed (a table finished a deal or the game): once
        the game's deals are no longer secret, its final board is drawn again, now with the replay, the
        download and «Analizar la partida»."""
        if not self.awaiting_deals:
            return
        try:
            if await db(_deals_secret_of, self.table_id):
                return
            self.awaiting_deals = False
            await self.send_board(force=True)
        except Disconnected:
            pass
        except Exception:  # drawn again at its next load
            log.exception("table %s: the redraw for the tournament's deals failed", getattr(self, "table_id", None))

    async def send_error(self, error: actions.ActionError) -> None:
        html = board.render_flash(error.message(self.language), getattr(self, "sent_seq", None), self.language)
        await self.send(text_data=html)


def _deals_secret_of(table_id: int) -> bool:
    table = Table.objects.filter(pk=table_id).first()
    return table is not None and access.deals_secret(table)


# -- one read per change per process ---------------------------------------------------------------
#
# Every socket of this process showing a table gets the same ``table.changed`` event; the first to handle
# it makes the table's snapshot and the others wait for it instead of making their own.  The snapshot is
# made from the one before and the change the event carries (``games.table.snapshot.apply_change``: the
# row and seats it carries, the game moved by its move), or, when that cannot be done (a deal, a gap in the
# seqs heard, a process that has just started showing the table), read from the database
# (``load_snapshot``).  A snapshot serves an event at its seq or below (a newer board is never wrong); a
# forced redraw (something visible changed at the same seq) carries an id, and is served only by a
# snapshot read for that id.

_snapshots: dict[int, tuple[int, str | None, asyncio.Future[Snapshot | None]]] = {}
#: The newest snapshot this process has of each table it shows: the next change is applied to it.
_latest: dict[int, Snapshot] = {}
#: How long a snapshot is kept after its read (events reach every socket within a few milliseconds).
SNAPSHOT_SECONDS = 2.0


async def shared_snapshot(
    table_id: int, seq: int, force_id: str | None = None, packed: dict[str, Any] | None = None
) -> Snapshot | None:
    """The table's snapshot for an event at ``seq``: the one this process has already (for this seq or a
    later one), else the one the event's change (``packed``) makes of this process's latest, else read
    once from the database."""
    entry = _snapshots.get(table_id)
    if entry is not None:
        cached_seq, cached_force, future = entry
        if (force_id is None and cached_seq >= seq) or (force_id is not None and cached_force == force_id):
            return await asyncio.shield(future)
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    key = (seq, force_id, future)
    _snapshots[table_id] = key
    try:
        snapshot: Snapshot | None = None
        if packed is not None and force_id is None:
            try:
                snapshot = apply_change(_latest.get(table_id), packed)
            except NotApplicable:
                pass
            except Exception:  # (a process of another version sent it, say): read it instead
                log.exception("table %s: the change pushed for seq %s could not be read", table_id, seq)
        if snapshot is None:
            snapshot = await db(load_snapshot, table_id)
    except BaseException as error:
        if _snapshots.get(table_id) is key:
            del _snapshots[table_id]
        future.set_exception(error)
        future.exception()  # retrieved: the waiters (if any) get it too
        raise
    if snapshot is not None:
        remember(table_id, snapshot)
    future.set_result(snapshot)
    if snapshot is not None and _snapshots.get(table_id) is key:
        _snapshots[table_id] = (max(seq, snapshot.seq), force_id, future)
        key = _snapshots[table_id]
    loop.call_later(SNAPSHOT_SECONDS, _forget_snapshot, table_id, key)
    return snapshot


def remember(table_id: int, snapshot: Snapshot) -> None:
    """Keep ``snapshot`` as the table's latest here, unless an older one than that kept (or no socket
    here shows the table)."""
    if hub.listeners(table_id):
        latest = _latest.get(table_id)
        if latest is None or snapshot.seq >= latest.seq:
            _latest[table_id] = snapshot


def _forget_snapshot(table_id: int, key: object) -> None:
    if _snapshots.get(table_id) is key:
        del _snapshots[table_id]


def forget_table(table_id: int) -> None:
    """This process shows the table no more: the next socket that does starts from the database."""
    _latest.pop(table_id, None)


# -- a tournament's page ----------------------------------------------------------------------------


#: A page arms its redraw for registration's opening only when it is this close (seconds): further off, the
#: page's next change or its next load shows it open.
OPENING_HORIZON = 24 * 3600

#: Seconds a tournament's page waits after a change before drawing it again: the changes that come together
#: (a game's tables starting, several tables finishing a deal) are read and drawn once.
TOURNAMENT_SETTLE = 0.25


class TournamentConsumer(AsyncWebsocketConsumer):
    """One socket showing a tournament's page (anyone may watch it, as anyone may read its page).  On every
    change of the tournament (``push.tournament_changed``: a registration, a table started or finished, a deal
    finished at one of its tables) it draws the page's live parts for its viewer (``games.read.tournaments``'s
    ``render_live``: htmx out-of-band swaps) from the rows this process reads once for all its sockets of the
    tournament (``shared_tournament``), and sends them if they changed."""

    tournament_id: int
    user_id: int | None = None
    language: str = "es"
    #: The group joined (discarded on the way out).
    group: str | None = None
    #: When a change not drawn yet was heard (None: the page is up to date).
    changed_since: float | None = None
    _redraw: asyncio.Task[None] | None = None
    #: What the parts last sent were drawn from (``TournamentRows.key``): the same rows are not sent twice.
    sent_key: Hashable | None = None
    #: The redraw armed for when registration opens (nothing in the rows changes then: only the time).
    _opening: asyncio.TimerHandle | None = None

    async def connect(self) -> None:
        try:
            self.tournament_id = int(self.scope["url_route"]["kwargs"]["tournament_id"])
        except (KeyError, TypeError, ValueError):
            await self.close(code=4404)
            return
        if capacity.is_full():  # the page works without its socket: it simply is not kept up to date
            await self.close(code=4503)
            return
        user = self.scope.get("user")
        self.user_id = user.pk if user is not None and user.is_authenticated else None
        self.language = scope_language(self.scope)
        await self.accept()
        try:
            # The group first: a change made while the page is read and drawn is then heard, and drawn after.
            self.group = push.tournament_group(self.tournament_id)
            await self.channel_layer.group_add(self.group, self.channel_name)
            rows = await shared_tournament(self.tournament_id, asyncio.get_running_loop().time())
            if rows is None:
                await self.leave()
                await self.close(code=4404)
                return
            await self.send_parts(rows)
        except Disconnected:
            await self.leave()
        except Exception:
            log.exception("tournament %s: connection failed", self.tournament_id)
            await self.leave()
            try:  # a server error (1011): the page connects again
                await self.close(code=1011)
            except Exception as refused:
                raise ConnectionFailed("closed with 1011") from refused

    async def leave(self) -> None:
        if self._redraw is not None and not self._redraw.done() and self._redraw is not asyncio.current_task():
            self._redraw.cancel()
        if self._opening is not None:
            self._opening.cancel()
            self._opening = None
        group, self.group = self.group, None
        if group is not None:
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except Exception:  # the channel layer is down: its group expiry forgets the channel
                log.exception("tournament %s: leaving its group failed", getattr(self, "tournament_id", None))

    async def disconnect(self, code: int) -> None:
        await self.leave()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """The page sends nothing: its forms are HTTP posts."""

    async def tournament_changed(self, event: dict[str, Any]) -> None:
        """Something on the page changed: draw it again shortly (changes that come together, once)."""
        loop = asyncio.get_running_loop()
        if self.changed_since is None:
            self.changed_since = loop.time()
        if self._redraw is None or self._redraw.done():
            self._redraw = loop.create_task(self._redraw_soon())

    async def _redraw_soon(self) -> None:
        try:
            while self.changed_since is not None and self.group is not None:
                await asyncio.sleep(TOURNAMENT_SETTLE)
                since, self.changed_since = self.changed_since, None
                rows = await shared_tournament(self.tournament_id, since)
                if rows is None:
                    return
                await self.send_parts(rows)
        except (Disconnected, asyncio.CancelledError):
            pass
        except Exception:  # a redraw lost is caught up at the next change; a socket lost is not
            log.exception("tournament %s: redraw failed", getattr(self, "tournament_id", None))

    async def send_parts(self, rows: tournament_pages.TournamentRows) -> None:
        key = (rows.key, self.language)
        if key == self.sent_key:
            return
        html = await shared_render(rows, self.user_id, self.language)
        self.sent_key = key
        await self.send(text_data=html)
        self.arm_opening(rows)

    def arm_opening(self, rows: tournament_pages.TournamentRows) -> None:
        """A page shown before registration opens is drawn again when it opens («Inscribirme» appears)."""
        if self._opening is not None or rows.tournament.status != Tournament.Status.SCHEDULED:
            return
        wait = (rows.tournament.registration_opens_at - timezone.now()).total_seconds()
        if wait <= 0 or wait > OPENING_HORIZON:
            return
        loop = asyncio.get_running_loop()
        self._opening = loop.call_later(wait + TOURNAMENT_SETTLE, self._opened)

    def _opened(self) -> None:
        self._opening = None
        if self.group is not None:
            asyncio.ensure_future(self.tournament_changed({}))


#: The live parts drawn in this process for the last change of each tournament, by (language, kind of viewer):
#: every socket of a visitor, of anyone logged in who is not in the tournament, or of the same person, shares
#: one drawing.  Drawn on a thread of their own, not on the loop: a change seen by many sockets would otherwise
#: hold up every table's moves in this process while it draws (measured with 64 pages open: p95 213 ms).
_renders: dict[int, tuple[Hashable, dict[tuple[str, Hashable], asyncio.Future[str]]]] = {}
_render_pool: ThreadPoolExecutor | None = None


async def shared_render(rows: tournament_pages.TournamentRows, viewer_id: int | None, language: str) -> str:
    global _render_pool
    loop = asyncio.get_running_loop()
    tournament_id = rows.tournament.pk
    entry = _renders.get(tournament_id)
    if entry is None or entry[0] != rows.key:
        entry = (rows.key, {})
        _renders[tournament_id] = entry
    who = (language, tournament_pages.viewer_kind(rows, viewer_id))
    drawn = entry[1].get(who)
    if drawn is None:
        if _render_pool is None:
            _render_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pocha-tournament")
        drawn = asyncio.ensure_future(
            loop.run_in_executor(_render_pool, tournament_pages.render_live, rows, viewer_id, language)
        )
        entry[1][who] = drawn
    return await asyncio.shield(drawn)


#: Each tournament's last read in this process: (when it started, on the loop's clock; its result).
_tournament_reads: dict[int, tuple[float, asyncio.Future[tournament_pages.TournamentRows | None]]] = {}


async def shared_tournament(tournament_id: int, since: float) -> tournament_pages.TournamentRows | None:
    """The tournament's rows as read after ``since`` (the loop's time when a change was heard): the read this
    process has already started since then, else a new one.  So each change is read once per process,
    whatever the number of its sockets showing the tournament."""
    loop = asyncio.get_running_loop()
    entry = _tournament_reads.get(tournament_id)
    if entry is not None and entry[0] >= since:
        return await asyncio.shield(entry[1])
    future: asyncio.Future[tournament_pages.TournamentRows | None] = loop.create_future()
    key = (loop.time(), future)
    _tournament_reads[tournament_id] = key
    try:
        rows = await db(tournament_pages.read_tournament, tournament_id)
    except BaseException as error:
        if _tournament_reads.get(tournament_id) is key:
            del _tournament_reads[tournament_id]
        future.set_exception(error)
        future.exception()  # retrieved: the waiters (if any) get it too
        raise
    future.set_result(rows)
    loop.call_later(SNAPSHOT_SECONDS, _forget_tournament_read, tournament_id, key)
    return rows


def _forget_tournament_read(tournament_id: int, key: object) -> None:
    if _tournament_reads.get(tournament_id) is key:
        del _tournament_reads[tournament_id]


# -- every other page -------------------------------------------------------------------------------

#: A page's socket is sent nothing: a frame longer than this is refused without being looked at.
SITE_MAX_FRAME = 256
#: Seconds a page waits after a notice before drawing its parts again: notices that come together (several
#: people followed coming or going at once) are drawn once.
SITE_SETTLE = 0.25


def query_page(scope: dict[str, Any]) -> str | None:
    """The page a site socket's query string names (``?p=lobby``), ``live_pages.OTHER`` when it names none, or
    None when it is anything but one page of ``live_pages.PAGES``."""
    raw = scope.get("query_string") or b""
    try:
        pairs = parse_qs(raw.decode("ascii"), keep_blank_values=True, strict_parsing=bool(raw), max_num_fields=4)
    except (UnicodeDecodeError, ValueError):
        return None
    values = pairs.get("p")
    if values is None:
        return live_pages.OTHER if not pairs else None
    if len(pairs) != 1 or len(values) != 1:
        return None
    return live_pages.page_of(values[0])


class SiteConsumer(AsyncWebsocketConsumer):
    """One socket of a page of the site other than a table's (whose own socket does the same for it), for a
    person signed in: while it is open its person is online (a ``PageSocket`` row, ``presence.open_page``), and
    it hears the person's notices (``push.person_notice``) to draw again what its page shows live
    (``games.read.live_pages``: the invitation banner everywhere, «Amigos»' lists on «Amigos», «who is online»
    and «games to watch» on the lobby).  The page sends nothing over it: anything sent is refused.  Its row and
    groups are undone on every way out, as a table's socket's are."""

    user_id: int | None = None
    language: str = "es"
    page: str = live_pages.OTHER
    #: Its row may be written (it counts its person online): deleted on the way out.
    counted = False
    #: The groups this socket has joined (discarded on the way out).
    joined: tuple[str, ...] = ()
    #: The kinds of notice heard and not drawn yet (``_redraw_soon``).
    pending: frozenset[str] = frozenset()
    _redraw: asyncio.Task[None] | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:  # an exception escaped, or the task was cancelled: no disconnect ran
            try:
                await self.leave()
            except BaseException:  # the loop is going away: the process's death will undo the rest
                log.exception("page socket of user %s: leaving failed", self.user_id)

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.user_id = user.pk
        self.language = scope_language(self.scope)
        page = query_page(self.scope)
        await self.accept()
        if page is None:
            with override(self.language):
                message = str(_("Esa página no existe."))
            await self.refuse(message, 4404)
            return
        self.page = page
        try:
            # The person's group first: a suspension or a notice sent meanwhile is then heard.
            await self.join(push.user_group(self.user_id))
            reason = await db(moderation.suspension_reason, self.user_id)
            if reason is not None:
                await self.refuse_suspended(reason)
                return
            self.counted = True  # before: a socket gone while its row is written still deletes it
            try:
                await db(presence.open_page, self.user_id, self.channel_name)
            except actions.ActionError as error:  # too many sockets: nothing was written
                self.counted = False
                await self.refuse(error.message(self.language), 4429)
                return
            # What changed between the page's drawing and now (or while the socket was reconnecting).
            html = await db(live_pages.on_connect, self.page, self.user_id, self.language)
            if html:
                await self.send(text_data=html)
        except Disconnected:
            await self.leave()
        except Exception:
            log.exception("page socket of user %s: connection failed", self.user_id)
            await self.leave()
            try:  # a server error (1011): the page connects again
                await self.close(code=1011)
            except Exception as refused:
                raise ConnectionFailed("closed with 1011") from refused

    async def join(self, group: str) -> None:
        self.joined = (*self.joined, group)  # before: a join that fails half way is discarded too
        await self.channel_layer.group_add(group, self.channel_name)

    async def leave(self) -> None:
        """Undo what the socket joined and wrote (idempotent: any way out may call it again)."""
        task = self._redraw
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()
        self.pending = frozenset()
        joined, self.joined = self.joined, ()
        for group in joined:
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except Exception:  # the channel layer is down: its group expiry forgets the channel
                log.exception("page socket of user %s: leaving group %s failed", self.user_id, group)
        if self.counted and self.user_id is not None:
            self.counted = False
            try:
                await db(presence.close_page, self.user_id, self.channel_name)
            except Exception:  # the process's next beats delete the row (``presence.check_own_rows``)
                log.exception("page socket of user %s: presence update failed", self.user_id)

    async def disconnect(self, code: int) -> None:
        await self.leave()

    async def refuse(self, message: str, code: int) -> None:
        """Say why to this socket alone, undo what it joined and wrote, and close it."""
        await self.send_error(message)
        await self.leave()
        await self.close(code=code)

    async def send_error(self, message: str) -> None:
        await self.send(text_data=live_pages.error_html(message))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """A page sends nothing over its socket: whatever comes is refused, to this socket alone, and changes
        nothing (a long frame is not even looked at)."""
        size = len(text_data) if text_data is not None else len(bytes_data or b"")
        with override(self.language):
            text = _("Mensaje demasiado largo.") if size > SITE_MAX_FRAME else _("Mensaje no válido.")
            message = str(text)
        try:
            await self.send_error(message)
        except Disconnected:
            pass

    async def person_notice(self, event: dict[str, Any]) -> None:
        """Something of this person's changed (``push.person_notice``): draw the page's parts it shows again,
        shortly (notices that come together, once)."""
        kind = event.get("kind")
        if kind not in live_pages.KINDS or not self.counted:
            return
        self.pending = self.pending | {str(kind)}
        if self._redraw is None or self._redraw.done():
            self._redraw = asyncio.get_running_loop().create_task(self._redraw_soon())

    async def _redraw_soon(self) -> None:
        try:
            while self.pending and self.counted:
                await asyncio.sleep(SITE_SETTLE)
                kinds, self.pending = sorted(self.pending), frozenset()
                html = await db(live_pages.fragments, kinds, self.page, self.user_id, self.language)
                if html and self.counted:
                    await self.send(text_data=html)
        except (Disconnected, asyncio.CancelledError):
            pass
        except Exception:  # drawn again at the next notice or load; a socket lost is not
            log.exception("page socket of user %s: redraw failed", self.user_id)

    async def account_suspended(self, event: dict[str, Any]) -> None:
        """A moderator has just suspended this person: say why and close."""
        try:
            await self.refuse_suspended(str(event.get("reason", "")))
        except Exception:
            log.exception("page socket of user %s: closing a suspended person's socket failed", self.user_id)
            await self.leave()
            await self.close(code=4403)

    async def refuse_suspended(self, reason: str) -> None:
        await self.refuse(access.suspended_error(reason).message(self.language), 4403)
