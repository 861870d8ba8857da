"""Framing, ping, probe and the error paths, against the real engine process."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import Engine


def test_ready_and_ping(engine: Engine) -> None:
    assert engine.ready["id"] is None and engine.ready["event"] == "ready"
    version = engine.ready["version"]
    result = engine.call("ping").result
    assert result["version"] == version
    assert isinstance(result["models_loaded"], list)


@pytest.mark.parametrize(
    "name, fmt, channels, sample_rate",
    [
        ("picovoice_leopard_test_ko.44k1_stereo_s24.wav", "wav", 2, 44100),
        ("picovoice_leopard_test_ko.mp3", "mp3", 1, 16000),
    ],
)
def test_probe(engine: Engine, testdata: Path, name: str, fmt: str, channels: int, sample_rate: int) -> None:
    result = engine.call("probe", {"audio_path": str(testdata / "formats" / name)}).result
    assert result["format"] == fmt
    assert result["channels"] == channels
    assert result["sample_rate"] == sample_rate
    assert result["duration_s"] == pytest.approx(3.888, abs=0.05)
    assert isinstance(result["codec"], str) and result["codec"]


@pytest.fixture(scope="module")
def bad_audio(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bad_audio")
    (root / "empty.wav").write_bytes(b"")
    # Seeded so the bytes never happen to look like a real container.
    (root / "random.mp3").write_bytes(random.Random(1234).randbytes(64 * 1024))
    return {"empty": root / "empty.wav", "random": root / "random.mp3"}


@pytest.mark.parametrize("kind", ["empty", "random"])
def test_undecodable_audio(engine: Engine, model: dict[str, Any], bad_audio: dict[str, Path], kind: str) -> None:
    path = str(bad_audio[kind])
    assert engine.call("probe", {"audio_path": path}).error_code == "audio_decode_failed"
    reply = engine.call("transcribe", {"audio_path": path, "model": model, "language_mode": "fixed", "language": "en"})
    assert reply.error_code == "audio_decode_failed"
    assert engine.call("ping").result


def test_bad_model_path(engine: Engine, model: dict[str, Any], testdata: Path, tmp_path: Path) -> None:
    for path in (tmp_path / "missing", tmp_path):  # absent, and a directory that is not a model
        params = {
            "audio_path": str(testdata / "en" / "whisper_jfk.flac"),
            "model": {**model, "path": str(path)},
            "language_mode": "fixed",
            "language": "en",
        }
        reply = engine.call("transcribe", params)
        assert reply.error_code == "model_load_failed"
        assert str(path) in reply.final["error"]["message"]
    assert engine.call("ping").result


def test_audio_too_long(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    params = {
        "audio_path": str(testdata / "en" / "whisper_jfk.flac"),  # 11 s
        "model": model,
        "language_mode": "fixed",
        "language": "en",
        "max_duration_s": 5,
    }
    assert engine.call("transcribe", params).error_code == "audio_too_long"


@pytest.mark.parametrize(
    "line, expect_id",
    [
        (b"this is not json\n", None),
        (b'{"id": "x1", "op": "transcribe"\n', None),  # truncated object
        (b'["id", "op"]\n', None),
        (b'{"id": "x2", "op": "no_such_op", "params": {}}\n', "x2"),
        (b'{"id": "x3", "op": "transcribe", "params": {"audio_path": "/a.wav"}}\n', "x3"),  # model missing
        (b'{"id": "x4", "op": "probe", "params": {"audio_path": 42}}\n', "x4"),
    ],
)
def test_bad_request(engine: Engine, line: bytes, expect_id: str | None) -> None:
    engine.send_raw(line)
    reply = engine.read_line()
    assert reply["id"] == expect_id
    assert reply["error"]["code"] == "bad_request", reply
    assert engine.call("ping").result


def test_bad_language_fields(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    base = {"audio_path": str(testdata / "en" / "whisper_jfk.flac"), "model": model}
    for extra in (
        {"language_mode": "fixed"},  # language missing
        {"language_mode": "sometimes"},
        {"language_mode": "detect", "language_candidates": ["ko", "xx"]},
    ):
        reply = engine.call("transcribe", {**base, **extra})
        assert reply.error_code == "bad_request", extra
    # Nothing above may have written anything but protocol lines; a final ping proves the stream is in sync.
    assert json.dumps(engine.call("ping").result)
