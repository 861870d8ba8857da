"""Time placement on plain data (decode.placement): segments moved to file time and kept inside their audio."""

from __future__ import annotations

import pytest
from fw_segments import fw_segment

from sori_engine.decode.placement import in_file, shift, to_segment, within
from sori_engine.model.interface import DecodedWord
from sori_engine.protocol import Segment, Word


def test_a_segment_and_its_words_move_together() -> None:
    fw = shift(
        fw_segment(
            " two words", 1.0, 2.0, words=[DecodedWord(1.0, 1.4, " two", 0.9), DecodedWord(1.4, 2.0, " words", 0.8)]
        ),
        3.0,
    )
    assert (fw.start, fw.end) == (4.0, 5.0)
    assert [(w.start, w.end) for w in fw.words or ()] == [(4.0, 4.4), (4.4, 5.0)]


def test_times_past_the_chunks_speech_end_there() -> None:
    # Whisper's last timestamp can point into the padding after the audio: 6.5 s on a 6 s chunk.
    fw = within(
        fw_segment(" late", 5.0, 6.5, words=[DecodedWord(5.0, 6.2, " late", 0.9), DecodedWord(6.2, 6.5, ".", 0.9)]), 6.0
    )
    assert (fw.start, fw.end) == (5.0, 6.0)
    assert [(w.start, w.end) for w in fw.words or ()] == [(5.0, 6.0), (6.0, 6.0)]
    assert (within(fw_segment(" early", -0.2, 1.0), 6.0).start) == 0.0


def test_a_segment_in_file_time_with_words_only_when_asked() -> None:
    fw = fw_segment(
        " 네, 좋아요.", 0.5, 1.5, words=[DecodedWord(0.5, 0.9, " 네,", 0.9), DecodedWord(0.9, 1.6, " 좋아요.", 0.8)]
    )
    seg = to_segment(fw, "ko", True, 300.0)
    assert seg is not None
    assert (seg.start, seg.end, seg.text, seg.language) == (300.5, 301.5, "네, 좋아요.", "ko")
    assert [(w.start, w.end, w.text) for w in seg.words or ()] == [(300.5, 300.9, " 네,"), (300.9, 301.5, " 좋아요.")]
    assert to_segment(fw, "ko", False, 0.0).words is None  # type: ignore[union-attr]
    assert to_segment(fw_segment("  "), "ko", True, 0.0) is None  # no text, no segment


def test_times_are_kept_inside_the_file() -> None:
    seg = Segment(9.0, 10.4, "끝", "ko", -0.2, 0.01, words=(Word(9.0, 10.4, " 끝", 0.9),))
    placed = in_file(seg, 10.0)
    assert (placed.start, placed.end) == (9.0, pytest.approx(10.0))
    assert placed.words == (Word(9.0, 10.0, " 끝", 0.9),)
    inside = Segment(1.0, 2.0, "a", "en", -0.2, 0.01)
    assert in_file(inside, 10.0) is inside
