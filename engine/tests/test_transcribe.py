"""transcribe on real speech with the real model: invariants, not exact strings."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import Engine
from transcripts import cer, reference


def check_segments(result: dict[str, Any], words: bool) -> None:
    """Invariants every transcribe result must keep."""
    duration = result["duration_s"]
    segments = result["segments"]
    assert segments, "expected speech"
    previous_start = 0.0
    for seg in segments:
        assert seg["text"] == seg["text"].strip() and seg["text"]
        assert previous_start <= seg["start"] <= seg["end"] <= duration + 1e-6
        previous_start = seg["start"]
        assert seg["language"]
        assert isinstance(seg["avg_logprob"], float) and 0.0 <= seg["no_speech_prob"] <= 1.0
        if not words:
            assert "words" not in seg
            continue
        assert seg["words"], seg
        for w in seg["words"]:
            assert seg["start"] <= w["start"] <= w["end"] <= seg["end"], (seg["start"], seg["end"], w)
            assert w["text"].strip() and 0.0 <= w["probability"] <= 1.0
    probs = result["language_probs"]
    assert result["language"] in probs and all(0.0 <= p <= 1.0 for p in probs.values())
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-3)  # every test here fixes or restricts the language


def transcribe(engine: Engine, model: dict[str, Any], path: Path, **params: Any) -> dict[str, Any]:
    reply = engine.call("transcribe", {"audio_path": str(path), "model": model, **params})
    fractions = [e["fraction"] for e in reply.events]
    assert all(e["event"] == "progress" for e in reply.events)
    assert fractions == sorted(fractions) and all(0.0 <= f <= 1.0 for f in fractions)
    return reply.result


def test_english_word_timestamps(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    result = transcribe(
        engine, model, testdata / "en" / "whisper_jfk.flac", language_mode="fixed", language="en", word_timestamps=True
    )
    check_segments(result, words=True)
    assert result["duration_s"] == 11.0
    assert result["language"] == "en" and result["language_probs"] == {"en": 1.0}
    text = " ".join(s["text"] for s in result["segments"])
    assert cer(text, reference(testdata, "en/whisper_jfk.flac")) <= 0.3, text
    assert str(model["path"]) in engine.call("ping").result["models_loaded"]


def test_korean_fixed(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    result = transcribe(
        engine, model, testdata / "ko" / "deeply_anechoic_sub100120a00053.wav", language_mode="fixed", language="ko"
    )
    check_segments(result, words=False)
    assert {s["language"] for s in result["segments"]} == {"ko"}
    assert re.search("[\uac00-\ud7a3]", "".join(s["text"] for s in result["segments"])), "expected Hangul"


def test_detect_restricted_to_candidates(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    result = transcribe(
        engine,
        model,
        testdata / "ja" / "common_voice_ja_38852485_16k.wav",
        language_mode="detect",
        language_candidates=["ko", "ja"],
    )
    check_segments(result, words=False)
    assert result["language"] == "ja"
    assert set(result["language_probs"]) == {"ko", "ja"}
    assert result["language_probs"]["ja"] > 0.5
    assert {s["language"] for s in result["segments"]} == {"ja"}


def test_multi_language_per_chunk(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    # 60 s: about 30 s of English (the MIT licence) followed by its German translation.
    result = transcribe(
        engine,
        model,
        testdata / "formats" / "native_fasterwhisper_multilingual.mp3",
        language_mode="multi",
        language_candidates=["en", "de"],
    )
    check_segments(result, words=False)
    languages = [s["language"] for s in result["segments"]]
    assert languages[0] == "en" and languages[-1] == "de"
    assert languages == sorted(languages, key=["en", "de"].index), "English first, then German"
    assert set(result["language_probs"]) == {"en", "de"}
