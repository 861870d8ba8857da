"""An operator's own diarization models (diarization/models/custom.py): random-weight ONNX models of other shapes
(diarization_shapes.py) are checked on load, then diarize and print voices end to end in place of segmentation-3.0
and CAM++; models that do not take or give what the seam needs are refused with the reason. Their weights are noise,
so the tests assert the invariants of a result, never who spoke."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import Engine
from diarization_shapes import segmentation, write_all

from sori_engine import audio
from sori_engine.diarization import diarize_embedded, embed_samples
from sori_engine.diarization.check_models import check
from sori_engine.diarization.speaker_models import from_json
from sori_engine.errors import EngineError

pytestmark = pytest.mark.model
DIALOGUE = "multi/deeply_ko_dialogue_constructed.wav"


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_all(tmp_path_factory.mktemp("shapes"))


def _models_json(shapes: dict[str, Path], embedding: str = "embedding", **options: float) -> str:
    rate = 8000 if embedding == "embedding_wave" else 16000
    return json.dumps(
        {
            "segmentation": {"path": str(shapes["segmentation"]), "sample_rate": 8000},
            "embedding": {"path": str(shapes[embedding]), "sample_rate": rate},
            "options": options,
        }
    )


def test_shapes_are_read_from_the_models(shapes: dict[str, Path]) -> None:
    models = from_json(_models_json(shapes))
    geo = models.segmentation().geometry
    assert (geo.chunk_samples, geo.frames, geo.local_speakers) == (80000, 249, 2)  # 5 s at 8 kHz, read at 16 kHz
    assert models.embedding().dim == 48
    assert from_json(_models_json(shapes, "embedding_wave")).embedding().dim == 32
    assert not models.builtin_embedding
    assert models.voiceprint_model("x").startswith("onnx-") and "campplus" not in models.voiceprint_model("x")


@pytest.mark.parametrize("embedding", ["embedding", "embedding_wave"])
def test_diarize_on_the_operators_models(shapes: dict[str, Path], testdata: Path, embedding: str) -> None:
    """The dialogue through both models: turns inside the file, sorted, numbered by first appearance, one per
    speaker at a time; a given count is kept; the embeddings have the model's width, unit-norm."""
    models = from_json(_models_json(shapes, embedding))
    x = audio.decode(str(testdata / DIALOGUE))
    em = embed_samples(x, models.config, models=models)
    assert em.emb.shape[1] == models.embedding().dim and em.emb.shape[0] == len(em.windows) > 10
    np.testing.assert_allclose(np.linalg.norm(em.emb, axis=1), 1.0, rtol=1e-5)
    assert em.local.max() < 2 * 1000 and em.regions  # codes: chunk · 2 + local speaker
    for spk in (0, 2):
        res = diarize_embedded(em, spk, models.config)
        assert res.turns and 1 <= res.num_speakers <= models.config.max_speakers
        assert spk == 0 or res.num_speakers <= 2
        seen: list[int] = []
        for a, b in zip(res.turns, res.turns[1:], strict=False):
            assert a.start <= b.start
        for t in res.turns:
            assert 0 <= t.start < t.end <= x.shape[0] / 16000 + 0.02
            if t.speaker not in seen:
                assert t.speaker == len(seen)
                seen.append(t.speaker)


def test_options_come_with_the_models(shapes: dict[str, Path], testdata: Path) -> None:
    """The models file's options replace the built-in settings: one speaker whatever the embeddings when the
    one-speaker rules always hold."""
    one = from_json(_models_json(shapes, one_speaker_sim=-1.0, one_speaker_piece_sim=-1.0))
    assert one.config.one_speaker_sim == -1.0 and one.config.one_speaker_piece_sim == -1.0
    x = audio.decode(str(testdata / DIALOGUE))[: 30 * 16000]
    em = embed_samples(x, one.config, models=one)
    assert diarize_embedded(em, 0, one.config).num_speakers == 1
    assert diarize_embedded(em, 2, one.config).num_speakers == 2  # a given count is not the rule's to change


def test_models_that_do_not_fit_are_refused(shapes: dict[str, Path], tmp_path: Path) -> None:
    five = tmp_path / "five_classes.onnx"
    five.write_bytes(segmentation(np.random.default_rng(0), classes=5))
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    cases = {
        json.dumps({"segmentation": {"path": str(five), "sample_rate": 8000}}): "5 classes",
        json.dumps({"segmentation": {"path": str(shapes["segmentation"])}}): "declares sample_rate 8000",
        json.dumps({"segmentation": {"path": str(shapes["embedding"])}}): "input must be",
        json.dumps({"embedding": {"path": str(shapes["segmentation"]), "sample_rate": 8000}}): "input must be",
        json.dumps({"embedding": {"path": str(junk)}}): "not an ONNX model",
        json.dumps({"embedding": {"path": str(tmp_path / "missing.onnx")}}): "no such file",
        json.dumps({"embedding": {"path": str(junk), "sample_rate": 44100}}): "sample_rate 44100",
        json.dumps({"embedding": {"path": str(junk), "layers": 3}}): "unknown fields",
        json.dumps({"options": {"min_turn_s": "long"}}): "must be a number",
    }
    for raw, reason in cases.items():
        problem = check(raw)
        assert problem is not None and reason in problem, (raw, problem)
    assert check(_models_json(shapes)) is None
    with pytest.raises(EngineError):
        from_json('{"embedding": {"path": ""}}')


def test_the_engine_runs_the_operators_models(
    shapes: dict[str, Path], testdata: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the engine process, as the service runs it (SORI_DIARIZATION_MODELS): `diarize`, and `voiceprint`
    whose prints have the model's width and name."""
    monkeypatch.setenv("SORI_DIARIZATION_MODELS", _models_json(shapes))
    eng = Engine(tmp_path / "engine.stderr")
    try:
        path = str(testdata / DIALOGUE)
        res = eng.call("diarize", {"audio_path": path, "spk_count": 2})
        assert 1 <= res.result["num_speakers"] <= 2
        vp = eng.call("voiceprint", {"voices": [{"parts": [{"audio_path": path}]}], "count_voices": True})
        assert vp.result["model"].startswith("onnx-")
        voice = vp.result["voices"][0]
        assert len(voice["embedding"]) == 48 and voice["voices"] >= 1
    finally:
        eng.close()
