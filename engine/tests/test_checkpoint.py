"""Checkpoints and resume (checkpoint.py): a request given the checkpoints of an earlier one continues where that
one stopped, and the result is the uninterrupted run's, exactly (same model, same threads, same process here).

The input is built from three English clips (131 s) and the window is set to 60 s (SORI_ENGINE_WINDOW_S), so the
file makes three windows and three checkpoints without a long decode."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Engine

from sori_engine import audio, checkpoint
from sori_engine.protocol import Segment, TranscribeParams, Word, parse_model
from sori_eval.wav import write_wav

CLIPS = ["en/earnings22_1_4482311_3_62.wav", "en/earnings22_3_4483589_261_321.wav", "en/whisper_jfk.flac"]


@pytest.fixture(scope="module")
def long_input(testdata: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    samples = np.concatenate([audio.decode(str(testdata / c)) for c in CLIPS])
    return write_wav(tmp_path_factory.mktemp("resume") / "three_clips.wav", samples)


@pytest.fixture(scope="module")
def windowed_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    old = os.environ.get("SORI_ENGINE_WINDOW_S")
    os.environ["SORI_ENGINE_WINDOW_S"] = "60"
    try:
        eng = Engine(tmp_path_factory.mktemp("engine-60") / "stderr.log")
    finally:
        if old is None:
            del os.environ["SORI_ENGINE_WINDOW_S"]
        else:
            os.environ["SORI_ENGINE_WINDOW_S"] = old
    yield eng
    assert eng.close() == 0


def run(engine: Engine, model: dict[str, Any], path: Path, **extra: Any) -> tuple[dict[str, Any], list[dict]]:
    params = {"audio_path": str(path), "model": model, "word_timestamps": True, "checkpoints": True, **extra}
    reply = engine.call("transcribe", params)
    checkpoints = [e["checkpoint"] for e in reply.events if e["event"] == "checkpoint"]
    return reply.result, checkpoints


@pytest.mark.parametrize("mode", [{"language_mode": "fixed", "language": "en"}, {"language_mode": "detect"}])
def test_resume_gives_the_uninterrupted_result(
    windowed_engine: Engine, model: dict[str, Any], long_input: Path, mode: dict[str, Any]
) -> None:
    full, cps = run(windowed_engine, model, long_input, **mode)
    assert [cp["index"] for cp in cps] == [0, 1, 2]
    offsets = [cp["offset_sample"] / audio.SAMPLE_RATE for cp in cps]
    assert (
        offsets == sorted(offsets)
        and 55 <= offsets[0] <= 75
        and offsets[-1] == pytest.approx(full["duration_s"], abs=1e-3)
    )
    assert full["segments"], "the clips are speech: the result cannot be empty"
    # After the first window, and after the second: the rest is decoded again and the result is the same.
    for done in (1, 2):
        resumed, more = run(windowed_engine, model, long_input, resume_from=cps[:done], **mode)
        assert resumed == full
        assert [cp["index"] for cp in more] == list(range(done, 3))
        assert more == cps[done:]
    # All three: nothing left to decode, the result is only re-assembled.
    assert run(windowed_engine, model, long_input, resume_from=cps, **mode) == (full, [])


def _params(**kw: Any) -> TranscribeParams:
    return TranscribeParams(audio_path="/a.wav", model=parse_model({"path": "/m"}), language_mode="fixed", **kw)


def test_checkpoints_of_other_settings_or_broken_are_not_resumed() -> None:
    seg = Segment(0.1, 1.25, "hi", "en", float("-inf"), 0.01, (Word(0.1, 0.5, " hi", 0.9),))
    probs = np.array([0.1, 0.9, 0.3333333], dtype=np.float32)
    key = checkpoint.key(_params(language="en"), 60.0)
    cp = checkpoint.make(0, key, 0, 16000 * 60, probs, [seg], "en", {"en": 1.0}, {})
    restored = checkpoint.restore([cp], key)
    assert restored is not None and restored.segments == [seg] and restored.offset_sample == 16000 * 60
    assert restored.speech[0][0] == 0 and np.array_equal(restored.speech[0][1], probs)
    # Another language, window or model: start over rather than splice two decodings.
    assert checkpoint.restore([cp], checkpoint.key(_params(language="ko"), 60.0)) is None
    assert checkpoint.restore([cp], checkpoint.key(_params(language="en"), 300.0)) is None
    assert checkpoint.restore([{**cp, "segments": [{"start": 1}]}], key) is None
    # The host's decoders running at once do not change a request's text: resumed on a host with more cores.
    more = TranscribeParams(
        audio_path="/a.wav", model=parse_model({"path": "/m", "inter_threads": 4}), language_mode="fixed", language="en"
    )
    assert checkpoint.restore([cp], checkpoint.key(more, 60.0)) is not None
    # Only the unbroken run from index 0 counts.
    assert checkpoint.restore([{**cp, "index": 1}], key) is None
    two = checkpoint.restore([cp, {**cp, "index": 2}], key)
    assert two is not None and two.count == 1


def test_window_length_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SORI_ENGINE_WINDOW_S", "10")
    assert checkpoint.window_s() == checkpoint.MIN_WINDOW_S
    monkeypatch.setenv("SORI_ENGINE_WINDOW_S", "junk")
    assert checkpoint.window_s() == checkpoint.DEFAULT_WINDOW_S
    monkeypatch.delenv("SORI_ENGINE_WINDOW_S")
    assert checkpoint.window_s() == checkpoint.DEFAULT_WINDOW_S
