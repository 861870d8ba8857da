"""Phone audio: telling narrow-band (telephone) audio apart, two ways, and making wideband audio sound like a phone
line.

- The container (`narrowband_container`), for decoding: a file is narrow-band when its container says so, 8 kHz or
  less (PCM, mu-law) or AMR-NB, and its VAD threshold is then DecodeOptions.phone_vad_threshold. Judging it from the
  signal was tried for decoding and dropped: it also caught a 16 kHz English conference call (en/earnings22_3),
  where the lower threshold cost 1 point of CER.
- The signal (`BandScan`, `band_db`), for speakers: the energy above 4.2 kHz against that of 300-3400 Hz, in dB,
  over the louder half of 32 ms frames (speech rather than pauses). Audio that went through 8 kHz sampling has
  nothing above 4 kHz: -44 dB or less on sori_eval/voices.py's conversations carried by G.711, -26 dB or more on
  the same voices unfiltered; below DiarizeConfig.narrowband_db a file's voiceprints are centred by the narrowband
  cohort mean (diarization/cohort.py: a phone channel moves every CAM++ embedding the same way) and diarization
  splits its clusters (diarization/count.py). A call re-encoded at 16 kHz is narrowband here, whatever its container.

Why decoding needs the lower threshold: resampled to 16 kHz, on narrow-band audio Silero's speech probability drops
(frames of speech at >= 0.5 fall from 100 % to 95 %, and a whole soft first phrase can stay under 0.2), so with
faster-whisper's default threshold the VAD cuts off speech; with a lower one it keeps it while line hiss, room tone
and clicks stay under 0.1 (figures in docs/models.md).
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


_FRAME = 512
_FREQS = np.fft.rfftfreq(_FRAME, 1 / SAMPLE_RATE)
_HIGH = _FREQS > 4200
_SPEECH = (_FREQS > 300) & (_FREQS < 3400)
_WINDOW = np.hanning(_FRAME).astype(np.float32)


class BandScan:
    """Fed the file's 16 kHz blocks in order; `finish` gives the high band against the speech band in dB. Frames are
    cut from the file's start across blocks, so the result equals `band_db` of the whole file."""

    def __init__(self) -> None:
        self._rest = np.zeros(0, np.float32)
        self._total: list[np.ndarray] = []
        self._high: list[np.ndarray] = []
        self._speech: list[np.ndarray] = []

    def feed(self, block: np.ndarray) -> None:
        x = np.concatenate([self._rest, block.astype(np.float32, copy=False)])
        n = x.shape[0] // _FRAME * _FRAME
        self._rest = x[n:].copy()
        if n == 0:
            return
        power = np.abs(np.fft.rfft(x[:n].reshape(-1, _FRAME) * _WINDOW, axis=1)) ** 2
        self._total.append(power.sum(axis=1))
        self._high.append(power[:, _HIGH].sum(axis=1))
        self._speech.append(power[:, _SPEECH].sum(axis=1))

    def finish(self) -> float:
        if not self._total:
            return 0.0
        total = np.concatenate(self._total)
        loud = total > np.quantile(total, 0.5)
        if not loud.any():
            return 0.0
        high = float(np.concatenate(self._high)[loud].sum())
        speech = float(np.concatenate(self._speech)[loud].sum())
        return 10.0 * float(np.log10((high + 1e-12) / (speech + 1e-12)))


def band_db(samples: np.ndarray) -> float:
    """BandScan of audio already in memory."""
    scan = BandScan()
    scan.feed(samples)
    return scan.finish()
