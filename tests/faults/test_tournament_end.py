"""A tournament's end through a ``kill -9`` on the stack of ``conftest.py``: the prizes paid once.

A duplicate tournament (tables of 3, two deals, an entry fee of 100, prizes 60/40) with three people registered
through the site's own code (``entries.register``) starts on the stack by itself (beat's ``sweep_tournaments``
at its start time) and is played there: the people play their own turns, each by their default move as soon as it is theirs, from a
process of the test's own (``people_playing``: a person the bot and the clock played takes no prize, and the
prizes are what this test is about), within their turn clock (1 s, the tournament's ``bid_seconds`` and
``card_seconds``); the difícil bots play the empty seats.  In services mode only the Celery worker processes the end
(``advance_tournament``, sent when the last table finishes, and beat's ``sweep_tournaments``; the ASGI
servers' loops sweep tournaments only without Celery).

The kill lands inside the end itself.  Once every table is in its last deal, the test holds a row lock on the
tournament's registrations (``SELECT ... FOR UPDATE``, from outside, as a slow query would): the end's
transaction (``runner.finish``) then stops at its last write, the registrations' places and prizes, after it
has written the prize transaction and moved the chips, but before it commits.  The test checks that the worker's
own database session is the one waiting there (its query, its process in the worker's process group, the
prize row it inserted), then kills the worker's process group and beat with SIGKILL, releases the lock (the
dead worker's session rolls back: still playing, nothing paid), and lets supervisord start them again.  The
restarted worker ends the tournament: one PRIZE transaction whose legs are the pool, every person's chips
right, ``check_chips`` (``ledger.audit()``) clean.  Then both are killed again right after the end committed,
and the end is processed once more (``runner.advance``, ``runner.finish``, the worker's task and beat's sweep):
nothing is paid twice, nothing recorded changes.  The times are measured and printed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import psycopg

from games.tournaments import scoring

from .conftest import services_only
from .stack import ROOT, Stack

pytestmark = services_only

NAMES = ("torneo1", "torneo2", "torneo3")
SIZE = 3
DEALS = 2
FEE = 100
PRIZES = "60,40"
#: The smallest clock a person can be given (seconds; 0 would play every turn for them at once).
CLOCK = 1
WELCOME = 5_000
PG_PORT = 5432
T = TypeVar("T")


def wait(what: str, check: Callable[[], T | None], timeout: float, every: float = 0.05) -> tuple[T, float]:
    """Poll ``check`` until it returns something: (that, seconds it took)."""
    start = time.monotonic()
    while True:
        got = check()
        if got is not None and got is not False:
            return got, time.monotonic() - start
        assert time.monotonic() - start < timeout, f"timed out after {timeout}s waiting for {what}"
        time.sleep(every)


def create_and_register(stack: Stack) -> dict[str, Any]:
    """The people, the tournament (starting a few seconds from now) and the registrations, in the stack's own
    process (``manage.py shell``): the fees go into the pool through ``entries.register``."""
    code = f"""
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from games.models import Tournament
from games.tournaments import entries
people = [get_user_model().objects.create_user(name, password=None) for name in {NAMES!r}]
now = timezone.now()
t = Tournament.objects.create(
    name="Torneo del kill -9", size={SIZE}, places={2 * SIZE}, deals={DEALS}, entry_fee={FEE}, prizes={PRIZES!r},
    registration_opens_at=now - timedelta(minutes=1), starts_at=now + timedelta(seconds=2),
    bid_seconds={CLOCK}, card_seconds={CLOCK},
)
for person in people:
    entries.register(person, t.pk, None)
print("CREATED " + json.dumps({{"tournament": t.pk, "users": [p.pk for p in people]}}))
"""
    out = stack.manage("shell", "-c", code)
    line = next(x for x in out.splitlines() if x.startswith("CREATED "))
    return json.loads(line.removeprefix("CREATED "))


#: The people's own player (``people_playing``): each person's turn, at any of the tournament's tables, taken by
#: their default move as soon as it is theirs, until every table is over.
PLAYER = """
import time
from games.engine import default_action
from games.engine.snapshot import load
from games.models import Seat, Table
from games.table import actions
from games.table.errors import ActionError
tournament, until = TOURNAMENT, time.monotonic() + SECONDS
moves = 0
while time.monotonic() < until:
    tables = list(Table.objects.filter(tournament_id=tournament))
    if tables and all(t.status in (Table.Status.FINISHED, Table.Status.CANCELLED) for t in tables):
        break
    for table in tables:
        if table.status != Table.Status.PLAYING or table.turn_seat is None or not table.state:
            continue
        seat = Seat.objects.select_related("user").filter(table=table, position=table.turn_seat).first()
        if seat is None or seat.is_bot or seat.user_id is None or seat.left:
            continue
        try:
            actions.do_action(table.pk, seat.user, default_action(load(table.state)), table.seq)
            moves += 1
        except ActionError:
            pass  # the clock or the bot was first, or the trick is still shown: the next look
    time.sleep(0.05)
print("PLAYED", moves)
"""


def people_playing(stack: Stack, tournament_id: int, seconds: float) -> subprocess.Popen[bytes]:
    """The people's own player (``PLAYER``) for the tournament, in a process of its own (not the worker's)."""
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            PLAYER.replace("TOURNAMENT", str(int(tournament_id))).replace("SECONDS", str(float(seconds))),
        ],
        cwd=ROOT,
        env=stack.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def process_group(pgid: int) -> list[int]:
    """The live processes of a process group (the worker and its pool's children)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state, ppid, pgrp...
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def process_holding(client_port: int, server_port: int, pids: list[int]) -> int | None:
    """Which of ``pids`` holds the TCP connection from ``client_port`` to ``server_port`` (a database
    session's client, by the port ``pg_stat_activity`` shows)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, remote = int(fields[1].rsplit(":", 1)[1], 16), int(fields[2].rsplit(":", 1)[1], 16)
            if local == client_port and remote == server_port and int(fields[9]):
                inodes.add(f"socket:[{fields[9]}]")
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                        return pid
                except OSError:
                    continue
        except OSError:
            continue
    return None


def tournament_status(stack: Stack, tournament_id: int) -> str:
    ((status,),) = stack.sql("SELECT status FROM games_tournament WHERE id = %s", (tournament_id,))
    return str(status)


def prize_count(stack: Stack, tournament_id: int) -> int:
    ((count,),) = stack.sql(
        "SELECT COUNT(*) FROM accounts_transaction WHERE tournament_id = %s AND kind = 'prize'", (tournament_id,)
    )
    return int(count)


def books(stack: Stack, tournament_id: int, users: list[int]) -> dict[str, Any]:
    """Everything the end writes: the ledger's rows, the people's balances, the tournament and its
    registrations."""
    return {
        "transactions": stack.sql(
            "SELECT id, kind, key FROM accounts_transaction WHERE tournament_id = %s ORDER BY id", (tournament_id,)
        ),
        "entries": stack.sql("SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM accounts_entry"),
        "balances": stack.sql(
            "SELECT user_id, balance FROM accounts_account WHERE user_id = ANY(%s) ORDER BY user_id", (users,)
        ),
        "pool": stack.sql("SELECT balance FROM accounts_account WHERE tournament_id = %s", (tournament_id,)),
        "tournament": stack.sql(
            "SELECT status, results::text, finished_at FROM games_tournament WHERE id = %s", (tournament_id,)
        ),
        "registrations": stack.sql(
            "SELECT user_id, paid, refunded, place, score, prize FROM games_registration WHERE tournament_id = %s "
            "ORDER BY user_id",
            (tournament_id,),
        ),
    }


def check_paid_once(stack: Stack, tournament_id: int, users: list[int]) -> dict[int, int]:
    """Finished, one PRIZE transaction whose legs are the pool, every person's chips right, the books clean:
    each person's prize."""
    assert tournament_status(stack, tournament_id) == "finished"
    pool = FEE * len(users)
    rows = stack.sql(
        "SELECT t.key, a.kind, a.user_id, e.amount FROM accounts_transaction t "
        "JOIN accounts_entry e ON e.transaction_id = t.id JOIN accounts_account a ON a.id = e.account_id "
        "WHERE t.tournament_id = %s AND t.kind = 'prize'",
        (tournament_id,),
    )
    assert {key for key, *_ in rows} == {f"prizes:tournament:{tournament_id}"}, rows
    legs = [(kind, user_id, amount) for _key, kind, user_id, amount in rows]
    assert [amount for kind, _u, amount in legs if kind == "pool"] == [-pool], legs
    won = {user_id: amount for kind, user_id, amount in legs if kind == "user"}
    house = sum(amount for kind, _u, amount in legs if kind == "house")
    assert sum(won.values()) + house == pool and house == 0, legs  # 60 + 40 = 100 %: nothing to the house
    registrations = dict(
        stack.sql("SELECT user_id, prize FROM games_registration WHERE tournament_id = %s", (tournament_id,))
    )
    assert registrations == {u: won.get(u, 0) for u in users}, (registrations, won)
    # the prize table by the kept standings' places among the people
    ((results,),) = stack.sql("SELECT results FROM games_tournament WHERE id = %s", (tournament_id,))
    people = [line for line in (json.loads(results) if isinstance(results, str) else results) if line["user_id"]]
    shares, left = scoring.prizes(pool, [60, 40], [line["person_place"] for line in people])
    assert left == 0 and {line["user_id"]: line["prize"] for line in people} == registrations
    assert [registrations[line["user_id"]] for line in people] == shares, (people, shares)
    for user_id, balance in stack.sql(
        "SELECT user_id, balance FROM accounts_account WHERE user_id = ANY(%s)", (users,)
    ):
        assert balance == WELCOME - FEE + won.get(user_id, 0), (user_id, balance, won)
    assert stack.sql("SELECT balance FROM accounts_account WHERE tournament_id = %s", (tournament_id,)) == [(0,)]
    kinds = stack.sql(
        "SELECT kind, COUNT(*) FROM accounts_transaction WHERE tournament_id = %s GROUP BY kind ORDER BY kind",
        (tournament_id,),
    )
    assert kinds == [("entry", len(users)), ("prize", 1)], kinds
    assert "ok:" in stack.manage("check_chips")
    return {u: won.get(u, 0) for u in users}


def kill_worker_and_beat(stack: Stack) -> dict[str, int]:
    pids = {name: stack.pid(name) for name in ("worker", "beat")}
    for pid in pids.values():
        os.killpg(pid, signal.SIGKILL)  # the process and its children: supervisord gave each a process group
    return pids


def worker_ready_count(stack: Stack) -> int:
    """How many times a worker said it was ready (once per start: the log is the program's, across restarts)."""
    return len(stack.grep_logs(r"^\[[^]]+: INFO/MainProcess\] pocha@\S+ ready\.$"))


def watch(checks: dict[str, Callable[[], bool]], since: float, timeout: float) -> dict[str, float]:
    """Poll every check until each has been true once: the seconds from ``since`` to the first time each was."""
    seen: dict[str, float] = {}
    while len(seen) < len(checks):
        for name, check in checks.items():
            if name not in seen and check():
                seen[name] = time.monotonic() - since
        assert time.monotonic() - since < timeout, f"after {timeout}s only {seen} of {list(checks)}"
        time.sleep(0.1)
    return seen


def restarted(stack: Stack, killed: dict[str, int], ready_before: int) -> dict[str, Callable[[], bool]]:
    """Checks for the killed worker and beat running again (supervisord's word) and the worker ready (its own:
    connected to the broker and taking tasks)."""

    def running(name: str) -> Callable[[], bool]:
        def check() -> bool:
            out = stack.ctl("pid", name).strip()
            return out.isdigit() and int(out) not in (0, killed[name]) and stack.states().get(name) == "RUNNING"

        return check

    return {
        "worker running": running("worker"),
        "beat running": running("beat"),
        "worker ready": lambda: worker_ready_count(stack) > ready_before,
    }


def test_worker_killed_inside_the_tournaments_end_pays_the_prizes_once(stack: Stack) -> None:
    created = create_and_register(stack)
    tid, users = int(created["tournament"]), [int(u) for u in created["users"]]
    player = people_playing(stack, tid, 600)
    try:
        check_the_end_under_kills(stack, tid, users)
    finally:
        player.kill()
        output = player.communicate(timeout=30)[0].decode(errors="replace")
    print(f"[the people's own player] {output.strip()[-300:]}")


def check_the_end_under_kills(stack: Stack, tid: int, users: list[int]) -> None:
    assert stack.sql("SELECT balance FROM accounts_account WHERE tournament_id = %s", (tid,)) == [(FEE * len(users),)]
    began = time.monotonic()

    # Beat's sweep starts it at its start time: two tables (a duplicate has two at least), the same deals.
    def tables() -> list[tuple[Any, ...]]:
        return stack.sql(
            "SELECT id, status, round_number, deals::text, finished_at FROM games_table WHERE tournament_id = %s "
            "ORDER BY id",
            (tid,),
        )

    _, started_in = wait("the start", lambda: tournament_status(stack, tid) == "playing" and len(tables()) >= 2, 30)
    last_deal = json.loads(tables()[0][3])[-1]

    # Every table in its last deal: hold the registrations' rows, where the end's transaction writes last.
    def in_last_deal() -> bool:
        rows = tables()
        return all(status == "finished" or number == last_deal for _id, status, number, _d, _f in rows)

    _, to_last_deal = wait("every table in its last deal", in_last_deal, 240)
    lock = psycopg.connect(stack.database_url)
    try:
        lock.execute("SELECT id FROM games_registration WHERE tournament_id = %s FOR UPDATE", (tid,)).fetchall()
        assert tournament_status(stack, tid) == "playing", "the tournament ended before the lock was taken"
        assert any(status == "playing" for _id, status, *_ in tables()), "every table ended before the lock"
        holder = lock.info.backend_pid

        # The last table ends, and the worker's end of the tournament waits on the lock, its prizes written.
        def waiting_on_us() -> tuple[int, int, str] | None:
            rows = stack.sql(
                "SELECT pid, client_port, query FROM pg_stat_activity WHERE datname = %s "
                "AND %s = ANY(pg_blocking_pids(pid))",
                (stack.database, holder),
            )
            return rows[0] if rows else None

        (backend, client_port, query), _ = wait("the end's transaction to reach the registrations", waiting_on_us, 240)
        ((last_table_done,),) = stack.sql("SELECT MAX(finished_at) FROM games_table WHERE tournament_id = %s", (tid,))
        assert all(status == "finished" for _id, status, *_ in tables())
        assert query.lstrip().startswith('UPDATE "games_registration"'), query
        inserted = stack.sql(
            "SELECT c.relname FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "WHERE l.pid = %s AND l.mode = 'RowExclusiveLock' AND c.relname IN ('accounts_transaction', 'accounts_entry')",
            (backend,),
        )
        assert sorted(r for (r,) in inserted) == ["accounts_entry", "accounts_transaction"], inserted
        worker = stack.pid("worker")
        owner = process_holding(client_port, PG_PORT, process_group(worker))
        assert owner is not None, f"the session waiting ({backend}) is not the Celery worker's: {query}"
        assert tournament_status(stack, tid) == "playing" and prize_count(stack, tid) == 0

        ready_before = worker_ready_count(stack)
        killed_at = time.monotonic()
        killed = kill_worker_and_beat(stack)
        wait("the worker's processes gone", lambda: not process_group(worker), 10)
    finally:
        lock.rollback()  # the dead worker's session gets the rows, finds its client gone and rolls back
        lock.close()
    wait(
        "the killed worker's session to end",
        lambda: not stack.sql("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (backend,)),
        30,
    )
    assert tournament_status(stack, tid) == "playing", "the killed worker's end was committed"
    assert prize_count(stack, tid) == 0, "the killed worker's prizes were committed"
    rolled_back = time.monotonic() - killed_at
    first = watch(
        {**restarted(stack, killed, ready_before), "paid": lambda: tournament_status(stack, tid) == "finished"},
        killed_at,
        180,
    )
    assert first["paid"] >= first["worker ready"], first  # only the restarted worker ends it
    ((paid_at,),) = stack.sql(
        "SELECT created_at FROM accounts_transaction WHERE tournament_id = %s AND kind = 'prize'", (tid,)
    )
    # and kill both again right after the end committed
    ready_before = worker_ready_count(stack)
    killed_again_at = time.monotonic()
    again = kill_worker_and_beat(stack)
    prizes = check_paid_once(stack, tid, users)
    before = books(stack, tid, users)
    second = watch(restarted(stack, again, ready_before), killed_again_at, 180)

    # The end processed once more, every way it can be: in a process of its own (advance, then finish on the
    # row), by the worker (its task), by beat's sweep (every 2 s): nothing moves.
    def done_since(task: str, returned: str) -> int:
        return len(stack.grep_logs(rf"Task games\.tasks\.{task}\[[^]]+\] succeeded in [0-9.e-]+s: {returned}$"))

    tasks_before = done_since("advance_tournament", "'nothing'"), done_since("sweep_tournaments", "0")
    out = stack.manage(
        "shell",
        "-c",
        "from django.utils import timezone\n"
        "from games.live import tasks\n"
        "from games.models import Tournament\n"
        "from games.tournaments import runner\n"
        f"print('ADVANCE', runner.advance({tid}))\n"
        f"runner.finish(Tournament.objects.get(pk={tid}), timezone.now())\n"
        f"tasks.advance_tournament.delay({tid})\n",
    )
    assert "ADVANCE nothing" in out, out
    # the worker's task ran (it found nothing to do), and so did a sweep of beat's since the restart
    wait(
        "the worker's advance_tournament and beat's sweep",
        lambda: (
            done_since("advance_tournament", "'nothing'") > tasks_before[0]
            and done_since("sweep_tournaments", "0") > tasks_before[1]
        ),
        120,
    )
    assert books(stack, tid, users) == before, "processing the end again changed something"
    check_paid_once(stack, tid, users)
    assert all(state == "RUNNING" for state in stack.states().values()), stack.ctl("status")

    times = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in first.items())
    times_again = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in second.items())
    print(
        f"\n[tournament end, kill -9] playing {started_in:.1f}s after the registrations; every table in its last "
        f"deal (round {last_deal}) {to_last_deal:.1f}s later; worker and beat killed inside the end "
        f"{killed_at - began:.1f}s into the test; from the kill: its session rolled back {rolled_back:.1f}s, {times}; "
        f"prizes paid {(paid_at - last_table_done).total_seconds():.1f}s after the last table ended (database "
        f"clock), {first['paid'] - first['worker ready']:.1f}s after the restarted worker was ready; killed again "
        f"right after the end: {times_again}; nothing paid twice; prizes {sorted(prizes.values(), reverse=True)} "
        f"of a pool of {FEE * len(users)}"
    )
