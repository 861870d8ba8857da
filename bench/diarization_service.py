#!/usr/bin/env python3
"""DER and speaker count of what a client gets: each file through `bin/sori transcribe` (the job pipeline a worker
of `sori serve` runs) with `use_diarization`, scored from the utterances' spans and `spk` against the reference turns
(so words the recognizer drops, or places loosely, count as errors, unlike bench/diarization.py, which scores the
engine's turns). Same data, same DER as bench/diarization.py (`--only meetings` or `recordings`).

    flock ~/.sori-bench.lock .venv/bin/python bench/diarization_service.py --only meetings --json /tmp/svc.json

Run from the repository root after `make build` (bin/sori runs dist/). Prints one line per file (reference
speakers, those with >= 2 s of speech, estimated, DER c0.25 / c0) and the means.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from diarization import MEETINGS, der, main_speakers, meetings, recordings

ROOT = Path(__file__).resolve().parent.parent


def transcribe(path: Path, config: dict) -> dict:
    out = subprocess.run(
        [
            str(ROOT / "bin" / "sori"),
            "transcribe",
            "--no-progress",
            "--config",
            json.dumps(config),
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    return json.loads(out.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["recordings", "meetings"], default="meetings")
    ap.add_argument("--meetings", type=Path, default=MEETINGS)
    ap.add_argument(
        "--config",
        default='{"model_name":"whisper","language":"en","use_diarization":true}',
        help="the job's config object",
    )
    ap.add_argument("--json", help="write per-file results here")
    args = ap.parse_args()
    config = json.loads(args.config)
    if args.only == "meetings":
        files = [
            (n, args.meetings / (n.split("~")[0] + ".wav"), ref, uem)
            for n, _, ref, uem in meetings(args.meetings)
        ]
    else:
        testdata = ROOT.parent / "shared" / "testdata" / "multi"
        files = [
            (n, testdata / f"{n}.wav", ref, uem) for n, _, ref, uem in recordings()
        ]
    rows = []
    print(
        f"{'file':28} {'spk':>3} {'2s+':>3} {'est':>3}  {'DER c0.25':>9} {'DER c0':>7}  {'wall s':>6}"
    )
    for name, wav, ref, uem in files:
        t0 = time.perf_counter()
        body = transcribe(wav, config)
        wall = time.perf_counter() - t0
        utts = body.get("results", {}).get("utterances", [])
        hyp = [
            (
                u["start_at"] / 1000,
                (u["start_at"] + u["duration"]) / 1000,
                int(u["spk"]),
            )
            for u in utts
        ]
        row = {
            "file": name,
            "speakers": len({s for _, _, s in ref}),
            "main_speakers": main_speakers(ref, uem),
            "estimated": len({h[2] for h in hyp}),
            "c025": der(ref, hyp, 0.25, uem),
            "c0": der(ref, hyp, 0.0, uem),
        }
        rows.append(row)
        print(
            f"{name:28} {row['speakers']:3} {row['main_speakers']:3} {row['estimated']:3}  {row['c025']['der']:9.1%}"
            f" {row['c0']['der']:7.1%}  {wall:6.1f}",
            flush=True,
        )
    for tag, sel in (
        ("tuning", [r for r in rows if "~held" not in r["file"]]),
        ("held out", [r for r in rows if "~held" in r["file"]]),
        ("all", rows),
    ):
        if sel:
            ok = sum(r["estimated"] == r["main_speakers"] for r in sel)
            print(
                f"{tag:9} mean DER c0.25 {np.mean([r['c025']['der'] for r in sel]):.1%}, "
                f"c0 {np.mean([r['c0']['der'] for r in sel]):.1%}; count right {ok}/{len(sel)}"
            )
    sel = [r for r in rows if r["main_speakers"] >= 3]
    if sel:
        print(
            f"count right on files with 3+ speakers of >= 2 s: "
            f"{sum(r['estimated'] == r['main_speakers'] for r in sel)}/{len(sel)}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
