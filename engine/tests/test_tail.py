"""Regression: the last words of a batched chunk must not be dropped.

On the 60 s earnings-call clip, batched beam 5 once lost "... over 17 billion Euros". A batched pass can lose a
chunk's last words in two ways that WhisperModel.transcribe's seek loop covers: faster-whisper's
_split_segments_by_timestamps leaves out an unfinished last segment (text after the last pair of timestamp tokens,
no closing timestamp), and the decoder may stop early, before the chunk's last words. decode.fw.KeepTailPipeline keeps
the first (tested here at token level); decode.rounds.decode decodes on after the second. See docs/audio.md.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import transcripts
from conftest import Engine
from transcripts import missing_tail, reference

from sori_engine import audio as audio_io
from sori_engine import models
from sori_engine.decode import fw, rounds, verdicts
from sori_engine.decode.fw import Prompting, Tokenizer
from sori_engine.decode.options import DEFAULT, DecodeOptions
from sori_engine.protocol import ModelConfig

SR = audio_io.SAMPLE_RATE
JFK = "en/whisper_jfk.flac"  # 11 s
CLIP = "en/earnings22_1_4482311_3_62.wav"  # its reference ends "... from recurring operations over 17 billion Euros."


def words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"[^\w\s]", " ", text).split()


def test_unfinished_last_segment_is_kept(model_dir: Path) -> None:
    """Token level, no decoding: what upstream drops and what the override keeps."""
    model = models.get_model(ModelConfig(path=str(model_dir), device="cpu", compute_type="int8", beam_size=1))
    tok = Tokenizer(model.hf_tokenizer, True, task="transcribe", language="en")

    def ts(t: float) -> int:
        return tok.timestamp_begin + round(t / model.time_precision)

    # "<|0.00|> revenue ... billion<|4.00|><|4.00|> profit ... Euros" then end-of-text: the decoder stopped inside
    # the last segment because the clip's audio ended there.
    tokens = [
        ts(0.0),
        *tok.encode(" Revenue reached almost 64 billion."),
        ts(4.0),
        ts(4.0),
        *tok.encode(" Profit over 17 billion Euros."),
    ]
    upstream = fw.split_by_timestamps(model, tok, tokens, 10.0, 700, 6.5)
    assert "Euros" not in " ".join(tok.decode(s["tokens"]) for s in upstream)  # why the override exists

    kept = fw.split_keeping_tail(model, tok, tokens, 10.0, 700, 6.5)
    assert [tok.decode(s["tokens"]).strip() for s in kept] == [
        "Revenue reached almost 64 billion.",
        "Profit over 17 billion Euros.",
    ]
    assert (kept[-1]["start"], kept[-1]["end"]) == (14.0, 16.5)  # from its opening timestamp to the clip's end

    # A complete ending (closing timestamp) is left exactly as upstream splits it.
    complete = tokens + [ts(6.0)]
    upstream = fw.split_by_timestamps(model, tok, complete, 10.0, 700, 6.5)
    assert fw.split_keeping_tail(model, tok, complete, 10.0, 700, 6.5) == upstream


def test_clip_end_words_with_beam_5(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    """The real model on the clip, with the sommers decoding (beam 5, VAD): the reference's last words are there."""
    reply = engine.call(
        "transcribe",
        {
            "audio_path": str(testdata / CLIP),
            "model": {**model, "beam_size": 5},
            "language_mode": "fixed",
            "language": "en",
        },
    )
    segments = reply.result["segments"]
    text = " ".join(s["text"] for s in segments)
    # The reference's last words are written: at most 3 of its last characters uncovered (dropping "Euros" leaves 5).
    assert missing_tail(text, reference(testdata, CLIP)) <= 3, words(text)[-12:]
    assert segments[-1]["end"] > 55.0  # the last segment reaches the end of the speech (it ends at 59.6 s)


def test_the_copied_forward_is_pinned_to_the_installed_faster_whisper() -> None:
    """decode.fw imports only on the faster-whisper release its copy of forward() came from."""
    import faster_whisper

    assert faster_whisper.__version__ == fw.FASTER_WHISPER_VERSION


def test_clip_by_clip_encoder_gives_the_batched_encoder_output(model_dir: Path, testdata: Path) -> None:
    """On CPU the pipeline encodes a batch's clips one at a time (cheaper per clip): the decoder gets the batched
    encoder's output, in the same order, to the rounding another kernel path may give (equal here bit for bit)."""
    model = models.get_model(ModelConfig(path=str(model_dir), device="cpu", compute_type="int8", beam_size=1))
    pipeline = fw.KeepTailPipeline(model)
    assert isinstance(pipeline.model, fw.ClipByClipEncoder)
    assert pipeline.model.frames_per_second == model.frames_per_second  # the rest is the model's
    x = audio_io.decode(str(testdata / CLIP))
    feats = np.stack([model.feature_extractor(x[i * SR : (i + 12) * SR])[:, :1000] for i in (0, 20, 40)])
    batched = np.asarray(model.encode(feats))
    one_by_one = np.asarray(pipeline.model.encode(feats))
    assert one_by_one.shape == batched.shape == (3, 500, 512)
    assert np.abs(one_by_one - batched).max() <= 0.01 * np.abs(batched).max()


def test_a_rest_decoded_to_its_token_cap_is_dropped(testdata: Path, model: dict[str, Any]) -> None:
    """A rest (the speech after an early stop) is decoded to at most `rest_tokens_per_s` tokens per second and
    `rest_tokens_min` more; one that reaches the cap is a repetition loop and gives no text. JFK (11 s, about 30
    tokens) stands in for a rest: under a cap (9 tokens per second: 109) it is kept, with the cap lowered to 5 tokens
    (its decode stopped there) it is dropped."""
    jfk = audio_io.decode(str(testdata / JFK))
    chunks = [[{"start": 0, "end": jfk.shape[0]}]]
    wm = models.get_model(ModelConfig(**model))

    def rest_text(options: DecodeOptions) -> str:
        settings = rounds.Settings(wm, Prompting("en", model["beam_size"], False), options)
        out = rounds.decode_once(settings, [rounds.Job(jfk, chunks)], [rounds.Item(0, chunks[0])], True)
        return " ".join(fw.text for fw in out[0])

    nine = replace(DEFAULT, rest_tokens_per_s=9)
    assert verdicts.rest_tokens(11.0, wm.max_length, nine) == 109
    assert transcripts.cer(rest_text(nine), transcripts.reference(testdata, JFK)) <= 0.3
    assert rest_text(replace(DEFAULT, rest_tokens_per_s=0, rest_tokens_min=5)) == ""
