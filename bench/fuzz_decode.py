#!/usr/bin/env python3
"""The longer fuzz run of the decode path (docs/security.md, "Untrusted media"): many seeded mutations of each
format through one engine process, with a good job running beside them the whole time.

    flock ~/.sori-bench.lock nice -n 5 .venv/bin/python bench/fuzz_decode.py [--per-format 100] [--seed 1]

The six formats' short files come from test/audio/make_fixtures.py (built in a temp dir from the shared audio).
Each mutated file (engine/sori_eval/mutate.py) is sent as a `transcribe` request (whisper-base int8, greedy,
max_duration_s 600) to an engine running two jobs at once; the other slot keeps transcribing the unmutated wav, and
each of its answers must be the first one's text. Prints, and with --json writes:
- files tried, and how each ended (audio transcribed, or the error code);
- decode processes that died (a signal), hit a limit (CPU, memory, wall time, output length) or sent garbage,
  counted from the failures' messages;
- good jobs affected (an error, or another text): must be 0; any request answered with anything but a result or
  audio_decode_failed / audio_too_long is counted as unexpected: must be 0 too;
- the engine's memory map: libavformat / libavcodec must never appear.
Exits 1 when either count is not 0.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "engine"))
from sori_eval.mutate import SIX, mutations

KINDS = {
    "died": "decode process died",
    "cpu limit": "CPU time limit",
    "memory limit": "memory limit",
    "wall-time limit": "wall-time limit",
    "malformed output": "malformed",
}


class Engine:
    def __init__(self, log: Path) -> None:
        env = {**os.environ, "SORI_ENGINE_JOBS": "2"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sori_engine"],
            cwd=ROOT / "engine",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(log, "wb"),  # noqa: SIM115 - the engine's whole life
            env=env,
        )
        self.replies: dict[str, queue.Queue[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        self.wait("ready-line", None)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            msg = json.loads(line)
            if "event" in msg and msg["event"] != "ready":
                continue
            rid = msg.get("id") or "ready-line"
            with self.lock:
                q = self.replies.setdefault(rid, queue.Queue())
            q.put(msg)

    def wait(self, rid: str, timeout: float | None = 600) -> dict[str, Any]:
        with self.lock:
            q = self.replies.setdefault(rid, queue.Queue())
        msg = q.get(timeout=timeout)
        with self.lock:
            del self.replies[rid]
        return msg

    def call(self, rid: str, op: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        with self.lock:
            self.replies.setdefault(rid, queue.Queue())
            self.proc.stdin.write((json.dumps({"id": rid, "op": op, "params": params}) + "\n").encode())
            self.proc.stdin.flush()
        return self.wait(rid)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-format", type=int, default=100)
    ap.add_argument("--seed", default="1")
    ap.add_argument("--testdata", default=str(ROOT.parent / "shared" / "testdata"))
    ap.add_argument("--json")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="fuzz_decode_"))
    made = subprocess.run(
        [sys.executable, str(ROOT / "test" / "audio" / "make_fixtures.py"), str(tmp / "fx"), args.testdata],
        capture_output=True,
        check=True,
    )
    fixtures = json.loads(made.stdout)
    model = {"path": str(ROOT / "models" / "whisper-base"), "device": "cpu", "compute_type": "int8",
             "beam_size": 1, "cpu_threads": 0, "vad": True}  # fmt: skip
    engine = Engine(tmp / "engine.log")

    def params(path: str) -> dict[str, Any]:
        return {"audio_path": path, "model": model, "language_mode": "fixed", "language": "ko", "max_duration_s": 600}

    good = fixtures["wav_s16_16k_mono.wav"]
    first = engine.call("good-0", "transcribe", params(good))
    reference = "".join(s["text"] for s in first["result"]["segments"])
    stop = threading.Event()
    good_runs, good_affected = [0], [0]

    def good_loop() -> None:
        i = 0
        while not stop.is_set():
            i += 1
            reply = engine.call(f"good-{i}", "transcribe", params(good))
            good_runs[0] += 1
            text = "".join(s["text"] for s in reply.get("result", {}).get("segments", []))
            if "result" not in reply or text != reference:
                good_affected[0] += 1
                print("GOOD JOB AFFECTED:", reply, file=sys.stderr)

    beside = threading.Thread(target=good_loop, daemon=True)
    beside.start()
    outcomes: Counter[str] = Counter()
    processes: Counter[str] = Counter()
    unexpected = 0
    ffmpeg_seen = 0
    tried = 0
    began = time.monotonic()
    for fmt, name in SIX.items():
        data = Path(fixtures[name]).read_bytes()
        for i, bad in enumerate(mutations(data, f"{args.seed}-{fmt}", args.per_format)):
            path = tmp / f"m-{fmt}-{i}{Path(name).suffix}"
            path.write_bytes(bad)
            reply = engine.call(f"m-{fmt}-{i}", "transcribe", params(str(path)))
            tried += 1
            if "result" in reply:
                outcomes["audio"] += 1
            else:
                code, message = reply["error"]["code"], reply["error"]["message"]
                outcomes[code] += 1
                if code not in ("audio_decode_failed", "audio_too_long"):
                    unexpected += 1
                    print("UNEXPECTED:", fmt, i, reply, file=sys.stderr)
                for kind, words in KINDS.items():
                    if words in message:
                        processes[kind] += 1
            maps = Path(f"/proc/{engine.proc.pid}/maps").read_text()
            ffmpeg_seen += "libavformat" in maps or "libavcodec" in maps
            path.unlink()
            if tried % 50 == 0:
                print(f"{tried} files, {time.monotonic() - began:.0f} s: {dict(outcomes)}", flush=True)
    stop.set()
    beside.join(timeout=600)
    assert engine.proc.stdin is not None
    engine.proc.stdin.close()
    engine.proc.wait(timeout=60)
    report = {
        "files_tried": tried,
        "outcomes": dict(outcomes),
        "decode_processes": dict(processes),
        "good_jobs_run": good_runs[0],
        "other_jobs_affected": good_affected[0],
        "unexpected_answers": unexpected,
        "engine_mapped_ffmpeg": ffmpeg_seen,
        "wall_s": round(time.monotonic() - began, 1),
    }
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0 if good_affected[0] == unexpected == ffmpeg_seen == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
