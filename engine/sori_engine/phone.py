"""Phone audio: telling narrow-band (telephone) audio apart, and the VAD settings used for it.

Whatever its container, audio reaches the transcriber resampled to 16 kHz; telephone audio (8 kHz PCM, mu-law,
AMR-NB) then has next to no energy above 4 kHz. On it Silero's speech probability drops (bench/robustness.py:
frames of speech at >= 0.5 fall from 100 % to 95 %, and a whole soft first phrase can stay under 0.2), so with
faster-whisper's default threshold the VAD cuts off speech; with a lower threshold it keeps it while line hiss,
room tone and clicks stay under 0.1 (figures in docs/models.md).
"""

from __future__ import annotations

import numpy as np
from faster_whisper.vad import VadOptions

from .protocol import ProbeResult

SR = 16000
BAND_EDGE_HZ = 4000.0  # the Nyquist frequency of 8 kHz audio
# Share of the energy above BAND_EDGE_HZ under which audio is narrow-band. Measured (bench/robustness.py clips):
# 8 kHz PCM / mu-law / AMR-NB copies 5e-7 to 4e-4, median 1e-5; the 16 kHz originals median 6e-3, the lowest 7e-5.
NARROW_SHARE = 1e-4
SAMPLE_S = 60.0  # the start of the file that is looked at
VAD_THRESHOLD = 0.5  # faster-whisper's default, for wide-band audio
PHONE_VAD_THRESHOLD = 0.3  # narrow-band audio (see the module's docstring)


def narrowband_container(info: ProbeResult | None) -> bool:
    """What the file declares: a sample rate of 8 kHz or less, or an AMR-NB stream."""
    if info is None:
        return False
    return (info.sample_rate is not None and 0 < info.sample_rate <= 8000) or (info.codec or "").startswith("amr_nb")


def narrowband_signal(audio: np.ndarray) -> bool:
    """Whether 16 kHz `audio` carries (almost) nothing above 4 kHz: telephone audio stored at a higher rate."""
    if audio.size < SR // 2:
        return False
    spectrum = np.abs(np.fft.rfft(audio.astype(np.float64))) ** 2
    total = float(spectrum.sum())
    if total <= 0:
        return False
    high = float(spectrum[np.fft.rfftfreq(audio.size, 1 / SR) > BAND_EDGE_HZ].sum())
    return high / total < NARROW_SHARE


def vad_options(narrowband: bool, max_speech_s: float, min_silence_ms: int) -> VadOptions:
    return VadOptions(threshold=PHONE_VAD_THRESHOLD if narrowband else VAD_THRESHOLD,
                      max_speech_duration_s=max_speech_s, min_silence_duration_ms=min_silence_ms)
