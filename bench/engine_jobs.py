#!/usr/bin/env python3
"""Memory and time of one engine running several transcriptions at once (issue 57, "Many jobs in one engine").

Builds a file of `--minutes` of speech (the shared English clips end to end), then through the protocol
(`python -m sori_engine`, cwd engine/, as the worker runs it), each in a fresh engine:

- one:        SORI_ENGINE_JOBS=1, one request;
- queued:     SORI_ENGINE_JOBS=1, N requests sent at once (today's one-at-a-time engine);
- in flight:  SORI_ENGINE_JOBS=N, N requests sent at once (their clips in shared batches).

Prints the engine's peak RSS (VmHWM), wall and CPU seconds of each, and the peak RSS of N in flight over one's
(issue 57 asks at most 1.5). Figures, not a pass/fail test.

    flock ~/.sori-bench.lock .venv/bin/python bench/engine_jobs.py [--jobs 4] [--minutes 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "engine"))
from sori_engine import audio as audio_io
from sori_eval.entries import model_entry
from sori_eval.wav import write_wav

TESTDATA = Path(os.environ.get("SORI_TESTDATA", ROOT.parent / "shared" / "testdata"))
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


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])  # kB
    return 0


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(path: Path, requests: int, jobs: int) -> dict[str, float]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "sori_engine"],
        cwd=ROOT / "engine",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "SORI_ENGINE_JOBS": str(jobs)},
    )
    assert proc.stdin is not None and proc.stdout is not None
    assert json.loads(proc.stdout.readline())["event"] == "ready"
    model = model_entry(1)
    params = {
        "audio_path": str(path),
        "model": model,
        "language_mode": "fixed",
        "language": "en",
    }
    # Load the model first, so that each figure counts the requests and not the load.
    proc.stdin.write(
        (
            json.dumps(
                {
                    "id": "warm",
                    "op": "transcribe",
                    "params": {**params, "max_duration_s": 5},
                }
            )
            + "\n"
        ).encode()
    )
    proc.stdin.flush()
    while "event" in json.loads(proc.stdout.readline()):
        pass
    loaded_kb = _status(proc.pid, "VmRSS")
    started, cpu0 = time.monotonic(), _cpu_s(proc.pid)
    for i in range(requests):
        proc.stdin.write(
            (
                json.dumps({"id": f"r{i}", "op": "transcribe", "params": params}) + "\n"
            ).encode()
        )
    proc.stdin.flush()
    done = 0
    while done < requests:
        msg = json.loads(proc.stdout.readline())
        if "event" not in msg:
            assert "result" in msg, msg
            done += 1
    out = {
        "wall_s": time.monotonic() - started,
        "cpu_s": _cpu_s(proc.pid) - cpu0,
        "loaded_mb": loaded_kb / 1024,
        "peak_mb": _status(proc.pid, "VmHWM") / 1024,
    }
    proc.stdin.close()
    proc.wait(timeout=60)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--minutes", type=float, default=5.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = speech_file(Path(tmp) / "speech.wav", args.minutes)
        n = args.jobs
        rows = {
            "one (1 job, 1 in flight)": run(path, 1, 1),
            f"queued ({n} jobs, 1 in flight)": run(path, n, 1),
            f"in flight ({n} jobs, {n} in flight)": run(path, n, n),
        }
    print(
        f"{args.minutes:g} min of speech per job, whisper-base int8 on CPU, {os.cpu_count()} cores"
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


if __name__ == "__main__":
    main()
