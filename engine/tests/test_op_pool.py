"""The ops that read a whole file run beside the decoder (op_pool.py): a diarization in progress holds up neither a
`ping` nor another file op, and a cancelled one is answered `cancelled` at once and never again. The unit half runs
the pool on stand-in work; the other half the real engine process."""

from __future__ import annotations

import io
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

from sori_engine.errors import CANCELLED, EngineError
from sori_engine.op_pool import OpPool
from sori_engine.protocol import LineWriter

LONG = "en/earnings22_1_4482311_3_62.wav"  # 60 s: seconds of diarization
SHORT = "en/whisper_jfk.flac"


class _Sink(io.BytesIO):
    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(raw) for raw in self.getvalue().splitlines()]


def _until(check: Any, timeout_s: float = 10.0) -> None:
    end = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_answers_each_when_done_and_drops_a_cancelled_ones_answer() -> None:
    sink = _Sink()
    pool = OpPool(2, LineWriter(sink))
    release = threading.Event()
    went_on: list[bool] = []

    def slow(progress: Any) -> dict[str, Any]:
        release.wait(5)
        progress(0.5)  # the request was cancelled meanwhile: this raises, and the work stops here
        went_on.append(True)
        return {"done": "slow"}

    def failing(_progress: Any) -> dict[str, Any]:
        raise EngineError("audio_decode_failed", "no audio")

    pool.submit("a", "diarize", slow)
    pool.submit("b", "probe", lambda progress: {"done": "b"})
    _until(lambda: any(line["id"] == "b" for line in sink.lines()))
    assert pool.cancel("a")
    assert not pool.cancel("a") and not pool.cancel("b")  # answered already
    pool.submit("c", "probe", failing)
    release.set()
    _until(lambda: pool.idle)
    pool.shutdown()
    assert not went_on
    assert sink.lines() == [  # a answered once, at its cancel; its progress and result dropped
        {"id": "b", "result": {"done": "b"}},
        {"id": "a", "error": {"code": CANCELLED, "message": "cancelled"}},
        {"id": "c", "error": {"code": "audio_decode_failed", "message": "no audio"}},
    ]


def test_a_request_cancelled_before_it_began_never_runs(caplog: Any) -> None:
    sink = _Sink()
    pool = OpPool(1, LineWriter(sink))
    release = threading.Event()
    ran: list[str] = []

    def first(_progress: Any) -> dict[str, Any]:
        release.wait(5)
        return {"done": "a"}

    def queued(_progress: Any) -> dict[str, Any]:
        ran.append("b")
        return {"done": "b"}

    with caplog.at_level("INFO", logger="sori_engine.op_pool"):
        pool.submit("a", "diarize", first)
        pool.submit("b", "voiceprint", queued)  # behind a, the only thread's
        assert pool.cancel("b")
        release.set()
        _until(lambda: pool.idle)
    pool.shutdown()
    assert not ran
    assert "id=b op=voiceprint cancelled before it began" in caplog.text
    assert sink.lines() == [
        {"id": "b", "error": {"code": CANCELLED, "message": "cancelled"}},
        {"id": "a", "result": {"done": "a"}},
    ]


def test_a_diarization_holds_up_neither_ping_nor_probe_and_is_cancelled_at_once(engine: Any, testdata: Path) -> None:
    def send(rid: str, op: str, params: dict[str, Any]) -> None:
        engine.send_raw((json.dumps({"id": rid, "op": op, "params": params}) + "\n").encode())

    send("pool-1", "diarize", {"audio_path": str(testdata / LONG), "spk_count": 0})
    send("pool-2", "ping", {})
    send("pool-3", "probe", {"audio_path": str(testdata / SHORT)})
    send("pool-4", "diarize", {"audio_path": str(testdata / LONG), "spk_count": 0})
    finals: dict[str, dict[str, Any]] = {}
    while "pool-1" not in finals:
        msg = engine.read_line()
        assert msg["id"].startswith("pool-"), msg
        if "event" not in msg:
            finals[msg["id"]] = msg
        if msg["id"] == "pool-3" and "event" not in msg:
            send("pool-5", "cancel", {"id": "pool-4"})
    order = list(finals)
    assert order.index("pool-2") < order.index("pool-1"), order  # answered while the diarization ran
    assert order.index("pool-3") < order.index("pool-1"), order  # a second file op beside it
    assert finals["pool-5"]["result"] == {"cancelled": True}
    assert finals["pool-4"]["error"]["code"] == CANCELLED
    assert order.index("pool-4") < order.index("pool-1"), order  # at once, not when its work ends
    assert finals["pool-1"]["result"]["num_speakers"] >= 1
    # The cancelled diarization never runs when the cancel came before a pool thread took it up, else it stops at its
    # next progress report, unanswered: the next answer on the pipe is the next request's. (Its models may still be
    # loading behind pool-1's lock, hence the long wait.)
    done = r"id=pool-4 op=diarize cancelled (before it began|after [0-9.]+s; its answer dropped)"
    _until(lambda: re.search(done, engine.stderr_tail()), 120)
    assert engine.call("ping").result
