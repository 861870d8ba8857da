"""The hallucination stage (sori_engine/verdicts/per_file.py): its rules on plain data, then the real model on shared
clips with non-speech added (invented phrases, loops and tails; docs/engine.md)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from conftest import Engine
from transcripts import cer, extra_tail, missing_head, missing_tail, reference

from sori_engine import audio as audio_io
from sori_engine.decode_options import DEFAULT
from sori_engine.protocol import Segment, Word
from sori_engine.vad import FRAME_S
from sori_engine.verdicts import per_file as h
from sori_eval.wav import write_wav

SR = 16000


def seg(
    start: float, end: float, text: str, words: list[tuple[float, float, str]] | None = None, language: str = "ko"
) -> Segment:
    ws = None if words is None else tuple(Word(a, b, t, 0.9) for a, b, t in words)
    return Segment(start=start, end=end, text=text, language=language, avg_logprob=-0.3, no_speech_prob=0.1, words=ws)


def speech_until(seconds: float, total: float) -> h.SpeechMap:
    """A speech map that says speech (0.9) up to `seconds`, then non-speech (0.02)."""
    frames = int(total / FRAME_S)
    probs = np.full(frames, 0.02, dtype=np.float32)
    probs[: int(seconds / FRAME_S)] = 0.9
    return h.SpeechMap(probs)


# ------------------------------------------------------------------------------------------------ plain data
def test_phrase_lists_load_with_their_sources() -> None:
    for lang, phrase in (("ko", "수고하셨습니다"), ("ja", "ご視聴ありがとうございました"), ("en", "thankyou")):
        assert phrase in h.phrases(lang)
    assert h.phrases("xx") == frozenset()
    assert h.made_of(h.normalize("이 영상에서 영상에서 만나요."), h.phrases("ko"))
    assert not h.made_of(h.normalize("감사합니다 고객님"), h.phrases("ko"))


def test_bag_phrase_on_non_speech_is_removed_on_speech_kept() -> None:
    words = [(0.0, 0.6, " 네,"), (0.6, 1.4, " 알겠습니다."), (1.6, 2.4, " 감사합니다.")]
    sentence = seg(0.0, 2.4, "네, 알겠습니다. 감사합니다.", words)
    # The caller said it: speech under all of it.
    assert h.clean([sentence], speech_until(2.5, 6.0), DEFAULT) == [sentence]
    # Speech ends at 1.5 s: the closing phrase sits on line noise.
    [trimmed] = h.clean([sentence], speech_until(1.5, 6.0), DEFAULT)
    assert trimmed.text == "네, 알겠습니다." and trimmed.end == 1.4 and len(trimmed.words or ()) == 2
    # The same without word timestamps: the phrase's span is estimated from its share of the characters.
    plain = seg(0.0, 2.4, "네, 알겠습니다. 감사합니다.")
    assert [s.text for s in h.clean([plain], speech_until(0.7, 6.0), DEFAULT)] == ["네, 알겠습니다."]
    assert [s.text for s in h.clean([plain], speech_until(2.5, 6.0), DEFAULT)] == ["네, 알겠습니다. 감사합니다."]


def test_invented_phrase_timed_from_the_last_words_end_is_removed() -> None:
    # Seen on a real recording (shared untranscribed/vito_tritony_short_sample.wav, speech ends at 2.95 s): Whisper
    # timed the invented "수고하셨습니다." from the last word's end, so 0.16 s of that word's speech lay under it.
    words = [(1.85, 2.81, " 음성입니다."), (2.81, 4.79, " 수고하셨습니다.")]
    [kept] = h.clean([seg(1.85, 4.79, "음성입니다. 수고하셨습니다.", words)], speech_until(2.97, 6.0), DEFAULT)
    assert kept.text == "음성입니다."
    # Without word timestamps: the segment's own end bounds the estimated span (no margin past it).
    [kept] = h.clean(
        [seg(0.11, 2.81, "이 음성은 샘플 음성입니다."), seg(2.81, 4.79, "수고하셨습니다.")],
        speech_until(2.97, 6.0),
        DEFAULT,
    )
    assert kept.text == "이 음성은 샘플 음성입니다."
    # Said, it has the speech it takes (7 syllables: 0.42 s asked, 0.8 s there); a short real 네 needs 0.15 s.
    said = [(1.85, 2.81, " 음성입니다."), (2.81, 3.6, " 수고하셨습니다.")]
    assert (
        len(
            h.clean([seg(1.85, 3.6, "음성입니다. 수고하셨습니다.", said)], speech_until(3.6, 6.0), DEFAULT)[0].words
            or ()
        )
        == 2
    )
    assert (
        h.needed("네.", DEFAULT) == DEFAULT.word_speech_s
        and h.needed("Thank you.", DEFAULT) == 8 * DEFAULT.letter_speech_s
    )


def test_segment_on_no_speech_is_dropped_whatever_it_says() -> None:
    segments = [seg(0.0, 2.0, "네, 마침 빈방이 있습니다."), seg(3.0, 5.0, "자, 자, 자, 자.")]
    assert [s.text for s in h.clean(segments, speech_until(2.2, 6.0), DEFAULT)] == ["네, 마침 빈방이 있습니다."]


def test_thresholds_are_the_options_passed() -> None:
    # The same segment over the same speech map (a quarter of its frames speech), judged under other options.
    sentence = seg(0.0, 2.0, "네, 마침 빈방이 있습니다.")
    assert len(h.clean([sentence], speech_until(0.5, 6.0), DEFAULT)) == 1
    assert h.clean([sentence], speech_until(0.5, 6.0), replace(DEFAULT, no_speech_share=0.5)) == []
    assert h.needed("네.", replace(DEFAULT, word_speech_s=0.3)) == 0.3


def test_leading_bag_phrase_on_non_speech_is_removed() -> None:
    words = [(0.0, 1.0, " 감사합니다."), (2.0, 2.5, " 네,"), (2.5, 3.5, " 좋아요.")]
    probs = np.full(int(4 / FRAME_S), 0.9, dtype=np.float32)
    probs[: int(1.9 / FRAME_S)] = 0.05
    [kept] = h.clean([seg(0.0, 3.5, "감사합니다. 네, 좋아요.", words)], h.SpeechMap(probs), DEFAULT)
    assert kept.text == "네, 좋아요." and kept.start == 2.0


def test_a_short_first_word_timed_before_its_speech_is_kept() -> None:
    # Seen on multi/deeply_ko_dialogue_constructed.wav: after a pause Whisper timed "네," at 12.83-12.99 s and "네."
    # at 25.68-25.80 s, speech starting inside the span; 0.13 s of speech under each, 0.15 s asked: both removed.
    probs = np.full(int(15 / FRAME_S), 0.05, dtype=np.float32)
    probs[int(12.88 / FRAME_S) : int(13.8 / FRAME_S)] = 0.9
    for span in ((12.83, 12.99), (12.83, 12.92)):
        words = [(*span, " 네,"), (13.17, 13.71, " 물론입니다.")]
        [kept] = h.clean([seg(12.83, 13.71, "네, 물론입니다.", words)], h.SpeechMap(probs), DEFAULT)
        assert kept.text == "네, 물론입니다."
    # An invented one before a pause still goes: nothing is said between it and the next word.
    words = [(11.0, 11.2, " 네,"), (12.88, 13.71, " 물론입니다.")]
    [kept] = h.clean([seg(11.0, 13.71, "네, 물론입니다.", words)], h.SpeechMap(probs), DEFAULT)
    assert kept.text == "물론입니다."


def test_fragment_left_beside_a_removed_phrase_on_non_speech_goes_with_it() -> None:
    # Seen on AMR-NB: a segment of its own after the sentence, "자막은" + a bag phrase, all on line noise.
    words = [(3.27, 3.98, " 자막은"), (3.98, 3.98, " 구독과"), (3.98, 3.98, " 좋아요"), (3.98, 3.98, " 부탁드립니다.")]
    sentence = seg(0.3, 3.2, "그는 길 한 옆으로 걸어갔다.")
    invented = seg(3.27, 3.98, "자막은 구독과 좋아요 부탁드립니다.", words)
    assert [s.text for s in h.clean([sentence, invented], speech_until(3.3, 6.0), DEFAULT)] == [sentence.text]
    # When the words before the phrase are on speech, they stay.
    said = [(2.0, 3.27, " 자막은"), *words[1:]]
    [kept] = h.clean([seg(2.0, 3.98, "자막은 구독과 좋아요 부탁드립니다.", said)], speech_until(3.3, 6.0), DEFAULT)
    assert kept.text == "자막은"


def test_unsure_text_on_the_tail_of_the_last_word_is_dropped() -> None:
    # Seen with whisper + en (greedy) on en/whisper_jfk.flac: "Yeah." (avg_logprob -1.34) timed 10.36-10.84 s right
    # after "country." ended at 10.36 s, over nothing but the last 0.17 s of that word's speech frames.
    probs = np.full(int(11.0 / FRAME_S), 0.02, dtype=np.float32)
    probs[: int(10.53 / FRAME_S)] = 0.9
    speech = h.SpeechMap(probs)
    sentence = seg(0.0, 10.36, "ask what you can do for your country.", language="en")
    yeah = replace(seg(10.36, 10.84, "Yeah.", language="en"), avg_logprob=-1.34)
    assert [s.text for s in h.clean([sentence, yeah], speech, DEFAULT)] == [sentence.text]
    # Decoded with confidence it stays (a real short reply right after the sentence) ...
    assert len(h.clean([sentence, replace(yeah, avg_logprob=-0.4)], speech, DEFAULT)) == 2
    # ... and so does an unsure one over speech of its own, after a pause.
    probs[int(11.0 / FRAME_S) - 12 :] = 0.9
    said = replace(seg(10.6, 11.0, "Yeah.", language="en"), avg_logprob=-1.34)
    assert len(h.clean([sentence, said], h.SpeechMap(probs), DEFAULT)) == 2


def test_a_sentence_said_again_is_kept_as_often_as_the_audio_says_it() -> None:
    # Seen on AMR-NB (ko/deeply_dancestudio_sub100110a00036): the decoder wrote its first sentence again over the
    # second one's speech; dropping the copy left 1.8 s of speech with no text.
    copies = [seg(0.0, 2.0, "연결만 보면 꼭 나오는데"), seg(2.0, 4.0, "연결만 보면 꼭 나오는데")]
    assert len(h.clean(copies, speech_until(4.0, 6.0), DEFAULT)) == 2
    # A third time over speech of its own is kept too: a speaker says a sentence, a greeting, a number again.
    third = [*copies, seg(4.0, 6.0, "연결만 보면 꼭 나오는데")]
    assert len(h.clean(third, speech_until(6.0, 6.0), DEFAULT)) == 3
    # A copy on no speech of its own goes, and so does every copy after it.
    assert len(h.clean(third, speech_until(4.0, 6.0), DEFAULT)) == 2
    assert len(h.clean(copies, speech_until(2.3, 6.0), DEFAULT)) == 1
    assert len(h.clean(third, None, DEFAULT)) == 1  # without a speech map nothing vouches for a copy


def test_loops_are_kept_once() -> None:
    looped = seg(
        0.0, 5.0, "これには困ることがあるのです。スタッフェンススタッフェンススタッフェンススタッフェン", language="ja"
    )
    assert h.deloop(looped, DEFAULT).text == "これには困ることがあるのです。スタッフェンススタッフェン"
    words = [
        (i * 0.5, i * 0.5 + 0.5, w) for i, w in enumerate([" 이", " 영상은", " 이", " 영상은", " 이", " 영상은", " 끝"])
    ]
    assert h.deloop(seg(0.0, 3.5, "이 영상은 이 영상은 이 영상은 끝", words), DEFAULT).text == "이 영상은 끝"
    assert h.deloop(seg(0.0, 1.0, "네 네 네"), DEFAULT).text == "네 네 네"  # one-syllable answers are not a loop
    assert (
        h.deloop(seg(0.0, 3.0, "수기수염은 멈쩍합니다. 멈쩍합니다, 멈쩍합니다."), DEFAULT).text
        == "수기수염은 멈쩍합니다."
    )
    split = [seg(0.0, 2.0, "수기수염은 멈쩍합니다."), seg(2.0, 3.0, "멈쩍합니다, 멈쩍합니다.")]  # seen at 5 dB SNR
    assert [s.text for s in h.clean(split, None, DEFAULT)] == ["수기수염은 멈쩍합니다."]
    two = [seg(0.0, 2.0, "좋아요."), seg(2.0, 3.0, "좋아요, 가요.")]  # said twice: not a loop
    assert [s.text for s in h.clean(two, None, DEFAULT)] == ["좋아요.", "좋아요, 가요."]
    again = [seg(0.0, 1.0, "さっきは、", language="ja"), seg(1.0, 2.0, "さっきは、", language="ja")]
    assert [s.text for s in h.clean(again, None, DEFAULT)] == ["さっきは、"]


def test_repeats_said_over_speech_are_kept_and_a_loop_past_the_speech_is_cut() -> None:
    # A meeting: a listener's "yeah, yeah, yeah" is speech, not a loop, where the audio holds that much speech.
    yeahs = [(0.3 * i, 0.3 * i + 0.25, " yeah,") for i in range(6)]
    run = seg(0.0, 1.8, "Yeah, yeah, yeah, yeah, yeah, yeah,", yeahs, language="en")
    assert h.deloop(run, DEFAULT, speech_until(1.8, 3.0)).text == run.text
    assert h.deloop(run, DEFAULT, speech_until(0.3, 3.0)).text == "yeah,"  # no speech to say them: a loop
    assert h.deloop(run, DEFAULT, speech_until(0.9, 3.0)).text == "yeah, yeah, yeah,"  # the copies said
    assert h.deloop(run, DEFAULT).text == "yeah,"  # no speech map: loops only
    # A card number's group read four times, each over its own speech, stays four times (issue 67) ...
    groups = [(1.2 * i, 1.2 * i + 1.0, f" {g}") for i, g in enumerate(["5454,"] * 4)]
    card = seg(0.0, 4.6, "5454, 5454, 5454, 5454,", groups, language="en")
    assert h.deloop(card, DEFAULT, speech_until(4.6, 6.0)).text == card.text
    # ... and a loop the decoder wrote on past the speech keeps the copies over it.
    words = [(0.5 * i, 0.5 * i + 0.5, w) for i, w in enumerate([" 이", " 영상은", " 이", " 영상은", " 이", " 영상은"])]
    looped = seg(0.0, 3.0, "이 영상은 이 영상은 이 영상은", words)
    assert h.deloop(looped, DEFAULT, speech_until(1.0, 3.0)).text == "이 영상은"
    assert h.deloop(looped, DEFAULT, speech_until(3.0, 3.0)).text == looped.text
    # Without word timestamps a copy's span is its share of the segment's characters.
    unspaced = seg(0.0, 3.0, "はいはいはい", language="ja")
    assert h.deloop(unspaced, DEFAULT, speech_until(3.0, 3.0)).text == "はいはいはい"
    assert (
        h.deloop(seg(0.0, 3.0, "大丈夫です大丈夫です大丈夫です", language="ja"), DEFAULT, speech_until(1.0, 3.0)).text
        == "大丈夫です"
    )
    # Three "Yeah." segments in a row, each over speech of its own, stay three.
    answers = [seg(float(i), i + 0.5, "Yeah.", language="en") for i in range(3)]
    assert len(h.clean(answers, speech_until(3.0, 3.0), DEFAULT)) == 3
    assert len(h.clean(answers, None, DEFAULT)) == 1  # without a speech map, a repeat is a loop


def test_backchannel_lists_load() -> None:
    for language, word in (("en", "yeah"), ("ko", "네"), ("ja", "はい")):
        assert word in h.phrases(language, "backchannels")
        assert h.backchannel_run(f"{word}, {word}, {word}.", language)
    assert not h.backchannel_run("yeah, right, the meeting", "en")


# ------------------------------------------------------------------------------------------------ real model
LOOP = re.compile(r"(.{2,}?)\1{2,}")
# The clips' whisper-base int8 CER is 0.03-0.25 on the machines measured; the bound only says "the clip's sentence".
MAX_CER = 0.5


def norm(text: str) -> str:
    return h.normalize(unicodedata.normalize("NFKC", text))


def line_hiss(seconds: float, level: float) -> np.ndarray:
    """Telephone-line hiss: white noise band-passed to 300-3400 Hz plus a 50 Hz hum (bench/robustness.py's)."""
    rng = np.random.default_rng(0)
    n = int(seconds * SR)
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / SR)
    spec[(f < 300) | (f > 3400)] = 0
    hiss = np.fft.irfft(spec, n)
    hiss *= level / np.sqrt(np.mean(hiss**2))
    return (hiss + level / 3 * np.sqrt(2) * np.sin(2 * np.pi * 50 * np.arange(n) / SR)).astype(np.float32)


def with_hiss(clip: np.ndarray, seconds: float = 3.0, before: bool = False) -> np.ndarray:
    """The clip with line hiss 20 dB under its level, `seconds` long, after it (or before)."""
    hiss = line_hiss(seconds, 0.1 * float(np.sqrt(np.mean(clip**2))))
    return np.concatenate([hiss, clip] if before else [clip, hiss])


def run(engine: Engine, model: dict[str, Any], path: Path, language: str, **extra: Any) -> list[dict[str, Any]]:
    reply = engine.call(
        "transcribe", {"audio_path": str(path), "model": model, "language_mode": "fixed", "language": language, **extra}
    )
    return reply.result["segments"]


def test_phone_line_noise_after_a_clip_adds_no_words(
    engine: Engine, model: dict[str, Any], testdata: Path, tmp_path: Path
) -> None:
    """Today's engine, decoding without the VAD as domain CALL did, gave "... 알려드릴게요. 네." here."""
    ref = reference(testdata, "ko/deeply_studioapt_sub100101a00080.wav")
    clip = audio_io.decode(str(testdata / "ko/deeply_studioapt_sub100101a00080.wav"))
    path = write_wav(tmp_path / "hiss.wav", with_hiss(clip))
    for vad in (False, True):
        segments = run(engine, {**model, "beam_size": 5, "vad": vad}, path, "ko")
        assert segments
        speech_end = clip.size / SR
        assert all(s["start"] < speech_end for s in segments), segments
        text = " ".join(s["text"] for s in segments)
        assert extra_tail(text, ref) == 0, segments  # nothing after the clip's last word
        assert cer(text, ref) <= MAX_CER, segments


def test_looping_japanese_clip_comes_back_without_a_loop(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    """It ended in スタッフェンス... repeated to the window's end (normalized CER 272 %)."""
    segments = run(engine, {**model, "beam_size": 5}, testdata / "ja/common_voice_ja_38853932_16k.wav", "ja")
    text = norm(" ".join(s["text"] for s in segments))
    assert text and not LOOP.search(text), text
    assert len(text) < 60  # the reference has 38 characters


def test_a_sentence_that_really_ends_with_a_closing_word_keeps_it(
    engine: Engine, model: dict[str, Any], testdata: Path, tmp_path: Path
) -> None:
    """A sentence, then a real spoken 네 (the first 0.6 s of another shared clip), then 3 s of line hiss: the 네 stays,
    with and without the VAD and word timestamps. No shared recording says 감사합니다 (nor any other closing phrase
    of the bag but 네/예), nor did any registry package searched for Korean speech audio with a licence (Korean
    ASR/TTS/speech packages on PyPI and npm), so the real phrase is 네; 감사합니다 itself is
    covered on plain data above."""
    clip = audio_io.decode(str(testdata / "ko/deeply_studioapt_sub100101a00080.wav"))  # "... 알려드릴게요."
    ne = audio_io.decode(str(testdata / "ko/deeply_anechoic_sub100121a00083.wav"))[: int(0.6 * SR)]  # "네,"
    path = write_wav(tmp_path / "ends-ne.wav", with_hiss(np.concatenate([clip, ne])))
    ref = reference(testdata, "ko/deeply_studioapt_sub100101a00080.wav") + " 네"
    for vad, words in ((True, False), (False, True)):
        segments = run(engine, {**model, "beam_size": 5, "vad": vad}, path, "ko", word_timestamps=words)
        text = " ".join(s["text"] for s in segments)
        assert missing_tail(text, ref) == 0, (vad, words, segments)  # the 네 is written (however it is spelled)
        assert extra_tail(text, ref) == 0, (vad, words, segments)  # and nothing after it
        assert cer(text, ref) <= MAX_CER, (vad, words, segments)


def test_a_real_closing_word_is_kept(engine: Engine, model: dict[str, Any], testdata: Path, tmp_path: Path) -> None:
    """Real speech that starts with a phrase of the bag ("네, ...") keeps it, with line hiss before and after it.
    (The shared set has no recording of 감사합니다 or 수고하셨습니다; the plain-data tests above cover those.)"""
    clip = audio_io.decode(str(testdata / "ko/deeply_anechoic_sub100121a00083.wav"))  # "네, 마침 빈방이 있습니다. ..."
    path = write_wav(tmp_path / "ne.wav", with_hiss(with_hiss(clip, 2.0, before=True)))
    # Without the VAD (domain CALL) the hiss reaches the decoder; with word timestamps the stage judges each word.
    segments = run(engine, {**model, "vad": False}, path, "ko", word_timestamps=True)
    text = " ".join(s["text"] for s in segments)
    ref = reference(testdata, "ko/deeply_anechoic_sub100121a00083.wav")
    assert missing_head(text, ref) == 0, segments  # the opening 네 is kept
    assert missing_tail(text, ref) <= 1 and extra_tail(text, ref) == 0, segments  # the last word, and nothing after
    assert cer(text, ref) <= MAX_CER, segments


def test_whisper_en_adds_nothing_after_jfk(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    """`whisper` + en (the registry's greedy beam 1, with the word timestamps `sori transcribe` asks for) gave the
    sentence plus "Yeah." or "I'm sorry." (by the thread count) at 10.36-10.84 s, on the clip's trailing room noise:
    an unsure segment over the tail of the last word's speech frames (rule 4)."""
    ref = reference(testdata, "en/whisper_jfk.flac")
    for words in (True, False):
        segments = run(engine, model, testdata / "en/whisper_jfk.flac", "en", word_timestamps=words)
        text = " ".join(s["text"] for s in segments)
        assert extra_tail(text, ref) == 0 and cer(text, ref) <= MAX_CER, (words, segments)
        assert all(s["start"] < 10.3 for s in segments), (words, segments)


def test_a_really_spoken_thank_you_is_kept(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    """The reference of this clip ends in a spoken "thank you" (a phrase of the en bag), right after the sentence
    before it: it stays, with the VAD and without it (domain CALL), with and without word timestamps."""
    path = testdata / "multi/picovoice_leopard_diarization_test.wav"
    ref = reference(testdata, "multi/picovoice_leopard_diarization_test.wav")
    for vad, words in ((True, True), (False, False)):
        segments = run(engine, {**model, "vad": vad}, path, "en", word_timestamps=words)
        text = " ".join(s["text"] for s in segments)
        # "thank you" is written: at most one of its letters uncovered ("thank u"), and nothing after it.
        assert missing_tail(text, ref) <= 1 and extra_tail(text, ref) == 0, (vad, words, segments)


def test_a_tail_without_a_words_speech_is_not_decoded_on(engine: Engine, model: dict[str, Any], testdata: Path) -> None:
    """The transcriber decodes on the speech a chunk has after its last segment (an early end of text). Here that
    was 1.2 s of VAD padding and the last word's hang-over (0.06 s of speech frames), and the decode on it wrote a
    confident `さっきは、` (avg_logprob -0.15, so rule 4 kept it). A tail needs a word's speech of its own now."""
    clip = "ja/common_voice_ja_38852485_16k.wav"
    segments = run(engine, {**model, "beam_size": 5}, testdata / clip, "ja")
    text = "".join(s["text"] for s in segments)
    ref = reference(testdata, clip)
    # The invariant, not the spelling of the last word (たずねた on one CPU, 突ねた on another): nothing is written
    # after the reference's last word, no phrase of the bag closes the text, and it is the clip's sentence.
    assert extra_tail(text, ref) == 0, segments
    assert not h.made_of(h.normalize(segments[-1]["text"]), h.phrases("ja")), segments
    assert cer(text, ref) <= MAX_CER, segments


def test_own_speech_leaves_out_the_run_it_starts_with(testdata: Path) -> None:
    clip = audio_io.decode(str(testdata / "ko/deeply_studioapt_sub100101a00080.wav"))
    assert h.own_speech_s(np.zeros(SR, dtype=np.float32), DEFAULT) == 0.0
    whole = h.own_speech_s(np.concatenate([np.zeros(SR, dtype=np.float32), clip]), DEFAULT)
    assert whole > 1.0
    # The same speech when it is already going on at the start: up to tail_carry_s of it is not counted.
    assert whole - DEFAULT.tail_carry_s - 0.1 <= h.own_speech_s(clip, DEFAULT) <= whole
