"""The band measure that picks a voiceprint's cohort mean (phone.py): wideband audio against the same
audio through a telephone channel, and the measure over a stream of blocks equal to that of the whole file."""

from __future__ import annotations

import numpy as np
import pytest

from sori_engine.diarization import DEFAULT_CONFIG
from sori_engine.phone import BandScan, band_db
from sori_eval.wav import telephone_channel


def test_a_phone_channel_is_narrowband() -> None:
    rng = np.random.default_rng(0)
    # 4 s of noise bursts: loud half-seconds (the "speech") between quiet ones
    x = (rng.normal(0, 1, 64_000) * np.repeat(np.tile([0.5, 0.01], 8), 4000)).astype(np.float32)
    assert band_db(x) > DEFAULT_CONFIG.narrowband_db + 20
    phone = telephone_channel(x)
    assert band_db(phone) < DEFAULT_CONFIG.narrowband_db
    scan = BandScan()
    for i in range(0, len(phone), 11_200):  # 0.7 s blocks, not a multiple of the 512-sample frame
        scan.feed(phone[i : i + 11_200])
    assert scan.finish() == pytest.approx(band_db(phone), abs=1e-6)


def test_no_audio_is_wideband() -> None:
    assert BandScan().finish() == 0.0
    assert band_db(np.zeros(100, np.float32)) == 0.0
