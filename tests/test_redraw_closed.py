"""A table's redraw that reaches a socket which has just closed (Daphne raises autobahn's ``Disconnected``
when the board is sent) is not an error worth a traceback: the socket's disconnect follows and there is
nothing to catch up.  Any other failure of a redraw is still logged as an error."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from autobahn.exception import Disconnected

from games.live import consumers


def consumer_whose_send_fails(monkeypatch: pytest.MonkeyPatch, error: Exception) -> consumers.TableConsumer:
    async def snapshot(*args: Any, **kwargs: Any) -> None:
        return None

    monkeypatch.setattr(consumers, "shared_snapshot", snapshot)
    consumer = consumers.TableConsumer()
    consumer.table_id = 41
    consumer.sent_seq = 3
    consumer.channel_name = "specific.a!b"
    attempts: list[bool] = []

    async def send_board(force: bool = False, snapshot: Any = None) -> bool:
        attempts.append(force)
        raise error

    consumer.send_board = send_board  # type: ignore[method-assign]
    consumer.attempts = attempts  # type: ignore[attr-defined]
    return consumer


async def test_a_redraw_for_a_socket_that_closed_is_not_logged_as_an_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    consumer = consumer_whose_send_fails(monkeypatch, Disconnected("Attempt to send on a closed protocol"))
    with caplog.at_level(logging.DEBUG, logger="games.live.consumers"):
        await consumer.table_changed({"type": "table.changed", "table": 41, "seq": 4})
    assert consumer.attempts == [True]  # type: ignore[attr-defined]
    assert [r.levelno for r in caplog.records if r.name == "games.live.consumers"] == [logging.DEBUG]
    assert "closed socket" in caplog.records[-1].getMessage()


async def test_any_other_failed_redraw_is_an_error_with_its_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    consumer = consumer_whose_send_fails(monkeypatch, RuntimeError("plantilla rota"))
    with caplog.at_level(logging.DEBUG, logger="games.live.consumers"):
        await consumer.table_changed({"type": "table.changed", "table": 41, "seq": 4})
    errors = [r for r in caplog.records if r.name == "games.live.consumers" and r.levelno == logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is not None
    assert "redraw at seq 4 failed" in errors[0].getMessage()
