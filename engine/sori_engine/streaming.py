"""Streaming sessions: the `stream_open`, `stream_audio` and `stream_close` ops (docs/engine.md, docs/streaming.md).

A session holds the audio received since its last final (resampled to 16 kHz as it arrives) and Silero's speech
probability for each 32 ms frame of it. Each `stream_audio` appends audio and then:

- end-pointing: once the utterance has speech and the speech has been followed by `epd_time` seconds of frames
  under the VAD threshold (or the client asked to finalize, or the stream ends, or the utterance reached
  `stream_max_utterance_s`), the utterance is decoded with the batch path (`transcriber.transcribe_audio`: the same VAD,
  beam, tail rounds and hallucination stage as a `transcribe` request) and returned as a final; its audio is
  dropped;
- an early final: once the speech has paused `stream_pad_s` (the final's padding is all there) and is within
  `stream_early_s` of
  `epd_time`, the final is decoded now, in a step with nothing else to decode, and kept; when the end point comes
  with the same audio, that is the final (the same decode of the same samples, so the same result, sooner); when
  the speech goes on, it is dropped;
- otherwise, when the caller asks for an interim and the utterance has speech, the utterance so far is decoded
  greedily (beam 1, same stage) and returned as an interim.

The session's state is only audio and probabilities: a crash loses the open utterance, never anything else.
"""

from __future__ import annotations

import base64
import binascii
import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import soxr

from . import stream_interim, transcriber, vad
from .decode_options import DecodeOptions
from .errors import EngineError, bad_request
from .pcm import SAMPLE_RATE
from .protocol import (
    TranscribeParams,
    get_field,
    is_bool,
    is_nonempty_str,
    is_number,
    parse_transcribe,
)
from .transcript import Segment
from .vad import FRAME, FRAME_S

log = logging.getLogger(__name__)

MAX_SESSIONS = 64  # per engine process; the service bounds sessions far below this
MAX_PCM_BYTES = 8 * 1024 * 1024  # one stream_audio's audio (base64-decoded)


@dataclass
class OpenParams:
    session: str
    sample_rate: int
    epd_time: float
    decode: TranscribeParams  # the final's decoding; the interim is the same with beam 1
    narrowband: bool


def parse_open(params: Mapping[str, Any]) -> OpenParams:
    session = get_field(params, "session", is_nonempty_str, "a non-empty string")
    rate = get_field(params, "sample_rate", lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer")
    if not 8000 <= rate <= 48000:
        raise bad_request("field sample_rate must be 8000..48000")
    epd = float(get_field(params, "epd_time", is_number, "a number", 0.5))
    if not 0.05 <= epd <= 10.0:
        raise bad_request("field epd_time must be 0.05..10")
    decode = params.get("decode")
    if not isinstance(decode, dict):
        raise bad_request("field decode must be an object")
    # The decode settings are those of a transcribe request; the audio is the session's, not a file.
    req = parse_transcribe({**decode, "audio_path": "<stream>", "max_duration_s": None, "channel": None})
    if req.language_mode != "fixed":
        raise bad_request("a stream decodes in one fixed language")
    return OpenParams(session=session, sample_rate=rate, epd_time=epd, decode=req, narrowband=rate <= 8000)


class Resampler:
    """A stream's PCM (s16 mono at its rate) to 16 kHz float32 in [-1, 1), chunk by chunk. libsoxr (the soxr
    package), not FFmpeg's swresample: the engine never loads FFmpeg (media/sandbox.py). In float32, so that the
    output does not depend on how the stream was cut into chunks (soxr's int16 output is requantized per chunk:
    off by up to 2 LSB); 16 kHz input passes through untouched. Medium quality: it holds back 26 ms at 8 kHz until
    the next chunk, where high quality held 66 ms, and end-pointing waits for what it holds."""

    def __init__(self, rate: int) -> None:
        self.stream = None if rate == SAMPLE_RATE else soxr.ResampleStream(rate, SAMPLE_RATE, 1, quality="MQ")

    def resample(self, pcm: bytes, last: bool) -> np.ndarray:
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) * np.float32(1.0 / 32768.0)
        if self.stream is None:
            return samples
        out = np.asarray(self.stream.resample_chunk(samples, last=last), dtype=np.float32)
        return np.clip(out, -1.0, 1.0 - 1.0 / 32768.0, out=out)  # the filter's overshoot, as s16 clipped it


@dataclass
class Session:
    params: OpenParams
    resampler: Resampler = field(init=False)
    audio: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    offset: int = 0  # session sample (16 kHz) of audio[0]
    probs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))  # per full frame of audio
    received: int = 0  # 16 kHz samples received in all
    stable: stream_interim.StablePrefix = field(init=False)  # the open utterance's interim text shown so far
    # Silero over the whole stream, its state carried from step to step: the probabilities a whole-file VAD gives.
    # (Scoring each step afresh with half a second of warm-up marked soft speech as silence: whole utterances of
    # reverberant clips were cut out, docs/streaming.md "Figures".)
    scan: vad.SileroScan = field(init=False)
    # The open utterance's final decoded early (the pause reached stream_pad_s), keyed by the audio it decoded:
    # ((session sample of the audio's start, its length), segments; None when the decode failed).
    early: tuple[tuple[int, int], list[Segment] | None] | None = None
    early_finals: bool = True  # decode a final once its pause holds the padding (off: only at the end point)
    final_decodes: int = 0  # finals decoded, early or not (one utterance's voided early final counts too)
    last_decoded: int = 0  # samples of the audio the last of them decoded

    def __post_init__(self) -> None:
        self.resampler = Resampler(self.params.sample_rate)
        unspaced = self.params.decode.language in stream_interim.UNSPACED
        self.stable = stream_interim.StablePrefix(unspaced, self.options.interim_lead_held_back)
        self.scan = vad.SileroScan()

    @property
    def options(self) -> DecodeOptions:
        return self.params.decode.model.decode

    @property
    def threshold(self) -> float:
        o = self.options
        return o.phone_vad_threshold if self.params.narrowband else o.vad_threshold

    def append(self, pcm: bytes, flush: bool) -> None:
        """Resample `pcm` (s16le mono at the session's rate) to 16 kHz and score the new full frames."""
        new = self.resampler.resample(pcm, flush)
        if flush:  # the resampler holds a few ms back until it sees what follows
            self.resampler = Resampler(self.params.sample_rate)
        if new.size == 0:
            return
        self.audio = np.concatenate([self.audio, new])
        self.received += new.shape[0]
        scored = self.probs.size
        full = self.audio.shape[0] // FRAME
        if full > scored:
            fresh = self.scan.score(self.audio[scored * FRAME : full * FRAME])
            self.probs = np.concatenate([self.probs, fresh])

    def drop(self, frames: int) -> None:
        """Forget the first `frames` frames of audio."""
        self.audio = self.audio[frames * FRAME :]
        self.probs = self.probs[frames:]
        self.offset += frames * FRAME

    def pause_s(self, last: int) -> float:
        """Seconds of audio scored after frame `last` (a pause, when `last` is the speech span's end)."""
        return (self.probs.size - 1 - last) * FRAME_S

    def speech_span(self) -> tuple[int, int] | None:
        """(first, last) speech frame of the open utterance, or None while it has too little speech. The utterance
        ends at the first pause of `epd_time` or more after its start: audio that arrived in one large step (a
        slow engine makes steps larger) may hold several utterances, and each gets its own final."""
        speech = np.flatnonzero(self.probs >= self.threshold)
        if speech.size < self.options.stream_min_speech_frames:
            return None
        gap = max(1, int(np.ceil(self.params.epd_time / FRAME_S)))
        pauses = np.flatnonzero(np.diff(speech) > gap)  # speech[i] is the last frame before a long enough pause
        last = int(speech[pauses[0]]) if pauses.size else int(speech[-1])
        return int(speech[0]), last


_sessions: dict[str, Session] = {}


def session(sid: str) -> Session | None:
    """The open session `sid`."""
    return _sessions.get(sid)


def open_session(params: Mapping[str, Any]) -> dict[str, Any]:
    p = parse_open(params)
    if p.session in _sessions:
        raise bad_request(f"session {p.session} is already open")
    if len(_sessions) >= MAX_SESSIONS:
        raise bad_request(f"this engine holds {MAX_SESSIONS} sessions already")
    from . import models

    models.get_model(p.decode.model)  # load now, so the first audio is not slowed by it
    _sessions[p.session] = Session(p)
    return {"session": p.session}


def close_session(params: Mapping[str, Any]) -> dict[str, Any]:
    session = get_field(params, "session", is_nonempty_str, "a non-empty string")
    return {"closed": _sessions.pop(session, None) is not None}


def feed(params: Mapping[str, Any]) -> dict[str, Any]:
    """One `stream_audio`: a `stream_step` of one session (its error raised)."""
    out = step({"steps": [params]})["results"][0]
    if "error" in out:
        raise EngineError(out["error"]["code"], out["error"]["msg"])
    return {k: out[k] for k in ("events", "received_s", "pending_s")}


def step(params: Mapping[str, Any]) -> dict[str, Any]:
    """One `stream_step`: each item is a `stream_audio` of one session. Every session's audio is appended and its
    finals decoded first, then the finals due early (module doc); then, only when no final was due or decoded
    early in this step (a final is latency-bound: it goes out now, and the sessions that wanted an interim ask
    again in the next step), the interims of all sessions that asked for one are decoded in one batched pass
    (stream_interim.py). An item that fails (unknown session, bad PCM) gets an error of its own and leaves its
    session as it was; the other items go on."""
    items = get_field(params, "steps", lambda v: isinstance(v, list) and 0 < len(v) <= MAX_SESSIONS, "a list of 1..64")
    results: list[dict[str, Any]] = []
    wants: list[tuple[int, Session, tuple[int, int]]] = []
    early: list[tuple[Session, tuple[int, int]]] = []
    any_final = False
    for item in items:
        sid = item.get("session") if isinstance(item, dict) else None
        try:
            s, pcm, interim, finalize, finish = _parse_item(item)
            events = _advance(s, pcm, finalize, finish)
        except EngineError as e:
            results.append({"session": sid, "error": {"code": e.code, "msg": e.message}})
            continue
        any_final = any_final or bool(events)
        span = s.speech_span()
        silence_s = s.pause_s(span[1]) if span is not None else 0.0
        paused = span is not None and silence_s >= s.options.stream_paused_s
        if span is not None and not events and not finish and early_from(s) <= silence_s < s.params.epd_time:
            early.append((s, span))
        if interim and span is not None and not events and not paused and not finish:
            wants.append((len(results), s, (span[0], s.probs.size - 1)))
        elif span is None and s.probs.size > 0:
            keep = int(s.options.stream_idle_keep_s / FRAME_S)
            if s.probs.size > keep and not np.any(s.probs[-keep:] >= s.threshold):
                s.drop(s.probs.size - keep)  # silence or noise only: nothing to keep but a lead-in
        if finish:
            _sessions.pop(item["session"], None)
        results.append(
            {
                "session": sid,
                "events": events,
                "interim": False,
                "received_s": round(s.received / SAMPLE_RATE, 3),
                "pending_s": round(s.audio.shape[0] / SAMPLE_RATE, 3),
            }
        )
    # Early finals only in a step with nothing else to decode: a due final must not wait for one, and while other
    # sessions want interims the engine is busy, so an early decode would only put its work before theirs, and
    # speech voids about one in five of them.
    if not any_final and not wants:
        for s, (first, last) in early:
            any_final = (s.early_finals and _decode_early(s, first, last)) or any_final
    started = time.monotonic()
    if wants and not any_final:
        bounds = [_bounds(s, first, last) for _i, s, (first, last) in wants]
        hyps = stream_interim.decode(
            [
                stream_interim.Want(s.params.decode, s.audio[a:b])
                for (_i, s, _span), (a, b) in zip(wants, bounds, strict=True)
            ]
        )
        for (i, s, (first, _last)), (a, b), hyp in zip(wants, bounds, hyps, strict=True):
            results[i]["interim"] = True
            if hyp is not None and s.stable.update(hyp.segment.text, hyp.sure):
                shown = replace(hyp.segment, text=s.stable.text())
                results[i]["events"].append(_event(s, first, a, b, [shown], final=False))
    return {"results": results, "interim_s": round(time.monotonic() - started, 3)}


def _parse_item(item: Any) -> tuple[Session, bytes, bool, bool, bool]:
    if not isinstance(item, dict):
        raise bad_request("each step must be an object")
    sid = get_field(item, "session", is_nonempty_str, "a non-empty string")
    s = _sessions.get(sid)
    if s is None:
        raise bad_request(f"no open session {sid}")
    try:
        pcm = base64.b64decode(
            get_field(item, "pcm", lambda v: isinstance(v, str), "a base64 string", ""), validate=True
        )
    except binascii.Error:
        raise bad_request("field pcm must be base64") from None
    if len(pcm) > MAX_PCM_BYTES or len(pcm) % 2:
        raise bad_request("field pcm must be whole 16-bit samples, at most 8 MiB")
    interim = get_field(item, "interim", is_bool, "a boolean", False)
    finish = get_field(item, "finish", is_bool, "a boolean", False)
    finalize = finish or get_field(item, "finalize", is_bool, "a boolean", False)
    return s, pcm, interim, finalize, finish


def _advance(s: Session, pcm: bytes, finalize: bool, finish: bool) -> list[dict[str, Any]]:
    """Append the audio; returns the finals the end-pointer calls for (`finalize`: the open utterance now)."""
    s.append(pcm, flush=finish)
    events: list[dict[str, Any]] = []
    while True:
        span = s.speech_span()
        if span is None:
            break
        first, last = span
        silence_s = s.pause_s(last)
        length_s = (s.probs.size - first) * FRAME_S
        # `decided`: the buffer sample whose arrival decided the final (the service times the final from it).
        if length_s >= s.options.stream_max_utterance_s and not finalize and silence_s < s.params.epd_time:
            last = _longest_pause(s.probs[first : last + 1] >= s.threshold) + first
            decided = (first + _frames(s.options.stream_max_utterance_s)) * FRAME
        elif silence_s >= s.params.epd_time:
            decided = (last + 1 + _frames(s.params.epd_time)) * FRAME  # the frame that completed the pause
        elif finalize:
            decided = s.audio.shape[0]
        else:
            break
        events.append(_final(s, first, last, min(decided, s.audio.shape[0])))
        # The rest of the buffer is after the end point: it waits for its own, unless the stream ends here, when
        # every utterance still held is closed (EOS after a large step must not lose all but the first).
        finalize = finish
    return events


def _frames(seconds: float) -> int:
    """The number of VAD frames that first reaches `seconds` (as the end-pointer counts them)."""
    return math.ceil(seconds / FRAME_S - 1e-9)


def _longest_pause(speech: np.ndarray) -> int:
    """Index of the last speech frame before the longest run of non-speech in `speech` (the end of the
    utterance's last speech frame when it has no pause)."""
    best, best_len, run = speech.size - 1, 0, 0
    for i, v in enumerate(speech):
        if v:
            if run > best_len:
                best, best_len = i - run - 1, run
            run = 0
        else:
            run += 1
    return max(best, 0)


def _decode_final(s: Session, a: int, b: int) -> list[Segment]:
    """The batch path (`transcribe_audio`) on buffer samples [a, b), in a window fit to their length (the same
    window as the interims': stream_interim.window_s)."""
    audio = s.audio[a:b]
    s.final_decodes += 1
    s.last_decoded = b - a
    result = transcriber.transcribe_audio(
        s.params.decode,
        audio,
        s.params.narrowband,
        stream_interim.window_s(audio.shape[0], s.params.decode.model.decode),
        s.probs[a // FRAME :],  # the session's own (a is on the frame grid: the lead is whole frames)
    )
    return list(result.segments)


def early_from(s: Session) -> float:
    """The pause (seconds) from which a session's final is decoded early."""
    return max(s.options.stream_pad_s, s.params.epd_time - s.options.stream_early_s)


def _decode_early(s: Session, first: int, last: int) -> bool:
    """Decode the final of speech frames first..last now, before the end point, unless it was already. Called once
    the pause after `last` holds the final's padding: the samples and their probabilities (each a function of the
    audio before it alone) are then those the end point's final decodes. Returns whether it decoded."""
    a, b = _bounds(s, first, last)
    key = (s.offset + a, b - a)
    if s.early is not None and s.early[0] == key:
        return False
    try:
        s.early = (key, _decode_final(s, a, b))
    except EngineError:
        s.early = (key, None)  # not again each step: the end point's final decodes it, and its item gets the error
    return True


def _final(s: Session, first: int, last: int, decided: int) -> dict[str, Any]:
    """The utterance's final: the early one when it decoded this same audio, else decoded now."""
    a, b = _bounds(s, first, last)
    early, s.early = s.early, None
    segments = early[1] if early is not None and early[0] == (s.offset + a, b - a) else None
    if segments is None:
        segments = _decode_final(s, a, b)
    event = _event(s, first, a, b, segments, final=True, decided=decided)
    # Only the utterance's speech is forgotten: the pause after it (epd_time of non-speech, which the final also
    # decoded as its padding) stays as the next utterance's lead-in. Dropped with the padding, a next utterance
    # that began 0.6 s after a click kept 0.16 s of lead-in, and Whisper skipped its first words ("시내에 있는").
    s.drop(min(last + 1, s.probs.size))
    s.stable.reset()
    return event


def _bounds(s: Session, first: int, last: int) -> tuple[int, int]:
    """Buffer samples [a, b) decoded for the speech frames first..last: the lead before, the padding after."""
    o = s.options
    return max(first * FRAME - o.stream_lead_frames * FRAME, 0), min(
        (last + 1) * FRAME + int(o.stream_pad_s * SAMPLE_RATE), s.audio.shape[0]
    )


def _event(
    s: Session, first: int, a: int, b: int, segments: list[Segment], final: bool, decided: int | None = None
) -> dict[str, Any]:
    """`decided`: the buffer sample whose arrival decided the answer (default: all the audio received)."""
    shift = (s.offset + a) / SAMPLE_RATE
    return {
        "final": final,
        # Session seconds of the first speech frame, and of the audio whose arrival decided this answer (for a
        # final at its end point, the frame that completed the pause, though the step may have brought more): the
        # service measures its latencies from the wall time these arrived (docs/streaming.md, "Metrics").
        "speech_start": round((s.offset + first * FRAME) / SAMPLE_RATE, 3),
        "decided_at": round((s.offset + (s.audio.shape[0] if decided is None else decided)) / SAMPLE_RATE, 3),
        "start": round(shift, 3),
        "end": round((s.offset + b) / SAMPLE_RATE, 3),
        "segments": [_shifted(seg.to_json(), shift) for seg in segments],
    }


def _shifted(seg: dict[str, Any], shift: float) -> dict[str, Any]:
    seg["start"] = round(seg["start"] + shift, 3)
    seg["end"] = round(seg["end"] + shift, 3)
    for w in seg.get("words") or []:
        w["start"] = round(w["start"] + shift, 3)
        w["end"] = round(w["end"] + shift, 3)
    return seg
