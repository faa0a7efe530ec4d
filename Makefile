# Explainer: `make run` installs what is missing and runs the whole app; `make test` runs the suite.
SHELL := /bin/bash
PORT ?= 8000
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PG_URL ?= postgres://postgres@127.0.0.1:5432/test
export DJANGO_SETTINGS_MODULE ?= explainer.settings.dev

.PHONY: test-full run test lint bench soak soak-fleet setup venv system vendor messages migrate redis demo-data train clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e ".[dev]"
	touch $@

venv: $(VENV)/.installed

# The gpu extra's packages (pyproject.toml), apart from the venv: the suite runs fla's kernels on the CPU
# through Triton's interpreter, in a child process that adds this folder to its path, and compares them with
# the plain-torch path. Apart, because transformers hands Qwen3.5's delta rule to fla wherever fla imports,
# and fla's kernels do not run on a CPU. `make run` does not need it.
KERNELS_SITE := $(VENV)/kernels
$(KERNELS_SITE)/.installed: $(VENV)/.installed
	$(VENV)/bin/pip install -q --no-deps --target $(KERNELS_SITE) "flash-linear-attention>=0.6,<0.7" \
		"fla-core>=0.6,<0.7" einops "triton>=3.3"
	touch $@

# Debian packages: Chromium for the render check, a Redis server, a CJK font so Chinese pages
# render as characters in render-check screenshots, and gettext (msgfmt) to compile the interface's
# translations. Only what is missing is installed.
SYSTEM_PACKAGES := chromium:/usr/bin/chromium redis-server:/usr/bin/redis-server \
	fonts-wqy-microhei:/usr/share/fonts/truetype/wqy/wqy-microhei.ttc gettext:/usr/bin/msgfmt
system:
	@missing=""; for entry in $(SYSTEM_PACKAGES); do \
		[ -e "$${entry#*:}" ] || missing="$$missing $${entry%%:*}"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing with apt-get"; \
		$$(command -v sudo) apt-get update -qq && $$(command -v sudo) apt-get install -y -qq $$missing; \
	fi

vendor: venv
	$(PY) scripts/vendor.py

setup: venv system vendor messages

# The interface's translations (locale/), compiled again where msgfmt is installed; the committed .mo
# files serve where it is not.
messages: venv
	@if command -v msgfmt >/dev/null; then $(PY) manage.py compilemessages -i .venv -i var -i node_modules >/dev/null; fi

migrate: setup
	mkdir -p var
	$(PY) manage.py migrate --noinput

run: setup migrate
	$(PY) manage.py demo_data --base-url http://127.0.0.1:$(PORT)
	$(PY) manage.py runall --port $(PORT)

test: setup $(KERNELS_SITE)/.installed
	mkdir -p var
	DJANGO_SETTINGS_MODULE=explainer.settings.test $(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)
	@if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then \
		echo "== database tests again on PostgreSQL"; \
		DJANGO_SETTINGS_MODULE=explainer.settings.test DATABASE_URL=$(PG_URL) $(PY) -m pytest -q -p no:cacheprovider -m postgres; \
	else echo "PostgreSQL not listening on 127.0.0.1:5432: skipped the PostgreSQL pass"; fi

# The suite with every library page opened by its browser checks (`make test` opens one page per topic).
test-full:
	FULL_CHECKS=1 $(MAKE) test

lint: venv
	$(VENV)/bin/ruff check explainer model_worker tests scripts

# Load and faults on loopback (docs/reliability.md): a few minutes; SOAK_ARGS=--quick for fewer questions.
soak: setup
	$(PY) scripts/soak.py $(SOAK_ARGS)

# Two GPU and two render-check workers, two web processes, one Redis and a fresh PostgreSQL database, then a
# GPU worker killed mid-page (docs/deploy.md): a few minutes; needs PostgreSQL (FLEET_ARGS=--postgres URL).
soak-fleet: setup
	$(PY) scripts/soak_fleet.py $(FLEET_ARGS)

bench: venv
	$(PY) -m model_worker.lab.bench

train: venv
	$(PY) -m model_worker.lab.train

clean:
	rm -rf var static/vendor/three
