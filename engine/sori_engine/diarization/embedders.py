"""Speaker embeddings of windows inside speech, behind one protocol: the second pass over the decoded stream
(pipeline.py) hands each embedder the audio of one unit at a time (a CAM++ speech piece, a resemblyzer speech
region), never the whole file.

- `CampplusEmbedder` (default): CAM++ (models/campplus.py) runs once over each speech piece (at most `piece_s`; the
  fbank mean-normalised over the piece) and embeds `window_s` windows every `step_s` inside it by pooling the
  piece's frame features, so overlapping windows cost no more network time than non-overlapping ones.
- `ResemblyzerEmbedder`: quiet audio raised to -30 dBFS speech level (Resemblyzer's own preprocessing), a mel
  spectrogram of each speech region, windows of `window_s` every `step_s`, each embedded by the d-vector encoder
  (models/resemblyzer.py).

Embeddings are unit-norm, one per window; windows are (start, end) in 10 ms frames.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..errors import MODEL_LOAD_FAILED, EngineError
from .config import DiarizeConfig
from .models.torch_checkpoint import CheckpointError
from .regions import HOP, make_windows

Span = tuple[int, int]


class Embedder(Protocol):
    dim: int

    def span(self, unit: Span) -> Span | None:
        """The file samples [a, b) the unit (frames) needs, or None when it yields no window."""
        ...

    def add(self, unit: Span, audio: np.ndarray) -> None:
        """Embed the unit's windows; `audio` is the span's samples. Units come in file order."""
        ...

    def result(self) -> tuple[list[Span], np.ndarray]:
        """Every window added, in order, and its unit-norm embedding."""
        ...


def _unit_norm(emb: np.ndarray) -> np.ndarray:
    emb = emb.astype(np.float32)
    emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-8)
    return emb


class CampplusEmbedder:
    """CAM++ on each speech piece, window embeddings pooled from its frame features (models/campplus.py)."""

    dim = 192

    def __init__(self, cfg: DiarizeConfig, n_samples: int) -> None:
        from .models.campplus import get_model
        from .models.weights import CAMPPLUS, WeightsMissing, locate

        try:
            self._model = get_model(locate(CAMPPLUS))
        except (WeightsMissing, CheckpointError) as e:
            raise EngineError(MODEL_LOAD_FAILED, str(e)) from e
        self._cfg = cfg
        # fbank frame i covers samples [160 i, 160 i + 400): the file has this many
        self._n_fbank = 0 if n_samples < 400 else 1 + (n_samples - 400) // HOP
        self._windows: list[Span] = []
        self._embs: list[np.ndarray] = []
        self._units: list[Span] = []
        self._unit_embs: list[np.ndarray] = []

    def span(self, unit: Span) -> Span | None:
        s, e = unit[0], min(unit[1], self._n_fbank)
        if e - s < 2 or not make_windows([(s, e)], self._cfg):
            return None
        return s * HOP, (e - 1) * HOP + 400

    def add(self, unit: Span, audio: np.ndarray) -> None:
        from .models.campplus import frame_range
        from .models.fbank import fbank

        s, e = unit[0], min(unit[1], self._n_fbank)
        feats = fbank(audio)  # the file's fbank frames s..e-1: each depends on its own 400 samples only
        x = feats - feats.mean(axis=0)
        fr = self._model.frames(x[None])[0]
        wins = make_windows([(s, e)], self._cfg)
        ranges = [frame_range(a - s, b - s) for a, b in wins]
        self._windows.extend(wins)
        self._embs.append(self._model.pool(fr, [(a, min(b, fr.shape[1])) for a, b in ranges]))
        self._units.append((s, e))
        self._unit_embs.append(self._model.pool(fr, [(0, fr.shape[1])]))

    def units(self) -> tuple[list[Span], np.ndarray]:
        """Every unit (speech piece) added, in order, and the unit-norm embedding of its whole speech: steadier than a
        1 s window's, which is what counting the speakers needs (clustering.count_from_pieces)."""
        if not self._units:
            return [], np.zeros((0, self.dim), np.float32)
        return self._units, _unit_norm(np.concatenate(self._unit_embs))

    def result(self) -> tuple[list[Span], np.ndarray]:
        if not self._windows:
            return [], np.zeros((0, self.dim), np.float32)
        return self._windows, _unit_norm(np.concatenate(self._embs))


class ResemblyzerEmbedder:
    """GE2E d-vectors of mel windows. Windows of equal length are embedded in batches of `batch`, gathered over
    regions until at least `flush_windows` wait (24 KB each; Windowing.embed_windows), so a file with fewer windows
    is batched exactly as it was when the whole file was in memory."""

    dim = 256

    def __init__(self, cfg: DiarizeConfig, n_samples: int, gain: float, flush_windows: int) -> None:
        from .models.resemblyzer import WeightsError, get_encoder

        try:
            self._encoder = get_encoder()
        except WeightsError as err:
            raise EngineError(MODEL_LOAD_FAILED, str(err)) from err
        self._cfg = cfg
        self._n = n_samples
        self._gain = gain
        self._flush_windows = flush_windows
        self._windows: list[Span] = []
        self._out: list[np.ndarray] = []
        self._pending: list[tuple[Span, np.ndarray]] = []  # (window, its mel frames)

    def span(self, unit: Span) -> Span | None:
        if not make_windows([unit], self._cfg):
            return None
        pad = 200  # librosa's centred frames: frame i covers samples [160 i - 200, 160 i + 200)
        a, b = max(0, unit[0] * HOP - pad), min(self._n, (unit[1] - 1) * HOP + pad)
        # At the file's ends its audio is reflected: keep enough of it for the reflection.
        if a == 0:
            b = max(b, min(self._n, 2 * pad + 1))
        if b == self._n:
            a = min(a, max(0, self._n - 2 * pad - 1))
        return a, b

    def add(self, unit: Span, audio: np.ndarray) -> None:
        from .models.resemblyzer import N_FFT, mel_frames, mel_spectrogram

        s, e = unit
        a, b = self.span(unit) or (0, 0)
        if self._gain != 1.0:
            audio = audio * np.float32(self._gain)
        pad = N_FFT // 2
        if a == 0 and b == self._n:
            mel = mel_spectrogram(audio)[s:e]  # the whole (short) file: exactly the whole-file computation
        else:
            ext = np.pad(audio, (pad if a == 0 else 0, pad if b == self._n else 0), mode="reflect")
            first = a + pad if a > 0 else 0  # sample of the padded file where `ext` starts
            mel = mel_frames(ext[s * HOP - first :], e - s)
        for w in make_windows([unit], self._cfg):
            self._pending.append((w, mel[w[0] - s : w[1] - s]))
        if len(self._pending) >= self._flush_windows:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        out = np.zeros((len(self._pending), self.dim), dtype=np.float32)
        by_len: dict[int, list[int]] = {}
        for i, (_w, m) in enumerate(self._pending):
            by_len.setdefault(m.shape[0], []).append(i)
        for idx in by_len.values():
            for b in range(0, len(idx), self._cfg.batch):
                chunk = idx[b : b + self._cfg.batch]
                out[chunk] = self._encoder.embed(np.stack([self._pending[i][1] for i in chunk]))
        self._windows.extend(w for w, _m in self._pending)
        self._out.append(out)
        self._pending = []

    def result(self) -> tuple[list[Span], np.ndarray]:
        self._flush()
        if not self._windows:
            return [], np.zeros((0, self.dim), np.float32)
        return self._windows, np.concatenate(self._out)


def resemblyzer_gain(speech_energy: float, speech_samples: int) -> float:
    """Resemblyzer's preprocessing raises quiet recordings to -30 dBFS (never lowers), measured on speech only."""
    rms = float(np.sqrt(speech_energy / speech_samples)) if speech_samples else 0.0
    return 10 ** (-30 / 20) / rms if 0 < rms < 10 ** (-30 / 20) else 1.0
