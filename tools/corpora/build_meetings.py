#!/usr/bin/env python3
"""Rebuild the meeting set (docs/diarization.md, "Meetings: 3-4 speakers, overlap, short turns (issue 47)"): 15 AMI
excerpts with reference turns, written to a folder outside git (default ../meetings) that bench/diarization.py
reads (`--only meetings`).

    python tools/corpora/build_meetings.py [--out ../meetings] [--mirrors /work/.mirror]

Sources (public GitHub repositories, read with git; nothing of their code is used):

- pyannote/pyannote-audio at commit b749285c, tests/data: the debug set's 30 s AMI excerpts {trn,tst,dev}*.wav with
  debug.{train,test,development}.rttm (MIT repository; AMI audio CC BY 4.0). trn02 (one speaker) and trn03 (two) are
  left out: the set is about meetings of 3-4 speakers (dev00/01 are the shared pyannote_dev00/01, two speakers).
  `trñ00.wav` is that commit's spelling of trn00 (its RTTM says trn00).
- BUTSpeechFIT/DiariZen example/EN2002a_30s.wav (the first 30 s of AMI meeting EN2002a) with
  BUTSpeechFIT/AMI-diarization-setup only_words/rttms/test/EN2002a.rttm cut to 0-30 s (Apache-2.0).
- two 60 s files joined from two excerpts of one meeting: trn07 + trn08 and tst00 + tst01 (a jump at 30 s; the
  second excerpt's turns shifted by 30 s).

Every WAV is written 16 kHz mono 16-bit PCM (pyannote's are 32-bit float), named ami_<excerpt>.wav with
ami_<excerpt>.rttm and ami_<excerpt>.uem (the scored region, the whole file). MANIFEST.tsv: file, rttm, uem, split
(tuning: trn*; held-out: tst*, dev*, EN2002a), speakers, duration_s, source, licence.

A repository is read from `--mirrors`/<owner>+<name>/repo (a bare git dir) when there, else cloned (bare, blobs on
demand) from GitHub into that folder.
"""

from __future__ import annotations

import argparse
import io
import subprocess
from pathlib import Path

import numpy as np
import soundfile as sf

SR = 16000
PYANNOTE = "pyannote/pyannote-audio"
PYANNOTE_REV = "b749285c"
DIARIZEN = "BUTSpeechFIT/DiariZen"
AMI_SETUP = "BUTSpeechFIT/AMI-diarization-setup"
LIC_PYANNOTE = "MIT (repository); AMI Meeting Corpus audio CC BY 4.0"
LIC_BUT = "Apache-2.0 (repositories); AMI Meeting Corpus audio CC BY 4.0"

# excerpt -> (wav in pyannote tests/data, rttm subset)
PYANNOTE_FILES = {
    "trn00": ("trñ00.wav", "train"),
    "trn01": ("trn01.wav", "train"),
    "trn04": ("trn04.wav", "train"),
    "trn05": ("trn05.wav", "train"),
    "trn06": ("trn06.wav", "train"),
    "trn07": ("trn07.wav", "train"),
    "trn08": ("trn08.wav", "train"),
    "trn09": ("trn09.wav", "train"),
    "tst00": ("tst00.wav", "test"),
    "tst01": ("tst01.wav", "test"),
    "dev00": ("dev00.wav", "development"),
    "dev01": ("dev01.wav", "development"),
}
JOINED = {"trn07-08": ("trn07", "trn08"), "tst00-01": ("tst00", "tst01")}


def git_dir(repo: str, mirrors: Path) -> Path:
    """A bare git dir of `repo`: the mirror's if there, else a fresh bare clone (blobs fetched on demand)."""
    owner, name = repo.split("/")
    for cand in (mirrors / f"{owner}+{name}" / "repo", mirrors / f"{owner}+{name}", mirrors / name / ".git"):
        if (cand / "HEAD").exists():
            return cand
    dest = mirrors / f"{owner}+{name}" / "repo"
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "--bare", "--filter=blob:none", f"https://github.com/{repo}", str(dest)],
                   check=True)
    return dest


def git_show(gd: Path, rev: str, path: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(gd), "show", f"{rev}:{path}"], check=True,
                          capture_output=True).stdout


def read_audio(data: bytes) -> np.ndarray:
    x, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    if sr != SR:
        raise ValueError(f"expected {SR} Hz, got {sr}")
    return x.mean(axis=1)


def rttm_turns(text: str, uri: str | None = None) -> list[tuple[float, float, str]]:
    out = []
    for line in text.splitlines():
        p = line.split()
        if p and p[0] == "SPEAKER" and (uri is None or p[1] == uri):
            out.append((float(p[3]), float(p[3]) + float(p[4]), p[7]))
    return out


def cut(turns: list[tuple[float, float, str]], lo: float, hi: float, shift: float = 0.0):
    return [(max(s, lo) - lo + shift, min(e, hi) - lo + shift, spk) for s, e, spk in turns if e > lo and s < hi]


def write(out: Path, name: str, x: np.ndarray, turns, split: str, source: str, licence: str, rows: list) -> None:
    stem = f"ami_{name}"
    sf.write(out / f"{stem}.wav", np.clip(x, -1, 1), SR, subtype="PCM_16")
    dur = len(x) / SR
    (out / f"{stem}.rttm").write_text("".join(
        f"SPEAKER {stem} 1 {s:.3f} {e - s:.3f} <NA> <NA> {spk} <NA> <NA>\n" for s, e, spk in sorted(turns)),
        encoding="utf-8")
    (out / f"{stem}.uem").write_text(f"{stem} NA 0.000 {dur:.3f}\n")
    rows.append([f"{stem}.wav", f"{stem}.rttm", f"{stem}.uem", split, str(len({t[2] for t in turns})),
                 f"{dur:.1f}", source, licence])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[3] / "meetings")
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = ap.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    py = git_dir(PYANNOTE, args.mirrors)
    rttm = {sub: git_show(py, PYANNOTE_REV, f"tests/data/debug.{sub}.rttm").decode("utf-8")
            for sub in ("train", "test", "development")}
    audio, refs = {}, {}
    for name, (wav, sub) in PYANNOTE_FILES.items():
        audio[name] = read_audio(git_show(py, PYANNOTE_REV, f"tests/data/{wav}"))
        refs[name] = cut(rttm_turns(rttm[sub], name), 0.0, len(audio[name]) / SR)
    rows: list[list[str]] = []

    def split_of(name: str) -> str:
        return "tuning" if name.startswith("trn") else "held-out"

    def excerpt(name: str) -> tuple[np.ndarray, list, str]:
        """A pyannote debug file, or two joined (a jump at the first's end), with its turns and source line."""
        if name in JOINED:
            a, b = JOINED[name]
            x = np.concatenate([audio[a], audio[b]])
            turns = refs[a] + cut(refs[b], 0.0, len(audio[b]) / SR, shift=len(audio[a]) / SR)
            return x, turns, (f"{PYANNOTE}@{PYANNOTE_REV} tests/data/{PYANNOTE_FILES[a][0]} + {PYANNOTE_FILES[b][0]} "
                              f"(joined, jump at {len(audio[a]) / SR:.0f} s), debug.{PYANNOTE_FILES[a][1]}.rttm")
        src = f"{PYANNOTE}@{PYANNOTE_REV} tests/data/{PYANNOTE_FILES[name][0]}, debug.{PYANNOTE_FILES[name][1]}.rttm"
        if name.startswith("dev"):
            src += " (the shared pyannote_" + name + ", rewritten as 16-bit PCM)"
        return audio[name], refs[name], src

    for name in ["trn00", "trn01", "trn04", "trn05", "trn06", "trn07", "trn07-08", "trn08", "trn09"]:
        x, turns, src = excerpt(name)
        write(out, name, x, turns, split_of(name), src, LIC_PYANNOTE, rows)

    dz, ami = git_dir(DIARIZEN, args.mirrors), git_dir(AMI_SETUP, args.mirrors)
    x = read_audio(git_show(dz, "HEAD", "example/EN2002a_30s.wav"))
    turns = cut(rttm_turns(git_show(ami, "HEAD", "only_words/rttms/test/EN2002a.rttm").decode()), 0.0, len(x) / SR)
    write(out, "EN2002a_30s", x, turns, "held-out",
          f"{DIARIZEN} example/EN2002a_30s.wav; {AMI_SETUP} only_words/rttms/test/EN2002a.rttm cut to 0-30 s",
          LIC_BUT, rows)

    for name in ["dev00", "dev01", "tst00-01", "tst00", "tst01"]:
        x, turns, src = excerpt(name)
        write(out, name, x, turns, split_of(name), src, LIC_PYANNOTE, rows)

    header = ["file", "rttm", "uem", "split", "speakers", "duration_s", "source", "licence"]
    (out / "MANIFEST.tsv").write_text("\n".join("\t".join(r) for r in [header] + rows) + "\n", encoding="utf-8")
    for r in rows:
        print("\t".join(r[:6]))
    print(f"{len(rows)} files in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
