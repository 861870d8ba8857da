"""The `voiceprint` op (known speakers, docs/speakers.md): its parameters, and on real speech that a voice's
embedding is closer to the same speaker's other clips than to another speaker's, that given spans are embedded
alone, and that a dialogue of two voices counts as two."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import Engine

from sori_engine import voiceprint
from sori_engine.protocol import EngineError

K = "ko/deeply_"
A = [K + "anechoic_sub100120a00053.wav", K + "anechoic_sub100121a00071.wav", K + "anechoic_sub100120a00213.wav"]
B = [K + "anechoic_sub100122a00074.wav", K + "anechoic_sub100122a00037.wav", K + "anechoic_sub100120a00077.wav"]
DIALOGUE = "multi/deeply_ko_dialogue_constructed.wav"


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"voices": []},
        {"voices": [{}]},
        {"voices": [{"parts": [{"audio_path": ""}]}]},
        {"voices": [{"parts": [{"audio_path": "/x.wav", "channel": -1}]}]},
        {"voices": [{"parts": [{"audio_path": "/x.wav", "spans": [[2, 1]]}]}]},
        {"voices": [{"parts": [{"audio_path": "/x.wav", "spans": [[0, "1"]]}]}]},
        {"voices": [{"parts": [{"audio_path": "/x.wav"}]}], "count_voices": 1},
        {"voices": [{"parts": [{"audio_path": "/x.wav"}]}], "max_duration_s": 0},
        {"voices": [{"parts": [{"audio_path": "/x.wav"}]}], "phone_prints": "yes"},
        {"voices": [{"parts": [{"audio_path": "/x.wav"}] * 17}]},
    ],
)
def test_bad_parameters(params: dict) -> None:
    with pytest.raises(EngineError) as e:
        voiceprint.parse_voiceprint(params)
    assert e.value.code == "bad_request"


def _run(testdata: Path, voices: list[list[dict]], count: bool = False) -> dict:
    for parts in voices:
        for p in parts:
            p["audio_path"] = str(testdata / p["audio_path"])
    params = {"voices": [{"parts": parts} for parts in voices], "count_voices": count}
    return voiceprint.voiceprint(voiceprint.parse_voiceprint(params))


def test_same_speaker_closer_than_another(testdata: Path) -> None:
    r = _run(testdata, [[{"audio_path": f} for f in A[:2]], [{"audio_path": A[2]}], [{"audio_path": B[0]}]])
    assert r["model"] == voiceprint.speaker_models().voiceprint_model(voiceprint.cohort.version())
    e = np.array([v["embedding"] for v in r["voices"]])
    assert e.shape == (3, 192)
    assert np.allclose(np.linalg.norm(e, axis=1), 1, atol=1e-4)
    assert e[0] @ e[1] > 0.6  # the same woman, another clip
    assert e[0] @ e[2] < 0.45  # the other woman
    assert 8 < r["voices"][0]["speech_s"] < 11


def test_a_phone_channel_is_centred_by_its_own_band(testdata: Path, tmp_path: Path) -> None:
    """The same clips through a telephone channel (300-3400 Hz, 8 kHz, mu-law) are narrowband and centred by that
    band's cohort mean: the two women stay apart as they are wideband, where raw embeddings put every phone-band voice
    close to every other; and one woman heard on the phone is still nearer her wideband voice than the other woman is."""
    from sori_engine import audio
    from sori_engine.diarization import DEFAULT_CONFIG
    from sori_engine.phone import band_db
    from sori_eval.wav import telephone_channel, write_wav

    def phone(name: str) -> str:
        x = telephone_channel(audio.decode(str(testdata / name)))
        assert band_db(x) < DEFAULT_CONFIG.narrowband_db < band_db(audio.decode(str(testdata / name)))
        return str(write_wav(tmp_path / Path(name).name, x))

    r = _run(
        testdata,
        [
            [{"audio_path": A[0]}],
            [{"audio_path": phone(A[0])}, {"audio_path": phone(A[1])}],
            [{"audio_path": phone(A[2])}],
            [{"audio_path": phone(B[0])}],
        ],
    )
    clean_a, phone_a, phone_a2, phone_b = np.array([v["embedding"] for v in r["voices"]])
    assert phone_a @ phone_a2 > 0.6  # the same woman, another clip, both on the phone
    assert phone_a @ phone_b < 0.45  # the other woman on the phone
    assert clean_a @ phone_a2 > clean_a @ phone_b + 0.15


def test_phone_prints_match_the_voice_on_the_phone(testdata: Path, tmp_path: Path) -> None:
    """A wideband enrollment's phone print (its speech band-limited as a phone line passes it, centred as narrowband)
    is nearer the same woman heard on a phone (mu-law, another clip) than her wideband print is, and still far from the
    other woman on the phone; a narrowband file's phone print is its own print, and each voice says its band."""
    from sori_engine import audio
    from sori_eval.wav import telephone_channel, write_wav

    def phone(name: str) -> str:
        return str(write_wav(tmp_path / Path(name).name, telephone_channel(audio.decode(str(testdata / name)))))

    enroll = [[{"audio_path": str(testdata / f)} for f in A[:2]], [{"audio_path": phone(A[0])}]]
    params = {"voices": [{"parts": p} for p in enroll], "phone_prints": True}
    wide, narrow = voiceprint.voiceprint(voiceprint.parse_voiceprint(params))["voices"]
    assert (wide["narrowband"], narrow["narrowband"]) == (False, True)
    assert narrow["embedding_phone"] == narrow["embedding"]
    job = _run(testdata, [[{"audio_path": phone(A[2])}], [{"audio_path": phone(B[0])}]])["voices"]
    assert all(v["narrowband"] and "embedding_phone" not in v for v in job)
    same, other = np.array(job[0]["embedding"]), np.array(job[1]["embedding"])
    print_w, print_p = np.array(wide["embedding"]), np.array(wide["embedding_phone"])
    assert print_p @ same > print_w @ same + 0.15  # 0.80 against 0.48 on an AMD EPYC host
    assert print_p @ same > 0.6
    assert print_p @ other < 0.35  # 0.22


def test_spans_embed_only_that_speech_and_count_voices(testdata: Path) -> None:
    # The dialogue's reference turns: its first speaker's speech alone is one voice, the whole file two.
    turns = [ln.split() for ln in (testdata / DIALOGUE.replace(".wav", ".rttm")).read_text().splitlines()]
    first = turns[0][7]
    spans = [[float(t[3]), float(t[3]) + float(t[4])] for t in turns if t[7] == first]
    r = _run(
        testdata,
        [
            [{"audio_path": DIALOGUE, "spans": spans}],
            [{"audio_path": DIALOGUE}],
            [{"audio_path": DIALOGUE, "spans": []}],
        ],
        count=True,
    )
    alone, whole, empty = r["voices"]
    assert alone["voices"] == 1
    assert whole["voices"] == 2
    assert alone["speech_s"] == pytest.approx(sum(b - a for a, b in spans), abs=0.5)
    assert empty == {"speech_s": 0.0, "embedding": None, "narrowband": False, "voices": 0}


def test_voiceprint_op(engine: Engine, testdata: Path) -> None:
    reply = engine.call("voiceprint", {"voices": [{"parts": [{"audio_path": str(testdata / A[0])}]}]})
    assert reply.result["model"] == voiceprint.speaker_models().voiceprint_model(voiceprint.cohort.version())
    assert len(reply.result["voices"][0]["embedding"]) == 192
    bad = {"voices": [{"parts": [{"audio_path": "/nonexistent/file.wav"}]}]}
    assert engine.call("voiceprint", bad).error_code == "audio_decode_failed"


def test_one_person_in_a_studio_and_on_the_phone_is_one_voice(testdata: Path, tmp_path: Path) -> None:
    """The several-voices check across bands: the second woman enrolled from a dance-studio clip and a call (an
    anechoic clip of hers through a telephone channel) is one voice: her two files' prints score 0.32 raw, under
    `files_same_voice_sim`, and 0.36 centred by their own bands (an AMD EPYC host). The first woman's studio clip
    beside the second woman on the phone is still two (0.12 centred)."""
    from sori_engine import audio
    from sori_eval.wav import telephone_channel, write_wav

    def phone(name: str) -> str:
        return str(write_wav(tmp_path / Path(name).name, telephone_channel(audio.decode(str(testdata / name)))))

    r = _run(
        testdata,
        [
            [{"audio_path": K + "dancestudio_sub100112a00065.wav"}, {"audio_path": phone(B[0])}],
            [{"audio_path": A[0]}, {"audio_path": phone(B[0])}],
        ],
        count=True,
    )
    assert [v["voices"] for v in r["voices"]] == [1, 2]
