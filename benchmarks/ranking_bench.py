"""How fast a ranking page renders with 100,000 players and 2 million ledger entries in PostgreSQL.

Usage (a dedicated database: everything in it is replaced)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/pocha_bench \\
        .venv/bin/python benchmarks/ranking_bench.py --players 100000 --entries 2000000

It creates the database if missing, migrates it and fills it (or reuses it when a previous run left
data of the same sizes for the current week): users with unusable passwords, their chip accounts and
welcome grants, and finished "Jugar ya" tables of 3 to 6 seats (people and bots, stakes 0/100/500/2,000,
a few private tables) whose stakes, pots and payouts are the ledger's transactions and entries, plus
the per-period totals (``PeriodScore``) those games make.  Rows are written with COPY and triggers
(foreign-key checks) off while loading, then vacuumed and analysed.

Then it renders each ranking page (this week, this month, all time, last week) through Django's test
client, signed in as players outside the top 100, and prints p50/p95/max milliseconds per page and
overall.  For comparison it times the plain alternative a few times: the same top 100 aggregated at
read time from the ledger entries joined to their finished quick tables (and the seats, for games and
wins), which is what the page would cost without the kept totals.

A benchmark prints figures; nothing here fails on a slow machine.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import warnings
from collections import defaultdict
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

UTC = ZoneInfo("UTC")
STAKES = (0, 100, 500, 2000)
STAKE_WEIGHTS = (20, 45, 25, 10)
SIZES = (3, 4, 5, 6)
SIZE_WEIGHTS = (20, 50, 20, 10)
#: How many people sit at a quick table (bots fill the rest).
PEOPLE = (1, 2, 3, 4, 5, 6)
PEOPLE_WEIGHTS = (40, 30, 17, 8, 4, 1)
PRIVATE_SHARE = 0.05
#: Weeks of history before this one; this week holds CURRENT_SHARE of the games (a busy week, whatever
#: day the benchmark runs on, so "this week" is never a trivially small page).
HISTORY_WEEKS = 12
CURRENT_SHARE = 0.10
WELCOME = 5_000
TOPUP, TOPUP_BELOW = 500, 100
META_TABLE = "ranking_bench_meta"


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
    with psycopg.connect(**connect_args(config, dbname="postgres"), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')
            log(f"created database {name}")


def connect_args(config: dict[str, Any], dbname: str | None = None) -> dict[str, Any]:
    args = {
        "dbname": dbname or config["NAME"],
        "user": config.get("USER") or None,
        "password": config.get("PASSWORD") or None,
        "host": config.get("HOST") or None,
        "port": config.get("PORT") or None,
    }
    return {k: v for k, v in args.items() if v is not None}


def copy_columns(model: Any, given: list[str]) -> tuple[list[str], tuple[Any, ...]]:
    """The columns a COPY into ``model``'s table writes: ``given`` (including ``id``), then every other
    column with its model default, so a field added later does not break the benchmark."""
    extra_columns, extra_values = [], []
    for field in model._meta.concrete_fields:
        if field.column in given or field.primary_key:
            continue
        if field.has_default():
            value = field.get_default()
        elif field.null:
            value = None
        else:
            raise SystemExit(f"{model.__name__}.{field.name} has no default: teach the benchmark about it")
        extra_columns.append(field.column)
        extra_values.append(value)
    return given + extra_columns, tuple(extra_values)


class Loader:
    """One COPY per table, each on its own connection so they stream side by side."""

    def __init__(self, config: dict[str, Any]) -> None:
        import psycopg

        self.psycopg = psycopg
        self.config = config
        self.open: dict[str, tuple[Any, Any, Any, tuple[Any, ...]]] = {}
        self.counts: dict[str, int] = defaultdict(int)

    def start(self, model: Any, given: list[str]) -> None:
        table = model._meta.db_table
        columns, extra = copy_columns(model, given)
        conn = self.psycopg.connect(**connect_args(self.config))
        conn.execute("SET session_replication_role = replica")  # no FK triggers while loading
        conn.execute("SET synchronous_commit = off")
        cursor = conn.cursor()
        quoted = ", ".join(f'"{column}"' for column in columns)
        copy_cm = cursor.copy(f'COPY "{table}" ({quoted}) FROM STDIN')
        copy = copy_cm.__enter__()
        self.open[table] = (conn, copy_cm, copy, extra)

    def row(self, model: Any, values: tuple[Any, ...]) -> None:
        table = model._meta.db_table
        _conn, _cm, copy, extra = self.open[table]
        copy.write_row(values + extra if extra else values)
        self.counts[table] += 1

    def finish(self, model: Any) -> None:
        conn, copy_cm, _copy, _extra = self.open.pop(model._meta.db_table)
        copy_cm.__exit__(None, None, None)
        conn.commit()
        conn.close()

    def finish_all(self) -> None:
        from django.apps import apps

        by_table = {m._meta.db_table: m for m in apps.get_models()}
        for table in list(self.open):
            self.finish(by_table[table])


# -- the data --------------------------------------------------------------------------------


def fill(players: int, entries: int, now: datetime, seed: int) -> dict[str, Any]:
    """Replace everything with ``players`` users and a ledger of ``entries`` rows; return what was made."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection

    from accounts.models import Account, Entry, Transaction
    from games.models import Seat, Table
    from leaderboard import scores
    from leaderboard.models import PeriodScore

    User = get_user_model()
    rng = random.Random(seed)
    config = settings.DATABASES["default"]
    started = time.perf_counter()
    with connection.cursor() as cursor:
        tables = [
            User._meta.db_table,
            Account._meta.db_table,
            Transaction._meta.db_table,
            Entry._meta.db_table,
            Table._meta.db_table,
            Seat._meta.db_table,
            PeriodScore._meta.db_table,
            "django_session",
        ]
        cursor.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
        cursor.execute(f"DROP TABLE IF EXISTS {META_TABLE}")

    this_week = scores.madrid_midnight(scores.period_start(scores.PERIODS[0], now))
    history_start = this_week - timedelta(weeks=HISTORY_WEEKS)
    joined = history_start - timedelta(days=30)

    def moment(progress: float) -> datetime:
        """When the game at ``progress`` (0..1 through the ledger) finished: the history's weeks evenly,
        then this week up to now."""
        if progress < 1 - CURRENT_SHARE:
            return history_start + (this_week - history_start) * (progress / (1 - CURRENT_SHARE))
        return this_week + (now - this_week) * ((progress - (1 - CURRENT_SHARE)) / CURRENT_SHARE)

    load = Loader(config)
    load.start(
        User,
        [
            "id",
            "password",
            "username",
            "is_superuser",
            "is_staff",
            "is_active",
            "date_joined",
            "first_name",
            "last_name",
            "email",
            "last_login",
        ],
    )
    load.start(Transaction, ["id", "kind", "key", "table_id", "note", "created_at"])
    load.start(Entry, ["id", "transaction_id", "account_id", "amount", "balance_after"])
    load.start(
        Table,
        [
            "id",
            "size",
            "status",
            "is_public",
            "is_quick",
            "created_by_id",
            "created_at",
            "started_at",
            "finished_at",
            "seq",
            "stake",
            "phase",
            "round_number",
            "seed",
            "first_dealer",
            "bots_allowed",
        ],
    )
    load.start(
        Seat,
        [
            "id",
            "table_id",
            "position",
            "user_id",
            "is_bot",
            "name",
            "joined_at",
            "winnings",
            "place",
            "final_total",
            "rounds_bid",
            "exact_bids",
            "left",
            "away",
        ],
    )

    grants_id, house_id = 1, 2
    account_of = lambda user_id: user_id + 2  # noqa: E731 - user accounts follow the two shared ones
    balances: dict[int, int] = defaultdict(int)
    pots: list[tuple[int, int]] = []  # (account id, table id)
    txn_id = entry_id = 0

    def post(kind: str, key: str, legs: dict[int, int], table_id: int | None, when: datetime) -> None:
        nonlocal txn_id, entry_id
        txn_id += 1
        load.row(Transaction, (txn_id, kind, key, table_id, "", when))
        for account_id in sorted(legs):
            amount = legs[account_id]
            balances[account_id] += amount
            entry_id += 1
            load.row(Entry, (entry_id, txn_id, account_id, amount, balances[account_id]))

    log(f"writing {players:,} players and their welcome grants…")
    for user_id in range(1, players + 1):
        load.row(
            User,
            (
                user_id,
                "!" + "%040x" % rng.getrandbits(160),
                f"jugador{user_id:06d}",
                False,
                False,
                True,
                joined,
                "",
                "",
                "",
                None,
            ),
        )
        post("welcome", f"welcome:{user_id}", {grants_id: -WELCOME, account_of(user_id): WELCOME}, None, joined)
    load.finish(User)

    log(f"writing finished games until the ledger holds {entries:,} entries…")
    welcome_entries = entry_id
    totals: dict[tuple[int, str, date], list[Any]] = {}
    topped_up: dict[int, date] = {}
    table_id = seat_id = 0
    account_id = players + 2
    people_total = games_total = 0
    periods = scores.PERIODS
    while entry_id < entries:
        progress = (entry_id - welcome_entries) / max(1, entries - welcome_entries)
        finished = moment(min(progress, 1.0))
        started_at = finished - timedelta(minutes=rng.randint(15, 40))
        size = rng.choices(SIZES, SIZE_WEIGHTS)[0]
        count = min(size, rng.choices(PEOPLE, PEOPLE_WEIGHTS)[0])
        people: list[int] = []
        while len(people) < count:  # a few players play a lot, most a little
            user_id = 1 + int(players * rng.random() ** 2)
            if user_id not in people:
                people.append(user_id)
        private = rng.random() < PRIVATE_SHARE
        day = finished.astimezone(scores.MADRID).date()
        for user_id in people:  # the daily top-up, for who is nearly out
            if balances[account_of(user_id)] < TOPUP_BELOW and topped_up.get(user_id) != day:
                topped_up[user_id] = day
                post(
                    "topup",
                    f"topup:{user_id}:{day.isoformat()}",
                    {grants_id: -TOPUP, account_of(user_id): TOPUP},
                    None,
                    started_at,
                )
        stake = rng.choices(STAKES, STAKE_WEIGHTS)[0]
        poorest = min(balances[account_of(u)] for u in people)
        stake = max(s for s in STAKES if s <= stake and s <= poorest)

        table_id += 1
        seats = []
        for position in range(size):
            seat_id += 1
            seats.append((seat_id, people[position] if position < count else None))
        totals_by_seat = [5 * rng.randint(-12, 40) for _ in range(size)]
        best = max(totals_by_seat)
        winners = [p for p, t in enumerate(totals_by_seat) if t == best]
        places = [1 + sum(1 for other in totals_by_seat if other > mine) for mine in totals_by_seat]
        shares: dict[int, int] = {}
        if stake:
            account_id += 1
            pot = account_id
            pots.append((pot, table_id))
            for sid, user_id in seats:
                payer = account_of(user_id) if user_id else house_id
                post("stake", f"stake:seat:{sid}", {payer: -stake, pot: stake}, table_id, started_at)
            share, left_over = divmod(stake * size, len(winners))
            shares = {p: share + (1 if i < left_over else 0) for i, p in enumerate(winners)}
            legs: dict[int, int] = defaultdict(int)
            legs[pot] = -stake * size
            for position, amount in shares.items():
                user_id = seats[position][1]
                legs[account_of(user_id) if user_id else house_id] += amount
            post("payout", f"payout:table:{table_id}", dict(legs), table_id, finished)
        load.row(
            Table,
            (
                table_id,
                size,
                "finished",
                not private,
                not private,
                people[0],
                started_at - timedelta(seconds=rng.randint(0, 20)),
                started_at,
                finished,
                rng.randint(300, 900),
                stake,
                "game_over",
                19,
                rng.getrandbits(62),
                rng.randrange(size),
                True,
            ),
        )
        for position, (sid, user_id) in enumerate(seats):
            name = f"jugador{user_id:06d}" if user_id else f"Bot {position}"
            load.row(
                Seat,
                (
                    sid,
                    table_id,
                    position,
                    user_id,
                    user_id is None,
                    name,
                    started_at,
                    shares.get(position, 0),
                    places[position],
                    totals_by_seat[position],
                    rng.randint(10, 19),
                    rng.randint(2, 12),
                    False,
                    False,
                ),
            )
        games_total += 1
        if private:
            continue
        for position, (_sid, user_id) in enumerate(seats):
            if user_id is None:
                continue
            people_total += 1
            net = shares.get(position, 0) - stake
            for period in periods:
                key = (user_id, period, scores.period_start(period, finished))
                row = totals.get(key)
                if row is None:
                    row = totals[key] = [0, 0, 0, finished]
                row[1] += 1
                row[2] += 1 if places[position] == 1 else 0
                if net:
                    row[0] += net
                    row[3] = finished
    load.finish_all()

    log(f"writing {account_id:,} accounts and {len(totals):,} period totals…")
    load.start(Account, ["id", "kind", "user_id", "table_id", "balance"])
    load.row(Account, (grants_id, "grants", None, None, balances[grants_id]))
    load.row(Account, (house_id, "house", None, None, balances[house_id]))
    for user_id in range(1, players + 1):
        load.row(Account, (account_of(user_id), "user", user_id, None, balances[account_of(user_id)]))
    for pot, table in pots:
        load.row(Account, (pot, "pot", None, table, balances[pot]))
    load.finish(Account)
    load.start(PeriodScore, ["id", "user_id", "period", "start", "net", "games", "wins", "reached_at"])
    for score_id, ((user_id, period, start), (net, games, wins, reached)) in enumerate(sorted(totals.items()), 1):
        load.row(PeriodScore, (score_id, user_id, period, start, net, games, wins, reached))
    load.finish(PeriodScore)

    log("resetting sequences, vacuuming and analysing…")
    import psycopg

    with psycopg.connect(**connect_args(config), autocommit=True) as conn:
        for model in (User, Account, Transaction, Entry, Table, Seat, PeriodScore):
            table = model._meta.db_table
            conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM \"{table}\"))")
        conn.execute("VACUUM (ANALYZE)")
        conn.execute(f"CREATE TABLE {META_TABLE} (players int, entries int, week date, made_at timestamptz)")
        conn.execute(
            f"INSERT INTO {META_TABLE} VALUES (%s, %s, %s, %s)",
            [players, entries, scores.period_start(periods[0], now), now],
        )
    made = {
        "games": games_total,
        "people seated in counted games": people_total,
        "seconds": time.perf_counter() - started,
    }
    log(
        f"made in {made['seconds']:.0f} s: {games_total:,} tables, {seat_id:,} seats, {txn_id:,} transactions, "
        f"{entry_id:,} entries"
    )
    return made


def already_filled(players: int, entries: int, now: datetime) -> bool:
    from django.db import connection

    from leaderboard import scores

    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s)", [META_TABLE])
        if cursor.fetchone()[0] is None:
            return False
        cursor.execute(f"SELECT players, entries, week FROM {META_TABLE}")
        row = cursor.fetchone()
    return row == (players, entries, scores.period_start(scores.PERIODS[0], now))


# -- measuring -------------------------------------------------------------------------------


def sizes() -> list[tuple[str, str]]:
    from django.db import connection

    with connection.cursor() as cursor:
        out = []
        for label, table in [
            ("players", "auth_user"),
            ("chip accounts", "accounts_account"),
            ("ledger transactions", "accounts_transaction"),
            ("ledger entries", "accounts_entry"),
            ("tables", "games_table"),
            ("seats", "games_seat"),
            ("period totals", "leaderboard_periodscore"),
        ]:
            cursor.execute(f"SELECT count(*), pg_size_pretty(pg_total_relation_size('{table}')) FROM {table}")
            count, size = cursor.fetchone()
            out.append((label, f"{count:,} rows, {size}"))
        return out


def pages(now: datetime) -> list[tuple[str, str, str, date]]:
    """(label, URL, period, start) for the four pages measured."""
    from leaderboard import scores

    week, month, all_time = scores.PERIODS
    this_week = scores.period_start(week, now)
    last_week = scores.previous_start(week, this_week)
    assert last_week is not None
    return [
        ("this week", "/clasificacion/", week, this_week),
        ("this month", "/clasificacion/mes/", month, scores.period_start(month, now)),
        ("all time", "/clasificacion/siempre/", all_time, scores.ALL_TIME),
        ("last week", f"/clasificacion/semana/{last_week.isoformat()}/", week, last_week),
    ]


def viewers(now: datetime) -> list[tuple[str, Any]]:
    """Two signed-in players who played in all four periods and are outside the top 100 in each: one
    from the middle of the all-time ranking, and one from near its bottom (the longest count for
    "your place" on the all-time page)."""
    from django.contrib.auth import get_user_model
    from django.db.models import Count, Q

    from leaderboard import scores
    from leaderboard.models import PeriodScore

    User = get_user_model()
    wanted = [(period, start) for _label, _url, period, start in pages(now)]
    anywhere = Q()
    for period, start in wanted:
        anywhere |= Q(period=period, start=start)
    everywhere = (
        PeriodScore.objects.filter(anywhere)
        .values("user_id")
        .annotate(n=Count("id"))
        .filter(n=len(wanted))
        .values("user_id")
    )
    ranked = list(
        PeriodScore.objects.filter(period="all", user_id__in=everywhere)
        .order_by("-net", "reached_at", "user_id")
        .values_list("user_id", flat=True)
    )

    def outside_everywhere(user_id: int) -> bool:
        rows = PeriodScore.objects.filter(anywhere, user_id=user_id)
        return all(scores.position_of(row) > 100 for row in rows)

    chosen = []
    for label, order in [("middle", ranked[len(ranked) // 2 :]), ("near the bottom", ranked[::-1])]:
        user_id = next(u for u in order if outside_everywhere(u))
        chosen.append((label, User.objects.get(pk=user_id)))
    return chosen


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values):6.1f}  p95 {percentile(values, 0.95):6.1f}  "
        f"max {max(values):6.1f} ms  (n={len(values)})"
    )


def measure_pages(now: datetime, runs: int) -> None:
    """Each signed-in player's four pages in turn, ``runs`` rounds (interleaved, so that whatever else the
    machine is doing weighs on every page alike)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from leaderboard import scores
    from leaderboard.models import PeriodScore

    everything: list[float] = []
    for who, user in viewers(now):
        client = Client()
        client.force_login(user)
        log(f"\nsigned in as {user.username} ({who} of the all-time ranking):")
        described = {}
        for label, url, period, start in pages(now):
            row = PeriodScore.objects.get(user=user, period=period, start=start)
            position = scores.position_of(row)
            players = PeriodScore.objects.filter(period=period, start=start, games__gt=0).count()
            for _ in range(3):  # warm up: templates compiled, connection open, pages in PostgreSQL's cache
                assert client.get(url).status_code == 200
            with CaptureQueriesContext(connection) as captured:
                html = client.get(url).content.decode()
            assert f"Tu puesto: <strong>{position:,}".replace(",", ".") in html and position > 100
            described[label] = (
                f"{len(captured.captured_queries)} queries, {len(html) // 1024} KB, place {position:,} of {players:,}"
            )
        times: dict[str, list[float]] = defaultdict(list)
        for _ in range(runs):
            for label, url, _period, _start in pages(now):
                begin = time.perf_counter()
                response = client.get(url)
                times[label].append((time.perf_counter() - begin) * 1000)
                assert response.status_code == 200
        for label, values in times.items():
            everything.extend(values)
            log(f"  {label:10}  {summary(values)}  {described[label]}")
    log(f"\nall pages    {summary(everything)}")


NAIVE = """
WITH counted AS (
    SELECT id FROM games_table
    WHERE status = 'finished' AND is_public AND is_quick AND finished_at >= %(since)s AND finished_at < %(until)s
), nets AS (
    SELECT a.user_id, SUM(e.amount) AS net
    FROM accounts_entry e
    JOIN accounts_transaction t ON t.id = e.transaction_id
    JOIN counted c ON c.id = t.table_id
    JOIN accounts_account a ON a.id = e.account_id AND a.kind = 'user'
    GROUP BY a.user_id
), played AS (
    SELECT s.user_id, COUNT(*) AS games, COUNT(*) FILTER (WHERE s.place = 1) AS wins
    FROM games_seat s JOIN counted c ON c.id = s.table_id
    WHERE NOT s.is_bot AND s.user_id IS NOT NULL
    GROUP BY s.user_id
)
SELECT u.username, COALESCE(n.net, 0) AS net, p.games, p.wins
FROM played p LEFT JOIN nets n ON n.user_id = p.user_id JOIN auth_user u ON u.id = p.user_id
ORDER BY net DESC, p.user_id
LIMIT 100
"""


def measure_naive(now: datetime, runs: int) -> None:
    from django.db import connection

    from leaderboard import scores

    log("\nfor comparison, the top 100 aggregated from the ledger at read time (one query, no page around it):")
    for label, _url, period, start in pages(now):
        since = scores.madrid_midnight(start) if period != "all" else datetime(2000, 1, 1, tzinfo=UTC)
        following = scores.next_start(period, start)
        until = scores.madrid_midnight(following) if following else now + timedelta(days=1)
        times = []
        with connection.cursor() as cursor:
            for _ in range(runs):
                begin = time.perf_counter()
                cursor.execute(NAIVE, {"since": since, "until": until})
                rows = cursor.fetchall()
                times.append((time.perf_counter() - begin) * 1000)
        assert len(rows) == 100
        log(f"  {label:10}  {summary(times)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--entries", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=50, help="renders of each page per signed-in player")
    parser.add_argument("--naive-runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--rebuild", action="store_true", help="make the data again even if it is there")
    parser.add_argument("--force", action="store_true", help="fill a database whose name does not say 'bench'")
    args = parser.parse_args()
    if args.players < 200 or args.entries < 2 * args.players + 10_000:
        parser.error("needs at least 200 players and room for games beyond the welcome grants")

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit(
            "set DATABASE_URL to a PostgreSQL database of its own, e.g. postgres://postgres@127.0.0.1:5432/pocha_bench"
        )
    ensure_database(url, args.force)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pocha_site.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.utils import timezone

    warnings.filterwarnings("ignore", message="No directory at")  # WhiteNoise: no collectstatic here
    settings.DEBUG = False  # as in production: no query log, no template debug information
    call_command("migrate", verbosity=0)
    now = timezone.now()
    if args.rebuild or not already_filled(args.players, args.entries, now):
        fill(args.players, args.entries, now, args.seed)
    else:
        log("reusing the data already in the database (same sizes, same week; --rebuild to make it again)")
    log("\ndata:")
    for label, value in sizes():
        log(f"  {label:22} {value}")
    log(
        f"\nload average before measuring: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"({os.cpu_count()} CPUs; other work on the machine slows every figure below)"
    )
    measure_pages(now, args.runs)
    measure_naive(now, args.naive_runs)
    log(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
