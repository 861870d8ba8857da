"""Speaker embeddings of windows inside speech: the second pass over the decoded stream (pipeline.py) hands the
embedder the audio of one speech piece at a time (at most `piece_s`), never the whole file.

The model (models/campplus.py's CAM++, or an operator's ONNX model, models/custom.py) embeds each piece's `window_s`
windows every `step_s` and the piece whole; CAM++ runs once over the piece and pools every window from its frame
features, so overlapping windows cost no more network time than non-overlapping ones.

Embeddings are unit-norm, one per window; windows and pieces are (start, end) in 10 ms frames.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from .config import DiarizeConfig
from .models.fbank import LENGTH as FBANK_SAMPLES
from .regions import HOP, make_windows

Span = tuple[int, int]


class EmbeddingModel(Protocol):
    """What an embedding model gives: see CAMPPlus.embed_piece."""

    dim: int

    def embed_piece(self, audio: np.ndarray, windows: list[Span]) -> tuple[np.ndarray, np.ndarray]: ...


def unit_norm(emb: np.ndarray) -> np.ndarray:
    emb = emb.astype(np.float32)
    emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-8)
    return emb


class PieceEmbedder:
    """The windows and the whole of each speech piece, embedded by `model`."""

    def __init__(self, model: EmbeddingModel, cfg: DiarizeConfig, n_samples: int) -> None:
        self._model = model
        self._cfg = cfg
        # fbank frame i covers samples [160 i, 160 i + 400): the file has this many
        self._n_fbank = 0 if n_samples < FBANK_SAMPLES else 1 + (n_samples - FBANK_SAMPLES) // HOP
        self._windows: list[Span] = []
        self._embs: list[np.ndarray] = []
        self._units: list[Span] = []
        self._unit_embs: list[np.ndarray] = []

    def span(self, unit: Span) -> Span | None:
        """The file samples [a, b) the unit (frames) needs, or None when it yields no window."""
        s, e = unit[0], min(unit[1], self._n_fbank)
        if e - s < 2 or not make_windows([(s, e)], self._cfg):
            return None
        return s * HOP, (e - 1) * HOP + FBANK_SAMPLES

    def add(self, unit: Span, audio: np.ndarray) -> None:
        """Embed the unit's windows and the unit whole; `audio` is the span's samples. Units come in file order."""
        s, e = unit[0], min(unit[1], self._n_fbank)
        wins = make_windows([(s, e)], self._cfg)
        win_emb, unit_emb = self._model.embed_piece(audio, [(a - s, b - s) for a, b in wins])
        self._windows.extend(wins)
        self._embs.append(win_emb)
        self._units.append((s, e))
        self._unit_embs.append(unit_emb)

    def units(self) -> tuple[list[Span], np.ndarray]:
        """Every unit (speech piece) added, in order, and the unit-norm embedding of its whole speech: steadier than a
        1 s window's, which is what counting the speakers needs (count.py)."""
        if not self._units:
            return [], np.zeros((0, self._model.dim), np.float32)
        return self._units, unit_norm(np.concatenate(self._unit_embs))

    def result(self) -> tuple[list[Span], np.ndarray]:
        """Every window added, in order, and its unit-norm embedding."""
        if not self._windows:
            return [], np.zeros((0, self._model.dim), np.float32)
        return self._windows, unit_norm(np.concatenate(self._embs))
