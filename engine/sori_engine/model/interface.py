"""The one interface between sori's decoding and a speech model (docs/engine.md, "The model interface").

Every stage above it (the batched rounds, language detection, streaming interims, refinement) reaches the model
only through `SpeechModel` and works on the plain records here; a backend turns its library's objects into them at
its edge. faster-whisper on CTranslate2 is the one backend (`faster_whisper_backend.py`); a new model family is one
new module with one new subclass, and `sori_engine.models` loading it. Like whisper_streaming's `ASRBase`: the
backend imports its library, nothing above it does.

Times a backend returns are seconds of the audio it was given; the stages move them (in place: the records are
mutable for that, as faster-whisper's are).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class DecodedWord:
    start: float
    end: float
    word: str  # as the model wrote it, leading space included (" country"; none between Japanese characters)
    probability: float


@dataclass
class Decoded:
    """One segment of decoded text: a sentence or so, between two timestamps of the model."""

    start: float
    end: float
    text: str
    tokens: list[int]  # the model's token ids of `text` (a rest's token cap counts them)
    avg_logprob: float  # of the pass that wrote it (a batched pass: one value for its whole clip)
    no_speech_prob: float  # the model's probability that the clip holds no speech
    compression_ratio: float  # of `text` (zlib): high is a loop
    words: list[DecodedWord] | None = None  # None: words were not asked for
    clip: int = 0  # the index, among the clips of one `decode_clips` call, of the clip it was decoded in


@dataclass(frozen=True)
class Prompting:
    """What a decode is asked for besides its audio: the same for every clip of a batch."""

    language: str  # a language code the model knows (`SpeechModel.languages`)
    beam_size: int  # 1: greedy
    word_timestamps: bool  # words with times
    initial_prompt: str | None = None  # text before the audio, as the decoder's context
    hotwords: str | None = None  # words to favour, used without a prompt


class SpeechModel(ABC):
    """A loaded speech model: an encoder over log-mel frames and a decoder over tokens, Whisper's shape. One per
    (directory, device, compute type, threads), held by `sori_engine.models` for the process's life."""

    languages: list[str]  # the language codes it has a token for
    max_tokens: int  # the decoder's context, prompt included
    window_frames: int  # encoder frames of its whole window (Whisper: 3,000, 30 s)

    @abstractmethod
    def frames_of(self, seconds: float) -> float:
        """Encoder frames of `seconds` of 16 kHz audio (not rounded)."""

    @abstractmethod
    def encoder_frames(self, durations_s: list[float], margin_s: float, min_s: float) -> int:
        """The encoder window clips of these lengths are decoded in together: the longest plus `margin_s`, at
        least `min_s`, at most `window_frames`."""

    @abstractmethod
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
    ) -> Iterable[Decoded]:
        """One pass at temperature 0 over each clip ((start, end) seconds of `audio`), `batch_size` clips decoded
        together, in an encoder window of `window_frames` (None: `encoder_frames` of each batch). A generator: each
        batch is decoded when its first segment is asked for. Each segment's `clip` says which clip it is from;
        its times are in `audio`'s time. The unfinished last sentence of a clip is kept, ending at the clip's end."""

    @abstractmethod
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
        """`audio` window by window, each decoded again at the next temperature while its text is unsure
        (`log_prob_threshold`) or a loop (`compression_ratio_threshold`), a window on no speech skipped
        (`no_speech_threshold`); without the previous window's text as context. Sampling seeded with `seed`."""

    @abstractmethod
    def detect_language(self, audio: np.ndarray) -> list[tuple[str, float]]:
        """Language probabilities [(code, p)], highest first, from the first window of `audio`."""

    @abstractmethod
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
        """One greedy pass without timestamps over each of `audios` in a window of `window_frames`, as one batch:
        (text, avg_logprob, no_speech_prob) each."""

    @abstractmethod
    def encode(self, audio: np.ndarray) -> Any:
        """The encoder output of one window of `audio` (at most a window long), for `n_best` and `align`."""

    @abstractmethod
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
        """The `num_hypotheses` best texts of one beam search over an encoded window, best first."""

    @abstractmethod
    def align(self, encoded: Any, language: str, texts: list[str]) -> list[float | None]:
        """Each text's mean token log-probability given the encoded window (teacher forcing); None for a text with
        no tokens or no score."""
