"""The `refine` op through the real engine process: hypotheses and comparable scores per span, strict params."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import Engine

KO = "ko/deeply_studioapt_sub100100a00088.wav"  # 다섯 권까지 빌릴 수 있고, 기간은 20일입니다.


def test_refine_scores_current_text_and_hypotheses(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    reply = engine.call(
        "refine",
        {
            "audio_path": str(testdata / KO),
            "model": model,
            "language": "ko",
            "spans": [
                {"start": 0.0, "end": 2.8, "text": "다섯 권까지 빌릴 수 있고 기간은 20일입니다.", "language": "ko"},
                {"start": 0.0, "end": 2.8, "text": "오늘 날씨가 맑습니다", "language": None},
            ],
            "decodes": [{"beam_size": 5}, {"beam_size": 5, "prompt_previous": True}],
        },
    )
    spans = reply.result["spans"]
    assert len(spans) == 2
    for span in spans:
        assert isinstance(span["current_score"], float) and span["current_score"] < 0
        assert 1 <= len(span["hypotheses"]) <= 2
        for h in span["hypotheses"]:
            assert h["text"].strip() and isinstance(h["score"], float)
            assert h["votes"] in (1, 2)
        assert sum(h["votes"] for h in span["hypotheses"]) == 2, "every decode's text is counted once"
    # Scores are comparable on the same audio: text that was not said scores far below the reference text.
    assert spans[1]["current_score"] < spans[0]["current_score"] - 0.5


def test_refine_scores_candidates_without_decoding(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    """decodes [] scores only the current text and the span's candidates (an LLM's proposals): votes 0."""
    said = "다섯 권까지 빌릴 수 있고 기간은 20일입니다."
    reply = engine.call(
        "refine",
        {
            "audio_path": str(testdata / KO),
            "model": model,
            "language": "ko",
            "spans": [
                {"start": 0.0, "end": 2.8, "text": "오늘 날씨가 맑습니다", "language": "ko", "candidates": [said, " "]}
            ],
            "decodes": [],
        },
    )
    span = reply.result["spans"][0]
    assert [h["text"] for h in span["hypotheses"]] == [said]
    assert span["hypotheses"][0]["votes"] == 0
    assert span["hypotheses"][0]["score"] > span["current_score"] + 0.5


def test_refine_rejects_bad_spans(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    for spans in (
        "x",
        [{"start": 1.0, "end": 0.5, "text": "a"}],
        [{"start": 0.0, "text": "a"}],
        [{"start": 0.0, "end": 1.0, "text": "a", "candidates": "b"}],
    ):
        reply = engine.call(
            "refine", {"audio_path": str(testdata / KO), "model": model, "language": "ko", "spans": spans}
        )
        assert reply.error_code == "bad_request"


def test_refine_missing_audio_is_a_decode_failure(engine: Engine, model: dict[str, Any], tmp_path: Path) -> None:
    reply = engine.call(
        "refine",
        {
            "audio_path": str(tmp_path / "gone.wav"),
            "model": model,
            "language": "ko",
            "spans": [{"start": 0, "end": 1, "text": "a"}],
        },
    )
    assert reply.error_code == "audio_decode_failed"
