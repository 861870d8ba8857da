#!/usr/bin/env bash
# The sori CLI and bench/throughput.ts as two single-file bundles, for a host that has Node and the engine's Python
# packages but none of the dev dependencies (the GPU run in docs/performance.md, "On a GPU"). Both files go in one
# folder directly under the checkout (each computes the repository root as its folder's parent), beside a
# node_modules that holds better-sqlite3 (native, with `bindings` and `file-uri-to-path`); node-llama-cpp is left out
# (the insight model is loaded only when a job asks for it).
#
#   bench/bundle.sh [DIR]          # default DIR: gpu (under the checkout)
#   SORI_CLI_JS=gpu/cli.mjs node gpu/throughput.mjs --device cuda ...
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu}
# A bundle in ESM has no `require`; some dependencies call it for Node's own modules.
banner="import{createRequire as __soriRequire}from'node:module';const require=__soriRequire(import.meta.url);"
for entry in src/cli/main.ts:cli.mjs bench/throughput.ts:throughput.mjs; do
  npx esbuild "${entry%%:*}" --bundle --platform=node --format=esm --target=node20 --log-level=warning \
    --external:better-sqlite3 --external:node-llama-cpp --banner:js="$banner" --outfile="$out/${entry##*:}"
done
echo "bundles in $out: $(ls "$out" | tr '\n' ' ')"
