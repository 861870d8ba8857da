"""Stage 2, language: each chunk's language by the request's mode (`fixed`; `detect`: the first chunk of speech decides
for the file; `multi`: each chunk its own, the file's the speech-weighted mean), and the file's language_probs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

import numpy as np

from ..decode_options import DecodeOptions
from ..errors import bad_request
from ..model.interface import SpeechModel
from .windows import Region, cut

log = logging.getLogger(__name__)


class LanguageAsk(Protocol):
    """What a request asks of this stage (a transcribe request's fields of the same names)."""

    @property
    def language_mode(self) -> str: ...  # fixed, detect or multi
    @property
    def language(self) -> str | None: ...  # the code, for fixed
    @property
    def language_candidates(self) -> tuple[str, ...] | None: ...  # detection restricted to these
    @property
    def audio_path(self) -> str: ...  # for the log


def check_languages(req: LanguageAsk, supported: list[str]) -> None:
    """A language code the model does not know is a bad request."""
    codes = list(req.language_candidates or [])
    if req.language_mode == "fixed" and req.language:
        codes.append(req.language)
    unknown = [c for c in codes if c not in supported]
    if unknown:
        raise bad_request(f"unsupported language code(s) for this model: {', '.join(unknown)}")


def detect(
    model: SpeechModel, audio: np.ndarray, candidates: tuple[str, ...] | None, o: DecodeOptions
) -> dict[str, float]:
    """Language probabilities from the first 30 s window of `audio`: the `top_languages` most likely, or the
    candidates' renormalized (equal when the model gives them nothing)."""
    probs = dict(model.detect_language(audio))
    if not candidates:
        return dict(list(probs.items())[: o.top_languages])
    restricted = {code: probs.get(code, 0.0) for code in candidates}
    total = sum(restricted.values())
    if total <= 0:
        return {code: 1.0 / len(candidates) for code in candidates}
    return {code: p / total for code, p in restricted.items()}


class Languages:
    """The language state of one request: what each chunk is decoded in, and what the file is reported as."""

    def __init__(self, model: SpeechModel, req: LanguageAsk, o: DecodeOptions) -> None:
        self.model = model
        self.req = req
        self.o = o
        self.language: str | None = req.language if req.language_mode == "fixed" else None
        self.probs: dict[str, float] | None = {req.language: 1.0} if req.language else None
        self.weighted: dict[str, float] = {}  # multi: speech-weighted sum of the chunks' distributions

    def restore(self, language: str | None, probs: dict[str, float] | None, weighted: dict[str, float]) -> None:
        self.language, self.probs, self.weighted = language, probs, dict(weighted)

    def of(self, audio: np.ndarray, chunk: list[Region]) -> str:
        """The language `chunk` (speech regions of `audio`) is decoded in."""
        mode = self.req.language_mode
        if mode == "fixed":
            assert self.language is not None  # parse_transcribe requires it
            return self.language
        if mode == "detect":
            if self.language is None:  # the first 30 s of speech decide for the whole file
                self.probs = detect(self.model, cut(audio, chunk), self.req.language_candidates, self.o)
                self.language = max(self.probs, key=self.probs.__getitem__)
            return self.language
        samples = cut(audio, chunk)
        chunk_probs = detect(self.model, samples, self.req.language_candidates, self.o)
        for code, p in chunk_probs.items():
            self.weighted[code] = self.weighted.get(code, 0.0) + p * samples.size
        return max(chunk_probs, key=chunk_probs.__getitem__)

    def finish(self, head: Callable[[], np.ndarray]) -> tuple[str, dict[str, float]]:
        """The file's language and language_probs. `head()`: the file's first 30 s, detected on when no speech was
        found anywhere."""
        if self.req.language_mode == "multi" and self.weighted:
            # File-level language: the speech-duration-weighted mean of the chunk distributions.
            total = sum(self.weighted.values())
            probs = {code: w / total for code, w in sorted(self.weighted.items(), key=lambda kv: -kv[1])}
            if not self.req.language_candidates:
                probs = dict(list(probs.items())[: self.o.top_languages])
            return max(probs, key=probs.__getitem__), probs
        if self.probs is None:  # detect/multi and no speech anywhere: listen to the start of the file
            log.info("no speech found in %s", self.req.audio_path)
            self.probs = detect(self.model, head(), self.req.language_candidates, self.o)
        language = self.language or max(self.probs, key=self.probs.__getitem__)
        return language, self.probs
