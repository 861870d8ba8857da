"""The ops other than transcribe that take real time (docs/engine.md, "One engine for the host").

`probe`, `diarize`, `voiceprint`, `redact_audio` and `refine` read a whole file, and diarization or refinement of a
long one takes minutes. Answered on the main thread they would stall every other job's batched passes (and a
`ping`) until done, so they run in a pool of their own beside the decoders and the transcriptions' CPU stages, and
each is answered from its thread when it is done. The models they use load once behind locks of their own
(models.py, diarization/models), and CTranslate2 and ONNX Runtime take concurrent calls.

`cancel` of such a request answers it `cancelled` at once. Work no pool thread has taken up yet never runs. Python
cannot stop a thread, so work already begun stops at its next progress report (the callback raises `_Dropped`: a
diarization reports each percent), which frees its CPU for the jobs behind it; work that reports none runs to its end.
Either way its answer is dropped, and the log says which.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from .errors import CANCELLED, INTERNAL, EngineError
from .protocol import LineWriter

log = logging.getLogger(__name__)

# A request's work: given a progress callback (which stops the work once the request is cancelled), its result object.
Work = Callable[[Callable[[float], None]], dict[str, Any]]


class _Dropped(Exception):
    """Raised from a cancelled request's progress callback, so that its work stops there."""


class OpPool:
    """Runs requests in `threads` threads and answers each through `writer`; `wake()` is called after each answer
    (from the pool thread) so that the main thread waiting for its inbox sees `idle` and `broken` change."""

    def __init__(self, threads: int, writer: LineWriter, wake: Callable[[], None] = lambda: None) -> None:
        self._writer = writer
        self._wake = wake
        self._pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix="sori-ops")
        self._lock = threading.Lock()
        self._running: dict[str, tuple[str, Future[None]]] = {}  # request id: its op, its work
        # The protocol pipe closed under a pool thread's answer: the main thread raises it.
        self.broken: BrokenPipeError | None = None

    def submit(self, rid: str, op: str, work: Work) -> None:
        with self._lock:
            self._running[rid] = (op, self._pool.submit(self._run, rid, op, work))

    def cancel(self, rid: str) -> bool:
        """Answers the request `cancelled` at once; False when it is not here (answered, or never sent)."""
        with self._lock:
            running = self._running.pop(rid, None)
        if running is None:
            return False
        op, future = running
        if future.cancel():  # not begun: never runs (begun: stops at its next progress report, _run logs it)
            log.info("id=%s op=%s cancelled before it began", rid, op)
        self._writer.error(rid, CANCELLED, "cancelled")
        return True

    @property
    def idle(self) -> bool:
        with self._lock:
            return not self._running

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _live(self, rid: str) -> bool:
        with self._lock:
            return rid in self._running

    def _run(self, rid: str, op: str, work: Work) -> None:
        begun = time.monotonic()
        result: dict[str, Any] | None = None
        error: tuple[str, str] | None = None

        def report(fraction: float) -> None:
            if not self._live(rid):
                raise _Dropped
            self._writer.progress(rid, fraction)

        try:
            result = work(report)
        except _Dropped:
            pass  # cancelled: answered at the cancel, logged below
        except EngineError as e:
            log.warning("id=%s op=%s failed in %.2fs: %s: %s", rid, op, time.monotonic() - begun, e.code, e.message)
            error = (e.code, e.message)
        except BrokenPipeError as e:
            self.broken = e
        except Exception as e:  # one bad request must not take the engine down
            log.exception("id=%s op=%s crashed", rid, op)
            error = (INTERNAL, f"{type(e).__name__}: {e}")
        with self._lock:
            live = self._running.pop(rid, None) is not None
        try:
            if not live:
                log.info("id=%s op=%s cancelled after %.2fs; its answer dropped", rid, op, time.monotonic() - begun)
            elif error is not None:
                self._writer.error(rid, *error)
            elif result is not None:
                self._writer.result(rid, result)
                log.info("id=%s op=%s done in %.2fs", rid, op, time.monotonic() - begun)
        except BrokenPipeError as e:
            self.broken = e
        finally:
            self._wake()
