"""False accepts and false rejects of known-speaker matching (docs/speakers.md), by seconds of enrollment speech.

Speakers with several recordings in the shared test data: the two Deeply Korean women (sub1001a: 13 clips,
sub1001b: 12 clips, three rooms and three microphone distances each, 2-8 s), the two Earnings-22 English speakers
(each 60 s, cut here into 6 s pieces), the two AMI meeting speakers of pyannote_dev00 and pyannote_dev01 (two
excerpts of one meeting, far-field; each turn of 1.5 s or more by the .rttm is a clip) and pyannote_sample's two
speakers (its turns likewise). Impostors: every other speaker's clips, plus the Japanese, JFK, LibriSpeech and
picovoice_falcon_test speakers (never enrolled). A clip's voiceprint is the engine's `voiceprint` op on it
(sori_engine/voiceprint.py: a whole file's speech found as diarization finds it, a turn taken as speech); an
enrollment is the speech-weighted mean of its clips' voiceprints (as the service combines added audio), drawn at
random from the speaker's clips until it holds the enrollment seconds; a speaker with too little speech for an
enrollment size is left out of that size's rows. A trial compares it with a test unit: one held-out clip, or two
held-out clips of one speaker. Genuine trials: held-out clips of the enrolled speaker; impostor trials: the other
speakers' clips. FRR = genuine trials below the threshold; FAR = impostor trials at or above it (the Korean column:
only the other Korean woman, the hardest impostor: same language, sex, rooms and microphones).

Then the enrollment's "several voices" check (the op's `count_voices`: diarization's count estimate over the 1 s
window embeddings of all the enrollment's files): how often it finds more than one voice in 30 random sets of 2-5
clips of one Korean woman, and in 30 sets of 1-3 clips of each.

    flock ~/.sori-bench.lock .venv/bin/python bench/speakers.py [--draws 30] [--seed 1]

With `--voices DIR` (a folder of many voices, sori_eval/voices.py), the same several-voices count on it
(`voices_enrollments`; `--enrollments` prints only these counts), then the naming of utterances in its conversations
(`conversation_naming`):

    flock ~/.sori-bench.lock nice -n 5 .venv/bin/python bench/speakers.py --voices ../voices --cache /tmp/conv2
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine"))
sys.path.insert(0, str(ROOT / "bench"))

from sori_engine import voiceprint
from sori_eval.voices import Speaker, conversations, read_voices, split

TESTDATA = ROOT.parent / "shared" / "testdata"
if not TESTDATA.exists():
    TESTDATA = Path("/work/shared/testdata")
THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
ENROLL_S = (5, 10, 20, 30)
OPERATING = 0.55  # src/speakers/options.ts
MIN_ENROLL_S = 5.0  # src/speakers/options.ts, minEnrollS
WHOLE = float("inf")  # a clip that is the whole file


def clips() -> dict[str, list[tuple[str, float, float]]]:
    """speaker -> [(file, start s, end s)]"""
    out: dict[str, list[tuple[str, float, float]]] = {}
    with open(TESTDATA / "MANIFEST_DETAILS.tsv") as f:
        for row in csv.reader(f, delimiter="\t"):
            if len(row) > 13 and "speaker=" in row[13]:
                spk = row[13].split("speaker=")[1].split()[0]
                out.setdefault(f"ko-{spk}", []).append((row[0], 0.0, WHOLE))
    for name in ("earnings22_1_4482311_3_62", "earnings22_3_4483589_261_321"):
        out[f"en-{name[:12]}"] = [(f"en/{name}.wav", t, t + 6.0) for t in range(0, 54, 6)]
    for name, prefix in (
        ("pyannote_dev00", "ami"),
        ("pyannote_dev01", "ami"),
        ("pyannote_sample", "sample"),
        ("picovoice_falcon_test", "falcon"),
    ):
        for line in (TESTDATA / "multi" / f"{name}.rttm").read_text().splitlines():
            p = line.split()
            a, d = float(p[3]), float(p[4])
            if d >= 1.5 and a < 29.0:
                out.setdefault(f"{prefix}-{p[7]}", []).append((f"multi/{name}.wav", a, a + d))
    singles = [p for p in sorted((TESTDATA / "ja").glob("*.wav"))] + [
        TESTDATA / "en/whisper_jfk.flac",
        TESTDATA / "en/picovoice_leopard_test_en_librispeech.wav",
    ]
    for p in singles:
        out[f"x-{p.stem}"] = [(str(p.relative_to(TESTDATA)), 0.0, WHOLE)]
    return out


def embed_all(
    table: dict[str, list[tuple[str, float, float]]],
) -> dict[tuple[str, int], tuple[np.ndarray, float]]:
    voices, keys = [], []
    for spk, cs in table.items():
        for i, (f, a, b) in enumerate(cs):
            part: dict[str, object] = {"audio_path": str(TESTDATA / f)}
            if b != WHOLE:
                part["spans"] = [[a, b]]
            voices.append({"parts": [part]})
            keys.append((spk, i))
    got = []
    for i in range(0, len(voices), voiceprint.MAX_VOICES):
        batch = {"voices": voices[i : i + voiceprint.MAX_VOICES]}
        got.extend(voiceprint.voiceprint(voiceprint.parse_voiceprint(batch))["voices"])
    out = {}
    for k, v in zip(keys, got, strict=True):
        if v["embedding"] is not None:
            out[k] = (np.asarray(v["embedding"]), float(v["speech_s"]))
    return out


def mean(items: list[tuple[np.ndarray, float]]) -> np.ndarray:
    e = np.average(np.stack([x for x, _ in items]), axis=0, weights=[s for _, s in items])
    return e / np.linalg.norm(e)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--voices", type=Path, help="conversations built from this voices folder (sori_eval/voices.py)")
    ap.add_argument("--per-set", type=int, default=48)
    ap.add_argument("--enrollments", action="store_true", help="with --voices: only the several-voices check's figures")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/sori-speakers"))
    args = ap.parse_args()
    if args.voices:
        voices_enrollments(args.voices, args.seed, args.cache)
        if not args.enrollments:
            conversation_naming(args.voices, args.per_set, 56, args.cache)
        return
    table = clips()
    emb = embed_all(table)
    by_spk: dict[str, list[tuple[np.ndarray, float]]] = {}
    for (spk, _i), v in sorted(emb.items(), key=lambda kv: kv[0]):
        by_spk.setdefault(spk, []).append(v)
    enrolled = [s for s in by_spk if len(by_spk[s]) >= 3]
    rng = random.Random(args.seed)
    print(
        "speakers enrolled:",
        ", ".join(f"{s} ({len(by_spk[s])} clips, {sum(x[1] for x in by_spk[s]):.0f} s)" for s in enrolled),
    )
    print("impostor-only speakers:", len(by_spk) - len(enrolled))
    for unit in (1, 2):
        print(f"\ntest unit: {unit} clip(s)")
        print("enroll s | threshold | FRR | FAR all | FAR other Korean | genuine / impostor trials")
        for enroll_s in ENROLL_S:
            gen: list[float] = []
            imp: list[float] = []
            hard: list[float] = []
            by_genuine: dict[str, list[float]] = {}
            for spk in enrolled:
                for _ in range(args.draws):
                    order = rng.sample(by_spk[spk], len(by_spk[spk]))
                    chosen, total = [], 0.0
                    while order and total < enroll_s:
                        chosen.append(order.pop())
                        total += chosen[-1][1]
                    if total < enroll_s or len(order) < unit:
                        continue
                    e = mean(chosen)
                    held = [mean(order[i : i + unit]) for i in range(0, len(order) - unit + 1, unit)]
                    gen.extend(float(e @ h) for h in held)
                    by_genuine.setdefault(spk, []).extend(float(e @ h) for h in held)
                    for other, items in by_spk.items():
                        if other == spk:
                            continue
                        units = [mean(items[i : i + unit]) for i in range(0, len(items) - unit + 1, unit)] or [
                            mean(items)
                        ]
                        scores = [float(e @ h) for h in units]
                        imp.extend(scores)
                        if spk.startswith("ko-") and other.startswith("ko-"):
                            hard.extend(scores)
            g, i_, h = np.asarray(gen), np.asarray(imp), np.asarray(hard)
            for t in THRESHOLDS:
                print(
                    f"{enroll_s:>8} | {t:.2f} | {100 * np.mean(g < t):5.1f} % | {100 * np.mean(i_ >= t):5.2f} % | "
                    f"{100 * np.mean(h >= t):5.2f} % | {len(g)} / {len(i_)}"
                )
            per = ", ".join(f"{k} {100 * np.mean(np.asarray(v) < OPERATING):.1f} %" for k, v in by_genuine.items())
            print(f"         FRR at {OPERATING} by speaker: {per}")
    voice_counts(table, rng)


def enrollment_voices(files: list[str]) -> int:
    """The op's count of voices in an enrollment of these files (voiceprint.py, count_voices)."""
    params = {"voices": [{"parts": [{"audio_path": f} for f in files]}], "count_voices": True}
    return int(voiceprint.voiceprint(voiceprint.parse_voiceprint(params))["voices"][0]["voices"])


def voice_counts(table: dict[str, list[tuple[str, float, float]]], rng: random.Random) -> None:
    """How often an enrollment is refused as several voices: 30 sets of 2-5 clips of one Korean woman (three rooms,
    three microphone distances), and 30 sets mixing 1-3 clips of each."""
    korean = [[str(TESTDATA / f) for f, _a, _b in cs] for s, cs in table.items() if s.startswith("ko-")]
    a, b = korean
    one = [enrollment_voices(rng.sample(rng.choice([a, b]), rng.randint(2, 5))) for _ in range(30)]
    two = [enrollment_voices(rng.sample(a, rng.randint(1, 3)) + rng.sample(b, rng.randint(1, 3))) for _ in range(30)]
    print(
        "\nseveral voices found: one woman's clips",
        f"{sum(n > 1 for n in one)} / 30;",
        "both women's",
        f"{sum(n > 1 for n in two)} / 30",
    )


def phone_clip(path: str, cache: Path) -> str:
    """The clip through a telephone channel (G.711, as the phone-band conversations), written once under `cache`."""
    import hashlib

    from sori_engine import audio as audio_mod
    from sori_eval.wav import telephone_channel, write_wav

    out = cache / "phone-clips" / f"{hashlib.sha1(path.encode()).hexdigest()[:16]}.wav"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        write_wav(out, telephone_channel(audio_mod.decode(path)))
    return str(out)


def _peer(s: Speaker, speakers: list[Speaker], rng: random.Random) -> Speaker | None:
    """Another speaker of s's gender and language, at random; None when there is none."""
    peers = [o for o in speakers if o.key != s.key and (o.gender, o.language) == (s.gender, s.language)]
    return rng.choice(peers) if peers else None


def voices_enrollments(folder: Path, seed: int, cache: Path) -> None:
    """The same on the voices folder: each speaker's clips (2-4 at random, any of its clips), and two speakers of one
    gender and language (1-2 clips each); then the same with phones in it: one speaker's 2-4 clips of which 1 to all
    but one go through a telephone channel (one person enrolled from a studio and a call), and two speakers of one
    gender and language, the second heard on the phone."""
    rng = random.Random(seed)
    speakers = read_voices(folder)
    one = [enrollment_voices(rng.sample(list(s.enroll + s.clips), rng.randint(2, 4))) for s in speakers]
    two = []
    for s in speakers:
        if o := _peer(s, speakers, rng):
            two.append(enrollment_voices(rng.sample(list(s.clips), rng.randint(1, 2)) + rng.sample(list(o.clips), rng.randint(1, 2))))
    print(f"voices folder, several voices found: one speaker's clips {sum(n > 1 for n in one)} / {len(one)}; "
          f"two speakers of one gender and language {sum(n > 1 for n in two)} / {len(two)}")
    rng = random.Random(seed)
    one, two = [], []
    for s in speakers:
        clips = rng.sample(list(s.enroll + s.clips), rng.randint(2, 4))
        k = rng.randint(1, len(clips) - 1)
        one.append(enrollment_voices([phone_clip(c, cache) for c in clips[:k]] + clips[k:]))
    for s in speakers:
        if o := _peer(s, speakers, rng):
            theirs = [phone_clip(c, cache) for c in rng.sample(list(o.clips), rng.randint(1, 2))]
            two.append(enrollment_voices(rng.sample(list(s.clips), rng.randint(1, 2)) + theirs))
    print(f"  with phone clips: one speaker's clips, some through a phone, {sum(n > 1 for n in one)} / {len(one)}; "
          f"two speakers, the second on the phone, {sum(n > 1 for n in two)} / {len(two)}")


def conversation_naming(folder: Path, per_set: int, seed: int, cache: Path) -> None:
    """Known voices in conversations built from many voices (bench/diarization.py --voices's sets, tuning and held-out
    speakers apart): in each, one or two of its speakers are enrolled from their own clips that no conversation uses
    (as the service enrolls: only with 5 s of speech or more, else the speaker counts as never enrolled);
    the conversation is diarized with the count estimated, each turn is an utterance, and the service's rule
    (bench/name-utterances.ts) names them from the voiceprints of the op. Printed per set: the share of each enrolled
    speaker's speech named right (and wrong), and of each never-enrolled speaker's speech given any name."""
    import hashlib
    import json
    import wave

    from sori_engine.diarization import DEFAULT_CONFIG, diarize_embedded

    from diarization import embed_cached

    parts = split(read_voices(folder), 0.4)
    cache.mkdir(parents=True, exist_ok=True)
    for part in ("tune", "held"):
        cases, meta = [], []
        for i, conv in enumerate(conversations(parts[part], part, per_set, seed)):
            wav = cache / f"{conv.name}.wav"
            if not wav.exists():
                with wave.open(str(wav), "wb") as w:
                    w.setnchannels(1)
                    w.setsampwidth(2)
                    w.setframerate(16000)
                    w.writeframes((np.clip(conv.samples, -1, 1) * 32767).astype("<i2").tobytes())
            enrolled = list(conv.speakers[: 1 if i % 2 == 0 else 2])
            em, _ = embed_cached(conv.name, conv.samples, DEFAULT_CONFIG, cache)
            turns = diarize_embedded(em, 0, DEFAULT_CONFIG).turns
            # the voiceprints depend on the audio, the model and the turns diarization found
            key = hashlib.sha1(conv.samples.tobytes() + voiceprint.speaker_models().voiceprint_model(voiceprint.cohort.version()).encode()
                               + repr([(t.start, t.end, t.speaker) for t in turns]).encode())
            saved = cache / f"{conv.name}-{key.hexdigest()[:12]}-case5.json"
            if saved.exists():  # the voiceprints of this conversation, from an earlier run
                case, utts = json.loads(saved.read_text())
                cases.append(case)
                meta.append((conv, utts, {e["id"] for e in case["enrolled"]}))
                continue
            keys = sorted({t.speaker for t in turns})
            own = {k: [(t.start, t.end) for t in turns if t.speaker == k] for k in keys}
            cut = {k: [(t.start, t.end) for t in turns if t.speaker != k] for k in keys}
            spans = {k: _subtract(own[k], cut[k]) for k in keys}
            utts = [(t.speaker, t.start, t.end, [(max(a, t.start), min(b, t.end)) for a, b in spans[t.speaker]
                                                  if min(b, t.end) > max(a, t.start)]) for t in turns]
            voices = [{"parts": [{"audio_path": str(wav), "spans": [list(s) for s in spans[k]]}]} for k in keys]
            voices += [{"parts": [{"audio_path": str(wav), "spans": [list(s) for s in u[3]] or [[0, 0]]}]}
                       for u in utts]
            got = voiceprint.voiceprint(voiceprint.parse_voiceprint({"voices": voices}))["voices"]
            # as the service enrolls: each enrollment also printed as heard on the phone
            got += voiceprint.voiceprint(voiceprint.parse_voiceprint({
                "voices": [{"parts": [{"audio_path": f} for f in s.enroll]} for s in enrolled], "phone_prints": True,
            }))["voices"]
            n_k, n_u = len(keys), len(utts)
            cases.append({
                "clusters": [{"key": k, "embedding": got[j]["embedding"], "speechS": got[j]["speech_s"],
                              "narrowband": got[j]["narrowband"]} for j, k in enumerate(keys)],
                "utterances": [{"cluster": u[0], "embedding": got[n_k + j]["embedding"],
                                "speechS": got[n_k + j]["speech_s"], "narrowband": got[n_k + j]["narrowband"]}
                               for j, u in enumerate(utts)],
                # as the service enrolls: 5 s of speech at least (SPEAKER_OPTIONS.minEnrollS), or not enrolled
                "enrolled": [{"id": s.key, "name": s.key, "embedding": got[n_k + n_u + j]["embedding"],
                              "embeddingPhone": got[n_k + n_u + j]["embedding_phone"]}
                             for j, s in enumerate(enrolled) if got[n_k + n_u + j]["speech_s"] >= MIN_ENROLL_S],
            })
            meta.append((conv, utts, {e["id"] for e in cases[-1]["enrolled"]}))
            saved.write_text(json.dumps([cases[-1], utts]))
        _score_naming(part, cases, meta)
        # the same on the conversations the engine finds narrowband and the others
        narrow = [any(u["narrowband"] for u in c["utterances"]) for c in cases]
        for band, want in (("wideband", False), ("narrowband", True)):
            sel = [i for i, n in enumerate(narrow) if n == want]
            _score_naming(f"{part}, {band}", [cases[i] for i in sel], [meta[i] for i in sel])


def _score_naming(part: str, cases: list, meta: list) -> None:
    import json
    import subprocess

    cmd = ["node", "--import", "tsx", str(ROOT / "bench/name-utterances.ts")]
    res = json.loads(subprocess.run(cmd, input=json.dumps(cases), capture_output=True, text=True, check=True,
                                    cwd=ROOT).stdout)
    right = wrong = total_e = named_s = total_s = 0.0
    worst_e, worst_s = [], []
    for (conv, utts, enrolled_keys), names in zip(meta, res["names"], strict=True):
        for spk in {r[2] for r in conv.ref}:
            ref = [(a, b) for a, b, s in conv.ref if s == spk]
            tot = sum(b - a for a, b in ref)
            ok = bad = 0.0
            for (_k, s, e, _sp), name in zip(utts, names, strict=True):
                ov = sum(max(0.0, min(b, e) - max(a, s)) for a, b in ref)
                if name == spk:
                    ok += ov
                elif name is not None:
                    bad += ov
            if spk in enrolled_keys:
                right, wrong, total_e = right + ok, wrong + bad, total_e + tot
                worst_e.append((ok / tot, conv.name))
            else:
                named_s, total_s = named_s + bad, total_s + tot
                if bad > 0:
                    worst_s.append((bad / tot, conv.name))
    shown = {k: res["rule"][k] for k in ("threshold", "margin", "utteranceMinS", "keepThreshold", "clusterAgreement",
                                         "phoneThreshold", "phoneKeepThreshold", "shortVeto")}
    print(f"{part}: {len(cases)} conversations, rule {json.dumps(shown)}\n"
          f"  enrolled speakers' speech named right {right / total_e:.1%}, wrongly {wrong / total_e:.1%}; "
          f"never-enrolled speakers' speech named {named_s / total_s:.2%}")
    print(f"  enrolled speakers below 95 % named: {sum(x < 0.95 for x, _ in worst_e)} of {len(worst_e)}; "
          f"never-enrolled speakers given a name: {len(worst_s)}: "
          + ", ".join(f"{n} {x:.0%}" for x, n in sorted(worst_s, reverse=True)[:6]), flush=True)


def _subtract(spans: list[tuple[float, float]], cut: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out = []
    for s0, e in spans:
        s = s0
        for a, b in sorted(cut):
            if b <= s or a >= e:
                continue
            if a > s:
                out.append((s, a))
            s = max(s, b)
            if s >= e:
                break
        if s < e:
            out.append((s, e))
    return out


if __name__ == "__main__":
    main()
