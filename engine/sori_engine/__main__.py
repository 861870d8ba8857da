"""`python -m sori_engine`: serve the JSON-lines protocol of docs/engine.md on stdin/stdout.

stdout belongs to the protocol alone. Before anything else is imported the real stdout is moved to a private file
descriptor and fd 1 is pointed at stderr, so a stray print, a library warning or output from native code
(CTranslate2, FFmpeg, onnxruntime) lands in the log instead of corrupting the stream the worker parses.

A reader thread puts each input line in the inbox; the main thread serves them. Up to SORI_ENGINE_JOBS transcribe
requests are in flight at once, their clips decoded in shared batches on SORI_ENGINE_DECODERS decoders (scheduler.py);
the ops that read a whole file (probe, diarize, voiceprint, redact_audio, refine) run in a pool beside the decoder,
each answered when done (op_pool.py); the others (ping, cancel, stream_*) are answered between two batched passes.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO

from . import __version__

# errors.py and protocol.py import only the standard library and the package's leaves; the heavy modules
# (faster_whisper, CTranslate2) are imported after stdout is claimed.
from .errors import INTERNAL, EngineError, bad_request
from .protocol import (
    LineWriter,
    PingResult,
    Request,
    get_field,
    is_nonempty_str,
    parse_diarize,
    parse_probe,
    parse_request,
    parse_transcribe,
    request_id_of,
)

log = logging.getLogger("sori_engine")


def _claim_stdout() -> BinaryIO:
    sys.stdout.flush()
    protocol_fd = os.dup(1)  # not inherited by child processes (PEP 446)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(protocol_fd, "wb")


def _setup_logging() -> None:
    logging.basicConfig(
        stream=sys.stderr,
        level=os.environ.get("SORI_ENGINE_LOG_LEVEL", "INFO").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # faster-whisper logs a line per call at INFO; its warnings are what matter.
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)


# BLAS pools (NumPy's and SciPy's OpenBLAS, or MKL) start one thread per core, and their idle threads spin. The
# engine's matrix work is small (the log-mel filters, diarization's clustering); CTranslate2 and ONNX Runtime keep
# pools of their own. On a 16-core GPU host the spinning was half the engine's CPU: the throughput mix through
# `sori serve` took 300 CPU s, 141 with one BLAS thread, the same text (docs/performance.md, "On a GPU"). Read when
# each library loads, so set before any is imported; a value the operator set is kept.
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def limit_blas_threads() -> None:
    for var in BLAS_THREAD_VARS:
        os.environ.setdefault(var, "1")


def main() -> int:
    # Model directories are always local; this makes huggingface_hub fail fast instead of reaching for the network
    # should anything ever ask it for a file.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    limit_blas_threads()
    protocol_out = _claim_stdout()
    _setup_logging()
    # FFmpeg (PyAV) is never loaded here: untrusted media is decoded in a short-lived process per file.
    from .media.sandbox import keep_ffmpeg_out

    keep_ffmpeg_out()
    # Load faster-whisper and CTranslate2 before announcing ready, so the first request is not slowed by them.
    from . import audio, models, transcriber  # noqa: F401
    from .scheduler import SchedulerOptions

    writer = LineWriter(protocol_out)
    try:
        options = SchedulerOptions.from_env(os.environ)
    except EngineError as e:
        log.error("%s", e.message)
        return 2
    try:
        writer.ready(__version__)
        log.info(
            "sori_engine %s ready (pid %d, %d transcribe jobs in flight, %d decoders)",
            __version__,
            os.getpid(),
            options.jobs,
            options.decoders,
        )
        _serve(sys.stdin.buffer, writer, options)
    except BrokenPipeError:
        log.error("worker closed the protocol pipe; exiting")
        return 1
    except KeyboardInterrupt:
        return 130
    return 0  # stdin closed: the worker is done with us


WAKE = b""  # in the inbox: a request's CPU stages reached a need or an end


def _read_lines(stdin: BinaryIO, inbox: queue.Queue[bytes | None]) -> None:
    for line in stdin:
        if line.strip():  # tolerate blank lines; they carry no request to answer
            inbox.put(line)
    inbox.put(None)  # stdin closed: the worker is done with us once the requests in flight are answered


# Answered from a pool thread when done (op_pool.py), not on the decoder thread.
POOL_OPS = frozenset({"probe", "diarize", "voiceprint", "redact_audio", "refine"})


def _serve(stdin: BinaryIO, writer: LineWriter, options: Any) -> None:
    from .op_pool import OpPool
    from .scheduler import Scheduler

    inbox: queue.Queue[bytes | None] = queue.Queue()
    threading.Thread(target=_read_lines, args=(stdin, inbox), daemon=True, name="sori-reader").start()
    started: dict[str, float] = {}

    def finish(rid: str, result: Any, error: BaseException | None) -> None:
        took = time.monotonic() - started.pop(rid, time.monotonic())
        if error is None:
            writer.result(rid, result.to_json())
            log.info("id=%s op=transcribe done in %.2fs", rid, took)
        elif isinstance(error, BrokenPipeError):
            raise error
        elif isinstance(error, EngineError):
            log.warning("id=%s op=transcribe failed in %.2fs: %s: %s", rid, took, error.code, error.message)
            writer.error(rid, error.code, error.message)
        else:  # one bad request must not take the engine down
            log.error("id=%s op=transcribe crashed", rid, exc_info=error)
            writer.error(rid, INTERNAL, f"{type(error).__name__}: {error}")

    scheduler = Scheduler(options, finish, wake=lambda: inbox.put(WAKE))
    # A thread per job in flight: a worker sends its job's requests one at a time.
    pool = OpPool(options.jobs, writer, wake=lambda: inbox.put(WAKE))
    closed = False
    try:
        while True:
            if pool.broken is not None:
                raise pool.broken
            decoded = scheduler.step()
            if closed and scheduler.idle and pool.idle:
                return
            try:  # after a pass, only what has come in; else wait for a line, a stage's end or a gathering's
                line = inbox.get(timeout=0 if decoded else scheduler.wait_s())
            except queue.Empty:
                continue
            while True:
                if line is None:
                    closed = True
                elif line != WAKE:
                    _take(line, writer, scheduler, pool, started)
                try:
                    line = inbox.get_nowait()
                except queue.Empty:
                    break
    finally:
        scheduler.shutdown()
        pool.shutdown()


def _take(line: bytes, writer: LineWriter, scheduler: Any, pool: Any, started: dict[str, float]) -> None:
    """One input line: a transcribe request queued for the scheduler, a file op handed to the pool, a cancel done,
    any other op answered now."""
    from . import transcriber

    try:
        req = parse_request(line)
    except EngineError as e:
        writer.error(request_id_of(line), e.code, e.message)
        return
    begun = time.monotonic()
    try:
        if req.op == "transcribe":
            params = parse_transcribe(req.params)
            rid = req.id
            started[rid] = begun
            # Events only while the request is in flight: a cancelled one's stage may still be running.
            scheduler.submit(
                rid,
                lambda: transcriber.transcribe_steps(
                    params,
                    lambda fraction: writer.progress(rid, fraction) if rid in started else None,
                    (lambda cp: writer.checkpoint(rid, cp) if rid in started else None) if params.checkpoints else None,
                    windows_in_flight=scheduler.windows_each,
                ),
            )
            return
        if req.op in POOL_OPS:
            pool.submit(req.id, req.op, lambda progress: _handle(req, progress))
            return
        if req.op == "cancel":
            target = get_field(req.params, "id", is_nonempty_str, "a non-empty string")
            result = {"cancelled": scheduler.cancel(target) or pool.cancel(target)}
        else:
            result = _handle(req, lambda _fraction: None)
    except EngineError as e:
        log.warning("id=%s op=%s failed in %.2fs: %s: %s", req.id, req.op, time.monotonic() - begun, e.code, e.message)
        writer.error(req.id, e.code, e.message)
    except BrokenPipeError:
        raise
    except Exception as e:  # one bad request must not take the engine down
        log.exception("id=%s op=%s crashed", req.id, req.op)
        writer.error(req.id, INTERNAL, f"{type(e).__name__}: {e}")
    else:
        writer.result(req.id, result)
        log.info("id=%s op=%s done in %.2fs", req.id, req.op, time.monotonic() - begun)


def _handle(req: Request, progress: Callable[[float], None]) -> dict[str, Any]:
    from . import audio, models  # already imported by main(), after stdout was claimed

    if req.op == "ping":
        return PingResult(version=__version__, models_loaded=models.loaded_paths()).to_json()
    if req.op == "probe":
        return audio.probe(parse_probe(req.params).audio_path).to_json()
    if req.op == "diarize":
        from .diarization import diarize  # loaded on first use: engines that never diarize never load its models

        dparams = parse_diarize(req.params)
        return diarize(dparams.audio_path, dparams.spk_count, dparams.max_duration_s, progress).to_json()
    if req.op == "voiceprint":
        from . import voiceprint  # loaded on first use, as diarization is

        return voiceprint.voiceprint(voiceprint.parse_voiceprint(req.params), progress)
    if req.op == "redact_audio":
        from . import redact_audio

        return redact_audio.redact_audio(redact_audio.parse_redact_audio(req.params))
    if req.op == "refine":
        from . import refiner

        return refiner.refine(refiner.parse_refine(req.params), progress)
    if req.op in ("stream_open", "stream_audio", "stream_step", "stream_close"):
        from . import streaming

        op = {
            "stream_open": streaming.open_session,
            "stream_audio": streaming.feed,
            "stream_step": streaming.step,
            "stream_close": streaming.close_session,
        }
        return op[req.op](req.params)
    raise bad_request(f"unknown op: {req.op}")


if __name__ == "__main__":
    sys.exit(main())
