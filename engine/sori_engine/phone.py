"""Phone audio: telling narrow-band (telephone) audio apart. Its VAD threshold is DecodeOptions.phone_vad_threshold.

A file is narrow-band when its container says so: 8 kHz or less (PCM, mu-law) or AMR-NB. Judging it from the
signal (no energy above 4 kHz) was tried and dropped: it also caught a 16 kHz English conference call
(en/earnings22_3), where the lower threshold cost 1 point of CER. Resampled to 16 kHz, on narrow-band audio
Silero's speech probability drops (frames of speech at >= 0.5 fall from 100 % to 95 %, and a whole soft first
phrase can stay under 0.2), so with faster-whisper's default threshold the VAD cuts off speech; with a lower
threshold it keeps it while line hiss, room tone and clicks stay under 0.1 (figures in docs/models.md).
"""

from __future__ import annotations

import numpy as np

from .pcm import SAMPLE_RATE
from .protocol import ProbeResult


def narrowband_container(info: ProbeResult | None) -> bool:
    """What the file declares: a sample rate of 8 kHz or less, or an AMR-NB stream."""
    if info is None:
        return False
    return (info.sample_rate is not None and 0 < info.sample_rate <= 8000) or (info.codec or "").startswith("amr_nb")


def phone_band(samples: np.ndarray) -> np.ndarray:
    """16 kHz `samples` as a telephone line passes them: 300-3400 Hz, through 8 kHz, back at 16 kHz (float32).
    Known voices enrolled from wideband audio are also printed this way, to be compared with phone calls
    (voiceprint.py). No codec is simulated: a line's codec varies, its band does not."""
    from scipy import signal

    sos = signal.butter(4, [300, 3400], btype="bandpass", fs=SAMPLE_RATE, output="sos")
    y = signal.resample_poly(signal.sosfilt(sos, samples.astype(np.float64)), 1, 2)
    return signal.resample_poly(y, 2, 1).astype(np.float32)
