"""Whether a file's speech is narrowband (a phone call: nothing above 4 kHz) or wideband, for the cohort centring of
its voiceprints (cohort.py): a phone channel moves every CAM++ embedding the same way, so the two bands are centred
by means of their own.

The measure is the energy above 4.2 kHz against that of 300-3400 Hz, in dB, over the louder half of 32 ms frames
(speech rather than pauses). Audio that went through 8 kHz sampling has nothing above 4 kHz: -44 dB or less on the
conversations of bench/conversations.py carried by G.711, -26 dB or more on the same voices unfiltered.
"""

from __future__ import annotations

import numpy as np

from ..pcm import SAMPLE_RATE

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
