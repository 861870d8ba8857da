#!/usr/bin/env python3
"""What one CPU second buys when every core is busy (docs/performance.md, "One engine for the host").

    flock ~/.sori-bench.lock .venv/bin/python bench/core_contention.py [--seconds 60] [--repeat 3]

The same decode (the first `--seconds` of the shared Korean clips end to end, whisper-base int8 on one CTranslate2
thread, beam 5, no VAD) in a fresh process, `--repeat` times alone and then `--repeat` times as many at once as the
host has cores, and the median CPU seconds of one decode each way. On a host whose cores share execution units (SMT
siblings under a hypervisor) or memory bandwidth, a decode beside others takes more CPU seconds than alone: a layout
that keeps every core busy (one engine for the host) then spends more CPU on the same work than one that left a core
idle, with no change to what it computes.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "engine"))

from sori_engine import audio
from sori_eval.inputs import korean_speech


def one_decode(samples: np.ndarray, start: mp.synchronize.Barrier, out: mp.Queue) -> None:
    from faster_whisper import WhisperModel

    model = WhisperModel(
        str(ROOT / "models" / "whisper-base"),
        device="cpu",
        compute_type="int8",
        cpu_threads=1,
    )
    start.wait()
    before = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.monotonic()
    segments, _info = model.transcribe(samples, language="ko", beam_size=5, vad_filter=False)
    text = "".join(s.text for s in segments)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out.put((cpu, time.monotonic() - t0, len(text)))


def run(samples: np.ndarray, at_once: int) -> list[tuple[float, float, int]]:
    ctx = mp.get_context("spawn")
    start, out = ctx.Barrier(at_once), ctx.Queue()
    procs = [ctx.Process(target=one_decode, args=(samples, start, out)) for _ in range(at_once)]
    for p in procs:
        p.start()
    got = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    samples = korean_speech()[: int(args.seconds * audio.SAMPLE_RATE)]
    print(f"{samples.shape[0] / audio.SAMPLE_RATE:.0f} s of speech, {cores} cores")
    rows = {}
    for at_once in (1, cores):
        got = [d for _ in range(args.repeat) for d in run(samples, at_once)]
        cpu = statistics.median(c for c, _w, _n in got)
        wall = statistics.median(w for _c, w, _n in got)
        rows[at_once] = cpu
        print(
            f"{at_once} at once: CPU s per decode {cpu:.2f} (each: {', '.join(f'{c:.2f}' for c, _w, _n in got)}), "
            f"wall s {wall:.2f}, characters {sorted({n for _c, _w, n in got})}"
        )
    if cores > 1:
        print(f"CPU per decode with every core busy / alone: {rows[cores] / rows[1]:.2f}")


if __name__ == "__main__":
    main()
