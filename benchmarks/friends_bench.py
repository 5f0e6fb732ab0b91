"""How fast «Amigos» and the lobby render for a person following 500 people, with 100,000 accounts and
5,000 of them online, in PostgreSQL (issue 44).

Usage (a dedicated database: everything in it is replaced)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/pocha_bench_friends \\
        .venv/bin/python benchmarks/friends_bench.py --accounts 100000 --online 5000 --following 500

It creates the database if missing, migrates it and fills it, or reuses what a previous run left when the
sizes are the same (``--rebuild`` to make it again):

- ``--accounts`` users (``bulk_create``; unusable passwords), each with what the site gives a new account
  (``accounts.signals.welcome_new_user``: a chip account and its welcome grant, one transaction and two
  entries) and, for most of them, the ``Profile`` the site writes at their first «Jugar ya» (who may invite
  them: mostly everyone, some friends only, a few nobody);
- a history of finished games (``--history`` tables of 3 to 6 seats, people and bots; a few play a lot);
- follows and blocks between everyone (``--site-follows``, ``--site-blocks``);
- the live part: ``--online`` people online, each with a socket of a live server process (a
  ``ServerProcess`` row the benchmark keeps beating, as ``games.live.presence.beat`` does): most at a
  table — public and private tables made and started through ``games.table.actions`` (their ``Watcher``
  rows where they are seated, a few seated people with no socket left), a few waiting tables — some
  watching a public table, the rest with a page of the site open (``PageSocket``), some with two tabs;
- the viewer: a person who follows ``--following`` people, half of whom follow back (friends), some of them
  online and some at tables (public ones, which may be watched, and private ones), a few blocked rows each
  way, more followers they do not follow back, and two pending invitations from friends' waiting private
  tables.

Then it times, signed in as the viewer through Django's test client (``force_login``), DEBUG off and the
static files collected as in production: «Amigos» (``games:friends``) once that page exists, and the lobby
(``/``), ``--runs`` times each after a warm-up, interleaved, and prints p50/p95/p99/max milliseconds, the
queries and bytes of a page.  Until the «Amigos» page exists it times what it will be built of instead:
``games.read.friends.friends_html(viewer, "es")``, ``games.read.online.states(viewer, ids)`` over the people
the viewer follows and who follow them, and ``games.read.online.counts()``.  ``--explain`` prints each
query of one page with its time and PostgreSQL's plan (``EXPLAIN (ANALYZE, BUFFERS)``) of the slowest.

A benchmark prints figures; nothing here fails on a slow machine.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

META_TABLE = "friends_bench_meta"
#: Bumped when the data made here changes, so that an older fill is made again.
FILL_VERSION = 1
#: The live server process whose sockets the online people hold (a fixed id: the same row every run).
PROCESS_ID = uuid.UUID("44444444-4444-4444-8444-000000000044")
VIEWER = "amiga_del_banco"
BATCH = 5_000
SIZES = (3, 4, 5, 6)
SIZE_WEIGHTS = (15, 60, 15, 10)
#: Share of a live table's people with no socket open (they dropped; the seat waits for them).
DROPPED = 0.08
SPECTATORS = 0.06
SECOND_TAB = 0.15
WAITING_TABLES = 40
PRIVATE_SHARE = 0.2


def log(message: str) -> None:
    print(message, flush=True)


# -- the database ----------------------------------------------------------------------------


def ensure_database(url: str, force: bool) -> None:
    import dj_database_url
    import psycopg

    config = dj_database_url.parse(url)
    name = config["NAME"]
    if "bench" not in name and not force:
        sys.exit(
            f"refusing to fill database {name!r}: its name should say 'bench' (or pass --force); "
            "everything in it is replaced"
        )
    args = {
        k: v
        for k, v in {
            "host": config.get("HOST"),
            "port": config.get("PORT"),
            "user": config.get("USER"),
            "password": config.get("PASSWORD"),
        }.items()
        if v
    }
    with psycopg.connect(dbname="postgres", autocommit=True, **args) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')
            log(f"created database {name}")


@dataclass(frozen=True)
class Sizes:
    accounts: int
    online: int
    following: int
    history: int
    site_follows: int
    site_blocks: int

    def key(self) -> str:
        return (
            f"v{FILL_VERSION} accounts={self.accounts} online={self.online} following={self.following} "
            f"history={self.history} follows={self.site_follows} blocks={self.site_blocks}"
        )


def already_filled(sizes: Sizes) -> bool:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s)", [META_TABLE])
        if cursor.fetchone()[0] is None:
            return False
        cursor.execute(f"SELECT made FROM {META_TABLE}")
        row = cursor.fetchone()
    return row is not None and row[0] == sizes.key()


# -- the data --------------------------------------------------------------------------------


@dataclass
class Made:
    viewer_id: int = 0
    following: list[int] = field(default_factory=list)
    friends: set[int] = field(default_factory=set)
    counts: dict[str, int] = field(default_factory=dict)


def batched(items: list[Any], size: int = BATCH) -> Any:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def fill(sizes: Sizes, seed: int) -> None:
    """Replace everything with the data described in the module's docstring."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction
    from django.utils import timezone

    from accounts.models import Account, Block, Follow, Profile, Transaction
    from accounts.models import Entry as LedgerEntry
    from games.live import push, timers
    from games.models import Invitation, PageSocket, Seat, ServerProcess, Table, Watcher
    from games.table import actions

    User = get_user_model()
    rng = random.Random(seed)
    started = time.perf_counter()
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {META_TABLE}")
        tables = [
            User._meta.db_table,
            Account._meta.db_table,
            Transaction._meta.db_table,
            LedgerEntry._meta.db_table,
            Table._meta.db_table,
            ServerProcess._meta.db_table,
            "django_session",
        ]
        cursor.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")

    # People, as the site makes them: the account, its welcome grant, and (at their first «Jugar ya») a
    # profile.  bulk_create sends no post_save, so the grant is written here as ``ledger.grant_welcome`` does.
    log(f"writing {sizes.accounts:,} accounts, their welcome grants and profiles…")
    joined = now - timedelta(days=200)
    users = [
        User(
            username=f"jugador{n:06d}",
            password="!" + "%040x" % rng.getrandbits(160),
            date_joined=joined + timedelta(seconds=n * 150),
        )
        for n in range(1, sizes.accounts)
    ]
    users.append(User(username=VIEWER, password="!" + "%040x" % rng.getrandbits(160), date_joined=joined))
    for chunk in batched(users):
        User.objects.bulk_create(chunk)
    ids = [u.pk for u in users]
    viewer_id = ids[-1]
    welcome = 5_000
    with transaction.atomic():
        grants = Account.objects.create(kind=Account.Kind.GRANTS, balance=-welcome * len(ids))
        Account.objects.create(kind=Account.Kind.HOUSE)
        accounts = [Account(kind=Account.Kind.USER, user_id=uid, balance=welcome) for uid in ids]
        for chunk in batched(accounts):
            Account.objects.bulk_create(chunk)
        txns = [Transaction(kind=Transaction.Kind.WELCOME, key=f"welcome:{uid}") for uid in ids]
        for chunk in batched(txns):
            Transaction.objects.bulk_create(chunk)
        grants_left = 0
        entries = []
        for txn, account in zip(txns, accounts, strict=True):
            grants_left -= welcome
            entries.append(
                LedgerEntry(transaction_id=txn.pk, account_id=grants.pk, amount=-welcome, balance_after=grants_left)
            )
            entries.append(
                LedgerEntry(transaction_id=txn.pk, account_id=account.pk, amount=welcome, balance_after=welcome)
            )
        for chunk in batched(entries):
            LedgerEntry.objects.bulk_create(chunk)
    choices = [Profile.Invites.EVERYONE] * 16 + [Profile.Invites.FRIENDS] * 3 + [Profile.Invites.NOBODY]
    profiles = [
        Profile(user_id=uid, quick_size=rng.choice(SIZES), invites_from=rng.choice(choices))
        for uid in ids
        if rng.random() < 0.6 or uid == viewer_id
    ]
    for chunk in batched(profiles):
        Profile.objects.bulk_create(chunk)
    log(f"  {len(ids):,} accounts, {len(entries):,} ledger entries, {len(profiles):,} profiles")

    # Finished games: a few people play a lot, most a little.
    log(f"writing {sizes.history:,} finished games…")
    seats_written = 0
    for start in range(0, sizes.history, BATCH):
        count = min(BATCH, sizes.history - start)
        games = []
        people: list[list[int | None]] = []
        for _ in range(count):
            size = rng.choices(SIZES, SIZE_WEIGHTS)[0]
            humans = rng.randint(1, size)
            chosen: list[int] = []
            while len(chosen) < humans:
                uid = ids[int(len(ids) * rng.random() ** 2)]
                if uid not in chosen:
                    chosen.append(uid)
            finished = now - timedelta(minutes=rng.randint(60, 60 * 24 * 180))
            private = rng.random() < 0.05
            games.append(
                Table(
                    size=size,
                    status=Table.Status.FINISHED,
                    is_public=not private,
                    is_quick=not private,
                    created_by_id=chosen[0],
                    started_at=finished - timedelta(minutes=30),
                    finished_at=finished,
                    seq=rng.randint(300, 900),
                    phase="game_over",
                    round_number=19,
                    seed=rng.getrandbits(62),
                    first_dealer=rng.randrange(size),
                )
            )
            people.append(chosen + [None] * (size - humans))
        Table.objects.bulk_create(games)
        seats = []
        for game, seated in zip(games, people, strict=True):
            rng.shuffle(seated)
            for position, uid in enumerate(seated):
                seats.append(
                    Seat(
                        table_id=game.pk,
                        position=position,
                        user_id=uid,
                        is_bot=uid is None,
                        name=f"jugador{uid:06d}" if uid else f"Bot {position}",
                        place=position + 1,
                        final_total=rng.randint(-60, 200),
                    )
                )
        Seat.objects.bulk_create(seats)
        seats_written += len(seats)
    log(f"  {sizes.history:,} games, {seats_written:,} seats")

    # Who is online.  The viewer's people are chosen first, so that some of them are online and at tables.
    others = [uid for uid in ids if uid != viewer_id]
    rng.shuffle(others)
    following = others[: sizes.following]
    pool = others[sizes.following :]
    at_table_followed = set(following[: sizes.following // 8])  # 12.5 % at a table
    online_followed = set(following[sizes.following // 8 : sizes.following // 4])  # 12.5 % elsewhere online
    online_target = sizes.online
    at_table_share = 0.45
    at_table_people = (
        list(at_table_followed) + pool[: max(0, int(online_target * at_table_share) - len(at_table_followed))]
    )
    pool = pool[len(at_table_people) - len(at_table_followed) :]
    page_people = list(online_followed) + pool[: max(0, online_target - len(at_table_people) - len(online_followed))]
    pool = pool[len(page_people) - len(online_followed) :]
    friends = set(following[::2])  # who follows the viewer back
    offline_seated = pool[: int(len(at_table_people) * DROPPED)]
    pool = pool[len(offline_seated) :]

    # Tables in play, through the server's own actions (their pushes and timers skipped: nobody listens).
    log(f"making the live tables of {len(at_table_people):,} people online at them…")
    by_id = {u.pk: u for u in users}
    arm, table_changed = timers.arm, push.table_changed
    timers.arm = lambda *args, **kwargs: None  # type: ignore[assignment]
    push.table_changed = lambda *args, **kwargs: None  # type: ignore[assignment]
    seated_at: dict[int, int] = {}  # user -> table, for the people with a socket there
    watchable: list[int] = []
    live_tables = 0
    try:
        queue = list(at_table_people)
        rng.shuffle(queue)
        dropped = list(offline_seated)
        waiting_left = WAITING_TABLES
        while queue:
            size = rng.choices(SIZES, SIZE_WEIGHTS)[0]
            private = rng.random() < PRIVATE_SHARE
            waiting = waiting_left > 0 and rng.random() < 0.1
            group_size = rng.randint(1, size - 1) if waiting else size
            group = queue[:group_size]
            queue = queue[group_size:]
            present = list(group)
            if not waiting and len(group) == size and dropped and rng.random() < DROPPED * size:
                queue.append(group[-1])  # their place goes to someone seated but gone (no socket)
                group[-1] = dropped.pop()
                present = group[:-1]
            host = by_id[group[0]]
            table = actions.do_create_table(host, size, public=not private, quick=not private)
            for uid in group[1:]:
                actions.do_take_seat(table.pk, by_id[uid], code=table.code)
            if private and not waiting and len(group) == size:
                actions.do_start(table.pk, host)  # a full public table started with its last seat
            if waiting:
                waiting_left -= 1
            live_tables += 1
            for uid in present:
                seated_at[uid] = table.pk
            if not private and not waiting:
                watchable.append(table.pk)
        # Two friends, offline until now, host waiting private tables and invite the viewer.
        hosts = [uid for uid in following[sizes.following // 4 :] if uid in friends][:2]
        invited_tables = []
        for uid in hosts:
            table = actions.do_create_table(by_id[uid], 4, public=False)
            invited_tables.append((table.pk, uid))
            seated_at[uid] = table.pk
            live_tables += 1
    finally:
        timers.arm, push.table_changed = arm, table_changed  # type: ignore[assignment]
    playing = Table.objects.filter(status=Table.Status.PLAYING).count()
    log(f"  {live_tables:,} live tables ({playing:,} playing), {len(seated_at):,} people at them")

    # Their sockets, on one live process.
    process = ServerProcess.objects.create(id=PROCESS_ID, name="friends-bench", seen_at=timezone.now())
    watcher_rows = []
    socket_n = 0

    def channel() -> str:
        nonlocal socket_n
        socket_n += 1
        return f"specific.bench!friends{socket_n:07d}"

    for uid, table_id in seated_at.items():
        for _ in range(2 if rng.random() < SECOND_TAB else 1):
            watcher_rows.append(Watcher(table_id=table_id, user_id=uid, channel_name=channel(), process=process))
    page_rows = []
    spectators = 0
    for uid in page_people:
        if watchable and rng.random() < SPECTATORS:
            watcher_rows.append(
                Watcher(table_id=rng.choice(watchable), user_id=uid, channel_name=channel(), process=process)
            )
            spectators += 1
        else:
            for _ in range(2 if rng.random() < SECOND_TAB else 1):
                page_rows.append(PageSocket(user_id=uid, channel_name=channel(), process=process))
    for uid in seated_at:
        if rng.random() < 0.2:  # the lobby open in another tab
            page_rows.append(PageSocket(user_id=uid, channel_name=channel(), process=process))
    for chunk in batched(watcher_rows):
        Watcher.objects.bulk_create(chunk)
    for chunk in batched(page_rows):
        PageSocket.objects.bulk_create(chunk)
    with connection.cursor() as cursor:  # each seat's count of open sockets, as presence keeps it
        cursor.execute(
            """
            UPDATE games_seat s SET sockets = w.n, disconnected_at = NULL
            FROM (SELECT table_id, user_id, count(*) AS n FROM games_watcher GROUP BY table_id, user_id) w
            WHERE s.table_id = w.table_id AND s.user_id = w.user_id
            """
        )
        cursor.execute(
            "UPDATE games_seat s SET disconnected_at = %s FROM games_table t "
            "WHERE t.id = s.table_id AND t.status IN ('waiting', 'playing') AND s.sockets = 0 AND NOT s.is_bot",
            [now - timedelta(seconds=20)],
        )
    log(f"  {len(watcher_rows):,} table sockets ({spectators:,} spectators), {len(page_rows):,} page sockets")

    # The viewer's follows, blocks and invitations, then everyone else's.
    log("writing the follows and blocks…")
    follows = {(viewer_id, uid) for uid in following}
    follows.update((uid, viewer_id) for uid in friends)
    fans = pool[:200]  # follow the viewer, not followed back
    pool = pool[200:]
    follows.update((uid, viewer_id) for uid in fans)
    blocks = {(viewer_id, uid) for uid in pool[:3] + list(page_people[-2:])}
    blocks.update((uid, viewer_id) for uid in pool[3:6] + list(page_people[-4:-2]))
    blocked_people = {a if b == viewer_id else b for a, b in blocks}
    while len(follows) < sizes.following + len(friends) + len(fans) + sizes.site_follows:
        a = ids[int(len(ids) * rng.random())]
        b = ids[int(len(ids) * rng.random() ** 2)]  # some are followed by many
        if a != b and viewer_id not in (a, b):
            follows.add((a, b))
    while len(blocks) < sizes.site_blocks + len(blocked_people):
        a, b = rng.choice(ids), rng.choice(ids)
        if a != b and viewer_id not in (a, b) and (a, b) not in follows and (b, a) not in follows:
            blocks.add((a, b))
    follow_rows = [Follow(follower_id=a, followee_id=b) for a, b in follows]
    for chunk in batched(follow_rows):
        Follow.objects.bulk_create(chunk)
    for chunk in batched([Block(blocker_id=a, blocked_id=b) for a, b in blocks]):
        Block.objects.bulk_create(chunk)
    Invitation.objects.bulk_create(
        [Invitation(table_id=table_id, sender_id=host, recipient_id=viewer_id) for table_id, host in invited_tables]
    )
    log(f"  {len(follow_rows):,} follows, {len(blocks):,} blocks")

    log("vacuuming and analysing…")
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {META_TABLE} (made text, made_at timestamptz)")
        cursor.execute(f"INSERT INTO {META_TABLE} VALUES (%s, %s)", [sizes.key(), now])
    import psycopg
    from django.conf import settings

    config = settings.DATABASES["default"]
    args = {
        k: v
        for k, v in {
            "host": config.get("HOST"),
            "port": config.get("PORT"),
            "user": config.get("USER"),
            "password": config.get("PASSWORD"),
        }.items()
        if v
    }
    with psycopg.connect(dbname=config["NAME"], autocommit=True, **args) as conn:
        conn.execute("VACUUM (ANALYZE)")
    log(f"made in {time.perf_counter() - started:.0f} s")


# -- measuring -------------------------------------------------------------------------------


def beat() -> None:
    """The process row stays alive, as ``games.live.presence.beat`` keeps a server's."""
    from django.utils import timezone

    from games.models import ServerProcess

    ServerProcess.objects.filter(pk=PROCESS_ID).update(seen_at=timezone.now())


def viewer_and_people() -> tuple[Any, set[int], set[int]]:
    from django.contrib.auth import get_user_model

    from accounts import social

    viewer = get_user_model().objects.get(username=VIEWER)
    return viewer, social.following_ids(viewer.pk), social.follower_ids(viewer.pk)


def describe_data() -> None:
    from django.db import connection

    from games.read import online

    viewer, following, followers = viewer_and_people()
    from accounts import social

    friends = social.friend_ids(viewer.pk)
    beat()
    seen = online.states(viewer.pk, following | followers)
    by_state: dict[str, int] = {}
    for uid in following:
        state = seen.get(uid, online.Presence()).state
        by_state[state] = by_state.get(state, 0) + 1
    watch = sum(1 for uid in following if seen.get(uid, online.Presence()).watchable)
    counts = online.counts()
    log("\ndata:")
    with connection.cursor() as cursor:
        for label, table in [
            ("accounts", "auth_user"),
            ("profiles", "accounts_profile"),
            ("ledger entries", "accounts_entry"),
            ("tables", "games_table"),
            ("seats", "games_seat"),
            ("follows", "accounts_follow"),
            ("blocks", "accounts_block"),
            ("table sockets", "games_watcher"),
            ("page sockets", "games_pagesocket"),
            ("invitations", "games_invitation"),
        ]:
            cursor.execute(f"SELECT count(*), pg_size_pretty(pg_total_relation_size('{table}')) FROM {table}")
            count, size = cursor.fetchone()
            log(f"  {label:16} {count:>10,} rows, {size}")
        cursor.execute("SELECT status, count(*) FROM games_table WHERE status IN ('waiting', 'playing') GROUP BY 1")
        live = dict(cursor.fetchall())
    log(f"  live tables      waiting {live.get('waiting', 0):,}, playing {live.get('playing', 0):,}")
    log(f"  online now       {counts.online:,} people, {counts.at_tables:,} of them at tables (online.counts)")
    log(
        f"  the viewer       {viewer.username} follows {len(following)}, {len(friends)} friends, "
        f"{len(followers)} followers; of those followed: {by_state.get('table', 0)} at a table "
        f"({watch} watchable), {by_state.get('online', 0)} online, {len(following) - len(seen.keys() & following)} "
        f"offline; blocked either way: {len(social.blocked_ids(viewer.pk))}"
    )


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values):6.1f}  p95 {percentile(values, 0.95):6.1f}  "
        f"p99 {percentile(values, 0.99):6.1f}  max {max(values):6.1f} ms"
    )


@dataclass
class Measured:
    label: str
    run: Callable[[], Any]
    times: list[float] = field(default_factory=list)
    queries: int = 0
    query_ms: float = 0.0
    size: int = 0
    note: str = ""


def friends_url() -> str | None:
    from django.urls import NoReverseMatch, reverse

    try:
        return reverse("games:friends")
    except NoReverseMatch:
        return None


def measurements(client: Any, viewer_id: int) -> list[Measured]:
    from accounts import social
    from games.read import friends, online

    def get(url: str) -> Callable[[], bytes]:
        def page() -> bytes:
            response = client.get(url)
            if response.status_code != 200:
                raise SystemExit(f"GET {url}: {response.status_code}")
            return response.content

        return page

    url = friends_url()
    found: list[Measured] = []
    if url is not None:
        found.append(Measured(f"«Amigos» GET {url}", get(url)))
    else:

        def stand_in() -> str:
            people = social.following_ids(viewer_id) | social.follower_ids(viewer_id)
            social.friend_ids(viewer_id)
            online.states(viewer_id, people)
            online.counts()
            return friends.friends_html(viewer_id, "es")

        found.append(
            Measured(
                "«Amigos» stand-in",
                stand_in,
                note="(no games:friends yet: following, followers, friends, states, counts and friends_html)",
            )
        )
    found.append(Measured("lobby GET /", get("/")))
    people = social.following_ids(viewer_id) | social.follower_ids(viewer_id)
    found.append(Measured("  friends_html", lambda: friends.friends_html(viewer_id, "es")))
    found.append(Measured(f"  states (of {len(people)})", lambda: online.states(viewer_id, people)))
    found.append(Measured("  counts", online.counts))
    return found


def measure(runs: int, warmup: int, explain: bool, profile: bool) -> None:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    viewer, _following, _followers = viewer_and_people()
    client = Client()
    client.force_login(viewer)
    items = measurements(client, viewer.pk)
    for item in items:
        for _ in range(warmup):  # templates compiled, connection open, pages in PostgreSQL's cache
            beat()
            item.run()
        beat()
        with CaptureQueriesContext(connection) as captured:
            out = item.run()
        item.queries = len(captured.captured_queries)
        item.query_ms = sum(float(q["time"]) for q in captured.captured_queries) * 1000
        item.size = len(out) if isinstance(out, (bytes, str)) else 0
        if explain:
            explain_queries(item.label, captured.captured_queries)
        if profile:
            profile_one(item)
    last_beat = time.monotonic()
    for _ in range(runs):
        for item in items:
            if time.monotonic() - last_beat > 1.0:
                beat()
                last_beat = time.monotonic()
            begin = time.perf_counter()
            item.run()
            item.times.append((time.perf_counter() - begin) * 1000)
    log(f"\n{runs} renders each after {warmup} to warm up, interleaved, signed in as {viewer.username}:")
    for item in items:
        size = f", {item.size / 1024:.1f} KB" if item.size else ""
        log(
            f"  {item.label:28} {summary(item.times)}  {item.queries} queries ({item.query_ms:.1f} ms of SQL "
            f"in one render){size}"
        )
        if item.note:
            log(f"  {'':28} {item.note}")
    page = items[0]
    verdict = "met" if percentile(page.times, 0.95) <= 30 else "NOT met"
    log(f"\ngoal «Amigos» p95 <= 30 ms: {verdict} ({percentile(page.times, 0.95):.1f} ms, {page.label})")


def explain_queries(label: str, queries: list[dict[str, Any]]) -> None:
    from django.db import connection

    log(f"\n== {label}: {len(queries)} queries")
    for number, query in enumerate(queries, 1):
        log(f"  {number:2}. {float(query['time']) * 1000:6.2f} ms  {query['sql'][:300]}")
    slowest = sorted(queries, key=lambda q: float(q["time"]), reverse=True)[:5]
    with connection.cursor() as cursor:
        for query in slowest:
            sql = query["sql"]
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
            log(f"\n  -- {float(query['time']) * 1000:.2f} ms: {sql[:200]}")
            for (line,) in cursor.fetchall():
                log(f"     {line if len(line) <= 240 else line[:237] + '...'}")


def profile_one(item: Measured) -> None:
    """cProfile of one render: the functions taking most of its time, callees included."""
    import cProfile
    import io
    import pstats

    beat()
    profiler = cProfile.Profile()
    profiler.runcall(item.run)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(30)
    log(f"\n== {item.label}: profile of one render (cumulative)")
    log("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:8000])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accounts", type=int, default=100_000)
    parser.add_argument("--online", type=int, default=5_000)
    parser.add_argument("--following", type=int, default=500, help="people the viewer follows (half follow back)")
    parser.add_argument("--history", type=int, default=150_000, help="finished games")
    parser.add_argument("--site-follows", type=int, default=400_000, help="follows between the other people")
    parser.add_argument("--site-blocks", type=int, default=10_000, help="blocks between the other people")
    parser.add_argument("--runs", type=int, default=200, help="renders of each page")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--explain", action="store_true", help="each page's queries, and the slowest ones' plans")
    parser.add_argument("--profile", action="store_true", help="where one render of each page spends its time")
    parser.add_argument("--rebuild", action="store_true", help="make the data again even if it is there")
    parser.add_argument("--force", action="store_true", help="fill a database whose name does not say 'bench'")
    args = parser.parse_args()
    if args.accounts < 2 * args.following + args.online + 1_000 or args.following < 8:
        parser.error("needs more accounts than twice the people followed plus those online, and 8 followed or more")
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit(
            "set DATABASE_URL to a PostgreSQL database of its own, "
            "e.g. postgres://postgres@127.0.0.1:5432/pocha_bench_friends"
        )
    ensure_database(url, args.force)
    static = tempfile.TemporaryDirectory(prefix="friends-bench-")
    os.environ["STATIC_ROOT"] = static.name  # DEBUG off, as in production: hashed static files
    os.environ["DEBUG"] = "false"
    os.environ.pop("REDIS_URL", None)  # in-process channel layer and cache: nothing is pushed anywhere
    os.environ.setdefault("SECRET_KEY", "friends-bench-" + "x" * 40)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pocha_site.settings")
    import django

    django.setup()
    from django.core.management import call_command

    warnings.filterwarnings("ignore", message="No directory at")
    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    sizes = Sizes(args.accounts, args.online, args.following, args.history, args.site_follows, args.site_blocks)
    if args.rebuild or not already_filled(sizes):
        fill(sizes, args.seed)
    else:
        log("reusing the data already in the database (same sizes; --rebuild to make it again)")
    describe_data()
    log(
        f"\nload average before measuring: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"({os.cpu_count()} CPUs; other work on the machine slows every figure below)"
    )
    measure(args.runs, args.warmup, args.explain, args.profile)
    log(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    static.cleanup()


if __name__ == "__main__":
    main()
