"""Diarization error rate and the reference turns it is scored against (bench/diarization.py).

`der`: (missed + false alarm + confusion) / reference speech, frame-based at 10 ms, speakers mapped one-to-one by the
assignment that maximises overlap (Hungarian); `collar` seconds around every reference boundary are not scored (0.25:
the usual collar), and only the UEM's region when one is given. Overlapped speech counts once per speaker, in the
reference and in the hypothesis. `main_speakers`: the reference speakers a count is judged against.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

FRAME = 0.01
Ref = list[tuple[float, float, str]]
Uem = tuple[float, float] | None


def _frame(t: float) -> int:
    return int(np.rint(t / FRAME))  # half to even, as round()


def grid(turns: list, n: int) -> np.ndarray:
    """(frames, speakers) activity of `turns` on the 10 ms grid, speakers in sorted order."""
    ids = sorted({spk for _, _, spk in turns})
    out = np.zeros((n, max(1, len(ids))), dtype=bool)
    for s, e, spk in turns:
        out[_frame(s) : _frame(e), ids.index(spk)] = True
    return out


def scored_frames(ref: Ref, n: int, collar: float, uem: Uem) -> np.ndarray:
    """The frames scored: inside the UEM, outside `collar` of every reference boundary."""
    scored = np.ones(n, dtype=bool)
    if uem:
        scored[:] = False
        scored[_frame(uem[0]) : _frame(uem[1])] = True
    if collar > 0:
        c = _frame(collar)
        for s, e, _ in ref:
            for b in (_frame(s), _frame(e)):
                scored[max(0, b - c) : b + c] = False
    return scored


def der(ref: Ref, hyp: list[tuple[float, float, int]], collar: float, uem: Uem) -> dict[str, float]:
    """DER and its parts (`miss`, `fa`, `conf`), each a share of the reference speech scored."""
    end = max([e for _, e, _ in ref] + [e for _, e, _ in hyp] + [uem[1] if uem else 0.0]) + 1
    n = int(np.ceil(end / FRAME))
    scored = scored_frames(ref, n, collar, uem)
    r, h = grid(ref, n)[scored], grid(hyp, n)[scored]
    overlap = r.T.astype(np.int64) @ h.astype(np.int64)
    ri, hi = linear_sum_assignment(-overlap)
    correct = overlap[ri, hi].sum()
    n_ref, n_hyp = r.sum(axis=1), h.sum(axis=1)
    total = max(int(n_ref.sum()), 1)
    miss = np.maximum(0, n_ref - n_hyp).sum()
    fa = np.maximum(0, n_hyp - n_ref).sum()
    conf = np.minimum(n_ref, n_hyp).sum() - correct
    return {
        "der": float((miss + fa + conf) / total),
        "miss": float(miss / total),
        "fa": float(fa / total),
        "conf": float(conf / total),
    }


def read_rttm(path: Path) -> Ref:
    out = []
    for line in path.read_text().splitlines():
        p = line.split()
        if p and p[0] == "SPEAKER":
            out.append((float(p[3]), float(p[3]) + float(p[4]), p[7]))
    return out


def read_uem(path: Path) -> Uem:
    """The scored region of a one-line UEM file; None when there is no such file."""
    if not path.exists():
        return None
    p = path.read_text().split()
    return (float(p[2]), float(p[3]))


def main_speakers(ref: Ref, uem: Uem, min_s: float = 2.0) -> int:
    """Reference speakers with at least min_s of speech in the scored region: a meeting excerpt's reference often
    holds someone who says one word; no clustering finds a speaker from 0.4 s, so counts are judged against these."""
    lo, hi = uem if uem else (0.0, float("inf"))
    total: dict[str, float] = {}
    for s, e, spk in ref:
        total[spk] = total.get(spk, 0.0) + max(0.0, min(e, hi) - max(s, lo))
    return sum(1 for v in total.values() if v >= min_s)
