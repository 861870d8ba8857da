"""The `transcribe` operation, as the list of its stages (docs/engine.md, "Decoding stages"):

1. windows: the decoded blocks grouped into windows, each window's speech found by the VAD (decode/windows.py);
2. chunks: each window's speech regions merged into chunks of at most one Whisper window of speech;
3. language: each chunk's language (decode/language.py);
4. rounds: the chunks of one language decoded in batches, in rounds, checked by the verdicts (decode/rounds.py,
   verdicts/per_window.py);
5. placement: segments moved to file time and kept inside the file (decode/placement.py);
6. clean: the file-level hallucination rules over the whole transcript (verdicts/per_file.py).

Stages 2-5 run window by window (decode/window_segments.py); after each window a checkpoint is emitted
(checkpoint.py). `transcribe_steps` is the operation as steps (decode/parts.py's `Request`): it yields the batched
passes it waits for, up to `windows_in_flight` windows at once, so that the engine's scheduler decodes them on all its
decoders, beside other requests' in shared batches (scheduler.py); `transcribe` decodes each pass at once.
`hook(stage, artefact)`, when given, is called after each stage with what it made, for benchmarks and profiles. Every
tunable is a field of the request's DecodeOptions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import audio as audio_io
from . import checkpoint, models, phone
from .decode import parts, placement, rounds
from .decode.language import Languages, check_languages
from .decode.window_segments import Hook, WindowSegments, decode_window
from .decode.windows import skip_to, windows
from .model.interface import Prompting, SpeechModel
from .pcm import SAMPLE_RATE
from .protocol import TranscribeParams, TranscribeResult
from .transcript import Segment
from .verdicts import per_file

log = logging.getLogger(__name__)


def _no_hook(_stage: str, _artefact: Any) -> None:
    pass


@dataclass
class ProgressReporter:
    """Turns positions in the file into progress events, at most one per `interval_s` of wall time, so a fast
    transcription of a long file does not flood the pipe. duration_s is the expected length (container or
    measured); positions past it count as 1.0."""

    emit: Callable[[float], None]
    duration_s: float | None
    interval_s: float = 1.0
    last_emit: float = field(default_factory=time.monotonic)
    fraction: float = 0.0

    def update(self, position_s: float) -> None:
        if not self.duration_s or self.duration_s <= 0:
            return
        self.fraction = max(self.fraction, min(position_s / self.duration_s, 1.0))
        now = time.monotonic()
        if now - self.last_emit >= self.interval_s:
            self.last_emit = now
            self.emit(self.fraction)


def transcribe(
    req: TranscribeParams,
    emit_progress: Callable[[float], None],
    emit_checkpoint: Callable[[dict], None] | None = None,
    hook: Hook = _no_hook,
    progress_interval_s: float = 1.0,
) -> TranscribeResult:
    """`req.audio_path` transcribed; `emit_progress` gets the fraction done at most every `progress_interval_s`."""
    return parts.run_alone(transcribe_steps(req, emit_progress, emit_checkpoint, hook, progress_interval_s))


def transcribe_steps(
    req: TranscribeParams,
    emit_progress: Callable[[float], None],
    emit_checkpoint: Callable[[dict], None] | None = None,
    hook: Hook = _no_hook,
    progress_interval_s: float = 1.0,
    windows_in_flight: int | Callable[[], int] = 1,
) -> parts.Request[TranscribeResult]:
    """`transcribe` as steps: yields the batched passes it waits for (parts.Pending), of up to `windows_in_flight`
    windows at once (a count, or asked as each window opens), and returns the result."""
    model = models.get_model(req.model)
    check_languages(req, model.languages)
    info = audio_io.probe_or_none(req.audio_path)
    expected_s = audio_io.expected_duration(req.audio_path, req.max_duration_s, info)
    progress = ProgressReporter(emit_progress, expected_s, progress_interval_s)
    blocks = audio_io.stream(req.audio_path, req.max_duration_s, req.channel)
    narrowband = phone.narrowband_container(info)
    return (yield from _run(model, req, blocks, narrowband, progress, emit_checkpoint, hook=hook, k=windows_in_flight))


def transcribe_audio(
    req: TranscribeParams,
    audio: np.ndarray,
    narrowband: bool,
    window_s: float | None = None,
    speech_probs: np.ndarray | None = None,
) -> TranscribeResult:
    """The same recognition as `transcribe` on 16 kHz float32 audio already in memory (a streaming session's
    utterance, streaming.py). `req.audio_path` is unused. `window_s` (at least the audio's length) shortens
    Whisper's 30 s window to that. `speech_probs`: Silero's probability for each 32 ms frame of `audio` from a pass
    that also saw the audio before it (the session's), used instead of a pass over `audio` alone: scored from its
    first sample, soft reverberant speech fell under the speech map's threshold."""
    model = models.get_model(req.model)
    check_languages(req, model.languages)
    frames = None if window_s is None else round(model.frames_of(window_s))
    progress = ProgressReporter(lambda _f: None, audio.shape[0] / SAMPLE_RATE)
    return parts.run_alone(_run(model, req, [audio], narrowband, progress, None, frames, speech_probs))


def _run(
    model: SpeechModel,
    req: TranscribeParams,
    blocks: Iterable[np.ndarray],
    narrowband: bool,
    progress: ProgressReporter,
    emit_checkpoint: Callable[[dict], None] | None,
    window_frames: int | None = None,
    known_probs: np.ndarray | None = None,
    hook: Hook = _no_hook,
    k: int | Callable[[], int] = 1,
) -> parts.Request[TranscribeResult]:
    o = req.model.decode
    languages = Languages(model, req, o)
    segments: list[Segment] = []
    speech = per_file.SpeechMapBuilder()  # the file's speech map, for the last stage
    window_s = checkpoint.window_s()
    ckey = checkpoint.key(req, window_s)
    index, start, total = 0, 0, 0  # windows done before a resume, where to start, samples seen
    head: np.ndarray | None = None  # the file's first 30 s, to detect on when no speech is found
    resumed = checkpoint.restore(req.resume_from, ckey)
    if resumed is not None:
        segments, total = list(resumed.segments), resumed.total_samples
        index, start = resumed.count, resumed.offset_sample
        languages.restore(resumed.language, resumed.probs, resumed.weighted)
        for offset, part in resumed.speech:
            speech.add_probs(offset, part)
        blocks = skip_to(blocks, start)
        progress.update(start / SAMPLE_RATE)
        log.info("resuming after %d window(s), at %.1f s", index, start / SAMPLE_RATE)
    use_vad = req.model.vad or req.language_mode == "multi"

    def prompting(language: str) -> Prompting:
        return Prompting(language, req.model.beam_size, req.word_timestamps, req.initial_prompt, req.hotwords)

    def window_parts() -> Iterator[rounds.Steps[WindowSegments]]:
        nonlocal head, total
        for window in windows(blocks, use_vad, window_s, o, narrowband, start, known_probs):
            hook("window", window)
            if head is None and resumed is None:
                head = window.audio[: int(o.chunk_s * SAMPLE_RATE)].copy()
            total = window.offset + window.audio.shape[0]
            speech.add_probs(window.offset, window.probs)
            yield decode_window(model, window, languages, prompting, o, progress.update, window_frames, hook)

    def window_done(i: int, done: WindowSegments) -> None:
        segments.extend(done.segments)
        window = done.window
        end = window.offset + window.audio.shape[0]
        progress.update(end / SAMPLE_RATE)
        if emit_checkpoint is not None:
            emit_checkpoint(
                checkpoint.make(index + i, ckey, window.offset, end, window.probs, done.segments, *done.state)
            )

    def finish() -> TranscribeResult:
        duration_s = total / SAMPLE_RATE
        language, probs = languages.finish(lambda: _head(req, head, resumed is not None))
        # Per-chunk decoding can in rare cases emit a segment that starts before its predecessor; keep time order.
        placed = sorted((placement.in_file(s, duration_s) for s in segments), key=lambda s: s.start)
        hook("placement", placed)
        cleaned = per_file.clean(placed, speech.build(), o)
        hook("clean", cleaned)
        return TranscribeResult(duration_s=duration_s, language=language, language_probs=probs, segments=cleaned)

    return (yield from parts.concurrently(window_parts(), k, window_done, finish))


def _head(req: TranscribeParams, head: np.ndarray | None, resumed: bool) -> np.ndarray:
    """The file's first `chunk_s` of audio, as kept from its first window or, when a resumed request did not see
    that window, decoded again."""
    if head is not None or not resumed:
        return head if head is not None else np.zeros(0, dtype=np.float32)
    return audio_io.head(req.audio_path, req.model.decode.chunk_s, req.max_duration_s, req.channel)
