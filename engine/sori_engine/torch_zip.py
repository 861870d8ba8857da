"""Reading a zip-format PyTorch checkpoint (`torch.save` since 1.6) as numpy arrays, without torch.

The file is a zip holding `<root>/data.pkl` (the object tree, a pickle) and `<root>/data/<key>` (one raw
little-endian buffer per storage). The unpickler resolves only the storage types, `_rebuild_tensor_v2`, `OrderedDict`
and a short list of plain metadata classes a pyannote checkpoint names (turned into inert placeholders); any other
global is refused, so the file cannot run code. Only the tensors of the state dict are returned.
"""

from __future__ import annotations

import collections
import pickle
import zipfile
from pathlib import Path
from typing import Any, Self

import numpy as np

_STORAGE_DTYPES: dict[str, Any] = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "BoolStorage": np.bool_,
}

# Metadata a pyannote Lightning checkpoint pickles beside its state dict (task specifications, versions). None is
# needed; each becomes a placeholder that takes any arguments and state and does nothing.
_INERT_GLOBALS = {
    ("pyannote.audio.core.task", "Problem"),
    ("pyannote.audio.core.task", "Resolution"),
    ("pyannote.audio.core.task", "Specifications"),
    ("torch.torch_version", "TorchVersion"),
}


class CheckpointError(Exception):
    """The weights file is missing, unreadable or not the expected checkpoint."""


class _Inert:
    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        pass

    def __new__(cls, *_args: Any, **_kwargs: Any) -> Self:  # enums unpickle as Class(value)
        return object.__new__(cls)

    def __setstate__(self, _state: Any) -> None:
        pass


class _Tensor:
    def __init__(self, storage: np.ndarray, offset: int, size: tuple[int, ...], stride: tuple[int, ...]) -> None:
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride

    def materialize(self) -> np.ndarray:
        item = self.storage.itemsize
        view = np.lib.stride_tricks.as_strided(
            self.storage[self.offset :], shape=self.size, strides=tuple(s * item for s in self.stride),
            writeable=False,
        )
        return np.array(view)


def _rebuild_tensor_v2(storage: np.ndarray, offset: int, size: Any, stride: Any, *_rest: Any) -> _Tensor:
    return _Tensor(storage, int(offset), tuple(int(x) for x in size), tuple(int(x) for x in stride))


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: Any, zf: zipfile.ZipFile, root: str) -> None:
        super().__init__(data)
        self._zf, self._root = zf, root
        self._storages: dict[str, np.ndarray] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" and name in _STORAGE_DTYPES:
            return _STORAGE_DTYPES[name]
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return _rebuild_tensor_v2
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if (module, name) in _INERT_GLOBALS:
            return _Inert
        raise pickle.UnpicklingError(f"checkpoint names a global this reader does not allow: {module}.{name}")

    def persistent_load(self, pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unexpected persistent id {pid!r}")
        _, dtype, key, _location, numel = pid
        key = str(key)
        if key not in self._storages:
            raw = self._zf.read(f"{self._root}/data/{key}")
            arr = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<"))
            if arr.size != int(numel):
                raise pickle.UnpicklingError(f"storage {key} holds {arr.size} elements, expected {numel}")
            self._storages[key] = arr
        return self._storages[key]


def load_state_dict(path: str | Path) -> dict[str, np.ndarray]:
    """The tensors of the checkpoint's state dict (the root itself, or its "state_dict" entry), as numpy arrays."""
    try:
        with zipfile.ZipFile(path) as zf:
            pkl = next((n for n in zf.namelist() if n.endswith("/data.pkl")), None)
            if pkl is None:
                raise CheckpointError(f"{path}: not a zip-format PyTorch checkpoint")
            with zf.open(pkl) as f:
                root = _Unpickler(f, zf, pkl.rsplit("/", 1)[0]).load()
    except (OSError, zipfile.BadZipFile, pickle.UnpicklingError, EOFError, KeyError, ValueError) as e:
        raise CheckpointError(f"cannot read model weights {path}: {e}") from e
    state = root.get("state_dict", root) if isinstance(root, dict) else None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: no state dict in checkpoint")
    return {k: v.materialize() for k, v in state.items() if isinstance(v, _Tensor)}
