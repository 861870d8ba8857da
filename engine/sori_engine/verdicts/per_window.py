"""Per-window verdicts (the line: verdicts/__init__.py): every check of a chunk's decoded output while its window is
decoded, each a plain function of segments (and the speech map), used by the batched rounds and by streaming. The
file-level rules that run last over the whole transcript (loops, the bag of hallucinations, text on no speech,
unsure text on a tail) are `per_file.clean`.

- `suspect`: a batched clip result worth a second decode (nothing from speech, a loop, an unsure pass, a replay, one
  sentence said again and again);
- `before_loop`: the part of a confident pass before the loop in it, and what follows where the decoder recovered;
- `replay_start`: where a run of segments starts that only says again what the clip said before;
- `hallucinated`: faster-whisper's no-speech rule and the loop rule, for one segment of a rest;
- `on_no_speech`: faster-whisper's no-speech rule on its own (an interim);
- `ran_to_cap` / `rest_tokens` / `looped`: a rest decoded to its token limit, or over `max_compression`, is a loop;
- `stretched_tail`: a last word timed over speech the text does not hold;
- `holds_a_word`: whether speech after a chunk's last segment is worth decoding on;
- `without_text_past_end` / `said_past_end`: text Whisper went on writing after a chunk's speech.

Thresholds are DecodeOptions fields; docs/engine.md ("Verdicts") has why each is what it is.
"""

from __future__ import annotations

import math

import numpy as np

from ..decode_options import DecodeOptions
from ..model.interface import Decoded, DecodedWord
from . import per_file


def suspect(segments: list[Decoded], start_s: float, end_s: float, o: DecodeOptions) -> bool:
    """A batched clip result worth a second decode (rounds.decode_again): nothing at all from a clip with speech, a
    repetition loop, or a low-confidence pass (the thresholds WhisperModel.transcribe uses for its temperature
    fallback). Speech left after the last segment is not a reason: it is decoded on in the next round."""
    texts = [fw for fw in segments if fw.text.strip()]
    if not texts:
        return end_s - start_s >= o.missing_s
    return (
        any(fw.compression_ratio > o.max_compression or fw.avg_logprob < o.min_logprob for fw in texts)
        or replay_start(texts, end_s, o) is not None
        or said_again_and_again(texts, o)
    )


def said_again_and_again(segments: list[Decoded], o: DecodeOptions) -> bool:
    """Whether `loop_repeats` segments in a row say the same sentence (`replay_min_chars` or more,
    normalized): the loop the file-level rules remove (`per_file.clean`), here split into short segments at
    a speaking pace, so neither the compression nor the replay rule sees it ("It opens a menu." 13 times over 18 s
    of a meeting whose plain decode wrote five different sentences there). Judged here, the clip is decoded again;
    left to the last stage, its text is removed and the speech under it lost. A short text said again ("Yeah.",
    "네.") is under the length: people say it again."""
    run, prev = 0, ""
    for fw in segments:
        said = per_file.normalize(fw.text)
        run = run + 1 if said == prev and len(said) >= o.replay_min_chars else 1
        if run >= o.loop_repeats:
            return True
        prev = said
    return False


def replay_start(segments: list[Decoded], end_s: float, o: DecodeOptions) -> int | None:
    """The index of the first segment of a replay: a run of consecutive segments each of whose text (normalized) is
    already in the text before the run, `replay_min_chars` or more in all, over less of the clip's audio (up to
    `end_s`) than `replay_chars_per_s` allows; None when there is none. Each segment alone may be short ("와 진짜
    용라운" again, then the next two sentences again as one segment). The model lost its place and wrote earlier
    text again over audio that cannot hold it; a person repeating a greeting stays under the length, and speech
    said again at a speaking pace under the rate."""
    said = [per_file.normalize(fw.text) for fw in segments]
    k = 0
    while k < len(said):
        before = "".join(said[:k])
        end = k
        while end < len(said) and said[end] and said[end] in before:
            end += 1
        chars = sum(len(t) for t in said[k:end])
        if chars >= o.replay_min_chars:
            span = min(segments[end - 1].end, end_s) - segments[k].start
            if chars > o.replay_chars_per_s * max(span, 0.0):
                return k
        k = max(end, k + 1)
    return None


def before_loop(segments: list[Decoded], end_s: float, o: DecodeOptions) -> list[Decoded]:
    """What of a confident pass is kept when a repetition loop starts in it: the segments before the loop (a segment
    over `max_compression`, one that says again a sentence an earlier one said, or the first of a replay:
    `replay_start`), and, where the decoder found its place again after it, the loop segment and what follows
    (`recovered_after`); none when the pass is not confident or the loop starts at once with nothing new after it.
    `end_s`: the clip's end. A loop is how greedy and beam decoding end a clip they lost their place in: what came
    before it was decoded like any clip's text, and the sequential re-decode of the whole clip can lose it. A short
    text said again ("Yeah.", "네.": under `replay_min_chars`) is no sign of a loop: people say it again."""
    texts = [fw for fw in segments if fw.text.strip()]
    if not texts or any(fw.avg_logprob < o.min_logprob for fw in texts):
        return []
    replay = replay_start(texts, end_s, o)
    replayed = texts[replay] if replay is not None else None
    seen: set[str] = set()
    for k, fw in enumerate(segments):
        said = per_file.normalize(fw.text)
        repeated = len(said) >= o.replay_min_chars and said in seen
        if fw.compression_ratio > o.max_compression or repeated or fw is replayed:
            recovered = [] if replay is not None else recovered_after(segments, k, seen, o)
            looped = [fw] if recovered and fw.compression_ratio > o.max_compression else []
            head = segments[:k] + looped + recovered
            return head if any(x.text.strip() for x in head) else []
        seen.add(said)
    return []


def recovered_after(segments: list[Decoded], k: int, seen: set[str], o: DecodeOptions) -> list[Decoded]:
    """The segments after loop segment k that show the decoder found its place again: new text (no loop, no
    sentence said before), `replay_min_chars` or more of it, once the loop segments skipped after k cover less than
    `missing_s` of the clip; none otherwise. Without them the speech after the text before the loop is decoded on in
    the next round; with them that speech already has its text, and dropping it would lose real speech (a run of
    backchannels, "Yeah, yeah, yeah...", then a meeting's next 25 s). A loop that went on over `missing_s` is not a
    place found again: the speech under it was never written."""
    said_before = "".join(seen)
    out: list[Decoded] = []
    skipped_s = 0.0
    for fw in segments[k + 1 :]:
        said = per_file.normalize(fw.text)
        if fw.compression_ratio > o.max_compression or (len(said) >= o.replay_min_chars and said in said_before):
            if not out:
                skipped_s += max(0.0, float(fw.end) - float(fw.start))
            continue
        out.append(fw)
        said_before += said
    if skipped_s >= o.missing_s:
        return []
    new_chars = sum(len(per_file.normalize(fw.text)) for fw in out)
    return out if new_chars >= o.replay_min_chars else []


def looped(segments: list[Decoded], cap: int | None, o: DecodeOptions) -> bool:
    """A rest decoded to its token limit (`ran_to_cap`), with a segment over `max_compression`, or saying one
    sentence again and again (`said_again_and_again`): a loop."""
    return (
        ran_to_cap(segments, cap)
        or any(fw.compression_ratio > o.max_compression for fw in segments)
        or said_again_and_again([fw for fw in segments if fw.text.strip()], o)
    )


def stretched_tail(fw: Decoded, o: DecodeOptions) -> float | None:
    """The start of a segment's last word when alignment timed that word longer than any word is said
    (`longest_word_s`), else None. Whisper can end a chunk's text early, mid-sentence, when its speech runs to the
    end of the window ("...so they're not really the sort of", the last 6 s of a meeting excerpt not written); the
    segment still ends at the chunk's end and word alignment stretches its last word over the speech it did not
    write. From that word's start, that speech is decoded on like any rest (whose first word, said again, rest_echo
    drops)."""
    last = last_word(fw)
    if last is None or last.end - last.start <= o.longest_word_s:
        return None
    return float(last.start)


def last_word(fw: Decoded) -> DecodedWord | None:
    """The segment's last word with text (its word timestamps), None without them."""
    return next((w for w in reversed(fw.words or ()) if w.word.strip()), None)


def on_no_speech(no_speech_prob: float, avg_logprob: float, o: DecodeOptions) -> bool:
    """WhisperModel.transcribe's no-speech rule: the model thinks there is no speech and is unsure of its text."""
    return no_speech_prob > o.no_speech_prob and avg_logprob < o.min_logprob


def hallucinated(fw: Decoded, o: DecodeOptions) -> bool:
    """A repetition loop (over `max_compression`), or text the model made up from silence (`on_no_speech`): what
    is dropped from a rest, which is not decoded again (docs/engine.md, "Decoding stages")."""
    return fw.compression_ratio > o.max_compression or on_no_speech(fw.no_speech_prob, fw.avg_logprob, o)


def rest_tokens(duration_s: float, max_length: int, o: DecodeOptions) -> int | None:
    """The most tokens rests of up to `duration_s` of speech can hold (`rest_tokens_per_s`, `rest_tokens_min`), None
    where that is more than a decode can be capped at. The cap passed as `max_new_tokens` is twice that: CTranslate2
    4.8's Whisper stops at half of the prompt and `max_new_tokens` together, so a loop ends just past the limit, and
    one that ran the whole cap would be over it too. At most half of Whisper's context (`max_length`), which leaves
    the prompt (hotwords, initial prompt: at most half too) its room."""
    limit = math.ceil(o.rest_tokens_per_s * duration_s) + o.rest_tokens_min
    return limit if 2 * limit <= max_length // 2 else None


def ran_to_cap(segments: list[Decoded], cap: int | None) -> bool:
    """A rest decoded to its token limit (`rest_tokens`): all its tokens went to a repetition loop."""
    return cap is not None and sum(len(fw.tokens) for fw in segments) >= cap


def holds_a_word(rest_audio: np.ndarray, o: DecodeOptions) -> bool:
    """Whether the speech after a chunk's last segment has a word's worth of speech frames of its own. The VAD's
    regions carry padding and the last word's hang-over, on which Whisper decoded on invents confident text
    (docs/audio.md, "Speed: batched decoding")."""
    return per_file.own_speech_s(rest_audio, o) >= o.word_speech_s


def without_text_past_end(
    segments: list[Decoded], overran: list[bool], speech: per_file.SpeechMap, o: DecodeOptions
) -> list[Decoded]:
    """One chunk's segments (window time, in order) less those that `overran` its end and `said_past_end`, each
    measured from the end of the segment before it (its own start for the first)."""
    kept: list[Decoded] = []
    since = segments[0].start if segments else 0.0
    for fw, past in zip(segments, overran, strict=True):
        if not (past and said_past_end(fw, min(since, fw.start), speech, o)):
            kept.append(fw)
        since = fw.end
    return kept


def said_past_end(fw: Decoded, since: float, speech: per_file.SpeechMap, o: DecodeOptions) -> bool:
    """Whether a segment Whisper timed past the end of its chunk's audio (window time, clipped to that end) is
    text the model went on writing after the speech: from `since` (the end of the segment before it) to the end
    there is not a word's worth of speech frames (`word_speech_s`, what a rest needs to be decoded on at all).
    The file-level rule 4 asks this only of unsure segments, but a batched chunk's segments share one avg_logprob,
    so an invented last segment of a confident chunk passed it (docs/performance.md). Counted from the segment
    before, as a word's worth: a real "Thank you." said right after the sentence before it is timed from that
    sentence's end and has 0.32 s of speech frames there."""
    return speech.seconds(since, fw.end, o) < o.word_speech_s
