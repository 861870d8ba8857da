"""Stages 2-5 for one window (transcriber.py): its speech regions grouped into chunks, each chunk's language, the
chunks of each language decoded together in rounds, and their segments placed in file time."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..decode_options import DecodeOptions
from ..model.interface import Prompting, SpeechModel
from ..pcm import SAMPLE_RATE
from ..transcript import Segment
from ..verdicts import per_file
from . import placement, rounds
from .language import Languages
from .windows import Window, group

Hook = Callable[[str, Any], None]  # hook(stage, artefact): told what each stage made, for benchmarks and profiles


@dataclass
class WindowSegments:
    """A window's segments (file time, before the last stage), and the language state after its language stage
    (for its checkpoint: what it is when the windows run one after another)."""

    window: Window
    segments: list[Segment]
    state: tuple[str | None, dict[str, float] | None, dict[str, float]]


def decode_window(
    model: SpeechModel,
    window: Window,
    languages: Languages,
    prompting: Callable[[str], Prompting],
    o: DecodeOptions,
    reached_s: Callable[[float], None],
    window_frames: int | None,
    hook: Hook,
) -> rounds.Steps[WindowSegments]:
    """One window's segments (file time, before the last stage): its chunks by language, each language's decoded
    together with `prompting(language)`. `reached_s` is told the file time decoded up to, as it advances."""
    chunks = group(window.regions, int(o.chunk_s * SAMPLE_RATE))
    hook("chunks", chunks)
    by_language: dict[str, list[list[dict]]] = {}
    for chunk in chunks:
        by_language.setdefault(languages.of(window.audio, chunk), []).append(chunk)
    hook("language", by_language)
    state = (languages.language, languages.probs, dict(languages.weighted))
    speech_map = per_file.SpeechMap(window.probs)  # window time, as the decoded segments
    job = rounds.Job(window.audio, [], speech_map, lambda sample: reached_s((window.offset + sample) / SAMPLE_RATE))
    out: list[Segment] = []
    for language, lang_chunks in by_language.items():
        asked = prompting(language)
        settings = rounds.Settings(model, asked, o, window_frames)
        job.chunks = lang_chunks
        decoded = (yield from rounds.decode_steps(settings, [job]))[0]
        hook("rounds", decoded)
        for fw in decoded:
            segment = placement.to_segment(fw, language, asked.word_timestamps, window.offset / SAMPLE_RATE)
            if segment is not None:
                out.append(segment)
                reached_s(segment.end)
    return WindowSegments(window, out, state)
