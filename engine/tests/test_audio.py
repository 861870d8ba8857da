"""The audio front end: formats, one channel of many, bad audio, and streaming in windows (docs/audio.md).

Inputs are built at test time from the shared audio by test/audio/make_fixtures.py (PyAV, no system ffmpeg).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Engine
from transcripts import cer

from sori_engine import audio, transcriber
from sori_engine.decode.windows import windows
from sori_engine.decode_options import DEFAULT
from sori_engine.protocol import ModelConfig, TranscribeParams
from sori_eval.wav import write_wav

SR = audio.SAMPLE_RATE


# The references of the fixtures' two sentences (test/audio/make_fixtures.py): channel 0 of stereo.wav speaks the
# first, channel 1 and every single-sentence fixture the second.
FIRST = "어제 임원 회의에서 퇴근 시간을 정확하게 지키자는 이야기가 있었습니다."
SECOND = "그는 이리저리 피하면서 길 한 옆으로 걸어갔다."


def text_of(result: dict[str, Any]) -> str:
    return "".join(s["text"] for s in result["segments"])


def call(engine: Engine, model: dict[str, Any], path: str, **params: Any) -> Any:
    return engine.call(
        "transcribe", {"audio_path": path, "model": model, "language_mode": "fixed", "language": "ko", **params}
    )


FORMATS = [
    "wav_u8_8k_mono.wav", "wav_s16_16k_mono.wav", "wav_s16_11025_mono.wav", "wav_s24_44k1_stereo.wav",
    "wav_s32_48k_mono.wav", "wav_f32_22050_stereo.wav", "wav_f64_32k_mono.wav", "wav_s16_16k_6ch.wav",
    "flac_s16_48k_stereo.flac", "mp3_44k1_mono.mp3", "m4a_aac_44k1_stereo.m4a", "amr_nb_8k.amr", "amr_wb_16k.awb",
    "mp4_aac_h264_video.mp4",
]  # fmt: skip


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_decodes_to_the_same_audio(fixtures: dict[str, str], name: str) -> None:
    reference = audio.decode(fixtures["reference"])
    decoded = audio.decode(fixtures[name])
    # Codec delay and padding add or drop a few tens of milliseconds; the length is otherwise the same.
    assert abs(decoded.shape[0] - reference.shape[0]) < 0.25 * SR, (decoded.shape, reference.shape)
    assert decoded.dtype == np.float32 and np.abs(decoded).max() <= 1.0
    assert np.sqrt(np.mean(decoded**2)) == pytest.approx(np.sqrt(np.mean(reference**2)), rel=0.35)


def test_probe_reports_channels(engine: Engine, fixtures: dict[str, str]) -> None:
    assert engine.call("probe", {"audio_path": fixtures["stereo.wav"]}).result["channels"] == 2
    assert engine.call("probe", {"audio_path": fixtures["wav_s16_16k_6ch.wav"]}).result["channels"] == 6


def test_one_channel_is_decoded_alone(fixtures: dict[str, str]) -> None:
    b_start = int(float(fixtures["stereo_b_start_s"]) * SR)
    left = audio.decode(fixtures["stereo.wav"], channel=0)
    right = audio.decode(fixtures["stereo.wav"], channel=1)
    assert left.shape == right.shape
    assert np.abs(left[b_start:]).max() == 0.0 and np.abs(left[:b_start]).max() > 0.1
    assert np.abs(right[:b_start]).max() == 0.0 and np.abs(right[b_start:]).max() > 0.1
    sixth = audio.decode(fixtures["wav_s16_16k_6ch.wav"], channel=5)
    assert np.abs(sixth).max() > 0.1


def test_transcribe_per_channel(engine: Engine, model: dict[str, Any], fixtures: dict[str, str]) -> None:
    b_start = float(fixtures["stereo_b_start_s"])
    left = call(engine, model, fixtures["stereo.wav"], channel=0).result
    right = call(engine, model, fixtures["stereo.wav"], channel=1).result
    assert left["segments"] and right["segments"]
    assert all(s["end"] <= b_start for s in left["segments"]), left
    assert all(s["start"] >= b_start - 0.5 for s in right["segments"]), right
    # Each channel is its own clip's sentence (fixtures: channel 0 speaks ko/...a00053, channel 1 the leopard clip).
    assert cer(text_of(left), FIRST) < 0.5 < cer(text_of(left), SECOND), text_of(left)
    assert cer(text_of(right), SECOND) < 0.5 < cer(text_of(right), FIRST), text_of(right)
    assert call(engine, model, fixtures["stereo.wav"], channel=2).error_code == "bad_request"
    assert call(engine, model, fixtures["stereo.wav"], channel=-1).error_code == "bad_request"


@pytest.mark.parametrize(
    "name, code",
    [
        ("bad/zero.wav", "audio_decode_failed"),
        ("bad/random.mp3", "audio_decode_failed"),
        ("bad/video_only.mp4", "audio_decode_failed"),
        ("bad/zero_seconds.wav", "audio_decode_failed"),
    ],
)
def test_bad_audio_fails_with_a_code(
    engine: Engine, model: dict[str, Any], fixtures: dict[str, str], name: str, code: str
) -> None:
    assert call(engine, model, fixtures[name]).error_code == code
    assert engine.call("ping").result  # still serving


def test_wav_with_an_unknown_codec_tag_fails_with_a_code(engine: Engine, model: dict[str, Any], tmp_path: Path) -> None:
    """FFmpeg opens such a stream with no decoder (codec_context None): that used to crash the engine with an
    AttributeError, three times, and the job failed E500 with the Python error in its message."""
    import struct

    data = b"\0" * 32000
    fmt = struct.pack("<HHIIHH", 0x1234, 1, 16000, 32000, 2, 16)
    body = b"WAVEfmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data
    path = tmp_path / "tag1234.wav"
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    assert call(engine, model, str(path)).error_code == "audio_decode_failed"
    assert engine.call("probe", {"audio_path": str(path)}).error_code == "audio_decode_failed"
    assert engine.call("ping").result  # still serving


def test_truncated_file_keeps_its_good_part(engine: Engine, model: dict[str, Any], fixtures: dict[str, str]) -> None:
    result = call(engine, model, fixtures["bad/truncated.mp3"]).result
    assert 1.5 < result["duration_s"] < 2.5  # half of the 3.9 s sentence
    assert all(s["end"] <= result["duration_s"] for s in result["segments"])


def test_header_claiming_hours_is_not_believed(engine: Engine, model: dict[str, Any], fixtures: dict[str, str]) -> None:
    result = call(engine, model, fixtures["bad/header_lies.wav"], max_duration_s=60).result
    assert result["duration_s"] == pytest.approx(3.888, abs=0.01)
    assert cer(text_of(result), SECOND) < 0.5, text_of(result)


def test_silence_and_noise_complete(engine: Engine, model: dict[str, Any], fixtures: dict[str, str]) -> None:
    silence = call(engine, model, fixtures["bad/silence.wav"]).result
    assert silence["segments"] == [] and silence["duration_s"] == 10.0
    noise = call(engine, model, fixtures["bad/noise.wav"]).result
    assert noise["duration_s"] == 10.0  # whatever the model hears in it, the request completes
    detect = call(engine, model, fixtures["bad/silence.wav"], language_mode="detect", language=None).result
    assert detect["segments"] == [] and detect["language"] in detect["language_probs"]


def long_input(testdata: Path, tmp_path: Path) -> tuple[Path, int]:
    """About 2.5 minutes: the Korean clips end to end with 1-3 s of silence between them."""
    clips = sorted((testdata / "ko").glob("*.wav"))
    parts = []
    for i, clip in enumerate(clips):
        parts += [audio.decode(str(clip)), np.zeros(SR * (1 + i % 3), dtype=np.float32)]
    samples = np.concatenate(parts)
    return write_wav(tmp_path / "long.wav", samples), samples.shape[0]


def test_windows_cover_the_file_and_never_cut_speech(testdata: Path, tmp_path: Path) -> None:
    path, total = long_input(testdata, tmp_path)
    whole = [dict(r) for r in next(windows(audio.stream(str(path)), True, 10_000, DEFAULT)).regions]
    parts = list(windows(audio.stream(str(path)), True, 40, DEFAULT))
    assert len(parts) >= 3
    position = 0
    found = []
    for w in parts:
        assert w.offset == position  # contiguous, no gap, no overlap
        position += w.audio.shape[0]
        for r in w.regions:
            assert 0 <= r["start"] < r["end"] <= w.audio.shape[0]
            found.append((w.offset + r["start"], w.offset + r["end"]))
    assert position == total
    assert found == sorted(found)
    # Every region of a whole-file VAD pass lies inside one region of the windowed pass: none was cut in two.
    for r in whole:
        middle = (r["start"] + r["end"]) // 2
        assert any(a <= middle < b for a, b in found), r
    assert abs(len(found) - len(whole)) <= 2


def test_streaming_transcription_in_small_windows(
    testdata: Path, tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, total = long_input(testdata, tmp_path)
    params = TranscribeParams(
        audio_path=str(path),
        model=ModelConfig(path=str(model_dir), device="cpu", compute_type="int8", beam_size=1),
        language_mode="fixed",
        language="ko",
    )
    monkeypatch.setenv("SORI_ENGINE_WINDOW_S", "60")  # the least: three windows
    fractions: list[float] = []
    result = transcriber.transcribe(params, fractions.append, progress_interval_s=0.0)
    assert result.duration_s == pytest.approx(total / SR)
    starts = [s.start for s in result.segments]
    assert starts == sorted(starts) and all(s.end <= result.duration_s for s in result.segments)
    # Speech from the start, the middle and the end of the file was transcribed.
    assert result.segments[0].start < 5 and result.segments[-1].end > result.duration_s - 10
    assert len(result.segments) >= 20
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0, abs=0.01)
