"""A batched pass's segments go back to the clip they were decoded in (decode.rounds.decode_once). The model yields
the segments of all clips of a pass in one stream; each says which clip it was decoded in (the faster-whisper
backend finds it by the `seek` it carries, its clip's start in feature frames). Assigning by a segment's times
instead put a last segment whose end ran past its clip's end (the model's last timestamp can point into the padding)
into the next clip, and mapped its text with that clip's speech regions, seconds away (bench/rtf.py's ko input).
Such a segment now also ends where its clip's speech does, and is dropped when less than a word's worth of speech
follows the segment before it (verdicts.per_window.said_past_end). The tests with `fake` stand in for the model's
output (a last timestamp in the padding cannot be had from the model on demand): what they test is sori's mapping
of it. The other runs the real model.
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from fw_segments import fw_segment

from sori_engine import audio as audio_io
from sori_engine.decode import rounds
from sori_engine.decode_options import DEFAULT
from sori_engine.model.interface import Decoded, Prompting
from sori_engine.vad import FRAME_S
from sori_engine.verdicts import per_file

SR = audio_io.SAMPLE_RATE
LIBRI = "en/picovoice_leopard_test_en_librispeech.wav"
JFK = "en/whisper_jfk.flac"


def segment(clip: int, start: float, end: float, text: str) -> Decoded:
    return fw_segment(text, start, end, clip=clip)


def test_a_segment_past_its_clips_end_stays_with_its_clip() -> None:
    # Two chunks of window audio: speech at 0-10 s and at 30-40 s, laid end to end as clips 0-10 s and 10-20 s.
    chunks = [[{"start": 0, "end": 10 * SR}], [{"start": 30 * SR, "end": 40 * SR}]]
    # Clip 0's second segment ends at 12.5 s, past its clip (its middle, 10.75 s, lies in clip 1); the first segment
    # of clip 1 starts at its start rounded to 3 decimals.
    fake = [
        segment(0, 0.0, 8.0, "first"),
        segment(0, 9.0, 12.5, "runs past its clip"),
        segment(1, 10.0, 15.0, "second clip"),
    ]

    out = _decode_once_on(fake, chunks, 40 * SR)
    assert [[fw.text for fw in segs] for segs in out] == [["first", "runs past its clip"], ["second clip"]]
    # In window time: clip 0's segments stay near 0-10 s, clip 1's start at 30 s.
    assert out[0][1].start == pytest.approx(9.0)
    assert out[1][0].start == pytest.approx(30.0)
    # The segment past its clip ends where its clip's speech ends (10 s), not 2.5 s into the cut-out silence.
    assert out[0][1].end == pytest.approx(10.0)
    assert (out[1][0].start, out[1][0].end) == (pytest.approx(30.0), pytest.approx(35.0))


def test_text_timed_past_its_clips_end_needs_speech_of_its_own() -> None:
    # One chunk of two regions (0-6 s and 20-24 s of the window: a 10 s clip); speech up to 23.5 s, then the VAD's
    # padding. A last segment runs past the clip's end: a real sentence over the speech of 20-23.5 s, a word over
    # the padding alone (as "엉무화의료" after "좋지요" on ko26 laid out with room tone), the same word where the
    # speech map has speech under it, and a short reply timed late.
    chunks = [[{"start": 0, "end": 6 * SR}, {"start": 20 * SR, "end": 24 * SR}]]
    probs = np.zeros(round(40 / FRAME_S), dtype=np.float32)
    probs[: round(6 / FRAME_S)] = 0.9
    probs[round(20 / FRAME_S) : round(23.5 / FRAME_S)] = 0.9
    speech = per_file.SpeechMap(probs)
    sentence = [segment(0, 0.0, 6.0, "앞 문장입니다."), segment(0, 6.0, 10.8, "마지막 문장은 끝까지 말했어요.")]
    invented = [segment(0, 0.0, 9.4, "앞 문장입니다. 마지막 문장"), segment(0, 9.6, 11.2, "엉무화의료")]

    out = _decode_once_on(sentence, chunks, 40 * SR, speech)
    assert [fw.text for fw in out[0]] == ["앞 문장입니다.", "마지막 문장은 끝까지 말했어요."]
    assert out[0][1].end == pytest.approx(24.0)
    out = _decode_once_on(invented, chunks, 40 * SR, speech)
    assert [fw.text for fw in out[0]] == ["앞 문장입니다. 마지막 문장"]
    probs[round(23.6 / FRAME_S) : round(24 / FRAME_S)] = 0.9  # a word said, after all
    out = _decode_once_on(invented, chunks, 40 * SR, speech)
    assert [fw.text for fw in out[0]] == ["앞 문장입니다. 마지막 문장", "엉무화의료"]
    # A short last reply said after a pause and timed late: the speech it owns is counted from the end of the
    # segment before it (22.5 s), as no other segment's.
    probs[round(23.5 / FRAME_S) :] = 0.0
    probs[round(22.0 / FRAME_S) : round(23.5 / FRAME_S)] = 0.0
    probs[round(22.7 / FRAME_S) : round(23.0 / FRAME_S)] = 0.9
    reply = [segment(0, 0.0, 8.5, "앞 문장입니다. 마지막 문장"), segment(0, 9.7, 10.5, "네.")]
    out = _decode_once_on(reply, chunks, 40 * SR, speech)
    assert [fw.text for fw in out[0]] == ["앞 문장입니다. 마지막 문장", "네."]
    assert (out[0][1].start, out[0][1].end) == (pytest.approx(23.7), pytest.approx(24.0))
    out = _decode_once_on(invented, chunks, 40 * SR)  # no speech map: only the times are kept inside
    assert [fw.end for fw in out[0]] == [pytest.approx(23.4), pytest.approx(24.0)]


def _decode_once_on(
    fake: list[Decoded],
    chunks: list[list[dict]],
    samples: int,
    speech: per_file.SpeechMap | None = None,
) -> list[list[Decoded]]:
    """decode.rounds.decode_once with the batched pass's output stood in for by (fresh copies of) `fake`."""
    fake = [replace(fw) for fw in fake]  # decode_once moves and clips the segments it is given

    def batched(*_args: Any, **_kwargs: Any) -> list[Decoded]:
        return fake

    model = SimpleNamespace(max_tokens=448)
    settings = rounds.Settings(model, Prompting("ko", 5, False), DEFAULT, batched=batched)  # type: ignore[arg-type]
    job = rounds.Job(np.zeros(samples, dtype=np.float32), chunks, speech)
    return rounds.decode_once(settings, [job], [rounds.Item(0, c) for c in chunks], False)
