#!/usr/bin/env python3
"""Rebuild the Japanese read-speech set (docs/performance.md, decision log, "Issue 57's Japanese read-speech rise"): short
clips of real people reading Japanese sentences, none of them in ../shared/testdata, written to a folder outside git
(default ../ja-read) that bench/ja_read.py scores.

    python tools/corpora/build_ja_read.py [--out ../ja-read] [--mirrors /work/.mirror]

Sources (public GitHub repositories at pinned commits, read with git; only their audio and transcripts are used):

- itsupera/onsei data/jsut_basic5000_sample: the first 100 utterances of JSUT basic5000 (one woman, studio read
  speech, 16 kHz in that copy) with the corpus's own transcript_utf8.txt. JSUT: text CC BY-SA 4.0, audio for
  research and personal use (its terms). 20 of them: BASIC5000_0001, 0006, 0011, ... (every fifth).
- itsupera/onsei data/forvo/everyday_phrases: Forvo pronunciations of everyday Japanese phrases (native Forvo users,
  home microphones, each padded to 5 s with silence in that copy); the text is the file name. Forvo's audio is CC
  BY-NC-SA 3.0. 12 of them: the 12 with the longest text (ties by name), so that a clip is a sentence, not a word.
- kaiidams/Kokoro-Speech-Dataset gh-pages: the 5 sample clips of the Kokoro Speech Dataset (one LibriVox reader
  of Aozora Bunko novels, public domain), with the sample page's transcript (the dataset's own alignment: some
  words in kana where the book has kanji; spaces removed). Its tacotron-sample*.wav are synthesized and not used.
- reazon-research/ReazonSpeech at 69edeec (a commit since reverted), pkg/k2-asr/test_wavs: test_ja_2.wav (one
  speaker reading a test sentence, 44.1 kHz stereo) with that commit's transcripts.txt (Apache-2.0 repository).
  test_ja_1 (conversation) and the English files are not used.

Every clip: 16 kHz mono 16-bit PCM WAV, as published (no trimming: the Forvo clips keep their trailing silence).
MANIFEST.tsv: file, text, speaker, split, source, licence. The split is by a hash of the file name: within each
source the clips are ordered by sha1(file name) and dealt alternately to `tune` and `held`, so that both halves hold
every source; a rule is tuned on `tune` and confirmed on `held`.

A repository is read from `--mirrors`/<owner>+<name>/repo (a bare git dir) when there, else cloned (bare) from
GitHub into that folder.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from build_voices import Repo, load  # the sibling script (python puts this script's folder on sys.path)

SR = 16000

ONSEI = ("itsupera/onsei", "4e20c11a6db17286c5e68b2d3e3908c4fc6f7d44")
KOKORO = ("kaiidams/Kokoro-Speech-Dataset", "0c03174b9d7d90aa1da03a21dba93eb6059278f6")
REAZON = ("reazon-research/ReazonSpeech", "69edeeccc3f44c76a34a28c67306a2632a27dd74")

JSUT_LICENCE = "JSUT (text CC BY-SA 4.0; audio research and personal use only)"
FORVO_LICENCE = "Forvo pronunciations, CC BY-NC-SA 3.0"
KOKORO_LICENCE = "Kokoro Speech Dataset: LibriVox audio and Aozora Bunko text, public domain"
REAZON_LICENCE = "Apache-2.0 (ReazonSpeech repository test file)"
N_JSUT, N_FORVO = 20, 12


def source(repo: Repo, path: str) -> str:
    return f"{repo.name}@{repo.rev[:8]}:{path}"


@dataclass
class Clip:
    file: str
    text: str
    speaker: str
    source: str
    licence: str
    samples: np.ndarray


def jsut(repo: Repo) -> list[Clip]:
    base = "data/jsut_basic5000_sample"
    texts = dict(line.split(":", 1) for line in repo.read(f"{base}/transcript_utf8.txt").decode().splitlines()
                 if ":" in line)
    out = []
    for i in range(1, 5 * N_JSUT + 1, 5):
        uid = f"BASIC5000_{i:04d}"
        path = f"{base}/{uid}.wav"
        out.append(Clip(f"jsut_{uid.lower()}.wav", texts[uid].strip(), "jsut", source(repo, path), JSUT_LICENCE,
                        load(repo.read(path))))
    return out


def forvo(repo: Repo) -> list[Clip]:
    paths = repo.glob(r"data/forvo/everyday_phrases/[^/]+/pronunciation_ja_.+\.wav")
    text = {p: p.rsplit("pronunciation_ja_", 1)[1][: -len(".wav")] for p in paths}
    chosen = sorted(paths, key=lambda p: (-len(text[p]), p))[:N_FORVO]
    out = []
    for p in sorted(chosen):
        digest = hashlib.sha1(text[p].encode()).hexdigest()[:8]
        out.append(Clip(f"forvo_{digest}.wav", text[p], "forvo (users not named)", source(repo, p), FORVO_LICENCE,
                        load(repo.read(p))))
    return out


def kokoro(repo: Repo) -> list[Clip]:
    page = repo.read("samples.html").decode()
    rows = re.findall(r'<audio src="([^"]+\.wav)"[^>]*></audio>\s*<br>\s*([^<]+?)\s*<br>', page)
    out = []
    for name, text in rows:
        out.append(Clip(f"kokoro_{name.removesuffix('.wav').replace('-', '_')}.wav", re.sub(r"\s+", "", text),
                        "kokoro (LibriVox reader)", source(repo, name), KOKORO_LICENCE, load(repo.read(name))))
    return out


def reazon(repo: Repo) -> list[Clip]:
    base = "pkg/k2-asr/test_wavs"
    texts = dict(line.split(", ", 1) for line in repo.read(f"{base}/transcripts.txt").decode().splitlines()
                 if ", " in line)
    path = f"{base}/test_ja_2.wav"
    return [Clip("reazon_test_ja_2.wav", texts["test_ja_2"].strip(), "reazonspeech test speaker", source(repo, path),
                 REAZON_LICENCE, load(repo.read(path)))]


def split(clips: list[Clip]) -> dict[str, str]:
    """Within each source, clips ordered by sha1(file) and dealt alternately to tune and held."""
    out: dict[str, str] = {}
    by_group: dict[str, list[Clip]] = {}
    for c in clips:
        by_group.setdefault(c.file.split("_", 1)[0], []).append(c)
    for group in by_group.values():
        for i, c in enumerate(sorted(group, key=lambda c: hashlib.sha1(c.file.encode()).hexdigest())):
            out[c.file] = "tune" if i % 2 == 0 else "held"
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("../ja-read"))
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = ap.parse_args()
    onsei = Repo(ONSEI[0], args.mirrors, ONSEI[1])
    clips = jsut(onsei) + forvo(onsei) + kokoro(Repo(KOKORO[0], args.mirrors, KOKORO[1])) + reazon(Repo(REAZON[0], args.mirrors, REAZON[1]))
    parts = split(clips)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = ["file\ttext\tspeaker\tsplit\tsource\tlicence\tduration_s"]
    for c in clips:
        pcm = np.clip(c.samples, -1.0, 1.0)
        sf.write(args.out / c.file, pcm, SR, subtype="PCM_16")
        rows.append("\t".join([c.file, c.text, c.speaker, parts[c.file], c.source, c.licence,
                               f"{len(c.samples) / SR:.2f}"]))
    (args.out / "MANIFEST.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    n = {s: sum(1 for v in parts.values() if v == s) for s in ("tune", "held")}
    total = sum(len(c.samples) for c in clips) / SR
    print(f"{len(clips)} clips ({n['tune']} tune, {n['held']} held), {total:.0f} s of audio -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
