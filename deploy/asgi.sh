#!/bin/sh
# One Daphne process of `make up` (deploy/supervisord.conf), number $1 (0, 1, ...): it serves the port every
# process shares (fd 0, opened by supervisord), and, when ASGI_OWN_PORTS lists a port for each process
# ("8611,8612"), its own port as well, on BIND.  A proxy in front can then send every socket of one table to
# the same process (README, operator part: "One table, one process"), so that a move's event is handled,
# and its seats drawn, in one process rather than in each.
set -eu
n="$1"
own=""
if [ -n "${ASGI_OWN_PORTS:-}" ]; then
    own=$(printf '%s\n' "$ASGI_OWN_PORTS" | tr ',' '\n' | sed -n "$((n + 1))p")
    if [ -z "$own" ]; then
        echo "ASGI_OWN_PORTS=$ASGI_OWN_PORTS has no port for process $n (ASGI_PROCESSES=${ASGI_PROCESSES:-?})" >&2
        exit 2
    fi
fi
# (the same backlog as the shared port, supervisord's socket_backlog: a few thousand sockets open at once)
if [ -n "$own" ]; then
    exec "$POCHA_BIN/daphne" --fd 0 -e "tcp:port=$own:interface=$BIND:backlog=1024" --access-log - pocha_site.asgi:application
fi
exec "$POCHA_BIN/daphne" --fd 0 --access-log - pocha_site.asgi:application
