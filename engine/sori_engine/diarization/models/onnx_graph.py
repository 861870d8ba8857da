"""A small builder for ONNX graphs made from numpy weights (the `onnx` helper API): the diarization models are
rebuilt from their PyTorch state dicts this way at load time and run by onnxruntime, so no PyTorch is needed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

M = TypeVar("M")


class Graph:
    """Accumulates ONNX nodes and initializers; names are generated."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._n = 0

    def name(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def const(self, arr: np.ndarray) -> str:
        from onnx import numpy_helper

        n = self.name("w")
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), n))
        return n

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        from onnx import helper

        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def conv(self, x: str, w: np.ndarray, b: np.ndarray | None, **attrs: Any) -> str:
        ins = [x, self.const(w)] + ([self.const(b)] if b is not None else [])
        return self.op("Conv", *ins, **attrs)

    def affine(self, x: str, scale: np.ndarray, shift: np.ndarray) -> str:
        """Per-channel x * scale + shift on (B, C, T)."""
        return self.op(
            "Add", self.op("Mul", x, self.const(scale.reshape(1, -1, 1))), self.const(shift.reshape(1, -1, 1))
        )

    def model(self, inputs: list[Any], outputs: list[Any], name: str) -> bytes:
        """The serialized model (opset 18)."""
        from onnx import helper

        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        model.ir_version = 8
        return model.SerializeToString()


def session(model: bytes):  # type: ignore[no-untyped-def]
    """An onnxruntime session on one thread (the engine runs one request at a time on a shared machine)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


class OnePerFile(Generic[M]):
    """`get_model(path)`: the model of a weights file, built on first use and shared after it (the models are
    thread-safe after construction; building one reads its checkpoint and makes its graph)."""

    def __init__(self, build: Callable[[Path], M]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._models: dict[str, M] = {}

    def __call__(self, path: str | Path) -> M:
        key = str(path)
        with self._lock:
            if key not in self._models:
                self._models[key] = self._build(Path(path))
            return self._models[key]
