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
from games import access, actions, push, selectors

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
        except ValueError:
            await self.send_error(actions.ActionError("malformed", _("Mensaje no válido.")))
            return
        data.pop("HEADERS", None)
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

    async def account_suspended(self, event: dict[str, Any]) -> None:
        """A moderator has just suspended this person: say why and close."""
        await self.refuse_suspended(str(event.get("reason", "")))

    async def refuse_suspended(self, reason: str) -> None:
        await self.send_error(access.suspended_error(reason))
        await self.close(code=4403)

    async def table_changed(self, event: dict[str, Any]) -> None:
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
