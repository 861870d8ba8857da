"""Stage 1, windows and chunks: the decoded blocks of a file grouped into windows, each window's speech found by the
VAD, and its speech regions merged into chunks of at most one Whisper window of speech.

Memory is bounded whatever the file's length: only a window (`checkpoint.window_s`, 300 s: about 20 MB of float32)
and its speech are in memory at once. Speech regions that may run on past a window's end are carried into the next
window instead of being cut (docs/engine.md, "Decoding stages").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from .. import vad
from ..decode_options import DecodeOptions
from ..pcm import SAMPLE_RATE

Region = dict  # {"start": sample, "end": sample}, the shape faster-whisper's VAD helpers use


@dataclass
class Window:
    """A stretch of the file held for the VAD: `audio` starts at sample `offset` of the file."""

    offset: int
    audio: np.ndarray
    regions: list[Region]  # final speech regions, in window samples
    probs: np.ndarray  # Silero's speech probability of each 32 ms frame of `audio` (the verdicts' speech map)


def vad_options(narrowband: bool, options: DecodeOptions) -> vad.VadOptions:
    """Silero's settings for a file: the phone threshold for narrow-band audio (phone.py)."""
    return vad.VadOptions(
        threshold=options.phone_vad_threshold if narrowband else options.vad_threshold,
        max_speech_duration_s=options.speech_s,
        min_silence_duration_ms=options.min_silence_ms,
        speech_pad_ms=options.vad_pad_ms,
    )


def skip_to(blocks: Iterable[np.ndarray], sample: int) -> Iterator[np.ndarray]:
    """The decoded blocks from file sample `sample` on: whole blocks before it are dropped and the one it falls in
    is cut there. Resuming at a window's start, the first block is then exactly the audio the uninterrupted run
    carried over from the previous window, and the later blocks are the same blocks, so the windows that follow are
    the same windows (checkpoint.py)."""
    seen = 0
    for block in blocks:
        end = seen + block.shape[0]
        if end > sample:
            yield block if seen >= sample else block[sample - seen :]
        seen = end


def windows(
    blocks: Iterable[np.ndarray],
    use_vad: bool,
    window_s: float,
    options: DecodeOptions,
    narrowband: bool = False,
    start_sample: int = 0,
    known_probs: np.ndarray | None = None,
) -> Iterator[Window]:
    """Group decoded blocks into windows and find their speech. A region that may continue past a window's end
    (it ends within `guard_s` of it) is not final: the audio from its start is carried into the next window, so no
    region is ever cut by a window boundary. Without VAD every window is cut into plain `chunk_s` regions.
    Narrow-band audio (`narrowband`: the container says so) gets the phone VAD threshold. One Silero pass gives both
    a window's regions and its speech probabilities (vad.py), the frames before each onset scored again from a fresh
    state (vad.rescore_onsets). `known_probs`: the probabilities of the audio from `start_sample` on, already
    computed (a streaming session's), for the first window."""
    window_samples = int(window_s * SAMPLE_RATE)
    guard = int(options.guard_s * SAMPLE_RATE)
    pending: list[np.ndarray] = []
    pending_len = 0
    offset = start_sample  # file sample where the pending audio starts (`blocks` start there)
    exhausted = False
    it = iter(blocks)
    while not exhausted:
        for block in it:
            pending.append(block)
            pending_len += block.shape[0]
            if pending_len >= window_samples:
                break
        else:
            exhausted = True
        if pending_len == 0:
            return
        buf = np.concatenate(pending) if len(pending) > 1 else pending[0]
        pending, pending_len = [], 0
        vopts = vad_options(narrowband, options)
        if known_probs is not None and offset == start_sample and known_probs.size:
            n = -(-buf.shape[0] // vad.FRAME)  # the frames of buf, the last one padded, as vad.probabilities has them
            probs = np.pad(known_probs[:n], (0, max(0, n - known_probs.shape[0])), mode="edge")
        else:
            probs = vad.probabilities(buf)
            if use_vad:  # onsets scored again from a fresh state (vad.rescore_onsets); a session's probs are its own
                probs = vad.rescore_onsets(buf, probs, vopts.threshold, options)
        if not use_vad:
            step = int(options.chunk_s * SAMPLE_RATE)
            cut = buf.shape[0] if exhausted else buf.shape[0] - buf.shape[0] % step
            regions = [{"start": s, "end": min(s + step, cut)} for s in range(0, cut, step)]
        else:
            regions = vad.regions(probs, vopts, buf.shape[0])
            if exhausted:
                cut = buf.shape[0]
            else:
                limit = buf.shape[0] - guard
                open_regions = [r for r in regions if r["end"] > limit]
                regions = [r for r in regions if r["end"] <= limit]
                cut = open_regions[0]["start"] if open_regions else limit
                if cut <= 0:  # cannot happen with a window longer than a chunk and the guard; keep going, not loop
                    cut, regions = buf.shape[0], regions + open_regions
        # The frames of the audio kept (the carried rest is scored again with the next window); the last one may
        # also hold samples after the cut, which the speech map's 32 ms resolution cannot tell apart.
        yield Window(offset=offset, audio=buf[:cut], regions=regions, probs=probs[: -(-cut // vad.FRAME)])
        if cut < buf.shape[0]:
            pending, pending_len = [buf[cut:].copy()], buf.shape[0] - cut
        offset += cut


def group(regions: list[Region], max_samples: int) -> list[list[Region]]:
    """Merge consecutive speech regions into chunks of at most max_samples of speech (regions are already capped
    at that length by the VAD's max_speech_duration_s). Two chunks decoded apart lose the words at their seam when
    it falls inside speech, so a chunk that would end where two regions touch (a pause under the VAD's padding, or a
    cut the VAD made in long speech) ends instead at its last real gap, if that leaves it a third full or more."""
    groups: list[list[Region]] = []
    current: list[Region] = []
    size = 0
    for region in regions:
        length = region["end"] - region["start"]
        if length <= 0:
            continue
        if current and size + length > max_samples:
            keep = last_gap(current, max_samples // 3) if current[-1]["end"] >= region["start"] else None
            carry = current[keep:] if keep is not None else []
            size = samples(carry)
            if size + length > max_samples:
                carry, size = [], 0
            groups.append(current[: len(current) - len(carry)])
            current = carry
        current.append(region)
        size += length
    if current:
        groups.append(current)
    return groups


def last_gap(chunk: list[Region], min_before: int) -> int | None:
    """The index of the last region of `chunk` that follows a gap (its start after the previous one's end) with at
    least `min_before` samples of speech before it."""
    before = samples(chunk)
    for k in range(len(chunk) - 1, 0, -1):
        before -= chunk[k]["end"] - chunk[k]["start"]
        if chunk[k - 1]["end"] < chunk[k]["start"] and before >= min_before:
            return k
    return None


def samples(regions: list[Region]) -> int:
    """Samples of speech in `regions`."""
    return sum(r["end"] - r["start"] for r in regions)


def cut(audio: np.ndarray, regions: list[Region]) -> np.ndarray:
    """The speech of `regions` laid end to end."""
    if not regions:
        return audio[:0]
    if len(regions) == 1:
        return audio[regions[0]["start"] : regions[0]["end"]]  # a view, no copy
    return np.concatenate([audio[r["start"] : r["end"]] for r in regions])


def after(chunk: list[Region], sample: int) -> list[Region]:
    """The part of a chunk's speech regions after `sample` (window samples)."""
    return [{"start": max(r["start"], sample), "end": r["end"]} for r in chunk if r["end"] > sample]
