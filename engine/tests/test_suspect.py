"""A suspect chunk (no text from speech, a loop, a low-confidence pass) decoded again: first alone in its own,
shorter encoder window, and sequentially only when that is no better or not possible (transcriber._decode_again);
a confident pass that ends in a loop is kept up to the loop instead (transcriber._before_loop)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import transcripts
from faster_whisper.transcribe import Segment as FwSegment
from fw_segments import fw_segment

from sori_engine import audio as audio_io
from sori_engine import models, transcriber
from sori_engine.protocol import ModelConfig, TranscribeParams

SR = audio_io.SAMPLE_RATE
JFK = "en/whisper_jfk.flac"  # 11 s


@pytest.fixture
def sequential(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The length of each clip the sequential re-decode is given (the real one runs)."""
    calls: list[float] = []
    real = transcriber._decode_sequential

    def spy(model: Any, audio: np.ndarray, language: str, req: TranscribeParams) -> list[FwSegment]:
        calls.append(audio.shape[0] / SR)
        return real(model, audio, language, req)

    monkeypatch.setattr(transcriber, "_decode_sequential", spy)
    return calls


def _again(
    clip: np.ndarray, model: dict[str, Any], batch: list[tuple[float, float]], window_frames: int | None = None
) -> list[FwSegment]:
    req = TranscribeParams(audio_path="", model=ModelConfig(**model), language_mode="fixed", language="en")
    return transcriber._decode_again(models.get_model(req.model), clip, "en", req, window_frames, batch)


def test_a_clip_shorter_than_its_batch_is_decoded_again_in_its_own_window(
    testdata: Path, model: dict[str, Any], sequential: list[float]
) -> None:
    # JFK (11 s) batched with a 28 s clip: the batch's window is 29 s, JFK's own 12 s.
    clip = audio_io.decode(str(testdata / JFK))
    segs = _again(clip, model, [(0.0, 11.0), (11.0, 39.0)])
    assert sequential == []
    text = " ".join(fw.text for fw in segs)
    assert transcripts.cer(text, transcripts.reference(testdata, JFK)) <= 0.3, text
    assert all(0.0 <= fw.start <= fw.end <= clip.shape[0] / SR + 0.5 for fw in segs)  # clip time, as sequential's


def test_a_clip_as_long_as_its_batch_window_goes_to_the_sequential_decode(
    testdata: Path, model: dict[str, Any], sequential: list[float]
) -> None:
    clip = audio_io.decode(str(testdata / JFK))
    segs = _again(clip, model, [(0.0, 11.0), (11.0, 19.0)])  # JFK is the batch's longest clip
    assert sequential == [pytest.approx(clip.shape[0] / SR)]
    assert transcripts.cer(" ".join(fw.text for fw in segs), transcripts.reference(testdata, JFK)) <= 0.3


def test_a_fixed_window_goes_to_the_sequential_decode(
    testdata: Path, model: dict[str, Any], sequential: list[float]
) -> None:
    # A streaming utterance's window is fixed (window_frames): another pass in it would decode the same.
    _again(audio_io.decode(str(testdata / JFK)), model, [(0.0, 11.0), (11.0, 39.0)], window_frames=3000)
    assert len(sequential) == 1


def test_a_clip_still_suspect_in_its_own_window_goes_to_the_sequential_decode(
    model: dict[str, Any], sequential: list[float]
) -> None:
    # 5 s of digital silence: no text in its own window either (suspect: 3 s or more of "speech" gave none).
    _again(np.zeros(5 * SR, dtype=np.float32), model, [(0.0, 5.0), (5.0, 33.0)])
    assert sequential == [5.0]


def _seg(start: float, end: float, text: str, avg_logprob: float = -0.2, compression_ratio: float = 1.0) -> FwSegment:
    return fw_segment(text, start, end, avg_logprob=avg_logprob, compression_ratio=compression_ratio)


def test_a_confident_pass_is_kept_up_to_where_its_loop_starts() -> None:
    # The shape seen on ko26 with 2 s gaps at beam 1: two sentences, then the second again and again.
    first, second = "저는 어린이 장애 환자들을 맡았는데요.", "그는 이리저리 피하면서 길 한 옆으로 걸어갔다."
    segs = [_seg(0.0, 7.0, first), _seg(7.0, 10.0, second), _seg(10.0, 19.0, " " + second)]
    segs += [_seg(19.0, 29.0, (second + " ") * 4, compression_ratio=2.6)]
    assert [fw.text for fw in transcriber._before_loop(segs, 29.0)] == [first, second]
    # A loop within a segment (over MAX_COMPRESSION) ends what is kept there too.
    kept = transcriber._before_loop([_seg(0.0, 5.0, first), segs[-1]], 29.0)
    assert [fw.text for fw in kept] == [first]


def test_a_pass_that_finds_its_place_again_after_a_loop_keeps_what_follows() -> None:
    # The shape of a far-field meeting excerpt at beam 1: a sentence, a run of backchannels written 18 times (over
    # MAX_COMPRESSION), then the meeting's next 25 s decoded well. Cut at the run, that speech was lost.
    first = _seg(0.0, 3.3, "And I'm wondering how many meetings there are.")
    yeahs = _seg(3.8, 8.2, "Yeah, " * 18, compression_ratio=5.7)
    after = [_seg(8.2, 8.7, "Okay."), _seg(11.8, 14.3, "So, what do we need to talk about?"), _seg(14.8, 18.7, "So?")]
    assert transcriber._before_loop([first, yeahs, *after], 29.8) == [first, yeahs, *after]
    # A short repeat ("Yeah." again) is no loop: the recovered part may hold one.
    short = [_seg(8.2, 8.6, "Yeah."), _seg(8.6, 9.0, "Yeah."), _seg(9.0, 12.0, "The budget is ten euros.")]
    assert transcriber._before_loop([first, yeahs, *short], 12.0) == [first, yeahs, *short]
    # What follows a loop must be new text: sentences said before, or a second loop, are no recovery.
    said_again = [first, yeahs, _seg(8.2, 12.0, " " + first.text), _seg(12.0, 13.0, "Ok.")]
    assert transcriber._before_loop(said_again, 13.0) == [first]


def test_a_pass_that_loops_at_once_or_is_unsure_is_decoded_again() -> None:
    loop = _seg(0.0, 29.0, "아, " * 40, compression_ratio=9.0)
    assert transcriber._before_loop([loop, _seg(29.0, 30.0, "네.")], 30.0) == []
    unsure = [_seg(0.0, 7.0, "그 다음엔", avg_logprob=-2.1), _seg(7.0, 9.0, "그 다음엔", avg_logprob=-2.1)]
    assert transcriber._before_loop(unsure, 9.0) == []  # low confidence: nothing of it is trusted
    assert transcriber._before_loop([], 0.0) == []


def test_a_replay_of_earlier_sentences_is_suspect_and_cut_where_it_starts() -> None:
    # The shape seen on ko26 laid out with 1 s of room tone at beam 5: three sentences, then the first again and the
    # other two again as one segment, over the 0.3 s of the clip after them, at a confident log-probability.
    said = [
        _seg(0.0, 2.0, "와 진짜 용라운"),
        _seg(2.0, 3.5, "난 집에서 봤는데"),
        _seg(3.5, 5.7, "극장 가서 본 사람들은"),
    ]
    replay = [_seg(5.7, 7.4, "와 진짜 용라운"), _seg(7.4, 7.8, "난 집에서 봤는데 극장 가서 본 사람들은")]
    assert transcriber._suspect(said + replay, 0.0, 6.0)
    assert transcriber._before_loop(said + replay, 6.0) == said
    assert transcriber._replay_start(said + replay[1:], 6.0) == 3  # one segment that replays two is enough


def test_a_short_repeat_or_one_said_at_a_speaking_pace_is_not_a_replay() -> None:
    # People say the same short thing twice: a greeting, a yes. That is not a decoding fault.
    segs = [_seg(0.0, 1.0, "여보세요?"), _seg(1.0, 2.0, "여보세요?"), _seg(2.0, 3.0, "네."), _seg(3.0, 4.0, "네.")]
    assert not transcriber._suspect(segs, 0.0, 4.0)
    assert transcriber._replay_start(segs, 4.0) is None
    # A hold message, or a recording played again within one chunk: the same sentence over as much audio again.
    hold = "고객님의 전화를 연결 중입니다. 잠시만 기다려 주십시오."
    segs = [_seg(0.0, 4.0, hold), _seg(10.0, 14.0, hold)]
    assert transcriber._replay_start(segs, 14.5) is None
    assert not transcriber._suspect(segs, 0.0, 14.5)
