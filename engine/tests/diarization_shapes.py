"""Random-weight diarization models of other shapes than the built-in ones, for the model seam's tests
(docs/diarization.md, "Bring your own models"): what an operator's ONNX models look like to the engine, at a few KB.

- `segmentation.onnx`: 8 kHz audio (B, 1, 40000), fixed 5 s chunks, its rate in its metadata → (B, 249, 4) log-probabilities of the powerset
  of 2 local speakers (20 ms frames): segmentation-3.0 has 16 kHz, 10 s, 589 frames and 3 speakers.
- `embedding.onnx`: 64-bin fbank (B, T, 64), T free → (B, 48): CAM++ takes 80 bins and gives 192.
- `embedding_wave.onnx`: 8 kHz audio (B, samples) → (B, 32), the audio-input kind.
Their output is noise: a test asserts what holds whatever the speakers, never who they are.

    python engine/tests/diarization_shapes.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def _model(nodes: list, inputs: list, outputs: list, inits: dict[str, np.ndarray], rate: int | None = None) -> bytes:
    init = [numpy_helper.from_array(v.astype(np.float32) if v.dtype.kind == "f" else v, k) for k, v in inits.items()]
    graph = helper.make_graph(nodes, "shape", inputs, outputs, init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    if rate is not None:  # as exported models state it
        helper.set_model_props(model, {"sample_rate": str(rate)})
    return model.SerializeToString()


def segmentation(rng: np.random.Generator, classes: int = 4) -> bytes:
    """Conv1d (1 → 16, kernel 320, stride 160) → ReLU → linear 16 → classes → log-softmax."""
    nodes = [
        helper.make_node("Conv", ["audio", "w"], ["c"], kernel_shape=[320], strides=[160]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["t", "lin"], ["z"]),
        helper.make_node("LogSoftmax", ["z"], ["logp"], axis=-1),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("audio", TensorProto.FLOAT, ["B", 1, 40000])],
        [helper.make_tensor_value_info("logp", TensorProto.FLOAT, ["B", 249, classes])],
        {"w": rng.normal(0, 0.5, (16, 1, 320)), "lin": rng.normal(0, 1, (16, classes))},
        rate=8000,
    )


def embedding(rng: np.random.Generator, bins: int = 64, dim: int = 48) -> bytes:
    """Per-frame linear bins → 64, tanh, mean over time, linear → dim."""
    nodes = [
        helper.make_node("MatMul", ["fbank", "w1"], ["h"]),
        helper.make_node("Tanh", ["h"], ["a"]),
        helper.make_node("ReduceMean", ["a", "axis"], ["m"], keepdims=0),
        helper.make_node("MatMul", ["m", "w2"], ["embedding"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("fbank", TensorProto.FLOAT, ["B", "T", bins])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["B", dim])],
        {"w1": rng.normal(0, 0.3, (bins, 64)), "w2": rng.normal(0, 1, (64, dim)), "axis": np.array([1], np.int64)},
    )


def embedding_wave(rng: np.random.Generator, dim: int = 32) -> bytes:
    """Conv1d over the samples (1 → 24, kernel 200, stride 80) → tanh → mean over time → linear → dim."""
    nodes = [
        helper.make_node("Unsqueeze", ["audio", "one"], ["x"]),
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[200], strides=[80]),
        helper.make_node("Tanh", ["c"], ["a"]),
        helper.make_node("ReduceMean", ["a", "two"], ["m"], keepdims=0),
        helper.make_node("MatMul", ["m", "lin"], ["embedding"]),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("audio", TensorProto.FLOAT, ["B", "samples"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["B", dim])],
        {
            "w": rng.normal(0, 0.3, (24, 1, 200)),
            "lin": rng.normal(0, 1, (24, dim)),
            "one": np.array([1], np.int64),
            "two": np.array([2], np.int64),
        },
    )


def write_all(out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(70)
    files = {
        "segmentation": (segmentation(rng), "segmentation.onnx"),
        "embedding": (embedding(rng), "embedding.onnx"),
        "embedding_wave": (embedding_wave(rng), "embedding_wave.onnx"),
    }
    paths = {}
    for key, (data, name) in files.items():
        (out / name).write_bytes(data)
        paths[key] = out / name
    return paths


if __name__ == "__main__":
    for key, path in write_all(Path(sys.argv[1])).items():
        print(f"{key}: {path}")
