#!/usr/bin/env python3
"""Rebuild the voices folder (docs/diarization.md, "Many voices: similar voices and phone calls (issue 56)"):
single-speaker clips of many people, outside git (default ../voices), that bench/diarization.py --voices and
bench/speakers.py --voices read.

    python tools/corpora/build_voices.py [--out ../voices] [--mirrors /work/.mirror]
    .venv/bin/python tools/corpora/same_voice.py [--voices ../voices]      # then: SAME_VOICE.tsv

Every clip: 16 kHz mono 16-bit WAV, leading and trailing silence trimmed (10 ms frames below 35 dB under the clip's
loudest frame, 50 ms kept either side), a clip over 20 s split at its quietest point near the middle (each part
trimmed again), clips under 1.5 s dropped; one folder per speaker, `<corpus>/<speaker>/<source name>.wav`. Speakers
left with fewer than 5 clips are dropped. MANIFEST.tsv: corpus, speaker, gender, language, condition, file,
duration_s, source. SOURCES.md says how each corpus is fetched and cut.

Sources (public GitHub repositories, read with git; only their audio and speaker metadata are used):

- emotiontts/emotiontts_open_db Dataset/SpeechCorpus (Korean, research use only; 22.05 kHz studio read and
  dialogue speech): Main/main (lmy, kih), Main/average_voice_model (av*), Main/adaptive (ad*),
  Emotional/plain-to-emotional (em*) and emotional-to-emotional (ne*; files 1-100 neutral, 101-200 happy, 201-300
  angry, 301-400 sad), Personality (pf* women, pm* men). Gender from the subsets' READMEs (여성 / 남성). The corpus
  labels its voice actors per subset, so one person may have several ids: same_voice.py finds them.
- resemble-ai/Resemblyzer audio_data/librispeech_test-other (10 LibriSpeech test-other speakers, 10 utterances
  each; CC BY 4.0); gender from its SPEAKERS.TXT.
- sylaschacko/voice-emotion-analysis wav/ (EmoDB, German acted emotions; that copy cuts every file to 2.0 s, so its
  clips are 1.5-2.0 s); speakers 03, 10, 11, 12, 15 male, 08, 09, 13, 14, 16 female (EmoDB's documentation).
- auspicious3000/autovc wavs/ (VCTK p225 F, p226 M, p227 M, p228 F; English).
- jackaduma/CycleGAN-VC2 data/S0913 (AISHELL-1 speaker S0913, male, Mandarin) and data/gaoxiaosong (broadcast
  Mandarin, Gao Xiaosong, male), named aishell1/S0913 and broadcast_zh/gaoxiaosong.
- Jakobovski/free-spoken-digit-dataset recordings/ (six male speakers, English digits, 8 kHz: resampled to 16 kHz;
  genders from its metadata.py): each speaker's digits, trimmed, joined in file order with 0.15 s of faint noise
  between them until a clip holds 1.5 s or more (at most `--fsdd-clips` clips a speaker).

A repository is read from `--mirrors`/<owner>+<name>/repo (a bare git dir) when there, else cloned (bare) from
GitHub into that folder.
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
from dataclasses import dataclass
from math import gcd
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

SR = 16000
MIN_S, MAX_S = 1.5, 20.0
MIN_CLIPS = 5
FRAME = 160  # 10 ms
TRIM_DB = 35.0
KEEP = 800  # 50 ms kept around the speech

EMOTIONTTS = "emotiontts/emotiontts_open_db"
RESEMBLYZER = "resemble-ai/Resemblyzer"
EMODB = "sylaschacko/voice-emotion-analysis"
AUTOVC = "auspicious3000/autovc"
CYCLEGAN = "jackaduma/CycleGAN-VC2"
FSDD = "Jakobovski/free-spoken-digit-dataset"

EMODB_MALE = {"03", "10", "11", "12", "15"}
EMODB_FEMALE = {"08", "09", "13", "14", "16"}
EMODB_EMOTION = {"W": "anger", "L": "boredom", "E": "disgust", "A": "fear", "F": "happiness", "T": "sadness",
                 "N": "neutral"}
VCTK_GENDER = {"p225": "F", "p226": "M", "p227": "M", "p228": "F"}


# ---------------------------------------------------------------------------------------------------------------
# git


class Repo:
    """Blobs of one repository's commit, read through `git cat-file --batch`."""

    def __init__(self, name: str, mirrors: Path, rev: str = "HEAD") -> None:
        self.name = name
        owner, short = name.split("/")
        gd = None
        for cand in (mirrors / f"{owner}+{short}" / "repo", mirrors / f"{owner}+{short}", mirrors / short / ".git"):
            if (cand / "HEAD").exists():
                gd = cand
                break
        if gd is None:
            gd = mirrors / f"{owner}+{short}" / "repo"
            gd.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "clone", "--bare", f"https://github.com/{name}", str(gd)], check=True)
        self.gd = gd
        self.rev = subprocess.run(["git", "--git-dir", str(gd), "rev-parse", rev], check=True, capture_output=True,
                                  text=True).stdout.strip()
        self.files = subprocess.run(["git", "--git-dir", str(gd), "ls-tree", "-r", "--name-only", "-z", self.rev],
                                    check=True, capture_output=True).stdout.decode("utf-8").split("\0")
        self._cat = subprocess.Popen(["git", "--git-dir", str(gd), "cat-file", "--batch"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)

    def read(self, path: str) -> bytes:
        assert self._cat.stdin and self._cat.stdout
        self._cat.stdin.write(f"{self.rev}:{path}\n".encode())
        self._cat.stdin.flush()
        header = self._cat.stdout.readline().split()
        if len(header) < 3:
            raise FileNotFoundError(f"{self.name}:{path}")
        data = self._cat.stdout.read(int(header[2]))
        self._cat.stdout.read(1)
        return data

    def glob(self, pattern: str) -> list[str]:
        rx = re.compile(pattern)
        return sorted(f for f in self.files if rx.fullmatch(f))


# ---------------------------------------------------------------------------------------------------------------
# audio


def load(data: bytes) -> np.ndarray:
    x, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    x = x.mean(axis=1)
    if sr != SR:
        g = gcd(SR, sr)
        x = resample_poly(x, SR // g, sr // g).astype(np.float32)
    return x


def frame_db(x: np.ndarray) -> np.ndarray:
    n = len(x) // FRAME
    if n == 0:
        return np.full(1, -120.0)
    rms = np.sqrt(np.mean(x[: n * FRAME].reshape(n, FRAME) ** 2, axis=1) + 1e-12)
    return 20 * np.log10(rms)


def trim(x: np.ndarray) -> np.ndarray:
    db = frame_db(x)
    loud = np.flatnonzero(db >= max(db.max() - TRIM_DB, -65.0))
    if len(loud) == 0:
        return x[:0]
    a = max(0, loud[0] * FRAME - KEEP)
    b = min(len(x), (loud[-1] + 1) * FRAME + KEEP)
    return x[a:b]


def split_long(x: np.ndarray) -> list[np.ndarray]:
    """A clip over MAX_S cut at its quietest 10 ms frame (energy smoothed over 200 ms) in the middle third, then each
    part the same way, each part trimmed."""
    x = trim(x)
    if len(x) <= MAX_S * SR:
        return [x]
    db = frame_db(x)
    smooth = np.convolve(db, np.ones(20) / 20, mode="same")
    n = len(db)
    lo, hi = n // 3, 2 * n // 3
    cut = (lo + int(np.argmin(smooth[lo:hi]))) * FRAME
    return split_long(x[:cut]) + split_long(x[cut:])


@dataclass
class Clip:
    corpus: str
    speaker: str
    gender: str
    language: str
    condition: str
    name: str  # file stem
    samples: np.ndarray
    source: str


def cut_clips(base: Clip) -> list[Clip]:
    parts = split_long(base.samples)
    out = []
    for i, p in enumerate(parts):
        if MIN_S <= len(p) / SR <= MAX_S:
            name = base.name if len(parts) == 1 else f"{base.name}_{i + 1}"
            out.append(Clip(base.corpus, base.speaker, base.gender, base.language, base.condition, name, p,
                            base.source + ("" if len(parts) == 1 else f" (part {i + 1} of {len(parts)})")))
    return out


# ---------------------------------------------------------------------------------------------------------------
# corpora


def emotiontts(repo: Repo) -> list[Clip]:
    gender: dict[str, str] = {}
    for readme in repo.glob(r"Dataset/SpeechCorpus/[^/]+/README\.md"):
        for line in repo.read(readme).decode("utf-8").splitlines():
            m = re.match(r"\s*([a-z]{3})/\s*-.*?(여성|남성)", line)
            if m:
                gender[m.group(1)] = "F" if m.group(2) == "여성" else "M"
    subset_condition = {
        "Main/main": "studio read and dialogue (main speaker)",
        "Main/average_voice_model": "studio read (average voice model)",
        "Main/adaptive": "studio read (speaker adaptation)",
        "Emotional/plain-to-emotional": "studio dialogue, acted emotion",
        "Emotional/emotional-to-emotional": "studio dialogue, emotional script",
        "Personality": "studio read and dialogue (personality)",
    }
    out = []
    for path in repo.glob(r"Dataset/SpeechCorpus/.+/wav/[a-z]{3}\d+\.wav"):
        spk = path.split("/")[-3]
        rel = path[len("Dataset/SpeechCorpus/"):]
        cond = next(c for k, c in subset_condition.items() if rel.startswith(k + "/"))
        if rel.startswith("Emotional/"):
            idx = int(re.search(r"(\d+)\.wav$", path).group(1))
            cond += ", " + ("neutral", "happy", "angry", "sad")[min(3, (idx - 1) // 100)]
        if spk not in gender:
            raise ValueError(f"no gender for emotiontts speaker {spk}")
        base = Clip("emotiontts", spk, gender[spk], "ko", cond, Path(path).stem, load(repo.read(path)),
                    f"github:{EMOTIONTTS}/{path}")
        out += cut_clips(base)
    return out


def librispeech(repo: Repo) -> list[Clip]:
    root = "audio_data/librispeech_test-other"
    gender = {}
    for line in repo.read(f"{root}/SPEAKERS.TXT").decode("utf-8").splitlines():
        p = [s.strip() for s in line.split("|")]
        if len(p) >= 2 and not line.startswith(";"):
            gender[p[0]] = p[1]
    out = []
    for path in repo.glob(rf"{root}/\d+/[\d-]+\.flac"):
        spk = path.split("/")[-2]
        out += cut_clips(Clip("librispeech", spk, gender[spk], "en", "read audiobook (test-other)", Path(path).stem,
                              load(repo.read(path)), f"github:{RESEMBLYZER}/{path}"))
    return out


def emodb(repo: Repo) -> list[Clip]:
    out = []
    for path in repo.glob(r"wav/\d\d[ab]\d\d[A-Z][a-z]+\.wav"):
        stem = Path(path).stem
        spk = stem[:2]
        g = "M" if spk in EMODB_MALE else "F" if spk in EMODB_FEMALE else "?"
        out += cut_clips(Clip("emodb", spk, g, "de", f"acted emotion, anechoic: {EMODB_EMOTION.get(stem[5], '?')}",
                              stem, load(repo.read(path)), f"github:{EMODB}/{path} (2.0 s cut of EmoDB)"))
    return out


def vctk(repo: Repo) -> list[Clip]:
    out = []
    for path in repo.glob(r"wavs/p\d+/p\d+_\d+\.wav"):
        spk = path.split("/")[1]
        out += cut_clips(Clip("vctk", spk, VCTK_GENDER[spk], "en", "read, studio (VCTK)", Path(path).stem,
                              load(repo.read(path)), f"github:{AUTOVC}/{path}"))
    return out


def mandarin(repo: Repo) -> list[Clip]:
    out = []
    for folder, corpus, cond in (("S0913", "aishell1", "read, AISHELL-1"),
                                 ("gaoxiaosong", "broadcast_zh", "broadcast speech")):
        for path in repo.glob(rf"data/{folder}/[^/]+\.wav"):
            out += cut_clips(Clip(corpus, folder, "M", "zh", cond, Path(path).stem, load(repo.read(path)),
                                  f"github:{CYCLEGAN}/{path}"))
    return out


def fsdd(repo: Repo, max_clips: int) -> list[Clip]:
    meta = repo.read("metadata.py").decode("utf-8")
    gender = {m.group(1): ("M" if m.group(2) == "male" else "F")
              for m in re.finditer(r"'(\w+)':\s*\{\s*'gender':\s*'(\w+)'", meta)}
    by_spk: dict[str, list[str]] = {}
    for path in repo.glob(r"recordings/\d_[a-z]+_\d+\.wav"):
        _d, spk, _i = Path(path).stem.split("_")
        by_spk.setdefault(spk, []).append(path)
    rng = np.random.default_rng(8000)
    out = []
    for spk, paths in sorted(by_spk.items()):
        # file order by take then digit: 0_x_0, 1_x_0, ..., 9_x_0, 0_x_1, ...
        paths.sort(key=lambda p: (int(Path(p).stem.split("_")[2]), int(Path(p).stem.split("_")[0])))
        cur, names, n = [], [], 0
        for path in paths:
            if n >= max_clips:
                break
            x = trim(load(repo.read(path)))
            if len(x) < FRAME:
                continue
            if cur:
                cur.append((rng.normal(0, 0.001, int(0.15 * SR))).astype(np.float32))
            cur.append(x)
            names.append(Path(path).stem)
            if sum(len(c) for c in cur) >= MIN_S * SR:
                joined = np.concatenate(cur)
                if len(joined) <= MAX_S * SR:
                    n += 1
                    out.append(Clip("fsdd", spk, gender.get(spk, "?"), "en", "spoken digits, 8 kHz",
                                    f"{spk}_{n:03d}", joined,
                                    f"github:{FSDD}/recordings/{{{','.join(names)}}}.wav joined"))
                cur, names = [], []
    return out


# ---------------------------------------------------------------------------------------------------------------


SOURCES_MD = """# Sources of this folder

Built by `tools/corpora/build_voices.py` of the sori repository (SAME_VOICE.tsv by `tools/corpora/same_voice.py`);
never committed. Every clip is 16 kHz mono 16-bit WAV, 1.5-20 s: leading and trailing silence trimmed (10 ms frames
more than 35 dB under the clip's loudest frame, 50 ms kept either side), a clip over 20 s split at its quietest point
(200 ms smoothed energy) in its middle third and each part trimmed again, clips under 1.5 s dropped. A speaker with
fewer than 5 clips is dropped. Other rates are resampled to 16 kHz (scipy `resample_poly`); stereo is averaged.
Repositories are read with git (a bare clone; `git cat-file`), at the commits below.

| corpus | repository (commit) | what | speakers | licence | cut |
|---|---|---|---|---|---|
{rows}

Gender: emotiontts from the subsets' READMEs (`여성` woman / `남성` man, per id); LibriSpeech from the repository's
`SPEAKERS.TXT`; EmoDB speakers 03, 10, 11, 12, 15 male and 08, 09, 13, 14, 16 female (EmoDB's documentation); VCTK
p225 F, p226 M, p227 M, p228 F (VCTK speaker-info); AISHELL-1 S0913 and Gao Xiaosong male (the CycleGAN-VC2 README:
"Chinese Male Speakers"); free spoken digits from its `metadata.py` (all six male).

The Korean corpus labels its voice actors per subset, so one person may have several ids: `SAME_VOICE.tsv` (one
group of ids a line, the first id names the voice) is written by `same_voice.py` from the engine's voiceprints
(see that file's header), plus the hand-joined groups of `tools/same_voice_extra.tsv`.
"""

TABLE = {
    "emotiontts": (EMOTIONTTS, ("Dataset/SpeechCorpus/*/wav/*.wav: Korean studio read and dialogue speech, "
                   "neutral and acted emotions (22.05 kHz)"), "research use only (not commercial)",
                   "each file a clip"),
    "librispeech": (RESEMBLYZER, "audio_data/librispeech_test-other/*/*.flac: LibriSpeech test-other",
                    "CC BY 4.0", "each file a clip"),
    "emodb": (EMODB, ("wav/*.wav: EmoDB (German acted emotions, anechoic), cut to 2.0 s by that repository "
              "(22.05 kHz)"), "EmoDB: free for research", "each file a clip, 1.5-2.0 s after trimming"),
    "vctk": (AUTOVC, "wavs/p22[5-8]/*.wav: four VCTK speakers", "CC BY 4.0 (VCTK)", "each file a clip"),
    "aishell1": (CYCLEGAN, "data/S0913/*.wav: AISHELL-1 speaker S0913 (Mandarin read speech)",
                 "Apache-2.0 (AISHELL-1)", "each file a clip"),
    "broadcast_zh": (CYCLEGAN, "data/gaoxiaosong/*.wav: Mandarin broadcast speech of Gao Xiaosong",
                     "as published in that MIT repository; provenance of the audio unknown", "each file a clip"),
    "fsdd": (FSDD, "recordings/*.wav: free spoken digit dataset, English digits, 8 kHz", "CC BY-SA 4.0",
             "digits trimmed and joined in take order (0.15 s of faint noise between) into clips of 1.5 s or more"),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[3] / "voices")
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--fsdd-clips", type=int, default=40, help="most clips of joined digits per speaker")
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    repos = {n: Repo(n, args.mirrors) for n in (EMOTIONTTS, RESEMBLYZER, EMODB, AUTOVC, CYCLEGAN, FSDD)}
    clips: list[Clip] = []
    for label, fn in (("emotiontts", lambda: emotiontts(repos[EMOTIONTTS])),
                      ("librispeech", lambda: librispeech(repos[RESEMBLYZER])),
                      ("emodb", lambda: emodb(repos[EMODB])),
                      ("vctk", lambda: vctk(repos[AUTOVC])),
                      ("mandarin", lambda: mandarin(repos[CYCLEGAN])),
                      ("fsdd", lambda: fsdd(repos[FSDD], args.fsdd_clips))):
        got = fn()
        print(f"{label}: {len(got)} clips", flush=True)
        clips += got
    by_spk: dict[tuple[str, str], list[Clip]] = {}
    for c in clips:
        by_spk.setdefault((c.corpus, c.speaker), []).append(c)
    rows = []
    dropped = []
    for (corpus, spk), cs in sorted(by_spk.items()):
        if len(cs) < MIN_CLIPS:
            dropped.append(f"{corpus}/{spk} ({len(cs)} clips)")
            continue
        d = out / corpus / spk
        d.mkdir(parents=True, exist_ok=True)
        for c in sorted(cs, key=lambda c: c.name):
            rel = f"{corpus}/{spk}/{c.name}.wav"
            sf.write(out / rel, np.clip(c.samples, -1, 1), SR, subtype="PCM_16")
            rows.append([c.corpus, c.speaker, c.gender, c.language, c.condition, rel, f"{len(c.samples) / SR:.2f}",
                         c.source])
    header = ["corpus", "speaker", "gender", "language", "condition", "file", "duration_s", "source"]
    (out / "MANIFEST.tsv").write_text("\n".join("\t".join(r) for r in [header] + rows) + "\n", encoding="utf-8")
    table = []
    for corpus, (repo, what, lic, how) in TABLE.items():
        spk = sorted({r[1] for r in rows if r[0] == corpus})
        n = sum(r[0] == corpus for r in rows)
        table.append(f"| {corpus} | github:{repo} ({repos[repo].rev[:12]}) | {what} | {len(spk)} ({n} clips): "
                     f"{', '.join(spk)} | {lic} | {how} |")
    (out / "SOURCES.md").write_text(SOURCES_MD.replace("{rows}", "\n".join(table)), encoding="utf-8")
    print(f"{len(rows)} clips of {len({(r[0], r[1]) for r in rows})} speaker ids in {out}")
    if dropped:
        print("dropped (under 5 clips):", ", ".join(dropped))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
