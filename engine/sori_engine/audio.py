"""Probe and decode audio with PyAV (FFmpeg bundled in the wheel, so no system ffmpeg is needed).

The decode loop follows faster_whisper.audio.decode_audio (demux → group frames → resample to 16 kHz), with three
differences that the protocol needs:
- it is a generator of blocks (`stream`), so a 4-hour file is never whole in memory (4 h of 16 kHz float32 would be
  920 MB); the transcriber consumes it window by window;
- it stops as soon as the audio exceeds max_duration_s, so an over-long upload is refused without decoding hours
  of it, and it turns every FFmpeg failure into audio_decode_failed;
- it can return one channel of a multi-channel file (`channel`) instead of the mono downmix.
`cut_spans` cuts given stretches out of that stream, for the stages that need only parts of the file.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Iterable, Iterator
from typing import TypeVar

import av
import numpy as np

from .protocol import AUDIO_DECODE_FAILED, AUDIO_TOO_LONG, EngineError, ProbeResult, bad_request

SAMPLE_RATE = 16000  # what Whisper and Silero VAD expect
T = TypeVar("T")
_GROUP_SAMPLES = 500_000  # resample in large blocks: per-frame resampling is slow for codecs with 20 ms frames


def _decode_error(path: str, e: BaseException) -> EngineError:
    return EngineError(AUDIO_DECODE_FAILED, f"cannot decode {path}: {e}")


def _open(path: str) -> av.container.InputContainer:
    try:
        return av.open(path, mode="r", metadata_errors="ignore")
    except (av.FFmpegError, OSError, ValueError) as e:  # zero-byte and non-media files raise InvalidDataError
        raise _decode_error(path, e) from e


def _audio_stream(container: av.container.InputContainer, path: str) -> av.audio.stream.AudioStream:
    if not container.streams.audio:
        raise EngineError(AUDIO_DECODE_FAILED, f"no audio stream in {path} (format {container.format.name})")
    stream = container.streams.audio[0]
    if stream.codec_context is None:  # FFmpeg knows no decoder for the codec (a WAV with an unknown format tag)
        raise EngineError(AUDIO_DECODE_FAILED, f"no decoder for the audio codec of {path}")
    return stream


def probe(path: str) -> ProbeResult:
    with _open(path) as container:
        stream = _audio_stream(container, path)
        ctx = stream.codec_context
        # The container's duration (AV_TIME_BASE units) is what the file declares; fall back to the stream's.
        if container.duration is not None:
            duration_s: float | None = container.duration / av.time_base
        elif stream.duration is not None and stream.time_base is not None:
            duration_s = float(stream.duration * stream.time_base)
        else:
            duration_s = None
        return ProbeResult(
            format=container.format.name,
            codec=ctx.name,
            duration_s=duration_s,
            channels=ctx.channels,
            sample_rate=ctx.sample_rate,
        )


def stream(path: str, max_duration_s: float | None = None, channel: int | None = None) -> Iterator[np.ndarray]:
    """Decode the first audio stream to 16 kHz float32 in [-1, 1), as consecutive blocks (about 500,000 input
    samples each, so a few seconds to half a minute of audio).

    channel None: the mono downmix of all channels; an index: that channel alone (bad_request when the stream has
    no such channel). Raises audio_too_long as soon as more than max_duration_s was decoded, and
    audio_decode_failed when the file cannot be opened or yields no audio at all.
    """
    limit = int(max_duration_s * SAMPLE_RATE) if max_duration_s is not None else None
    total = 0
    # With a channel, keep the input's layout (None) in planar s16 and pick the row; else let FFmpeg downmix to
    # mono s16, exactly as faster_whisper.audio.decode_audio does (a float downmix would be about 3 dB louder).
    if channel is None:
        resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    else:
        resampler = av.AudioResampler(format="s16p", layout=None, rate=SAMPLE_RATE)
    try:
        with _open(path) as container:
            audio_stream = _audio_stream(container, path)
            channels = audio_stream.codec_context.channels
            if channel is not None and not 0 <= channel < max(channels, 1):
                raise bad_request(f"channel {channel} does not exist: the audio has {channels} channel(s)")
            for frame in _resample(_group(_skip_invalid(container.decode(audio_stream))), resampler):
                planes = frame.to_ndarray()  # (1, samples) for packed mono, (channels, samples) for planar
                block = planes[0 if channel is None else channel].astype(np.float32)
                block *= 1.0 / 32768.0
                if block.size == 0:
                    continue
                total += block.shape[0]
                if limit is not None and total > limit:
                    raise EngineError(
                        AUDIO_TOO_LONG,
                        f"audio is longer than max_duration_s={max_duration_s:g} "
                        f"(stopped decoding at {total / SAMPLE_RATE:.1f}s)",
                    )
                yield block
    except EngineError:
        raise
    except (av.FFmpegError, OSError, ValueError) as e:
        raise _decode_error(path, e) from e
    finally:
        # PyAV resampler objects are only freed by the cycle collector (faster-whisper issue #390).
        del resampler
        gc.collect()
    if total == 0:
        raise EngineError(AUDIO_DECODE_FAILED, f"no audio could be decoded from {path}")


def measure(path: str, max_duration_s: float | None = None) -> float:
    """Decoded length in seconds (decodes the whole file, keeping nothing): for files whose container does not say
    or says more than the limit, so that an over-long file fails before any transcription work."""
    return sum(block.shape[0] for block in stream(path, max_duration_s)) / SAMPLE_RATE


def probe_or_none(path: str) -> ProbeResult | None:
    """`probe`, or None where the container cannot be read: the decoder then gives the precise error."""
    try:
        return probe(path)
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
    # the earliest start of the spans from each one on (a resemblyzer span at the file's end reaches back a little)
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


def _skip_invalid(frames: Iterator[av.AudioFrame]) -> Iterator[av.AudioFrame]:
    """End the stream at an undecodable packet and keep what was decoded before it, as faster-whisper does: a
    truncated upload still yields its good part. (PyAV's decode generator cannot resume after it raised.)"""
    while True:
        try:
            yield next(frames)
        except StopIteration:
            return
        except av.InvalidDataError:
            return


def _group(frames: Iterator[av.AudioFrame]) -> Iterator[av.AudioFrame]:
    fifo = av.AudioFifo()
    for frame in frames:
        frame.pts = None  # the fifo checks timestamp continuity, which broken files do not keep
        fifo.write(frame)
        if fifo.samples >= _GROUP_SAMPLES and (group := fifo.read()) is not None:
            yield group
    if fifo.samples > 0 and (group := fifo.read()) is not None:
        yield group


def _resample(frames: Iterator[av.AudioFrame], resampler: av.AudioResampler) -> Iterator[av.AudioFrame]:
    for frame in itertools.chain(frames, [None]):  # None flushes the resampler's buffered tail
        yield from resampler.resample(frame)
