"""How many speakers, and which windows are whose: the count stage between the embeddings and the turns.

The rule, with a count given (`spk_count` > 0): the windows clustered into that many (clustering.cluster). Estimated
(`spk_count` = 0), in three steps, each on what it reads best:
1. the windows (clustering.estimate_count): one speaker when a 2-way split's halves are one voice
   (`one_speaker_sim`), else the best silhouette for k = 2..max_speakers, stepped down while two centroids are one
   voice (`merge_sim`); small clusters folded (`min_cluster_share`, `min_speaker_s`) unless distinct;
2. where the windows find one speaker, the whole pieces (`count_from_pieces`: each speech piece embedded whole, a
   steadier voice than a 1 s window): more than one, and the windows are clustered into that count;
3. on a narrowband file (a phone call, `narrowband_db`), each cluster whose pieces hold two voices is split in two
   (`split_narrowband`): a phone channel pulls every voice of one sex together, so the windows' clusters follow the
   callers' sex more than their voices.
The figures behind each step: docs/diarization.md.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .clustering import cluster
from .config import DiarizeConfig
from .turns import FRAME_S

Span = tuple[int, int]


def window_labels(
    emb: np.ndarray,
    windows: list[Span],
    pieces: list[Span],
    piece_emb: np.ndarray,
    narrowband: bool,
    spk_count: int,
    cfg: DiarizeConfig,
) -> np.ndarray:
    """A speaker label per window (0..k-1): the rule of the module's docstring."""
    labels = cluster(emb, spk_count, cfg)
    if spk_count != 0 or not pieces:
        return labels
    if labels.max() == 0:
        frames = np.asarray([e - s for s, e in pieces], dtype=np.int64)
        pieces_count = count_from_pieces(piece_emb, frames, cfg) or 1
        if pieces_count > 1:
            labels = cluster(emb, pieces_count, cfg)
    if narrowband:
        labels = split_narrowband(labels, windows, emb, pieces, piece_emb, cfg)
    return labels


def count_from_pieces(piece_emb: np.ndarray, piece_frames: np.ndarray, cfg: DiarizeConfig) -> int | None:
    """The number of speakers from the embeddings of whole speech pieces (docs/diarization.md, "Many voices"), or None
    when fewer than `count_min_pieces` pieces last `count_piece_s`: a silhouette can only choose k up to one less than
    the pieces, so a short file with a piece per speaker is left to the window rule.

    One speaker when even the least similar pairs of pieces are alike (the `one_speaker_quantile` of all pairs' cosines
    at least `one_speaker_piece_sim`): one voice's pieces stay alike in any room or channel, while a second voice makes
    a share of the pairs unlike. Otherwise the k in 2..max_speakers whose average-linkage cut of the pieces has the best
    silhouette, counting only clusters holding `min_speaker_s` of speech. Both compare pieces with each other, never
    with a fixed cosine between speakers: a phone channel raises every cosine (different speakers' centroids at 0.5-0.8
    on phone-band conversations, 0.1-0.5 clean), which a fixed threshold read as one voice.
    """
    from scipy.cluster.hierarchy import fcluster, linkage
    from sklearn.metrics import silhouette_score

    keep = np.flatnonzero(piece_frames >= round(cfg.count_piece_s / FRAME_S))
    if keep.size > cfg.max_cluster_windows:  # a long file: an evenly spread subset (the distances are n²)
        keep = keep[np.linspace(0, keep.size - 1, cfg.max_cluster_windows).round().astype(np.int64)]
    emb, frames = piece_emb[keep], piece_frames[keep]
    n = emb.shape[0]
    if n < cfg.count_min_pieces:
        return None
    sim = emb @ emb.T
    pairs = sim[np.triu_indices(n, 1)]
    if float(np.quantile(pairs, cfg.one_speaker_quantile)) >= cfg.one_speaker_piece_sim:
        return 1
    dist = np.clip(1.0 - sim, 0.0, 2.0)
    np.fill_diagonal(dist, 0.0)
    tree = linkage(emb, method="average", metric="cosine")
    best_k, best_score = 2, -np.inf
    for k in range(2, min(cfg.max_speakers, n - 1) + 1):
        labels = fcluster(tree, t=k, criterion="maxclust")
        if np.unique(labels).size < 2:
            continue
        score = float(silhouette_score(dist, labels, metric="precomputed"))
        if score > best_score:
            speech = np.bincount(labels, weights=frames) * FRAME_S
            best_k, best_score = max(1, int((speech >= cfg.min_speaker_s).sum())), score
    return best_k


def split_narrowband(
    labels: np.ndarray,
    windows: list[tuple[int, int]],
    emb: np.ndarray,
    pieces: list[tuple[int, int]],
    piece_emb: np.ndarray,
    cfg: DiarizeConfig,
) -> np.ndarray:
    """Window labels with each cluster that holds two voices split in two (docs/diarization.md, "Many voices").

    For narrowband files only (the caller checks the band): a phone channel pulls every embedding of one sex
    together, so the window rule often stops at one cluster per sex. Each cluster's own pieces (those whose windows
    mostly carry its label) are asked `count_from_pieces`' question with `split_piece_sim` as the one-speaker line;
    where they hold more than one voice the cluster's windows are split in two, never more (a split into more
    over-counted calls of two or three on the tuning part)."""
    if int(labels.max(initial=0)) < 1:
        return labels
    starts = np.asarray([s for s, _ in windows])
    ends = np.asarray([e for _, e in windows])
    owner = np.full(len(pieces), -1, dtype=np.int64)
    for i, (s, e) in enumerate(pieces):
        inside = (starts >= s) & (ends <= e)
        if inside.any():
            owner[i] = int(np.bincount(labels[inside]).argmax())
    frames = np.asarray([e - s for s, e in pieces], dtype=np.int64)
    ask = replace(cfg, one_speaker_piece_sim=cfg.split_piece_sim)
    out, next_label = labels.copy(), int(labels.max()) + 1
    for c in range(int(labels.max()) + 1):
        mine = np.flatnonzero(owner == c)
        if (count_from_pieces(piece_emb[mine], frames[mine], ask) or 1) < 2:
            continue
        w = np.flatnonzero(labels == c)
        two = cluster(emb[w], 2, cfg)
        out[w[two == 1]] = next_label
        next_label += 1
    _, out = np.unique(out, return_inverse=True)
    return out.astype(np.int64)
