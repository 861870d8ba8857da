"""The resemblyzer backend's speaker-embedding model: Resemblyzer's GE2E d-vector encoder, run with numpy alone.

The weights are `resemblyzer/pretrained.pt` from the PyPI package `resemblyzer==0.1.4` (Apache-2.0, 17 MB), installed
with `--no-deps` so that neither PyTorch nor librosa comes along (docs/diarization.md says why this model). The
file is a PyTorch checkpoint in the legacy (pre-1.6, non-zip) serialization format; `load_state_dict` reads it with the
engine's restricted unpickler (torch_checkpoint.py, shared with the CAM++ and segmentation weights), and never
imports the `resemblyzer` package itself (its `__init__` imports torch).

The network is small: 40-band mel power spectrogram (25 ms window, 10 ms hop) → 3-layer LSTM (256) → linear (256) →
ReLU → L2 norm. `SpeakerEncoder.embed` runs it batched in float32; the recurrence is 3 × frames matrix products of
(batch × 256) · (256 × 1024), a few hundredths of real time on one CPU core at the window rates diarization uses.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from .torch_checkpoint import CheckpointError
from .torch_checkpoint import load_state_dict as read_checkpoint

SAMPLE_RATE = 16000
N_FFT = 400  # 25 ms
HOP = 160  # 10 ms: one mel frame per 10 ms
N_MELS = 40
HIDDEN = 256
LAYERS = 3
# Environment variable naming a weights file to use instead of the one the resemblyzer package installs.
WEIGHTS_ENV = "SORI_SPEAKER_WEIGHTS"


class WeightsError(Exception):
    """The speaker model's weights are missing or unreadable."""


def load_state_dict(path: str | Path) -> dict[str, np.ndarray]:
    """`torch.load(path)["model_state"]` for the legacy-format checkpoint, as numpy arrays (torch_checkpoint.py)."""
    try:
        state = read_checkpoint(path, "model_state")
    except CheckpointError as e:
        raise WeightsError(f"cannot read speaker model weights {path}: {e}") from e
    if not state:
        raise WeightsError(f"{path}: no model_state in checkpoint")
    return state


def default_weights_path() -> Path:
    """$SORI_SPEAKER_WEIGHTS, else pretrained.pt inside the installed resemblyzer package (located without importing
    it)."""
    env = os.environ.get(WEIGHTS_ENV)
    if env:
        return Path(env)
    spec = importlib.util.find_spec("resemblyzer")
    if spec is None or not spec.submodule_search_locations:
        raise WeightsError(
            "speaker model weights not found: install the PyPI package resemblyzer==0.1.4 with --no-deps "
            f"(make install does), or set {WEIGHTS_ENV} to a pretrained.pt"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pretrained.pt"


# ---------------------------------------------------------------------------------------------------------------
# Features: librosa.feature.melspectrogram(sr=16000, n_fft=400, hop_length=160, n_mels=40), re-implemented


def _hz_to_mel(f: np.ndarray) -> np.ndarray:
    f = np.asarray(f, dtype=np.float64)
    f_sp = 200.0 / 3
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    mels = f / f_sp
    log_part = min_log_hz / f_sp + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep
    return np.where(f >= min_log_hz, log_part, mels)


def _mel_to_hz(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float64)
    f_sp = 200.0 / 3
    min_log_hz, logstep = 1000.0, np.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


def mel_filterbank() -> np.ndarray:
    """Slaney-style mel filterbank (librosa's default: htk=False, norm='slaney'), shape (N_MELS, N_FFT//2+1)."""
    fft_freqs = np.linspace(0, SAMPLE_RATE / 2, 1 + N_FFT // 2)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(np.array(0.0)), _hz_to_mel(np.array(SAMPLE_RATE / 2)), N_MELS + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_freqs[None, :]
    weights = np.zeros((N_MELS, len(fft_freqs)))
    for i in range(N_MELS):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2 : N_MELS + 2] - mel_f[:N_MELS]))[:, None]
    return weights.astype(np.float32)


_MEL = mel_filterbank()
_WINDOW = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)  # periodic Hann


def mel_spectrogram(audio: np.ndarray) -> np.ndarray:
    """Mel power spectrogram, shape (frames, N_MELS); frame i is centred on sample i*HOP (librosa's center=True)."""
    audio = np.asarray(audio, dtype=np.float32)
    if audio.shape[0] < 2:
        audio = np.zeros(N_FFT, dtype=np.float32)
    pad = N_FFT // 2
    padded = np.pad(audio, pad, mode="reflect") if audio.shape[0] > pad else np.pad(audio, pad, mode="constant")
    return mel_frames(padded, 1 + (padded.shape[0] - N_FFT) // HOP)


def mel_frames(padded: np.ndarray, n_frames: int) -> np.ndarray:
    """The first n_frames frames of a spectrogram whose frame i starts at sample i*HOP of `padded` (the file's audio
    padded by N_FFT // 2 at its ends, or a stretch of it: each frame depends on its own 400 samples only)."""
    out = np.empty((n_frames, N_MELS), dtype=np.float32)
    block = 4096  # frames per FFT block: bounds memory on long files
    for start in range(0, n_frames, block):
        stop = min(n_frames, start + block)
        idx = (np.arange(start, stop) * HOP)[:, None] + np.arange(N_FFT)[None, :]
        spec = np.fft.rfft(padded[idx] * _WINDOW, axis=1)
        power = (spec.real**2 + spec.imag**2).astype(np.float32)
        out[start:stop] = power @ _MEL.T
    return out


# ---------------------------------------------------------------------------------------------------------------
# The encoder


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)  # overflow-free


class SpeakerEncoder:
    """Resemblyzer's VoiceEncoder forward pass. Embeddings are 256-d, non-negative and L2-normalised."""

    def __init__(self, weights_path: str | Path | None = None) -> None:
        path = Path(weights_path) if weights_path is not None else default_weights_path()
        if not path.is_file():
            raise WeightsError(f"speaker model weights not found at {path}")
        state = load_state_dict(path)
        try:
            self._w_ih = [state[f"lstm.weight_ih_l{k}"].T.astype(np.float32) for k in range(LAYERS)]
            self._w_hh = [state[f"lstm.weight_hh_l{k}"].T.astype(np.float32) for k in range(LAYERS)]
            self._b = [(state[f"lstm.bias_ih_l{k}"] + state[f"lstm.bias_hh_l{k}"]).astype(np.float32) for k in range(3)]
            self._lin_w = state["linear.weight"].T.astype(np.float32)
            self._lin_b = state["linear.bias"].astype(np.float32)
        except KeyError as e:
            raise WeightsError(f"{path}: missing tensor {e}") from e
        if self._w_ih[0].shape != (N_MELS, 4 * HIDDEN) or self._lin_w.shape != (HIDDEN, HIDDEN):
            raise WeightsError(f"{path}: unexpected tensor shapes")
        self.path = str(path)

    def embed(self, mels: np.ndarray) -> np.ndarray:
        """Embed a batch of equal-length mel windows, shape (batch, frames, N_MELS) → (batch, 256)."""
        if mels.ndim != 3 or mels.shape[2] != N_MELS or mels.shape[1] == 0:
            raise ValueError(f"mels must have shape (batch, frames>0, {N_MELS}), got {mels.shape}")
        # OpenBLAS's threads cost far more than they save on (batch × 256) products, worse on a busy machine
        # (measured: 10× slower with 2 threads under load): run the recurrence on one thread.
        with threadpool_limits(limits=1, user_api="blas"):
            return self._embed(np.ascontiguousarray(mels, dtype=np.float32))

    def _embed(self, x: np.ndarray) -> np.ndarray:
        batch, frames, _ = x.shape
        h = np.zeros((batch, HIDDEN), dtype=np.float32)
        for layer in range(LAYERS):
            gates_in = (x.reshape(batch * frames, -1) @ self._w_ih[layer] + self._b[layer]).reshape(batch, frames, -1)
            h = np.zeros((batch, HIDDEN), dtype=np.float32)
            c = np.zeros((batch, HIDDEN), dtype=np.float32)
            last = layer == LAYERS - 1
            outputs = None if last else np.empty((batch, frames, HIDDEN), dtype=np.float32)
            w_hh = self._w_hh[layer]
            for t in range(frames):
                g = gates_in[:, t] + h @ w_hh
                i = _sigmoid(g[:, :HIDDEN])
                f = _sigmoid(g[:, HIDDEN : 2 * HIDDEN])
                cell = np.tanh(g[:, 2 * HIDDEN : 3 * HIDDEN])
                o = _sigmoid(g[:, 3 * HIDDEN :])
                c = f * c + i * cell
                h = o * np.tanh(c)
                if outputs is not None:
                    outputs[:, t] = h
            if outputs is not None:
                x = outputs
        raw = np.maximum(h @ self._lin_w + self._lin_b, 0.0)
        norm = np.linalg.norm(raw, axis=1, keepdims=True)
        return raw / np.maximum(norm, 1e-8)


_lock = threading.Lock()
_encoder: SpeakerEncoder | None = None


def get_encoder() -> SpeakerEncoder:
    """The process-wide encoder, loaded on first use (a 17 MB read, about 0.1 s)."""
    global _encoder
    with _lock:
        if _encoder is None:
            _encoder = SpeakerEncoder()
        return _encoder
