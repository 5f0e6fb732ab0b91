"""The one WebSocket client of the load tool (``run.py``) and of the tests that talk to a real server over
TCP (``tests/live/wsclient.py`` re-exports it): the ``websockets`` library, as a browser tab's table socket.

It behaves as the page's socket does and adds nothing the page does not: no compression is offered (the
server's CPU per move is what the load tool measures), no keepalive pings (a busy server under load must
not see its clients hang up because a pong came late), no proxy from the environment (the server is on
127.0.0.1).  Text frames only: ``recv`` gives the next message (``str``, or ``bytes`` with
``decode=False``), or None once the connection is closed; every failure to connect, or to send on a
closed connection, is a ``ConnectionError``."""

from __future__ import annotations

import json
import re
from typing import Any, AnyStr, overload

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

#: The largest message accepted (a late round's board for one seat is a few kB).
MAX_SIZE = 2**22

#: A section of a board (``jinja2/games/_board.html``) starts with this and ends with the first ``</section>``
#: after it: sections do not nest.
_OPEN, _CLOSE = '<section id="', "</section>"
_SECTION_ID = re.compile(r"[a-z-]+\Z")


def sections(board: AnyStr) -> dict[AnyStr, AnyStr]:
    """The board's sections by id, in order (``<section id="…">…</section>``).  Found with ``find``, not a
    regular expression: the load tool composes every board its sockets receive, and a lazy ``.*?`` over a
    late round's board costs a hundred times as much."""
    opening, closing = (_OPEN.encode(), _CLOSE.encode()) if isinstance(board, bytes) else (_OPEN, _CLOSE)
    quote = opening[-1:]
    found: dict[AnyStr, AnyStr] = {}
    at = 0
    while (start := board.find(opening, at)) >= 0:  # type: ignore[arg-type]
        end = board.find(closing, start)  # type: ignore[arg-type]
        if end < 0:
            break
        end += len(closing)
        name = board[start + len(opening) : board.find(quote, start + len(opening))]  # type: ignore[arg-type]
        text = name.decode("ascii", "replace") if isinstance(name, bytes) else name
        if _SECTION_ID.match(text):
            found[name] = board[start:end]
        at = end
    return found


def compose(page: AnyStr, frame: AnyStr) -> AnyStr:
    """The board as the page shows it once ``frame`` (a board) is applied, as ``static/js/table.js`` does:
    each section the frame carries replaces the page's own, and a section it leaves out stays as it was
    (a push leaves out the hand and the scoreboard while the page shows them right).  The frame's own
    sections come first, so its seq is the first ``data-board-seq``."""
    if not page:
        return frame
    sent = sections(frame)
    kept = [text for name, text in sections(page).items() if name not in sent]
    return frame + frame[:0].join(kept)


class WebSocket:
    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    @classmethod
    async def connect(
        cls, port: int, path: str, headers: dict[str, str], *, host: str = "127.0.0.1", timeout: float = 15
    ) -> WebSocket:
        """Open ``ws://host:port/path`` with ``headers`` (``Origin``, ``Cookie``) and wait for the handshake."""
        try:
            connection = await connect(
                f"ws://{host}:{port}{path}",
                additional_headers=headers,
                compression=None,
                ping_interval=None,
                proxy=None,
                open_timeout=timeout,
                max_size=MAX_SIZE,
                user_agent_header=None,
            )
        except (InvalidHandshake, ConnectionClosed) as error:
            raise ConnectionError(f"handshake refused: {error}") from error
        return cls(connection)

    @property
    def closed(self) -> bool:
        return self.connection.close_code is not None

    @property
    def local_port(self) -> int:
        """The client's end of the TCP connection (which server process holds it: ``tests/faults``)."""
        return int(self.connection.local_address[1])

    async def send(self, payload: dict[str, Any] | list[Any] | str) -> None:
        try:
            await self.connection.send(payload if isinstance(payload, str) else json.dumps(payload))
        except ConnectionClosed as error:
            raise ConnectionError(f"the socket is closed: {error}") from error

    @overload
    async def recv(self) -> str | None: ...
    @overload
    async def recv(self, decode: bool) -> str | bytes | None: ...

    async def recv(self, decode: bool = True) -> str | bytes | None:
        """The next message (bytes with ``decode=False``: the load tool's regular expressions read bytes);
        None once the connection is closed.  Safe to cancel (``asyncio.wait_for``)."""
        try:
            return await self.connection.recv(decode=decode)
        except ConnectionClosed:
            return None

    async def close(self) -> None:
        try:
            await self.connection.close()
        except (ConnectionError, OSError):
            pass
