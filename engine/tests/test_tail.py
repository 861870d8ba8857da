"""Regression: the last words of a batched chunk must not be dropped.

On the 60 s earnings-call clip, batched beam 5 once lost "... over 17 billion Euros". A batched pass can lose a
chunk's last words in two ways that WhisperModel.transcribe's seek loop covers: faster-whisper's
_split_segments_by_timestamps leaves out an unfinished last segment (text after the last pair of timestamp tokens,
no closing timestamp), and the decoder may stop early, before the chunk's last words. model.faster_whisper_pipeline.KeepTailPipeline keeps
the first (tested here at token level); decode.rounds.decode decodes on after the second (on the real model:
test_decode_regressions.py). See docs/audio.md.
"""

from __future__ import annotations

from pathlib import Path

from faster_whisper.tokenizer import Tokenizer

from sori_engine import models
from sori_engine.model import faster_whisper_pipeline as fw
from sori_engine.protocol import ModelConfig


def test_unfinished_last_segment_is_kept(model_dir: Path) -> None:
    """Token level, no decoding: what upstream drops and what the override keeps."""
    model = models.get_model(ModelConfig(path=str(model_dir), device="cpu", compute_type="int8", beam_size=1)).whisper  # type: ignore[attr-defined]
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


def test_the_copied_forward_is_pinned_to_the_installed_faster_whisper() -> None:
    """The backend's copy imports only on the faster-whisper release its copy of forward() came from."""
    import faster_whisper

    assert faster_whisper.__version__ == fw.FASTER_WHISPER_VERSION
