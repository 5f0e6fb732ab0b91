# La Pocha — developer and operator commands.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8000
PYTEST_ARGS ?=

# Python keeps its compiled modules, and pytest its rewritten test modules, in __pycache__: the suite's many
# processes (pytest-xdist workers, test servers, commands) then load them instead of compiling the code again
# (collecting the suite takes about 3 s of CPU a process instead of 10).  Some environments turn that off.
export PYTHONDONTWRITEBYTECODE :=

SERVICES_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/pocha
SERVICES_REDIS_URL    ?= redis://127.0.0.1:6379/0

.PHONY: venv run test test-all test-services test-live test-slow test-browsers test-faults bench typecheck messages lock lint

venv: $(VENV)/.installed

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Installs exactly the versions in requirements.lock (every file checked against its hash), then the
# project itself; again only when the lock or pyproject.toml changed since the last install.
$(VENV)/.installed: requirements.lock pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# After changing a range in pyproject.toml: pin everything again (commit requirements.lock).
lock: venv
	$(BIN)/pip-compile --quiet --extra dev --generate-hashes --allow-unsafe --strip-extras \
		--no-emit-index-url --no-emit-find-links -o requirements.lock pyproject.toml

# The linters, as CI runs them: `ruff format` fixes what the second one reports; `lint-imports` holds the
# packages to their layers (.importlinter): a new circle, or the engine importing Django, fails here.
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache --no-logo

# One command on a fresh machine: SQLite, in-memory channel layer, ASGI (daphne) dev server.
# Compiled translations (.mo) are committed, so gettext is not needed here.
run: venv
	$(BIN)/python manage.py migrate --no-input
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# The suite in tiers: pytest markers given by directory in tests/conftest.py (listed in pyproject.toml).
# Each tier runs on JOBS pytest-xdist workers (each with its own test database, ports, files and, in
# services mode, Redis database), a file's tests on one worker (they may share a server), and a test
# that hangs fails after pyproject.toml's `timeout`.  PYTEST_ARGS: more pytest options; EXCEPT: a marker
# expression of tests to leave out (CI leaves out of the other tiers what `make test` already ran).
JOBS   ?= 2
EXCEPT ?=
# `make test`: the quick tier, a few minutes on two cores: the rules engine, the chips ledger and the site's
# own tests (everything outside tests/live, tests/browser and tests/faults but the `slow` modules), and,
# from the other tiers, one of each kind, marked `smoke`: a whole game through the real socket, what each
# seat is sent (no card leaks), a game in the browser.
QUICK_TIER := smoke or not (live or browser or services_only or slow)
tier = $(BIN)/pytest -n $(JOBS) --dist loadfile -m "($(1))$(if $(EXCEPT), and not ($(EXCEPT)))" $(PYTEST_ARGS)
# The other pytest-xdist tiers start their longest modules first (tests/support/ordering.py), so that none
# ends on one of them alone; the quick tier has none of them and keeps pytest-xdist's own order, and the
# fault tests (no workers, one stack) their collection order, which they rely on.
ordered_tier = PYTHONPATH=tests$(if $(PYTHONPATH),:$(PYTHONPATH)) $(BIN)/pytest -p support.ordering \
	--no-loadscope-reorder -n $(JOBS) --dist loadfile -m "($(1))$(if $(EXCEPT), and not ($(EXCEPT)))" $(PYTEST_ARGS)
services = DATABASE_URL=$(SERVICES_DATABASE_URL) REDIS_URL=$(SERVICES_REDIS_URL)

test: venv
	$(call tier,$(QUICK_TIER))

# Every test that runs on the embedded defaults (SQLite, in-memory channel layer, in-process clock).
test-all: venv
	$(call tier,not services_only)

# The tables through the real consumer (tests/live), embedded.
test-live: venv
	$(call ordered_tier,live and not services_only)

# The long checks outside those directories: random playouts, fuzzing, property-based and whole-game runs,
# fresh interpreters (tests/conftest.py's SLOW_MODULES).
test-slow: venv
	$(call ordered_tier,slow)

# Playwright and Debian's Chromium against a real server (tests/browser).
test-browsers: venv
	$(call ordered_tier,browser)

# Against PostgreSQL and Redis, the tests that reach them (marker `services`; the others, such as the
# engine's, the browser tests and the checks of templates and code, run once, in the tiers above).
# pytest-django creates and drops a test database per worker (test_pocha_gw0, ...); each worker uses a
# Redis database of its own (tests/support/workers.py).
test-services: venv
	$(services) $(call ordered_tier,services and not faults)

# A supervised services-mode stack (`make up`'s) with faults done to it (tests/faults): one stack, in the
# pytest process itself; each test plays a whole game through a fault.
test-faults: JOBS = 0
test-faults: venv
	$(services) $(call tier,faults)

# Engine figures: the fácil bot's self-play, simulation speed (the search's fast path), replay speed
# against a plain reference, and a short arena (difícil against fácil; `ARENA_DEALS=20` for a real one).
ARENA_DEALS ?= 2
bench: venv
	$(BIN)/python -m games.engine selfplay --players 4 --games 200 --seed 1
	$(BIN)/python -m games.engine rollouts --players 4 --cards 8 --seconds 3
	$(BIN)/python -m games.engine bench
	$(BIN)/python -m games.engine arena --a difícil --b fácil --players 4 --deals $(ARENA_DEALS) --seed 1 --jobs 2
	$(BIN)/python -m games.engine analyse --players 4 --seed 1

# A move's boards as a server process draws them (round 11, four seats), in microseconds a board: run it on
# two commits to compare them (benchmarks/board_bench.py).
.PHONY: bench-board
bench-board: venv
	$(BIN)/python benchmarks/board_bench.py

# The rankings page at scale: 100,000 players and 2 million ledger entries.  Needs PostgreSQL (not part
# of `bench`): the data goes in a database of its own, created and filled on the first run (~2 minutes)
# and reused after while the sizes and the week are the same.
BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/pocha_bench
.PHONY: bench-ranking
bench-ranking: venv
	DATABASE_URL=$(BENCH_DATABASE_URL) $(BIN)/python benchmarks/ranking_bench.py --players 100000 --entries 2000000

# «Amigos» and the lobby at scale (issue 44): 100,000 accounts, 5,000 online, a viewer following 500 people; p50/p95/p99
# ms and queries a page.  Needs PostgreSQL: a database of its own, filled on the first run (~6 minutes) and reused
# after while the sizes are the same.  FRIENDS_BENCH_ARGS: e.g. `--explain --profile` (each query's plan, a profile).
FRIENDS_BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/pocha_bench_friends
FRIENDS_BENCH_ARGS ?=
.PHONY: bench-friends
bench-friends: venv
	DATABASE_URL=$(FRIENDS_BENCH_DATABASE_URL) $(BIN)/python benchmarks/friends_bench.py --accounts 100000 --online 5000 \
		--following 500 $(FRIENDS_BENCH_ARGS)

typecheck: venv
	$(BIN)/mypy --strict games/engine

# Refresh and compile translations (needs gettext); commit the resulting .po and .mo.
# The Jinja2 templates (jinja2/) are read through a generated Python file of their texts.
messages: venv
	$(BIN)/python -m pocha_site.jinja2 > jinja2_messages.py
	$(BIN)/python manage.py makemessages --locale en --ignore '.venv/*' --ignore 'games/engine/*' --ignore 'tests/*' \
		--ignore 'jinja2/*' --ignore 'benchmarks/*' || { rm -f jinja2_messages.py; exit 1; }
	rm -f jinja2_messages.py
	$(BIN)/python manage.py compilemessages --locale en --ignore '.venv/*'

# Services mode on this machine, as in production (README, "Running it in production"): PostgreSQL and
# Redis from DATABASE_URL and REDIS_URL, DEBUG off, ASGI_PROCESSES Daphne processes on PORT, a Celery
# worker and beat, all under supervisord (deploy/supervisord.conf; pid, socket and logs in var/).
.PHONY: up down status logs
up: venv
	PORT=$(PORT) deploy/pocha.sh up

down:
	deploy/pocha.sh down

status:
	deploy/pocha.sh status

logs:
	deploy/pocha.sh logs

# Open-loop load against the running stack (`make up` first, with the same PORT, DATABASE_URL, REDIS_URL and
# POCHA_VAR): LOAD_TABLES tables of four socket clients, one move per table every LOAD_PERIOD s on average,
# for LOAD_DURATION s (benchmarks/load/README.md).
LOAD_TABLES   ?= 30
LOAD_PERIOD   ?= 3
LOAD_DURATION ?= 40
# LOAD_ARGS: more options, e.g. `--compare` (the bare Channels stack in the same run, and the ratios),
# `--advance-rounds 10` (late rounds), `--ramp` (tables opened over HTTP, counting «Sala llena» refusals).
LOAD_ARGS     ?=
.PHONY: bench-load
bench-load: venv
	$(BIN)/python benchmarks/load/run.py --port $(PORT) --tables $(LOAD_TABLES) --period $(LOAD_PERIOD) --duration $(LOAD_DURATION) $(LOAD_ARGS)
