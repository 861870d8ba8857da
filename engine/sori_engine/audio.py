"""Probe and decode audio: the engine's one entry to the files it is given (docs/audio.md).

Nothing here parses the file: every probe and decode pass runs FFmpeg (PyAV) in a short-lived, confined process
of its own (media/sandbox.py, media/child.py; docs/security.md, "Untrusted media"), so a hostile upload can fail
its own request and nothing else, and the engine never maps FFmpeg's demuxers or decoders. The decode follows
faster_whisper.audio.decode_audio (demux, group frames, resample to 16 kHz), with three differences that the
protocol needs:
- it is a generator of blocks (`stream`), so a 4-hour file is never whole in memory (4 h of 16 kHz float32 would be
  920 MB); the transcriber consumes it window by window;
- it stops as soon as the audio exceeds max_duration_s, so an over-long upload is refused without decoding hours
  of it, and every failure of the decode process (FFmpeg's error, a crash, a limit) is audio_decode_failed;
- it can return one channel of a multi-channel file (`channel`) instead of the mono downmix.
`cut_spans` cuts given stretches out of that stream, for the stages that need only parts of the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

import numpy as np

from .errors import EngineError
from .media import sandbox
from .pcm import SAMPLE_RATE
from .protocol import ProbeResult

__all__ = ["SAMPLE_RATE", "cut_spans", "decode", "expected_duration", "head", "measure", "probe", "stream"]
T = TypeVar("T")


def probe(path: str) -> ProbeResult:
    """What the container declares about its first audio stream (audio_decode_failed when it has none, or when
    the file is not one of the accepted formats and codecs)."""
    return _result(sandbox.probe(path))


def _result(info: dict[str, Any]) -> ProbeResult:
    return ProbeResult(
        format=info["format"],
        codec=info["codec"],
        duration_s=info["duration_s"],
        channels=info["channels"],
        sample_rate=info["sample_rate"],
    )


def stream(path: str, max_duration_s: float | None = None, channel: int | None = None) -> Iterator[np.ndarray]:
    """Decode the first audio stream to 16 kHz float32 in [-1, 1), as consecutive blocks (about 500,000 input
    samples each, so a few seconds to half a minute of audio).

    channel None: the mono downmix of all channels; an index: that channel alone (bad_request when the stream has
    no such channel). Raises audio_too_long as soon as more than max_duration_s was decoded (the decode limit of
    4 h when None), and audio_decode_failed when the file cannot be opened, yields no audio at all, or its decode
    process fails.
    """
    yield from sandbox.stream(path, max_duration_s, channel)


def measure(path: str, max_duration_s: float | None = None) -> float:
    """Decoded length in seconds (decodes the whole file, keeping nothing): for files whose container does not say
    or says more than the limit, so that an over-long file fails before any transcription work."""
    return sum(block.shape[0] for block in stream(path, max_duration_s)) / SAMPLE_RATE


def probe_or_none(path: str) -> ProbeResult | None:
    """`probe`, or None where the container cannot be read: the decoder then gives the precise error. The probe's
    decode process is kept for the file's next `stream` (a transcription's), so that one process does both."""
    try:
        return _result(sandbox.probe(path, keep=True))
    except EngineError:
        return None


def expected_duration(path: str, max_duration_s: float | None, info: ProbeResult | None) -> float | None:
    """The container's duration (`info`) when it can be trusted to be within the limit; else the decoded length,
    measured in a decode-only pass (cheap next to recognition), so that an over-long file fails before any
    recognition work and progress has a denominator. A container that understates its length is caught while
    streaming."""
    declared = info.duration_s if info is not None else None
    if declared is not None and declared > 0 and (max_duration_s is None or declared <= max_duration_s):
        return declared
    return measure(path, max_duration_s)


def head(path: str, seconds: float, max_duration_s: float | None = None, channel: int | None = None) -> np.ndarray:
    """The first `seconds` of the file, decoded (only as many blocks as that takes)."""
    want = int(seconds * SAMPLE_RATE)
    got: list[np.ndarray] = []
    size = 0
    for block in stream(path, max_duration_s, channel):
        got.append(block)
        size += block.shape[0]
        if size >= want:
            break
    return np.concatenate(got)[:want] if got else np.zeros(0, dtype=np.float32)


def decode(path: str, max_duration_s: float | None = None, channel: int | None = None) -> np.ndarray:
    """The whole file as one 16 kHz float32 array (tests and benchmarks; the transcriber streams)."""
    blocks = list(stream(path, max_duration_s, channel))
    return np.concatenate(blocks) if len(blocks) > 1 else blocks[0]


def cut_spans(blocks: Iterable[np.ndarray], spans: list[tuple[T, tuple[int, int]]]) -> Iterator[tuple[T, np.ndarray]]:
    """(key, its samples [a, b)) for each (key, (a, b)) of `spans`, in that order, cut from decoded blocks (`stream`)
    as they come: only the audio from the earliest start still needed on is kept, never the whole file (diarization's
    second pass, refinement). Spans come in order of their start, so what is held is at most the longest span and a
    block; a span past the file's end is cut short. Stops reading `blocks` after the last span."""
    buf = np.zeros(0, dtype=np.float32)
    start = 0  # file sample of buf[0]
    i = 0
    # the earliest start of the spans from each one on (a later span may reach back before an earlier one starts)
    first = np.minimum.accumulate([a for _u, (a, _b) in spans][::-1])[::-1].tolist() if spans else []
    for block in blocks:
        if i == len(spans):
            break
        buf = np.concatenate([buf, block])
        while i < len(spans) and spans[i][1][1] <= start + buf.shape[0]:
            unit, (a, b) = spans[i]
            yield unit, buf[a - start : b - start]
            i += 1
        keep = min(int(first[i]), start + buf.shape[0]) if i < len(spans) else start + buf.shape[0]
        if keep > start:
            buf = buf[keep - start :].copy()
            start = keep
    for unit, (a, b) in spans[i:]:  # the file ended before these spans did
        yield unit, buf[max(0, a - start) : max(0, b - start)]
