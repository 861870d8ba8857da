"""Who spoke when, in stages over plain data: regions (regions.py) → embeddings (embedders.py) → count and
clustering (count.py, clustering.py) → turns (turns.py), on the models of speaker_models.py.

The file is read twice as a stream of decoded blocks (audio.stream, as the transcriber reads it), so its audio is
never whole in memory:
1. regions: Silero VAD and the segmentation model run on the blocks as they come; what is kept is per frame (a few
   tens of bytes per 10 ms);
2. embeddings: the speech pieces are cut from the blocks of a second decode and embedded one at a time.
The count, clustering and turns then work on the whole file's embeddings (a few hundred bytes per window). Every
step gives what the same step gave on the whole file in one array (engine/tests/test_diarize.py compares both ways).

`embed_*` (steps 1-2) and `diarize_embedded` (count, clustering, turns) are separate: the embeddings are
deterministic, so bench/diarization.py caches them and re-runs only what follows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from .. import audio as audio_mod
from ..errors import EngineError
from ..pcm import SAMPLE_RATE
from ..phone import BandScan
from ..vad import SileroScan
from .config import DiarizeConfig
from .count import window_labels
from .embedders import PieceEmbedder
from .regions import HOP, SegmentationScan, Windowing, speech_segments, split_long, vad_regions
from .speaker_models import SpeakerModels, speaker_models
from .turns import FRAME_S, DiarizeResult, speaker_turns, turns_from_labels

Blocks = Callable[[], Iterable[np.ndarray]]  # opens the file's decoded 16 kHz blocks, from its start, each call


@dataclass(frozen=True)
class Embedded:
    """What clustering needs from the audio: deterministic for a file and the VAD/window settings, so the bench can
    cache it and try clustering settings without re-running the encoder."""

    duration_s: float
    n_frames: int
    regions: list[tuple[int, int]]  # the speech segments (the segmentation's, split at local speaker changes)
    windows: list[tuple[int, int]]
    emb: np.ndarray  # (len(windows), dim), unit-norm (CAM++: 192)
    # from the segmentation, per frame: the probability of two speakers at once (0 outside speech)
    overlap: np.ndarray
    local: np.ndarray  # per frame: the dominant local speaker, chunk · speakers + index (Activity.local)
    local2: np.ndarray  # per frame: the other local speaker of overlapped speech (Activity.local2)
    # each speech piece (a segment, cut at piece_s) and its embedding over its whole speech
    pieces: list[tuple[int, int]]
    piece_emb: np.ndarray
    # the file's high band against its speech band in dB (phone.BandScan), for the voiceprint op and the count
    # (measured in the first pass with the detectors: 0.5 CPU s an hour of audio, against about 100 for diarization)
    band_db: float

    def narrowband(self, cfg: DiarizeConfig) -> bool:
        """A phone call's band (phone.BandScan, `narrowband_db`): its voices are compared and split as such."""
        return self.band_db < cfg.narrowband_db


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
    cfg: DiarizeConfig,
    models: SpeakerModels,
    progress: Callable[[float], None] | None = None,
    expected_s: float | None = None,
    windowing: Windowing = Windowing(),  # noqa: B008 (frozen)
) -> Embedded:
    """Both passes over the file that `blocks` opens. `expected_s` (the container's duration) scales progress."""
    report = _Progress(progress)
    vad = SileroScan(windowing.vad_frames) if cfg.silero_union else None
    seg = SegmentationScan(models.segmentation(), cfg.seg_step_s, windowing.seg_chunks)
    band = BandScan()
    n = 0
    for block in blocks():
        n += block.shape[0]
        for consumer in (vad, seg, band):
            if consumer is not None:
                consumer.feed(block)
        if expected_s:
            report(0.45 * min(1.0, n / SAMPLE_RATE / expected_s))
    regions = vad_regions(vad.finish(), n, cfg) if vad is not None else []
    report(0.45)

    act = seg.finish(n)
    segments = speech_segments(act, cfg, regions if cfg.silero_union else None)
    units = split_long(segments, max(1, round(cfg.piece_s / FRAME_S)))
    embedder = PieceEmbedder(models.embedding(), cfg, n)
    n_frames = n // HOP
    spans = [(u, sp) for u in units if (sp := embedder.span(u)) is not None]
    for i, (unit, audio) in enumerate(audio_mod.cut_spans(blocks(), spans)):
        embedder.add(unit, audio)
        report(0.45 + 0.45 * (i + 1) / len(spans))
    windows, emb = embedder.result()
    pieces, piece_emb = embedder.units()
    report(0.9)
    return Embedded(
        duration_s=n / SAMPLE_RATE,
        n_frames=n_frames,
        regions=segments,
        windows=windows,
        emb=emb,
        overlap=np.where(act.speech > cfg.seg_onset, act.overlap, 0.0).astype(np.float32)[:n_frames],
        local=act.local[:n_frames],
        local2=act.local2[:n_frames] if act.local2 is not None else np.full(n_frames, -1, np.int64),
        pieces=pieces,
        piece_emb=piece_emb,
        band_db=band.finish(),
    )


def embed_samples(
    samples: np.ndarray,
    cfg: DiarizeConfig | None = None,
    progress: Callable[[float], None] | None = None,
    models: SpeakerModels | None = None,
) -> Embedded:
    """`embed_blocks` of audio already in memory (tests, benchmarks)."""
    models = models or speaker_models()
    return embed_blocks(lambda: [samples], cfg or models.config, models, progress, samples.shape[0] / SAMPLE_RATE)


def diarize_embedded(em: Embedded, spk_count: int = 0, cfg: DiarizeConfig | None = None) -> DiarizeResult:
    """Count, clustering and turns of a file's embeddings (`cfg`: the engine's models' settings)."""
    cfg = cfg or speaker_models().config
    if not em.regions:
        return DiarizeResult(duration_s=em.duration_s, num_speakers=0, turns=[])
    if not em.windows:  # only very short bits of speech: one speaker, nothing to compare
        labels = np.full(em.n_frames, -1, dtype=np.int64)
        for s, e in em.regions:
            labels[s:e] = 0
        turns = turns_from_labels(labels)
        return DiarizeResult(duration_s=em.duration_s, num_speakers=1 if turns else 0, turns=turns)
    win_labels = window_labels(em.emb, em.windows, em.pieces, em.piece_emb, em.narrowband(cfg), spk_count, cfg)
    turns = speaker_turns(em.n_frames, em.regions, em.windows, win_labels, em.overlap, em.local, em.local2, cfg)
    return DiarizeResult(duration_s=em.duration_s, num_speakers=len({t.speaker for t in turns}), turns=turns)


def diarize_samples(
    samples: np.ndarray,
    spk_count: int = 0,
    cfg: DiarizeConfig | None = None,
    progress: Callable[[float], None] | None = None,
) -> DiarizeResult:
    cfg = cfg or speaker_models().config
    return diarize_embedded(embed_samples(samples, cfg, progress), spk_count, cfg)


def diarize(
    audio_path: str,
    spk_count: int = 0,
    max_duration_s: float | None = None,
    progress: Callable[[float], None] | None = None,
    cfg: DiarizeConfig | None = None,
) -> DiarizeResult:
    """The `diarize` op: the file is decoded twice, block by block (see the module's docstring)."""
    models = speaker_models()
    cfg = cfg or models.config
    try:
        declared = audio_mod.probe(audio_path).duration_s
    except EngineError:
        declared = None  # the decoder gives the precise error
    em = embed_blocks(lambda: audio_mod.stream(audio_path, max_duration_s), cfg, models, progress, declared)
    return diarize_embedded(em, spk_count, cfg)
