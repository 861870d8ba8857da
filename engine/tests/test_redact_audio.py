"""The `redact_audio` op (docs/engine.md): spans silenced or beeped, everything else kept, one channel per track."""

from __future__ import annotations

import wave
from pathlib import Path

import av
import numpy as np
import pytest
from conftest import Engine

from sori_engine import redact_audio, vad
from sori_engine.protocol import EngineError
from sori_eval.wav import write_wav

SR = 16000


def _tone(seconds: float, hz: float, level: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return (level * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def _read(path: Path) -> tuple[int, np.ndarray]:
    with wave.open(str(path), "rb") as w:
        assert (w.getframerate(), w.getsampwidth(), w.getcomptype()) == (SR, 2, "NONE")
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").reshape(-1, w.getnchannels())
        return w.getnchannels(), data.astype(np.float32) / 32768.0


def _stereo(path: Path, left: np.ndarray, right: np.ndarray, rate: int = 44100) -> Path:
    """A stereo WAV at another rate, written with PyAV (so the op's decode resamples as the transcriber's does)."""
    with av.open(str(path), "w") as out:
        stream = out.add_stream("pcm_s16le", rate=SR)
        stream.layout = "stereo"  # type: ignore[union-attr]
        frame = av.AudioFrame.from_ndarray(
            (np.stack([left, right]) * 32767).astype(np.int16).T.reshape(1, -1), format="s16", layout="stereo"
        )
        frame.sample_rate = SR
        for packet in stream.encode(frame):  # type: ignore[union-attr]
            out.mux(packet)
        for packet in stream.encode(None):  # type: ignore[union-attr]
            out.mux(packet)
    return path


def test_silence_covers_the_spans_and_keeps_the_rest(tmp_path: Path) -> None:
    src = write_wav(tmp_path / "in.wav", _tone(3.0, 300))
    out = tmp_path / "out.wav"
    params = redact_audio.parse_redact_audio(
        {"audio_path": str(src), "out_path": str(out), "tracks": [{"channel": None, "spans": [[1.0, 1.5], [2.5, 9]]}]}
    )
    assert redact_audio.redact_audio(params) == {"duration_s": 3.0, "channels": 1, "covered_s": 1.0}
    channels, got = _read(out)
    assert channels == 1 and got.shape[0] == 3 * SR
    x = got[:, 0]
    assert np.all(x[SR : int(1.5 * SR)] == 0) and np.all(x[int(2.5 * SR) :] == 0)
    kept = np.r_[0:SR, int(1.5 * SR) : int(2.5 * SR)]
    assert np.max(np.abs(x[kept] - _tone(3.0, 300)[kept])) < 2 / 32768  # the rest is the input, sample for sample


def test_beep_is_a_tone_in_the_span(tmp_path: Path) -> None:
    src = write_wav(tmp_path / "in.wav", _tone(2.0, 300))
    out = tmp_path / "out.wav"
    params = redact_audio.parse_redact_audio(
        {"audio_path": str(src), "out_path": str(out), "mode": "beep", "tracks": [{"spans": [[0.5, 1.5]]}]}
    )
    redact_audio.redact_audio(params)
    x = _read(out)[1][:, 0]
    span = x[int(0.5 * SR) : int(1.5 * SR)]
    spectrum = np.abs(np.fft.rfft(span))
    assert abs(np.argmax(spectrum) * SR / span.shape[0] - redact_audio.BEEP_HZ) < 5  # the tone, not the speech
    assert 0.2 < np.max(np.abs(span)) <= redact_audio.BEEP_LEVEL + 1e-3


def test_each_channel_at_its_own_spans(tmp_path: Path) -> None:
    left, right = _tone(2.0, 300), _tone(2.0, 500)
    src = _stereo(tmp_path / "in.wav", left, right)
    out = tmp_path / "out.wav"
    tracks = [{"channel": 0, "spans": [[0.0, 0.5]]}, {"channel": 1, "spans": [[1.0, 1.5]]}]
    redact_audio.redact_audio(
        redact_audio.parse_redact_audio({"audio_path": str(src), "out_path": str(out), "tracks": tracks})
    )
    channels, got = _read(out)
    assert channels == 2 and abs(got.shape[0] - 2 * SR) < 10
    assert np.all(got[: SR // 2, 0] == 0) and np.max(np.abs(got[SR : int(1.5 * SR), 0])) > 0.4
    assert np.all(got[SR : int(1.5 * SR), 1] == 0) and np.max(np.abs(got[: SR // 2, 1])) > 0.4


def test_a_failed_copy_leaves_no_file_and_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not audio at all" * 100)
    out = tmp_path / "out.wav"
    with pytest.raises(EngineError) as e:
        redact_audio.redact_audio(
            redact_audio.parse_redact_audio({"audio_path": str(bad), "out_path": str(out), "tracks": [{"spans": []}]})
        )
    assert e.value.code == "audio_decode_failed" and not out.exists()
    src = write_wav(tmp_path / "in.wav", _tone(1.0, 300))
    out.write_bytes(b"someone else's")
    with pytest.raises(FileExistsError):
        redact_audio.redact_audio(
            redact_audio.parse_redact_audio({"audio_path": str(src), "out_path": str(out), "tracks": [{"spans": []}]})
        )
    assert out.read_bytes() == b"someone else's"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"out_path": "/tmp/x.wav", "tracks": [{"spans": []}]}, "audio_path must be an absolute path"),
        ({"audio_path": "/a.wav", "out_path": "rel.wav", "tracks": [{"spans": []}]}, "out_path must be an absolute"),
        ({"audio_path": "/a.wav", "out_path": "/b.wav", "mode": "bleep", "tracks": [{"spans": []}]}, "mode must be"),
        ({"audio_path": "/a.wav", "out_path": "/b.wav", "tracks": []}, "tracks must be a list of 1 to 8"),
        ({"audio_path": "/a.wav", "out_path": "/b.wav", "tracks": [{"spans": [[2, 1]]}]}, "spans must be"),
        ({"audio_path": "/a.wav", "out_path": "/b.wav", "tracks": [{"channel": -1, "spans": []}]}, "channel must be"),
    ],
)
def test_bad_params_are_bad_requests(params: dict[str, object], message: str) -> None:
    with pytest.raises(EngineError) as e:
        redact_audio.parse_redact_audio(params)
    assert e.value.code == "bad_request" and message in e.value.message


def test_over_the_protocol(engine: Engine, tmp_path: Path) -> None:
    src = write_wav(tmp_path / "in.wav", _tone(1.0, 300))
    out = tmp_path / "out.wav"
    reply = engine.call(
        "redact_audio", {"audio_path": str(src), "out_path": str(out), "tracks": [{"spans": [[0.2, 0.4]]}]}
    )
    assert reply.result == {"duration_s": 1.0, "channels": 1, "covered_s": 0.2}
    assert np.all(_read(out)[1][int(0.2 * SR) : int(0.4 * SR)] == 0)
    assert engine.call("redact_audio", {"audio_path": str(src)}).error_code == "bad_request"


# ------------------------------------------------------------------------------------------------ unvouched speech
def _probs(*speech: tuple[float, float], total: float = 20.0) -> np.ndarray:
    """A speech map (Silero's per-frame probabilities) with speech in the given stretches."""
    probs = np.full(int(total / vad.FRAME_S), 0.02, dtype=np.float32)
    for a, b in speech:
        probs[int(a / vad.FRAME_S) : int(b / vad.FRAME_S)] = 0.9
    return probs


def test_speech_the_words_do_not_cover_beside_a_redacted_span_is_covered() -> None:
    # "The card number is 5454," then three more groups the text lost (each 1.4 s, 0.5 s apart), then words again.
    o = redact_audio.Unvouched()
    groups = [(6.4 + 1.9 * i, 7.8 + 1.9 * i) for i in range(4)]
    probs = _probs((0.5, 6.0), *groups, (15.0, 17.0))
    words = ((0.5, 6.0), groups[0], (15.0, 17.0))
    left = redact_audio.unvouched(probs, words, o)
    stretches = redact_audio.speech_runs(left, o)
    covered = redact_audio.with_unvouched(((6.15, 8.05),), stretches, left, o)
    assert len(covered) == 1 and covered[0][0] == 6.15  # the span and the lost groups, chained, as one
    assert covered[0][1] >= groups[-1][1]
    assert all(b <= 15.0 - o.word_edge_s for _a, b in covered)  # the words after them are not touched
    # Without a redacted span beside it, speech the text lost stays as it is: the copy only hides redacted data.
    assert redact_audio.with_unvouched(((1.0, 2.0),), stretches, left, o) == ((1.0, 2.0),)


def test_a_breath_or_a_far_stretch_is_not_joined() -> None:
    o = redact_audio.Unvouched()
    probs = _probs((3.0, 3.064), (9.0, 10.0))  # two frames beside the span; a stretch 5 s after it
    left = redact_audio.unvouched(probs, (), o)
    assert redact_audio.with_unvouched(((2.0, 2.9),), redact_audio.speech_runs(left, o), left, o) == ((2.0, 2.9),)


def test_the_copy_covers_speech_its_words_do_not_vouch_for(tmp_path: Path, testdata: Path) -> None:
    # JFK, as if the transcript had kept only its first words (speech 0.3-2.2 s) and a redacted span at their end:
    # the speech after it (from 3.3 s, in stretches 0.6-1.1 s apart), which no word covers, is silenced too; with
    # every word given, only the span is.
    src = testdata / "en" / "whisper_jfk.flac"
    for transcribed, longer in (([[0.3, 2.4]], True), ([[0.0, 11.0]], False)):
        out = tmp_path / f"out-{longer}.wav"
        params = {"audio_path": str(src), "out_path": str(out), "mode": "silence"}
        track = {"channel": None, "spans": [[1.9, 2.4]], "transcribed": transcribed}
        result = redact_audio.redact_audio(redact_audio.parse_redact_audio({**params, "tracks": [track]}))
        speech_after = float(vad.probabilities(_read(out)[1][:, 0])[int(2.7 / vad.FRAME_S) :].max())
        if longer:
            assert result["covered_s"] > 4.0 and speech_after < 0.3, result
        else:
            assert result["covered_s"] == pytest.approx(0.5) and speech_after > 0.9, result
