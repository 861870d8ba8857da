"""The verdicts on plain data (verdicts.per_window): which batched results are suspect (a loop, a replay, nothing from
speech, a low-confidence pass), and how much of a confident pass that ends in a loop is kept (before_loop). What is
done with a suspect chunk, on the real model: test_decode_regressions.py."""

from __future__ import annotations

from fw_segments import fw_segment

from sori_engine.decode_options import DEFAULT
from sori_engine.model.interface import Decoded, DecodedWord
from sori_engine.verdicts.per_window import before_loop, replay_start, stretched_tail, suspect


def _seg(start: float, end: float, text: str, avg_logprob: float = -0.2, compression_ratio: float = 1.0) -> Decoded:
    return fw_segment(text, start, end, avg_logprob=avg_logprob, compression_ratio=compression_ratio)


def test_a_confident_pass_is_kept_up_to_where_its_loop_starts() -> None:
    # The shape seen on ko26 with 2 s gaps at beam 1: two sentences, then the second again and again.
    first, second = "저는 어린이 장애 환자들을 맡았는데요.", "그는 이리저리 피하면서 길 한 옆으로 걸어갔다."
    segs = [_seg(0.0, 7.0, first), _seg(7.0, 10.0, second), _seg(10.0, 19.0, " " + second)]
    segs += [_seg(19.0, 29.0, (second + " ") * 4, compression_ratio=2.6)]
    assert [fw.text for fw in before_loop(segs, 29.0, DEFAULT)] == [first, second]
    # A loop within a segment (over max_compression) ends what is kept there too.
    kept = before_loop([_seg(0.0, 5.0, first), segs[-1]], 29.0, DEFAULT)
    assert [fw.text for fw in kept] == [first]


def test_a_pass_that_finds_its_place_again_after_a_loop_keeps_what_follows() -> None:
    # The shape of a far-field meeting excerpt at beam 1: a sentence, a run of backchannels written 18 times (over
    # max_compression), then the meeting's next 25 s decoded well. Cut at the run, that speech was lost.
    first = _seg(0.0, 3.3, "And I'm wondering how many meetings there are.")
    yeahs = _seg(3.8, 8.2, "Yeah, " * 18, compression_ratio=5.7)
    after = [_seg(8.2, 8.7, "Okay."), _seg(11.8, 14.3, "So, what do we need to talk about?"), _seg(14.8, 18.7, "So?")]
    assert before_loop([first, yeahs, *after], 29.8, DEFAULT) == [first, yeahs, *after]
    # A short repeat ("Yeah." again) is no loop: the recovered part may hold one.
    short = [_seg(8.2, 8.6, "Yeah."), _seg(8.6, 9.0, "Yeah."), _seg(9.0, 12.0, "The budget is ten euros.")]
    assert before_loop([first, yeahs, *short], 12.0, DEFAULT) == [first, yeahs, *short]
    # What follows a loop must be new text: sentences said before, or a second loop, are no recovery.
    said_again = [first, yeahs, _seg(8.2, 12.0, " " + first.text), _seg(12.0, 13.0, "Ok.")]
    assert before_loop(said_again, 13.0, DEFAULT) == [first]


def test_a_last_word_stretched_over_unwritten_speech_is_found() -> None:
    # Whisper stopped at "the sort of" with 6 s of speech left; alignment gave "of" all of it.
    words = [
        DecodedWord(21.7, 22.16, " really", 0.9),
        DecodedWord(22.4, 22.58, " sort", 0.9),
        DecodedWord(22.58, 28.98, " of", 0.9),
    ]
    stretched = fw_segment(" really sort of", 21.7, 28.98, words=words)
    assert stretched_tail(stretched, DEFAULT) == 22.58
    words[-1] = DecodedWord(22.58, 22.7, " of", 0.9)
    assert stretched_tail(fw_segment(" really sort of", 21.7, 22.7, words=words), DEFAULT) is None
    assert stretched_tail(_seg(0.0, 9.0, "no word times"), DEFAULT) is None


def test_a_pass_that_loops_at_once_or_is_unsure_is_decoded_again() -> None:
    loop = _seg(0.0, 29.0, "아, " * 40, compression_ratio=9.0)
    assert before_loop([loop, _seg(29.0, 30.0, "네.")], 30.0, DEFAULT) == []
    unsure = [_seg(0.0, 7.0, "그 다음엔", avg_logprob=-2.1), _seg(7.0, 9.0, "그 다음엔", avg_logprob=-2.1)]
    assert before_loop(unsure, 9.0, DEFAULT) == []  # low confidence: nothing of it is trusted
    assert before_loop([], 0.0, DEFAULT) == []


def test_a_replay_of_earlier_sentences_is_suspect_and_cut_where_it_starts() -> None:
    # The shape seen on ko26 laid out with 1 s of room tone at beam 5: three sentences, then the first again and the
    # other two again as one segment, over the 0.3 s of the clip after them, at a confident log-probability.
    said = [
        _seg(0.0, 2.0, "와 진짜 용라운"),
        _seg(2.0, 3.5, "난 집에서 봤는데"),
        _seg(3.5, 5.7, "극장 가서 본 사람들은"),
    ]
    replay = [_seg(5.7, 7.4, "와 진짜 용라운"), _seg(7.4, 7.8, "난 집에서 봤는데 극장 가서 본 사람들은")]
    assert suspect(said + replay, 0.0, 6.0, DEFAULT)
    assert before_loop(said + replay, 6.0, DEFAULT) == said
    assert replay_start(said + replay[1:], 6.0, DEFAULT) == 3  # one segment that replays two is enough


def test_a_short_repeat_or_one_said_at_a_speaking_pace_is_not_a_replay() -> None:
    # People say the same short thing twice: a greeting, a yes. That is not a decoding fault.
    segs = [_seg(0.0, 1.0, "여보세요?"), _seg(1.0, 2.0, "여보세요?"), _seg(2.0, 3.0, "네."), _seg(3.0, 4.0, "네.")]
    assert not suspect(segs, 0.0, 4.0, DEFAULT)
    assert replay_start(segs, 4.0, DEFAULT) is None
    # A hold message, or a recording played again within one chunk: the same sentence over as much audio again.
    hold = "고객님의 전화를 연결 중입니다. 잠시만 기다려 주십시오."
    segs = [_seg(0.0, 4.0, hold), _seg(10.0, 14.0, hold)]
    assert replay_start(segs, 14.5, DEFAULT) is None
    assert not suspect(segs, 0.0, 14.5, DEFAULT)


def test_one_sentence_said_again_and_again_at_a_speaking_pace_is_decoded_again() -> None:
    # The shape of a far-field meeting excerpt at beam 1: "It opens a menu." 13 times over 18 s, each segment short
    # and at a speaking pace (no compression, no replay), where the plain decode wrote five different sentences.
    # Left to the file-level loop rule, its text was removed and the speech under it lost.
    head = [_seg(2.1, 5.2, "I don't know about you but usually you right click."), _seg(6.8, 7.9, "It opens a menu.")]
    loop = [_seg(8.9 + 1.5 * i, 9.9 + 1.5 * i, " It opens a menu.") for i in range(12)]
    end = _seg(27.3, 30.0, "Otherwise, you don't really know that.")
    segs = [*head, *loop, end]
    assert replay_start(segs, 30.0, DEFAULT) is None
    assert suspect(segs, 0.0, 30.0, DEFAULT)
    # What is kept is the text before the loop: the new sentence after 16 s of loop is no place found again, and
    # the speech from the loop on is decoded on in the next round.
    assert before_loop(segs, 30.0, DEFAULT) == head
    # Said twice, or a backchannel said again and again, is what people do.
    assert not suspect([*head, loop[0], end], 0.0, 30.0, DEFAULT)
    assert not suspect([_seg(float(i), i + 0.5, "Yeah.") for i in range(6)], 0.0, 6.0, DEFAULT)
