"""Per-file verdicts, hallucination control (the line: verdicts/__init__.py): the last stage of `transcribe`, over
the segments in file time and the file's speech map.

Whisper invents text where there is no speech (a closing phrase on trailing line noise, "Thank you." after the
last word) and loops (one phrase repeated until the window ends). Four rules, each a plain function over plain
data (docs/engine.md has the measurements and why each threshold):

1. Loops and repeats, one rule (`copies_said`): a unit of 2+ characters (or 1+ words) repeated 3+ times in a row
   inside a segment (`deloop`), a segment that repeats its predecessor's text (`repeats_previous`), and leading
   words that continue the predecessor's last word to `loop_repeats` (`deloop_across`) keep as many copies as the
   audio says: each copy after the first needs speech of its own under it. A card number's group read again, "네,
   네, 네" and a sentence said twice are speech; a decoder loop runs on past the speech.
2. Bag of hallucinations (Barański et al. 2025): a run of a segment's words that is made only of the phrases
   Whisper is known to invent on non-speech (hallucinations/<lang>.txt: data, with its sources) is removed where
   the audio under it is not speech -- under each word, or under the run as a whole, less time of frames with a
   Silero speech probability of `speech_frame_prob` or more than saying it takes (`needed`) -- at the segment's end, its
   start, or as the whole segment. Under real speech it stays, so a caller who says 감사합니다 keeps it.
3. Text on no speech at all: a segment under which less than `no_speech_share` of the frames are speech is dropped,
   whatever it says.
4. Unsure text on the tail of earlier speech: a segment the decoder was unsure of (avg_logprob under
   `min_logprob`) is dropped when the speech under it, less the tail of the speech going on when it starts
   (up to `tail_carry_s`), is less than saying its text takes (`needed`): "Yeah." / "I'm sorry." timed 10.36-10.84 s
   after JFK's last word, over nothing but the last 0.17 s of that word's speech frames.

Time spans of parts of a segment come from its word timestamps when the job asked for words, else from the share
of the segment's characters (Whisper's segments are a sentence or so, so the estimate is good to a word or two).

Every threshold is a DecodeOptions field (the request's, or a streaming session's), passed as `o`.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from .. import vad
from ..decode_options import DecodeOptions
from ..transcript import Segment, Word
from ..vad import FRAME_S


@dataclass(frozen=True)
class SpeechMap:
    """Silero speech probability of each 32 ms frame of the file (frame i covers [i, i+1) * FRAME_S); a frame is
    speech at `o.speech_frame_prob` or more."""

    probs: np.ndarray

    def share(self, start: float, end: float, o: DecodeOptions) -> float:
        """Share of the frames in [start, end) that are speech; a span shorter than a frame looks at its frame."""
        a = max(int(start / FRAME_S), 0)
        b = max(int(np.ceil(end / FRAME_S)), a + 1)
        frames = self.probs[a:b]
        if frames.size == 0:
            return 0.0
        return float(np.mean(frames >= o.speech_frame_prob))

    def seconds(self, start: float, end: float, o: DecodeOptions) -> float:
        """Seconds of speech frames in [start, end)."""
        a = max(int(start / FRAME_S), 0)
        b = max(int(np.ceil(end / FRAME_S)), a)
        return float(np.count_nonzero(self.probs[a:b] >= o.speech_frame_prob)) * FRAME_S

    def own_seconds(self, start: float, end: float, o: DecodeOptions) -> float:
        """Seconds of speech frames in [start, end) less the run of speech already going on at `start` (up to
        `tail_carry_s` of it): the tail of the speech before, which a segment timed from there does not own."""
        total = self.seconds(start, end, o)
        a = max(int(start / FRAME_S), 0)
        b = min(max(int(np.ceil(end / FRAME_S)), a), self.probs.size)
        if a == 0 or a > self.probs.size or self.probs[a - 1] < o.speech_frame_prob:
            return total
        run = a
        while run < b and self.probs[run] >= o.speech_frame_prob:
            run += 1
        return max(0.0, total - min((run - a) * FRAME_S, o.tail_carry_s))


def speech_probs(audio: np.ndarray) -> np.ndarray:
    """Silero's speech probability per 32 ms frame of 16 kHz `audio` (the model faster-whisper's VAD runs; a
    batched ONNX pass, a few ms of CPU per second of audio)."""
    return vad.probabilities(audio)


def own_speech_s(audio: np.ndarray, o: DecodeOptions) -> float:
    """Seconds of Silero speech frames in 16 kHz `audio`, less the run of speech it starts with (up to
    `tail_carry_s`): the hang-over of a word that ended just before it. What the transcriber's tail round asks of
    the speech after a clip's last segment before decoding it again."""
    speech = speech_probs(audio) >= o.speech_frame_prob
    lead = int(np.argmin(speech)) if not speech.all() else speech.size
    return float(np.count_nonzero(speech) - min(lead, round(o.tail_carry_s / FRAME_S))) * FRAME_S


class SpeechMapBuilder:
    """Collects the probabilities of consecutive stretches of the file (the transcriber's windows)."""

    def __init__(self) -> None:
        self.parts: list[np.ndarray] = []
        self.frames = 0

    def add_probs(self, offset_sample: int, probs: np.ndarray) -> None:
        """Places the probabilities of a stretch that starts at `offset_sample` (the transcriber's window, here or
        in an earlier process whose checkpoint kept them); frames sit on the file's 32 ms grid, so windows of any
        length do not drift."""
        first = round(offset_sample / vad.FRAME)
        if first < self.frames:  # overlap by a fraction of a frame: drop what is already there
            self.parts[-1] = self.parts[-1][: first - (self.frames - self.parts[-1].size)]
            self.frames = first
        elif first > self.frames:
            self.parts.append(np.zeros(first - self.frames, dtype=np.float32))
            self.frames = first
        self.parts.append(probs)
        self.frames += probs.size

    def build(self) -> SpeechMap:
        return SpeechMap(np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.float32))


# ------------------------------------------------------------------------------------------------ text helpers
def normalize(text: str) -> str:
    """What matching compares: NFKC, lower case, no spaces, punctuation or symbols."""
    return "".join(
        ch
        for ch in unicodedata.normalize("NFKC", text).lower()
        if unicodedata.category(ch)[0] not in "ZPS" and not ch.isspace()
    )


@functools.cache
def phrases(language: str, folder: str = "hallucinations") -> frozenset[str]:
    """The bag of hallucinations of a language (normalized), empty for a language without a list; with
    `folder="backchannels"`, its backchannels ("yeah", "네", "はい": said again and again by listeners, not a loop)."""
    resource = (
        importlib.resources.files("sori_engine").joinpath(folder).joinpath(f"{language}.txt")
    )  # one part per call on 3.10
    if not resource.is_file():
        return frozenset()
    lines = resource.read_text(encoding="utf-8").splitlines()
    return frozenset(normalize(line) for line in lines if line.strip() and not line.startswith("#"))


def made_of(text: str, bag: frozenset[str]) -> bool:
    """Whether normalized `text` is a sequence of one or more bag phrases (word break by dynamic programming)."""
    if not text or not bag:
        return False
    longest = max(map(len, bag))
    ok = [True] + [False] * len(text)
    for end in range(1, len(text) + 1):
        ok[end] = any(ok[start] and text[start:end] in bag for start in range(max(0, end - longest), end))
    return ok[-1]


# ------------------------------------------------------------------------------------------------ pieces
@dataclass(frozen=True)
class Piece:
    """A word of a segment with its times: a Whisper word, or a whitespace token (a character for unspaced text)
    with times estimated from its share of the segment's characters."""

    text: str  # as in the segment, leading space included
    start: float
    end: float
    word: Word | None


def pieces(seg: Segment) -> list[Piece]:
    if seg.words:
        return [Piece(w.text, w.start, w.end, w) for w in seg.words]
    tokens = re.findall(r"\s*\S+", seg.text)
    if len(tokens) <= 1 and len(seg.text) > 1:  # unspaced text (Japanese): a character is a piece
        tokens = list(seg.text)
    sizes = [max(len(normalize(t)), 0) for t in tokens]
    total = sum(sizes) or 1
    out, pos = [], 0
    span = seg.end - seg.start
    for token, size in zip(tokens, sizes, strict=True):
        a = seg.start + span * pos / total
        pos += size
        out.append(Piece(token, a, seg.start + span * pos / total, None))
    return out


def rebuild(seg: Segment, kept: list[Piece]) -> Segment | None:
    """The segment with only `kept` pieces (None when nothing with text is left); times shrink to the kept words."""
    text = "".join(p.text for p in kept).strip()
    if not normalize(text):
        return None
    words = None if seg.words is None else tuple(p.word for p in kept if p.word is not None)
    start = max(seg.start, kept[0].start)
    end = max(start, min(seg.end, kept[-1].end))
    return replace(seg, text=text, words=words, start=start, end=end)


# ------------------------------------------------------------------------------------------------ rule 1: loops
def _loop_span(
    units: list[str], repeats: int, skip: Callable[[int, int, int], bool] = lambda *_: False
) -> tuple[int, int, int] | None:
    """The first run of a unit of k units repeated `repeats`+ times that `skip(start, k, reps)` does not excuse:
    (start, k, reps)."""
    n = len(units)
    for start in range(n):
        for k in range(1, (n - start) // repeats + 1):
            unit = units[start : start + k]
            if len(normalize("".join(unit))) < 2:
                continue
            reps = 1
            while units[start + reps * k : start + (reps + 1) * k] == unit:
                reps += 1
            if reps >= repeats and not skip(start, k, reps):
                return start, k, reps
    return None


def backchannel_run(text: str, language: str) -> bool:
    """Whether `text` is only backchannels of `language` ("Yeah, yeah, yeah.", "네 네 네", "はいはい")."""
    return made_of(normalize(text), phrases(language, "backchannels"))


def copies_said(speech: SpeechMap | None, copies: list[tuple[float, float]], unit: str, o: DecodeOptions) -> int:
    """The repeat rule: how many of a repeated unit's copies (their spans, in order) the audio says, counted from
    the first: each needs speech of its own under it, as much as saying `unit` takes (`needed`), and all of them
    together that many times as much. A person who says a card number's group again, "네, 네, 네" or a sentence
    twice has each copy's speech under it; a decoder loop writes its copies on past the speech (into silence, hiss,
    the tail of the last word) or more copies than the audio can hold. The first copy is always counted: what is
    judged is the repeating, not the text. Without a speech map (`speech` None) nothing vouches for a copy: 1."""
    if speech is None or not copies:
        return min(1, len(copies))
    need = needed(unit, o)
    said = 1
    for start, end in copies[1:]:
        if speech.seconds(start, end, o) < need:
            break
        said += 1
    while said > 1 and speech.seconds(copies[0][0], copies[said - 1][1], o) < said * need:
        said -= 1
    return said


def _spans_by_share(seg: Segment, a: int, b: int, k: int, reps: int) -> list[tuple[float, float]]:
    """The spans of `reps` copies of k characters of `seg.text` from character a on, estimated from their share
    of the segment's characters (a segment without word timestamps)."""
    total = max(len(seg.text), 1)
    span = seg.end - seg.start
    return [
        (seg.start + span * (a + i * k) / total, seg.start + span * min(a + (i + 1) * k, b) / total)
        for i in range(reps)
    ]


@functools.cache
def _looped(repeats: int) -> re.Pattern[str]:
    """A run of characters said `repeats` or more times in a row."""
    return re.compile(r"(\S.+?)\1{" + str(repeats - 1) + ",}", re.DOTALL)


def deloop(seg: Segment, o: DecodeOptions, speech: SpeechMap | None = None) -> Segment | None:
    """A unit repeated `loop_repeats`+ times in a row keeps as many copies as the audio says (`copies_said`, at
    least one): at the word level when the segment has words, else on the text's characters (a loop
    "スタッフェンススタッフェンス..." inside one token). `speech`: the file's speech map."""
    if seg.words or len(seg.text.split()) >= o.loop_repeats:
        # Words, or whitespace tokens compared normalized: "멈쩍합니다. 멈쩍합니다, 멈쩍합니다." (seen at 5 dB SNR)
        # differs in its punctuation, so the text pattern below misses it.
        ps = pieces(seg)
        units = [normalize(p.text) for p in ps]

        def kept(start: int, k: int, reps: int) -> int:
            copies = [(ps[start + i * k].start, ps[start + (i + 1) * k - 1].end) for i in range(reps)]
            return copies_said(speech, copies, "".join(p.text for p in ps[start : start + k]), o)

        changed = False
        while (found := _loop_span(units, o.loop_repeats, lambda *run: kept(*run) == run[2])) is not None:
            start, k, reps = found
            keep = kept(start, k, reps)
            del ps[start + keep * k : start + reps * k]
            del units[start + keep * k : start + reps * k]
            changed = True
        if changed:
            return rebuild(seg, ps)
        if seg.words or backchannel_run(seg.text, seg.language):
            return seg
    text = seg.text

    def keep_said(m: re.Match[str]) -> str:
        unit = m.group(1)
        if len(normalize(unit)) < 2:
            return m.group(0)
        reps = len(m.group(0)) // len(unit)
        spans = _spans_by_share(seg, m.start(), m.end(), len(unit), reps)
        return unit * copies_said(speech, spans, unit, o)

    new = _looped(o.loop_repeats).sub(keep_said, text)
    if new == text:
        return seg
    return replace(seg, text=new.strip()) if normalize(new) else None


# ------------------------------------------------------------------------------------------------ rules 2 and 3
def needed(text: str, o: DecodeOptions) -> float:
    """Seconds of speech frames a word needs under it to count as said (`word_speech_s`, `syllable_speech_s`,
    `letter_speech_s`)."""
    chars = normalize(text)
    latin = sum(1 for ch in chars if ch.isascii())
    return max(o.word_speech_s, latin * o.letter_speech_s + (len(chars) - latin) * o.syllable_speech_s)


def _span(ps: list[Piece], i: int, seg: Segment, o: DecodeOptions) -> tuple[float, float]:
    """The span whose speech is measured for piece i: its word timestamps, or its estimated span widened by
    `span_margin_s` towards its neighbours in the segment -- not past the segment's own start or end, which are
    Whisper's timestamp tokens (widened past them, a phrase invented after the last word takes in that word's
    speech)."""
    p = ps[i]
    if p.word is not None:
        return p.start, p.end
    start = p.start if i == 0 else p.start - o.span_margin_s
    end = p.end if i == len(ps) - 1 else p.end + o.span_margin_s
    return max(start, seg.start), min(end, seg.end)


def trim(seg: Segment, speech: SpeechMap, bag: frozenset[str], o: DecodeOptions) -> Segment | None:
    """Remove the segment when it is on no speech; else the longest trailing and leading runs of words that are
    made of bag phrases and each lie on non-speech (one word on speech ends the run, so "네, 좋아요" said after an
    invented "감사합니다" keeps its "네")."""
    if speech.share(seg.start, seg.end, o) < o.no_speech_share:
        return None
    ps = pieces(seg)
    n = len(ps)
    silent = [speech.seconds(*_span(ps, i, seg, o), o) < needed(p.text, o) for i, p in enumerate(ps)]

    def bag_run(run: list[Piece]) -> bool:
        return made_of(normalize("".join(p.text for p in run)), bag)

    first = n  # the trailing stretch of words on non-speech starts here
    while first > 0 and silent[first - 1]:
        first -= 1

    def too_short(a: int, b: int) -> bool:
        """The run ps[a:b] as a whole has less speech under its own span than saying it takes. Only for runs that
        take more than `word_speech_s` (a phrase, not a one-syllable 네, whose estimated span is too rough), and
        needed where its pieces, judged one by one with margins, each catch the last real word's speech: an
        unspaced phrase is cut into characters."""
        need = needed("".join(p.text for p in ps[a:b]), o)
        return need > o.word_speech_s and speech.seconds(ps[a].start, ps[b - 1].end, o) < need

    tail = next((i for i in range(n) if (i >= first or too_short(i, n)) and bag_run(ps[i:])), n)
    last = 0  # the leading stretch ends here
    while last < tail and silent[last] and _silent_up_to_next(ps, last, seg, speech, o):
        last += 1
    head = next((j for j in range(tail, 0, -1) if (j <= last or too_short(0, j)) and bag_run(ps[:j])), 0)
    if (head, tail) == (0, n):
        return seg
    if all(silent[head:tail]):
        # What is left beside an invented phrase is on non-speech too: a fragment of the same invention (seen on
        # AMR-NB: "자막은" before "구독과 좋아요 부탁드립니다", the phrase list holding only "자막").
        return None
    return rebuild(seg, ps[head:tail])


def _silent_up_to_next(ps: list[Piece], i: int, seg: Segment, speech: SpeechMap, o: DecodeOptions) -> bool:
    """Whether leading piece i lacks the speech it needs from its start up to the next piece's start. Whisper times
    the first word after a pause early and short: a real "네," at 12.83-12.99 s over speech from 12.88 s (0.13 s of
    it), "네." at 25.68-25.80 s, a span that cannot hold the 0.15 s asked (multi/deeply_ko_dialogue_constructed.wav);
    both were removed. The gap to the next word is no other word's, so it is counted for this one; trailing words
    are not widened so, as the speech before them is the previous word's hang-over (rule 4's `tail_carry_s`)."""
    start, end = _span(ps, i, seg, o)
    if i + 1 < len(ps):
        end = max(end, ps[i + 1].start)
    return speech.seconds(start, end, o) < needed(ps[i].text, o)


def unsure_on_tail(seg: Segment, speech: SpeechMap, o: DecodeOptions) -> bool:
    """Rule 4: the decoder was unsure of the segment and the speech it owns could not have said its text. Both
    are asked: a confident segment right after a pause of the VAD's tail is real speech, and an unsure one over
    enough speech of its own is a hard passage, not an invention (batched segments of one chunk share the chunk's
    avg_logprob, so a low value alone says little about one segment)."""
    return seg.avg_logprob < o.min_logprob and speech.own_seconds(seg.start, seg.end, o) < needed(seg.text, o)


def deloop_across(prev: Segment, seg: Segment, o: DecodeOptions, speech: SpeechMap | None = None) -> Segment | None:
    """`seg` without its leading words that go on repeating the word `prev` ends with, when the run reaches
    `loop_repeats`, but for as many of them as the audio says (`copies_said`): a loop split across segments
    ("멈쩍합니다." | "멈쩍합니다, 멈쩍합니다.", seen at 5 dB SNR)."""
    before = [normalize(p.text) for p in pieces(prev)]
    if not before or len(before[-1]) < 2:
        return seg
    reps = 0
    while reps < len(before) and before[len(before) - 1 - reps] == before[-1]:
        reps += 1
    ps = pieces(seg)
    k = 0
    while k < len(ps) and normalize(ps[k].text) == before[-1]:
        k += 1
    if k == 0 or reps + k < o.loop_repeats:
        return seg
    last = pieces(prev)[-1]
    copies = [(last.start, last.end)] + [(p.start, p.end) for p in ps[:k]]
    keep = copies_said(speech, copies, last.text, o) - 1
    if keep >= k:
        return seg
    rest = ps[:keep] + ps[k:]
    return rebuild(seg, rest) if rest else None


def repeats_previous(out: list[Segment], seg: Segment, speech: SpeechMap | None, o: DecodeOptions) -> bool:
    """`seg` says the sentence (`repeat_min_chars` or more) of the segment before it again, and the audio does not
    say that copy (`copies_said` over the run of segments saying it, `seg` the last): a loop across segments,
    dropped. A speaker says a sentence, a greeting or a card number's group again, each time over speech of its
    own; Whisper also writes the previous sentence again over the next one's speech (AMR-NB
    ko/deeply_dancestudio_sub100110a00036: "연결만 보면 꼭 나오는데" twice, the copy over the 1.8 s of "면접만 보면 꼭
    떨어지네"), where dropping the copy would leave that speech with no text at all (17 edits against 15 kept)."""
    text = normalize(seg.text)
    if not out or len(text) < o.repeat_min_chars or normalize(out[-1].text) != text:
        return False
    run = [seg]
    while len(run) <= len(out) and normalize(out[-len(run)].text) == text:
        run.insert(0, out[-len(run)])
    if speech is None:
        return True
    own = speech.own_seconds(seg.start, seg.end, o) >= needed(seg.text, o)
    return not own or copies_said(speech, [(s.start, s.end) for s in run], seg.text, o) < len(run)


def clean(segments: list[Segment], speech: SpeechMap | None, o: DecodeOptions) -> list[Segment]:
    """Apply the four rules to time-ordered segments (each with its own `language`, which picks the bag), with the
    thresholds of `o`. Without a speech map only loops are handled."""
    out: list[Segment] = []
    for seg in segments:
        cleaned = deloop(seg, o, speech)
        if cleaned is not None and speech is not None:
            cleaned = trim(cleaned, speech, phrases(seg.language), o)
        if cleaned is not None and speech is not None and unsure_on_tail(cleaned, speech, o):
            cleaned = None
        if cleaned is not None and out:
            cleaned = deloop_across(out[-1], cleaned, o, speech)
        if cleaned is None:
            continue
        if repeats_previous(out, cleaned, speech, o):
            continue
        out.append(cleaned)
    return out
