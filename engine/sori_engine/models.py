"""Load-once cache of speech models (model/interface.py's `SpeechModel`).

Loading base takes about a second and larger models much longer, so each distinct (path, device, compute type,
threads, passes at once) is loaded on first use and kept for the life of the process. The worker uses one or two registry entries,
so the cache is not bounded. Every model is a faster-whisper one today (model/faster_whisper_backend.py); a second
backend is picked here, by what its directory holds.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass

from .model.faster_whisper_backend import FasterWhisperModel
from .model.interface import SpeechModel
from .protocol import ModelConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelKey:
    path: str
    device: str
    compute_type: str
    cpu_threads: int
    inter_threads: int


_cache: dict[ModelKey, SpeechModel] = {}
_loading = threading.Lock()  # requests' stages run in threads (scheduler.py): one load per model


def get_model(cfg: ModelConfig) -> SpeechModel:
    key = ModelKey(os.path.abspath(cfg.path), cfg.device, cfg.compute_type, cfg.cpu_threads, cfg.inter_threads)
    with _loading:
        model = _cache.get(key)
        if model is None:
            model = _load(key)
            _cache[key] = model
    return model


def loaded_paths() -> list[str]:
    """Model directories held in memory (one entry per directory, whatever its device or compute type)."""
    return sorted({key.path for key in _cache})


def _load(key: ModelKey) -> SpeechModel:
    started = time.monotonic()
    model = FasterWhisperModel.load(key.path, key.device, key.compute_type, key.cpu_threads, key.inter_threads)
    log.info(
        "loaded model %s (device=%s compute_type=%s cpu_threads=%d inter_threads=%d) in %.1fs",
        key.path,
        key.device,
        key.compute_type,
        key.cpu_threads,
        key.inter_threads,
        time.monotonic() - started,
    )
    return model
