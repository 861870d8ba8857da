"""The `transcribe` operation: decode → (VAD) → language → faster-whisper → protocol segments.

VAD is run here rather than through `transcribe(vad_filter=True)` so that its speech regions are computed once and
serve both language detection (which then listens to speech, not to leading silence or music) and decoding; the
regions are cut out and mapped back to file time with faster-whisper's own `restore_speech_timestamps`, as
`vad_filter=True` does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
from faster_whisper import WhisperModel
from faster_whisper.audio import pad_or_trim
from faster_whisper.transcribe import Segment as FwSegment
from faster_whisper.transcribe import restore_speech_timestamps
from faster_whisper.vad import VadOptions, get_speech_timestamps

from . import audio as audio_io
from . import models
from .protocol import Segment, TranscribeParams, TranscribeResult, Word, bad_request

log = logging.getLogger(__name__)

SR = audio_io.SAMPLE_RATE
CHUNK_S = 30.0  # Whisper's window: a multi-mode chunk is at most one window, so one detection covers all of it
PIECE_S = 600.0  # speech decoded per faster-whisper call in fixed/detect mode with VAD (bounds memory)
PROGRESS_INTERVAL_S = 1.0
TOP_LANGUAGES = 5  # language_probs entries reported when no candidates restrict detection

Region = dict  # {"start": sample, "end": sample}, the shape faster-whisper's VAD helpers use


@dataclass
class ProgressReporter:
    """Turns segment end times into progress events, at most one per PROGRESS_INTERVAL_S of wall time, so a fast
    transcription of a long file does not flood the pipe."""

    emit: Callable[[float], None]
    duration_s: float
    last_emit: float = field(default_factory=time.monotonic)
    fraction: float = 0.0

    def update(self, position_s: float) -> None:
        if self.duration_s <= 0:
            return
        self.fraction = max(self.fraction, min(position_s / self.duration_s, 1.0))
        now = time.monotonic()
        if now - self.last_emit >= PROGRESS_INTERVAL_S:
            self.last_emit = now
            self.emit(self.fraction)


def transcribe(req: TranscribeParams, emit_progress: Callable[[float], None]) -> TranscribeResult:
    model = models.get_model(req.model)
    _check_languages(req, model.supported_languages)
    audio = audio_io.decode(req.audio_path, req.max_duration_s)
    duration_s = audio.shape[0] / SR
    progress = ProgressReporter(emit_progress, duration_s)
    if req.language_mode == "multi":
        language, probs, segments = _transcribe_multi(model, audio, req, progress)
    else:
        language, probs, segments = _transcribe_single(model, audio, req, progress)
    # Per-chunk decoding can in rare cases emit a segment that starts before its predecessor; keep time order.
    segments.sort(key=lambda s: s.start)
    return TranscribeResult(duration_s=duration_s, language=language, language_probs=probs, segments=segments)


def _check_languages(req: TranscribeParams, supported: list[str]) -> None:
    codes = list(req.language_candidates or [])
    if req.language_mode == "fixed" and req.language:
        codes.append(req.language)
    unknown = [c for c in codes if c not in supported]
    if unknown:
        raise bad_request(f"unsupported language code(s) for this model: {', '.join(unknown)}")


def _transcribe_single(
    model: WhisperModel, audio: np.ndarray, req: TranscribeParams, progress: ProgressReporter
) -> tuple[str, dict[str, float], list[Segment]]:
    """fixed and detect: one language for the whole file."""
    # Pieces of the file to decode: groups of speech regions, or the whole file (None) without VAD.
    pieces: list[list[Region] | None]
    if req.model.vad:
        # Decoding piece by piece bounds memory: faster-whisper computes the mel features of its whole input at
        # once (gigabytes for a 4-hour file). Pieces end at silences and no text is carried across windows
        # (condition_on_previous_text=False), so a cut splits no word and loses no context.
        vad_options = VadOptions(max_speech_duration_s=PIECE_S)
        pieces = list(_group(get_speech_timestamps(audio, vad_options, sampling_rate=SR), int(PIECE_S * SR)))
        if not pieces:
            log.info("no speech found in %s", req.audio_path)
    else:
        pieces = [None]
    if req.language_mode == "fixed":
        assert req.language is not None  # parse_transcribe requires it
        language, probs = req.language, {req.language: 1.0}
    else:
        # _detect listens to the first 30 s of speech; with no speech found, to the start of the file.
        head = _cut(audio, pieces[0]) if pieces and pieces[0] is not None else audio
        probs = _detect(model, head, req.language_candidates)
        language = max(probs, key=probs.__getitem__)
    segments: list[Segment] = []
    for piece in pieces:
        samples = audio if piece is None else _cut(audio, piece)
        segments.extend(_decode(model, samples, piece, language, req, progress))
    return language, probs, segments


def _transcribe_multi(
    model: WhisperModel, audio: np.ndarray, req: TranscribeParams, progress: ProgressReporter
) -> tuple[str, dict[str, float], list[Segment]]:
    """multi: a language per speech chunk. Chunks come from the VAD whatever `vad` says, since without speech
    regions there is nothing to cut the file at."""
    regions = get_speech_timestamps(audio, VadOptions(max_speech_duration_s=CHUNK_S), sampling_rate=SR)
    groups = _group(regions, int(CHUNK_S * SR))
    if not groups:
        probs = _detect(model, audio, req.language_candidates)
        return max(probs, key=probs.__getitem__), probs, []
    segments: list[Segment] = []
    weighted: dict[str, float] = {}
    for group in groups:
        chunk = _cut(audio, group)
        chunk_probs = _detect(model, chunk, req.language_candidates)
        language = max(chunk_probs, key=chunk_probs.__getitem__)
        for code, p in chunk_probs.items():
            weighted[code] = weighted.get(code, 0.0) + p * chunk.size
        segments.extend(_decode(model, chunk, group, language, req, progress))
    # File-level language: the speech-duration-weighted mean of the chunk distributions.
    total = sum(weighted.values())
    probs = {code: w / total for code, w in sorted(weighted.items(), key=lambda kv: -kv[1])}
    if not req.language_candidates:
        probs = dict(list(probs.items())[:TOP_LANGUAGES])
    return max(probs, key=probs.__getitem__), probs, segments


def _group(regions: list[Region], max_samples: int) -> list[list[Region]]:
    """Merge consecutive speech regions into chunks of at most max_samples of speech (regions are already capped
    at that length by the VAD's max_speech_duration_s)."""
    groups: list[list[Region]] = []
    current: list[Region] = []
    size = 0
    for region in regions:
        length = region["end"] - region["start"]
        if current and size + length > max_samples:
            groups.append(current)
            current, size = [], 0
        current.append(region)
        size += length
    if current:
        groups.append(current)
    return groups


def _cut(audio: np.ndarray, regions: list[Region]) -> np.ndarray:
    if not regions:
        return audio[:0]
    if len(regions) == 1:
        return audio[regions[0]["start"] : regions[0]["end"]]  # a view, no copy
    return np.concatenate([audio[r["start"] : r["end"]] for r in regions])


def _detect(model: WhisperModel, audio: np.ndarray, candidates: tuple[str, ...] | None) -> dict[str, float]:
    """Language probabilities from the first 30 s window of `audio`.

    WhisperModel.detect_language is not used because for 30 s or more of input its feature extractor yields one
    frame more than a window, and when the first window is not confident it reports the probabilities of that
    near-empty second window.
    """
    fe = model.feature_extractor
    features = fe(audio[: fe.n_samples])[..., : fe.nb_max_frames]
    encoder_output = model.encode(pad_or_trim(features))
    results = model.model.detect_language(encoder_output)[0]  # [("<|en|>", p), ...], highest first
    probs = {token[2:-2]: float(p) for token, p in results}
    if not candidates:
        return dict(list(probs.items())[:TOP_LANGUAGES])
    restricted = {code: probs.get(code, 0.0) for code in candidates}
    total = sum(restricted.values())
    if total <= 0:
        return {code: 1.0 / len(candidates) for code in candidates}
    return {code: p / total for code, p in restricted.items()}


def _decode(
    model: WhisperModel,
    audio: np.ndarray,
    regions: list[Region] | None,
    language: str,
    req: TranscribeParams,
    progress: ProgressReporter,
) -> Iterator[Segment]:
    """Transcribe `audio` (the cut-out speech of `regions`, or the whole file when regions is None) and yield
    protocol segments in file time."""
    fw_segments: Iterable[FwSegment]
    fw_segments, _info = model.transcribe(
        audio,
        language=language,
        task="transcribe",
        beam_size=req.model.beam_size,
        # Conditioning on the previous window's text is what makes Whisper loop on a hallucination; without it a
        # bad window stays a bad window.
        condition_on_previous_text=False,
        word_timestamps=req.word_timestamps,
        initial_prompt=req.initial_prompt,
        hotwords=req.hotwords,
        vad_filter=False,  # when VAD was asked for, `audio` is already the speech only
    )
    if regions is not None:
        fw_segments = restore_speech_timestamps(fw_segments, regions, SR)
    for fw in fw_segments:
        progress.update(fw.end)
        segment = _to_segment(fw, language, req.word_timestamps, progress.duration_s)
        if segment is not None:
            yield segment


def _to_segment(fw: FwSegment, language: str, with_words: bool, duration_s: float) -> Segment | None:
    text = fw.text.strip()
    if not text:
        return None
    # Whisper's last timestamp token can point past the end of the audio; keep every time inside the file.
    start = _clip(fw.start, 0.0, duration_s)
    end = _clip(fw.end, start, duration_s)
    words = None
    if with_words:
        words = tuple(
            Word(
                start=_clip(w.start, start, end),
                end=_clip(max(w.start, w.end), start, end),
                text=w.word,
                probability=w.probability,
            )
            for w in fw.words or ()
            if w.word.strip()
        )
    return Segment(
        start=start,
        end=end,
        text=text,
        language=language,
        avg_logprob=fw.avg_logprob,
        no_speech_prob=fw.no_speech_prob,
        words=words,
    )


def _clip(t: float, lo: float, hi: float) -> float:
    return min(max(t, lo), hi)
