"""Time placement: a decoded segment's times moved from clip time to chunk, window and file time, and kept inside
the audio they were decoded from. Whisper's last timestamp token can point past the end of the audio it was given,
into the padding of its window; mapped back, such an end would lie in the silence the VAD cut out or on the next
chunk's speech."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import replace

from ..model.interface import Decoded
from ..pcm import SAMPLE_RATE
from ..transcript import Segment, Word


def shift(fw: Decoded, dt: float) -> Decoded:
    """`fw` (and its words) moved by `dt` seconds, in place."""
    fw.start += dt
    fw.end += dt
    for w in fw.words or ():
        w.start += dt
        w.end += dt
    return fw


def to_window_time(segments: Iterable[Decoded], chunk: list[dict]) -> list[Decoded]:
    """Segments decoded from a chunk's speech regions laid end to end (`chunk`: window samples) moved, in place,
    to window time: each time shifted by the silence cut out before the region it falls in, rounded to 10 ms; a
    word's start and end by the region of its middle, a segment with words then spanning them. faster-whisper's
    `restore_speech_timestamps`, whose numbers it keeps."""
    ends: list[int] = []  # each region's end, in samples of the speech laid end to end
    silence_before: list[float] = []  # seconds cut out before each region
    previous_end = silent = 0
    for r in chunk:
        silent += r["start"] - previous_end
        previous_end = r["end"]
        ends.append(r["end"] - silent)
        silence_before.append(silent / SAMPLE_RATE)

    def region_of(t: float, is_end: bool = False) -> int:
        sample = int(t * SAMPLE_RATE)
        if is_end and sample in ends:
            return ends.index(sample)
        return min(bisect.bisect(ends, sample), len(ends) - 1)

    def moved(t: float, region: int) -> float:
        return round(silence_before[region] + t, 2)

    out = []
    for fw in segments:
        if fw.words:
            for w in fw.words:
                region = region_of((w.start + w.end) / 2)
                w.start, w.end = moved(w.start, region), moved(w.end, region)
            fw.start, fw.end = fw.words[0].start, fw.words[-1].end
        else:
            fw.start = moved(fw.start, region_of(fw.start))
            fw.end = moved(fw.end, region_of(fw.end, is_end=True))
        out.append(fw)
    return out


def within(fw: Decoded, length_s: float) -> Decoded:
    """A segment's times (chunk time) kept inside its chunk's speech, `length_s` long, in place."""
    fw.start = clip(fw.start, 0.0, length_s)
    fw.end = clip(fw.end, fw.start, length_s)
    for w in fw.words or ():
        w.start = clip(w.start, fw.start, fw.end)
        w.end = clip(w.end, w.start, fw.end)
    return fw


def to_segment(fw: Decoded, language: str, with_words: bool, offset_s: float) -> Segment | None:
    """The protocol's segment of a decoded one in window time, `offset_s` the window's start in the file; None
    when it has no text."""
    text = fw.text.strip()
    if not text:
        return None
    start = max(fw.start, 0.0) + offset_s
    end = max(fw.end + offset_s, start)
    words = None
    if with_words:
        words = tuple(
            Word(
                start=clip(w.start + offset_s, start, end),
                end=clip(max(w.start, w.end) + offset_s, start, end),
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


def in_file(seg: Segment, duration_s: float) -> Segment:
    """`seg` with every time inside the file."""
    start = clip(seg.start, 0.0, duration_s)
    end = clip(seg.end, start, duration_s)
    if start == seg.start and end == seg.end:
        return seg
    words = None
    if seg.words is not None:
        words = tuple(replace(w, start=clip(w.start, start, end), end=clip(w.end, start, end)) for w in seg.words)
    return replace(seg, start=start, end=end, words=words)


def clip(t: float, lo: float, hi: float) -> float:
    return min(max(t, lo), hi)
