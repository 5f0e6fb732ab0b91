"""The table's WebSocket: a thin adapter from frames to actions, and from events to each viewer's fragments."""

from __future__ import annotations

import json
import logging
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from accounts import moderation
from games import access, actions, push, selectors, talk, watchers

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


class TableConsumer(AsyncWebsocketConsumer):
    table_id: int
    user_id: int | None
    language: str
    sent_seq: int

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
        # Join the person's group before looking at their suspension: one written in between is then
        # either seen here or heard there.
        await self.channel_layer.group_add(push.user_group(self.user_id), self.channel_name)
        reason = await database_sync_to_async(moderation.suspension_reason)(self.user_id)
        if reason is not None:
            await self.refuse_suspended(reason)
            return
        if not await database_sync_to_async(access.can_view_id)(self.table_id, user):
            # A private table is, to anyone not at it, a table that does not exist.
            await self.send_error(actions.ActionError("unknown_table", _("Esa mesa no existe.")))
            await self.close(code=4404)
            return
        # Counted as watching before joining the table's group: the redraw pushed for everyone else when
        # a spectator arrives does not come back to this socket, whose first board (drawn after joining,
        # so no change is missed) already counts it.
        await self.start_watching()
        await self.channel_layer.group_add(push.table_group(self.table_id), self.channel_name)
        if not await self.send_board():
            await self.send_error(actions.ActionError("unknown_table", _("Esa mesa no existe.")))
            await self.close(code=4404)
            return
        await database_sync_to_async(actions.do_presence)(self.table_id, self.user_id, +1)
        self.counted = True

    async def disconnect(self, code: int) -> None:
        if getattr(self, "user_id", None) is not None:
            await self.channel_layer.group_discard(push.user_group(self.user_id), self.channel_name)
        if hasattr(self, "table_id"):
            await self.channel_layer.group_discard(push.table_group(self.table_id), self.channel_name)
            if getattr(self, "watching", False):
                self.watching = False
                try:
                    await database_sync_to_async(watchers.unwatch)(self.table_id, self.channel_name)
                except Exception:
                    log.exception("table %s: spectator count update failed", self.table_id)
            if getattr(self, "counted", False):
                self.counted = False
                try:
                    await database_sync_to_async(actions.do_presence)(self.table_id, self.user_id, -1)
                except Exception:
                    log.exception("table %s: presence update failed", self.table_id)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            if text_data is None or len(text_data) > MAX_FRAME:
                raise ValueError
            data = json.loads(text_data)
            if not isinstance(data, dict):
                raise ValueError
        except (ValueError, RecursionError):  # RecursionError: a few KB of nested brackets
            await self.send_error(actions.ActionError("malformed", _("Mensaje no válido.")))
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
                await database_sync_to_async(actions.do_action)(self.table_id, self.user, action, seq)
            else:
                await database_sync_to_async(actions.ACTIONS_BY_VERB[verb])(self.table_id, self.user, seq)
        except actions.ActionError as error:
            if error.resync:
                await self.send_board(force=True)
            await self.send_error(error)
        except Exception:
            log.exception("table %s: frame failed", getattr(self, "table_id", None))
            await self.send_error(actions.ActionError("server", _("Algo ha fallado en el servidor.")))

    async def start_watching(self) -> None:
        """Record this socket as showing the table, and redraw the table if a spectator arrived."""
        try:
            await database_sync_to_async(watchers.watch)(self.table_id, self.user_id, self.channel_name)
            self.watching = True
        except Exception:  # the count is for show: the board works without it
            log.exception("table %s: spectator count update failed", self.table_id)

    async def say(self, value: Any) -> None:
        """A preset phrase from a person seated here, to everyone at the table; errors to the sender alone."""
        try:
            phrase = talk.parse_phrase(value)
            position = await database_sync_to_async(talk.check_say)(self.table_id, self.user_id)
            if not await database_sync_to_async(talk.allow)(self.user_id):
                raise talk.too_many()
            await self.channel_layer.group_send(push.table_group(self.table_id),
                                                {"type": "table.talk", "seat": position, "phrase": phrase})
        except actions.ActionError as error:
            await self.send_error(error)
        except Exception:
            log.exception("table %s: phrase failed", getattr(self, "table_id", None))
            await self.send_error(actions.ActionError("server", _("Algo ha fallado en el servidor.")))

    async def table_talk(self, event: dict[str, Any]) -> None:
        """Someone at the table said a phrase: draw it in this viewer's language."""
        try:
            seat, phrase = int(event["seat"]), str(event["phrase"])
            if phrase not in talk.PHRASE_TEXT:
                return
            names: dict[int, str] = getattr(self, "seat_names", None) or {}
            if seat not in names:
                name = await database_sync_to_async(talk.seat_name)(self.table_id, seat)
                if name is None:
                    return
                names[seat] = name
                self.seat_names = names
            await self.send(text_data=talk.render_talk(seat, phrase, names[seat], self.language))
        except Exception:  # a phrase lost is nothing; a consumer lost is a table gone dark
            log.exception("table %s: talk event failed", getattr(self, "table_id", None))

    async def account_suspended(self, event: dict[str, Any]) -> None:
        """A moderator has just suspended this person: say why and close."""
        await self.refuse_suspended(str(event.get("reason", "")))

    async def refuse_suspended(self, reason: str) -> None:
        await self.send_error(access.suspended_error(reason))
        await self.close(code=4403)

    async def table_changed(self, event: dict[str, Any]) -> None:
        self.seat_names = None  # seats change only with the table: names are read again at the next phrase
        seq = int(event.get("seq", 0))
        if seq > self.sent_seq or (event.get("force") and seq == self.sent_seq):
            await self.send_board(force=True)

    async def send_board(self, force: bool = False) -> bool:
        rendered = await database_sync_to_async(selectors.render_board)(self.table_id, self.user_id, self.language)
        if rendered is None:
            return False
        seq, html = rendered
        if seq > self.sent_seq or force:
            self.sent_seq = seq
            await self.send(text_data=html)
        return True

    async def send_error(self, error: actions.ActionError) -> None:
        html = selectors.render_flash(error.message(self.language), getattr(self, "sent_seq", None), self.language)
        await self.send(text_data=html)
