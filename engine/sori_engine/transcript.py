"""A transcript's records: segments and their words in file time, with their JSON form (docs/engine.md,
"transcribe"). Plain data that the stages make and the protocol sends, so neither imports the other."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Word:
    start: float
    end: float
    text: str
    probability: float

    def to_json(self) -> dict[str, Any]:
        return {
            "start": json_time(self.start),
            "end": json_time(self.end),
            "text": self.text,
            "probability": json_score(self.probability),
        }


@dataclass(frozen=True)
class Segment:
    start: float
    end: float
    text: str
    language: str
    avg_logprob: float
    no_speech_prob: float
    words: tuple[Word, ...] | None = None  # None: word timestamps were not requested

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "start": json_time(self.start),
            "end": json_time(self.end),
            "text": self.text,
            "language": self.language,
            "avg_logprob": json_score(self.avg_logprob),
            "no_speech_prob": json_score(self.no_speech_prob),
        }
        if self.words is not None:
            out["words"] = [w.to_json() for w in self.words]
        return out


def json_time(seconds: float) -> float:
    """Times to the millisecond: the worker converts to integer ms anyway, and it keeps the lines short."""
    return round(float(seconds), 3)


def json_score(value: float) -> float | None:
    """Scores to 4 decimals; a non-finite score (avg_logprob can be -inf) becomes null, since JSON has no inf."""
    value = float(value)
    return round(value, 4) if math.isfinite(value) else None
