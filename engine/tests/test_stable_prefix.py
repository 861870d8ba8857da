"""The interim text a streaming session shows (stream_interim.StablePrefix): what is shown when, and when a shown
word is taken back. Plain data, no model."""

from __future__ import annotations

from sori_engine.stream_interim import StablePrefix


def test_until_anything_is_shown_a_sure_hypothesis_shows_its_start() -> None:
    p = StablePrefix(unspaced=False)
    assert p.update("받으실 거 주소를")  # its last word may be cut off by the end of the audio so far
    assert p.text() == "받으실 거"


def test_a_lone_word_is_shown_and_kept_until_two_hypotheses_agree_on_another() -> None:
    p = StablePrefix(unspaced=False)
    assert p.update("네")  # a short answer: held back, nothing would show before its final
    assert p.text() == "네"
    assert not p.update("내 주소를")
    assert p.update("내 주소를 불러")
    assert p.text() == "내 주소를"


def test_an_unsure_hypothesis_waits_for_a_second_to_agree() -> None:
    p = StablePrefix(unspaced=False)
    assert not p.update("뭐, 뭐, 뭐", sure=False)
    assert p.update("뭐, 뭐, 뭐 보다", sure=False)
    assert p.text() == "뭐, 뭐, 뭐"  # what both agree on


def test_a_shown_word_is_taken_back_only_when_two_hypotheses_agree_on_another() -> None:
    p = StablePrefix(unspaced=False)
    p.update("그 최적으로 어떤")
    assert p.text() == "그 최적으로"
    assert not p.update("구체적으로 어떤 실험을")  # one hypothesis says otherwise: kept
    assert p.text() == "그 최적으로"
    assert p.update("구체적으로 어떤 실험을 하게")  # two agree: replaced
    assert p.text() == "구체적으로 어떤 실험을"


def test_unspaced_text_is_agreed_character_by_character() -> None:
    p = StablePrefix(unspaced=True)
    assert p.update("今日は晴れ")
    assert p.text() == "今日は"  # two characters held back
    assert p.update("今日は晴れです")
    assert p.text() == "今日は晴れ"
    p.reset()
    assert p.text() == ""
