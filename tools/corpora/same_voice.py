#!/usr/bin/env python3
"""SAME_VOICE.tsv of a voices folder (tools/corpora/build_voices.py): which speaker ids are one person.

    flock ~/.sori-bench.lock nice -n 10 .venv/bin/python tools/corpora/same_voice.py [--voices ../voices]

The Korean emotiontts corpus labels its voice actors per subset, so one person may be several ids. Each id is
enrolled from its first two clips (sorted by file name: the clips sori_eval/voices.py keeps out of every
conversation for bench/speakers.py to enroll), and each of its other clips (at most `--max-clips`, spread over its
clips) is a test clip. Voiceprints are the engine's `voiceprint` op (sori_engine/voiceprint.py: speech found as
diarization finds it, CAM++ over pieces of at most 10 s, the pieces' speech-weighted mean) taken raw, i.e. with the
op's cohort centring left out (the centring means were built from this folder's tuning speakers after SAME_VOICE.tsv
existed; `--centred` keeps it). Two ids score the mean of (a's test clips against b's enrollment) and (b's against
a's), each the mean raw cosine; pairs at `--threshold` (0.68) or more, the score rounded to two decimals as it is
reported, are one voice, joined transitively (on the 2026 rebuild adc + nek scored 0.67996: the rounding keeps the
group the earlier builds found, adc + emf + nek).

Groups listed in `--extra` (default `<voices>/tools/same_voice_extra.tsv`, else the EXTRA list below; one group of
ids a line, tab-separated, `#` comments) are joined by hand on top: a pair just under the threshold whose ids line up
with another joined pair's (the same subset letters in two subsets of the corpus).

Written: SAME_VOICE.tsv (one group a line, its first id naming the voice: the id sori_eval/voices.py hashes to
put the voice in the tuning or held-out part; a header comment gives each group's score) and same_voice_scores.tsv
(every pair of ids of one corpus, or any pair at 0.5 or more, with its score).
"""

from __future__ import annotations

import argparse
import csv
import sys
from itertools import combinations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "engine"))

from sori_engine import voiceprint
from sori_eval.voices import ENROLL_CLIPS

THRESHOLD = 0.68
# Joined by hand (docs/diarization.md, "Many voices"): scores under the threshold (0.63-0.64), but the ids line up
# with another joined pair's: the plain-to-emotional men F, G, H are the emotional-to-emotional men K, L, M (emf + nek,
# emg + nel score 0.66-0.76). Used when the folder has no tools/same_voice_extra.tsv.
EXTRA: list[list[str]] = [
    ["emotiontts/emh", "emotiontts/nem"],
]


def read_ids(folder: Path) -> dict[str, list[str]]:
    ids: dict[str, list[str]] = {}
    with open(folder / "MANIFEST.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            ids.setdefault(f"{row['corpus']}/{row['speaker']}", []).append(str(folder / row["file"]))
    return {k: sorted(v) for k, v in ids.items()}


def prints(voices: list[list[str]]) -> np.ndarray:
    """One unit-norm voiceprint per voice (its files whole) from the engine's voiceprint op."""
    out = []
    for i in range(0, len(voices), 64):
        batch = {"voices": [{"parts": [{"audio_path": f} for f in v]} for v in voices[i : i + 64]]}
        got = voiceprint.voiceprint(voiceprint.parse_voiceprint(batch))["voices"]
        out += [np.asarray(g["embedding"] if g["embedding"] is not None else np.full(192, np.nan), np.float32)
                for g in got]
        print(f"  {min(i + 64, len(voices))}/{len(voices)} voiceprints", file=sys.stderr, flush=True)
    e = np.stack(out)
    return e / np.linalg.norm(e, axis=1, keepdims=True)


def read_extra(path: Path | None) -> list[list[str]]:
    if path is None or not path.exists():
        return [list(g) for g in EXTRA]
    groups = []
    for line in path.read_text(encoding="utf-8").splitlines():
        ids = [x for x in line.split("\t") if x]
        if line.startswith("#") or len(ids) < 2:
            continue
        groups.append(ids)
    return groups


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--voices", type=Path, default=ROOT.parent / "voices")
    ap.add_argument("--threshold", type=float, default=THRESHOLD)
    ap.add_argument("--max-clips", type=int, default=30, help="test clips per id (spread over its clips)")
    ap.add_argument("--corpora", default="emotiontts", help="corpora whose ids are compared (comma list, or all)")
    ap.add_argument("--extra", type=Path, help="hand-joined groups (default: <voices>/tools/same_voice_extra.tsv)")
    ap.add_argument("--centred", action="store_true", help="keep the op's cohort centring (not the rule's)")
    ap.add_argument("--cache", type=Path, help="an .npz keeping the voiceprints between runs")
    ap.add_argument("--dry-run", action="store_true", help="print the groups, write nothing")
    args = ap.parse_args()
    if not args.centred:
        # The raw voiceprint: the op's pieces pooled without the cohort mean taken off (the op's own code path).
        voiceprint.cohort.centre = lambda emb, narrowband: np.asarray(emb, np.float32)
    ids = read_ids(args.voices)
    if args.corpora != "all":
        keep = set(args.corpora.split(","))
        ids = {k: v for k, v in ids.items() if k.split("/")[0] in keep}
    keys = sorted(k for k, v in ids.items() if len(v) > ENROLL_CLIPS)
    tests: dict[str, list[str]] = {}
    for k in keys:
        rest = ids[k][ENROLL_CLIPS:]
        pick = np.unique(np.linspace(0, len(rest) - 1, min(args.max_clips, len(rest))).round().astype(int))
        tests[k] = [rest[i] for i in pick]
    voices = [ids[k][:ENROLL_CLIPS] for k in keys] + [[f] for k in keys for f in tests[k]]
    tag = f"{'centred' if args.centred else 'raw'}-{args.max_clips}-{len(voices)}"
    if args.cache and args.cache.exists() and str(np.load(args.cache)["tag"]) == tag:
        emb = np.load(args.cache)["emb"]
    else:
        emb = prints(voices)
        if args.cache:
            np.savez(args.cache, emb=emb, tag=tag)
    enroll = emb[: len(keys)]
    clip_rows, i = {}, len(keys)
    for k in keys:
        clip_rows[k] = emb[i : i + len(tests[k])]
        i += len(tests[k])
    # s[a, b]: mean cosine of a's test clips against b's enrollment
    s = np.array([[float(np.nanmean(clip_rows[a] @ enroll[j])) for j, _ in enumerate(keys)] for a in keys])
    pair = (s + s.T) / 2
    scores = []
    for a, b in combinations(range(len(keys)), 2):
        if keys[a].split("/")[0] == keys[b].split("/")[0] or pair[a, b] >= 0.5:
            scores.append((float(pair[a, b]), keys[a], keys[b], float(s[a, b]), float(s[b, a])))
    scores.sort(reverse=True)
    own = [float(np.nanmean(clip_rows[k] @ enroll[j])) for j, k in enumerate(keys)]
    print(f"own clips against own enrollment: median {np.median(own):.2f}, lowest {min(own):.2f} "
          f"({keys[int(np.argmin(own))]})")

    parent = {k: k for k in keys}

    def find(k: str) -> str:
        while parent[k] != k:
            k = parent[k]
        return k

    def join(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    print(f"pairs at {args.threshold:.2f} or more:")
    for sc, a, b, ab, ba in scores:
        if round(sc, 2) >= args.threshold:
            join(a, b)
            print(f"  {a}\t{b}\t{sc:.3f} ({ab:.3f} / {ba:.3f})")
    extra = read_extra(args.extra or args.voices / "tools" / "same_voice_extra.tsv")
    hand = set()
    for g in extra:
        g = [x for x in g if x in parent]
        for x in g[1:]:
            if find(x) != find(g[0]):
                hand.add(tuple(sorted((g[0], x))))
            join(g[0], x)
    groups: dict[str, list[str]] = {}
    for k in keys:
        groups.setdefault(find(k), []).append(k)
    groups = {r: sorted(m) for r, m in groups.items() if len(m) > 1}
    index = {k: j for j, k in enumerate(keys)}
    lines = [(f"# one person a line (tools/corpora/same_voice.py): ids whose clips score a mean raw cosine of "
             f"{args.threshold} or more against each other's enrollments, plus groups joined by hand")]
    out_groups = []
    for r, m in sorted(groups.items()):
        within = [pair[index[a], index[b]] for a, b in combinations(m, 2)]
        by_hand = any(tuple(sorted(p)) in hand for p in combinations(m, 2))
        note = f"mean {np.mean(within):.3f}, lowest pair {min(within):.3f}" + (", joined by hand" if by_hand else "")
        lines.append(f"# {' + '.join(m)}: {note}")
        out_groups.append(m)
        print(f"group {' '.join(m)}: {note}")
    lines += ["\t".join(m) for m in out_groups]
    print(f"{len(out_groups)} groups")
    # the hand-joined candidates: the best pairs under the threshold
    print("best pairs under the threshold:")
    for sc, a, b, ab, ba in [x for x in scores if round(x[0], 2) < args.threshold][:8]:
        print(f"  {a}\t{b}\t{sc:.3f} ({ab:.3f} / {ba:.3f})")
    if not args.dry_run:
        (args.voices / "SAME_VOICE.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (args.voices / "same_voice_scores.tsv").write_text(
            "id_a\tid_b\tscore\ta_clips_vs_b\tb_clips_vs_a\n"
            + "".join(f"{a}\t{b}\t{sc:.4f}\t{ab:.4f}\t{ba:.4f}\n" for sc, a, b, ab, ba in scores),
            encoding="utf-8")
        print(f"wrote {args.voices / 'SAME_VOICE.tsv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
