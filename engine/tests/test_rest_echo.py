"""A rest's first words that repeat the text before it are dropped (rest_echo.without_echo, transcriber._decode_batched).

A rest is decoded from Whisper's last timestamp, which can fall inside the last word: the rest then wrote that word
again ("...98 percent, or the" / "the past 12 months", bench/layouts.py's en input with 1 s of room tone). The
decoded text is plain data in the first tests (a timestamp inside a word cannot be had from the model on demand);
the last runs the real model on the input where the echo was seen.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import transcripts
from faster_whisper.transcribe import Segment as FwSegment
from faster_whisper.transcribe import Word as FwWord
from fw_segments import fw_segment as segment

from sori_engine import audio as audio_io
from sori_engine import transcriber
from sori_engine.hallucination import normalize
from sori_engine.protocol import ModelConfig, TranscribeParams
from sori_engine.rest_echo import without_echo
from sori_eval.wav import write_wav

SR = transcriber.SR
CALLS = ("earnings22_1_4482311_3_62", "earnings22_3_4483589_261_321")


def texts(segments: list[FwSegment]) -> list[str]:
    return [fw.text for fw in segments]


@pytest.mark.parametrize(
    ("before", "rest", "left"),
    [
        (" or the", [" the past 12 months,", " underlying"], [" past 12 months,", " underlying"]),
        (" 98 percent, or the", [" Or the past"], [" past"]),  # compared without case or punctuation
        (" 지키는 게 좋지요.", [" 좋지요, 그리고"], [" 그리고"]),
        ("されてしまったようです。", ["です", "次に"], ["次に"]),  # unspaced: a segment that only repeats the end
        (" the end", [" ", " the end.", " Next"], [" ", " Next"]),  # the first segment with text
    ],
)
def test_the_words_said_again_at_a_rests_start_go(before: str, rest: list[str], left: list[str]) -> None:
    assert texts(without_echo([segment(t) for t in rest], segment(before))) == left


@pytest.mark.parametrize(
    ("before", "rest"),
    [
        (" 64 billion.", [" and uh,"]),  # new words
        (" and I know", [" now."]),  # a spaced word that ends the one before is not an echo
        ("ようです。", ["ですね、それで"]),  # more than the end said again
        (" one two three four", [" one two three four five"]),  # more than MAX_WORDS: not a timestamp in a word
    ],
)
def test_other_rests_stay_as_they_are(before: str, rest: list[str]) -> None:
    assert texts(without_echo([segment(t) for t in rest], segment(before))) == rest


def test_a_dropped_word_takes_its_timing_with_it() -> None:
    words = [FwWord(start=79.1, end=79.2, word=" the", probability=0.9), FwWord(79.2, 79.5, " past", 0.9)]
    (fw,) = without_echo([segment(" the past", 79.1, 79.5, words=words)], segment(" or the"))
    assert (fw.text, fw.start, [w.word for w in fw.words or ()]) == (" past", 79.2, [" past"])


def test_the_dropped_words_timings_are_those_that_spell_them() -> None:
    # Whisper's words need not be the text's whitespace-separated ones: here "98%," is two of them.
    words = [FwWord(5.0, 5.3, " 98", 0.9), FwWord(5.3, 5.5, "%,", 0.9), FwWord(5.5, 5.8, " or", 0.9)]
    (fw,) = without_echo([segment(" 98%, or", 5.0, 5.8, words=words)], segment(" rate of 98%,"))
    assert (fw.text, fw.start, [w.word for w in fw.words or ()]) == (" or", 5.5, [" or"])


def test_no_rest_of_a_real_call_says_its_first_word_twice(
    testdata: Path, model: dict[str, Any], tmp_path: Path
) -> None:
    # The input where the echo was seen: the two earnings-call clips with 1 s of room tone (-50 dBFS noise, seeded,
    # as bench/layouts.py's t1) between them, at beam 1 (the `whisper` entry). Which words the model writes differs
    # between CPUs; what must hold on any: no segment starts with the word the segment just before it ended with.
    clips = [audio_io.decode(str(testdata / f"en/{name}.wav")) for name in CALLS]
    tone = (np.random.default_rng(0).standard_normal(SR) * 10 ** (-50 / 20)).astype(np.float32)
    wav = write_wav(tmp_path / "call.wav", np.concatenate([clips[0], tone, clips[1], tone]))
    req = TranscribeParams(audio_path=str(wav), model=ModelConfig(**model), language_mode="fixed", language="en")

    segments = transcriber.transcribe(req, lambda _f: None).segments

    text = " ".join(s.text for s in segments)
    assert transcripts.cer(text, " ".join(transcripts.reference(testdata, f"en/{n}.wav") for n in CALLS)) <= 0.15
    for a, b in itertools.pairwise(segments):
        if b.start - a.end < 0.1:  # the rest goes on from where the text before stopped
            assert normalize(a.text.split()[-1]) != normalize(b.text.split()[0]), (a.text, b.text)
