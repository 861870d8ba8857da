#!/usr/bin/env bash
# The device run of docs/performance.md ("One engine for the host"), one prepared script for a lent host (one GPU
# and 16 CPU cores; about 15 minutes of device time in all): the full throughput mix on the GPU, sori against the
# batched pipeline (audio hours per wall hour, each system's CER), then the 1-hour recording alone on the CPU at 16, 4
# and 1 cores, sori (its workers and decoders set to the cores) beside the batched pipeline pinned to the same cores.
# It needs the checkout with `make install` done on the host, or the bundles of bench/bundle.sh and the engine's venv.
#
#   bench/device.sh 2>&1 | tee device.txt
set -euo pipefail
cd "$(dirname "$0")/.."
bench/bundle.sh gpu
run() { SORI_CLI_JS=gpu/cli.mjs node gpu/throughput.mjs "$@"; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
echo "## GPU: the full mix, 4 workers on one engine, beside the plain scripts"
run --scale full --device cuda --workers 4
for n in 16 4 1; do  # the slowest row last: what runs out of device time is the one that matters least
  echo "## CPU, $n cores: the 1-hour recording alone"
  SORI_ENGINE_DECODERS=$n taskset -c "0-$((n - 1))" \
    env SORI_CLI_JS=gpu/cli.mjs node gpu/throughput.mjs --scale turnaround --alone --workers "$n" \
    --files ko-recording-1h.wav
done
