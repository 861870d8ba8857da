"""The engine's errors: what fails a request, by code (docs/engine.md, "Error codes"). Apart from the protocol so
that the stages raise them without importing the wire format."""

from __future__ import annotations

BAD_REQUEST = "bad_request"
AUDIO_DECODE_FAILED = "audio_decode_failed"
AUDIO_TOO_LONG = "audio_too_long"
MODEL_LOAD_FAILED = "model_load_failed"
INTERNAL = "internal"
CANCELLED = "cancelled"  # a `cancel` op dropped the request


class EngineError(Exception):
    """A failure reported to the worker as `{"error": {"code", "message"}}`; the engine keeps running."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def bad_request(message: str) -> EngineError:
    return EngineError(BAD_REQUEST, message)
