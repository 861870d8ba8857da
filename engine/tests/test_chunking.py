"""Where long speech is cut: the VAD's cut of a region that reaches the maximum length, and the chunks the
transcriber groups regions into. Plain data: frame probabilities and regions, no model."""

from __future__ import annotations

import numpy as np

from sori_engine import vad
from sori_engine.decode import windows
from sori_engine.pcm import SAMPLE_RATE
from sori_engine.vad import VadOptions

OPTIONS = VadOptions(threshold=0.5, max_speech_duration_s=10.0, min_silence_duration_ms=2000, speech_pad_ms=0)


def _probs(seconds: float, pauses: list[tuple[float, float]], dips: tuple[float, ...] = ()) -> np.ndarray:
    """Speech (probability 0.9) for `seconds`, with silent pauses (start, length) and single frames at 0.4."""
    p = np.full(round(seconds / vad.FRAME_S), 0.9, dtype=np.float32)
    for start, length in pauses:
        p[round(start / vad.FRAME_S) : round((start + length) / vad.FRAME_S)] = 0.05
    for t in dips:
        p[round(t / vad.FRAME_S)] = 0.4
    return p


def _seconds(regions: list[dict]) -> list[tuple[float, float]]:
    return [(round(r["start"] / SAMPLE_RATE, 2), round(r["end"] / SAMPLE_RATE, 2)) for r in regions]


def test_a_long_region_is_cut_at_the_longest_pause_of_its_second_half() -> None:
    # Pauses at 3 s (0.8 s, but in the first half), 6 s (0.6 s) and 8.6 s (0.15 s). The region reaches 10 s at
    # 9.97 s; faster-whisper cuts at its last pause (8.6 s), often a breath inside a sentence.
    probs = _probs(14.0, [(3.0, 0.8), (6.0, 0.6), (8.6, 0.15)])
    regions = vad.regions(probs, OPTIONS, probs.size * vad.FRAME)
    (a, b), (c, d) = _seconds(regions)
    assert a == 0.0 and abs(b - 6.0) < 0.05
    assert abs(c - 6.6) < 0.05 and d == round(probs.size * vad.FRAME_S, 2)


def test_with_no_pause_in_the_second_half_the_latest_pause_is_taken() -> None:
    probs = _probs(12.0, [(2.0, 0.3), (3.5, 0.2)])
    (_a, b), (c, _d) = _seconds(vad.regions(probs, OPTIONS, probs.size * vad.FRAME))
    assert abs(b - 3.5) < 0.05 and abs(c - 3.7) < 0.05


def test_with_no_pause_at_all_the_cut_is_at_the_least_speech_like_frame_of_the_second_half() -> None:
    probs = _probs(14.0, [], dips=(2.0, 7.0))  # 0.4: under the threshold's hang-over, not a pause
    probs[round(7.0 / vad.FRAME_S)] = 0.3
    (a, b), (c, _d) = _seconds(vad.regions(probs, OPTIONS, probs.size * vad.FRAME))
    assert a == 0.0 and abs(b - 7.0) < 0.05 and c == b


def test_a_pause_after_the_cut_stays_a_candidate_for_the_next_region() -> None:
    # Cut at 6 s (0.6 s pause); the next region starts at 6.6 s and reaches 10 s at 16.57 s: its own second
    # half begins at 11.6 s, where the 0.5 s pause at 12 s is, not the 0.2 s one at 9 s.
    probs = _probs(20.0, [(6.0, 0.6), (9.0, 0.2), (12.0, 0.5)])
    cuts = _seconds(vad.regions(probs, OPTIONS, probs.size * vad.FRAME))
    assert [round(b, 1) for _a, b in cuts[:2]] == [6.0, 12.0]


def _region(start_s: float, end_s: float) -> dict:
    return {"start": int(start_s * SAMPLE_RATE), "end": int(end_s * SAMPLE_RATE)}


def test_a_chunk_is_not_ended_where_two_regions_touch_when_a_real_gap_is_earlier() -> None:
    # 10 s, a gap, 19.6 s, touching 5 s (a cut inside speech), a gap, 18 s. Filled in order the second chunk would
    # end at the touching seam (10 + 19.6 = 29.6 s, then 5 s more is too much); it ends at the gap before instead.
    regions = [_region(0, 10), _region(11, 30.6), _region(30.6, 35.6), _region(37, 55)]
    chunks = windows.group(regions, 30 * SAMPLE_RATE)
    assert [len(c) for c in chunks] == [1, 2, 1]
    assert chunks[1] == regions[1:3]


def test_a_seam_is_kept_when_moving_it_would_leave_a_chunk_under_a_third_full() -> None:
    regions = [_region(0, 5), _region(6, 30), _region(30, 40)]
    assert [len(c) for c in windows.group(regions, 30 * SAMPLE_RATE)] == [2, 1]


def test_regions_with_gaps_fill_chunks_in_order() -> None:
    regions = [_region(0, 12), _region(14, 26), _region(28, 40)]
    assert [len(c) for c in windows.group(regions, 30 * SAMPLE_RATE)] == [2, 1]
