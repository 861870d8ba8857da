"""One Silero pass gives what faster-whisper's get_speech_timestamps gives (vad.py copies its post-processing), for
regions under the maximum length; where a region reaches it, vad.py cuts elsewhere (test_chunking.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from faster_whisper.vad import get_speech_timestamps

from sori_engine import audio, vad
from sori_engine.decode.windows import vad_options
from sori_engine.decode_options import DEFAULT

CLIPS = ["multi/deeply_ko_dialogue_constructed.wav", "en/whisper_jfk.flac", "ja/common_voice_ja_38833628_16k.wav"]


def _speech_then_noise(testdata: Path) -> np.ndarray:
    """A long mix: the dialogue, hiss, the clip again (regions of every kind)."""
    x = audio.decode(str(testdata / CLIPS[0]))
    rng = np.random.default_rng(0)
    hiss = (0.01 * rng.standard_normal(16000 * 3)).astype(np.float32)
    return np.concatenate([x, hiss, x[: 16000 * 25]])


@pytest.mark.parametrize("narrowband", [False, True])
@pytest.mark.parametrize("max_speech_s", [float("inf")])  # faster-whisper's default
def test_regions_from_one_pass_equal_get_speech_timestamps(
    testdata: Path, narrowband: bool, max_speech_s: float
) -> None:
    samples = [audio.decode(str(testdata / c)) for c in CLIPS[1:]] + [_speech_then_noise(testdata)]
    options = vad_options(narrowband, replace(DEFAULT, speech_s=max_speech_s))
    for x in samples:
        x = x[: x.shape[0] - (1 if x.shape[0] % vad.FRAME == 0 else 0)]  # upstream pads a whole frame on a multiple
        ours = vad.regions(vad.probabilities(x), options, x.shape[0])
        assert ours == get_speech_timestamps(x, options)
        assert ours  # every input has speech


def test_probabilities_of_a_prefix_are_a_prefix() -> None:
    """The window keeps the frames of the audio it decodes out of one pass over window + carried rest. The model
    call zeroes the last 64 samples of its last frame (its context trick), so only that frame may differ."""
    x = np.random.default_rng(1).standard_normal(16000 * 4).astype(np.float32) * 0.1
    whole = vad.probabilities(x)
    part = vad.probabilities(x[: vad.FRAME * 50])
    np.testing.assert_allclose(whole[:49], part[:49], atol=1e-6)


CALLS = ["en/earnings22_1_4482311_3_62.wav", "en/earnings22_3_4483589_261_321.wav"]  # the second starts mid-sentence


@pytest.mark.parametrize("gap", ["zeros", "room tone"])
def test_an_abrupt_onset_after_non_speech_is_scored_from_a_fresh_state(testdata: Path, gap: str) -> None:
    # bench/rtf.py's en input: a call, 1 s of non-speech, a call cut mid-sentence ("In addition, we increased").
    # After the gap Silero's state holds the first words back (0.0-0.2 on the CPUs seen); from a fresh state that has
    # seen at most 0.75 s of the gap they pass the threshold (0.6-0.9).
    rng = np.random.default_rng(0)
    pause = np.zeros(16000, np.float32) if gap == "zeros" else (rng.standard_normal(16000) * 10 ** (-50 / 20))
    first = audio.decode(str(testdata / CALLS[0]))
    x = np.concatenate([first, pause.astype(np.float32), audio.decode(str(testdata / CALLS[1]))[: 16000 * 5]])
    probs = vad.probabilities(x)
    onset = (first.shape[0] + pause.shape[0]) // vad.FRAME + 1
    words = slice(onset, onset + 22)  # "In addition, we": the first 0.7 s
    rescored = vad.rescore_onsets(x, probs, DEFAULT.vad_threshold)
    assert probs[words].max() < 0.4
    assert rescored[words].max() >= DEFAULT.vad_threshold + 0.1
    assert np.all(rescored >= probs)
    speech = probs >= DEFAULT.vad_threshold  # only frames of the quiet runs before speech are scored again
    np.testing.assert_array_equal(rescored[speech], probs[speech])


def test_rescoring_leaves_non_speech_that_no_speech_follows() -> None:
    # Only a quiet run that ends at speech is scored again: silence, or noise to the end, costs nothing and moves nothing.
    hiss = (np.random.default_rng(0).standard_normal(16000 * 5) * 0.01).astype(np.float32)
    probs = vad.probabilities(hiss)
    assert vad.rescore_onsets(hiss, probs, DEFAULT.vad_threshold) is probs
    assert vad.quiet_runs(np.array([True, True, True, False, True, True]), 2) == [(0, 3)]
