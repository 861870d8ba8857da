"""A batched pass's segments go back to the clip they were decoded in (transcriber._decode_once).

The pipeline yields the segments of all clips of a pass in one stream; each carries `seek`, its clip's start in
feature frames. Assigning by a segment's times instead put a last segment whose end ran past its clip's end (the
model's last timestamp can point into the padding) into the next clip, and mapped its text with that clip's speech
regions, seconds away (bench/rtf.py's ko input). faster-whisper's output is stood in for here: what is tested is
sori's mapping of it, not the model.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from faster_whisper.transcribe import Segment as FwSegment

from sori_engine import transcriber
from sori_engine.protocol import ModelConfig, TranscribeParams

SR = transcriber.SR


def segment(seek: int, start: float, end: float, text: str) -> FwSegment:
    return FwSegment(
        id=0,
        seek=seek,
        start=start,
        end=end,
        text=text,
        tokens=[],
        avg_logprob=-0.2,
        compression_ratio=1.2,
        no_speech_prob=0.01,
        words=None,
        temperature=0.0,
    )


def test_a_segment_past_its_clips_end_stays_with_its_clip(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two chunks of window audio: speech at 0-10 s and at 30-40 s, laid end to end as clips 0-10 s and 10-20 s.
    chunks = [[{"start": 0, "end": 10 * SR}], [{"start": 30 * SR, "end": 40 * SR}]]
    # Clip 0's second segment ends at 12.5 s, past its clip (its middle, 10.75 s, lies in clip 1); the first segment
    # of clip 1 starts at its start rounded to 3 decimals.
    fake = [
        segment(0, 0.0, 8.0, "first"),
        segment(0, 9.0, 12.5, "runs past its clip"),
        segment(1000, 10.0, 15.0, "second clip"),
    ]

    out = _decode_once_on(monkeypatch, fake, chunks, 40 * SR)
    assert [[fw.text for fw in segs] for segs in out] == [["first", "runs past its clip"], ["second clip"]]
    # In window time: clip 0's segments stay near 0-10 s, clip 1's start at 30 s.
    assert out[0][1].start == pytest.approx(9.0)
    assert out[1][0].start == pytest.approx(30.0)


def test_a_clip_that_starts_on_a_frame_boundary_keeps_its_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    # Chunks of 30, 30, 14.32 and 5 s of speech: laid end to end, the last clip starts at 74.32 s, and the pipeline
    # computes its seek as int(74.32 * 100) = 7431 (74.32 * 100 is 7431.999... in floating point), not 7432.
    sizes = [30 * SR, 30 * SR, int(14.32 * SR), 5 * SR]
    chunks, pos = [], 0
    for size in sizes:
        chunks.append([{"start": pos, "end": pos + size}])
        pos += size + SR  # a second of silence between chunks in window time
    assert int(74.32 * 100) == 7431
    fake = [
        segment(0, 0.0, 29.0, "first"),
        segment(3000, 30.0, 59.0, "second"),
        segment(6000, 60.0, 74.0, "third"),
        segment(7431, 74.32, 79.0, "fourth"),
    ]
    out = _decode_once_on(monkeypatch, fake, chunks, pos)
    assert [[fw.text for fw in segs] for segs in out] == [["first"], ["second"], ["third"], ["fourth"]]
    assert out[3][0].start == pytest.approx(74.32 + 3)  # in window time: after three seconds of silence


def _decode_once_on(
    monkeypatch: pytest.MonkeyPatch, fake: list[FwSegment], chunks: list[list[dict]], samples: int
) -> list[list[FwSegment]]:
    """transcriber._decode_once with the pipeline's output stood in for by `fake`."""

    class Pipeline:
        def __init__(self, *_args: Any) -> None:
            pass

        def transcribe(self, *_args: Any, **_kwargs: Any) -> tuple[list[FwSegment], None]:
            return fake, None

    monkeypatch.setattr(transcriber, "KeepTailPipeline", Pipeline)
    model = SimpleNamespace(frames_per_second=100)
    req = TranscribeParams(audio_path="", model=ModelConfig(path="", beam_size=5), language_mode="fixed", language="ko")
    return transcriber._decode_once(
        model,  # type: ignore[arg-type]
        np.zeros(samples, dtype=np.float32),
        chunks,
        "ko",
        req,
        lambda _s: None,
        False,
    )
