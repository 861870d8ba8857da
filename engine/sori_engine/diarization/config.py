"""Diarization settings, the two backends' presets (each tuned on bench/diarization.py; docs/diarization.md has the
measurements behind every number) and the engine's choice between them."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import MODEL_LOAD_FAILED, EngineError


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
    # estimating: a smaller cluster with this share counts when its centroid's cosine to every other is at most this
    distinct_cluster_share: float = 0.1
    distinct_cluster_sim: float = 1.0
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
    # overlap from segmentation's pairs of local speakers (turns.local_overlap_turns): a local speaker stands for the
    # cluster most of its frames have once it has local_map_s of them; shorter second-speaker runs are dropped
    local_map_s: float = 0.2
    min_overlap_turn_s: float = 0.1
    silero_union: int = 1  # 1: speech is segmentation-3.0's or Silero VAD's (Silero catches quiet speech it misses)
    piece_s: float = 10.0  # longer speech segments are cut into pieces of at most this for the network
    # CAM++ backend, the count from whole pieces (clustering.count_from_pieces): pieces this long at least, and as many
    count_piece_s: float = 1.0
    count_min_pieces: int = 6
    # one speaker when this quantile of the pieces' pairwise cosines is at least one_speaker_piece_sim
    one_speaker_quantile: float = 0.1
    one_speaker_piece_sim: float = 0.4
    # a narrowband file's cluster is split in two when its pieces' quantile is below this (clustering.split_narrowband)
    split_piece_sim: float = 0.45
    # the voiceprint op's count_voices (enrollment): two files of one band whose raw voiceprints score below this are
    # two voices; a wideband and a narrowband file are compared by their prints centred by their own band's cohort
    # mean, at files_cross_band_sim (raw, one person in a studio and on the phone scores as low as two people)
    files_same_voice_sim: float = 0.35
    files_cross_band_sim: float = 0.25
    # a file is narrowband (a phone call) when its band measure (band.py) is below this: the voiceprint op centres its
    # pieces by the narrowband cohort mean (cohort.py), diarization splits its clusters (clustering.split_narrowband);
    # -44 dB and less through G.711, -26 dB and more without
    narrowband_db: float = -35.0


RESEMBLYZER_CONFIG = DiarizeConfig(backend="resemblyzer")
CAMPPLUS_CONFIG = DiarizeConfig(
    backend="campplus",
    window_s=1.0,
    step_s=0.5,
    min_speaker_s=2.0,
    one_speaker_sim=0.55,
    merge_sim=0.7,
    distinct_cluster_share=0.0,  # a distinct cluster counts from min_speaker_s of speech on
    distinct_cluster_sim=0.4,
    batch=16,
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
