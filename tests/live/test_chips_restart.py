"""A real server killed with SIGKILL at a staked game's last card, started again on the same database:
the pot is paid exactly once, and the books still balance.

The same harness as ``test_restart``: ``daphne`` in a separate process on a SQLite file (in-memory
channel layer, in-process clock), driven as browsers would: HTTP with session cookie and CSRF to log in,
open a 100-chip 3-seat table and sit; the table's WebSocket to play.  Three people play it, so the
game's last move is always a person's card.  A game is long, so it is played once per module, up to
its last card, and the server is killed there; each test then runs its own server on a copy of that
file and dies at a different moment:

* ``unsent``: with the last card still to play (the set-up's own kill); after the restart the turn clock
  (made to have run out, written straight into the file) plays it;
* ``sent``: the instant the mover's socket has sent the last card, or 10 or 25 ms later (somewhere while
  the server handles it); whatever the server got to, the file holds the card and its payout, or
  neither, and if neither, the clock plays the card after the restart as above;
* ``landed``: the instant the last card's board arrives (the card and the payout committed together,
  the push sent), before anything else runs; after the restart nothing is left to do.

Then the file is read directly: one payout for the table, an empty pot, balances summing to zero,
every transaction summing to zero, and the winners (and only they) holding their share.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import re
import shutil
import sqlite3
import time
import urllib.parse
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from support.server import Daphne, sqlite_site

from accounts.ledger import WELCOME_CHIPS as WELCOME
from games.engine.snapshot import load
from games.live.timers import SWEEP_SECONDS
from games.table.actions import split_pot

from .test_chips_races import is_last_move
from .test_restart import PASSWORD, Browser, TableTab

PLAYERS = ("ana", "bea", "cris")
STAKE = 100


@dataclass(frozen=True)
class LastCard:
    database: Path
    table_id: int
    seq: int
    #: each player's session cookie (sessions live in the database, so they survive the copies)
    cookies: dict[str, str]


def browser_of(server: Daphne, cookie: str) -> Browser:
    """A browser already signed in (a session cookie from the file the server runs on)."""
    browser = Browser(server)
    browser.jar.set_cookie(
        http.cookiejar.Cookie(
            0,
            "sessionid",
            cookie,
            None,
            False,
            "127.0.0.1",
            False,
            False,
            "/",
            True,
            False,
            None,
            False,
            None,
            None,
            {},
        )
    )
    return browser


@pytest.fixture(scope="module")
def at_the_last_card(tmp_path_factory: pytest.TempPathFactory) -> LastCard:
    """Once per module: a migrated file with the three players, a server that opens the table, seats them
    and plays the game over their sockets up to its last card, and is then killed (SIGKILL) with that card
    still to play.  Each test starts its own server on a copy of the file."""
    setup = sqlite_site(tmp_path_factory.mktemp("chips-last-card"))
    setup.manage("migrate", "--no-input")
    setup.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; User = get_user_model(); "
        + "; ".join(f"User.objects.create_user('{name}', password='{PASSWORD}')" for name in PLAYERS),
    )

    async def play_and_kill() -> tuple[int, dict[str, str]]:
        table_id, tabs = await sit_three_and_play_to_the_last_card(setup)
        setup.kill()  # before the sockets close: a closed socket would hand the turn to the bot after a grace
        for tab in tabs:
            await tab.close()
        assert not any(tab.flashes for tab in tabs), [tab.flashes for tab in tabs]  # no move refused
        return table_id, {name: tab.browser.cookie("sessionid") for name, tab in zip(PLAYERS, tabs)}

    try:
        setup.start()
        table_id, cookies = asyncio.run(play_and_kill())
    finally:
        setup.kill()
        print("---- set-up server log ----\n" + setup.log[-10000:])
    status, seq, state = table_row(setup.database, table_id)
    assert status == "playing" and is_last_move(load(state))
    return LastCard(setup.database, table_id, seq, cookies)


@pytest.fixture
def server(tmp_path: Path, at_the_last_card: LastCard) -> Any:
    """A server of its own on a copy of the file at the last card (the journal too, should there be one)."""
    server = sqlite_site(tmp_path)
    for part in at_the_last_card.database.parent.glob(at_the_last_card.database.name + "*"):
        shutil.copyfile(part, server.database.with_name(part.name))
    try:
        yield server
    finally:
        server.kill()
        print("---- server log ----\n" + server.log[-30000:])


def query(database: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """Rows straight from the file.  Not a read-only connection: a server killed in the middle of a commit
    leaves a hot journal, which the first connection must roll back (as SQLite does for any crashed writer;
    a read-only one refuses with "attempt to write a readonly database")."""
    with closing(sqlite3.connect(database, timeout=20)) as db:
        return db.execute(sql, args).fetchall()


def table_row(database: Path, table_id: int) -> tuple[str, int, Any]:
    status, seq, state = query(database, "SELECT status, seq, state FROM games_table WHERE id = ?", table_id)[0]
    return status, seq, json.loads(state) if state else None


def balances(database: Path) -> dict[str, int]:
    rows = query(
        database,
        "SELECT u.username, a.balance FROM accounts_account a "
        "JOIN auth_user u ON u.id = a.user_id WHERE a.kind = 'user'",
    )
    return dict(rows)


def pot_balance(database: Path, table_id: int) -> int | None:
    rows = query(database, "SELECT balance FROM accounts_account WHERE kind = 'pot' AND table_id = ?", table_id)
    return rows[0][0] if rows else None


async def sit_three_and_play_to_the_last_card(server: Daphne) -> tuple[int, list[TableTab]]:
    """Three browsers: the first opens a 100-chip 3-seat table, the others sit (the last seat starts the
    game), and they play over their sockets until one card is left in the game."""
    browsers = [Browser(server) for _ in PLAYERS]
    for browser, name in zip(browsers, PLAYERS):
        browser.login(name)
    url, _page = browsers[0].post("/mesas/nueva/", "/", {"size": "3", "stake": str(STAKE)})
    match = re.fullmatch(r"/mesa/(\d+)/", urllib.parse.urlsplit(url).path)
    assert match, f"opening a table landed on {url}"
    table_id = int(match.group(1))
    for browser in browsers[1:]:
        browser.post(f"/mesa/{table_id}/sentarse/", f"/mesa/{table_id}/", {})
    status, seq, _state = table_row(server.database, table_id)
    assert status == "playing", status
    assert pot_balance(server.database, table_id) == 3 * STAKE
    assert balances(server.database) == {name: WELCOME - STAKE for name in PLAYERS}

    tabs = [TableTab(server, browser, table_id) for browser in browsers]
    for tab in tabs:
        await tab.open()
    for _ in range(2000):
        for tab in tabs:
            await tab.wait(lambda tab=tab: tab.seq >= seq, f"board {seq}")
        movers = [tab for tab in tabs if tab.game_moves()]
        assert len(movers) == 1, [tab.seq for tab in tabs]
        status, stored_seq, state = table_row(server.database, table_id)
        assert (status, stored_seq) == ("playing", seq)
        if is_last_move(load(state)):
            return table_id, tabs
        await movers[0].send(movers[0].game_moves()[0])
        seq += 1
    raise AssertionError("the game never came to its last card")


def set_the_turn_clock(database: Path, table_id: int, seconds: float) -> None:
    """The turn clock of the person to move runs out ``seconds`` from now (negative: it already has).
    Written straight into the file, while no server runs on it (Django keeps naive UTC there)."""
    when = (datetime.now(UTC) + timedelta(seconds=seconds)).replace(tzinfo=None).isoformat(sep=" ")
    with closing(sqlite3.connect(database, timeout=20)) as db, db:
        assert (
            db.execute(
                "UPDATE games_table SET turn_deadline = ?, due_at = ? WHERE id = ? AND status = 'playing'",
                (when, when, table_id),
            ).rowcount
            == 1
        )


def wait_until_finished(database: Path, table_id: int, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while table_row(database, table_id)[0] != "finished":
        assert time.monotonic() < end, f"table {table_id} never finished: {table_row(database, table_id)[:2]}"
        time.sleep(0.2)


def check_the_books(database: Path, table_id: int) -> None:
    status, _seq, state = table_row(database, table_id)
    assert status == "finished"
    game = load(state)
    assert game.is_over
    # every card of the game stored once: no card lost or played twice around the kill
    plays = query(
        database,
        "SELECT COUNT(*) FROM games_move WHERE table_id = ? AND kind = 'p'",
        table_id,
    )[0][0]
    assert plays == len(PLAYERS) * sum(spec.cards for spec in game.schedule), plays

    # the pot: paid once, and empty
    payouts = query(
        database, "SELECT id, key FROM accounts_transaction WHERE kind = 'payout' AND table_id = ?", table_id
    )
    assert [key for _id, key in payouts] == [f"payout:table:{table_id}"], payouts
    assert pot_balance(database, table_id) == 0
    stakes = query(
        database, "SELECT COUNT(*) FROM accounts_transaction WHERE kind = 'stake' AND table_id = ?", table_id
    )[0][0]
    refunds = query(
        database, "SELECT COUNT(*) FROM accounts_transaction WHERE kind = 'refund' AND table_id = ?", table_id
    )[0][0]
    assert (stakes, refunds) == (len(PLAYERS), 0)

    # the winners hold exactly their share, and their seats say so
    winners = game.winners()
    assert winners
    shares = split_pot(len(PLAYERS) * STAKE, winners)
    seats = dict(
        query(
            database,
            "SELECT s.position, u.username FROM games_seat s JOIN auth_user u ON u.id = s.user_id WHERE s.table_id = ?",
            table_id,
        )
    )
    assert sorted(seats.values()) == sorted(PLAYERS)
    expected = {seats[p]: WELCOME - STAKE + shares.get(p, 0) for p in seats}
    assert balances(database) == expected, (winners, shares)
    winnings = dict(query(database, "SELECT position, winnings FROM games_seat WHERE table_id = ?", table_id))
    assert winnings == {p: shares.get(p, 0) for p in seats}
    legs = dict(
        query(
            database,
            "SELECT a.user_id, e.amount FROM accounts_entry e JOIN accounts_account a "
            "ON a.id = e.account_id WHERE e.transaction_id = ?",
            payouts[0][0],
        )
    )
    user_ids = dict(query(database, "SELECT username, id FROM auth_user"))
    assert legs == {None: -len(PLAYERS) * STAKE, **{user_ids[seats[p]]: share for p, share in shares.items()}}

    # the whole ledger: sums to zero, each transaction sums to zero, each balance is its entries' sum
    assert query(database, "SELECT COALESCE(SUM(balance), 0) FROM accounts_account")[0][0] == 0
    unbalanced = query(
        database,
        "SELECT t.key, SUM(e.amount) FROM accounts_transaction t LEFT JOIN "
        "accounts_entry e ON e.transaction_id = t.id GROUP BY t.id "
        "HAVING COALESCE(SUM(e.amount), 0) != 0 OR COUNT(e.id) < 2",
    )
    assert unbalanced == [], unbalanced
    drifted = query(
        database,
        "SELECT a.id, a.kind, a.balance, COALESCE(SUM(e.amount), 0) FROM accounts_account a "
        "LEFT JOIN accounts_entry e ON e.account_id = a.id GROUP BY a.id "
        "HAVING a.balance != COALESCE(SUM(e.amount), 0)",
    )
    assert drifted == [], drifted
    negative = query(
        database, "SELECT id, kind, balance FROM accounts_account WHERE kind IN ('user', 'pot') AND balance < 0"
    )
    assert negative == [], negative


@pytest.mark.parametrize("kill", ["unsent", "sent", "sent+10ms", "sent+25ms", "landed"])
async def test_server_killed_at_the_last_card_pays_the_pot_once(
    server: Daphne, at_the_last_card: LastCard, kill: str
) -> None:
    table_id, seq = at_the_last_card.table_id, at_the_last_card.seq
    status, stored_seq, _state = table_row(server.database, table_id)
    assert (status, stored_seq) == ("playing", seq)
    assert pot_balance(server.database, table_id) == 3 * STAKE

    if kill == "unsent":
        landed = False  # the server died (in the set-up) with the last card still to play
    else:
        # A fresh turn clock (the copy's ran while the other tests did), and the mover back at the table.
        set_the_turn_clock(server.database, table_id, 120)
        server.start()
        turn = load(table_row(server.database, table_id)[2]).turn
        name = query(
            server.database,
            "SELECT u.username FROM games_seat s JOIN auth_user u ON u.id = s.user_id "
            "WHERE s.table_id = ? AND s.position = ?",
            table_id,
            turn,
        )[0][0]
        mover = TableTab(server, browser_of(server, at_the_last_card.cookies[name]), table_id)
        await mover.open()
        assert mover.seq == seq and len(mover.game_moves()) == 1, mover.board[:3000]
        sent_at = time.monotonic()
        await mover.send(mover.game_moves()[0])
        if kill == "landed":
            await mover.wait(lambda: mover.seq > seq, "the last card's board")
            assert mover.over and not mover.flashes, mover.flashes
            print(f"the last card's board came {1000 * (time.monotonic() - sent_at):.0f} ms after it was sent")
        elif "+" in kill:  # somewhere while the server handles it: reading, the transaction, the commit, the push
            time.sleep(int(kill.split("+")[1].removesuffix("ms")) / 1000)
        server.kill()
        await mover.close()
        journal = server.database.with_name(server.database.name + "-journal")
        hot = journal.exists() and journal.stat().st_size > 0
        status, stored_seq, _state = table_row(server.database, table_id)
        landed = status == "finished"
        print(
            f"killed ({kill}): table {table_id} is {status} at seq {stored_seq} (the last card was due at {seq})"
            + ("; killed in the middle of a write (hot journal)" if hot else "")
        )
        if kill == "landed":
            assert landed, "the last card's board arrived, but the card is not stored"

    if landed:  # the last card and the payout were committed together
        assert stored_seq == seq + 1
        assert pot_balance(server.database, table_id) == 0
    else:  # the last card never went in, nor did any chip move: the clock will play it after the restart
        assert (status, stored_seq) == ("playing", seq)
        assert pot_balance(server.database, table_id) == 3 * STAKE
        assert not query(server.database, "SELECT key FROM accounts_transaction WHERE kind = 'payout'")
        set_the_turn_clock(server.database, table_id, -1)

    server.start()  # the sweeper starts with the first request and plays whatever is overdue
    wait_until_finished(server.database, table_id)
    if landed:
        time.sleep(SWEEP_SECONDS + 0.3)  # a sweep over the finished table, which must do nothing
    # the host's wallet after the restart: the pot among their movements once if they won, else not at all
    url, wallet = browser_of(server, at_the_last_card.cookies[PLAYERS[0]]).get("/accounts/fichas/")
    assert urllib.parse.urlsplit(url).path == "/accounts/fichas/", f"the wallet page sent the host to {url}"
    server.kill()
    check_the_books(server.database, table_id)
    host_won = 0 in load(table_row(server.database, table_id)[2]).winners()
    assert wallet.decode().count(f"Bote de la mesa {table_id}<") == (1 if host_won else 0), wallet.decode()[-4000:]
