"""The engine as the worker runs it, for benches that speak its protocol (bench/decode_dump.py, bench/engine_jobs.py):
`python -m sori_engine` with cwd `engine/`, JSON lines on stdin and stdout (docs/engine.md). Standard library only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .testdata import REPO_ROOT

Answer = tuple[dict[str, Any], list[dict[str, Any]]]  # the result (or {"error": ...}) and the checkpoints emitted


class Engine:
    """One engine process, started and waited for (its `ready` event); `env` is added to this process's."""

    def __init__(self, env: dict[str, str] | None = None, root: Path = REPO_ROOT, python: str = sys.executable) -> None:
        self.proc = subprocess.Popen(
            [python, "-m", "sori_engine"],
            cwd=root / "engine",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in, self._out = self.proc.stdin, self.proc.stdout
        self.n = 0
        ready = self._line()
        assert ready.get("event") == "ready", ready

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _line(self) -> dict[str, Any]:
        line = self._out.readline()
        if not line:
            raise RuntimeError("engine exited")
        return json.loads(line)

    def call(self, op: str, params: dict[str, Any]) -> Answer:
        """The op's result (or error) and the checkpoints it emitted."""
        return self.call_many(op, [params])[0]

    def call_many(self, op: str, many: list[dict[str, Any]]) -> list[Answer]:
        """`call` for each params, all sent at once: each one's result (or error) and checkpoints, in order."""
        ids = []
        for params in many:
            self.n += 1
            ids.append(str(self.n))
            self._in.write((json.dumps({"id": ids[-1], "op": op, "params": params}) + "\n").encode())
        self._in.flush()
        checkpoints: dict[str, list[dict[str, Any]]] = {rid: [] for rid in ids}
        finals: dict[str, dict[str, Any]] = {}
        while len(finals) < len(ids):
            msg = self._line()
            rid = msg.get("id")
            if rid not in checkpoints:
                continue
            if msg.get("event") == "checkpoint":
                checkpoints[rid].append(msg["checkpoint"])
            elif "result" in msg or "error" in msg:
                finals[rid] = msg.get("result") or {"error": msg["error"]}
        return [(finals[rid], checkpoints[rid]) for rid in ids]

    def close(self, timeout_s: float | None = None) -> None:
        self._in.close()
        self.proc.wait(timeout=timeout_s)
