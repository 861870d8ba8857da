#!/usr/bin/env python3
"""Peak memory of a long job: the engine (Python) and the pipeline process (Node) that drives it.

Builds long inputs from the shared test audio -- blocks of --block-s seconds, each the 26 Korean clips of ko/ end
to end (about 2.3 min of speech and pauses) followed by silence up to the block's length -- writes them as 16 kHz
mono wav into a temp dir, and runs `sori transcribe FILE` on each (the same runPipeline call a worker makes:
the Node process and its engine child). While it runs, the peak resident set (VmHWM in /proc/PID/status) of both
processes is sampled; printed per input: audio length, wall time, RTF, CPU seconds (engine, and node with the
engine), utterances, peak RSS of engine and node. With --config '{"use_diarization":true}' the job diarizes too.

--refine adds a second row per input: the job's refinement (an Enterprise job's `use_refinement`, the worker's
refine task; docs/enterprise.md), run by bench/memory-refine.ts on the transcription's utterances with the refiner
settings of the deployment (SORI_REFINE_MODEL_PATH, default whisper-base), in an engine process of its own.

    .venv/bin/python bench/memory.py                     # 1 h
    .venv/bin/python bench/memory.py --hours 1,4 --block-s 1800
    .venv/bin/python bench/memory.py --hours 4 --block-s 3600 --config '{"use_diarization":true}'
    .venv/bin/python bench/memory.py --hours 4 --block-s 3600 --refine

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
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine"))

from sori_eval.inputs import long_recording  # noqa: E402
from sori_eval.proc import children, cpu_s, status_kib  # noqa: E402


def run(cmd: list[str]) -> dict:
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    peaks = {"node": 0, "engine": 0}
    engine_cpu: dict[int, float] = {}
    out_chunks: list[bytes] = []
    stdout = proc.stdout
    assert stdout is not None
    reader = threading.Thread(target=lambda: out_chunks.append(stdout.read()), daemon=True)
    reader.start()
    usage = None
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)  # reaped here for its rusage (node and its engine)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        peaks["node"] = max(peaks["node"], status_kib(proc.pid, "VmHWM") or 0)
        for child in children(proc.pid):  # the engine: python -m sori_engine
            peaks["engine"] = max(peaks["engine"], status_kib(child, "VmHWM") or 0)
            engine_cpu[child] = max(engine_cpu.get(child, 0.0), cpu_s(child) or 0.0)  # sampled: up to 0.2 s short
        time.sleep(0.2)
    reader.join()
    wall = time.perf_counter() - started
    body = json.loads(b"".join(out_chunks) or b"{}")
    return {
        "wall_s": wall,
        "body": body,
        "peak_node_mib": peaks["node"] / 1024,
        "peak_engine_mib": peaks["engine"] / 1024,
        "cpu_engine_s": sum(engine_cpu.values()),
        "cpu_all_s": usage.ru_utime + usage.ru_stime,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hours", default="1")
    ap.add_argument("--block-s", type=float, default=600.0)
    ap.add_argument("--config", default="{}", help="job config (JSON); {} is sommers/ko, beam 5: the most memory")
    ap.add_argument("--keep", help="write the inputs here and keep them")
    ap.add_argument("--refine", action="store_true", help="also refine each transcription (the refine task)")
    args = ap.parse_args()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="sori-memory-"))
    tmp.mkdir(parents=True, exist_ok=True)
    header = (
        f"{'input':>6} {'job':>10} {'audio s':>8} {'wall s':>8} {'RTF':>6} {'engine CPU s':>12} {'all CPU s':>9} "
        f"{'utts':>5} {'engine MiB':>11} {'node MiB':>9}"
    )
    print(header + "  status")

    def row(h: float, job: str, audio_s: float, r: dict, utts: int, status: object) -> None:
        print(
            f"{h:5g}h {job:>10} {audio_s:8.0f} {r['wall_s']:8.0f} {r['wall_s'] / audio_s:6.3f} "
            f"{r['cpu_engine_s']:12.0f} {r['cpu_all_s']:9.0f} {utts:5d} {r['peak_engine_mib']:11.0f} {r['peak_node_mib']:9.0f}"
            f"  {status}",
            flush=True,
        )

    try:
        for h in (float(x) for x in args.hours.split(",")):
            path = tmp / f"long_{h:g}h.wav"
            audio_s = long_recording(path, h, args.block_s)
            r = run(
                ["node", "--import", "tsx", str(ROOT / "src" / "cli" / "main.ts"), "transcribe", str(path),
                 "--no-progress", "--config", args.config]
            )  # fmt: skip
            body = r["body"]
            utts = len(body.get("results", {}).get("utterances", [])) if isinstance(body, dict) else 0
            status = body.get("status") if isinstance(body, dict) else None
            row(h, "transcribe", audio_s, r, utts, status)
            if args.refine:
                base = tmp / f"long_{h:g}h.json"
                base.write_text(json.dumps(body))
                r = run(
                    ["node", "--import", "tsx", str(ROOT / "bench" / "memory-refine.ts"), str(path), str(base),
                     args.config]
                )  # fmt: skip
                out = r["body"] if isinstance(r["body"], dict) else {}
                row(h, "refine", audio_s, r, int(out.get("utterances", 0)), f"changed {out.get('changed')}")
                if not args.keep:
                    base.unlink()
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
