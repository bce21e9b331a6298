# Two commands: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint bench install clean

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
