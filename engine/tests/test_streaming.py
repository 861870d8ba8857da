"""Streaming sessions (streaming.py): end-pointing and decoding over the real model, and refused requests."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest

from sori_engine import streaming
from sori_engine.decode_options import DEFAULT
from sori_engine.pcm import SAMPLE_RATE
from sori_engine.protocol import EngineError
from sori_engine.vad import FRAME

CLIP = "ko/deeply_anechoic_sub100120a00053.wav"  # 5.2 s, one sentence


def pcm8k(path: Path, silence_s: float = 1.5) -> bytes:
    """The clip as 8 kHz s16le (a phone copy), with trailing silence so the end-pointer fires before the end."""
    out = []
    resampler = av.AudioResampler(format="s16", layout="mono", rate=8000)
    with av.open(str(path)) as c:
        for frame in c.decode(audio=0):
            out.extend(f.to_ndarray()[0] for f in resampler.resample(frame))
    out.extend(f.to_ndarray()[0] for f in resampler.resample(None))
    audio = np.concatenate(out + [np.zeros(int(8000 * silence_s), dtype=np.int16)]).astype("<i2")
    return audio.tobytes()


def open_session(sid: str, model: dict[str, Any], **extra: Any) -> None:
    params = {
        "session": sid,
        "sample_rate": 8000,
        "epd_time": 0.5,
        "decode": {"model": {**model, "vad": False}, "language_mode": "fixed", "language": "ko"},
    }
    streaming.open_session({**params, **extra})


def feed(sid: str, pcm: bytes, **flags: bool) -> dict[str, Any]:
    return streaming.feed({"session": sid, "pcm": base64.b64encode(pcm).decode(), **flags})


def test_a_stream_gives_interims_then_one_final_before_its_end(testdata: Path, model: dict[str, Any]) -> None:
    pcm = pcm8k(testdata / CLIP)
    open_session("s1", model)
    events: list[tuple[float, dict[str, Any]]] = []
    step = 8000  # 0.5 s of 8 kHz s16
    for i in range(0, len(pcm), step):
        r = feed("s1", pcm[i : i + step], interim=True)
        events.extend(((i + step) / 16000, e) for e in r["events"])
    finals = [(t, e) for t, e in events if e["final"]]
    interims = [e for _, e in events if not e["final"]]
    assert len(finals) == 1, events
    at, final = finals[0]
    text = " ".join(s["text"] for s in final["segments"])
    assert len(text) >= 10  # a sentence, whatever the CPU makes of it
    assert at < len(pcm) / 16000  # end-pointed within the trailing silence, before EOS
    assert 0 <= final["speech_start"] <= final["decided_at"] <= at + 1e-6
    assert interims and all(not e["final"] for e in interims)
    r = feed("s1", b"", finish=True)
    assert r["events"] == []  # nothing left after the end point
    with pytest.raises(EngineError):  # finish closed the session
        feed("s1", b"")


def test_finish_finalises_open_speech_and_silence_gives_nothing(testdata: Path, model: dict[str, Any]) -> None:
    pcm = pcm8k(testdata / CLIP, silence_s=0)
    open_session("s2", model)
    feed("s2", b"\0" * 16000 * 3)  # 3 s of silence: no speech, no events, the buffer stays short
    r = feed("s2", pcm[: len(pcm) // 2])
    assert [e for e in r["events"] if e["final"]] == []
    r = feed("s2", b"", finish=True)
    assert len(r["events"]) == 1 and r["events"][0]["final"]


def test_finish_closes_every_utterance_the_buffer_holds(testdata: Path, model: dict[str, Any]) -> None:
    # Two sentences with a pause longer than epd_time, sent in one frame together with EOS (a slow engine or a
    # client that sends in large blocks): each gets its final, none is dropped with the session.
    first = pcm8k(testdata / CLIP)
    open_session("s3", model)
    r = feed("s3", first + pcm8k(testdata / CLIP, silence_s=0), finish=True)  # the second ends at EOS, not a pause
    finals = [e for e in r["events"] if e["final"]]
    assert len(finals) == 2, r["events"]
    assert finals[0]["speech_start"] < len(first) / 16000 <= finals[1]["speech_start"] + 1e-6
    assert all(len(" ".join(s["text"] for s in e["segments"])) >= 10 for e in finals)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"sample_rate": 4000}, "sample_rate"),
        ({"epd_time": 0}, "epd_time"),
        ({"decode": {"language_mode": "detect"}}, "model"),
    ],
)
def test_bad_open_params_are_refused(model: dict[str, Any], params: dict[str, Any], message: str) -> None:
    with pytest.raises(EngineError, match=message):
        open_session("bad", model, **params)


def test_bad_audio_is_refused_and_the_session_survives(model: dict[str, Any]) -> None:
    open_session("s3", model)
    with pytest.raises(EngineError, match="16-bit"):
        feed("s3", b"\0\0\0")
    with pytest.raises(EngineError, match="base64"):
        streaming.feed({"session": "s3", "pcm": "not base64!"})
    assert feed("s3", b"\0\0")["events"] == []
    assert streaming.close_session({"session": "s3"}) == {"closed": True}
    with pytest.raises(EngineError, match="no open session"):
        feed("s3", b"")


def test_the_vad_of_a_stream_equals_one_pass_over_the_whole_recording(testdata: Path, model: dict[str, Any]) -> None:
    """The session carries Silero's state from step to step: 100 ms steps score every frame as one pass over the
    whole audio does (scored afresh per step, soft speech fell under the threshold and was cut out of finals)."""
    from sori_engine import vad

    params = streaming.parse_open(
        {"session": "v", "sample_rate": 8000, "decode": {"model": model, "language_mode": "fixed", "language": "ko"}}
    )
    stepped, whole = streaming.Session(params), streaming.Session(params)
    pcm = pcm8k(testdata / "ko/deeply_dancestudio_sub100110a00036.wav")
    for i in range(0, len(pcm), 1600):
        stepped.append(pcm[i : i + 1600], flush=False)
    whole.append(pcm, flush=False)
    one_pass = vad.probabilities(whole.audio)
    n = stepped.probs.size
    assert n > 100
    np.testing.assert_allclose(stepped.probs, one_pass[:n], atol=1e-4)


def test_a_final_keeps_the_pause_after_its_speech_for_the_next_lead_in(testdata: Path, model: dict[str, Any]) -> None:
    """After a final only the utterance's speech is forgotten; the pause after it stays in the buffer as the next
    utterance's lead-in (dropped with the final's padding, a next utterance soon after lost its first words)."""
    pcm = pcm8k(testdata / CLIP, silence_s=1.5)
    open_session("keep", model)
    s = streaming.session("keep")
    assert s is not None
    finals = []
    for i in range(0, len(pcm), 1600):
        finals += [e for e in feed("keep", pcm[i : i + 1600])["events"] if e["final"]]
        if finals:
            break
    assert len(finals) == 1
    speech_end = (
        finals[0]["end"] - DEFAULT.stream_pad_s
    )  # the final's audio ends stream_pad_s after its last speech frame
    kept_from = s.offset / SAMPLE_RATE
    assert kept_from <= speech_end + FRAME / SAMPLE_RATE + 1e-6
    assert s.audio.shape[0] / SAMPLE_RATE >= 0.4  # the pause the end point waited for (epd_time 0.5 s) is held


def test_a_final_judges_speech_by_the_sessions_probabilities(testdata: Path, model: dict[str, Any]) -> None:
    """transcribe_audio takes the session's speech probabilities for the hallucination stage's speech map: with
    all frames marked as non-speech every segment is removed as "on no speech", with all as speech none is."""
    from sori_engine import transcriber

    params = streaming.parse_open(
        {"session": "p", "sample_rate": 8000, "decode": {"model": model, "language_mode": "fixed", "language": "ko"}}
    )
    s = streaming.Session(params)
    s.append(pcm8k(testdata / CLIP, silence_s=0), flush=True)
    frames = -(-s.audio.shape[0] // FRAME)
    silent = transcriber.transcribe_audio(params.decode, s.audio, True, None, np.zeros(frames, np.float32))
    speech = transcriber.transcribe_audio(params.decode, s.audio, True, None, np.ones(frames, np.float32))
    assert silent.segments == []
    assert len(" ".join(seg.text for seg in speech.segments)) >= 10


def _finals(sid: str, pcm: bytes) -> tuple[list[tuple[int, dict[str, Any]]], list[int]]:
    """Feeds `pcm` in 0.1 s steps: each final with the number of final decodes its own step made, and the samples
    each final decode of the session decoded."""
    s = streaming.session(sid)
    assert s is not None
    out, decoded = [], []
    for i in range(0, len(pcm), 1600):
        before = s.final_decodes
        events = feed(sid, pcm[i : i + 1600])["events"]
        if s.final_decodes > before:
            decoded.append(s.last_decoded)
        out += [(s.final_decodes - before, e) for e in events if e["final"]]
    return out, decoded


def test_a_final_decoded_early_is_the_final(testdata: Path, model: dict[str, Any]) -> None:
    """Once the pause holds the final's padding (and is within stream_early_s of epd_time), the final is decoded; the end
    point then sends it without decoding, and it is the final the end point would have decoded."""
    pcm = pcm8k(testdata / CLIP, silence_s=2.0)
    open_session("early", model, epd_time=1.2)
    [(decoded_at_end_point, early)], decoded = _finals("early", pcm)
    assert decoded_at_end_point == 0 and len(decoded) == 1
    open_session("late", model, epd_time=1.2)
    late_session = streaming.session("late")
    assert late_session is not None
    late_session.early_finals = False
    [(decoded_at_end_point, late)], _decoded = _finals("late", pcm)
    assert decoded_at_end_point == 1
    assert early == late


def test_speech_after_an_early_final_voids_it(testdata: Path, model: dict[str, Any]) -> None:
    """The sentence twice with a pause that reaches the early final's start (epd_time 1.2 s, early from 1.0 s) but
    not the end point: the early final is dropped, and one final holds both sentences."""
    clip = pcm8k(testdata / CLIP, silence_s=0)
    open_session("resumed", model, epd_time=1.2)
    finals, calls = _finals("resumed", clip + b"\0" * int(16000 * 0.6) + clip + b"\0" * 32000)
    # Two decodes: the voided early final (one sentence), then the early final of both, which the end point sent.
    assert len(finals) == 1 and len(calls) == 2 and finals[0][0] == 0
    assert calls[1] > 1.8 * calls[0]  # samples decoded: both sentences, against one


def test_a_final_is_timed_from_its_end_point_not_from_the_end_of_a_large_step(
    testdata: Path, model: dict[str, Any]
) -> None:
    """The clip and 2 s of silence in one step: the final was decided by the audio up to its end point (its last
    speech frame and epd_time after it), not by the 2 s that came with it (the service's final latency)."""
    open_session("large", model)
    [final] = feed("large", pcm8k(testdata / CLIP, silence_s=2.0))["events"]
    speech_end = final["end"] - DEFAULT.stream_pad_s
    assert speech_end + 0.5 - 1e-6 <= final["decided_at"] <= speech_end + 0.5 + FRAME / SAMPLE_RATE + 1e-6


def test_an_early_final_waits_for_a_step_with_nothing_else_to_decode(testdata: Path, model: dict[str, Any]) -> None:
    """While another session's speech wants an interim, a paused session's final is not decoded early (the engine
    is busy: it would only put that work first); in the next step with nothing else, it is."""
    clip = pcm8k(testdata / CLIP, silence_s=0)
    open_session("paused", model, epd_time=1.2)
    open_session("talking", model, epd_time=1.2)
    feed("paused", clip)
    feed("talking", clip[:16000])  # its first second: the sentence has begun (its speech runs 0.35-5.0 s)
    s = streaming.session("paused")
    assert s is not None
    talk = iter(range(16000, len(clip), 1600))

    def both() -> dict[str, Any]:
        i = next(talk)
        items = [
            {"session": "paused", "pcm": base64.b64encode(b"\0" * 1600).decode()},
            {"session": "talking", "pcm": base64.b64encode(clip[i : i + 1600]).decode(), "interim": True},
        ]
        return streaming.step({"steps": items})

    def pause_s() -> float:
        span = s.speech_span()
        assert span is not None
        return s.pause_s(span[1])

    while pause_s() < streaming.early_from(s):
        both()
    assert s.final_decodes == 0  # in the early window, but the other session's interim came first
    assert both()["results"][1]["interim"] and s.final_decodes == 0 and pause_s() < 1.2
    assert feed("paused", b"")["events"] == []  # alone in its step: decoded early, before its end point
    assert s.final_decodes == 1
