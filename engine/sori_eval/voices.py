"""Conversations built from a folder of many voices (bench/diarization.py --voices, bench/speakers.py --voices,
bench/speakers_service.py, tools/cohort.py), tuning and held-out speakers apart.

`folder` is outside git (tools/corpora/build_voices.py rebuilds it) with MANIFEST.tsv: corpus, speaker, gender,
language, condition, file, duration_s (one single-speaker utterance a row, 16 kHz mono WAV), and optionally
SAME_VOICE.tsv: ids of one person, a group a line. A speaker is `corpus/speaker`; each is put in the tuning or the
held-out part by a hash of that name (`share` of them held out), so the split never changes with the folder's other
rows. The first `ENROLL_CLIPS` utterances of each speaker are kept out of every conversation: bench/speakers.py
enrolls them.

Each part gets `count` conversations in blocks of six, one of each count of speakers (1-6); every third block is
same-gender only (its conversations of two speakers or more), half of each block is phone-band (300-3400 Hz, 8 kHz,
mu-law: a call's audio), and the target length is short (25-60 s) or long (60-120 s) at random. Speakers of one
conversation share a language where the part has enough of them. Utterances follow each other with 0.3-1.0 s of
faint noise, each speaker at a level of its own (+-6 dB), every speaker heard at least twice, no one twice in a row.
Imports sori_engine (its audio decoding): select the engine under test first (engine_under_test.select).
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sori_engine import audio as audio_mod

from .wav import telephone_channel

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
    parts: list[np.ndarray] = []
    ref, t, last = [], 0.0, ""
    while t < target or min(heard.values()) < 2:
        need = [s for s in speakers if heard[s.key] < 2 and s.key != last]
        cands = need or [s for s in speakers if s.key != last] or speakers
        spk = cands[rng.integers(len(cands))]
        if not queue[spk.key]:
            queue[spk.key] = list(rng.permutation(len(spk.clips)))
        clip = audio_mod.decode(spk.clips[queue[spk.key].pop()])
        clip = clip / max(float(np.abs(clip).max()), 1e-6) * 0.5 * gain[spk.key]
        gap = rng.normal(0, 0.002, int(rng.uniform(0.3, 1.0) * SR)).astype(np.float32)
        parts += [gap, clip.astype(np.float32)]
        t += len(gap) / SR
        ref.append((t, t + len(clip) / SR, spk.key))
        t += len(clip) / SR
        heard[spk.key] += 1
        last = spk.key
        if t > 180:
            break
    parts.append(rng.normal(0, 0.002, SR // 2).astype(np.float32))
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
