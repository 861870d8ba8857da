"""The `redact_audio` op (docs/engine.md): a copy of a file with given stretches silenced or beeped, for the
service's redacted audio (docs/pii.md). The service chooses the stretches (the redacted words' times and a margin)
and the output path (a spool file of its own); the engine only decodes, overwrites and writes.

The output is a 16 kHz 16-bit PCM WAV with one channel per track: a track is the file's mono downmix (`channel`
null) or one of its channels, each with its own spans. The decode is the transcriber's (`audio.stream`), so the
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

from . import audio
from .protocol import bad_request, is_number, is_span

MODES = ("silence", "beep")
MAX_TRACKS = 8  # the service's use_multi_channel limit
MAX_SPANS = 10_000
BEEP_HZ = 1000.0  # the broadcast censor tone
BEEP_LEVEL = 0.25  # about -12 dBFS: clearly a tone, not painful


@dataclass(frozen=True)
class Track:
    channel: int | None
    spans: tuple[tuple[float, float], ...]


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
    spans = obj.get("spans")
    if not isinstance(spans, list) or len(spans) > MAX_SPANS or not all(is_span(s) for s in spans):
        raise bad_request(f"field spans must be a list of at most {MAX_SPANS} [start, end] seconds")
    return Track(channel, tuple(sorted((float(a), float(b)) for a, b in spans)))


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
    sr = audio.SAMPLE_RATE
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


def redact_audio(p: RedactAudioParams) -> dict[str, Any]:
    streams = [audio.stream(p.audio_path, p.max_duration_s, t.channel) for t in p.tracks]
    samples = 0
    # "x": never overwrite a file; the service names a fresh spool file.
    f = open(p.out_path, "xb")  # noqa: SIM115 (closed below, removed if the copy fails)
    try:
        with f, wave.open(f, "wb") as out:
            out.setnchannels(len(p.tracks))
            out.setsampwidth(2)
            out.setframerate(audio.SAMPLE_RATE)
            for pieces in _aligned(streams):
                for track, piece in zip(p.tracks, pieces, strict=True):
                    overwrite(piece, samples, track.spans, p.mode)
                frames = np.stack(pieces, axis=1)
                out.writeframes(np.clip(np.round(frames * 32768.0), -32768, 32767).astype("<i2").tobytes())
                samples += frames.shape[0]
    except BaseException:
        # A copy that failed mid-way (audio_decode_failed, audio_too_long) is not left behind.
        with contextlib.suppress(OSError):
            os.remove(p.out_path)
        raise
    return {"duration_s": round(samples / audio.SAMPLE_RATE, 3), "channels": len(p.tracks)}
