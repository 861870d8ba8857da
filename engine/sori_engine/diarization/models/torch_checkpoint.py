"""Reading a PyTorch checkpoint's tensors as numpy arrays, without torch, in its zip format (`torch.save` since 1.6;
CAM++, segmentation-3.0): a zip holding `<root>/data.pkl` (the object tree, a pickle) and `<root>/data/<key>` (one
raw little-endian buffer per storage).

A restricted unpickler reads the tree: it resolves only the storage types, `_rebuild_tensor_v2`, `OrderedDict` and a
short list of plain metadata classes a pyannote checkpoint names (turned into inert placeholders); any other global
is refused, so the file cannot run code. Only the tensors of the state dict are returned.
"""

from __future__ import annotations

import collections
import pickle
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # typing.Self is 3.11+ and the engine runs on 3.10; annotations are not evaluated
    from typing_extensions import Self

_STORAGE_DTYPES: dict[str, Any] = {
    "FloatStorage": np.float32,
    "DoubleStorage": np.float64,
    "HalfStorage": np.float16,
    "LongStorage": np.int64,
    "IntStorage": np.int32,
    "ShortStorage": np.int16,
    "CharStorage": np.int8,
    "ByteStorage": np.uint8,
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


class _Storage:
    """A storage's element type and count; its data is filled in after the pickle is read."""

    def __init__(self, dtype: Any, numel: int, data: np.ndarray | None = None) -> None:
        self.dtype, self.numel, self.data = np.dtype(dtype), numel, data


class _Tensor:
    def __init__(self, storage: _Storage, offset: int, size: tuple[int, ...], stride: tuple[int, ...]) -> None:
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride

    def materialize(self) -> np.ndarray:
        data = self.storage.data
        if data is None:
            raise CheckpointError("a tensor's storage was never read")
        item = data.itemsize
        view = np.lib.stride_tricks.as_strided(
            data[self.offset :], shape=self.size, strides=tuple(s * item for s in self.stride), writeable=False
        )
        return np.array(view)  # a contiguous copy, independent of the file buffer


def _rebuild_tensor_v2(storage: _Storage, offset: int, size: Any, stride: Any, *_rest: Any) -> _Tensor:
    return _Tensor(storage, int(offset), tuple(int(x) for x in size), tuple(int(x) for x in stride))


class _Unpickler(pickle.Unpickler):
    """The object tree; its storages are registered for reading after it (`persistent_load`)."""

    def __init__(self, data: Any) -> None:
        super().__init__(data)
        self.storages: dict[str, _Storage] = {}

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

    def persistent_load(self, pid: Any) -> _Storage:
        # ("storage", type, key, location, numel)
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unexpected persistent id {pid!r}")
        _, dtype, key, _location, numel = pid
        return self.storages.setdefault(str(key), _Storage(dtype, int(numel)))


def _load_zip(path: str | Path) -> Any:
    with zipfile.ZipFile(path) as zf:
        pkl = next((n for n in zf.namelist() if n.endswith("/data.pkl")), None)
        if pkl is None:
            raise CheckpointError(f"{path}: not a zip-format PyTorch checkpoint")
        with zf.open(pkl) as f:
            up = _Unpickler(f)
            root = up.load()
        base = pkl.rsplit("/", 1)[0]
        for key, st in up.storages.items():
            st.data = np.frombuffer(zf.read(f"{base}/data/{key}"), dtype=st.dtype.newbyteorder("<"))
            if st.data.size != st.numel:
                raise CheckpointError(f"storage {key} holds {st.data.size} elements, expected {st.numel}")
    return root


def load_state_dict(path: str | Path, key: str = "state_dict") -> dict[str, np.ndarray]:
    """The tensors of the checkpoint's state dict (its `key` entry, or the root itself when it has none), as numpy
    arrays."""
    try:
        root = _load_zip(path)
    except (OSError, zipfile.BadZipFile, pickle.UnpicklingError, EOFError, KeyError, ValueError) as e:
        raise CheckpointError(f"cannot read model weights {path}: {e}") from e
    state = root.get(key, root) if isinstance(root, dict) else None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: no state dict in checkpoint")
    return {k: v.materialize() for k, v in state.items() if isinstance(v, _Tensor)}
