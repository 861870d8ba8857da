"""Decoding options: one frozen record, presets per registry entry, overrides checked with the field named."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sori_engine import checkpoint
from sori_engine.decode_options import DEFAULT, PRESETS, check, with_overrides
from sori_engine.protocol import EngineError, TranscribeParams, parse_model


def test_overrides_replace_fields_of_the_preset() -> None:
    options = with_overrides(PRESETS["whisper"], {"batch_size": 8, "min_logprob": -1.5, "tail_s": 1})
    assert (options.batch_size, options.min_logprob, options.tail_s) == (8, -1.5, 1.0)
    assert isinstance(options.tail_s, float) and isinstance(options.batch_size, int)
    assert replace(options, batch_size=4, min_logprob=-1.0, tail_s=0.6) == DEFAULT


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"batch_sz": 8}, "whisper.decode.batch_sz is not a decoding option"),
        ({"batch_size": 2.5}, "whisper.decode.batch_size must be a whole number"),
        ({"batch_size": 0}, "whisper.decode.batch_size must be > 0"),
        ({"tail_s": -1}, "whisper.decode.tail_s must be >= 0"),
        ({"tail_s": True}, "whisper.decode.tail_s must be a number"),
        ({"tail_s": "1"}, "whisper.decode.tail_s must be a number"),
        ({"loop_repeats": 1}, "whisper.decode.loop_repeats must be >= 2"),
    ],
)
def test_a_bad_override_is_refused_naming_its_field(overrides: dict, message: str) -> None:
    [error] = check({"whisper": overrides})
    assert error.startswith(message)


def test_a_request_carries_its_entrys_options() -> None:
    model = parse_model({"path": "m", "decode": {"preset": "sommers", "replay_min_chars": 20}})
    assert model.decode == replace(PRESETS["sommers"], replay_min_chars=20)
    assert parse_model({"path": "m"}).decode == DEFAULT
    with pytest.raises(EngineError, match="model.decode.replay_min_char is not"):
        parse_model({"path": "m", "decode": {"replay_min_char": 20}})
    with pytest.raises(EngineError, match="model.decode.preset must be one of"):
        parse_model({"path": "m", "decode": {"preset": "large"}})


def test_checkpoints_of_other_options_are_not_resumed() -> None:
    def key(decode: dict | None) -> str:
        model = parse_model({"path": "m", "decode": decode})
        return checkpoint.key(TranscribeParams(audio_path="a", model=model, language_mode="detect"), 300.0)

    assert key(None) == key({"preset": "whisper"})  # the defaults: the key checkpoints had before options
    assert key({"batch_size": 8}) != key(None)
