#!/usr/bin/env python3
"""Memory and time of one engine running several transcriptions at once (docs/engine.md, "One engine for the host").

Builds a file of `--minutes` of speech (the shared English clips end to end), then through the protocol
(`python -m sori_engine`, cwd engine/, as the worker runs it), each in a fresh engine with `--decoders` decoders
(SORI_ENGINE_DECODERS, the model's `inter_threads`, one CTranslate2 thread each; 0: CTranslate2's default threads
and one decoder, the layout before issue 68):

- one:        SORI_ENGINE_JOBS=1, one request;
- queued:     SORI_ENGINE_JOBS=1, N requests sent at once (one at a time);
- in flight:  SORI_ENGINE_JOBS=N, N requests sent at once (their clips in shared batches).

Prints the engine's RSS once its model is loaded ("loaded": one copy of the weights), its peak RSS (VmHWM), wall and
CPU seconds of each; and the peak of N in flight against one copy plus N working sets (a working set: one's peak
less its loaded RSS). `--model DIR` takes another model directory, e.g. one of large-v3's shape made large enough
to see (`engine/tests/large_v3_shape.py models/whisper-base /tmp/big --width 1024 --layers 4`; random weights, so
only memory and time mean anything; `--decode '{"fallback_steps": 0, "max_rounds": 1}'` keeps its garbage from
being decoded again and again). Figures, not a pass/fail test.

    flock ~/.sori-bench.lock .venv/bin/python bench/engine_jobs.py [--jobs 4] [--minutes 5] [--decoders 2]
        [--model DIR] [--compute-type int8] [--decode JSON]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "engine"))
from sori_engine import audio as audio_io
from sori_eval.engine_process import Engine
from sori_eval.entries import model_entry
from sori_eval.proc import cpu_s, status_kib
from sori_eval.testdata import TESTDATA
from sori_eval.wav import write_wav

CLIPS = (
    "en/earnings22_1_4482311_3_62.wav",
    "en/earnings22_3_4483589_261_321.wav",
    "multi/pyannote_sample.wav",
)


def speech_file(out: Path, minutes: float) -> Path:
    parts = [audio_io.decode(str(TESTDATA / c)) for c in CLIPS]
    one = np.concatenate(parts)
    reps = int(np.ceil(minutes * 60 * audio_io.SAMPLE_RATE / one.shape[0]))
    return write_wav(
        out, np.tile(one, reps)[: int(minutes * 60 * audio_io.SAMPLE_RATE)]
    )


def run(path: Path, requests: int, jobs: int, args: argparse.Namespace) -> dict[str, float]:
    decoders = max(1, args.decoders)
    engine = Engine({"SORI_ENGINE_JOBS": str(jobs), "SORI_ENGINE_DECODERS": str(decoders)})
    threads = {"cpu_threads": 1, "inter_threads": decoders} if args.decoders else {}
    model = model_entry(1, compute_type=args.compute_type, **threads, **({"path": args.model} if args.model else {}))
    if args.decode:
        model["decode"] = json.loads(args.decode)
    params = {"audio_path": str(path), "model": model, "language_mode": "fixed", "language": "en"}
    # Load the model first, so that each figure counts the requests and not the load.
    engine.call("transcribe", {**params, "max_duration_s": 5})
    loaded_kb = status_kib(engine.pid, "VmRSS") or 0
    started, cpu0 = time.monotonic(), cpu_s(engine.pid) or 0.0
    for result, _ in engine.call_many("transcribe", [params] * requests):
        assert "error" not in result, result
    out = {
        "wall_s": time.monotonic() - started,
        "cpu_s": (cpu_s(engine.pid) or 0.0) - cpu0,
        "loaded_mb": loaded_kb / 1024,
        "peak_mb": (status_kib(engine.pid, "VmHWM") or 0) / 1024,
    }
    engine.close(timeout_s=60)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--decoders", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--model", help="a model directory instead of whisper-base")
    ap.add_argument("--compute-type", default="int8")
    ap.add_argument("--decode", help='decoding options, e.g. \'{"fallback_steps": 0}\' for random weights')
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = speech_file(Path(tmp) / "speech.wav", args.minutes)
        n = args.jobs
        rows = {
            "one (1 job, 1 in flight)": run(path, 1, 1, args),
            f"queued ({n} jobs, 1 in flight)": run(path, n, 1, args),
            f"in flight ({n} jobs, {n} in flight)": run(path, n, n, args),
        }
    print(
        f"{args.minutes:g} min of speech per job, {args.model or 'whisper-base'} {args.compute_type} on CPU, "
        f"{os.cpu_count()} cores, {args.decoders} decoders"
    )
    print(f"{'run':36} {'wall s':>8} {'CPU s':>8} {'loaded MB':>10} {'peak MB':>8}")
    for name, r in rows.items():
        print(
            f"{name:36} {r['wall_s']:8.1f} {r['cpu_s']:8.1f} {r['loaded_mb']:10.0f} {r['peak_mb']:8.0f}"
        )
    one, many = (
        rows["one (1 job, 1 in flight)"],
        rows[f"in flight ({n} jobs, {n} in flight)"],
    )
    print(f"peak RSS, {n} in flight / one: {many['peak_mb'] / one['peak_mb']:.2f}")
    working = one["peak_mb"] - one["loaded_mb"]
    print(
        f"{n} in flight: peak {many['peak_mb']:.0f} MB against one copy {one['loaded_mb']:.0f} + {n} working sets "
        f"of {working:.0f} = {one['loaded_mb'] + n * working:.0f} MB"
    )


if __name__ == "__main__":
    main()
