#!/usr/bin/env python3
"""Build ../repeats: real speech said again, to tell a repeat from a decoder loop (issue 67).

Each file is real speech in which one unit is said several times in a row, with the reference text and the number
of copies said:

- `digits_*` (en): card numbers (four groups of four digits, one group said four times, as "5 4 5 4, 5 4 5 4, ...")
  and phone numbers (3-3-4 digits, a group said twice), each digit a different take by one speaker of the Free Spoken
  Digit Dataset (Jakobovski/free-spoken-digit-dataset, CC BY-SA 4.0; six men, 8 kHz), 0.1 s between digits, 0.6 s
  between groups;
- `ko_*`: a short Korean sentence of emotiontts_open_db (research use only; read by voice actors), said 2-4 times
  with 0.5-0.9 s of the clip's own room tone between;
- `ja_*`: a Japanese everyday phrase of Forvo (via itsupera/onsei; CC BY-NC-SA 3.0), said 2-4 times likewise.

A sentence said again is the recording played again (one take); digits are separate takes. `split` is `tune` or
`held` by a hash of the unit's source (every other speaker for digits), so held files share no unit or digit speaker with the
tuning part. `MANIFEST.tsv`: file, lang, split, copies, unit, reference, source, licence.

    /tmp/corpvenv/bin/python tools/corpora/build_repeats.py --out ../repeats    # numpy, scipy, soundfile; seconds
"""

from __future__ import annotations

import argparse
import hashlib
import re
from pathlib import Path

import numpy as np
import soundfile as sf

from build_voices import Repo, load, trim  # the sibling script

SR = 16000
FSDD = "Jakobovski/free-spoken-digit-dataset"
EMOTIONTTS = "emotiontts/emotiontts_open_db"
ONSEI = "itsupera/onsei"
FSDD_LICENCE = "FSDD, CC BY-SA 4.0"
EMOTIONTTS_LICENCE = "emotiontts_open_db, research use only"
FORVO_LICENCE = "Forvo pronunciations, CC BY-NC-SA 3.0"


def split_of(key: str) -> str:
    return "held" if int(hashlib.sha1(key.encode()).hexdigest(), 16) % 2 else "tune"


def room(x: np.ndarray, seconds: float, rng: np.random.Generator) -> np.ndarray:
    """Faint noise at the level of the clip's quietest 50 ms (its room tone), `seconds` long."""
    n = len(x) // 800
    floor = float(np.sqrt(np.min(np.mean(x[: n * 800].reshape(n, 800) ** 2, axis=1)))) if n else 1e-4
    return (rng.standard_normal(int(seconds * SR)) * max(floor, 1e-4)).astype(np.float32)


def digits(repo: Repo, rng: np.random.Generator) -> list[dict]:
    takes: dict[tuple[str, str], list[str]] = {}
    for path in repo.glob(r"recordings/\d_[a-z]+_\d+\.wav"):
        d, spk, _ = Path(path).stem.split("_")
        takes.setdefault((spk, d), []).append(path)
    out = []
    speakers = sorted({s for s, _ in takes})
    held = set(speakers[1::2])  # six speakers: a hash splits so few unevenly
    for spk in speakers:
        for n in range(4):
            g = "".join(rng.choice(list("0123456789"), 4))
            groups = [g] * 4 if n < 2 else ["".join(rng.choice(list("0123456789"), 4)) for _ in range(4)]
            kind = "card_same" if n < 2 else "card"
            out.append((spk, kind, groups))
        for _ in range(2):
            a = "".join(rng.choice(list("0123456789"), 3))
            out.append((spk, "phone", [a, a, "".join(rng.choice(list("0123456789"), 4))]))
    items = []
    for i, (spk, kind, groups) in enumerate(out):
        used = {}
        audio = []
        for g in groups:
            x = say_group(repo, takes, spk, g, used, rng)
            audio += [x, room(x, 0.6, rng)]
        unit = groups[0]
        items.append({"file": f"digits_{spk}_{i:02d}.wav", "lang": "en", "split": "held" if spk in held else "tune",
                      "copies": groups.count(unit), "unit": unit, "reference": ", ".join(groups),
                      "source": f"github:{FSDD}/recordings/ ({spk}, {kind})", "licence": FSDD_LICENCE,
                      "audio": np.concatenate(audio[:-1])})
    return items


def say_group(repo: Repo, takes: dict, spk: str, group: str, used: dict, rng: np.random.Generator) -> np.ndarray:
    """One speaker's digits of `group`, each a take not used before in this file, 0.1 s apart."""
    parts = []
    for d in group:
        k = used.get(d, 0)
        used[d] = k + 1
        x = trim(load(repo.read(takes[(spk, d)][k % len(takes[(spk, d)])])))
        parts += [x, room(x, 0.1, rng)]
    return np.concatenate(parts[:-1])


def said_again(name: str, lang: str, unit: str, x: np.ndarray, source: str, licence: str,
               rng: np.random.Generator) -> dict:
    copies = int(rng.integers(2, 5))
    x = trim(x)
    audio = []
    for _ in range(copies):
        audio += [x, room(x, float(rng.uniform(0.5, 0.9)), rng)]
    sep = " " if lang == "ko" else ""
    return {"file": name, "lang": lang, "split": split_of(source), "copies": copies, "unit": unit,
            "reference": sep.join([unit] * copies), "source": source, "licence": licence,
            "audio": np.concatenate(audio[:-1])}


def korean(repo: Repo, rng: np.random.Generator, n: int) -> list[dict]:
    items = []
    for path in repo.glob(r"Dataset/SpeechCorpus/.+/transcript/[a-z]{3}\d+\.txt")[::3]:  # spread over the sets
        text = repo.read(path).decode("utf-8-sig").strip()
        if not 4 <= len(re.sub(r"\s", "", text)) <= 16:
            continue
        wav = path.replace("/transcript/", "/wav/")[: -len(".txt")] + ".wav"
        if wav not in repo.files:
            continue
        items.append(said_again(f"ko_{Path(path).stem}.wav", "ko", text, load(repo.read(wav)),
                                f"github:{EMOTIONTTS}/{wav}", EMOTIONTTS_LICENCE, rng))
        if len(items) >= n:
            break
    return items


def japanese(repo: Repo, rng: np.random.Generator) -> list[dict]:
    items = []
    for path in repo.glob(r"data/forvo/everyday_phrases/[^/]+/pronunciation_ja_.+\.wav"):
        text = path.rsplit("pronunciation_ja_", 1)[1][: -len(".wav")]
        digest = hashlib.sha1(text.encode()).hexdigest()[:8]
        items.append(said_again(f"ja_{digest}.wav", "ja", text, load(repo.read(path)), f"github:{ONSEI}/{path}",
                                FORVO_LICENCE, rng))
    return items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="../repeats")
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--ko", type=int, default=40, help="Korean sentences")
    args = ap.parse_args()
    out, mirrors = Path(args.out), Path(args.mirrors)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(67)
    items = digits(Repo(FSDD, mirrors), rng)
    items += korean(Repo(EMOTIONTTS, mirrors), rng, args.ko)
    items += japanese(Repo(ONSEI, mirrors), rng)
    cols = ["file", "lang", "split", "copies", "unit", "reference", "source", "licence"]
    rows = ["\t".join(cols)]
    for it in items:
        sf.write(out / it["file"], it["audio"], SR, subtype="PCM_16")
        rows.append("\t".join(str(it[c]) for c in cols))
    (out / "MANIFEST.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    by = {}
    for it in items:
        by[(it["lang"], it["split"])] = by.get((it["lang"], it["split"]), 0) + 1
    print(f"{len(items)} files in {out}: " + ", ".join(f"{k[0]} {k[1]} {v}" for k, v in sorted(by.items())))


if __name__ == "__main__":
    main()
