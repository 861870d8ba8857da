"""Speech really said again is written again (issue 67): real clips said three times over, and espeak-ng's
backchannels and a card number read in groups, through the real engine. What holds on any CPU is asserted: as
many copies as the same model writes of one copy alone, or as the plain faster-whisper script writes, less one."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Engine
from faster_whisper import WhisperModel

from sori_engine import audio as audio_io
from sori_eval.scoring import chars
from sori_eval.wav import write_wav

SR = 16000


def text_of(engine: Engine, model: dict[str, Any], path: Path, language: str) -> str:
    reply = engine.call(
        "transcribe",
        {
            "audio_path": str(path),
            "model": model,
            "language_mode": "fixed",
            "language": language,
            "word_timestamps": True,
        },
    )
    return " ".join(s["text"] for s in reply.result["segments"])


def said_again(clip: np.ndarray, times: int, pause_s: float = 0.7) -> np.ndarray:
    """The clip said `times` times, with `pause_s` of faint room noise between."""
    rng = np.random.default_rng(67)
    room = [(rng.standard_normal(int(pause_s * SR)) * 1e-3).astype(np.float32) for _ in range(times)]
    return np.concatenate([part for i in range(times) for part in ((room[i],) if i else ()) + (clip,)])


@pytest.mark.parametrize(
    ("file", "language"),
    [("ko/deeply_studioapt_sub100101a00080.wav", "ko"), ("ja/common_voice_ja_38853932_16k.wav", "ja")],
)
def test_a_sentence_said_three_times_is_written_three_times(
    engine: Engine, model: dict[str, Any], testdata: Path, tmp_path: Path, file: str, language: str
) -> None:
    clip = audio_io.decode(str(testdata / file))
    once = len(chars(text_of(engine, {**model, "beam_size": 5}, write_wav(tmp_path / "1.wav", clip), language)))
    thrice = text_of(engine, {**model, "beam_size": 5}, write_wav(tmp_path / "3.wav", said_again(clip, 3)), language)
    assert once > 0
    assert len(chars(thrice)) >= 2.5 * once, thrice  # before issue 67: the third copy was dropped as a loop


ESPEAK = shutil.which("espeak-ng")


def spoken(tmp_path: Path, text: str, voice: str, speed: int) -> Path:
    path = tmp_path / f"{abs(hash(text))}.wav"
    subprocess.run([ESPEAK or "espeak-ng", "-v", voice, "-s", str(speed), "-w", str(path), text], check=True)
    return path


@pytest.mark.skipif(ESPEAK is None, reason="espeak-ng is not installed (make test installs it)")
def test_backchannels_and_a_card_number_read_in_groups_keep_every_copy(
    engine: Engine, model: dict[str, Any], tmp_path: Path
) -> None:
    plain = WhisperModel(model["path"], device="cpu", compute_type="int8", cpu_threads=2)
    group = "four five three two"
    calls = "Yes. Yes. Yes. I can hear you now. Hello, hello, hello. Okay, okay, okay."
    cases = [  # Whisper base hears espeak's "hello" as "the low"; what is counted is the copies
        (spoken(tmp_path, calls, "en-gb", 130), [r"\byes\b", r"\b(?:hel)?low?\b", r"\bok(?:ay)?\b"]),  # a segment each
        (spoken(tmp_path, calls, "en-us", 150), [r"\byes\b", r"\b(?:hel)?low?\b", r"\bok(?:ay)?\b"]),  # in a segment
        (spoken(tmp_path, f"The card number is {', '.join([group] * 4)}.", "en-gb", 140), [r"4\W?5\W?3\W?2"]),
    ]
    for path, units in cases:
        segments, _ = plain.transcribe(str(path), language="en", beam_size=5, vad_filter=True)
        by_plain = " ".join(s.text for s in segments).lower()
        ours = text_of(engine, {**model, "beam_size": 5}, path, "en").lower()
        for unit in units:
            assert len(re.findall(unit, by_plain)) >= 3, f"the check is real: the plain script writes {unit} again"
            assert len(re.findall(unit, ours)) >= len(re.findall(unit, by_plain)) - 1, (unit, ours, by_plain)
