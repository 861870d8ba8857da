"""From clustered windows to speaker turns (`speaker_turns`): each 10 ms frame of speech takes the label with the
most (centre-weighted) votes of the windows covering it; runs shorter than `min_turn_s` are absorbed by their
neighbours; turns are the remaining runs, with overlap turns of a second speaker added where the segmentation hears
two at once. Turns carry cluster ids renumbered in order of first appearance; assigning words to turns and splitting
utterances is the TypeScript side's job (src/diarization/)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np

from .config import DiarizeConfig

FRAME_S = 0.01  # the frame grid of regions, windows and labels (one fbank / mel frame, 160 samples)


@dataclass(frozen=True)
class Turn:
    start: float
    end: float
    speaker: int

    def to_json(self) -> dict[str, object]:
        return {"start": round(self.start, 3), "end": round(self.end, 3), "speaker": self.speaker}


@dataclass(frozen=True)
class DiarizeResult:
    duration_s: float
    num_speakers: int
    turns: list[Turn]

    def to_json(self) -> dict[str, object]:
        return {
            "duration_s": round(self.duration_s, 3),
            "num_speakers": self.num_speakers,
            "turns": [t.to_json() for t in self.turns],
        }


def speaker_turns(
    n_frames: int,
    regions: list[tuple[int, int]],
    windows: list[tuple[int, int]],
    win_labels: np.ndarray,
    overlap: np.ndarray,
    local: np.ndarray,
    local2: np.ndarray,
    cfg: DiarizeConfig,
) -> list[Turn]:
    """The turns of labelled windows: frame labels, smoothed, with the overlap turns (`overlap`, `local` and `local2`
    per frame: the segmentation's Activity)."""
    k = int(win_labels.max()) + 1
    labels = smooth(frame_labels(n_frames, regions, windows, win_labels, k), max(1, round(cfg.min_turn_s / FRAME_S)))
    if k < 2:
        return turns_from_labels(labels)
    extra = local_overlap_turns(labels, local, local2, overlap > cfg.overlap_threshold, cfg)
    return turns_with_overlap(labels, extra)


def bool_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def frame_labels(
    n_frames: int, regions: list[tuple[int, int]], windows: list[tuple[int, int]], labels: np.ndarray, k: int
) -> np.ndarray:
    """A speaker per 10 ms frame (-1: not speech). Votes are weighted towards each window's centre."""
    votes = np.zeros((n_frames, max(k, 1)), dtype=np.float32)
    for (s, e), lab in zip(windows, labels, strict=True):
        length = e - s
        w = np.hanning(length + 2)[1:-1] if length > 2 else np.ones(length)
        votes[s:e, lab] += w[: max(0, min(e, n_frames) - s)]
    out = np.full(n_frames, -1, dtype=np.int64)
    voted = votes.sum(axis=1) > 0
    best = np.argmax(votes, axis=1)
    voted_idx = np.flatnonzero(voted)
    for s, e in regions:
        e = min(e, n_frames)
        if e <= s:
            continue
        if voted_idx.size == 0:
            out[s:e] = 0
            continue
        frames = np.arange(s, e)
        # Frames no window covers (a region too short to embed) take the nearest covered frame's speaker.
        pos = np.clip(np.searchsorted(voted_idx, frames), 1, voted_idx.size - 1) if voted_idx.size > 1 else None
        if pos is None:
            nearest = np.full(frames.shape, voted_idx[0])
        else:
            left, right = voted_idx[pos - 1], voted_idx[pos]
            nearest = np.where(np.abs(frames - left) <= np.abs(right - frames), left, right)
        out[s:e] = np.where(voted[s:e], best[s:e], best[nearest])
    return out


def _runs(labels: np.ndarray) -> list[tuple[int, int, int]]:
    """Runs of equal labels as (start, end, label), skipping -1."""
    runs: list[tuple[int, int, int]] = []
    if labels.size == 0:
        return runs
    change = np.flatnonzero(np.diff(labels)) + 1
    bounds = np.concatenate([[0], change, [labels.size]])
    for s, e in itertools.pairwise(bounds):
        lab = int(labels[s])
        if lab >= 0:
            runs.append((int(s), int(e), lab))
    return runs


def smooth(labels: np.ndarray, min_turn_frames: int) -> np.ndarray:
    """Relabel speech runs shorter than min_turn_frames with the label of the adjacent run of the same region
    (the longer neighbour), repeatedly, shortest first."""
    labels = labels.copy()
    for _ in range(1000):  # bounded: each pass removes at least one short run
        runs = _runs(labels)
        candidates = []
        for i, (s, e, _lab) in enumerate(runs):
            if e - s >= min_turn_frames:
                continue
            left = runs[i - 1] if i > 0 and runs[i - 1][1] == s else None
            right = runs[i + 1] if i + 1 < len(runs) and runs[i + 1][0] == e else None
            if left is None and right is None:
                continue  # a short region alone keeps its own label
            candidates.append((e - s, i, left, right))
        if not candidates:
            break
        _, i, left, right = min(candidates, key=lambda c: c[0])
        s, e, _lab = runs[i]
        pick = max((r for r in (left, right) if r is not None), key=lambda r: r[1] - r[0])
        labels[s:e] = pick[2]
    return labels


def turns_from_labels(labels: np.ndarray) -> list[Turn]:
    """Turns with speakers renumbered 0..N-1 in order of first appearance; adjacent same-speaker runs merged."""
    order: dict[int, int] = {}
    turns: list[Turn] = []
    for s, e, lab in _runs(labels):
        spk = order.setdefault(lab, len(order))
        if turns and turns[-1].speaker == spk and abs(turns[-1].end - s * FRAME_S) < 1e-6:
            turns[-1] = replace(turns[-1], end=e * FRAME_S)
        else:
            turns.append(Turn(start=s * FRAME_S, end=e * FRAME_S, speaker=spk))
    return turns


def overlap_turns(labels: np.ndarray, overlap: np.ndarray, cfg: DiarizeConfig) -> list[tuple[int, int, int]]:
    """A second speaker for each run of overlapped speech: the nearest speaker, before or after the run and within
    overlap_context_s, other than the one the run's frames are labelled with (the one being interrupted, or
    interrupting: real overlap sits next to the other speaker's own speech; a run with no other speaker that close
    is more often one reverberant far-microphone voice, docs/diarization.md). (start, end, label) in frames."""
    out: list[tuple[int, int, int]] = []
    ctx = round(cfg.overlap_context_s / FRAME_S)
    for a, b in bool_runs(overlap & (labels >= 0)):
        own = labels[a:b]
        main = int(np.bincount(own[own >= 0]).argmax())
        before = labels[max(0, a - ctx) : a][::-1]
        after = labels[b : b + ctx]
        found: list[tuple[int, int]] = []  # (distance in frames, label)
        for side in (before, after):
            hit = np.flatnonzero((side >= 0) & (side != main))
            if hit.size:
                found.append((int(hit[0]), int(side[hit[0]])))
        if found:
            out.append((a, b, min(found)[1]))
    return out


def local_overlap_turns(
    labels: np.ndarray, local: np.ndarray, local2: np.ndarray, overlap: np.ndarray, cfg: DiarizeConfig
) -> list[tuple[int, int, int]]:
    """Overlap turns from segmentation-3.0's own pairs: where its arg-max class is a pair of local speakers, the
    second is the speaker (cluster) that local speaker's own frames were labelled with, when it has at least
    `local_map_s` of them, differs from the frame's label and is heard within `overlap_context_s`. Runs of
    `overlap` (frames above the overlap threshold) that get no second speaker this way fall back to `overlap_turns`
    (the other speaker heard nearby). (start, end, label) in frames."""
    ok = (local >= 0) & (labels >= 0)
    pairs = np.stack([local[ok], labels[ok]], axis=1)
    best: dict[int, tuple[int, int]] = {}  # local code -> (frames, cluster)
    if pairs.size:
        codes, counts = np.unique(pairs, axis=0, return_counts=True)
        for (code, lab), n in zip(codes.tolist(), counts.tolist(), strict=True):
            if n > best.get(code, (0, -1))[0]:
                best[code] = (n, lab)
    lut = np.full(max(int(local.max(initial=-1)), int(local2.max(initial=-1))) + 2, -1, dtype=np.int64)
    for code, (n, lab) in best.items():
        if n >= round(cfg.local_map_s / FRAME_S):
            lut[code] = lab
    second = lut[np.where(local2 >= 0, local2, -1)]  # index -1 is the last entry, always -1
    second[(second == labels) | (labels < 0)] = -1
    out: list[tuple[int, int, int]] = []
    ctx = round(cfg.overlap_context_s / FRAME_S)
    for lab in np.unique(second[second >= 0]).tolist():
        for a, b in bool_runs(second == lab):
            # as in overlap_turns: real overlap sits next to the second speaker's own speech; a pair far from it is
            # more often one reverberant voice (built calls without overlap got worse without this check)
            near = (labels[max(0, a - ctx) : a] == lab).any() or (labels[b : b + ctx] == lab).any()
            if b - a >= round(cfg.min_overlap_turn_s / FRAME_S) and near:
                out.append((a, b, lab))
    found = second >= 0
    out.extend(t for t in overlap_turns(labels, overlap, cfg) if not found[t[0] : t[1]].any())
    return out


def turns_with_overlap(labels: np.ndarray, extra: list[tuple[int, int, int]]) -> list[Turn]:
    """Turns of the frame labels plus the overlap turns, sorted, speakers renumbered by first appearance."""
    raw = [(t.start, t.end, t.speaker) for t in turns_from_labels(labels)]
    # turns_from_labels renumbered its labels by first appearance: map the overlap labels the same way
    order: dict[int, int] = {}
    for _s, _e, lab in _runs(labels):
        order.setdefault(lab, len(order))
    for s, e, lab in extra:
        order.setdefault(lab, len(order))
        raw.append((s * FRAME_S, e * FRAME_S, order[lab]))
    # an overlap turn can touch or overlap its own speaker's next turn: one speaker's turns are joined there
    raw.sort(key=lambda t: (t[2], t[0], t[1]))
    joined: list[tuple[float, float, int]] = []
    for start, end, spk in raw:
        if joined and joined[-1][2] == spk and start <= joined[-1][1] + 1e-6:
            joined[-1] = (joined[-1][0], max(joined[-1][1], end), spk)
        else:
            joined.append((start, end, spk))
    raw = sorted(joined, key=lambda t: (t[0], t[1]))
    renum: dict[int, int] = {}
    return [Turn(s, e, renum.setdefault(spk, len(renum))) for s, e, spk in raw]
