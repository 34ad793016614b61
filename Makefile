# The project's interface: `make run`, `make test` (lint first), `make ui`. Each target sets up what it needs.
# The suite is three tiers (tests/helpers/tiers.py): `make test` the fast one, `make test-e2e` the
# real runs, `make test-deploy` the deployed topology; .ci/run runs all three.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
UI_PORT ?= 3000
export DAGSTER_HOME := $(CURDIR)/.dagster_home

.PHONY: run test lint ui sql audit bench truth truth-real setup chromium clean demo \
        deploy-local deploy-local-stop test-e2e test-deploy

setup: $(STAMP) chromium

# Reinstalls only when the lock or the project metadata changed.
$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==0.13.8
	@echo "installing dependencies from requirements.lock ..."
	@$(BIN)/uv pip install --quiet --compile-bytecode -p $(BIN)/python -r requirements.lock
	@$(BIN)/uv pip install --quiet --compile-bytecode -p $(BIN)/python --no-deps -e .
	@touch $@

# Playwright cannot download its own browser here: the project uses Debian's chromium, and
# Debian's fonts-noto-cjk so that Chinese text (阿里云, 北京) renders in it instead of boxes. Each
# is installed only when missing, with one apt-get update; without root, the command to run.
chromium:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="chromium"; \
	fc-list :lang=zh 2>/dev/null | grep -q . || missing="$$missing fonts-noto-cjk"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian's $$missing (apt-get) ..."; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  elif [ "$$missing" = " fonts-noto-cjk" ]; then \
	    echo "no Chinese font: Chinese text renders as boxes in the browser tests; run 'sudo apt-get install fonts-noto-cjk'." >&2; \
	  else \
	    echo "missing:$$missing: run 'sudo apt-get install$$missing' (Debian's packages), then retry." >&2; exit 1; \
	  fi; \
	fi

run: setup
	@$(BIN)/gpuprices run $(if $(LIVE),--live)

# The project's own modules are compiled first: with PYTHONDONTWRITEBYTECODE set (as on this
# machine), every `gpuprices run`, crawl and worker the suite starts would compile them afresh.
# Each tier collects the whole suite (the deploy tier only its own files: tiers.may_hold) and
# keeps its own tests (--tier); --durations=25 prints the 25 slowest at the end.
PYTEST := $(BIN)/python -m pytest -n 2 --dist loadfile --durations=25
COMPILE := $(BIN)/python -m compileall -q -j 2 pipelines spiders tests >/dev/null

# The fast tier: parsing, normalization, the SQL models on small fixtures, the spider contract,
# the CLI and API on a small published database.
test: setup lint
	@$(COMPILE)
	@$(PYTEST) --no-loadscope-reorder --tier fast $(PYTEST_ARGS)

# The end-to-end tier: the real Dagster job over the replay server, `scrapy crawl` subprocesses,
# Chromium, crash, fault and hostile-input runs.
test-e2e: setup
	@$(COMPILE)
	@$(PYTEST) --no-loadscope-reorder --tier e2e $(PYTEST_ARGS)

# `gpuprices ui` runs `dg dev` from DAGSTER_HOME (pipelines/cli/ui.py says why); the instance
# configuration is refreshed from the repository's dagster.yaml first.
ui: setup
	@mkdir -p $(DAGSTER_HOME) && cp dagster.yaml $(DAGSTER_HOME)/dagster.yaml
	@$(BIN)/gpuprices ui --port $(UI_PORT)

# The compose topology of docs/deploy/ as processes here (pipelines/deploy/): Debian's PostgreSQL,
# installed when missing, with a cluster of its own in .deploy/ (GPUPRICES_DEPLOY_DIR), the code
# location's gRPC server, the daemon and the webserver on 127.0.0.1:$(UI_PORT). Ctrl-C or
# `make deploy-local-stop` (from another shell) stops all of it.
deploy-local: setup
	@$(BIN)/python -m pipelines.deploy up --ui-port $(UI_PORT)

deploy-local-stop:
	@$(BIN)/python -m pipelines.deploy stop

# The deploy tier: the tests that start that topology (schedule ticks every minute, a killed run
# worker, a restarted daemon, the multiprocess executor under the daemon), apart from the other
# tiers because they wait on the clock; .ci/run runs it last, alone.
test-deploy: setup
	@$(BIN)/python -m pipelines.deploy install
	@$(PYTEST) -rP --tier deploy $(PYTEST_ARGS)

# A simulated 3-month history and its report in data/demo (never data/prices.db), to see the
# charts and signals at work: gpuprices report --data-dir data/demo, prices, signals ...
demo: setup
	@$(BIN)/gpuprices demo --data-dir data/demo $(DEMO_ARGS)

# Figures, not a test: crawl throughput, a year of simulated hourly history (full rebuild,
# incremental hour, floor, growth, memory, publishing), CLI start-up and the whole run on the
# snapshots, each against issue 14's target. BENCH_ARGS=--quick for a short run; BENCH_ARGS=--suite
# also times the test suite on a fresh clone (otherwise its last recorded figure is shown).
bench: setup
	@$(BIN)/python -m tests.workshop.bench $(BENCH_ARGS)

# Figures, not a test: the signals scored against simulated histories with known effects (dip
# recall and false positives, regional error, ratio exactness, claims with intervals). Writes
# data/truth/latest.json. TRUTH_ARGS=--quick for a short run.
truth: setup
	@$(BIN)/python -m tests.workshop.truth $(TRUTH_ARGS)

# Figures, not a test: the same on real histories (the default run with the public record, built
# in data/truth/real/ and reused while record and code are unchanged), every real_<part>.py scored
# on it. Writes data/truth/real.json and real.md. TRUTH_REAL_ARGS=--db PATH scores a database as is.
truth-real: setup
	@$(BIN)/python -m tests.workshop.truth --real $(TRUTH_REAL_ARGS)

sql: setup
	@$(BIN)/duckdb -readonly data/prices.db

# Lint: ruff on the Python (rules in pyproject.toml [tool.ruff]), sqlfluff on every .sql file
# (DuckDB dialect, rules in .sqlfluff): the models and docs/coverage.sql, then the SQL that Python
# runs, whose `?`, `$name` and `{name}` parameters .sqlfluff-parameters stands values in for
# (tests/test_one_home_sql.py checks no .sql file is left out). All run before any fails. The two
# sqlfluff passes, each one process for half a minute, run side by side on the two cores; their
# output is printed in order once both are done.
lint: setup
	@status=0; out=$$(mktemp -d); \
	$(BIN)/sqlfluff lint dbt_like_sql docs >$$out/models 2>&1 & models=$$!; \
	$(BIN)/sqlfluff lint --config .sqlfluff-parameters pipelines tests/workshop >$$out/python 2>&1 \
	  & python=$$!; \
	$(BIN)/ruff check pipelines spiders tests || status=1; \
	wait $$models || status=1; cat $$out/models; \
	wait $$python || status=1; cat $$out/python; \
	rm -rf $$out; exit $$status

# Known vulnerabilities in the pinned dependencies (pip-audit in its own venv: it is a tool, not a
# dependency of the project). Offline, it says it was skipped rather than claiming a clean bill.
AUDIT_VENV := .venv-audit
audit:
	@test -x $(AUDIT_VENV)/bin/pip-audit || { $(PYTHON) -m venv $(AUDIT_VENV) && \
	  $(AUDIT_VENV)/bin/pip install --quiet --disable-pip-version-check pip-audit==2.10.1; }
	@$(AUDIT_VENV)/bin/python .ci/audit.py

clean:
	rm -rf $(VENV) .dagster_home data/prices.db data/prices.db.wal data/raw data/feeds
