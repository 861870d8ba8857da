"""Speaker diarization: who spoke when, on CPU, with no token and no hub.

Two backends (docs/diarization.md has the measurements behind each number); `campplus` is the default,
`resemblyzer` (the first backend) stays selectable with SORI_DIARIZATION_BACKEND.

campplus (`embed_samples_campplus`):
1. pyannote segmentation-3.0 (segmentation.py) on 10 s chunks every `seg_step_s`: per 10 ms frame the probability
   of speech and of two speakers at once, and the chunk's dominant local speaker. Speech = its speech frames joined
   with Silero VAD's; speech regions are split where the local speaker changes inside a chunk.
2. CAM++ (campplus.py) runs once over each of those segments (cut into pieces of at most `piece_s`; fbank.py
   features) and embeds `window_s` windows every `step_s` inside it by pooling the piece's frame features, so
   overlapping windows cost no more network time than non-overlapping ones.
3-4. Clustering and frame labels as below, with thresholds of its own (`CAMPPLUS_CONFIG`).
5. Each run of overlap frames also gets a turn of the nearest other speaker (`overlap_turns`): two speakers' turns
   may overlap in time.

resemblyzer:
1. Silero VAD (the copy faster-whisper ships) finds speech regions, with short silences kept as boundaries.
2. A mel spectrogram of the whole file; windows of `window_s` every `step_s` inside each speech region (a region
   shorter than a window is one window of its own length, if at least `min_window_s`).
3. Each window is embedded by the d-vector encoder (speaker_model.py).
4. The windows are clustered (clustering lives here, next to the embeddings, because scikit-learn does):
   - `spk_count` > 0: spectral clustering of the cosine affinity into exactly min(spk_count, windows) clusters,
     then a few passes of nearest-centroid re-assignment (`refine_iters`);
   - `spk_count` = 0: `estimate_count` picks k (a one-speaker check, then the best silhouette of spectral
     clusterings for k = 2..max_speakers on file-centred embeddings, then k lowered while two centroids' cosine
     exceeds `merge_sim`), then the same clustering into k; clusters holding less than `min_cluster_share` of the
     windows or less than `min_speaker_s` of speech are folded into their nearest cluster.
5. Each 10 ms frame of speech takes the label with the most (centre-weighted) votes of the windows covering it;
   runs shorter than `min_turn_s` are absorbed by their neighbours; turns are the remaining runs.

Steps 1-3 are `embed_samples`, 4-5 `diarize_embedded`: the embeddings are deterministic, so the bench caches them
and re-runs only the clustering. The engine returns turns with cluster ids in order of first appearance;
assigning words to turns and splitting utterances is the TypeScript side's job (src/diarization/).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from . import audio as audio_mod
from .protocol import MODEL_LOAD_FAILED, EngineError
from .segmentation import LOCAL_SPEAKERS, Activity
from .speaker_model import HOP, SAMPLE_RATE, WeightsError, get_encoder, mel_spectrogram
from .torch_checkpoint import CheckpointError

FRAME_S = HOP / SAMPLE_RATE  # 0.01 s


@dataclass(frozen=True)
class DiarizeConfig:
    backend: str = "campplus"  # speaker embeddings: "campplus" (CAM++) or "resemblyzer" (GE2E d-vectors)
    window_s: float = 1.5
    step_s: float = 0.25
    min_window_s: float = 0.4
    max_speakers: int = 8
    one_speaker_sim: float = 0.91  # centroid cosine of a 2-way split above which the file is one speaker
    merge_sim: float = 0.86  # estimating: a k ≥ 3 whose two closest centroids exceed this cosine is over-split
    refine_iters: int = 3  # centroid re-assignment passes after the final spectral clustering
    min_cluster_share: float = 0.1
    min_speaker_s: float = 3.0  # when estimating, a speaker needs this much speech (in windows × step_s)
    max_cluster_windows: int = 1500
    min_turn_s: float = 0.5
    vad_threshold: float = 0.5
    vad_min_silence_ms: int = 300
    vad_pad_ms: int = 60
    batch: int = 64
    # CAM++ backend only (segmentation-3.0 replaces the VAD and finds speaker changes and overlap):
    seg_step_s: float = 5.0  # 10 s segmentation chunks every seg_step_s
    seg_onset: float = 0.5  # speech where the probability of any speaker exceeds this
    min_gap_s: float = 0.1  # shorter silences inside speech are filled
    min_speech_s: float = 0.1  # shorter speech runs are dropped
    min_local_turn_s: float = 0.2  # a local speaker change must last this long to split a region
    overlap_threshold: float = 0.5  # frames whose probability of two speakers at once exceeds this
    overlap_context_s: float = 1.0  # the second speaker of an overlap is the other speaker heard this close to it
    silero_union: int = 1  # 1: speech is segmentation-3.0's or Silero VAD's (Silero catches quiet speech it misses)
    frame_pool: int = 1  # 1: CAM++ runs once per speech piece and windows pool its frame features; 0: per window
    piece_s: float = 10.0  # longer speech segments are cut into pieces of at most this for the network
    overlap_local_check: int = 0  # 1: no overlap turn where both local speakers heard at once map to one cluster


# Resemblyzer's settings and CAM++'s, each tuned on bench/diarization.py (docs/diarization.md).
RESEMBLYZER_CONFIG = DiarizeConfig(backend="resemblyzer")
CAMPPLUS_CONFIG = DiarizeConfig(
    backend="campplus", window_s=1.0, step_s=0.5, min_speaker_s=2.0, one_speaker_sim=0.55, merge_sim=0.55, batch=16
)
DEFAULT_CONFIG = CAMPPLUS_CONFIG
BACKENDS = {"campplus": CAMPPLUS_CONFIG, "resemblyzer": RESEMBLYZER_CONFIG}
# The engine's backend; resemblyzer stays selectable for comparison (docs/diarization.md).
BACKEND_ENV = "SORI_DIARIZATION_BACKEND"


def config_from_env() -> DiarizeConfig:
    name = os.environ.get(BACKEND_ENV) or "campplus"
    if name not in BACKENDS:
        raise EngineError(MODEL_LOAD_FAILED, f"{BACKEND_ENV} must be one of {', '.join(BACKENDS)}")
    return BACKENDS[name]


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


# ---------------------------------------------------------------------------------------------------------------


def speech_regions(samples: np.ndarray, cfg: DiarizeConfig) -> list[tuple[int, int]]:
    """Speech regions as (start_frame, end_frame) in 10 ms frames."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    opts = VadOptions(
        threshold=cfg.vad_threshold,
        min_silence_duration_ms=cfg.vad_min_silence_ms,
        speech_pad_ms=cfg.vad_pad_ms,
        min_speech_duration_ms=100,
    )
    out: list[tuple[int, int]] = []
    for ts in get_speech_timestamps(samples, opts):
        s, e = int(ts["start"]) // HOP, int(ts["end"]) // HOP
        if e > s:
            out.append((s, e))
    return out


def make_windows(regions: list[tuple[int, int]], cfg: DiarizeConfig) -> list[tuple[int, int]]:
    """Embedding windows (start_frame, end_frame) covering every region; each at most window_s long."""
    win = max(1, round(cfg.window_s / FRAME_S))
    step = max(1, round(cfg.step_s / FRAME_S))
    min_len = max(1, round(cfg.min_window_s / FRAME_S))
    out: list[tuple[int, int]] = []
    for s, e in regions:
        length = e - s
        if length < min_len:
            continue
        if length <= win:
            out.append((s, e))
            continue
        starts = list(range(s, e - win + 1, step))
        if starts[-1] + win < e:
            starts.append(e - win)  # the tail gets a window of its own
        out.extend((st, st + win) for st in starts)
    return out


def embed_windows(mel: np.ndarray, windows: list[tuple[int, int]], cfg: DiarizeConfig) -> np.ndarray:
    """One embedding per window; windows of equal length are batched together."""
    try:
        encoder = get_encoder()
    except WeightsError as err:
        raise EngineError(MODEL_LOAD_FAILED, str(err)) from err
    out = np.zeros((len(windows), 256), dtype=np.float32)
    by_len: dict[int, list[int]] = {}
    for i, (s, e) in enumerate(windows):
        by_len.setdefault(e - s, []).append(i)
    for length, idx in by_len.items():
        for b in range(0, len(idx), cfg.batch):
            chunk = idx[b : b + cfg.batch]
            batch = np.stack([mel[windows[i][0] : windows[i][0] + length] for i in chunk])
            out[chunk] = encoder.embed(batch)
    return out


def split_long(regions: list[tuple[int, int]], max_frames: int) -> list[tuple[int, int]]:
    """Regions longer than max_frames cut into equal pieces of at most that length."""
    out: list[tuple[int, int]] = []
    for s, e in regions:
        n = max(1, -(-(e - s) // max_frames))
        cuts = np.linspace(s, e, n + 1).round().astype(np.int64)
        out.extend((int(a), int(b)) for a, b in itertools.pairwise(cuts) if b > a)
    return out


def _campplus_model():  # type: ignore[no-untyped-def]
    from .campplus import get_model
    from .diarization_weights import CAMPPLUS, WeightsMissing, locate

    try:
        return get_model(locate(CAMPPLUS))
    except (WeightsMissing, CheckpointError) as e:
        raise EngineError(MODEL_LOAD_FAILED, str(e)) from e


def embed_pieces_campplus(
    samples: np.ndarray, pieces: list[tuple[int, int]], cfg: DiarizeConfig
) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Windows of every speech piece and their unit-norm CAM++ embeddings. Each piece (at most `piece_s`) goes
    through the network once, mean-normalised over the piece; each window's embedding pools the piece's frame
    features over the window (campplus.py), so overlapping windows cost no more network time."""
    from .campplus import frame_range
    from .fbank import fbank

    model = _campplus_model()
    feats = fbank(samples)
    windows: list[tuple[int, int]] = []
    embs: list[np.ndarray] = []
    for s, e in pieces:
        e = min(e, feats.shape[0])
        wins = make_windows([(s, e)], cfg)
        if not wins or e - s < 2:
            continue
        x = feats[s:e] - feats[s:e].mean(axis=0)
        fr = model.frames(x[None])[0]
        ranges = [frame_range(a - s, b - s) for a, b in wins]
        windows.extend(wins)
        embs.append(model.pool(fr, [(a, min(b, fr.shape[1])) for a, b in ranges]))
    if not windows:
        return [], np.zeros((0, 192), np.float32)
    out = np.concatenate(embs).astype(np.float32)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-8)
    return windows, out


def embed_windows_campplus(samples: np.ndarray, windows: list[tuple[int, int]], cfg: DiarizeConfig) -> np.ndarray:
    """One unit-norm CAM++ embedding per window, each window run through the network on its own (`frame_pool` 0):
    Kaldi fbank of the whole file (frame i starts at sample 160 i, as a 10 ms VAD frame does), each window
    mean-normalised over its frames as 3D-Speaker does."""
    from .fbank import fbank

    model = _campplus_model()
    feats = fbank(samples)
    out = np.zeros((len(windows), 192), dtype=np.float32)
    by_len: dict[int, list[int]] = {}
    for i, (s, e) in enumerate(windows):
        by_len.setdefault(min(e, feats.shape[0]) - s, []).append(i)
    for length, idx in by_len.items():
        if length < 2:
            continue  # shorter than the fbank's 25 ms frame at the file's end: left zero, clustered anyway
        for b in range(0, len(idx), cfg.batch):
            chunk = idx[b : b + cfg.batch]
            batch = np.stack([feats[windows[i][0] : windows[i][0] + length] for i in chunk])
            batch -= batch.mean(axis=1, keepdims=True)
            out[chunk] = model.embed(batch)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-8)
    return out


def _affinity(emb: np.ndarray) -> np.ndarray:
    sim = np.clip(emb @ emb.T, 0.0, 1.0)  # embeddings are non-negative: cosine lies in [0, 1]
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
        labels = _fold_small(e, labels, _min_cluster(e.shape[0], n, cfg))
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
    Centring (subtracting the file's mean embedding) removes what all windows share: room, channel, level; the
    d-vectors are all non-negative, so raw cosines bunch up near 1. A k whose split leaves a cluster under
    min_cluster_share of the windows is not a candidate.
    """
    from sklearn.metrics import silhouette_score

    n = emb.shape[0]
    min_size = _min_cluster(n, n, cfg)
    if n < 3 or n < 2 * min_size:
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
        labels = _fold_small(emb, _spectral(emb, k), min_size)
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


def _min_cluster(n_sub: int, n_all: int, cfg: DiarizeConfig) -> float:
    """Fewest windows (of n_sub clustered, out of n_all) a cluster needs to count as a speaker when estimating:
    min_cluster_share of them, and min_speaker_s of speech. Short files thus come out as one speaker: on a few
    seconds of speech this model's windows of one voice differ as much as two voices do (docs/diarization.md)."""
    return max(2.0, cfg.min_cluster_share * n_sub, cfg.min_speaker_s / cfg.step_s * n_sub / max(n_all, 1))


def _fold_small(emb: np.ndarray, labels: np.ndarray, min_size: float) -> np.ndarray:
    """Merge clusters with fewer than min_size windows into the nearest large cluster (by centroid)."""
    labels = labels.copy()
    ids, counts = np.unique(labels, return_counts=True)
    big = [i for i, c in zip(ids, counts, strict=True) if c >= min_size]
    if not big:
        big = [ids[int(np.argmax(counts))]]
    centroids = np.stack([emb[labels == b].mean(axis=0) for b in big])
    centroids /= np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-8)
    small = ~np.isin(labels, big)
    if small.any():
        labels[small] = np.asarray(big)[np.argmax(emb[small] @ centroids.T, axis=1)]
    _, labels = np.unique(labels, return_inverse=True)
    return labels.astype(np.int64)


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


@dataclass(frozen=True)
class Embedded:
    """What clustering needs from the audio: deterministic for a file and the VAD/window settings, so the bench can
    cache it and try clustering settings without re-running the encoder."""

    duration_s: float
    n_frames: int
    regions: list[tuple[int, int]]
    windows: list[tuple[int, int]]
    emb: np.ndarray  # (len(windows), dim), unit-norm (resemblyzer: 256, non-negative; CAM++: 192)
    overlap: np.ndarray | None = None  # bool per frame: two speakers at once (CAM++ backend, from segmentation)
    local: np.ndarray | None = None  # per frame: segmentation's dominant local speaker (chunk · 3 + index; -1 none)
    second: np.ndarray | None = None  # per frame: the chunk's second most active local speaker, numbered as `local`


def embed_samples(
    samples: np.ndarray, cfg: DiarizeConfig = DEFAULT_CONFIG, progress: Callable[[float], None] | None = None
) -> Embedded:
    if cfg.backend == "campplus":
        return embed_samples_campplus(samples, cfg, progress)
    duration = samples.shape[0] / SAMPLE_RATE
    regions = speech_regions(samples, cfg)
    if progress:
        progress(0.2)
    if not regions:
        return Embedded(duration, 0, [], [], np.zeros((0, 256), dtype=np.float32))
    # Resemblyzer's own preprocessing raises quiet recordings to -30 dBFS (never lowers); measure on speech only.
    speech = np.concatenate([samples[s * HOP : e * HOP] for s, e in regions])
    rms = float(np.sqrt(np.mean(np.square(speech, dtype=np.float64)))) if speech.size else 0.0
    if 0 < rms < 10 ** (-30 / 20):
        samples = samples * np.float32(10 ** (-30 / 20) / rms)
    mel = mel_spectrogram(samples)
    n_frames = mel.shape[0]
    regions = [(s, min(e, n_frames)) for s, e in regions if s < n_frames]
    windows = make_windows(regions, cfg)
    emb = embed_windows(mel, windows, cfg) if windows else np.zeros((0, 256), dtype=np.float32)
    if progress:
        progress(0.8)
    return Embedded(duration, n_frames, regions, windows, emb)


def _bool_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def speech_segments(
    act: Activity, cfg: DiarizeConfig, extra: list[tuple[int, int]] | None = None
) -> list[tuple[int, int]]:
    """Speech regions from segmentation-3.0 (gaps < min_gap_s filled, runs < min_speech_s dropped), each split where
    the segmentation's dominant local speaker changes inside one chunk and the new one lasts min_local_turn_s.
    `extra`: more speech regions (Silero VAD) joined to the segmentation's."""
    speech = act.speech > cfg.seg_onset
    for a, b in extra or []:
        speech[a:b] = True
    for a, b in _bool_runs(~speech):
        if a > 0 and b < speech.size and b - a < round(cfg.min_gap_s / FRAME_S):
            speech[a:b] = True
    min_turn = round(cfg.min_local_turn_s / FRAME_S)
    out: list[tuple[int, int]] = []
    for a, b in _bool_runs(speech):
        if b - a < round(cfg.min_speech_s / FRAME_S):
            continue
        code = act.local[a:b]
        # runs of one local speaker shorter than min_turn (and silence inside filled gaps) are ignored: a cut is
        # made where a long enough run of another local speaker of the same chunk starts
        cuts = [a]
        prev = -1
        run_start = 0
        for i in range(1, code.size + 1):
            if i == code.size or code[i] != code[run_start]:
                c = int(code[run_start])
                if c >= 0 and i - run_start >= min_turn:
                    if prev >= 0 and c != prev and c // LOCAL_SPEAKERS == prev // LOCAL_SPEAKERS:
                        cuts.append(a + run_start)
                    prev = c
                run_start = i
        cuts.append(b)
        out.extend((s, e) for s, e in itertools.pairwise(cuts) if e > s)
    return out


def embed_samples_campplus(
    samples: np.ndarray, cfg: DiarizeConfig, progress: Callable[[float], None] | None = None
) -> Embedded:
    """Segmentation-3.0 → speaker-homogeneous speech segments and overlap frames; CAM++ windows inside them."""
    from .diarization_weights import SEGMENTATION, WeightsMissing, locate
    from .segmentation import activity, get_model

    duration = samples.shape[0] / SAMPLE_RATE
    n_frames = samples.shape[0] // HOP
    try:
        seg = get_model(locate(SEGMENTATION))
    except (WeightsMissing, CheckpointError) as e:
        raise EngineError(MODEL_LOAD_FAILED, str(e)) from e
    act = activity(seg, samples, cfg.seg_step_s)
    if progress:
        progress(0.3)
    segments = speech_segments(act, cfg, speech_regions(samples, cfg) if cfg.silero_union else None)
    if cfg.frame_pool:
        segments = split_long(segments, max(1, round(cfg.piece_s / FRAME_S)))
        windows, emb = embed_pieces_campplus(samples, segments, cfg)
    else:
        windows = make_windows(segments, cfg)
        emb = embed_windows_campplus(samples, windows, cfg) if windows else np.zeros((0, 192), np.float32)
    if progress:
        progress(0.8)
    overlap = (act.overlap > cfg.overlap_threshold) & (act.speech > cfg.seg_onset)
    return Embedded(
        duration,
        n_frames,
        segments,
        windows,
        emb,
        overlap[:n_frames],
        act.local[:n_frames],
        None if act.second is None else act.second[:n_frames],
    )


def local_clusters(labels: np.ndarray, local: np.ndarray) -> dict[int, int]:
    """Each local speaker of the segmentation (chunk · 3 + index) → the cluster most of its dominant frames have."""
    ok = (local >= 0) & (labels >= 0)
    out: dict[int, int] = {}
    if not ok.any():
        return out
    pairs, counts = np.unique(np.stack([local[ok], labels[ok]]), axis=1, return_counts=True)
    best: dict[int, int] = {}
    for (code, lab), c in zip(pairs.T.tolist(), counts.tolist(), strict=True):
        if c > best.get(code, 0):
            best[code], out[code] = c, lab
    return out


def overlap_turns(
    labels: np.ndarray,
    overlap: np.ndarray,
    cfg: DiarizeConfig,
    local: np.ndarray | None = None,
    second: np.ndarray | None = None,
) -> list[tuple[int, int, int]]:
    """A second speaker for each run of overlapped speech: the nearest speaker, before or after the run and within
    overlap_context_s, other than the one the run's frames are labelled with (the one being interrupted, or
    interrupting: real overlap sits next to the other speaker's own speech; a run with no other speaker that close
    is more often one reverberant far-microphone voice, docs/diarization.md). (start, end, label) in frames."""
    out: list[tuple[int, int, int]] = []
    ctx = round(cfg.overlap_context_s / FRAME_S)
    check = cfg.overlap_local_check and local is not None and second is not None
    mapping = local_clusters(labels, local) if check and local is not None else {}
    for a, b in _bool_runs(overlap & (labels >= 0)):
        own = labels[a:b]
        main = int(np.bincount(own[own >= 0]).argmax())
        if check and local is not None and second is not None:
            # the two local speakers the segmentation hears at once: if both are the same cluster elsewhere in
            # their chunk, the "overlap" is one voice (typically reverberant, far from the microphone)
            pair = np.stack([local[a:b], second[a:b]])
            pair = pair[:, (pair >= 0).all(axis=0)]
            if pair.size:
                codes, counts = np.unique(pair, axis=1, return_counts=True)
                l1, l2 = (int(c) for c in codes[:, int(counts.argmax())])
                if l1 in mapping and l2 in mapping and mapping[l1] == mapping[l2]:
                    continue
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


def diarize_embedded(em: Embedded, spk_count: int = 0, cfg: DiarizeConfig = DEFAULT_CONFIG) -> DiarizeResult:
    if not em.regions:
        return DiarizeResult(duration_s=em.duration_s, num_speakers=0, turns=[])
    if not em.windows:  # only very short bits of speech: one speaker, nothing to compare
        labels = np.full(em.n_frames, -1, dtype=np.int64)
        for s, e in em.regions:
            labels[s:e] = 0
        turns = turns_from_labels(labels)
        return DiarizeResult(duration_s=em.duration_s, num_speakers=1 if turns else 0, turns=turns)
    win_labels = cluster(em.emb, spk_count, cfg)
    k = int(win_labels.max()) + 1
    labels = frame_labels(em.n_frames, em.regions, em.windows, win_labels, k)
    labels = smooth(labels, max(1, round(cfg.min_turn_s / FRAME_S)))
    if em.overlap is not None and k > 1:
        turns = turns_with_overlap(labels, overlap_turns(labels, em.overlap, cfg, em.local, em.second))
    else:
        turns = turns_from_labels(labels)
    return DiarizeResult(duration_s=em.duration_s, num_speakers=len({t.speaker for t in turns}), turns=turns)


def diarize_samples(
    samples: np.ndarray,
    spk_count: int = 0,
    cfg: DiarizeConfig = DEFAULT_CONFIG,
    progress: Callable[[float], None] | None = None,
) -> DiarizeResult:
    return diarize_embedded(embed_samples(samples, cfg, progress), spk_count, cfg)


def diarize(
    audio_path: str,
    spk_count: int = 0,
    max_duration_s: float | None = None,
    progress: Callable[[float], None] | None = None,
    cfg: DiarizeConfig | None = None,
) -> DiarizeResult:
    cfg = cfg or config_from_env()
    samples = audio_mod.decode(audio_path, max_duration_s)
    return diarize_samples(samples, spk_count, cfg, progress)
