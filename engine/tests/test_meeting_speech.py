"""No real speech dropped on meeting audio: sori keeps at least 90 % of the words the plain faster-whisper script
writes on the same model, language and beam (docs/engine.md, "transcribe"; bench/robustness.py --plain measures the
same on more recordings). Real AMI meeting excerpts from the shared test audio, as uploaded (32-bit float WAV), alone
and joined end to end (a minute of four voices, backchannels and overlap)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from conftest import Engine
from faster_whisper import WhisperModel

from sori_engine import audio as audio_io
from sori_eval.wav import write_wav

MEETINGS = ("multi/pyannote_dev00.wav", "multi/pyannote_dev01.wav")
MIN_KEPT = 0.9  # of the plain script's words (the bound); the int8 model's words vary by CPU, not this much


def words(text: str) -> int:
    return len(text.split())


def sori_words(engine: Engine, model: dict[str, Any], path: Path) -> int:
    reply = engine.call(
        "transcribe",
        {"audio_path": str(path), "model": model, "language_mode": "fixed", "language": "en", "word_timestamps": True},
    )
    return sum(words(s["text"]) for s in reply.result["segments"])


def plain_words(model: dict[str, Any], path: Path) -> int:
    plain = WhisperModel(model["path"], device="cpu", compute_type="int8", cpu_threads=2)
    segments, _ = plain.transcribe(str(path), language="en", beam_size=model["beam_size"], vad_filter=True)
    return sum(words(s.text) for s in segments)


def test_meeting_speech_is_kept(engine: Engine, model: dict[str, Any], testdata: Path, tmp_path: Path) -> None:
    joined = np.concatenate([audio_io.decode(str(testdata / name)) for name in MEETINGS])
    paths = [testdata / name for name in MEETINGS] + [write_wav(tmp_path / "joined.wav", joined)]
    for path in paths:
        kept, plain = sori_words(engine, model, path), plain_words(model, path)
        assert plain > 20, f"{path.name}: the plain script wrote only {plain} words"
        assert kept >= MIN_KEPT * plain, f"{path.name}: sori kept {kept} words of the plain script's {plain}"
