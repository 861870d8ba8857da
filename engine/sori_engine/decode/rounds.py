"""Stage 3, batched rounds: chunks decoded by the model's batched pass (SpeechModel.decode_clips), `batch_size` at a
time, in rounds. A batched pass is one greedy/beam pass per chunk at temperature 0 with no seek loop, so two things
WhisperModel.transcribe's loop does are done here: the unfinished last segment of a chunk is kept
(SpeechModel.decode_clips), and the speech of a chunk after its last decoded segment (when at least `tail_s` of it
is left and it holds a word) is decoded on in another round, as a chunk of its own (a rest). A chunk whose result
the verdicts find suspect is decoded again alone (`decode_again`).

`decode` takes the chunks of several owners (`Job`: a request's window, or several requests' windows) that share
their decode settings (`Settings`), batches them together and gives each owner its own segments: what the owner
gets when decoded alone, so batching across jobs is a matter of scheduling. `decode_steps` is the same rounds as a
generator that yields each round's pass as a `Need` and is sent its result: the engine's scheduler (scheduler.py)
decodes the needs of several requests in shared batches; `run_alone` decodes each at once, as `decode` does.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from .. import rest_echo
from ..decode_options import DecodeOptions
from ..model.interface import Decoded, Prompting, SpeechModel
from ..pcm import SAMPLE_RATE
from ..verdicts import per_file, per_window
from .placement import shift, to_window_time, within
from .windows import Region, after, cut, samples


@dataclass(frozen=True)
class Settings:
    """What every chunk of one decode shares: jobs whose settings are equal can be decoded together."""

    model: SpeechModel
    prompting: Prompting
    options: DecodeOptions
    window_frames: int | None = None  # a fixed encoder window (a streaming utterance's); None: sized to each batch
    # The batched pass (SpeechModel.decode_clips): a test of what is done with its output stands in a fixed one.
    batched: Callable[..., Iterable[Decoded]] | None = None


def _nothing(_sample: int) -> None:
    pass


@dataclass
class Job:
    """One owner's chunks: lists of speech regions of `audio` (window samples, at most `chunk_s` of speech each).
    `speech_map`: Silero's probabilities of `audio` (per_window.without_text_past_end; None: times are only kept
    inside their chunk). `reached(sample)` is told, as each batch comes in, the sample of `audio` up to which its
    chunks have been decoded (for progress)."""

    audio: np.ndarray
    chunks: list[list[Region]]
    speech_map: per_file.SpeechMap | None = None
    reached: Callable[[int], None] = field(default=_nothing)


@dataclass
class Item:
    """A chunk tagged by its owner (an index into the jobs), with, for a rest, the text before it."""

    owner: int
    chunk: list[Region]
    before: Decoded | None = None  # a rest's text before it: its chunk's last segment


@dataclass
class Need:
    """One batched pass the stages wait for: `decode_once(settings, jobs, items, rests)`, whose result (each item's
    segments) is sent back into the generator that yielded it. Items may be decoded in several passes, each beside
    other needs' items of equal settings and `rests`: each item's segments are its own."""

    settings: Settings
    jobs: list[Job]
    items: list[Item]
    rests: bool


T = TypeVar("T")
# Stages that wait for batched passes: yields each Need, is sent its segments, returns what the stages make.
Steps = Generator[Need, list[list[Decoded]], T]


def run_alone(steps: Steps[T]) -> T:
    """What `steps` returns, each need decoded at once by itself (one request's decode, as before the scheduler)."""
    try:
        need = next(steps)
        while True:
            need = steps.send(decode_once(need.settings, need.jobs, need.items, need.rests))
    except StopIteration as stop:
        return stop.value


def decode(s: Settings, jobs: list[Job]) -> list[list[Decoded]]:
    """Each job's segments (in the time of its `audio`, in time order), its chunks decoded in
    batches together with the other jobs' chunks, in rounds."""
    return run_alone(decode_steps(s, jobs))


def decode_steps(s: Settings, jobs: list[Job]) -> Steps[list[list[Decoded]]]:
    """`decode` as steps: each round's batched pass is yielded as a Need."""
    o = s.options
    out: list[list[Decoded]] = [[] for _ in jobs]
    items = [Item(j, chunk) for j, job in enumerate(jobs) for chunk in job.chunks]
    for round_ in range(o.max_rounds):
        if not items:
            break
        tails: list[Item] = []
        decoded = yield Need(s, jobs, items, round_ > 0)
        for item, segs in zip(items, decoded, strict=True):
            audio = jobs[item.owner].audio
            if item.before:
                segs = rest_echo.without_echo(segs, item.before, o.rest_echo_words, _own_speech(jobs[item.owner], o))
            out[item.owner].extend(segs)
            said = [fw for fw in segs if fw.text.strip()]
            if not said:  # nothing recognizable in it: decoding it again would only repeat that
                continue
            last = max(said, key=lambda fw: fw.end)
            rest = after(item.chunk, int(_said_until(last, o) * SAMPLE_RATE))
            if samples(rest) >= o.tail_s * SAMPLE_RATE and per_window.holds_a_word(cut(audio, rest), o):
                tails.append(Item(item.owner, rest, last))
        if not tails or round_ + 1 == o.max_rounds:
            break
        items = tails
    for segs in out:
        segs.sort(key=lambda fw: fw.start)
    return out


def _own_speech(job: Job, o: DecodeOptions) -> rest_echo.OwnSpeech | None:
    """Whether a span of the job's audio holds speech of its own to say a text (per_file.SpeechMap.own_seconds,
    per_file.needed); None without a speech map."""
    speech = job.speech_map
    if speech is None:
        return None
    return lambda start, end, text: speech.own_seconds(start, end, o) >= per_file.needed(text, o)


def _said_until(fw: Decoded, o: DecodeOptions) -> float:
    """Where the speech a chunk's last segment says ends: its end, or the start of a last word stretched over speech
    the text does not hold (per_window.stretched_tail), the segment and that word then cut to end
    `stretched_word_s` after it."""
    start = per_window.stretched_tail(fw, o)
    last = per_window.last_word(fw)
    if start is None or last is None:
        return float(fw.end)
    fw.end = last.end = start + o.stretched_word_s
    return start


def decode_once(s: Settings, jobs: list[Job], items: list[Item], rests: bool) -> list[list[Decoded]]:
    """One batched pass over `items`: each chunk's speech regions are laid end to end as one clip; returns the
    segments of each chunk in its job's time. A chunk whose result is suspect is decoded again alone; for `rests`
    (the speech after an early stop, often a second or two) that would cost a full window each, so only their
    loops and made-up text are dropped (per_window.hallucinated, per_window.ran_to_cap) -- but a rest that loops over
    `missing_s` or more of speech is decoded again sequentially, with the temperature fallback (a run of
    backchannels in a meeting looped twice, and 8 s of speech were lost). Segment times are kept inside
    their chunk's speech (placement.within); with the job's speech map, text timed past its chunk's end with no
    word's speech left for it is dropped (per_window.without_text_past_end)."""
    o = s.options
    if len({item.owner for item in items}) <= 1:
        owner = items[0].owner if items else 0
        speech = cut(jobs[owner].audio, [r for item in items for r in item.chunk]) if items else np.zeros(0, np.float32)
    else:
        speech = np.concatenate([cut(jobs[item.owner].audio, item.chunk) for item in items])
    clips: list[tuple[float, float]] = []
    pos = 0
    for item in items:
        size = samples(item.chunk)
        clips.append((pos / SAMPLE_RATE, (pos + size) / SAMPLE_RATE))
        pos += size
    longest: dict[int, float] = {}
    for item, (a, b) in zip(items, clips, strict=True):
        longest[item.owner] = max(longest.get(item.owner, 0.0), b - a)
    max_length = s.model.max_tokens
    cap = per_window.rest_tokens(max(longest.values()), max_length, o) if rests and items else None
    own_cap = {j: per_window.rest_tokens(d, max_length, o) for j, d in longest.items()} if rests else {}
    batched = _clips(s, speech, clips, s.window_frames, 2 * cap if cap else None)
    per_clip: list[list[Decoded]] = [[] for _ in clips]
    bs = o.batch_size
    for fw in batched:  # a generator: each batch is decoded when its first segment is asked for
        i = fw.clip  # the backend says which clip: by its times, a last segment past its clip's end went astray
        per_clip[i].append(fw)
        ends: dict[int, int] = {}  # a segment of clip i: its whole batch is decoded
        for item in items[i // bs * bs : min(len(items), (i // bs + 1) * bs)]:
            ends[item.owner] = item.chunk[-1]["end"]
        for j, end in ends.items():
            jobs[j].reached(end)
    out: list[list[Decoded]] = []
    for i, (item, (a, b), segs) in enumerate(zip(items, clips, per_clip, strict=True)):
        if rests:  # the speech after an early stop: keep what it gave, bar loops and text made up from silence
            clip = speech[int(a * SAMPLE_RATE) : int(b * SAMPLE_RATE)]
            if per_window.looped(segs, own_cap[item.owner], o) and per_file.own_speech_s(clip, o) >= o.missing_s:
                # A loop over this much speech says the decoder lost its place, not that there is no speech.
                segs = [fw for fw in decode_sequential(s, clip) if not per_window.hallucinated(fw, o)]
            elif per_window.ran_to_cap(segs, own_cap[item.owner]):
                segs = []
            else:
                segs = [shift(fw, -a) for fw in segs if not per_window.hallucinated(fw, o)]
        elif per_window.suspect(segs, a, b, o):
            kept = per_window.before_loop(segs, b, o)  # the speech after a kept part is decoded on in the next round
            batch = clips[i // bs * bs : (i // bs + 1) * bs]
            segs = (
                [shift(fw, -a) for fw in kept]
                if kept
                else decode_again(s, speech[int(a * SAMPLE_RATE) : int(b * SAMPLE_RATE)], batch)[0]
            )
        else:
            segs = [shift(fw, -a) for fw in segs]
        overran = [fw.end > b - a for fw in segs]
        segs = [within(fw, b - a) for fw in segs]
        mapped = to_window_time(segs, item.chunk)  # chunk time -> the job's time
        speech_map = jobs[item.owner].speech_map
        out.append(
            per_window.without_text_past_end(mapped, overran, speech_map, o) if speech_map is not None else mapped
        )
    return out


def _clips(
    s: Settings,
    audio: np.ndarray,
    clips: list[tuple[float, float]],
    window_frames: int | None,
    max_new_tokens: int | None = None,
) -> Iterable[Decoded]:
    o = s.options
    batched = s.batched or s.model.decode_clips
    return batched(
        audio,
        clips,
        s.prompting,
        batch_size=o.batch_size,
        window_frames=window_frames,
        margin_s=o.encoder_margin_s,
        min_s=o.encoder_min_s,
        max_new_tokens=max_new_tokens,
    )


def decode_again(s: Settings, clip: np.ndarray, batch: list[tuple[float, float]]) -> tuple[list[Decoded], str]:
    """A suspect clip decoded again: first alone in its own encoder window, when that is shorter than its batch's
    (the batch's window is its longest clip's), then, if the result still looks wrong, sequentially with the
    temperature fallback. Greedy decoding can stop after a word or two on a clip that decodes well in another
    window; a pass in the short window costs what its encoder and one clip's decode do, where the sequential decode
    always pays for a 30 s window (docs/performance.md, "A suspect chunk"). Returns the segments and which decode
    gave them: "own window" or "sequential"."""
    o = s.options
    duration = clip.shape[0] / SAMPLE_RATE
    own = s.model.encoder_frames([duration], o.encoder_margin_s, o.encoder_min_s)
    batch_frames = s.model.encoder_frames([b - a for a, b in batch], o.encoder_margin_s, o.encoder_min_s)
    if s.window_frames is None and own < batch_frames:
        again = list(_clips(s, clip, [(0.0, duration)], own))
        if not per_window.suspect(again, 0.0, duration, o):
            return again, "own window"
    return decode_sequential(s, clip), "sequential"


def decode_sequential(s: Settings, audio: np.ndarray) -> list[Decoded]:
    """The model's sequential decode of `audio` with the temperature fallback (0.0 then up by 0.2, `fallback_steps`
    more) and its gates at the options' thresholds."""
    o = s.options
    return s.model.decode_sequential(
        audio,
        s.prompting,
        temperatures=[round(0.2 * i, 1) for i in range(o.fallback_steps + 1)],
        log_prob_threshold=o.min_logprob,
        no_speech_threshold=o.no_speech_prob,
        compression_ratio_threshold=o.max_compression,
        seed=o.sampling_seed,
    )
