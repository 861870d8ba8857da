"""Clustering the windows' speaker embeddings into speakers (scikit-learn: spectral clustering, silhouette); the
count stage (count.py) decides how many.

- `spk_count` > 0: spectral clustering of the cosine affinity into exactly min(spk_count, windows) clusters, then a
  few passes of nearest-centroid re-assignment (`refine_iters`);
- `spk_count` = 0: `estimate_count` picks k (a one-speaker check, then the best silhouette of spectral clusterings
  for k = 2..max_speakers on file-centred embeddings, then k lowered while two centroids' cosine exceeds
  `merge_sim`), then the same clustering into k; clusters holding less than `min_cluster_share` of the windows or
  less than `min_speaker_s` of speech are folded into their nearest cluster, unless they hold
  `distinct_cluster_share` and their centroid is far from every other (`distinct_cluster_sim`): a speaker who talks
  little.

A long file's windows are clustered through an evenly spread subset of `max_cluster_windows` (the affinity is n²),
the rest joining the nearest centroid: the whole file's embeddings (a few hundred bytes per window) are all this
needs, never its audio.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import DiarizeConfig


def _affinity(emb: np.ndarray) -> np.ndarray:
    sim = np.clip(emb @ emb.T, 0.0, 1.0)  # spectral clustering needs a non-negative affinity
    return (sim + sim.T) / 2


def cluster(emb: np.ndarray, spk_count: int, cfg: DiarizeConfig) -> np.ndarray:
    """Cluster labels for the windows' embeddings."""
    n = emb.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if n == 1 or spk_count == 1:
        return np.zeros(n, dtype=np.int64)
    # Affinity matrices are n²: on a long file cluster an evenly spread subset, then give every window the speaker
    # of the nearest cluster centroid.
    sub = np.unique(np.linspace(0, n - 1, min(n, cfg.max_cluster_windows)).round().astype(np.int64))
    e = emb[sub]
    if spk_count > 0:
        labels = _refine(e, _spectral(e, min(spk_count, e.shape[0])), cfg.refine_iters)
    else:
        k = estimate_count(e, cfg)
        labels = np.zeros(e.shape[0], dtype=np.int64) if k == 1 else _refine(e, _spectral(e, k), cfg.refine_iters)
        labels = _fold_small(e, labels, _sizes(e.shape[0], n, cfg))
    if sub.shape[0] == n:
        return labels
    centroids = np.stack([e[labels == i].mean(axis=0) for i in range(int(labels.max()) + 1)])
    return np.argmax(emb @ centroids.T, axis=1).astype(np.int64)


def _centred(emb: np.ndarray) -> np.ndarray:
    c = emb - emb.mean(axis=0)
    return c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-8)


def estimate_count(emb: np.ndarray, cfg: DiarizeConfig) -> int:
    """The number of speakers, 1..max_speakers (docs/diarization.md, "Estimating the count").

    1 when the two halves of a 2-way spectral split are nearly the same voice (centroid cosine > one_speaker_sim);
    otherwise the k in 2..max_speakers whose spectral clustering has the best silhouette on the file-centred
    embeddings, stepped down while its two closest centroids have a cosine above merge_sim (k ≥ 3 only).
    Centring (subtracting the file's mean embedding) removes what all windows share: room, channel, level. A k whose split leaves a cluster under
    min_cluster_share of the windows is not a candidate.
    """
    from sklearn.metrics import silhouette_score

    n = emb.shape[0]
    sizes = _sizes(n, n, cfg)
    if n < 3 or n < 2 * sizes.large:
        return 1
    two = _spectral(emb, 2)
    if two.max() < 1:
        return 1
    c = np.stack([emb[two == i].mean(axis=0) for i in range(2)])
    c /= np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-8)
    if float(c[0] @ c[1]) > cfg.one_speaker_sim:
        return 1
    centred = _centred(emb)
    dist = np.clip(1.0 - centred @ centred.T, 0.0, 2.0)
    np.fill_diagonal(dist, 0.0)
    best_k, best_score = 2, -np.inf
    splits: dict[int, np.ndarray] = {}
    for k in range(2, min(cfg.max_speakers, n - 1) + 1):
        labels = _fold_small(emb, _spectral(emb, k), sizes)
        if int(labels.max()) + 1 != k:
            continue
        splits[k] = labels
        score = float(silhouette_score(dist, labels, metric="precomputed"))
        if score > best_score:
            best_k, best_score = k, score
    # Silhouette alone over-splits one voice heard at several microphone distances (each distance becomes a tight
    # cluster); such sub-clusters keep centroids closer (raw cosine 0.88-0.91) than any two real speakers of the
    # bench do (at most 0.85-0.86 for the two Korean women in one room). So step k down while the closest pair is
    # that close. Only for k ≥ 3: k = 2 against 1 is the one_speaker_sim check above.
    while best_k > 2 and (best_k not in splits or _closest_centroids(emb, splits[best_k]) > cfg.merge_sim):
        best_k -= 1
    return best_k


def _closest_centroids(emb: np.ndarray, labels: np.ndarray) -> float:
    """The highest cosine between two cluster centroids."""
    c = np.stack([emb[labels == i].mean(axis=0) for i in range(int(labels.max()) + 1)])
    c /= np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-8)
    sim = c @ c.T
    np.fill_diagonal(sim, -1.0)
    return float(sim.max())


def _refine(emb: np.ndarray, labels: np.ndarray, iters: int) -> np.ndarray:
    """A few k-means-style passes on the cosine (each window to its nearest centroid): spectral clustering cuts the
    window graph, which can leave windows near a cut on the wrong side. Stops early when nothing moves or a cluster
    would empty; k never changes."""
    k = int(labels.max()) + 1 if labels.size else 0
    if k < 2 or k >= labels.size:
        return labels
    for _ in range(iters):
        c = np.stack([emb[labels == i].mean(axis=0) for i in range(k)])
        c /= np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-8)
        new = np.argmax(emb @ c.T, axis=1).astype(np.int64)
        if np.array_equal(new, labels) or np.unique(new).size < k:
            break
        labels = new
    return labels


def _spectral(emb: np.ndarray, k: int) -> np.ndarray:
    from sklearn.cluster import SpectralClustering

    n = emb.shape[0]
    if k >= n:
        return np.arange(n, dtype=np.int64)
    aff = _affinity(emb)
    model = SpectralClustering(n_clusters=k, affinity="precomputed", random_state=0, assign_labels="cluster_qr")
    labels = model.fit_predict(aff).astype(np.int64)
    _, labels = np.unique(labels, return_inverse=True)
    return labels.astype(np.int64)


@dataclass(frozen=True)
class _Sizes:
    """Windows a cluster needs to count as a speaker when estimating: `large` always; `distinct` when its centroid's
    cosine to every other cluster's centroid is at most `sim`."""

    large: float
    distinct: float
    sim: float


def _sizes(n_sub: int, n_all: int, cfg: DiarizeConfig) -> _Sizes:
    """For n_sub windows clustered out of n_all: min_cluster_share of them (distinct_cluster_share for a distinct
    cluster), and min_speaker_s of speech. Short files thus come out as one speaker: on a few seconds of speech this
    model's windows of one voice differ as much as two voices do (docs/diarization.md). A distinct small cluster is
    a speaker who talks little (one of five or six, heard twice); a small cluster near another is part of that voice,
    or windows that mix two voices."""
    speech = cfg.min_speaker_s / cfg.step_s * n_sub / max(n_all, 1)
    large = max(2.0, cfg.min_cluster_share * n_sub, speech)
    distinct = min(large, max(2.0, cfg.distinct_cluster_share * n_sub, speech))
    return _Sizes(large, distinct, cfg.distinct_cluster_sim)


def _fold_small(emb: np.ndarray, labels: np.ndarray, sizes: _Sizes) -> np.ndarray:
    """Merge the clusters that do not count as speakers (`sizes`) into the nearest that does (by centroid)."""
    labels = labels.copy()
    ids, counts = np.unique(labels, return_counts=True)
    big = [i for i, c in zip(ids, counts, strict=True) if c >= sizes.distinct]
    if sizes.distinct < sizes.large:
        cents = {i: emb[labels == i].mean(axis=0) for i in big}
        cents = {i: c / max(float(np.linalg.norm(c)), 1e-8) for i, c in cents.items()}
        large = {i for i, c in zip(ids, counts, strict=True) if c >= sizes.large}
        big = [i for i in big if i in large or all(float(cents[i] @ cents[j]) <= sizes.sim for j in big if j != i)]
    if not big:
        big = [ids[int(np.argmax(counts))]]
    centroids = np.stack([emb[labels == b].mean(axis=0) for b in big])
    centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-8)
    small = ~np.isin(labels, big)
    if small.any():
        labels[small] = np.asarray(big)[np.argmax(emb[small] @ centroids.T, axis=1)]
    _, labels = np.unique(labels, return_inverse=True)
    return labels.astype(np.int64)
