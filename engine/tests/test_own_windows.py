"""Each clip of a batch in its own encoder window (decode.fw.encode_clip_by_clip with own_frames, docs/performance.md).

On CPU a short clip batched with a long one was encoded in the long one's window; now it is encoded in its own, and
the batch's window is filled after it with the encoder output of silence, so the batch still decodes together.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import transcripts

from sori_engine import audio as audio_io
from sori_engine import models
from sori_engine.decode import fw, rounds
from sori_engine.decode.fw import Prompting, WhisperModel
from sori_engine.decode.options import DEFAULT
from sori_engine.protocol import ModelConfig

SR = audio_io.SAMPLE_RATE
JFK = "en/whisper_jfk.flac"  # 11 s
CALL = "en/earnings22_1_4482311_3_62.wav"  # 60 s of speech


def _cpu_model(model_dir: Path) -> WhisperModel:
    return models.get_model(ModelConfig(path=str(model_dir), device="cpu", compute_type="int8", beam_size=1))


def _padded(model: WhisperModel, clips: list[np.ndarray], frames: int) -> np.ndarray:
    """The batch's features as KeepTailPipeline.forward gives them to the encoder: each clip's frames after its
    audio set to its log-mel of silence, the batch cut to `frames`."""
    full = model.feature_extractor.nb_max_frames
    feats = [model.feature_extractor(c)[:, :full] for c in clips]
    feats = np.stack([np.pad(f, ((0, 0), (0, full - f.shape[-1]))) for f in feats])
    meta = [{"duration": c.shape[0] / SR} for c in clips]
    return fw.silence_padded(feats, meta, frames, model.frames_per_second)


def test_a_short_clip_is_encoded_in_its_own_window_then_silence(model_dir: Path, testdata: Path) -> None:
    model = _cpu_model(model_dir)
    jfk = audio_io.decode(str(testdata / JFK))
    call = audio_io.decode(str(testdata / CALL))[: int(29.5 * SR)]
    feats = _padded(model, [jfk, call], 3000)
    own = [fw.encoder_frames([c.shape[0] / SR], 3000, model, 1.0, 10.0) for c in (jfk, call)]
    assert own == [1200, 3000]  # 11 s and the 1 s margin, in whole seconds; 29.5 s and the margin fill the window

    out = np.asarray(fw.encode_clip_by_clip(model, feats, own))

    assert out.shape == (2, 1500, 512)
    alone = np.asarray(model.encode(feats[:1, :, :1200]))
    assert np.array_equal(out[0, :600], alone[0])  # the clip's own window, as encoded alone
    silence = fw.silence_output(model, 80, float(feats[0, 0, -1]))
    assert np.array_equal(out[0, 600:], silence[0, 600:1500])  # then the silence's, at the same positions
    whole = np.asarray(model.encode(feats[1:]))
    assert np.abs(out[1] - whole[0]).max() <= 0.01 * np.abs(whole).max()  # the full clip: its window's output


def test_silence_outputs_are_computed_once_per_level_and_bounded(model_dir: Path) -> None:
    model = _cpu_model(model_dir)
    cache = fw.SilenceOutputs(levels=2)
    first = cache.get(model, 80, -0.71)
    assert cache.get(model, 80, -0.69) is first  # the same level, rounded to its step
    cache.get(model, 80, -0.5)
    cache.get(model, 80, -1.0)
    assert cache.held(model) == 2  # the least recently used level went


def test_a_batch_of_a_short_and_a_long_clip_decodes_both(model_dir: Path, testdata: Path) -> None:
    """Through the batched pass: JFK (11 s) and 28 s of the call in one batch, each in its own window, each clip's
    text within bounds of its reference (the words differ by CPU; the bound holds on any)."""
    jfk = audio_io.decode(str(testdata / JFK))
    call = audio_io.decode(str(testdata / CALL))
    gap = np.zeros(SR, dtype=np.float32)
    audio = np.concatenate([jfk, gap, call])
    chunks = [
        [{"start": 0, "end": jfk.shape[0]}],
        [{"start": jfk.shape[0] + SR, "end": jfk.shape[0] + SR + 28 * SR}],
    ]
    settings = rounds.Settings(_cpu_model(model_dir), Prompting("en", 1, False), DEFAULT)
    out = rounds.decode_once(settings, [rounds.Job(audio, chunks)], [rounds.Item(0, c) for c in chunks], False)
    jfk_text = " ".join(fw.text for fw in out[0])
    call_text = " ".join(fw.text.strip() for fw in out[1])
    assert transcripts.cer(jfk_text, transcripts.reference(testdata, JFK)) <= 0.15
    assert all(fw.end <= (jfk.shape[0] + 0.5 * SR) / SR for fw in out[0])  # nothing placed in the silence after it
    assert call_text.lower().startswith("we are gathered")
    assert len(transcripts.norm(call_text)) >= 120  # 28 s of slow speech (166 characters), not a few words then a stop
