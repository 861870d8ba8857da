"""Who spoke when: the orchestration of regions.py, embedders.py, clustering.py and turns.py over a file.

The file is read twice as a stream of decoded blocks (audio.stream, as the transcriber reads it), so its audio is
never whole in memory:
1. regions: Silero VAD and, for CAM++, segmentation-3.0 run on the blocks as they come; what is kept is per frame
   (a few tens of bytes per 10 ms);
2. embeddings: the speech pieces (CAM++) or regions (resemblyzer) are cut from the blocks of a second decode and
   embedded one at a time.
Clustering and turns then work on the whole file's embeddings (a few hundred bytes per window). Every step gives
what the same step gave on the whole file in one array (engine/tests/test_diarize.py compares both ways).

`embed_*` (steps 1-2) and `diarize_embedded` (clustering, turns) are separate: the embeddings are deterministic,
so bench/diarization.py caches them and re-runs only the clustering.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from .. import audio as audio_mod
from ..errors import MODEL_LOAD_FAILED, EngineError
from ..pcm import SAMPLE_RATE
from ..vad import SileroScan
from .band import BandScan
from .clustering import cluster, count_from_pieces, split_narrowband
from .config import DEFAULT_CONFIG, DiarizeConfig, config_from_env
from .embedders import CampplusEmbedder, Embedder, ResemblyzerEmbedder, resemblyzer_gain
from .models.torch_checkpoint import CheckpointError
from .regions import (
    HOP,
    FrameEnergy,
    SegmentationScan,
    Windowing,
    speech_segments,
    split_long,
    vad_regions,
)
from .turns import (
    FRAME_S,
    DiarizeResult,
    frame_labels,
    local_overlap_turns,
    overlap_turns,
    smooth,
    turns_from_labels,
    turns_with_overlap,
)

Blocks = Callable[[], Iterable[np.ndarray]]  # opens the file's decoded 16 kHz blocks, from its start, each call


@dataclass(frozen=True)
class Embedded:
    """What clustering needs from the audio: deterministic for a file and the VAD/window settings, so the bench can
    cache it and try clustering settings without re-running the encoder."""

    duration_s: float
    n_frames: int
    regions: list[tuple[int, int]]
    windows: list[tuple[int, int]]
    emb: np.ndarray  # (len(windows), dim), unit-norm (resemblyzer: 256, non-negative; CAM++: 192)
    # CAM++ backend, from segmentation-3.0, per frame: the probability of two speakers at once (0 outside speech)
    overlap: np.ndarray | None = None
    local: np.ndarray | None = None  # per frame: the dominant local speaker, chunk · 3 + index (Activity.local)
    local2: np.ndarray | None = None  # per frame: the other local speaker of overlapped speech (Activity.local2)
    # CAM++ backend: each speech piece (a segment, cut at piece_s) and its embedding over its whole speech
    pieces: list[tuple[int, int]] | None = None
    piece_emb: np.ndarray | None = None
    # CAM++ backend: the file's high band against its speech band in dB (band.py), for the voiceprint op (measured in
    # the first pass with the detectors: 0.5 CPU s an hour of audio, against about 100 for diarization)
    band_db: float | None = None

    def narrowband(self, cfg: DiarizeConfig) -> bool:
        """A phone call's band (band.py, `narrowband_db`): its voices are compared and split as such."""
        return self.band_db is not None and self.band_db < cfg.narrowband_db


class _Progress:
    """Fractions of the whole diarization, told at most once per percent."""

    def __init__(self, report: Callable[[float], None] | None) -> None:
        self._report = report
        self._last = -1.0

    def __call__(self, fraction: float) -> None:
        if self._report is not None and fraction - self._last >= 0.01:
            self._last = fraction
            self._report(min(fraction, 1.0))


def embed_blocks(
    blocks: Blocks,
    cfg: DiarizeConfig = DEFAULT_CONFIG,
    progress: Callable[[float], None] | None = None,
    expected_s: float | None = None,
    windowing: Windowing = Windowing(),  # noqa: B008 (frozen)
) -> Embedded:
    """Both passes over the file that `blocks` opens. `expected_s` (the container's duration) scales progress."""
    report = _Progress(progress)
    campplus = cfg.backend == "campplus"
    vad = SileroScan(windowing.vad_frames) if (cfg.silero_union or not campplus) else None
    seg = SegmentationScan(_segmentation_model(), cfg.seg_step_s, windowing.seg_chunks) if campplus else None
    energy = None if campplus else FrameEnergy()
    band = BandScan() if campplus else None
    n = 0
    for block in blocks():
        n += block.shape[0]
        for consumer in (vad, seg, energy, band):
            if consumer is not None:
                consumer.feed(block)
        if expected_s:
            report(0.45 * min(1.0, n / SAMPLE_RATE / expected_s))
    duration = n / SAMPLE_RATE
    regions = vad_regions(vad.finish(), n, cfg) if vad is not None else []
    report(0.45)

    embedder: Embedder
    overlap: np.ndarray | None = None
    local: np.ndarray | None = None
    local2: np.ndarray | None = None
    if seg is not None:
        act = seg.finish(n)
        segments = speech_segments(act, cfg, regions if cfg.silero_union else None)
        units = split_long(segments, max(1, round(cfg.piece_s / FRAME_S)))
        embedder = CampplusEmbedder(cfg, n)
        n_frames = n // HOP
        overlap = np.where(act.speech > cfg.seg_onset, act.overlap, 0.0).astype(np.float32)[:n_frames]
        local = act.local[:n_frames]
        local2 = act.local2[:n_frames] if act.local2 is not None else None
    else:
        if not regions:
            return Embedded(duration, 0, [], [], np.zeros((0, 256), dtype=np.float32))
        assert energy is not None
        frame_energy = energy.finish()
        spoken = sum(float(frame_energy[s:e].sum()) for s, e in regions)
        gain = resemblyzer_gain(spoken, sum((e - s) * HOP for s, e in regions))
        n_frames = 1 + n // HOP if n >= 2 else 3  # the centred mel frames of the file
        units = segments = [(s, min(e, n_frames)) for s, e in regions if s < n_frames]
        embedder = ResemblyzerEmbedder(cfg, n, gain, windowing.embed_windows)
    spans = [(u, sp) for u in units if (sp := embedder.span(u)) is not None]
    for i, (unit, audio) in enumerate(audio_mod.cut_spans(blocks(), spans)):
        embedder.add(unit, audio)
        report(0.45 + 0.45 * (i + 1) / len(spans))
    windows, emb = embedder.result()
    pieces, piece_emb = embedder.units() if isinstance(embedder, CampplusEmbedder) else (None, None)
    report(0.9)
    band_db = band.finish() if band is not None else None
    return Embedded(duration, n_frames, segments, windows, emb, overlap, local, local2, pieces, piece_emb, band_db)


def _segmentation_model():  # type: ignore[no-untyped-def]
    from .models.segmentation import get_model
    from .models.weights import SEGMENTATION, WeightsMissing, locate

    try:
        return get_model(locate(SEGMENTATION))
    except (WeightsMissing, CheckpointError) as e:
        raise EngineError(MODEL_LOAD_FAILED, str(e)) from e


def embed_samples(
    samples: np.ndarray, cfg: DiarizeConfig = DEFAULT_CONFIG, progress: Callable[[float], None] | None = None
) -> Embedded:
    """`embed_blocks` of audio already in memory (tests, benchmarks)."""
    return embed_blocks(lambda: [samples], cfg, progress, samples.shape[0] / SAMPLE_RATE)


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
    if spk_count == 0 and win_labels.max() == 0 and em.piece_emb is not None and em.pieces:
        # The windows' "one speaker" is checked on whole pieces: similar voices, or a phone channel that raises every
        # cosine, pass the windows' test as one voice (docs/diarization.md, "Many voices").
        frames = np.asarray([e - s for s, e in em.pieces], dtype=np.int64)
        pieces_count = count_from_pieces(em.piece_emb, frames, cfg) or 1
        if pieces_count > 1:
            win_labels = cluster(em.emb, pieces_count, cfg)
    if spk_count == 0 and em.piece_emb is not None and em.pieces and em.narrowband(cfg):
        win_labels = split_narrowband(win_labels, em.windows, em.emb, em.pieces, em.piece_emb, cfg)
    k = int(win_labels.max()) + 1
    labels = frame_labels(em.n_frames, em.regions, em.windows, win_labels, k)
    labels = smooth(labels, max(1, round(cfg.min_turn_s / FRAME_S)))
    if em.overlap is not None and k > 1:
        overlap = em.overlap > cfg.overlap_threshold
        if em.local is not None and em.local2 is not None:
            extra = local_overlap_turns(labels, em.local, em.local2, overlap, cfg)
        else:
            extra = overlap_turns(labels, overlap, cfg)
        turns = turns_with_overlap(labels, extra)
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
    """The `diarize` op: the file is decoded twice, block by block (see the module's docstring)."""
    cfg = cfg or config_from_env()
    try:
        declared = audio_mod.probe(audio_path).duration_s
    except EngineError:
        declared = None  # the decoder gives the precise error
    em = embed_blocks(lambda: audio_mod.stream(audio_path, max_duration_s), cfg, progress, declared)
    return diarize_embedded(em, spk_count, cfg)
