"""The built-in model entries as the service sends them to the engine (src/engine/models.ts, `defaultRegistry`):
whisper-base int8 on the CPU with the VAD, beam 5 for `sommers` and 1 for `whisper`; for benches that speak the
engine protocol directly. `service_params` gives a whole request as the service builds it for a job config."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from .testdata import REPO_ROOT

# one path, whichever checkout runs it
MODEL_DIR = os.path.realpath(REPO_ROOT / "models" / "whisper-base")


def model_entry(beam_size: int, **overrides: Any) -> dict[str, Any]:
    """A `transcribe` request's `model` object."""
    entry = {
        "path": MODEL_DIR,
        "device": "cpu",
        "compute_type": "int8",
        "beam_size": beam_size,
        "cpu_threads": 0,
        "vad": True,
    }
    return {**entry, **overrides}


def service_params(configs: list[str]) -> list[dict[str, Any]]:
    """The `transcribe` params the service sends for each job config (JSON): src/pipeline/run.ts `engineParams` over
    the model registry, through bench/engine-params.ts (needs `make install`'s node_modules)."""
    tsx = REPO_ROOT / "node_modules" / ".bin" / "tsx"
    done = subprocess.run(
        [str(tsx), str(REPO_ROOT / "bench" / "engine-params.ts"), *configs],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench/engine-params.ts failed:\n{done.stderr}")
    params: list[dict[str, Any]] = json.loads(done.stdout)
    return params
