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

from sori_engine import audio, voiceprint  # noqa: E402
from sori_engine.diarization import CAMPPLUS_CONFIG, embed_blocks  # noqa: E402
from sori_engine.diarization.clustering import cluster  # noqa: E402

TESTDATA = ROOT.parent / "shared" / "testdata"
if not TESTDATA.exists():
    TESTDATA = Path("/work/shared/testdata")
THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
ENROLL_S = (5, 10, 20, 30)
OPERATING = 0.55  # src/speakers/options.ts
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
    args = ap.parse_args()
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


def voice_counts(table: dict[str, list[tuple[str, float, float]]], rng: random.Random) -> None:
    """As the op counts the voices of whole-file parts: the files' window embeddings together, clustered."""
    korean = {s: [f for f, _a, _b in cs] for s, cs in table.items() if s.startswith("ko-")}
    windows = {
        f: embed_blocks(lambda f=f: audio.stream(str(TESTDATA / f)), CAMPPLUS_CONFIG).emb
        for fs in korean.values()
        for f in fs
    }

    def voices(files: list[str]) -> int:
        return int(cluster(np.concatenate([windows[f] for f in files]), 0, CAMPPLUS_CONFIG).max()) + 1

    a, b = korean.values()
    one = [voices(rng.sample(rng.choice([a, b]), rng.randint(2, 5))) for _ in range(30)]
    two = [voices(rng.sample(a, rng.randint(1, 3)) + rng.sample(b, rng.randint(1, 3))) for _ in range(30)]
    print(
        "\nseveral voices found: one woman's clips",
        f"{sum(n > 1 for n in one)} / 30;",
        "both women's",
        f"{sum(n > 1 for n in two)} / 30",
    )


if __name__ == "__main__":
    main()
