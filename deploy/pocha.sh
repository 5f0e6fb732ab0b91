#!/usr/bin/env bash
# La Pocha in services mode on this machine, under supervisord (deploy/supervisord.conf).
#
#   deploy/pocha.sh up       migrate, collectstatic, start everything, wait until the site answers
#   deploy/pocha.sh down     stop everything and wait for it
#   deploy/pocha.sh status   each process's state
#   deploy/pocha.sh logs     the last lines of every log
#
# `make up`, `make down`, `make status` and `make logs` call it.  Settings come from the environment
# (see the README's operator section); unset ones get these defaults.  Running `up` while it is up
# changes nothing (start any process that was stopped by hand, and say where the site is).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export POCHA_ROOT="$ROOT"
export POCHA_VAR="${POCHA_VAR:-$ROOT/var}"
export POCHA_BIN="${POCHA_BIN:-$ROOT/.venv/bin}"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/pocha}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
export DEBUG="${DEBUG:-false}"
export BIND="${BIND:-127.0.0.1}"
export PORT="${PORT:-8000}"
export ASGI_PROCESSES="${ASGI_PROCESSES:-2}"
export CELERY_CONCURRENCY="${CELERY_CONCURRENCY:-2}"
export PYTHONUNBUFFERED=1
export DJANGO_SETTINGS_MODULE=pocha_site.settings

CONF="$ROOT/deploy/supervisord.conf"
LOGS="$POCHA_VAR/log"
URL="http://$BIND:$PORT/"
UP_TIMEOUT="${UP_TIMEOUT:-90}"

ctl() { "$POCHA_BIN/supervisorctl" -c "$CONF" "$@"; }

# supervisord's pid if it is running (and answering), else nothing.
supervisord_pid() {
    local pid
    pid=$(ctl pid 2>/dev/null || true)
    [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
    return 0
}

# SECRET_KEY: the environment's, else one generated once into $POCHA_VAR/secret_key (not in git) and reused.
secret_key() {
    if [[ -z "${SECRET_KEY:-}" ]]; then
        if [[ ! -s "$POCHA_VAR/secret_key" ]]; then
            (umask 077 && "$POCHA_BIN/python" -c 'import secrets; print(secrets.token_urlsafe(50))' \
                > "$POCHA_VAR/secret_key")
            echo "generated a SECRET_KEY in $POCHA_VAR/secret_key"
        fi
        SECRET_KEY=$(cat "$POCHA_VAR/secret_key")
        export SECRET_KEY
    fi
}

# A PostgreSQL database that does not exist yet is created (a fresh machine has only `postgres`).
create_database() {
    "$POCHA_BIN/python" - <<'PY'
import os, sys
import dj_database_url, psycopg
from psycopg import sql
db = dj_database_url.parse(os.environ["DATABASE_URL"])
if "postgresql" not in db["ENGINE"]:
    sys.exit(0)
params = {k: v for k, v in {"host": db["HOST"], "port": db["PORT"], "user": db["USER"],
                            "password": db["PASSWORD"]}.items() if v}
with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
    if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db["NAME"]]).fetchone() is None:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db["NAME"])))
        print(f"created the database {db['NAME']}")
PY
}

answers() {
    "$POCHA_BIN/python" - "$1" <<'EOF'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=3) as response:
        sys.exit(0 if response.status == 200 else 1)
except Exception:
    sys.exit(1)
EOF
}

wait_until_up() {
    local end=$((SECONDS + UP_TIMEOUT))
    until answers "$URL"; do
        if ((SECONDS > end)); then
            echo "the site did not answer on $URL within ${UP_TIMEOUT}s; the processes:" >&2
            ctl status >&2 || true
            for log in "$LOGS"/asgi*.log "$LOGS"/worker.log "$LOGS"/beat.log; do
                [[ -f "$log" ]] && { echo "---- $log" >&2; tail -n 30 "$log" >&2; }
            done
            return 1
        fi
        sleep 0.5
    done
    # every process must have got to RUNNING (a worker that cannot start shows here)
    while ctl status | grep -Ev ' RUNNING ' >/dev/null; do
        if ((SECONDS > end)); then
            echo "not every process is running:" >&2
            ctl status >&2 || true
            return 1
        fi
        sleep 0.5
    done
}

# ASGI_OWN_PORTS, if set: one port for each ASGI process (deploy/asgi.sh), numbers only.
check_own_ports() {
    [[ -z "${ASGI_OWN_PORTS:-}" ]] && return 0
    local ports
    IFS=',' read -r -a ports <<< "$ASGI_OWN_PORTS"
    if ((${#ports[@]} != ASGI_PROCESSES)) || [[ ! "$ASGI_OWN_PORTS" =~ ^[0-9]+(,[0-9]+)*$ ]]; then
        echo "ASGI_OWN_PORTS=$ASGI_OWN_PORTS: give one port for each of the $ASGI_PROCESSES ASGI processes" >&2
        return 1
    fi
}

up() {
    check_own_ports
    mkdir -p "$LOGS"
    secret_key
    if [[ -n "$(supervisord_pid)" ]]; then
        echo "already running (supervisord pid $(supervisord_pid)); starting anything stopped"
        ctl start all >/dev/null || true
    else
        create_database
        echo "migrating $DATABASE_URL"
        "$POCHA_BIN/python" "$ROOT/manage.py" migrate --no-input
        "$POCHA_BIN/python" "$ROOT/manage.py" collectstatic --no-input >/dev/null
        "$POCHA_BIN/supervisord" -c "$CONF"
    fi
    wait_until_up
    ctl status
    echo
    echo "La Pocha is up: $URL  ($ASGI_PROCESSES ASGI processes, Celery worker and beat)"
    if [[ -n "${ASGI_OWN_PORTS:-}" ]]; then
        echo "each ASGI process on its own port as well: $ASGI_OWN_PORTS"
    fi
    echo "logs: $LOGS/   (make logs; make status; make down)"
}

down() {
    local pid
    pid=$(supervisord_pid)
    if [[ -z "$pid" ]]; then
        echo "not running"
        return 0
    fi
    ctl shutdown >/dev/null
    local end=$((SECONDS + 60))
    while kill -0 "$pid" 2>/dev/null; do
        if ((SECONDS > end)); then
            echo "supervisord (pid $pid) is still stopping after 60 s" >&2
            return 1
        fi
        sleep 0.3
    done
    echo "stopped"
}

status() {
    if [[ -z "$(supervisord_pid)" ]]; then
        echo "not running"
        return 3
    fi
    ctl status
}

logs() {
    local log
    for log in "$LOGS"/supervisord.log "$LOGS"/asgi*.log "$LOGS"/worker.log "$LOGS"/beat.log; do
        [[ -f "$log" ]] && { echo "==== $log"; tail -n "${LINES_PER_LOG:-40}" "$log"; }
    done
    return 0
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    status) status ;;
    logs) logs ;;
    *) echo "usage: $0 up|down|status|logs" >&2; exit 2 ;;
esac
