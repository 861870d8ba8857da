"""The faster-whisper (CTranslate2) backend of `SpeechModel`: the one implementation of the model interface.

`FasterWhisperModel` wraps a `WhisperModel` and turns faster-whisper's segments and words into sori's records
(`Decoded`, `DecodedWord`) at its edge. What it copies of faster-whisper's internals (the batched pipeline's
forward with the tail kept, each clip encoded in its own window) is `faster_whisper_pipeline.py`, which checks the
faster-whisper release on import.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import ctranslate2
import numpy as np
from faster_whisper import WhisperModel
from faster_whisper.audio import pad_or_trim
from faster_whisper.tokenizer import Tokenizer
from faster_whisper.transcribe import Segment as FwSegment
from faster_whisper.transcribe import get_suppressed_tokens

from ..errors import MODEL_LOAD_FAILED, EngineError
from .faster_whisper_pipeline import (
    KeepTailPipeline,
    encode_clip_by_clip,
    encoder_frames,
    seek_of_clip,
    silence_level,
)
from .interface import Decoded, DecodedWord, Prompting, SpeechModel

__all__ = ["FasterWhisperModel"]

# Files that must be present so that WhisperModel never falls back to the Hugging Face Hub: without tokenizer.json
# it calls Tokenizer.from_pretrained, and a path that is not a directory is taken for a hub model id.
REQUIRED_FILES = ("model.bin", "config.json", "tokenizer.json")


@dataclass(frozen=True)
class Encoded:
    """One window's encoder output, and how many of its positions hold the audio (for `align`)."""

    output: Any  # ctranslate2.StorageView
    positions: int


class FasterWhisperModel(SpeechModel):
    def __init__(self, model: WhisperModel) -> None:
        self.whisper = model
        # faster-whisper's `supported_languages` is its fixed list of 100 (large-v3's, with "yue") for any
        # multilingual model: base has no "yue" token, and was decoded with no language token at all.
        self.languages = [
            c for c in model.supported_languages if model.hf_tokenizer.token_to_id(f"<|{c}|>") is not None
        ]
        self.max_tokens = model.max_length
        self.window_frames = model.feature_extractor.nb_max_frames

    @classmethod
    def load(
        cls, path: str, device: str, compute_type: str, cpu_threads: int, inter_threads: int = 1
    ) -> FasterWhisperModel:
        if not os.path.isdir(path):
            raise EngineError(MODEL_LOAD_FAILED, f"model directory not found: {path}")
        missing = [f for f in REQUIRED_FILES if not os.path.isfile(os.path.join(path, f))]
        if missing:
            raise EngineError(
                MODEL_LOAD_FAILED, f"not a CTranslate2 Whisper model ({', '.join(missing)} missing): {path}"
            )
        try:
            # num_workers: CTranslate2's inter_threads, passes of this model run at once on one copy of its weights.
            model = WhisperModel(
                path,
                device=device,
                compute_type=compute_type,
                cpu_threads=cpu_threads,
                num_workers=inter_threads,
                local_files_only=True,
            )
        except Exception as e:  # ctranslate2 raises RuntimeError/ValueError for bad files, devices and compute types
            raise EngineError(MODEL_LOAD_FAILED, f"cannot load model {path}: {e}") from e
        return cls(model)

    def frames_of(self, seconds: float) -> float:
        fe = self.whisper.feature_extractor
        return seconds * fe.sampling_rate / fe.hop_length

    def encoder_frames(self, durations_s: list[float], margin_s: float, min_s: float) -> int:
        return encoder_frames(durations_s, self.window_frames, self.whisper, margin_s, min_s)

    def decode_clips(
        self,
        audio: np.ndarray,
        clips: list[tuple[float, float]],
        prompting: Prompting,
        *,
        batch_size: int,
        window_frames: int | None,
        margin_s: float,
        min_s: float,
        max_new_tokens: int | None = None,
    ) -> Iterator[Decoded]:
        segments, _info = KeepTailPipeline(self.whisper, window_frames, margin_s, min_s).transcribe(
            audio,
            **_arguments(prompting),
            clip_timestamps=[{"start": a, "end": b} for a, b in clips],  # the chunks; its own VAD is not run
            without_timestamps=False,  # timestamp tokens split a chunk into sentence-sized segments
            batch_size=batch_size,
            max_new_tokens=max_new_tokens,
        )
        # A segment's clip is found by the `seek` it carries: that clip's start in feature frames, computed as the
        # pipeline computes it. Not by its times: a clip's first segment starts at the clip's start rounded to 3
        # decimals, which can fall just before it, and a last segment can run past its clip's end (Whisper's last
        # timestamp may point into the padding). Nor by comparing `seek` with the starts: a clip starting on a
        # frame boundary (74.32 s) has seek 7431 by float rounding.
        clip_of = {seek_of_clip(a, self.whisper.frames_per_second): i for i, (a, _b) in enumerate(clips)}
        return (_decoded(fw, clip_of[fw.seek]) for fw in segments)

    def decode_sequential(
        self,
        audio: np.ndarray,
        prompting: Prompting,
        *,
        temperatures: list[float],
        log_prob_threshold: float,
        no_speech_threshold: float,
        compression_ratio_threshold: float,
        seed: int,
    ) -> list[Decoded]:
        ctranslate2.set_random_seed(seed)
        segments, _info = self.whisper.transcribe(
            audio,
            **_arguments(prompting),
            # Conditioning on the previous window's text is what makes Whisper loop on a hallucination; without it
            # a bad window stays a bad window.
            condition_on_previous_text=False,
            vad_filter=False,  # `audio` is already speech only
            temperature=temperatures,
            log_prob_threshold=log_prob_threshold,
            no_speech_threshold=no_speech_threshold,
            compression_ratio_threshold=compression_ratio_threshold,
        )
        return [_decoded(fw, 0) for fw in segments]

    def detect_language(self, audio: np.ndarray) -> list[tuple[str, float]]:
        # WhisperModel.detect_language is not used because for 30 s or more of input its feature extractor yields
        # one frame more than a window, and when the first window is not confident it reports the probabilities of
        # that near-empty second window.
        model = self.whisper
        fe = model.feature_extractor
        features = fe(audio[: fe.n_samples])[..., : fe.nb_max_frames]
        encoder_output = model.encode(pad_or_trim(features))
        results = model.model.detect_language(encoder_output)[0]  # [("<|en|>", p), ...], highest first
        return [(token[2:-2], float(p)) for token, p in results]

    def greedy_texts(
        self,
        audios: list[np.ndarray],
        window_frames: int,
        *,
        language: str,
        initial_prompt: str | None,
        hotwords: str | None,
        max_new_tokens: int,
    ) -> list[tuple[str, float, float]]:
        # avg_logprob as faster-whisper computes it (length penalty 1); max_new_tokens capped at what Whisper's
        # context leaves after the prompt.
        model = self.whisper
        tokenizer = self._tokenizer(language)
        previous = tokenizer.encode(" " + initial_prompt.strip()) if initial_prompt else []
        prompt = model.get_prompt(tokenizer, previous, without_timestamps=True, hotwords=hotwords)
        features = np.stack([self._silence_padded_features(a, window_frames) for a in audios])
        encoded = encode_clip_by_clip(model, features)
        new_tokens = min(model.max_length - len(prompt), max_new_tokens)
        results = model.model.generate(
            encoded,
            [prompt] * len(audios),
            beam_size=1,
            max_length=len(prompt) + new_tokens,
            suppress_blank=True,
            suppress_tokens=list(get_suppressed_tokens(tokenizer, [-1])),
            return_scores=True,
            return_no_speech_prob=True,
        )
        out = []
        for r in results:
            tokens = [t for t in r.sequences_ids[0] if t < tokenizer.eot]
            text = tokenizer.decode(tokens).strip()
            out.append((text, r.scores[0] * len(tokens) / (len(tokens) + 1), r.no_speech_prob))
        return out

    def encode(self, audio: np.ndarray) -> Encoded:
        fe = self.whisper.feature_extractor
        features = fe(audio)
        output = self.whisper.encode(pad_or_trim(features[..., : fe.nb_max_frames]))
        return Encoded(output, min(features.shape[-1], fe.nb_max_frames) // 2)

    def n_best(
        self,
        encoded: Any,
        language: str,
        *,
        beam_size: int,
        patience: float,
        num_hypotheses: int,
        prompt: str | None,
        hotwords: str | None,
    ) -> list[str]:
        # Timestamps on, as in the batched pass: the decoder then ends the text where the speech ends (a
        # no-timestamps decode tends to stop early, and its per-token score flatters that); the timestamp tokens are
        # dropped from each text. Prompt and suppression as faster-whisper's `transcribe` would use them.
        model = self.whisper
        tokenizer = self._tokenizer(language)
        previous = tokenizer.encode(" " + prompt.strip()) if prompt else []
        tokens = model.get_prompt(tokenizer, previous, without_timestamps=False, hotwords=None if prompt else hotwords)
        result = model.model.generate(
            encoded.output,
            [tokens],
            beam_size=beam_size,
            patience=patience,
            num_hypotheses=num_hypotheses,
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

    def align(self, encoded: Any, language: str, texts: list[str]) -> list[float | None]:
        # The end-of-text token is not scored: CTranslate2's `align` reports no usable probability for it.
        tokenizer = self._tokenizer(language)
        scores: list[float | None] = []
        for text in texts:
            tokens = tokenizer.encode(" " + text.strip())
            if not tokens:
                scores.append(None)
                continue
            start = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
            result = self.whisper.model.align(encoded.output, start, [tokens], encoded.positions)[0]
            probs = np.asarray(result.text_token_probs, dtype=np.float64)
            if probs.size == 0:
                scores.append(None)
                continue
            value = float(np.mean(np.log(np.clip(probs, 1e-12, 1.0))))
            scores.append(round(value, 4) if math.isfinite(value) else None)
        return scores

    def _tokenizer(self, language: str) -> Tokenizer:
        model = self.whisper
        return Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=language)

    def _silence_padded_features(self, audio: np.ndarray, frames: int) -> np.ndarray:
        """Log-mel features of `audio` in a window of `frames` frames, padded with its `silence_level`."""
        feats = self.whisper.feature_extractor(audio)[:, :frames]
        out = np.empty((feats.shape[0], frames), dtype=np.float32)
        out[:, : feats.shape[1]] = feats
        out[:, feats.shape[1] :] = silence_level(feats) if feats.size else 0.0
        return out


def _arguments(p: Prompting) -> dict[str, Any]:
    """WhisperModel.transcribe's and BatchedInferencePipeline.transcribe's arguments for a prompting."""
    return {
        "language": p.language,
        "task": "transcribe",
        "beam_size": p.beam_size,
        "word_timestamps": p.word_timestamps,
        "initial_prompt": p.initial_prompt,
        "hotwords": p.hotwords,
    }


def _decoded(fw: FwSegment, clip: int) -> Decoded:
    words = None if fw.words is None else [DecodedWord(w.start, w.end, w.word, w.probability) for w in fw.words]
    return Decoded(
        start=fw.start,
        end=fw.end,
        text=fw.text,
        tokens=list(fw.tokens),
        avg_logprob=fw.avg_logprob,
        no_speech_prob=fw.no_speech_prob,
        compression_ratio=fw.compression_ratio,
        words=words,
        clip=clip,
    )
