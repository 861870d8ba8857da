"""The `redact_audio` op (docs/engine.md): a copy of a file with given stretches silenced or beeped, for the
service's redacted audio (docs/pii.md). The service chooses the stretches (the redacted words' times and a margin)
and the output path (a spool file of its own); the engine only decodes, overwrites and writes.

The output is a 16 kHz 16-bit PCM WAV with one channel per track: a track is the file's mono downmix (`channel`
null) or one of its channels, each with its own spans.

The copy does not trust the text alone (`Unvouched`): a track that also gives `transcribed` (the spans its
transcript's words cover) has its speech found by Silero in a first pass, and a stretch of speech no word covers that
lies beside a redacted span (`beside_s`, chained across pauses of up to `bridge_s`) is covered too: speech the text
lost (a repeat dropped as a loop, a word the model did not write) between or after the digits of a card number
keeps none of them in the copy. The decode is the transcriber's (`audio.stream`), so the
copy is exactly the audio the transcript's times refer to, and it is written block by block: memory does not grow
with the file's length.
"""

from __future__ import annotations

import contextlib
import math
import os
import wave
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import audio, vad
from .errors import bad_request
from .pcm import SAMPLE_RATE
from .protocol import is_number, is_span

MODES = ("silence", "beep")
MAX_TRACKS = 8  # the service's use_multi_channel limit
MAX_SPANS = 10_000
MAX_WORDS = 200_000  # a transcript's words: 4 hours at about 3 words a second, and room
BEEP_HZ = 1000.0  # the broadcast censor tone
BEEP_LEVEL = 0.25  # about -12 dBFS: clearly a tone, not painful


@dataclass(frozen=True)
class Unvouched:
    """Which speech the transcript does not vouch for is covered beside a redacted span (docs/pii.md)."""

    speech_frame_prob: float = 0.3  # a frame is speech at this Silero probability (DecodeOptions' speech map)
    word_edge_s: float = 0.2  # a transcribed word covers this much more each side: its timing is that rough
    bridge_s: float = 0.6  # unvouched speech across a pause up to this long is one stretch
    beside_s: float = 1.0  # a stretch that starts or ends this close to a redacted span joins it
    min_speech_s: float = 0.15  # a stretch with less speech than a word (a breath, a click) is left
    margin_s: float = 0.25  # a joined stretch is covered this much wider each side (src/pii/audio.ts's margin)


@dataclass(frozen=True)
class Track:
    channel: int | None
    spans: tuple[tuple[float, float], ...]
    # The spans the track's transcript covers (its words); None: the copy covers `spans` only.
    transcribed: tuple[tuple[float, float], ...] | None = None


@dataclass(frozen=True)
class RedactAudioParams:
    audio_path: str
    out_path: str
    mode: str
    tracks: tuple[Track, ...]
    max_duration_s: float | None = None


def _track(obj: Any) -> Track:
    if not isinstance(obj, dict):
        raise bad_request("each track must be an object")
    channel = obj.get("channel")
    if channel is not None and (not isinstance(channel, int) or isinstance(channel, bool) or channel < 0):
        raise bad_request("field channel must be an integer >= 0 or null")
    spans = _spans(obj.get("spans"), "spans", MAX_SPANS)
    transcribed = obj.get("transcribed")
    return Track(channel, spans, None if transcribed is None else _spans(transcribed, "transcribed", MAX_WORDS))


def _spans(spans: Any, name: str, most: int) -> tuple[tuple[float, float], ...]:
    if not isinstance(spans, list) or len(spans) > most or not all(is_span(s) for s in spans):
        raise bad_request(f"field {name} must be a list of at most {most} [start, end] seconds")
    return tuple(sorted((float(a), float(b)) for a, b in spans))


def parse_redact_audio(params: Mapping[str, Any]) -> RedactAudioParams:
    paths = []
    for name in ("audio_path", "out_path"):
        p = params.get(name)
        if not isinstance(p, str) or not os.path.isabs(p):
            raise bad_request(f"field {name} must be an absolute path")
        paths.append(p)
    mode = params.get("mode", "silence")
    if mode not in MODES:
        raise bad_request(f"field mode must be one of {', '.join(MODES)}")
    tracks = params.get("tracks")
    if not isinstance(tracks, list) or not 1 <= len(tracks) <= MAX_TRACKS:
        raise bad_request(f"field tracks must be a list of 1 to {MAX_TRACKS} tracks")
    max_duration = params.get("max_duration_s")
    if max_duration is not None and (not is_number(max_duration) or max_duration <= 0):
        raise bad_request("field max_duration_s must be a number > 0")
    return RedactAudioParams(
        audio_path=paths[0],
        out_path=paths[1],
        mode=mode,
        tracks=tuple(_track(t) for t in tracks),
        max_duration_s=float(max_duration) if max_duration is not None else None,
    )


def overwrite(block: np.ndarray, offset: int, spans: tuple[tuple[float, float], ...], mode: str) -> None:
    """Silences (or beeps) the samples of `block`, which starts at sample `offset` of the file, inside `spans`."""
    sr = SAMPLE_RATE
    end = offset + block.shape[0]
    for start_s, end_s in spans:
        a = max(offset, math.floor(start_s * sr))
        b = min(end, math.ceil(end_s * sr))
        if b <= a:
            continue
        if mode == "beep":
            # The phase runs with the file's sample index, so a span cut by a block boundary has no click.
            t = np.arange(a, b, dtype=np.float64) / sr
            block[a - offset : b - offset] = (BEEP_LEVEL * np.sin(2 * np.pi * BEEP_HZ * t)).astype(np.float32)
        else:
            block[a - offset : b - offset] = 0.0


def _aligned(streams: list[Iterator[np.ndarray]]) -> Iterator[list[np.ndarray]]:
    """Equal-length pieces of every track, in step (the decodes of one file's channels give blocks of one size, but
    this does not rely on it); a track that ends early is padded with silence to the longest."""
    bufs = [np.zeros(0, dtype=np.float32) for _ in streams]
    done = [False] * len(streams)
    while True:
        for i, s in enumerate(streams):
            if bufs[i].size == 0 and not done[i]:
                block = next(s, None)
                if block is None:
                    done[i] = True
                else:
                    bufs[i] = block
        sizes = [b.size for b in bufs if b.size]
        if not sizes:
            return
        n = min(sizes)
        yield [b[:n] if b.size else np.zeros(n, dtype=np.float32) for b in bufs]
        bufs = [b[n:] for b in bufs]


def speech_runs(probs: np.ndarray, o: Unvouched) -> list[tuple[float, float]]:
    """The stretches of speech frames (seconds), joined across pauses under `bridge_s`."""
    runs: list[list[float]] = []
    for i in np.flatnonzero(probs >= o.speech_frame_prob):
        start = i * vad.FRAME_S
        if runs and start - runs[-1][1] <= o.bridge_s:
            runs[-1][1] = start + vad.FRAME_S
        else:
            runs.append([start, start + vad.FRAME_S])
    return [(a, b) for a, b in runs]


def unvouched(probs: np.ndarray, transcribed: tuple[tuple[float, float], ...], o: Unvouched) -> np.ndarray:
    """`probs` with every frame a transcribed word covers (widened by `word_edge_s`) set to 0: the speech the
    transcript does not vouch for."""
    out = probs.copy()
    for a, b in transcribed:
        out[
            max(0, math.floor((a - o.word_edge_s) / vad.FRAME_S)) : max(0, math.ceil((b + o.word_edge_s) / vad.FRAME_S))
        ] = 0
    return out


def with_unvouched(
    spans: tuple[tuple[float, float], ...], stretches: list[tuple[float, float]], probs: np.ndarray, o: Unvouched
) -> tuple[tuple[float, float], ...]:
    """`spans` and every stretch of unvouched speech that starts or ends within `beside_s` of one of them or of a
    stretch already joined (so a card's lost groups after its one written group all join), widened by `margin_s`;
    sorted, overlaps merged."""
    covered = list(spans)
    left = [
        (a, b)
        for a, b in stretches
        if np.count_nonzero(probs[int(a / vad.FRAME_S) : int(b / vad.FRAME_S) + 1] >= o.speech_frame_prob) * vad.FRAME_S
        >= o.min_speech_s
    ]
    grown = True
    while grown and left:
        grown = False
        for st in list(left):
            if any(st[0] - o.beside_s <= b and a - o.beside_s <= st[1] for a, b in covered):
                covered.append((max(0.0, st[0] - o.margin_s), st[1] + o.margin_s))
                left.remove(st)
                grown = True
    merged: list[list[float]] = []
    for a, b in sorted(covered):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return tuple((a, b) for a, b in merged)


def speech_probs(p: RedactAudioParams, track: Track) -> np.ndarray:
    """Silero's speech probability per frame of the track (a first pass over the file)."""
    scan = vad.SileroScan()
    for block in audio.stream(p.audio_path, p.max_duration_s, track.channel):
        scan.feed(block)
    return scan.finish()


def covered_spans(p: RedactAudioParams, track: Track, o: Unvouched) -> tuple[tuple[float, float], ...]:
    """What the copy overwrites on `track`: its spans, and beside them the speech its transcript does not vouch
    for (when the track says what it transcribed and has spans at all)."""
    if track.transcribed is None or not track.spans:
        return track.spans
    probs = unvouched(speech_probs(p, track), track.transcribed, o)
    return with_unvouched(track.spans, speech_runs(probs, o), probs, o)


def redact_audio(p: RedactAudioParams, o: Unvouched = Unvouched()) -> dict[str, Any]:
    spans = [covered_spans(p, t, o) for t in p.tracks]
    streams = [audio.stream(p.audio_path, p.max_duration_s, t.channel) for t in p.tracks]
    samples = 0
    # "x": never overwrite a file; the service names a fresh spool file.
    f = open(p.out_path, "xb")  # noqa: SIM115 (closed below, removed if the copy fails)
    try:
        with f, wave.open(f, "wb") as out:
            out.setnchannels(len(p.tracks))
            out.setsampwidth(2)
            out.setframerate(SAMPLE_RATE)
            for pieces in _aligned(streams):
                for covered, piece in zip(spans, pieces, strict=True):
                    overwrite(piece, samples, covered, p.mode)
                frames = np.stack(pieces, axis=1)
                out.writeframes(np.clip(np.round(frames * 32768.0), -32768, 32767).astype("<i2").tobytes())
                samples += frames.shape[0]
    except BaseException:
        # A copy that failed mid-way (audio_decode_failed, audio_too_long) is not left behind.
        with contextlib.suppress(OSError):
            os.remove(p.out_path)
        raise
    end = samples / SAMPLE_RATE
    return {
        "duration_s": round(end, 3),
        "channels": len(p.tracks),
        "covered_s": round(sum(max(0.0, min(b, end) - a) for track in spans for a, b in track), 3),
    }
