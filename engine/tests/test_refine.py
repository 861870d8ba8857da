"""The `refine` op through the real engine process: hypotheses and comparable scores per span, strict params."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import Engine

KO = "ko/deeply_studioapt_sub100100a00088.wav"  # 다섯 권까지 빌릴 수 있고, 기간은 20일입니다.
SAID = "다섯 권까지 빌릴 수 있고 기간은 20일입니다."


def refine_ko(engine: Engine, model: dict[str, Any], testdata: Path, spans: list[dict], decodes: list[dict]) -> Any:
    """The refine op on the Korean clip, in Korean."""
    params = {"audio_path": str(testdata / KO), "model": model, "language": "ko", "spans": spans, "decodes": decodes}
    return engine.call("refine", params)


def test_refine_scores_current_text_and_hypotheses(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    spans = [
        {"start": 0.0, "end": 2.8, "text": SAID, "language": "ko"},
        {"start": 0.0, "end": 2.8, "text": "오늘 날씨가 맑습니다", "language": None},
    ]
    reply = refine_ko(engine, model, testdata, spans, [{"beam_size": 5}, {"beam_size": 5, "prompt_previous": True}])
    spans = reply.result["spans"]
    assert len(spans) == 2
    for span in spans:
        assert isinstance(span["current_score"], float) and span["current_score"] < 0
        assert 1 <= len(span["hypotheses"]) <= 2
        for h in span["hypotheses"]:
            assert h["text"].strip() and isinstance(h["score"], float)
            assert h["votes"] in (1, 2)
        assert sum(h["votes"] for h in span["hypotheses"]) == 2, "every decode's text is counted once"
        assert [len(texts) for texts in span["decoded"]] == [1, 1], "each decode's own text, in order"
        assert {t for texts in span["decoded"] for t in texts} == {h["text"] for h in span["hypotheses"]}
    # Scores are comparable on the same audio: text that was not said scores far below the reference text.
    assert spans[1]["current_score"] < spans[0]["current_score"] - 0.5


def test_refine_scores_candidates_without_decoding(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    """decodes [] scores only the current text and the span's candidates (an LLM's proposals): votes 0."""
    spans = [{"start": 0.0, "end": 2.8, "text": "오늘 날씨가 맑습니다", "language": "ko", "candidates": [SAID, " "]}]
    reply = refine_ko(engine, model, testdata, spans, [])
    span = reply.result["spans"][0]
    assert [h["text"] for h in span["hypotheses"]] == [SAID]
    assert span["hypotheses"][0]["votes"] == 0
    assert span["hypotheses"][0]["score"] > span["current_score"] + 0.5


def test_refine_returns_the_n_best_of_one_beam_search(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    """num_hypotheses > 1: the beam's N best texts (for an N-best rescorer), distinct, each scored, one vote each.
    Hypotheses that differ only in their timestamp tokens are one text: on this span beam 4 / N 4 gives a single
    text at 0, 1 and 2 threads, beam 8 / N 8 three."""
    span = {"start": 0.0, "end": 2.8, "text": SAID, "language": "ko"}
    reply = refine_ko(engine, model, testdata, [span], [{"beam_size": 8, "num_hypotheses": 8}])
    hypotheses = reply.result["spans"][0]["hypotheses"]
    texts = [h["text"] for h in hypotheses]
    assert 2 <= len(texts) <= 8 and len(set(texts)) == len(texts)
    for h in hypotheses:
        assert "<|" not in h["text"], "timestamp tokens are dropped"
        assert isinstance(h["score"], float) and h["votes"] == 1
    reply = refine_ko(engine, model, testdata, [span], [{"beam_size": 4, "num_hypotheses": 17}])
    assert reply.error_code == "bad_request"


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


def test_refine_spans_in_any_order_score_as_each_alone(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    """The spans are cut from one streamed decode in order of their start, whatever order the request gives them
    in: each span's scores are those of the span sent alone, a span reaching past the file's end is cut short there
    (45 s asked, the 3 s clip scored), one wholly past it gets none, and the answer keeps the request's order."""
    spans = [
        {"start": 1.0, "end": 2.8, "text": "기간은 20일입니다", "language": "ko"},
        {"start": 0.0, "end": 1.3, "text": "다섯 권까지", "language": "ko"},
        {"start": 0.0, "end": 45.0, "text": SAID, "language": "ko"},
        {"start": 100.0, "end": 102.0, "text": SAID, "language": "ko"},
        {"start": 0.0, "end": 2.8, "text": SAID, "language": "ko"},
    ]
    together = refine_ko(engine, model, testdata, spans, []).result["spans"]
    assert [s["current_score"] is None for s in together] == [False, False, False, True, False]
    for span, got in zip(spans, together, strict=True):
        alone = refine_ko(engine, model, testdata, [span], []).result["spans"][0]
        assert got == alone
