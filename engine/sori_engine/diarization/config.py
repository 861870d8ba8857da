"""Diarization settings, tuned for CAM++ embeddings and segmentation-3.0 on bench/diarization.py (docs/diarization.md
has the figures behind them). An operator's own models (models/custom.py) may override any field from the models
file."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DiarizeConfig:
    window_s: float = 1.0
    step_s: float = 0.5
    min_window_s: float = 0.4
    max_speakers: int = 8
    one_speaker_sim: float = 0.55  # centroid cosine of a 2-way split above which the file is one speaker
    merge_sim: float = 0.7  # estimating: a k ≥ 3 whose two closest centroids exceed this cosine is over-split
    refine_iters: int = 3  # centroid re-assignment passes after the final spectral clustering
    min_cluster_share: float = 0.1
    # estimating: a smaller cluster with this share counts when its centroid's cosine to every other is at most this
    distinct_cluster_share: float = 0.0  # a distinct cluster counts from min_speaker_s of speech on
    distinct_cluster_sim: float = 0.4
    min_speaker_s: float = 2.0  # when estimating, a speaker needs this much speech (in windows × step_s)
    max_cluster_windows: int = 1500
    min_turn_s: float = 0.5
    vad_threshold: float = 0.5
    vad_min_silence_ms: int = 300
    vad_pad_ms: int = 60
    # segmentation (segmentation-3.0 or an operator's model) finds speech, speaker changes and overlap:
    seg_step_s: float = 5.0  # 10 s segmentation chunks every seg_step_s
    seg_onset: float = 0.5  # speech where the probability of any speaker exceeds this
    min_gap_s: float = 0.1  # shorter silences inside speech are filled
    min_speech_s: float = 0.1  # shorter speech runs are dropped
    min_local_turn_s: float = 0.2  # a local speaker change must last this long to split a region
    overlap_threshold: float = 0.5  # frames whose probability of two speakers at once exceeds this
    overlap_context_s: float = 1.0  # the second speaker of an overlap is the other speaker heard this close to it
    # overlap from segmentation's pairs of local speakers (turns.local_overlap_turns): a local speaker stands for the
    # cluster most of its frames have once it has local_map_s of them; shorter second-speaker runs are dropped
    local_map_s: float = 0.2
    min_overlap_turn_s: float = 0.1
    silero_union: int = 1  # 1: speech is segmentation-3.0's or Silero VAD's (Silero catches quiet speech it misses)
    piece_s: float = 10.0  # longer speech segments are cut into pieces of at most this for the network
    # the count from whole pieces (count.count_from_pieces): pieces this long at least, and as many
    count_piece_s: float = 1.0
    count_min_pieces: int = 6
    # one speaker when this quantile of the pieces' pairwise cosines is at least one_speaker_piece_sim
    one_speaker_quantile: float = 0.1
    one_speaker_piece_sim: float = 0.4
    # a narrowband file's cluster is split in two when its pieces' quantile is below this (count.split_narrowband)
    split_piece_sim: float = 0.45
    # a file is narrowband (a phone call) when its band measure (phone.py) is below this: the voiceprint op centres its
    # pieces by the narrowband cohort mean (cohort.py), diarization splits its clusters (count.split_narrowband);
    # -44 dB and less through G.711, -26 dB and more without
    narrowband_db: float = -35.0


DEFAULT_CONFIG = DiarizeConfig()
FIELDS = {f.name: f for f in dataclasses.fields(DiarizeConfig)}


def with_overrides(cfg: DiarizeConfig, overrides: Mapping[str, Any]) -> DiarizeConfig:
    """`cfg` with the models file's `options` in place; a field that does not exist or a value of the wrong type is
    a ValueError naming it."""
    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        field = FIELDS.get(name)
        if field is None:
            raise ValueError(f"unknown diarization option {name!r} (the fields of DiarizeConfig, config.py)")
        kind = int if field.type in ("int", int) else float
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and value != int(value)):
            raise ValueError(f"diarization option {name} must be {'an integer' if kind is int else 'a number'}")
        changes[name] = kind(value)
    return dataclasses.replace(cfg, **changes)
