#!/usr/bin/env python3
"""Degraded copies of the refinement benchmark's files, for bench/refine-nbest.ts --testdata (a noisy/phone set).

The first --max-files files per language in MANIFEST.tsv order (the order bench/cer.ts reads, so the same files as
the clean figures) are turned into one condition of bench/robustness.py (same synthetic noise and codecs, seeded),
written under --out with a MANIFEST.tsv whose local_file points at the degraded copy:

    nice -n 10 .venv/bin/python bench/refine-degrade.py --condition amr --out /tmp/sori-refine-amr
    OMP_NUM_THREADS=1 nice -n 10 npx tsx bench/refine-nbest.ts --testdata /tmp/sori-refine-amr --tag amr
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import robustness  # puts engine/ on sys.path

TESTDATA = robustness.TESTDATA


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--condition",
        required=True,
        help="a bench/robustness.py condition, e.g. amr, snr10",
    )
    ap.add_argument("--out", required=True)
    ap.add_argument("--langs", default="ko,ja,en")
    ap.add_argument("--max-files", type=int, default=10)
    args = ap.parse_args()
    out = Path(args.out)
    with open(TESTDATA / "MANIFEST.tsv", encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header, rows = next(reader), list(reader)
    kept = []
    for lang in args.langs.split(","):
        mine = [
            r
            for r in rows
            if len(r) > 5 and r[1] == lang and r[0].startswith(lang + "/") and r[5]
        ]
        for r in mine[: args.max_files]:
            target = out / r[0]
            target.parent.mkdir(parents=True, exist_ok=True)
            x = robustness.decode(str(TESTDATA / r[0]))
            written = robustness.build(args.condition, x, target.with_suffix(".wav"))
            kept.append([str(written.relative_to(out)), *r[1:]])
    with open(out / "MANIFEST.tsv", "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(
            f, delimiter="\t", quoting=csv.QUOTE_NONE, lineterminator="\n"
        )
        writer.writerows([header, *kept])
    print(f"{len(kept)} files ({args.condition}) under {out}")


if __name__ == "__main__":
    main()
