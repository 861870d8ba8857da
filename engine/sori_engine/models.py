"""Load-once cache of Whisper models.

Loading base takes about a second and larger models much longer, so each distinct (path, device, compute type,
threads) is loaded on first use and kept for the life of the process. The worker uses one or two registry entries,
so the cache is not bounded.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass

from .decode.fw import WhisperModel
from .protocol import MODEL_LOAD_FAILED, EngineError, ModelConfig

log = logging.getLogger(__name__)

# Files that must be present so that WhisperModel never falls back to the Hugging Face Hub: without tokenizer.json
# it calls Tokenizer.from_pretrained, and a path that is not a directory is taken for a hub model id.
REQUIRED_FILES = ("model.bin", "config.json", "tokenizer.json")


@dataclass(frozen=True)
class ModelKey:
    path: str
    device: str
    compute_type: str
    cpu_threads: int


_cache: dict[ModelKey, WhisperModel] = {}


def get_model(cfg: ModelConfig) -> WhisperModel:
    key = ModelKey(os.path.abspath(cfg.path), cfg.device, cfg.compute_type, cfg.cpu_threads)
    model = _cache.get(key)
    if model is None:
        model = _load(key)
        _cache[key] = model
    return model


def loaded_paths() -> list[str]:
    """Model directories held in memory (one entry per directory, whatever its device or compute type)."""
    return sorted({key.path for key in _cache})


def _load(key: ModelKey) -> WhisperModel:
    if not os.path.isdir(key.path):
        raise EngineError(MODEL_LOAD_FAILED, f"model directory not found: {key.path}")
    missing = [f for f in REQUIRED_FILES if not os.path.isfile(os.path.join(key.path, f))]
    if missing:
        raise EngineError(
            MODEL_LOAD_FAILED, f"not a CTranslate2 Whisper model ({', '.join(missing)} missing): {key.path}"
        )
    started = time.monotonic()
    try:
        model = WhisperModel(
            key.path,
            device=key.device,
            compute_type=key.compute_type,
            cpu_threads=key.cpu_threads,
            local_files_only=True,
        )
    except Exception as e:  # ctranslate2 raises RuntimeError/ValueError for bad files, devices and compute types
        raise EngineError(MODEL_LOAD_FAILED, f"cannot load model {key.path}: {e}") from e
    log.info(
        "loaded model %s (device=%s compute_type=%s cpu_threads=%d) in %.1fs",
        key.path,
        key.device,
        key.compute_type,
        key.cpu_threads,
        time.monotonic() - started,
    )
    return model
