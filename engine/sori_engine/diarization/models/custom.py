"""An operator's own diarization models in place of segmentation-3.0 and CAM++ (docs/diarization.md, "Bring your own
models"): ONNX files named in SORI_MODELS_FILE's `diarization` object, which the service passes to the engine as
SORI_DIARIZATION_MODELS (JSON, paths absolute) once `python -m sori_engine.diarization.models.custom JSON` has loaded
and checked them at its start.

What each model must take and give, checked on load by running it once on noise:
- segmentation: audio (B, samples) or (B, 1, samples) at `sample_rate`, chunks of `chunk_s` (the input's length when
  the model fixes it) → (B, frames, classes): log-probabilities or probabilities of the powerset classes of L local
  speakers, at most two at once, in pyannote's order (classes = 1 + L + L(L-1)/2: 4, 7 or 11). The frames are spread
  evenly over the chunk unless `frame_step_s` and `frame_duration_s` say otherwise.
- embedding: Kaldi log-mel fbank (B, T, bins), 25 ms frames every 10 ms (bins from the model's last axis), or audio
  (B, samples), at `sample_rate`, the time axis free → (B, dim). Each input is mean-normalised over its frames.
The engine's audio is 16 kHz; a model at 8 kHz gets it resampled. Nothing here is downloaded or compiled.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import MODEL_LOAD_FAILED, EngineError
from ...pcm import SAMPLE_RATE
from .fbank import fbank
from .onnx_graph import session
from .segmentation import Geometry, powerset

_KEYS = {
    "segmentation": {"path", "sample_rate", "chunk_s", "frame_step_s", "frame_duration_s"},
    "embedding": {"path", "sample_rate"},
}


@dataclass(frozen=True)
class Entry:
    """One model of the models file's `diarization` object."""

    path: str
    sample_rate: int = SAMPLE_RATE
    chunk_s: float | None = None  # segmentation: None: the input's fixed length, else 10 s
    frame_step_s: float | None = None  # segmentation: None: the chunk over its frames
    frame_duration_s: float | None = None  # segmentation: None: frame_step_s

    @property
    def sha256(self) -> str:
        h = hashlib.sha256()
        with open(self.path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()


def parse_entry(kind: str, obj: Any) -> Entry:
    if not isinstance(obj, dict) or not isinstance(obj.get("path"), str) or not obj["path"]:
        raise _error(kind, "must be an object with a path")
    unknown = set(obj) - _KEYS[kind]
    if unknown:
        raise _error(kind, f"has unknown fields {sorted(unknown)}")
    for field in _KEYS[kind] - {"path"}:
        value = obj.get(field)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise _error(kind, f"field {field} must be a number > 0")
    rate = obj.get("sample_rate", SAMPLE_RATE)
    if rate not in (8000, 16000):
        raise _error(kind, f"sample_rate {rate}: the engine feeds 16 kHz audio, or 8 kHz resampled")
    return Entry(**{k: obj[k] for k in obj if k != "sample_rate"}, sample_rate=int(rate))


def _error(kind: str, message: str) -> EngineError:
    return EngineError(MODEL_LOAD_FAILED, f"diarization {kind} model {message}")


def _session(kind: str, entry: Entry):  # type: ignore[no-untyped-def]
    if not Path(entry.path).is_file():
        raise _error(kind, f"{entry.path}: no such file")
    try:
        sess = session(entry.path)  # type: ignore[arg-type]
    except Exception as e:  # onnxruntime's errors share no base class
        raise _error(kind, f"{entry.path}: not an ONNX model onnxruntime can run ({e})") from e
    # an exported model may state its rate in its metadata (sherpa-onnx's and pyannote's exports do)
    declared = sess.get_modelmeta().custom_metadata_map.get("sample_rate")
    if declared is not None and declared.strip() != str(entry.sample_rate):
        raise _error(kind, f"{entry.path} declares sample_rate {declared}, the models file {entry.sample_rate}")
    return sess


def _to_rate(x: np.ndarray, rate: int) -> np.ndarray:
    """16 kHz samples (last axis) at the model's rate."""
    if rate == SAMPLE_RATE:
        return x
    from scipy import signal

    return signal.resample_poly(x, rate, SAMPLE_RATE, axis=-1).astype(np.float32)


def _noise(shape: tuple[int, ...]) -> np.ndarray:
    return (0.1 * np.random.default_rng(0).standard_normal(shape)).astype(np.float32)


def _probe(kind: str, run: Callable[[], np.ndarray]) -> np.ndarray:
    """The model's output on noise, or the reason it does not run on what the engine feeds it."""
    try:
        return np.asarray(run())
    except Exception as e:  # onnxruntime's errors share no base class
        raise _error(kind, f"does not run on the engine's input: {e}") from e


class OnnxSegmentation:
    """An operator's segmentation model behind segmentation.SegmentationModel: (B, chunk) 16 kHz samples → (B,
    frames, classes) log-probabilities."""

    def __init__(self, entry: Entry) -> None:
        self._session = _session("segmentation", entry)
        self._rate = entry.sample_rate
        inp = self._session.get_inputs()[0]
        if len(inp.shape) not in (2, 3) or (len(inp.shape) == 3 and inp.shape[1] not in (1, None, "")):
            raise _error("segmentation", f"input must be (B, samples) or (B, 1, samples), not {inp.shape}")
        self._input, self._rank = inp.name, len(inp.shape)
        fixed = inp.shape[-1] if isinstance(inp.shape[-1], int) else None
        chunk_s = fixed / self._rate if fixed else (entry.chunk_s or 10.0)
        if fixed and entry.chunk_s and abs(entry.chunk_s - chunk_s) > 1e-6:
            raise _error("segmentation", f"takes {fixed} samples ({chunk_s} s), not chunk_s {entry.chunk_s}")
        self._log = True
        out = _probe("segmentation", lambda: self._run(_noise((1, round(chunk_s * SAMPLE_RATE)))))
        if out.ndim != 3 or out.shape[0] != 1:
            raise _error("segmentation", f"output must be (B, frames, classes), not {list(out.shape)}")
        frames, classes = out.shape[1], out.shape[2]
        speakers = next((n for n in (2, 3, 4) if len(powerset(n)) == classes), None)
        if speakers is None:
            raise _error("segmentation", f"gives {classes} classes: a powerset of 2-4 speakers has 4, 7 or 11")
        if np.allclose(np.exp(out).sum(axis=-1), 1.0, atol=1e-3):
            self._log = True
        elif out.min() >= 0 and np.allclose(out.sum(axis=-1), 1.0, atol=1e-3):
            self._log = False
        else:
            raise _error("segmentation", "output rows are neither probabilities nor log-probabilities")
        step = entry.frame_step_s or chunk_s / frames
        self.geometry = Geometry(round(chunk_s * SAMPLE_RATE), frames, step, entry.frame_duration_s or step, speakers)

    def _run(self, chunks: np.ndarray) -> np.ndarray:
        x = _to_rate(chunks, self._rate)
        x = x[:, None, :] if self._rank == 3 else x
        out = self._session.run(None, {self._input: np.ascontiguousarray(x, dtype=np.float32)})[0]
        return out if self._log else np.log(np.maximum(out, 1e-12))

    def __call__(self, chunks: np.ndarray) -> np.ndarray:
        return self._run(chunks).astype(np.float32)


class OnnxEmbedding:
    """An operator's speaker-embedding model behind embedders.EmbeddingModel: each window of a speech piece and the
    piece whole, one input each (equal lengths batched), each mean-normalised."""

    def __init__(self, entry: Entry) -> None:
        self._session = _session("embedding", entry)
        self._rate = entry.sample_rate
        inp = self._session.get_inputs()[0]
        self._input = inp.name
        if len(inp.shape) == 3 and isinstance(inp.shape[2], int) and not isinstance(inp.shape[1], int):
            self._bins: int | None = inp.shape[2]
        elif len(inp.shape) == 2 and not isinstance(inp.shape[1], int):
            self._bins = None
        else:
            raise _error("embedding", f"input must be (B, T, bins) fbank or (B, samples), T free; not {inp.shape}")
        out = _probe("embedding", lambda: self._embed([self._features(_noise((SAMPLE_RATE,)))]))
        if out.ndim != 2 or out.shape[0] != 1 or out.shape[1] < 2 or not np.isfinite(out).all():
            raise _error("embedding", f"output must be finite (B, dim), not {list(out.shape)}")
        self.dim = int(out.shape[1])

    def _features(self, audio: np.ndarray) -> np.ndarray:
        """Per 10 ms frame: fbank rows, or (the audio model) the frame's samples, so that windows slice either."""
        x = _to_rate(audio, self._rate)
        if self._bins is not None:
            return fbank(x, self._rate, self._bins)
        hop = self._rate // 100
        return x[: x.shape[0] // hop * hop].reshape(-1, hop)

    def _embed(self, inputs: list[np.ndarray]) -> np.ndarray:
        x = np.stack([f - f.mean(axis=0) if self._bins is not None else f.reshape(-1) - f.mean() for f in inputs])
        return self._session.run(None, {self._input: np.ascontiguousarray(x, dtype=np.float32)})[0]

    def embed_piece(self, audio: np.ndarray, windows: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        feats = self._features(audio)
        spans = [(a, min(b, feats.shape[0])) for a, b in windows]
        out = np.zeros((len(spans), self.dim), np.float32)
        by_len: dict[int, list[int]] = {}
        for i, (a, b) in enumerate(spans):
            by_len.setdefault(b - a, []).append(i)
        for idx in by_len.values():
            out[idx] = self._embed([feats[spans[i][0] : spans[i][1]] for i in idx])
        return out, self._embed([feats])


def parse_models(raw: str | Mapping[str, Any]) -> tuple[Entry | None, Entry | None, dict[str, Any]]:
    """SORI_DIARIZATION_MODELS: the segmentation and embedding entries (None: the built-in model) and the options."""
    try:
        obj = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except ValueError as e:
        raise EngineError(MODEL_LOAD_FAILED, f"SORI_DIARIZATION_MODELS is not JSON: {e}") from e
    if not isinstance(obj, dict) or set(obj) - {"segmentation", "embedding", "options"}:
        raise EngineError(MODEL_LOAD_FAILED, "diarization models: an object of segmentation, embedding, options")
    seg = parse_entry("segmentation", obj["segmentation"]) if obj.get("segmentation") is not None else None
    emb = parse_entry("embedding", obj["embedding"]) if obj.get("embedding") is not None else None
    options = obj.get("options") or {}
    if not isinstance(options, dict):
        raise EngineError(MODEL_LOAD_FAILED, "diarization options must be an object")
    return seg, emb, options
