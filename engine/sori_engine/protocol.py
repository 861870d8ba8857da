"""The wire protocol of docs/engine.md: typed requests and results, and JSON-lines framing.

Parsing is strict about types (a bool is not an int, a string is not a list) because the worker is the only
client: a type mismatch is a bug on its side that should surface as `bad_request`, not be papered over.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TypeGuard

from .decode_options import DEFAULT, PRESETS, DecodeOptions, with_overrides
from .errors import (  # noqa: F401 - the error codes are the protocol's too
    AUDIO_DECODE_FAILED,
    AUDIO_TOO_LONG,
    BAD_REQUEST,
    INTERNAL,
    MODEL_LOAD_FAILED,
    EngineError,
    bad_request,
)
from .transcript import Segment, Word, json_score, json_time  # noqa: F401 - a result's records

LANGUAGE_MODES = ("fixed", "detect", "multi")


# ---------------------------------------------------------------------------------------------------------------
# Requests


@dataclass(frozen=True)
class Request:
    id: str
    op: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class ProbeParams:
    audio_path: str


@dataclass(frozen=True)
class ModelConfig:
    path: str
    device: str = "auto"
    compute_type: str = "default"
    beam_size: int = 5
    cpu_threads: int = 0
    vad: bool = True
    decode: DecodeOptions = DEFAULT  # the registry entry's preset and overrides (decode_options.py)
    inter_threads: int = 1  # batched passes the model runs at once, its weights held once (CTranslate2's name)


@dataclass(frozen=True)
class TranscribeParams:
    audio_path: str
    model: ModelConfig
    language_mode: str
    language: str | None = None
    language_candidates: tuple[str, ...] | None = None
    word_timestamps: bool = False
    initial_prompt: str | None = None
    hotwords: str | None = None
    max_duration_s: float | None = None
    channel: int | None = None  # decode this channel (0-based) alone instead of the mono downmix
    # Checkpoints (checkpoint.py): emit one event per window, and continue from the ones a previous request emitted.
    checkpoints: bool = False
    resume_from: list[Any] | None = None


def get_field(obj: Mapping[str, Any], name: str, check: Callable[[Any], bool], what: str, default: Any = ...) -> Any:
    """Read one field; `default=...` means required. An explicit null counts as absent for optional fields."""
    value = obj.get(name)
    if value is None:
        if default is ...:
            raise bad_request(f"missing field: {name}")
        return default
    if not check(value):
        raise bad_request(f"field {name} must be {what}")
    return value


def is_str(v: Any) -> bool:
    return isinstance(v, str)


def is_nonempty_str(v: Any) -> bool:
    return isinstance(v, str) and v != ""


def is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: Any) -> TypeGuard[float]:
    """A finite JSON number (not a bool): every op's check of a number field."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def is_span(v: Any) -> bool:
    """A `[start, end]` pair of seconds, 0 <= start <= end (the spans of diarize's voices and of redact_audio)."""
    return isinstance(v, list) and len(v) == 2 and is_number(v[0]) and is_number(v[1]) and 0 <= v[0] <= v[1]


def is_list(v: Any) -> bool:
    return isinstance(v, list)


def is_str_list(v: Any) -> bool:
    return isinstance(v, list) and all(is_nonempty_str(x) for x in v)


def parse_request(line: bytes) -> Request:
    """Parse one input line. Raises EngineError(bad_request); the caller answers with id null when the id itself
    could not be read (see request_id_of)."""
    try:
        obj = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise bad_request(f"malformed JSON: {e}") from None
    if not isinstance(obj, dict):
        raise bad_request("a request must be a JSON object")
    rid = get_field(obj, "id", is_str, "a string")
    op = get_field(obj, "op", is_nonempty_str, "a non-empty string")
    params = get_field(obj, "params", lambda v: isinstance(v, dict), "an object", default={})
    return Request(id=rid, op=op, params=params)


def request_id_of(line: bytes) -> str | None:
    """Best-effort id of a line that failed to parse, so the worker can still match the error to its request."""
    try:
        obj = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    rid = obj.get("id") if isinstance(obj, dict) else None
    return rid if isinstance(rid, str) else None


def parse_probe(params: Mapping[str, Any]) -> ProbeParams:
    return ProbeParams(audio_path=get_field(params, "audio_path", is_nonempty_str, "a non-empty string"))


def parse_model(obj: Any) -> ModelConfig:
    if obj is None:
        raise bad_request("missing field: model")
    if not isinstance(obj, dict):
        raise bad_request("field model must be an object")
    d = ModelConfig(path="")
    cfg = ModelConfig(
        path=get_field(obj, "path", is_nonempty_str, "a non-empty string"),
        device=get_field(obj, "device", is_nonempty_str, "a non-empty string", d.device),
        compute_type=get_field(obj, "compute_type", is_nonempty_str, "a non-empty string", d.compute_type),
        beam_size=get_field(obj, "beam_size", is_int, "an integer", d.beam_size),
        cpu_threads=get_field(obj, "cpu_threads", is_int, "an integer", d.cpu_threads),
        vad=get_field(obj, "vad", is_bool, "a boolean", d.vad),
        decode=parse_decode(obj.get("decode")),
        inter_threads=get_field(obj, "inter_threads", is_int, "an integer", d.inter_threads),
    )
    if cfg.inter_threads < 1:
        raise bad_request("field model.inter_threads must be >= 1")
    if cfg.beam_size < 1:
        raise bad_request("field model.beam_size must be >= 1")
    if cfg.cpu_threads < 0:
        raise bad_request("field model.cpu_threads must be >= 0")
    return cfg


def parse_decode(obj: Any) -> DecodeOptions:
    """A model entry's `decode` object: `preset` (a registry entry's name, default the defaults) and fields of
    DecodeOptions that override it."""
    if obj is None:
        return DEFAULT
    if not isinstance(obj, dict):
        raise bad_request("field model.decode must be an object")
    overrides = dict(obj)
    preset = overrides.pop("preset", None)
    if preset is not None and preset not in PRESETS:
        raise bad_request(f"field model.decode.preset must be one of {', '.join(PRESETS)}")
    try:
        return with_overrides(PRESETS[preset] if preset else DEFAULT, overrides, "model.decode")
    except (TypeError, ValueError) as e:
        raise bad_request(f"field {e}") from None


def parse_transcribe(params: Mapping[str, Any]) -> TranscribeParams:
    mode = get_field(params, "language_mode", is_str, "a string")
    if mode not in LANGUAGE_MODES:
        raise bad_request(f"field language_mode must be one of {', '.join(LANGUAGE_MODES)}")
    candidates = get_field(params, "language_candidates", is_str_list, "a list of language codes", None)
    max_duration = get_field(params, "max_duration_s", is_number, "a number", None)
    req = TranscribeParams(
        audio_path=get_field(params, "audio_path", is_nonempty_str, "a non-empty string"),
        model=parse_model(params.get("model")),
        language_mode=mode,
        language=get_field(params, "language", is_nonempty_str, "a language code", None),
        # An empty candidate list restricts nothing; treat it like null rather than as "no language allowed".
        language_candidates=tuple(dict.fromkeys(candidates)) if candidates else None,
        word_timestamps=get_field(params, "word_timestamps", is_bool, "a boolean", False),
        initial_prompt=get_field(params, "initial_prompt", is_str, "a string", None) or None,
        hotwords=get_field(params, "hotwords", is_str, "a string", None) or None,
        max_duration_s=float(max_duration) if max_duration is not None else None,
        channel=get_field(params, "channel", is_int, "an integer", None),
        checkpoints=get_field(params, "checkpoints", is_bool, "a boolean", False),
        resume_from=get_field(params, "resume_from", is_list, "a list of checkpoints", None),
    )
    if mode == "fixed" and req.language is None:
        raise bad_request("field language is required when language_mode is fixed")
    if req.max_duration_s is not None and req.max_duration_s <= 0:
        raise bad_request("field max_duration_s must be > 0")
    if req.channel is not None and req.channel < 0:
        raise bad_request("field channel must be >= 0")
    return req


@dataclass(frozen=True)
class DiarizeParams:
    audio_path: str
    spk_count: int = 0  # 0: estimate the number of speakers
    max_duration_s: float | None = None


def parse_diarize(params: Mapping[str, Any]) -> DiarizeParams:
    max_duration = get_field(params, "max_duration_s", is_number, "a number", None)
    req = DiarizeParams(
        audio_path=get_field(params, "audio_path", is_nonempty_str, "a non-empty string"),
        spk_count=get_field(params, "spk_count", is_int, "an integer", 0),
        max_duration_s=float(max_duration) if max_duration is not None else None,
    )
    if req.spk_count < 0:
        raise bad_request("field spk_count must be >= 0")
    if req.max_duration_s is not None and req.max_duration_s <= 0:
        raise bad_request("field max_duration_s must be > 0")
    return req


# ---------------------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class PingResult:
    version: str
    models_loaded: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "models_loaded": list(self.models_loaded)}


@dataclass(frozen=True)
class ProbeResult:
    format: str
    codec: str
    duration_s: float | None
    channels: int
    sample_rate: int

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "codec": self.codec,
            "duration_s": json_time(self.duration_s) if self.duration_s is not None else None,
            "channels": self.channels,
            "sample_rate": self.sample_rate,
        }


@dataclass(frozen=True)
class TranscribeResult:
    duration_s: float
    language: str
    language_probs: dict[str, float]
    segments: list[Segment] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "duration_s": json_time(self.duration_s),
            "language": self.language,
            "language_probs": {k: json_score(v) for k, v in self.language_probs.items()},
            "segments": [s.to_json() for s in self.segments],
        }


# ---------------------------------------------------------------------------------------------------------------
# Framing


class LineWriter:
    """Writes one JSON object per line to the protocol stream and flushes it at once, so the worker sees each
    event when it happens."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()  # requests in flight write from the decoder and the stage threads

    def _write(self, obj: dict[str, Any]) -> None:
        data = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
        with self._lock:
            self._stream.write(data.encode("utf-8"))
            self._stream.flush()

    def ready(self, version: str) -> None:
        self._write({"id": None, "event": "ready", "version": version})

    def checkpoint(self, rid: str, checkpoint: dict[str, Any]) -> None:
        self._write({"id": rid, "event": "checkpoint", "checkpoint": checkpoint})

    def progress(self, rid: str, fraction: float) -> None:
        self._write({"id": rid, "event": "progress", "fraction": round(min(max(fraction, 0.0), 1.0), 3)})

    def result(self, rid: str, result: dict[str, Any]) -> None:
        self._write({"id": rid, "result": result})

    def error(self, rid: str | None, code: str, message: str) -> None:
        self._write({"id": rid, "error": {"code": code, "message": message}})
