"""faster-whisper segments as plain data, for tests of what sori does with a decode's output: a timestamp inside a
word or past a clip's end cannot be had from the model on demand."""

from __future__ import annotations

from sori_engine.decode.fw import FwSegment, FwWord


def fw_segment(
    text: str,
    start: float = 0.0,
    end: float = 1.0,
    *,
    seek: int = 0,
    words: list[FwWord] | None = None,
    avg_logprob: float = -0.2,
    compression_ratio: float = 1.2,
) -> FwSegment:
    return FwSegment(
        id=0,
        seek=seek,
        start=start,
        end=end,
        text=text,
        tokens=[],
        avg_logprob=avg_logprob,
        compression_ratio=compression_ratio,
        no_speech_prob=0.01,
        words=words,
        temperature=0.0,
    )
