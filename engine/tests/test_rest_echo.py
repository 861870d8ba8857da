"""A rest's first words that repeat the text before it are dropped (rest_echo.without_echo, decode/rounds.py).

A rest is decoded from Whisper's last timestamp, which can fall inside the last word: the rest then wrote that word
again ("...98 percent, or the" / "the past 12 months", bench/rtf.py's en input with 1 s of room tone). The
decoded text is plain data in the first tests (a timestamp inside a word cannot be had from the model on demand);
the last runs the real model on the input where the echo was seen.
"""

from __future__ import annotations

import pytest
from fw_segments import fw_segment as segment

from sori_engine.decode_options import DEFAULT
from sori_engine.model.interface import Decoded, DecodedWord
from sori_engine.rest_echo import without_echo

CALLS = ("earnings22_1_4482311_3_62", "earnings22_3_4483589_261_321")


def texts(segments: list[Decoded]) -> list[str]:
    return [fw.text for fw in segments]


@pytest.mark.parametrize(
    ("before", "rest", "left"),
    [
        (" or the", [" the past 12 months,", " underlying"], [" past 12 months,", " underlying"]),
        (" 98 percent, or the", [" Or the past"], [" past"]),  # compared without case or punctuation
        (" 지키는 게 좋지요.", [" 좋지요, 그리고"], [" 그리고"]),
        ("されてしまったようです。", ["です", "次に"], ["次に"]),  # unspaced: a segment that only repeats the end
        (" the end", [" ", " the end.", " Next"], [" ", " Next"]),  # the first segment with text
    ],
)
def test_the_words_said_again_at_a_rests_start_go(before: str, rest: list[str], left: list[str]) -> None:
    assert texts(without_echo([segment(t) for t in rest], segment(before), DEFAULT.rest_echo_words)) == left


@pytest.mark.parametrize(
    ("before", "rest"),
    [
        (" 64 billion.", [" and uh,"]),  # new words
        (" and I know", [" now."]),  # a spaced word that ends the one before is not an echo
        ("ようです。", ["ですね、それで"]),  # more than the end said again
        (" one two three four", [" one two three four five"]),  # more than rest_echo_words: not a timestamp in a word
    ],
)
def test_other_rests_stay_as_they_are(before: str, rest: list[str]) -> None:
    assert texts(without_echo([segment(t) for t in rest], segment(before), DEFAULT.rest_echo_words)) == rest


def test_words_said_again_over_speech_of_their_own_are_no_echo() -> None:
    # The speech map's answer for a span (per_file.SpeechMap.own_seconds against needed): the echo of a cut inside
    # "the" is heard on that word's tail; a sentence said again after a pause has its own speech.
    def own_speech_after(t: float):
        return lambda start, end, _text: end > t and start < t + 2.0

    again = [segment(" 노래는 잘하지 못하네요", 1.4, 3.5)]
    before = segment(" 노래는 잘하지 못하네요", 0.0, 1.4)
    assert texts(without_echo(again, before, DEFAULT.rest_echo_words, own_speech_after(2.2))) == texts(again)
    echo = [segment(" the past 12 months,", 79.1, 80.5)]
    assert texts(without_echo(echo, segment(" or the"), DEFAULT.rest_echo_words, own_speech_after(90.0))) == [
        " past 12 months,"
    ]
    unspaced = [segment("いつでも結構です", 5.0, 6.9)]
    kept = without_echo(unspaced, segment("いつでも結構です"), DEFAULT.rest_echo_words, own_speech_after(5.0))
    assert texts(kept) == ["いつでも結構です"]


def test_a_dropped_word_takes_its_timing_with_it() -> None:
    words = [DecodedWord(start=79.1, end=79.2, word=" the", probability=0.9), DecodedWord(79.2, 79.5, " past", 0.9)]
    (fw,) = without_echo([segment(" the past", 79.1, 79.5, words=words)], segment(" or the"), DEFAULT.rest_echo_words)
    assert (fw.text, fw.start, [w.word for w in fw.words or ()]) == (" past", 79.2, [" past"])


def test_the_dropped_words_timings_are_those_that_spell_them() -> None:
    # Whisper's words need not be the text's whitespace-separated ones: here "98%," is two of them.
    words = [DecodedWord(5.0, 5.3, " 98", 0.9), DecodedWord(5.3, 5.5, "%,", 0.9), DecodedWord(5.5, 5.8, " or", 0.9)]
    (fw,) = without_echo(
        [segment(" 98%, or", 5.0, 5.8, words=words)], segment(" rate of 98%,"), DEFAULT.rest_echo_words
    )
    assert (fw.text, fw.start, [w.word for w in fw.words or ()]) == (" or", 5.5, [" or"])
