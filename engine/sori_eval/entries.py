"""The built-in model entries as the service sends them to the engine (src/engine/models.ts, `defaultRegistry`):
whisper-base int8 on the CPU with the VAD, beam 5 for `sommers` and 1 for `whisper`; for benches that speak the
engine protocol directly."""

from __future__ import annotations

import os
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
