"""Checkpoints of a `transcribe` request: what a later request needs to continue where this one stopped.

The transcriber works window by window (`window_s()` of audio, decode.windows.windows). After each window it emits a
checkpoint event holding that window's part of the work: its segments (before the hallucination stage, which runs
once over the whole file at the end), its Silero speech probabilities (the hallucination stage's speech map), and
the decoder's state after it (the file's language and its probabilities; in `multi` mode the speech-weighted sum
of the chunks' distributions), with the file sample where the next window starts. The worker stores every event;
a request given them back as `resume_from` restores that state and decodes on from that sample, so a crash,
a lost lease or a shutdown costs at most the window that was in flight.

The resumed run decodes the same windows as an uninterrupted one: the decoder's blocks are skipped up to the
sample where the next window starts and the rest of the block is the first block (decode.windows.skip_to), which is
exactly the audio the uninterrupted run carries from one window into the next. Checkpoints keep every float at full
precision (a JSON float round-trips exactly), so on the same model and thread count the result is identical.

Checkpoints carry a key of everything that shapes the windows and their decoding (window length, model entry,
language settings, channel, prompts, word timestamps; not the decoders running at once): checkpoints made under
other settings are ignored and the request starts from the beginning, rather than splice two different decodings
into one transcript.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .decode_options import DEFAULT
from .protocol import TranscribeParams
from .transcript import Segment, Word

log = logging.getLogger(__name__)

VERSION = 1
DEFAULT_WINDOW_S = 300.0
# Below this a window cannot hold a 30 s chunk and the guard (decode.windows.windows); an operator setting is clamped.
MIN_WINDOW_S = 60.0


def window_s() -> float:
    """The transcriber's window (and so checkpoint) length: SORI_ENGINE_WINDOW_S, default 300 s. Shorter windows
    mean less work lost to a crash and more, smaller checkpoints; the VAD sees one window at a time, so the choice
    is part of the checkpoint key."""
    raw = os.environ.get("SORI_ENGINE_WINDOW_S", "")
    try:
        value = float(raw) if raw else DEFAULT_WINDOW_S
    except ValueError:
        value = DEFAULT_WINDOW_S
    return max(value, MIN_WINDOW_S) if math.isfinite(value) else DEFAULT_WINDOW_S


def key(req: TranscribeParams, window: float) -> str:
    """What must match for checkpoints to be resumed from (see the module docstring)."""
    model = asdict(req.model)
    # Passes run at once (the host's decoders) do not shape a request's text: its windows never share a batch
    # (scheduler.py). A job checkpointed on one host resumes on a host with other cores.
    del model["inter_threads"]
    if req.model.decode == DEFAULT:  # decoding options matter only where they are not the defaults
        del model["decode"]
    shaped = {
        "v": VERSION,
        "window_s": window,
        "model": model,
        "language_mode": req.language_mode,
        "language": req.language,
        "language_candidates": list(req.language_candidates or ()),
        "word_timestamps": req.word_timestamps,
        "initial_prompt": req.initial_prompt,
        "hotwords": req.hotwords,
        "channel": req.channel,
    }
    return hashlib.sha256(json.dumps(shaped, sort_keys=True).encode()).hexdigest()[:32]


@dataclass
class Restored:
    """The state after the last stored checkpoint."""

    count: int  # windows done
    offset_sample: int  # where the next window starts
    total_samples: int
    segments: list[Segment]
    speech: list[tuple[int, np.ndarray]]  # (offset sample, probabilities) of each window, in order
    language: str | None
    probs: dict[str, float] | None
    weighted: dict[str, float] = field(default_factory=dict)


def make(
    index: int,
    ckey: str,
    window_offset: int,
    next_offset: int,
    speech_probs: np.ndarray,
    segments: list[Segment],
    language: str | None,
    probs: dict[str, float] | None,
    weighted: dict[str, float],
) -> dict[str, Any]:
    """The checkpoint after window `index` (JSON-ready)."""
    return {
        "v": VERSION,
        "key": ckey,
        "index": index,
        "offset_sample": next_offset,
        "speech_offset_sample": window_offset,
        "speech": base64.b64encode(np.ascontiguousarray(speech_probs, dtype="<f4").tobytes()).decode("ascii"),
        "segments": [_segment_json(s) for s in segments],
        "language": language,
        "probs": probs,
        "weighted": weighted,
    }


def restore(checkpoints: list[Any] | None, ckey: str) -> Restored | None:
    """The state after the longest run of usable checkpoints 0, 1, 2, ...; None to start from the beginning."""
    if not checkpoints:
        return None
    usable: list[dict[str, Any]] = []
    for i, cp in enumerate(checkpoints):
        if not isinstance(cp, dict) or cp.get("v") != VERSION or cp.get("index") != i:
            break
        if cp.get("key") != ckey:
            log.warning("checkpoint %d was made with other settings; starting from the beginning", i)
            return None
        usable.append(cp)
    if not usable:
        return None
    try:
        segments = [_segment_from(s) for cp in usable for s in cp["segments"]]
        speech = [
            (int(cp["speech_offset_sample"]), np.frombuffer(base64.b64decode(cp["speech"]), dtype="<f4").copy())
            for cp in usable
        ]
        last = usable[-1]
        return Restored(
            count=len(usable),
            offset_sample=int(last["offset_sample"]),
            total_samples=int(last["offset_sample"]),
            segments=segments,
            speech=speech,
            language=last["language"],
            probs={str(k): float(v) for k, v in last["probs"].items()} if last["probs"] is not None else None,
            weighted={str(k): float(v) for k, v in last["weighted"].items()},
        )
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        log.warning("unreadable checkpoint (%s); starting from the beginning", e)
        return None


def _f(x: float) -> float | str:
    """A float as JSON keeps it exactly; the non-finite ones (avg_logprob can be -inf) as their names."""
    x = float(x)
    return x if math.isfinite(x) else str(x)


def _segment_json(s: Segment) -> dict[str, Any]:
    out: dict[str, Any] = {
        "start": _f(s.start),
        "end": _f(s.end),
        "text": s.text,
        "language": s.language,
        "avg_logprob": _f(s.avg_logprob),
        "no_speech_prob": _f(s.no_speech_prob),
    }
    if s.words is not None:
        out["words"] = [[_f(w.start), _f(w.end), w.text, _f(w.probability)] for w in s.words]
    return out


def _segment_from(d: dict[str, Any]) -> Segment:
    words = d.get("words")
    return Segment(
        start=float(d["start"]),
        end=float(d["end"]),
        text=str(d["text"]),
        language=str(d["language"]),
        avg_logprob=float(d["avg_logprob"]),
        no_speech_prob=float(d["no_speech_prob"]),
        words=None
        if words is None
        else tuple(Word(start=float(a), end=float(b), text=str(t), probability=float(p)) for a, b, t, p in words),
    )
