"""The one normal form and its error rates (sori_eval.scoring) against the vectors test/helpers/cer.ts also passes,
and the hallucination count's cases (plain data, no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sori_eval import scoring

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "test" / "fixtures" / "scoring-vectors.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("v", VECTORS["words"], ids=lambda v: v["text"][:30])
def test_normal_form(v: dict) -> None:
    assert scoring.words(v["text"], v["lang"]) == v["words"]


@pytest.mark.parametrize("v", VECTORS["cer"], ids=lambda v: v["ref"][:30])
def test_cer(v: dict) -> None:
    ref = scoring.chars(v["ref"], v["lang"])
    assert (scoring.edit_distance(scoring.chars(v["hyp"], v["lang"]), ref), len(ref)) == (v["edits"], v["ref_chars"])
    assert scoring.cer(v["hyp"], v["ref"], v["lang"]) == v["edits"] / max(1, v["ref_chars"])


@pytest.mark.parametrize("v", VECTORS["wer"], ids=lambda v: v["ref"][:30])
def test_wer(v: dict) -> None:
    assert scoring.wer(v["hyp"], v["ref"], v["lang"]) == v["edits"] / max(1, v["ref_words"])


@pytest.mark.parametrize("v", VECTORS["inserted"], ids=lambda v: v["hyp"][:30])
def test_inserted(v: dict) -> None:
    assert list(scoring.inserted(v["ref"], v["hyp"], v["lang"])) == v["edits_words_chars"]


@pytest.mark.parametrize("v", VECTORS["tails"], ids=lambda v: v["hyp"][:30])
def test_tails(v: dict) -> None:
    got = [f(v["hyp"], v["ref"], v["lang"]) for f in (scoring.extra_tail, scoring.missing_tail, scoring.missing_head)]
    assert got == [v["extra_tail"], v["missing_tail"], v["missing_head"]]


def test_a_spilled_first_word_is_not_an_inserted_word() -> None:
    # きょうちょうは (7 characters) for 気象庁は (4): 3 characters spill before the reference, the token is not invented
    ref = "気象庁は、雪や路面の凍結による交通への影響、雪崩にも十分注意するよう呼びかけています。"
    hyp = "きょうちょうは、雪や路面の凍結による 交通への影響、雪崩にも十分注意するよう呼びかけています。"
    _, words, chars = scoring.inserted(ref, hyp, "ja")
    assert (words, chars) == (0, 3)


def test_a_phrase_after_a_misheard_last_word_is_inserted() -> None:
    # 2 substituted edge characters (注意 -> 中位) cannot account for the 7 that follow
    assert scoring.inserted("十分注意", "十分中位ご視聴ありがとう", "ja")[1] == 1
