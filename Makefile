# From Scratch. Two commands: `make run` (the whole site on this machine) and `make test`.
# Every entry point runs as `python -m …` / `python manage.py …` from the repository root, so
# that the project's `platform` package shadows the standard library module (see README).

SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Links in mail (reset, verification, newsletter) follow the address the site is served on; set
# SITE_URL yourself when a proxy serves it elsewhere.
SITE_URL ?= http://$(HOST):$(PORT)

.PHONY: run test test-fast install install-dev lint typecheck check format bench clean

$(VENV)/.installed: requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: install Python 3.11"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

## make run: migrate, load the demo content, make the editor, serve web + worker + beat.
## Every process it starts gets SITE_URL (migrate also points the Sites domain at it).
run: export SITE_URL := $(SITE_URL)
run: install
	$(PY) manage.py migrate --no-input
	$(PY) manage.py load_demo
	$(PY) manage.py ensure_editor
	@echo ""
	@echo "  Site:          http://$(HOST):$(PORT)/ (links in mail: $(SITE_URL)/)"
	@echo "  Admin:         http://$(HOST):$(PORT)/admin/"
	@echo "  Outgoing mail: $(CURDIR)/var/mail/ (one .log file per message)"
	@echo "  Stop:          Ctrl-C stops the web server, the worker and beat together."
	@echo "  The worker (with beat) is supervised: if it exits, it is restarted with backoff."
	@echo ""
	@trap 'kill -TERM $$web $$worker 2>/dev/null; wait $$web $$worker 2>/dev/null' INT TERM EXIT; \
	  $(PY) manage.py runserver $(HOST):$(PORT) --noreload & web=$$!; \
	  $(PY) manage.py supervise_worker --loglevel=INFO --concurrency=2 & worker=$$!; \
	  wait -n $$web $$worker

## make test: the whole suite (SQLite and the filesystem broker unless DATABASE_URL/REDIS_URL).
test: install-dev
	$(PY) -m pytest $(PYTEST_ARGS)

## make test-fast: the inner loop, everything but the worker, browser and slow tests.
test-fast: install-dev
	$(PY) -m pytest -m "not worker and not browser and not slow" $(PYTEST_ARGS)

lint: install-dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

## make typecheck: mypy with django-stubs over the apps (configured in pyproject.toml).
typecheck: install-dev
	$(PY) -m mypy

## make check: what CI checks besides the tests.
check: lint typecheck
	$(PY) manage.py makemigrations --check --dry-run

format: install-dev
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

## make bench: widget and chapter benchmarks (the newsletter one needs PostgreSQL and Redis:
## see README, "Benchmarks").
bench: install-dev
	OPENBLAS_NUM_THREADS=1 $(PY) bench/widgets.py --rounds 5 --seconds 2
	$(PY) bench/chapter_page.py

clean:
	rm -rf var/test .pytest_cache
