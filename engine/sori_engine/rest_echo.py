"""A rest's echo: the words the text before it ended with, written again at the start of a rest.

A rest (the speech after the point where a chunk's decoding stopped, decoded on from the last timestamp; see
decode/rounds.py) starts where Whisper's last timestamp put the end of the text before it. That timestamp
can fall inside the last word, and the rest, decoded without the text before, hears the word's end and writes the
word again: "...98 percent, or the" then "the past 12 months" (bench/rtf.py's en input with 1 s of room tone,
at beam 5 and 1), "...されてしまったようです。" then "です" (ja). WhisperModel.transcribe does not, as the text
before is its prompt; a prompted rest costs more than it gains (docs/performance.md, "The text before across a cut").
So the words said twice are dropped from the rest: its first words where they repeat the last words before it
(at most `max_words` of them, DecodeOptions.rest_echo_words: a timestamp inside the last word or two; more
repeated than that is a sentence said again), or, in text written without spaces, a first segment that only repeats
the end of the text before and is no longer than that many words. Where the job has a speech map, words with
speech of their own under them (beyond the tail of the word before) are no echo but the same words said again
(issue 67). A speaker's own quick "the the" across that point goes; Whisper drops such repeats within a chunk
anyway.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from .model.interface import Decoded
from .verdicts.per_file import normalize

OwnSpeech = Callable[[float, float, str], bool]  # (start, end, text): the span holds its own speech to say the text

UNSPACED_SCRIPTS = ("CJK UNIFIED IDEOGRAPH", "HIRAGANA", "KATAKANA")  # unicodedata names' starts
UNSPACED_WORD_CHARS = 3  # characters a Japanese word takes, about: "です", "ました"


def without_echo(
    rest: list[Decoded], before: Decoded, max_words: int, own_speech: OwnSpeech | None = None
) -> list[Decoded]:
    """A rest's segments (in order) less the words at their start that repeat the end of `before`, the last segment
    of the text before the rest. With `own_speech` (whether a span holds speech of its own, beyond the tail of the
    speech going on at its start, to say a text: the job's speech map), words that do are no echo: the echo is the
    end of a word the cut fell inside, heard on that word's tail, where the same words said again have their own
    speech after it (issue 67: "노래는 잘하지 못하네요" said twice, 0.7 s apart, lost its second time)."""
    first = next((i for i, fw in enumerate(rest) if normalize(fw.text)), None)
    if first is None:
        return rest
    fw = rest[first]
    # Unspaced text's "words" (its whitespace tokens) are whole phrases: only its end is compared.
    n = 0 if _unspaced(fw.text) else _echoed_words(before.text, fw.text, max_words)
    echo = "".join(re.findall(r"\s*\S+", fw.text)[:n]) if n else fw.text
    if not n and not (_unspaced(fw.text) and _echoed_end(before.text, fw.text, max_words)):
        return rest
    if own_speech is not None and own_speech(float(fw.start), _end_of(fw, echo), echo):
        return rest
    if n:
        _drop_words(fw, n)
    else:
        fw.text = ""
    return rest if normalize(fw.text) else rest[:first] + rest[first + 1 :]


def _end_of(fw: Decoded, head: str) -> float:
    """Where the first words of `fw` that spell `head` end: by its word timings, else by their share of its text."""
    chars = len(normalize(head))
    if fw.words:
        spelled = 0
        for w in fw.words:
            spelled += len(normalize(w.word))
            if spelled >= chars:
                return float(w.end)
    return float(fw.start) + (float(fw.end) - float(fw.start)) * chars / max(len(normalize(fw.text)), 1)


def _echoed_words(before: str, text: str, max_words: int) -> int:
    """How many of `text`'s first words (whitespace-separated, compared normalized) repeat `before`'s last ones."""
    said, said_again = before.split(), text.split()
    for n in range(min(max_words, len(said), len(said_again)), 0, -1):
        head = [normalize(w) for w in said_again[:n]]
        if all(head) and head == [normalize(w) for w in said[-n:]]:
            return n
    return 0


def _echoed_end(before: str, text: str, max_words: int) -> bool:
    """Whether unspaced `text` only repeats the end of `before`, and is no longer than `max_words` words of it can
    be (UNSPACED_WORD_CHARS each): a whole sentence said again after the same sentence is speech (issue 67), and
    the rest is decoded on after it."""
    said = normalize(text)
    return len(said) <= max_words * UNSPACED_WORD_CHARS and normalize(before).endswith(said)


def _drop_words(fw: Decoded, n: int) -> None:
    """`fw` without its first `n` words: its text, and its word timings where it has them (as many of Whisper's
    words as spell the dropped text), the segment then starting at its first word left."""
    pieces = re.findall(r"\s*\S+", fw.text)
    dropped = len(normalize("".join(pieces[:n])))
    fw.text = "".join(pieces[n:])
    if fw.words:
        k, spelled = 0, 0
        while k < len(fw.words) and (spelled < dropped or not normalize(fw.words[k].word)):  # and its punctuation
            spelled += len(normalize(fw.words[k].word))
            k += 1
        fw.words = fw.words[k:]
        if fw.words:
            fw.start = fw.words[0].start


def _unspaced(text: str) -> bool:
    """Text of a script written without spaces between words (Japanese, Chinese), more than one letter of it. Not a
    single word of a spaced script: "now" after "...know" is not an echo."""
    letters = normalize(text)
    return len(letters) > 1 and all(unicodedata.name(ch, "").startswith(UNSPACED_SCRIPTS) for ch in letters)
