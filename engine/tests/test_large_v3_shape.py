"""A model of large-v3's shape (128 mel bins, 100 languages with "yue", a vocabulary one larger than base's) runs
through every operation that decodes: batch (fixed, detect, multi; words), refine and a streaming session. Its
weights are random (large_v3_shape.py), so only invariants are asserted, never words."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Engine
from large_v3_shape import build

CLIP = "ko/deeply_anechoic_sub100120a00053.wav"  # 5.2 s, one sentence


@pytest.fixture(scope="module")
def large(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = build(model_dir, tmp_path_factory.mktemp("large-v3-shape"))
    return {"path": str(path), "device": "cpu", "compute_type": "int8", "beam_size": 2, "cpu_threads": 0, "vad": True}


def _check_segments(result: dict[str, Any], words: bool) -> None:
    duration = result["duration_s"]
    previous = 0.0
    for seg in result["segments"]:
        assert 0.0 <= seg["start"] <= seg["end"] <= duration, seg
        assert seg["start"] >= previous
        previous = seg["start"]
        assert seg["text"] and seg["text"] == seg["text"].strip()
        if words:
            for w in seg["words"]:
                assert seg["start"] <= w["start"] <= w["end"] <= seg["end"], (seg, w)


@pytest.mark.parametrize(
    "mode,extra",
    [
        ("fixed", {"language": "yue"}),
        ("detect", {}),
        ("multi", {"language_candidates": ["yue", "ko", "en"]}),
    ],
)
def test_batch_decodes_in_every_language_mode(
    engine: Engine, large: dict[str, Any], testdata: Path, mode: str, extra: dict[str, Any]
) -> None:
    reply = engine.call(
        "transcribe",
        {
            "audio_path": str(testdata / CLIP),
            "model": large,
            "language_mode": mode,
            "word_timestamps": True,
            **extra,
        },
    )
    result = reply.result
    assert 5.0 < result["duration_s"] < 5.5
    _check_segments(result, words=True)
    probs = result["language_probs"]
    assert abs(sum(probs.values()) - 1.0) < 1e-3 or mode == "detect"  # detect lists the top 5, raw
    if "language_candidates" in extra:
        assert set(probs) <= set(extra["language_candidates"])
    assert result["language"] in probs


def test_a_language_the_model_does_not_have_is_refused(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    """Base has no "yue" token: refused as a bad request, not an internal error inside the tokenizer."""
    reply = engine.call(
        "transcribe",
        {"audio_path": str(testdata / CLIP), "model": model, "language_mode": "fixed", "language": "yue"},
    )
    assert reply.error_code == "bad_request"


def test_refine_scores_spans(engine: Engine, large: dict[str, Any], testdata: Path) -> None:
    reply = engine.call(
        "refine",
        {
            "audio_path": str(testdata / CLIP),
            "model": large,
            "language": "yue",
            "spans": [{"start": 0.5, "end": 4.5, "text": "hello"}],
            "decodes": [{"beam_size": 2, "num_hypotheses": 2}],
        },
    )
    (span,) = reply.result["spans"]
    assert span["current_score"] is None or span["current_score"] <= 0.0
    assert len(span["decoded"]) == 1


def test_a_stream_gives_finals_within_its_audio(engine: Engine, large: dict[str, Any], testdata: Path) -> None:
    import av

    with av.open(str(testdata / CLIP)) as c:
        resampler = av.AudioResampler(format="s16", layout="mono", rate=16000)
        pcm = np.concatenate([f.to_ndarray()[0] for fr in c.decode(audio=0) for f in resampler.resample(fr)])
    pcm = np.concatenate([pcm, np.zeros(16000, np.int16)]).astype("<i2").tobytes()
    decode = {"model": large, "language_mode": "fixed", "language": "yue"}
    opened = engine.call("stream_open", {"session": "lv3", "sample_rate": 16000, "epd_time": 0.5, "decode": decode})
    assert opened.result == {"session": "lv3"}
    events = []
    step = 16000  # 0.5 s of s16
    for i in range(0, len(pcm), step):
        last = i + step >= len(pcm)
        r = engine.call(
            "stream_audio",
            {"session": "lv3", "pcm": base64.b64encode(pcm[i : i + step]).decode(), "interim": True, "finish": last},
        )
        events.extend(r.result["events"])
    finals = [e for e in events if e["final"]]
    assert finals, events
    total_s = len(pcm) / 2 / 16000
    for e in events:
        assert 0.0 <= e["start"] <= e["end"] <= total_s + 1e-3, e
