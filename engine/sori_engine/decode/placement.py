"""Time placement: a decoded segment's times moved from clip time to chunk, window and file time, and kept inside
the audio they were decoded from. Whisper's last timestamp token can point past the end of the audio it was given,
into the padding of its window; mapped back, such an end would lie in the silence the VAD cut out or on the next
chunk's speech."""

from __future__ import annotations

from dataclasses import replace

from ..transcript import Segment, Word
from .fw import FwSegment


def shift(fw: FwSegment, dt: float) -> FwSegment:
    """`fw` (and its words) moved by `dt` seconds, in place."""
    fw.start += dt
    fw.end += dt
    for w in fw.words or ():
        w.start += dt
        w.end += dt
    return fw


def within(fw: FwSegment, length_s: float) -> FwSegment:
    """A segment's times (chunk time) kept inside its chunk's speech, `length_s` long, in place."""
    fw.start = clip(fw.start, 0.0, length_s)
    fw.end = clip(fw.end, fw.start, length_s)
    for w in fw.words or ():
        w.start = clip(w.start, fw.start, fw.end)
        w.end = clip(w.end, w.start, fw.end)
    return fw


def to_segment(fw: FwSegment, language: str, with_words: bool, offset_s: float) -> Segment | None:
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
