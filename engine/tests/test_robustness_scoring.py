"""The hallucination count of bench/robustness.py (plain data, no model): what counts as an inserted word."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import robustness

REF_JA = "気象庁は、雪や路面の凍結による交通への影響、雪崩にも十分注意するよう呼びかけています。"


def test_a_trailing_phrase_is_inserted():
    _, words, chars = robustness.inserted(
        "ask what you can do for your country.", "ask what you can do for your country. I'm sorry."
    )
    assert (words, chars) == (2, 7)


def test_a_separate_segment_after_the_reference_is_inserted():
    hyp = "気象庁は、雪や路面の凍結による交通への影響、雪崩にも十分注意するよう呼びかけています。 やっています"
    assert robustness.inserted(REF_JA, hyp)[1] == 1


def test_a_longer_reading_of_the_first_word_is_not_inserted():
    # きょうちょうは (7 characters) for 気象庁は (4): 3 characters spill before the reference, the token is not invented
    hyp = "きょうちょうは、雪や路面の凍結による 交通への影響、雪崩にも十分注意するよう呼びかけています。"
    _, words, chars = robustness.inserted(REF_JA, hyp)
    assert words == 0
    assert chars == 3


def test_a_phrase_glued_to_the_last_words_is_inserted():
    hyp = "十分注意するよう呼びかけています。ご視聴ありがとうございました"
    assert robustness.inserted("十分注意するよう呼びかけています。", hyp)[1] == 1


def test_a_phrase_after_a_misheard_last_word_is_inserted():
    # 2 substituted edge characters (注意 -> 中位) cannot account for the 7 that follow
    assert robustness.inserted("十分注意", "十分中位ご視聴ありがとう")[1] == 1
