#!/usr/bin/env python3
"""Peak memory of a long transcription: the engine (Python) and the pipeline process (Node) that drives it.

Builds long inputs from the shared test audio -- blocks of --block-s seconds, each the 26 Korean clips of ko/ end
to end (about 2.3 min of speech and pauses) followed by silence up to the block's length -- writes them as 16 kHz
mono wav into a temp dir, and runs `sori transcribe FILE` on each (the same runPipeline call a worker makes:
the Node process and its engine child). While it runs, the peak resident set (VmHWM in /proc/PID/status) of both
processes is sampled; printed per input: audio length, wall time, RTF, utterances, peak RSS of engine and node.

    .venv/bin/python bench/memory.py                     # 1 h
    .venv/bin/python bench/memory.py --hours 1,4 --block-s 1800

Run it under `nice` on a shared machine; RTF then says little, the RSS figures hold.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine"))

from sori_engine import audio as audio_io  # noqa: E402

TESTDATA = Path(os.environ.get("SORI_TESTDATA", ROOT.parent / "shared" / "testdata"))
SR = audio_io.SAMPLE_RATE


def build(path: Path, hours: float, block_s: float) -> float:
    """Writes the input block by block (never whole in memory here either); returns its length in seconds."""
    clips = [audio_io.decode(str(p)) for p in sorted((TESTDATA / "ko").glob("*.wav"))]
    gap = np.zeros(SR, dtype=np.float32)
    speech = np.concatenate([x for c in clips for x in (c, gap)])
    block = np.zeros(int(block_s * SR), dtype=np.float32)
    block[: speech.shape[0]] = speech[: block.shape[0]]
    pcm = (np.clip(block, -1, 1 - 1 / 32768) * 32768).astype("<i2").tobytes()
    n_blocks = int(round(hours * 3600 / block_s))
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        for _ in range(n_blocks):
            w.writeframes(pcm)
    return n_blocks * block_s


def hwm_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def run(path: Path, config: str) -> dict:
    cmd = [
        "node", "--import", "tsx", str(ROOT / "src" / "cli" / "main.ts"),
        "transcribe", str(path), "--no-progress", "--config", config,
    ]  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    peaks = {"node": 0, "engine": 0}
    out_chunks: list[bytes] = []
    stdout = proc.stdout
    assert stdout is not None
    reader = threading.Thread(target=lambda: out_chunks.append(stdout.read()), daemon=True)
    reader.start()
    while proc.poll() is None:
        peaks["node"] = max(peaks["node"], hwm_kib(proc.pid) or 0)
        for child in children(proc.pid):  # the engine: python -m sori_engine
            peaks["engine"] = max(peaks["engine"], hwm_kib(child) or 0)
        time.sleep(0.2)
    reader.join()
    wall = time.perf_counter() - started
    body = json.loads(b"".join(out_chunks) or b"{}")
    return {
        "wall_s": wall,
        "body": body,
        "peak_node_mib": peaks["node"] / 1024,
        "peak_engine_mib": peaks["engine"] / 1024,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hours", default="1")
    ap.add_argument("--block-s", type=float, default=600.0)
    ap.add_argument("--config", default="{}", help="job config (JSON); {} is sommers/ko, beam 5: the most memory")
    ap.add_argument("--keep", help="write the inputs here and keep them")
    args = ap.parse_args()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="sori-memory-"))
    tmp.mkdir(parents=True, exist_ok=True)
    header = f"{'input':>6} {'audio s':>8} {'wall s':>8} {'RTF':>6} {'utts':>5} {'engine MiB':>11} {'node MiB':>9}"
    print(header + "  status")
    try:
        for h in (float(x) for x in args.hours.split(",")):
            path = tmp / f"long_{h:g}h.wav"
            audio_s = build(path, h, args.block_s)
            r = run(path, args.config)
            body = r["body"]
            utts = len(body.get("results", {}).get("utterances", [])) if isinstance(body, dict) else 0
            status = body.get("status") if isinstance(body, dict) else None
            print(
                f"{h:5g}h {audio_s:8.0f} {r['wall_s']:8.0f} {r['wall_s'] / audio_s:6.3f} {utts:5d} "
                f"{r['peak_engine_mib']:11.0f} {r['peak_node_mib']:9.0f}  {status}",
                flush=True,
            )
            if not args.keep:
                path.unlink()
    finally:
        if not args.keep:
            try:
                tmp.rmdir()
            except OSError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
