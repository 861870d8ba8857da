"""Regression: keywords (faster-whisper hotwords) duplicated speech and put it out of order.

With hotwords, whisper-base writes a chunk's text with no timestamps inside it, so the chunk's one segment starts at
the chunk's own start. The batched pass's segments were given back to their chunk by start time, and a start rounded
to 3 decimals fell just before its chunk: the segment went to the previous chunk, and its own chunk, left empty, was
decoded again. The dialogue below, with the rtzr-cli default config plus three keywords, gave 20 utterances and 679
characters against 14 and 498 without keywords.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from conftest import Engine

DIALOGUE = "multi/deeply_ko_dialogue_constructed.wav"  # 69 s, four VAD chunks


def test_hotwords_give_each_chunk_once_in_order(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    reply = engine.call(
        "transcribe",
        {
            "audio_path": str(testdata / DIALOGUE),
            "model": {**model, "beam_size": 5},
            "language_mode": "fixed",
            "language": "ko",
            "word_timestamps": True,
            "hotwords": "홈쇼핑, 심사, 창의性",
        },
    )
    segments = [s for s in reply.result["segments"] if s["text"].strip()]
    starts = [s["start"] for s in segments]
    assert starts == sorted(starts)
    for a, b in itertools.pairwise(segments):
        assert b["start"] >= a["end"] - 0.5, f"overlapping segments: {a['text']!r} / {b['text']!r}"
    texts = [s["text"].strip() for s in segments if len(s["text"].strip()) > 10]
    assert len(texts) == len(set(texts)), f"a segment came out twice: {texts}"
    assert sum(len(s["text"].strip()) for s in segments) < 600  # 490 here; 687 with the duplicates
