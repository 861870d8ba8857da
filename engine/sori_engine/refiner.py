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
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import audio as audio_io
from . import models
from .audio import SAMPLE_RATE
from .decode.fw import Tokenizer, WhisperModel, get_suppressed_tokens, languages, pad_or_trim
from .protocol import ModelConfig, bad_request, is_number, parse_model

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
        if (span.language or req.language) not in languages(model):
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
    model: WhisperModel, req: RefineParams, span: Span, samples: np.ndarray, previous_text: str | None
) -> dict[str, Any]:
    if samples.size == 0 or samples.shape[0] / SAMPLE_RATE > MAX_SPAN_S:
        return {"current_score": None, "hypotheses": [], "decoded": []}
    language = span.language or req.language
    tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=language)
    features = model.feature_extractor(samples)
    encoder_output = model.encode(_pad(features, model))
    num_frames = min(features.shape[-1], model.feature_extractor.nb_max_frames) // 2
    votes: dict[str, int] = {}  # distinct hypothesis → how many decodes produced it
    decoded: list[list[str]] = []  # each decode's texts, best first (the worker's vote counts per decode)
    for d in req.decodes:
        prompt = previous_text if d.prompt_previous else None
        texts_of_decode = [t for t in _n_best(model, tokenizer, encoder_output, d, prompt, req.hotwords) if t]
        decoded.append(list(dict.fromkeys(texts_of_decode)))
        for text in decoded[-1]:  # a decode votes once for each distinct text
            votes[text] = votes.get(text, 0) + 1
    for c in span.candidates:
        votes.setdefault(c.strip(), 0)
    texts = [span.text, *votes]
    scores = _score(model, tokenizer, encoder_output, num_frames, texts)
    return {
        "current_score": scores[0],
        "hypotheses": [{"text": t, "score": s, "votes": votes[t]} for t, s in zip(texts[1:], scores[1:], strict=True)],
        "decoded": decoded,
    }


def _pad(features: np.ndarray, model: WhisperModel) -> Any:
    return pad_or_trim(features[..., : model.feature_extractor.nb_max_frames])


def _n_best(
    model: WhisperModel,
    tokenizer: Tokenizer,
    encoder_output: Any,
    d: Decode,
    prompt: str | None,
    hotwords: str | None,
) -> list[str]:
    """The N best texts of one beam search over the span's window, best first (N = 1: the decode's text).

    CTranslate2's `generate` on the span's encoder output, which every decode and the scoring share (one encoder pass
    per span, not one per decode), with the prompt and token suppression faster-whisper's `transcribe` would use.
    Timestamps are on, as in the base pass: the decoder then ends the text where the speech ends (a no-timestamps
    decode tends to stop early, and its per-token score flatters that); the timestamp tokens are dropped from each
    text. The span is at most one 30 s window, so one call covers it."""
    previous = tokenizer.encode(" " + prompt.strip()) if prompt else []
    tokens = model.get_prompt(tokenizer, previous, without_timestamps=False, hotwords=None if prompt else hotwords)
    result = model.model.generate(
        encoder_output,
        [tokens],
        beam_size=max(d.beam_size, d.num_hypotheses),
        patience=d.patience,
        num_hypotheses=d.num_hypotheses,
        max_length=model.max_length,
        suppress_blank=True,
        suppress_tokens=list(get_suppressed_tokens(tokenizer, [-1])),
        max_initial_timestamp_index=50,  # 1.0 s, faster-whisper's default
    )[0]
    texts = []
    for ids in result.sequences_ids:
        text = tokenizer.decode([t for t in ids if t < tokenizer.eot]).strip()
        texts.append(" ".join(text.split()))
    return texts


def _score(
    model: WhisperModel, tokenizer: Tokenizer, encoder_output: Any, num_frames: int, texts: list[str]
) -> list[float | None]:
    """Mean log-probability of each text's tokens given the span's audio (teacher forcing, no timestamps).

    The end-of-text token is not scored: CTranslate2's `align` reports no usable probability for it, so a
    hypothesis that stops early is caught by the worker's length check instead."""
    token_lists = [tokenizer.encode(" " + t.strip()) for t in texts]
    scores: list[float | None] = []
    for tokens in token_lists:
        if not tokens:
            scores.append(None)
            continue
        start = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
        result = model.model.align(encoder_output, start, [tokens], num_frames)[0]
        probs = np.asarray(result.text_token_probs, dtype=np.float64)
        if probs.size == 0:
            scores.append(None)
            continue
        value = float(np.mean(np.log(np.clip(probs, 1e-12, 1.0))))
        scores.append(round(value, 4) if math.isfinite(value) else None)
    return scores
