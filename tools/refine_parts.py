"""The refinement benchmark's parts (docs/enterprise.md, "Refinement"): development and held-out sets of ko and ja,
each also as an 8 kHz telephone-band copy, laid out like ../shared/testdata (a MANIFEST.tsv per part).

- ko-dev: the shared Korean clips (../shared/testdata/ko, one utterance each).
- ko-held: two-speaker "calls" built from the Deeply Korean Read Speech Corpus (github:deeplyinc/Korean-Read-Speech-
  Corpus, CC BY-NC-ND 4.0, evaluation only, never committed): --lines consecutive lines of one recorded dialogue
  joined with 0.6 s of silence, --calls per session (9 sessions: 3 rooms x 3 speaker pairs; read dialogue and
  read web reviews in turn), from lines that are not shared clips and whose text is not a dev text; noisy takes are
  preferred.
- ja-dev: the shared Common Voice and Picovoice clips; ja-held: the shared ReazonSpeech (broadcast) and FLEURS clips.
- *-8k: every file of the part resampled to 8 kHz mono 16-bit PCM (sori_eval.wav.narrowband), the band of a phone call.

    .venv/bin/python tools/refine_parts.py --deeply /work/.mirror/deeplyinc+Korean-Read-Speech-Corpus/repo \
        --out /tmp/sori-refine-parts
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import wave
from pathlib import Path

import av
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))  # sori_eval
from sori_eval.testdata import TESTDATA  # noqa: E402
from sori_eval.wav import narrowband  # noqa: E402

SR = 16000
GAP_S = 0.6
HEADER = ["local_file", "lang", "repo", "path", "license", "transcript"]


def shared_rows() -> list[list[str]]:
    with open(TESTDATA / "MANIFEST.tsv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    return [
        r
        for r in rows
        if len(r) > 5 and r[5] and r[1] in ("ko", "ja") and r[0].startswith(r[1] + "/")
    ]


def decode16k(path: Path) -> np.ndarray:
    resampler = av.AudioResampler(format="s16", layout="mono", rate=SR)
    pcm: list[np.ndarray] = []
    with av.open(str(path)) as container:
        for frame in container.decode(audio=0):
            pcm.extend(o.to_ndarray().reshape(-1) for o in resampler.resample(frame))
    pcm.extend(o.to_ndarray().reshape(-1) for o in resampler.resample(None))
    return np.concatenate(pcm).astype(np.int16)


def write_wav(path: Path, pcm: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm.astype("<i2").tobytes())


def write_part(out: Path, name: str, rows: list[list[str]]) -> None:
    part = out / name
    part.mkdir(parents=True, exist_ok=True)
    with open(part / "MANIFEST.tsv", "w", encoding="utf-8", newline="") as f:
        csv.writer(
            f, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n"
        ).writerows([HEADER, *rows])
    narrow = out / f"{name}-8k"
    narrow_rows = []
    for r in rows:
        dst = narrow / r[0]
        if not dst.exists():
            narrowband(part / r[0], dst)
        narrow_rows.append(r)
    with open(narrow / "MANIFEST.tsv", "w", encoding="utf-8", newline="") as f:
        csv.writer(
            f, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n"
        ).writerows([HEADER, *narrow_rows])
    print(f"{name}: {len(rows)} files (+ {name}-8k)")


def copy_shared(out: Path, name: str, rows: list[list[str]]) -> None:
    for r in rows:
        dst = out / name / r[0]
        if not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes((TESTDATA / r[0]).read_bytes())
    write_part(out, name, rows)


def deeply_calls(
    repo: Path, out: Path, shared: list[list[str]], lines: int, calls: int
) -> list[list[str]]:
    meta = json.loads(
        subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "show",
                "HEAD:dataset/Korean_Read_Speech_Corpus_sample.json",
            ],
            check=True,
            capture_output=True,
        ).stdout
    )
    used = {Path(r[0]).stem.split("_")[-1] for r in shared}
    dev_texts = {r[5].strip() for r in shared}
    rows = []
    session = 0
    for room, items in meta.items():
        by_session: dict[str, list[str]] = {}
        for key in sorted(items):
            by_session.setdefault(key[:9], []).append(key)
        for _, keys in sorted(by_session.items()):
            starts = []
            for i in range(len(keys) - lines + 1):
                window = keys[i : i + lines]
                if any(
                    k in used or items[k]["text"].strip() in dev_texts for k in window
                ):
                    continue
                indices = [int(k[-5:]) for k in window]
                if indices != list(range(indices[0], indices[0] + lines)):
                    continue  # a gap in the numbering: not one dialogue
                noisy = sum(items[k]["noise"] > 0 for k in window)
                starts.append((-noisy, i))
            # Calls from the read dialogues (lines < 200) and from the read web reviews (200 on), which are written
            # like spontaneous speech (slang, odd spacing, emoticons), in turn from session to session.
            picked: list[int] = []
            for k in range(calls):
                review = (session + k) % 2 == 1
                mine = [
                    i
                    for _, i in sorted(starts)
                    if (int(keys[i][-5:]) >= 200) == review
                    and all(abs(i - j) >= lines for j in picked)
                ]
                picked += mine[:1]
            session += 1
            for i in sorted(picked):
                window = keys[i : i + lines]
                pcm = []
                for k in window:
                    blob = subprocess.run(
                        [
                            "git",
                            "-C",
                            str(repo),
                            "show",
                            f"HEAD:dataset/{room}/{k}.wav",
                        ],
                        check=True,
                        capture_output=True,
                    ).stdout
                    tmp = out / "tmp.wav"
                    tmp.write_bytes(blob)
                    pcm += [decode16k(tmp), np.zeros(int(GAP_S * SR), dtype=np.int16)]
                name = f"ko/deeply_{room.lower()}_{window[0]}_x{lines}.wav"
                write_wav(out / "ko-held" / name, np.concatenate(pcm[:-1]))
                ref = " ".join(items[k]["text"].strip() for k in window)
                rows.append(
                    [
                        name,
                        "ko",
                        "deeplyinc/Korean-Read-Speech-Corpus",
                        ",".join(f"dataset/{room}/{k}.wav" for k in window),
                        "CC BY-NC-ND 4.0 (evaluation only)",
                        ref,
                    ]
                )
    (out / "tmp.wav").unlink(missing_ok=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--deeply",
        required=True,
        help="a git directory of deeplyinc/Korean-Read-Speech-Corpus",
    )
    ap.add_argument("--out", required=True)
    ap.add_argument("--lines", type=int, default=4)
    ap.add_argument("--calls", type=int, default=1, help="calls per recorded session")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    shared = shared_rows()
    ko = [r for r in shared if r[1] == "ko"]
    ja = [r for r in shared if r[1] == "ja"]
    copy_shared(out, "ko-dev", ko)
    write_part(
        out, "ko-held", deeply_calls(Path(args.deeply), out, ko, args.lines, args.calls)
    )
    copy_shared(
        out,
        "ja-dev",
        [r for r in ja if "reazonspeech" not in r[0] and "fleurs" not in r[0]],
    )
    copy_shared(
        out, "ja-held", [r for r in ja if "reazonspeech" in r[0] or "fleurs" in r[0]]
    )


if __name__ == "__main__":
    main()
