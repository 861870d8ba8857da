"""Interim hypotheses of streaming sessions (streaming.py): cheap, batched across sessions, and stable.

- Cheap: an interim is one greedy pass (beam 1, no timestamps, no tail round, no temperature fallback) over the
  open utterance laid in a short window (`window_s`: the utterance rounded up to `interim_window_step_s`, at least
  `interim_min_window_s`) instead of Whisper's 30 s: the encoder's cost grows faster than its input. The window's
  padding is the log-mel of silence, as Whisper's own padding of the audio gives; zero features in a short window
  cost accuracy (docs/streaming.md, "Figures").
- Batched: the sessions that want an interim in one engine step are decoded together, one generate call per group
  of sessions with the same model, options, language and prompt; on CPU the encoder takes them one at a time
  (the faster-whisper backend's encode_clip_by_clip), which costs less there.
- Stable: `StablePrefix` shows only what two consecutive hypotheses agree on (LocalAgreement-2; until the
  utterance shows anything, a hypothesis the hallucination stage left whole shows its start alone), and takes a
  shown word back only when two consecutive hypotheses agree on something else there.

The text then goes through the hallucination stage (loops, text on no speech), as a final's does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import models
from .decode_options import DEFAULT, DecodeOptions
from .pcm import SAMPLE_RATE
from .protocol import TranscribeParams
from .transcript import Segment
from .verdicts import per_file, per_window

UNSPACED = frozenset({"ja", "zh", "th", "lo", "my", "km"})  # a character is a unit of agreement, not a word


def window_s(samples: int, o: DecodeOptions = DEFAULT) -> float:
    """The decoding window for `samples` of 16 kHz audio: at least `interim_min_window_s`, in steps of
    `interim_window_step_s`."""
    step = o.interim_window_step_s
    return max(o.interim_min_window_s, math.ceil((samples / SAMPLE_RATE + 0.05) / step) * step)


@dataclass
class Hypothesis:
    """An interim's text as a segment over the utterance so far, and whether it may be shown before a second
    hypothesis agrees with it (the hallucination stage left it as Whisper wrote it)."""

    segment: Segment
    sure: bool


@dataclass
class Want:
    """One session's interim request: the decode settings and the utterance so far (16 kHz)."""

    req: TranscribeParams
    audio: np.ndarray


def decode(wants: list[Want]) -> list[Hypothesis | None]:
    """One greedy hypothesis per want (None: nothing left after the hallucination stage), batched by group."""
    out: list[Hypothesis | None] = [None] * len(wants)
    groups: dict[tuple, list[int]] = {}
    for i, w in enumerate(wants):
        key = (
            w.req.model.path,
            w.req.model.device,
            w.req.model.compute_type,
            w.req.model.cpu_threads,
            w.req.model.decode,
        )
        groups.setdefault((key, w.req.language, w.req.hotwords, w.req.initial_prompt), []).append(i)
    for idx in groups.values():
        for i, seg in zip(idx, _decode_group([wants[i] for i in idx]), strict=True):
            out[i] = seg
    return out


def _decode_group(wants: list[Want]) -> list[Hypothesis | None]:
    first = wants[0].req
    o = first.model.decode
    model = models.get_model(first.model)
    assert first.language is not None  # a stream decodes in one fixed language (streaming.parse_open)
    longest = max(w.audio.shape[0] for w in wants)
    frames = int(model.frames_of(window_s(longest, o)))
    texts = model.greedy_texts(
        [w.audio for w in wants],
        frames,
        language=first.language,
        initial_prompt=first.initial_prompt,
        hotwords=first.hotwords,
        max_new_tokens=int(longest / SAMPLE_RATE * o.interim_tokens_per_s) + o.interim_tokens_min,
    )
    out: list[Hypothesis | None] = []
    for w, (text, avg_logprob, no_speech_prob) in zip(wants, texts, strict=True):
        if not text or per_window.on_no_speech(no_speech_prob, avg_logprob, o):
            out.append(None)
            continue
        seg = Segment(
            start=0.0,
            end=w.audio.shape[0] / SAMPLE_RATE,
            text=text,
            language=first.language,
            avg_logprob=avg_logprob,
            no_speech_prob=no_speech_prob,
        )
        kept = per_file.clean([seg], per_file.SpeechMap(per_file.speech_probs(w.audio)), o)
        # Shown alone (StablePrefix) only as Whisper wrote it: one the stage had to cut ("뭐, 뭐, 뭐, ..." from
        # the first half second of speech) waits for a second hypothesis to agree.
        sure = bool(kept) and kept[0].text == text
        out.append(Hypothesis(kept[0], sure) if kept else None)
    return out


@dataclass
class StablePrefix:
    """The interim text a session shows for its open utterance. A unit (a word; a character in unspaced
    languages) is shown once two consecutive hypotheses agree on it and everything before it; a shown unit is taken
    back only when two consecutive hypotheses agree on something else in its place (the audio proved it wrong).
    Until anything is shown, a sure hypothesis (Hypothesis.sure) shows its start without waiting for a second.
    Units are compared normalized (per_file.normalize), so a comma that comes and goes is no change."""

    unspaced: bool
    lead_held_back: int = 1  # units of a first hypothesis held back (DecodeOptions.interim_lead_held_back)
    shown: list[str] = field(default_factory=list)
    last: list[str] = field(default_factory=list)

    def units(self, text: str) -> list[str]:
        if self.unspaced:  # characters, punctuation left out (it comes and goes between hypotheses)
            return [c for c in text if per_file.normalize(c)]
        return text.split()

    def text(self) -> str:
        return ("" if self.unspaced else " ").join(self.shown)

    def update(self, hypothesis: str, sure: bool = True) -> bool:
        """Takes a new hypothesis; returns whether the shown text changed."""
        new = self.units(hypothesis)
        agreed = new[: _common(self.last, new)]
        self.last = new
        held = 2 * self.lead_held_back if self.unspaced else self.lead_held_back
        if not self.unspaced and len(new) == 1:
            held = 0  # a lone word is shown: held back, a short answer ("네") showed nothing until its final
        if not self.shown and sure and len(new) > held:
            # Nothing shown yet, so nothing to take back: a sure hypothesis's start is shown without its last
            # units (a word cut off by the end of the audio so far) rather than one interim later, once a second
            # agrees. Measured in docs/streaming.md (first interim latency, flicker).
            self.shown = new[: len(new) - held]
            return True
        k = _common(agreed, self.shown)
        if k == len(self.shown) and len(agreed) > k:
            self.shown = self.shown + agreed[k:]
            return True
        if k < len(self.shown) and len(agreed) > k:
            self.shown = agreed
            return True
        return False

    def reset(self) -> None:
        self.shown, self.last = [], []


def _common(a: list[str], b: list[str]) -> int:
    """Length of the common prefix of two unit lists, compared normalized."""
    n = 0
    while n < min(len(a), len(b)) and per_file.normalize(a[n]) == per_file.normalize(b[n]):
        n += 1
    return n
