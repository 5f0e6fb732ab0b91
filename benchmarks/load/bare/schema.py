"""The bare stack's two tables (plain SQL: the load tool creates them with psycopg before starting it)."""

from __future__ import annotations

TABLE = "loadbare_table"
MOVE = "loadbare_move"

CREATE = [
    f"""CREATE TABLE IF NOT EXISTS {TABLE} (
        id bigserial PRIMARY KEY,
        seq integer NOT NULL DEFAULT 0,
        turn smallint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now()
    )""",
    f"""CREATE TABLE IF NOT EXISTS {MOVE} (
        id bigserial PRIMARY KEY,
        table_id bigint NOT NULL REFERENCES {TABLE} (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        seat smallint NOT NULL,
        action varchar(8) NOT NULL,
        value varchar(8) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (table_id, seq)
    )""",
]

#: Emptied at the start of every bare run (the same starting point each time).
RESET = f"TRUNCATE {MOVE}, {TABLE} RESTART IDENTITY"
