"""CPU seconds and memory of live processes from /proc (Linux), for benches that charge a process they started
(bench/engine_jobs.py, bench/memory.py, bench/streaming.py). Standard library only; None or 0 when the process has
gone."""

from __future__ import annotations

import os
from pathlib import Path


def status_kib(pid: int, field: str) -> int | None:
    """A /proc/PID/status field in kB: VmRSS (resident now), VmHWM (the peak resident set)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a live process (its threads; not its children)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """The live child processes of every thread of `pid`."""
    try:
        return [int(c) for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]
    except OSError:
        return []


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of `pid` and of every live descendant."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += cpu_s(p) or 0.0
        todo += children(p)
    return total
