"""Decoded segments as plain data, for tests of what sori does with a decode's output: a timestamp inside a word or
past a clip's end cannot be had from the model on demand."""

from __future__ import annotations

from sori_engine.model.interface import Decoded, DecodedWord


def fw_segment(
    text: str,
    start: float = 0.0,
    end: float = 1.0,
    *,
    clip: int = 0,
    words: list[DecodedWord] | None = None,
    avg_logprob: float = -0.2,
    compression_ratio: float = 1.2,
) -> Decoded:
    return Decoded(
        start=start,
        end=end,
        text=text,
        tokens=[],
        avg_logprob=avg_logprob,
        no_speech_prob=0.01,
        compression_ratio=compression_ratio,
        words=words,
        clip=clip,
    )
