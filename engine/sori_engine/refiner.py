"""The `refine` operation: re-decode given spans of a file with a stronger configuration and score each hypothesis.

For every span the file's audio between `start - pad_s` and `end + pad_s` is decoded again with each configuration
in `decodes` (beam size, patience, the previous span's text as decoder prompt, keyword hotwords). Every hypothesis,
and the span's current text, is then scored the same way: the mean log-probability of its tokens under the
model, by teacher forcing on that span's audio (CTranslate2's `align`). Scoring all texts on
the same audio with the same function makes the scores comparable, which the decoders' own `avg_logprob` is not
(the base decode saw other context). The worker keeps a hypothesis only when it scores better than the current
text and its length is close to it (a hypothesis that stops before the speech does scores well per token).

Request params (docs/engine.md, "refine"):
    audio_path, model (as for transcribe), language (ISO 639-1, the utterance language),
    spans: [{"start": s, "end": s, "text": str, "language": str|null, "candidates": [str]|absent}], pad_s (default 0.3),
    decodes: [{"beam_size": int, "patience": float, "prompt_previous": bool, "num_hypotheses": int}] (default one
    beam-5 decode; [] for none: only the current text and the span's candidates, e.g. an LLM's proposals, are
    scored; num_hypotheses > 1 returns the N best texts of that beam search, each counted as one vote, for an
    N-best rescorer such as the LLM of bench/refine-nbest.ts at e4b031a),
    hotwords: str|null, max_duration_s: float|null
Result: {"spans": [{"current_score": float|null, "hypotheses": [{"text": str, "score": float|null, "votes": int}],
"decoded": [[str]]}]} (a candidate that no decode produced has votes 0; `decoded` holds each decode's distinct texts,
best first, in the order of `decodes`: the worker's agreement rule reads each decode's own best text there)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import audio as audio_io
from . import models
from .errors import bad_request
from .model.interface import SpeechModel
from .pcm import SAMPLE_RATE
from .protocol import ModelConfig, is_number, parse_model

log = logging.getLogger(__name__)

MAX_SPAN_S = 30.0  # one Whisper window: a longer span is not re-decoded (its hypotheses list is empty)
MAX_HYPOTHESES = 16  # N-best per decode: each one is scored by teacher forcing, so N bounds the work


@dataclass(frozen=True)
class Decode:
    beam_size: int = 5
    patience: float = 1.0
    prompt_previous: bool = False
    num_hypotheses: int = 1


@dataclass(frozen=True)
class Span:
    start: float
    end: float
    text: str
    language: str | None
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class RefineParams:
    audio_path: str
    model: ModelConfig
    language: str
    spans: tuple[Span, ...]
    decodes: tuple[Decode, ...]
    pad_s: float = 0.3
    hotwords: str | None = None
    max_duration_s: float | None = None


def parse_refine(params: Mapping[str, Any]) -> RefineParams:
    audio_path = params.get("audio_path")
    language = params.get("language")
    if not isinstance(audio_path, str) or not audio_path:
        raise bad_request("field audio_path must be a non-empty string")
    if not isinstance(language, str) or not language:
        raise bad_request("field language must be a non-empty string")
    raw_spans = params.get("spans")
    if not isinstance(raw_spans, list):
        raise bad_request("field spans must be a list")
    spans = []
    for s in raw_spans:
        if (
            not isinstance(s, dict)
            or not is_number(s.get("start"))
            or not is_number(s.get("end"))
            or not isinstance(s.get("text"), str)
        ):
            raise bad_request("each span must be {start: number, end: number, text: string}")
        if s["end"] < s["start"]:
            raise bad_request("a span ends before it starts")
        lang = s.get("language")
        candidates = s.get("candidates", [])
        if not isinstance(candidates, list) or not all(isinstance(c, str) for c in candidates):
            raise bad_request("span candidates must be a list of strings")
        span_lang = lang if isinstance(lang, str) and lang else None
        spans.append(
            Span(float(s["start"]), float(s["end"]), s["text"], span_lang, tuple(c for c in candidates if c.strip()))
        )
    decodes = []
    raw_decodes = params.get("decodes")
    if raw_decodes is None:
        raw_decodes = [{}]
    if not isinstance(raw_decodes, list):
        raise bad_request("field decodes must be a list")
    for d in raw_decodes:
        if not isinstance(d, dict):
            raise bad_request("each decode must be an object")
        beam = d.get("beam_size", 5)
        patience = d.get("patience", 1.0)
        n_best = d.get("num_hypotheses", 1)
        if not isinstance(beam, int) or isinstance(beam, bool) or beam < 1 or not is_number(patience) or patience <= 0:
            raise bad_request("decode beam_size must be an integer >= 1 and patience a number > 0")
        if not isinstance(n_best, int) or isinstance(n_best, bool) or not 1 <= n_best <= MAX_HYPOTHESES:
            raise bad_request(f"decode num_hypotheses must be an integer from 1 to {MAX_HYPOTHESES}")
        decodes.append(Decode(beam, float(patience), bool(d.get("prompt_previous", False)), n_best))
    pad = params.get("pad_s", 0.3)
    hotwords = params.get("hotwords")
    max_duration = params.get("max_duration_s")
    if not is_number(pad) or pad < 0:
        raise bad_request("field pad_s must be a number >= 0")
    return RefineParams(
        audio_path=audio_path,
        model=parse_model(params.get("model")),
        language=language,
        spans=tuple(spans),
        decodes=tuple(decodes),
        pad_s=float(pad),
        hotwords=hotwords if isinstance(hotwords, str) and hotwords else None,
        max_duration_s=float(max_duration) if is_number(max_duration) else None,
    )


def refine(req: RefineParams, emit_progress: Callable[[float], None]) -> dict[str, Any]:
    """The spans are cut from one decode of the file as it streams (audio.stream), in file order: only the audio
    from the next span's start on is held, never the whole file. A span longer than MAX_SPAN_S is not cut out
    (at most MAX_SPAN_S and one sample of it is read, which is enough to know it is too long)."""
    model = models.get_model(req.model)
    for span in req.spans:
        if (span.language or req.language) not in model.languages:
            raise bad_request(f"unsupported language code for this model: {span.language or req.language}")
    bounds = []
    for i, span in enumerate(req.spans):
        lo = max(0, int((span.start - req.pad_s) * SAMPLE_RATE))
        hi = max(lo, min(int((span.end + req.pad_s) * SAMPLE_RATE), lo + int(MAX_SPAN_S * SAMPLE_RATE) + 1))
        bounds.append(((i, i), (lo, hi)))
    bounds.sort(key=lambda b: b[1][0])
    out: list[dict[str, Any] | None] = [None] * len(req.spans)
    blocks = iter(audio_io.stream(req.audio_path, req.max_duration_s))
    for done, ((i, _), samples) in enumerate(audio_io.cut_spans(blocks, bounds), start=1):
        previous_text = req.spans[i - 1].text if i > 0 else None
        out[i] = _refine_span(model, req, req.spans[i], samples, previous_text)
        emit_progress(done / len(req.spans))
    for _ in blocks:  # the rest of the file is decoded and dropped: an over-long file still fails (audio_too_long)
        pass
    return {"spans": out}


def _refine_span(
    model: SpeechModel, req: RefineParams, span: Span, samples: np.ndarray, previous_text: str | None
) -> dict[str, Any]:
    """Each decode's N best texts and every text's score, from one encoder pass over the span's window that every
    decode and the scoring share (the span is at most one window, so one pass covers it). Timestamps are on in
    the decodes, as in the base pass (SpeechModel.n_best); a score is the mean log-probability of a text's tokens
    by teacher forcing (SpeechModel.align), whose end-of-text token is not scored: a hypothesis that stops early is
    caught by the worker's length check instead."""
    if samples.size == 0 or samples.shape[0] / SAMPLE_RATE > MAX_SPAN_S:
        return {"current_score": None, "hypotheses": [], "decoded": []}
    language = span.language or req.language
    encoded = model.encode(samples)
    votes: dict[str, int] = {}  # distinct hypothesis → how many decodes produced it
    decoded: list[list[str]] = []  # each decode's texts, best first (the worker's vote counts per decode)
    for d in req.decodes:
        prompt = previous_text if d.prompt_previous else None
        n_best = model.n_best(
            encoded,
            language,
            beam_size=max(d.beam_size, d.num_hypotheses),
            patience=d.patience,
            num_hypotheses=d.num_hypotheses,
            prompt=prompt,
            hotwords=req.hotwords,
        )
        decoded.append(list(dict.fromkeys(t for t in n_best if t)))
        for text in decoded[-1]:  # a decode votes once for each distinct text
            votes[text] = votes.get(text, 0) + 1
    for c in span.candidates:
        votes.setdefault(c.strip(), 0)
    texts = [span.text, *votes]
    scores = model.align(encoded, language, texts)
    return {
        "current_score": scores[0],
        "hypotheses": [{"text": t, "score": s, "votes": votes[t]} for t, s in zip(texts[1:], scores[1:], strict=True)],
        "decoded": decoded,
    }
