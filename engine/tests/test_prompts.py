"""The text before as the decoder's prompt across a cut inside speech (transcriber.SEAM_PROMPT, off by default).

sori's chunks are decoded without the previous text, which keeps a hallucination from spreading and keeps
unrelated speech apart. A chunk that starts where the VAD cut a long region (its first region touches the last of
the chunk before) is the same speech going on: it is decoded after that chunk with its text as the prompt, as the
plain script's seek loop would (docs/performance.md, "The text before across a cut": measured, off by default, as
it cost ko laid out as one recording a sentence). These tests watch the real decode calls (a spy that passes every
call on to the real one) on a real call recording.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import transcripts

from sori_engine import audio as audio_io
from sori_engine import models, transcriber
from sori_engine.protocol import ModelConfig, TranscribeParams

SR = audio_io.SAMPLE_RATE
CALL = "en/earnings22_1_4482311_3_62.wav"  # 59 s of one speaker, hardly a pause


def _req(model_dir: Path, prompt: str | None = None) -> TranscribeParams:
    cfg = ModelConfig(path=str(model_dir), device="cpu", compute_type="int8", beam_size=1)
    return TranscribeParams(audio_path="unused", model=cfg, language_mode="fixed", language="en", initial_prompt=prompt)


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str | None, bool]]:
    """Each `_decode_once` call as (number of chunks, its prompt, rests), passed on to the real one."""
    calls: list[tuple[int, str | None, bool]] = []
    real = transcriber._decode_once

    def spy(model: Any, audio: Any, chunks: Any, language: Any, req: Any, *rest: Any) -> Any:
        calls.append((len(chunks), req.initial_prompt, bool(rest[1])))
        return real(model, audio, chunks, language, req, *rest)

    monkeypatch.setattr(transcriber, "_decode_once", spy)
    monkeypatch.setattr(transcriber, "SEAM_PROMPT", True)
    return calls


def test_the_prompt_keeps_the_clients_and_the_last_characters_of_the_text() -> None:
    req = TranscribeParams("x", ModelConfig(path="m"), "fixed", "en", initial_prompt="TeamViewer, churn")
    said = "x" * 150 + " and that is " + "y" * 100
    prompt = transcriber._prompted(req, said).initial_prompt
    assert prompt == "TeamViewer, churn " + said[-transcriber.PROMPT_CHARS :]
    plain = TranscribeParams("x", ModelConfig(path="m"), "fixed", "en")
    assert transcriber._prompted(plain, "one two").initial_prompt == "one two"
    assert transcriber._prompted(plain, "").initial_prompt is None


def test_a_chunk_after_a_cut_inside_speech_is_decoded_after_it_with_its_text(
    model_dir: Path, testdata: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    audio = audio_io.decode(str(testdata / CALL))
    cut = int(29.0 * SR)
    touching = [[{"start": 0, "end": cut}], [{"start": cut, "end": audio.shape[0]}]]
    req = _req(model_dir)
    model = models.get_model(req.model)
    calls = _spy(monkeypatch)

    segments = transcriber._first_pass(model, audio, touching, "en", req, lambda _s: None, None)

    assert [(n, rests) for n, _p, rests in calls] == [(1, False), (1, False)]  # one after the other
    assert calls[0][1] is None
    first = transcriber._text_of(segments[0])
    assert first and calls[1][1] == first[-transcriber.PROMPT_CHARS :]
    text = " ".join(fw.text for segs in segments for fw in segs)
    assert transcripts.cer(text, transcripts.reference(testdata, CALL)) < 0.25
    starts = [fw.start for segs in segments for fw in segs]
    assert starts == sorted(starts) and starts[-1] >= 29.0  # the second chunk's text in its own time


def test_chunks_apart_or_with_the_switch_off_are_decoded_together_without_a_prompt(
    model_dir: Path, testdata: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    audio = audio_io.decode(str(testdata / CALL))
    apart = [[{"start": 0, "end": 20 * SR}], [{"start": 21 * SR, "end": 40 * SR}]]  # a second between them
    req = _req(model_dir)
    calls = _spy(monkeypatch)
    transcriber._first_pass(models.get_model(req.model), audio, apart, "en", req, lambda _s: None, None)
    assert calls == [(2, None, False)]

    calls.clear()
    monkeypatch.setattr(transcriber, "SEAM_PROMPT", False)
    touching = [[{"start": 0, "end": 20 * SR}], [{"start": 20 * SR, "end": 40 * SR}]]
    transcriber._first_pass(models.get_model(req.model), audio, touching, "en", req, lambda _s: None, None)
    assert calls == [(2, None, False)]
