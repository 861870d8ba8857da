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


def narrowband(src: Path | str, dst: Path | str) -> Path:
    """A telephone-band copy of `src`: 8 kHz mono 16-bit PCM WAV (what a call recording holds), resampled by PyAV
    as the engine's decoder would."""
    import av

    resampler = av.AudioResampler(format="s16", layout="mono", rate=8000)
    pcm: list[np.ndarray] = []
    with av.open(str(src)) as container:
        for frame in container.decode(audio=0):
            pcm += [out.to_ndarray().reshape(-1) for out in resampler.resample(frame)]
    pcm += [out.to_ndarray().reshape(-1) for out in resampler.resample(None)]
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(dst), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(np.concatenate(pcm).astype("<i2").tobytes())
    return Path(dst)


def telephone_channel(samples: np.ndarray, rate: int = 16000) -> np.ndarray:
    """`samples` as a call carries them: 300-3400 Hz, 8 kHz, 8-bit mu-law (G.711), back at `rate` (float32)."""
    from scipy import signal

    sos = signal.butter(6, [300, 3400], btype="bandpass", fs=rate, output="sos")
    y = signal.resample_poly(signal.sosfilt(sos, samples), 8000, rate)
    mu = 255.0
    peak = max(float(np.abs(y).max()), 1e-6)
    c = np.round(np.sign(y) * np.log1p(mu * np.abs(y / peak)) / np.log1p(mu) * 127) / 127
    y = np.sign(c) * np.expm1(np.abs(c) * np.log1p(mu)) / mu * peak
    return signal.resample_poly(y, rate, 8000).astype(np.float32)
