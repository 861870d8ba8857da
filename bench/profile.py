#!/usr/bin/env python3
"""Where one job's engine CPU goes, stage by stage (docs/performance.md, "Profile of one job").

Runs the engine's own operations (`transcribe`, and `diarize` with --diarize) in this process with the parameters
the service sends for a job config (bench/engine-params.ts), on:
    call   the 5-minute Korean call of the throughput mix (bench/throughput_plain.py build: the 69 s dialogue, then
           Korean clips with half-second pauses)
    ko26   the 26 Korean clips of the shared set end to end, 1 s of silence between them (bench/rtf.py's ko input)
Each stage's function is wrapped so that the process CPU time (all threads: CTranslate2's and ONNX Runtime's too)
spent inside it is counted, exclusive of the stages it calls, except that a re-decode, language detection, word
timestamps and the tail check own everything they call (their encoder passes are their cost, not "encoder"). What no stage claims is "other" (Python glue, segment building, the batched pipeline's
feature padding).

    .venv/bin/python bench/profile.py [--inputs call,ko26] [--config '{"model_name":"sommers","language":"ko"}']
        [--diarize] [--repeat 2] [--plain] [--engine-root DIR]

--plain profiles the baseline instead: WhisperModel.transcribe with the same beam and word timestamps, no VAD.

The best (lowest total) of --repeat runs is printed, after one untimed warm-up run per input (model loads).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _engine_root() -> Path:
    """--engine-root, read before the engine is imported: that checkout's engine/ is the one profiled ("before")."""
    for i, arg in enumerate(sys.argv):
        if arg == "--engine-root" and i + 1 < len(sys.argv):
            return Path(sys.argv[i + 1])
    return ROOT


sys.path.insert(0, str(_engine_root() / "engine"))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402

from sori_engine import models, transcriber  # noqa: E402  (before rtf, which puts this tree's engine first)
from sori_engine.protocol import parse_transcribe  # noqa: E402

import rtf  # noqa: E402, I001  (bench/rtf.py: the ko26 input and its wav writer)

# Stages: (module, attribute, stage name). Nested stages count exclusively (a stack of open stages).
STAGES: list[tuple[str, str, str]] = [
    ("sori_engine.audio", "stream", "audio decode (PyAV)"),
    ("sori_engine.audio", "probe", "audio decode (PyAV)"),
    ("sori_engine.audio", "measure", "audio decode (PyAV)"),
    ("sori_engine.transcriber", "get_speech_timestamps", "VAD (Silero, regions)"),
    ("sori_engine.vad", "probabilities", "VAD (Silero, regions)"),
    ("sori_engine.hallucination", "speech_probs", "speech map (Silero again)"),
    ("sori_engine.decode.verdicts", "holds_a_word", "tail check (Silero on the rest of a chunk)"),
    ("sori_engine.decode.rounds", "decode_sequential", "sequential re-decode"),
    ("sori_engine.decode.language", "detect", "language detection"),
    ("sori_engine.hallucination", "clean", "hallucination stage"),
    ("faster_whisper.feature_extractor", "FeatureExtractor.__call__", "features (log-mel)"),
    ("faster_whisper.transcribe", "WhisperModel.add_word_timestamps", "word timestamps"),
    ("faster_whisper.transcribe", "restore_speech_timestamps", "other"),
    # The diarization package (engine/sori_engine/diarization/): names as its pipeline module imports them.
    ("sori_engine.vad", "SileroScan.run", "VAD (Silero, regions)"),  # the transcriber's windows and diarization's
    ("sori_engine.diarization.regions", "SegmentationScan.feed", "diarization: segmentation"),
    ("sori_engine.diarization.regions", "SegmentationScan.finish", "diarization: segmentation"),
    ("sori_engine.diarization.pipeline", "speech_segments", "diarization: segmentation"),
    ("sori_engine.diarization.embedders", "CampplusEmbedder.add", "diarization: embeddings"),
    ("sori_engine.diarization.embedders", "CampplusEmbedder.result", "diarization: embeddings"),
    ("sori_engine.diarization.embedders", "ResemblyzerEmbedder.add", "diarization: embeddings"),
    ("sori_engine.diarization.embedders", "ResemblyzerEmbedder.result", "diarization: embeddings"),
    ("sori_engine.diarization.pipeline", "cluster", "diarization: clustering"),
]
MODEL_CALLS = {"encode": "encoder", "generate": "decoder (beam search)", "align": "word timestamps",
               "detect_language": "language detection"}
# Stages that own all the work they call: a re-decode's encoder pass is the re-decode's cost, not "encoder".
ABSORBING = {"sequential re-decode", "word timestamps", "language detection", "tail check (Silero on the rest of a chunk)"}


class Clock:
    """Exclusive process CPU seconds per stage."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.stack: list[list[Any]] = []  # [stage, started, child seconds]

    def enter(self, stage: str) -> None:
        self.calls[stage] = self.calls.get(stage, 0) + 1
        self.stack.append([stage, time.process_time(), 0.0])

    def leave(self) -> None:
        stage, started, children = self.stack.pop()
        total = time.process_time() - started
        self.spent[stage] = self.spent.get(stage, 0.0) + total - children
        if self.stack:
            self.stack[-1][2] += total

    def timed(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if any(open_[0] in ABSORBING for open_ in self.stack):
                return fn(*args, **kwargs)
            self.enter(stage)
            try:
                result = fn(*args, **kwargs)
            finally:
                self.leave()
            if hasattr(result, "__next__"):  # a generator: count the work of each step instead
                return self._timed_iter(stage, result)
            return result

        return wrapper

    def _timed_iter(self, stage: str, it: Iterator[Any]) -> Iterator[Any]:
        while True:
            self.enter(stage)
            try:
                item = next(it)
            except StopIteration:
                return
            finally:
                self.leave()
            yield item


class TimedModel:
    """CTranslate2's Whisper with its calls counted (it is a C++ object: wrapped, not patched)."""

    def __init__(self, inner: Any, clock: Clock) -> None:
        self._inner = inner
        for name, stage in MODEL_CALLS.items():
            setattr(self, name, clock.timed(stage, getattr(inner, name)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def install(clock: Clock) -> None:
    for module_name, attr, stage in STAGES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        owner: Any = module
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if owner is None or not hasattr(owner, name):
            continue
        setattr(owner, name, clock.timed(stage, getattr(owner, name)))


def engine_params(config: str) -> dict[str, Any]:
    out = subprocess.run(["npx", "tsx", str(ROOT / "bench/engine-params.ts"), config], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    params = json.loads(out.strip().splitlines()[-1])[0]
    params.pop("model_name", None)
    return params


def build_inputs(tmp: Path, names: list[str]) -> dict[str, Path]:
    paths: dict[str, Path] = {}
    if "call" in names:
        subprocess.run([sys.executable, str(ROOT / "bench/throughput_plain.py"), "build", str(tmp / "mix"),
                        "--scale", "small"], check=True, stdout=subprocess.DEVNULL)
        paths["call"] = tmp / "mix" / "ko-call-5min.wav"
    if "ko26" in names:
        _lang, samples, _ref = rtf.build_input("ko", rtf.manifest())
        rtf.write_wav(tmp / "ko26.wav", samples)
        paths["ko26"] = tmp / "ko26.wav"
    return paths


def run_job(params: dict[str, Any], diarize: bool, plain: bool) -> None:
    if plain:  # the ten-line script: WhisperModel.transcribe with its defaults, same beam, same model instance
        req = parse_transcribe(params)
        segments, _info = models.get_model(req.model).transcribe(
            req.audio_path, language=req.language, beam_size=req.model.beam_size, word_timestamps=req.word_timestamps
        )
        list(segments)
        return
    transcriber.transcribe(parse_transcribe(params), lambda _f: None)
    if diarize:
        from sori_engine.diarization import pipeline as diarize_op

        diarize_op.diarize(params["audio_path"], 0, params.get("max_duration_s"), lambda _f: None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", default="call,ko26")
    ap.add_argument("--config", default='{"model_name":"sommers","language":"ko"}')
    ap.add_argument("--diarize", action="store_true", help="also run the diarize op (use_diarization)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--engine-root", default=str(ROOT), help="the checkout whose engine is profiled")
    ap.add_argument("--plain", action="store_true", help="profile WhisperModel.transcribe (the baseline) instead")
    args = ap.parse_args()
    base = engine_params(args.config)
    if args.diarize:
        importlib.import_module("sori_engine.diarization.pipeline")
    print(f"{'plain WhisperModel.transcribe' if args.plain else 'sori'}: config {args.config}{' + use_diarization' if args.diarize else ''}; engine params "
          f"beam {base['model']['beam_size']}, vad {base['model']['vad']}, words {base['word_timestamps']}; "
          f"cpus {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp_name:
        inputs = build_inputs(Path(tmp_name), args.inputs.split(","))
        clock = Clock()
        install(clock)
        model = models.get_model(parse_transcribe({**base, "audio_path": "x"}).model)
        model.model = TimedModel(model.model, clock)
        for name, path in inputs.items():
            params = {**base, "audio_path": str(path)}
            run_job(params, args.diarize, args.plain)  # warm-up: VAD and diarization models load
            best: dict[str, float] | None = None
            best_wall = 0.0
            best_calls: dict[str, int] = {}
            for _ in range(args.repeat):
                clock.spent, clock.calls = {}, {}
                c0, w0 = time.process_time(), time.perf_counter()
                run_job(params, args.diarize, args.plain)
                total, wall = time.process_time() - c0, time.perf_counter() - w0
                spent, calls = dict(clock.spent), dict(clock.calls)
                spent["other"] = spent.get("other", 0.0) + total - sum(spent.values())
                if best is None or total < sum(best.values()):
                    best, best_wall, best_calls = spent, wall, calls
            assert best is not None
            audio_s = float(np.float64(os.path.getsize(path) - 44) / 2 / 16000)
            total = sum(best.values())
            print(f"\n{name}: {audio_s:.1f} s of audio, {total:.2f} CPU s (CPU RTF {total / audio_s:.3f}), "
                  f"wall {best_wall:.1f} s, load average {os.getloadavg()[0]:.1f}")
            print("| stage | calls | CPU s | share |\n|---|---:|---:|---:|")
            for stage, secs in sorted(best.items(), key=lambda kv: -kv[1]):
                print(f"| {stage} | {best_calls.get(stage, '')} | {secs:.2f} | {100 * secs / total:.0f} % |")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
