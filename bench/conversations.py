#!/usr/bin/env python3
"""Speaker counts and who-spoke-when on conversations built from many voices (issue 56): the engine's `diarize`
path, scored per set, with some speakers kept out of tuning.

    flock ~/.sori-bench.lock nice -n 10 .venv/bin/python bench/conversations.py --voices ../voices --cache /tmp/conv

`--voices DIR` is a folder outside git (docs/diarization.md, "Many voices", says how it is rebuilt) with
MANIFEST.tsv: corpus, speaker, gender, language, condition, file, duration_s (one single-speaker utterance a row,
16 kHz mono WAV), and optionally SAME_VOICE.tsv: ids of one person, a group a line. A speaker is `corpus/speaker`; each is put in the tuning or the held-out part by a hash of that name
(`--held` of them held out), so the split never changes with the folder's other rows. The first `ENROLL_CLIPS`
utterances of each speaker are kept out of every conversation: bench/speakers.py enrolls them.

Each part gets `--per-set` conversations in blocks of six, one of each count of speakers (1-6); every third block is
same-gender only (its conversations of two speakers or more), half of each block is phone-band (300-3400 Hz, 8 kHz,
mu-law: a call's audio), and the target length is short (25-60 s) or long (60-120 s) at random. Speakers of one conversation share a language where the
part has enough of them. Utterances follow each other with 0.3-1.0 s of faint noise, each speaker at a level of its
own (±6 dB), every speaker heard at least twice, no one twice in a row.

Printed per conversation and per part (and its same-gender and phone subsets): the count estimated against the
truth, DER at a 0.25 s collar with the count estimated (and its confusion part: speech given to the wrong speaker)
and with the count given. A conversation's audio is also written to `--out DIR` with its RTTM when asked.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import sys
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "engine"))

from sori_engine import audio as audio_mod
from sori_engine.diarization import CAMPPLUS_CONFIG, DiarizeConfig, diarize_embedded
from sori_eval.wav import telephone_channel

from diarization import der, embed_cached

SR = 16000
ENROLL_CLIPS = 2


@dataclass(frozen=True)
class Speaker:
    key: str  # corpus/speaker
    gender: str
    language: str
    clips: tuple[str, ...]  # files of the conversation pool, absolute
    enroll: tuple[str, ...]  # files kept out of conversations


@dataclass(frozen=True)
class Conversation:
    name: str
    samples: np.ndarray
    ref: list[tuple[float, float, str]]
    speakers: tuple[Speaker, ...]
    same_gender: bool
    phone: bool


def held_out(key: str, share: float) -> bool:
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def same_voice(folder: Path) -> dict[str, str]:
    """speaker -> the one name of its voice, from SAME_VOICE.tsv (one group of ids a line): a corpus may label one
    person under several ids (the Korean corpus labels its voice actors per subset)."""
    path = folder / "SAME_VOICE.tsv"
    out: dict[str, str] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            ids = line.split("\t")
            if line.startswith("#") or len(ids) < 2:
                continue
            out.update({i: ids[0] for i in ids})
    return out


def read_voices(folder: Path, min_clips: int = ENROLL_CLIPS + 3) -> list[Speaker]:
    rows: dict[str, list[dict[str, str]]] = {}
    alias = same_voice(folder)
    with open(folder / "MANIFEST.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            key = f"{row['corpus']}/{row['speaker']}"
            rows.setdefault(alias.get(key, key), []).append(row)
    out = []
    for key, rs in sorted(rows.items()):
        if len(rs) < min_clips:
            continue
        files = tuple(str(folder / r["file"]) for r in sorted(rs, key=lambda r: r["file"]))
        out.append(Speaker(key, rs[0]["gender"], rs[0]["language"], files[ENROLL_CLIPS:], files[:ENROLL_CLIPS]))
    return out


def _pick(pool: list[Speaker], k: int, same_gender: bool, rng: np.random.Generator) -> list[Speaker] | None:
    groups: dict[tuple[str, str], list[Speaker]] = {}
    for s in pool:
        g = s.gender if same_gender else "*"
        groups.setdefault((s.language, g), []).append(s)
        groups.setdefault(("*", g), []).append(s)
    if same_gender:
        for key in list(groups):
            if key[1] == "?":
                del groups[key]
    langs = [key for key, v in groups.items() if key[0] != "*" and len(v) >= k]
    if langs:
        key = langs[rng.integers(len(langs))]
    else:
        wide = [key for key, v in groups.items() if key[0] == "*" and len(v) >= k]
        if not wide:
            return None
        key = wide[rng.integers(len(wide))]
    chosen = rng.choice(len(groups[key]), size=k, replace=False)
    return [groups[key][i] for i in chosen]


def build(pool: list[Speaker], index: int, part: str, rng: np.random.Generator) -> Conversation | None:
    block = index // 6  # each block of six holds every count once
    k = 1 + index % 6
    same = block % 3 == 0 and k > 1
    phone = (block + index) % 2 == 1
    target = rng.uniform(25, 60) if rng.random() < 0.5 else rng.uniform(60, 120)
    speakers = _pick(pool, k, same, rng)
    if speakers is None:
        return None
    gain = {s.key: 10 ** (rng.uniform(-6, 6) / 20) for s in speakers}
    queue = {s.key: list(rng.permutation(len(s.clips))) for s in speakers}
    heard = {s.key: 0 for s in speakers}
    parts, ref, t, last = [], [], 0.0, ""
    while t < target or min(heard.values()) < 2:
        need = [s for s in speakers if heard[s.key] < 2 and s.key != last]
        cands = need or [s for s in speakers if s.key != last] or speakers
        spk = cands[rng.integers(len(cands))]
        if not queue[spk.key]:
            queue[spk.key] = list(rng.permutation(len(spk.clips)))
        clip = audio_mod.decode(spk.clips[queue[spk.key].pop()])
        clip = clip / max(float(np.abs(clip).max()), 1e-6) * 0.5 * gain[spk.key]
        gap = np.float32(rng.normal(0, 0.002, int(rng.uniform(0.3, 1.0) * SR)))
        parts += [gap, clip.astype(np.float32)]
        t += len(gap) / SR
        ref.append((t, t + len(clip) / SR, spk.key))
        t += len(clip) / SR
        heard[spk.key] += 1
        last = spk.key
        if t > 180:
            break
    parts.append(np.float32(rng.normal(0, 0.002, SR // 2)))
    x = np.concatenate(parts).astype(np.float32)
    if phone:
        x = telephone_channel(x)
    tag = f"{part}-{index:02d}-k{k}{'-same' if same else ''}{'-phone' if phone else ''}"
    return Conversation(tag, x, ref, tuple(speakers), same, phone)


def conversations(speakers: list[Speaker], part: str, count: int, seed: int) -> list[Conversation]:
    rng = np.random.default_rng([seed, 0 if part == "tune" else 1])
    out = []
    for i in range(count):
        c = build(speakers, i, part, rng)
        if c is not None:
            out.append(c)
    return out


def split(speakers: list[Speaker], share: float) -> dict[str, list[Speaker]]:
    return {
        "tune": [s for s in speakers if not held_out(s.key, share)],
        "held": [s for s in speakers if held_out(s.key, share)],
    }


def score(conv: Conversation, cfg: DiarizeConfig, cache: Path | None) -> dict:
    em, _ = embed_cached(conv.name, conv.samples, cfg, cache)
    truth = len(conv.speakers)
    est = diarize_embedded(em, 0, cfg)
    fixed = diarize_embedded(em, truth, cfg)
    return {
        "name": conv.name,
        "truth": truth,
        "est": est.num_speakers,
        "audio_s": len(conv.samples) / SR,
        "same": conv.same_gender,
        "phone": conv.phone,
        "est_der": der(conv.ref, [(t.start, t.end, t.speaker) for t in est.turns], 0.25, None),
        "fixed_der": der(conv.ref, [(t.start, t.end, t.speaker) for t in fixed.turns], 0.25, None),
    }


def summary(label: str, rows: list[dict]) -> str:
    if not rows:
        return f"{label:28} (none)"
    exact = sum(r["est"] == r["truth"] for r in rows)
    near = sum(abs(r["est"] - r["truth"]) <= 1 for r in rows)
    m = {k: float(np.mean([r[k]["der"] for r in rows])) for k in ("est_der", "fixed_der")}
    conf = float(np.mean([r["est_der"]["conf"] for r in rows]))
    return (f"{label:28} n={len(rows):3}  count exact {exact}/{len(rows)} ({exact / len(rows):.0%}), within one "
            f"{near}/{len(rows)}  DER est {m['est_der']:.1%} (conf {conf:.1%}), given {m['fixed_der']:.1%}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--voices", type=Path, required=True)
    ap.add_argument("--per-set", type=int, default=45)
    ap.add_argument("--held", type=float, default=0.4, help="share of speakers held out of tuning")
    ap.add_argument("--seed", type=int, default=56)
    ap.add_argument("--parts", default="tune,held")
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--out", type=Path, help="write each conversation's WAV and RTTM here")
    ap.add_argument("--set", action="append", default=[], help="override a DiarizeConfig field, NAME=VALUE")
    args = ap.parse_args()
    types = {f.name: f.type for f in fields(DiarizeConfig)}
    cfg = CAMPPLUS_CONFIG
    for kv in args.set:
        name, value = kv.split("=", 1)
        kind = types[name]
        cfg = replace(cfg, **{name: int(value) if kind in ("int", int) else
                              value if kind in ("str", str) else float(value)})
    speakers = read_voices(args.voices)
    parts = split(speakers, args.held)
    for part, spk in parts.items():
        g = {x: sum(s.gender == x for s in spk) for x in sorted({s.gender for s in spk})}
        print(f"{part}: {len(spk)} speakers {g}")
    t0, c0 = time.perf_counter(), time.process_time()
    for part in args.parts.split(","):
        rows = []
        for conv in conversations(parts[part], part, args.per_set, args.seed):
            if args.out:
                import wave

                args.out.mkdir(parents=True, exist_ok=True)
                with wave.open(str(args.out / f"{conv.name}.wav"), "wb") as w:
                    w.setnchannels(1)
                    w.setsampwidth(2)
                    w.setframerate(SR)
                    w.writeframes((np.clip(conv.samples, -1, 1) * 32767).astype("<i2").tobytes())
                (args.out / f"{conv.name}.rttm").write_text("".join(
                    f"SPEAKER {conv.name} 1 {s:.3f} {e - s:.3f} <NA> <NA> {spk.replace('/', '_')} <NA> <NA>\n"
                    for s, e, spk in conv.ref))
            r = score(conv, cfg, args.cache)
            rows.append(r)
            print(f"  {r['name']:26} {r['audio_s']:6.1f} s  truth {r['truth']}  est {r['est']}  "
                  f"DER est {r['est_der']['der']:6.1%} (conf {r['est_der']['conf']:5.1%})  "
                  f"given {r['fixed_der']['der']:6.1%}", flush=True)
        print(summary(f"{part}: all", rows))
        print(summary(f"{part}: same-gender", [r for r in rows if r["same"]]))
        print(summary(f"{part}: mixed", [r for r in rows if not r["same"]]))
        print(summary(f"{part}: phone-band", [r for r in rows if r["phone"]]))
        print(summary(f"{part}: clean", [r for r in rows if not r["phone"]]))
        for k in range(1, 7):
            print(summary(f"{part}: {k} speakers", [r for r in rows if r["truth"] == k]))
    print(f"wall {time.perf_counter() - t0:.0f} s, CPU {time.process_time() - c0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
