"""Where the speech is: the first of diarization's two passes over the decoded stream (pipeline.py).

Two detectors, each fed the file block by block so that its audio is never whole in memory, and each giving what
one call on the whole file gives (engine/tests/test_diarize.py compares them):

- Silero VAD (the copy faster-whisper ships), `vad.SileroScan`: speech regions joined to the segmentation's
  (`silero_union`);
- a segmentation model (pyannote segmentation-3.0, models/segmentation.py, or an operator's, models/custom.py),
  `SegmentationScan`: per 10 ms frame the probability of speech and of two speakers at once, and each chunk's
  dominant local speaker; `speech_segments` turns it into speech segments split where the local speaker changes
  inside a chunk.

Regions, segments and windows are (start, end) in 10 ms frames (160 samples).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .. import vad
from ..pcm import SAMPLE_RATE
from .config import DiarizeConfig
from .models.segmentation import Activity, ActivityScan, SegmentationModel, chunk_starts
from .turns import FRAME_S, bool_runs

HOP = round(FRAME_S * SAMPLE_RATE)  # samples per frame of the grid: 160


@dataclass(frozen=True)
class Windowing:
    """How much audio each detector holds at once. Silero's encoder runs on batches of `vad_frames` frames (500: 16 s);
    segmentation on batches of `seg_chunks` 10 s chunks (4: 25 s of audio with the 5 s step). Neither changes a
    result (onnxruntime gives the same figures for any batch split; tests make them small), but onnxruntime's arena
    keeps the largest batch's tensors: on a 4 h file, Silero at 10,000 frames (faster-whisper's own batch) held
    ~300 MiB and segmentation at 16 chunks ~500 MiB, against ~80 and ~230 MiB at these sizes, for the same CPU time
    (docs/audio.md, "Measurements")."""

    vad_frames: int = 500
    seg_chunks: int = 4


def vad_regions(probs: np.ndarray, n_samples: int, cfg: DiarizeConfig) -> list[tuple[int, int]]:
    """Speech regions (frames) from Silero's probabilities, with the diarization's VAD settings."""
    from ..vad import VadOptions

    opts = VadOptions(
        threshold=cfg.vad_threshold,
        min_silence_duration_ms=cfg.vad_min_silence_ms,
        speech_pad_ms=cfg.vad_pad_ms,
        min_speech_duration_ms=100,
    )
    out: list[tuple[int, int]] = []
    for region in vad.regions(probs, opts, n_samples):
        s, e = region["start"] // HOP, region["end"] // HOP
        if e > s:
            out.append((s, e))
    return out


class SegmentationScan:
    """The segmentation model's chunks (segmentation-3.0: 10 s every `step_s`) over a stream, in batches of `batch`
    chunks numbered as for the whole file. A batch runs once the audio of all its chunks has arrived; only the audio
    from the next chunk's start on (and the last chunk's length, for the file's tail chunk) is kept."""

    def __init__(self, model: SegmentationModel, step_s: float, batch: int) -> None:
        self._scan = ActivityScan(model)
        self._chunk = model.geometry.chunk_samples
        self._step = max(1, round(step_s * 16000))
        self._batch = batch
        self._buf = np.zeros(0, dtype=np.float32)
        self._buf_start = 0  # file sample of _buf[0]
        self._next = 0  # index of the next chunk to run
        self._pending: list[np.ndarray] = []

    def feed(self, block: np.ndarray) -> None:
        self._pending.append(block)
        end = self._buf_start + self._buf.shape[0] + sum(b.shape[0] for b in self._pending)
        last = self._next + self._batch - 1
        if last * self._step + self._chunk > end:
            return
        self._buf = np.concatenate([self._buf, *self._pending])
        self._pending = []
        while (self._next + self._batch - 1) * self._step + self._chunk <= end:
            self._run([(self._next + i) * self._step for i in range(self._batch)], None)

    def _run(self, starts: list[int], n_frames: int | None) -> None:
        chunks = np.zeros((len(starts), self._chunk), np.float32)
        for i, s in enumerate(starts):
            piece = self._buf[s - self._buf_start : s - self._buf_start + self._chunk]
            chunks[i, : piece.shape[0]] = piece
        self._scan.add(self._next, starts, chunks, n_frames)
        self._next += len(starts)
        keep = min(self._next * self._step, self._buf_start + self._buf.shape[0] - self._chunk)
        if keep > self._buf_start:
            self._buf = self._buf[keep - self._buf_start :].copy()
            self._buf_start = keep

    def finish(self, n_samples: int) -> Activity:
        if self._pending:
            self._buf = np.concatenate([self._buf, *self._pending])
            self._pending = []
        n_frames = n_samples // HOP
        starts = chunk_starts(n_samples, self._step, self._chunk)[self._next :]
        for b in range(0, len(starts), self._batch):
            self._run(starts[b : b + self._batch], n_frames)
        return self._scan.finish(n_frames)


def speech_segments(
    act: Activity, cfg: DiarizeConfig, extra: list[tuple[int, int]] | None = None
) -> list[tuple[int, int]]:
    """Speech regions from segmentation-3.0 (gaps < min_gap_s filled, runs < min_speech_s dropped), each split where
    the segmentation's dominant local speaker changes inside one chunk and the new one lasts min_local_turn_s.
    `extra`: more speech regions (Silero VAD) joined to the segmentation's."""
    speech = act.speech > cfg.seg_onset
    for a, b in extra or []:
        speech[a:b] = True
    for a, b in bool_runs(~speech):
        if a > 0 and b < speech.size and b - a < round(cfg.min_gap_s / FRAME_S):
            speech[a:b] = True
    min_turn = round(cfg.min_local_turn_s / FRAME_S)
    out: list[tuple[int, int]] = []
    for a, b in bool_runs(speech):
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
                    if prev >= 0 and c != prev and c // act.local_speakers == prev // act.local_speakers:
                        cuts.append(a + run_start)
                    prev = c
                run_start = i
        cuts.append(b)
        out.extend((s, e) for s, e in itertools.pairwise(cuts) if e > s)
    return out


def split_long(regions: list[tuple[int, int]], max_frames: int) -> list[tuple[int, int]]:
    """Regions longer than max_frames cut into equal pieces of at most that length."""
    out: list[tuple[int, int]] = []
    for s, e in regions:
        n = max(1, -(-(e - s) // max_frames))
        cuts = np.linspace(s, e, n + 1).round().astype(np.int64)
        out.extend((int(a), int(b)) for a, b in itertools.pairwise(cuts) if b > a)
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
