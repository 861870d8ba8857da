"""Audio written to disk as the engine reads a client's upload: mono 16-bit PCM WAV (16 kHz unless told)."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

SR = 16000


def write_wav(path: Path | str, samples: np.ndarray, rate: int = SR) -> Path:
    """Float samples in [-1, 1) as 16-bit PCM (clipped, so a full-scale sample does not wrap)."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((np.clip(samples, -1, 1 - 1 / 32768) * 32768).astype("<i2").tobytes())
    return Path(path)
