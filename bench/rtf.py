#!/usr/bin/env python3
"""sori's transcription path against plain sequential faster-whisper, on the same model and the same audio.

Two inputs are built from the shared test audio (../shared/testdata), in memory:
    ko   the 26 Korean clips of ko/ end to end, 1 s of silence between them (about 2.5 min)
    en   the two 60 s earnings-call clips of en/ end to end (about 2 min)
and each is transcribed by
    sori        sori_engine.transcriber.transcribe, the worker's call: streaming decode, windowed Silero VAD,
                chunks of <= 30 s of speech decoded in batches (BatchedInferencePipeline)
    sequential  WhisperModel.transcribe(audio, language=..., beam_size=...) with faster-whisper's defaults
                (no VAD, condition_on_previous_text=True, temperature fallback): what a plain script does
with the same WhisperModel instance (int8 on CPU unless --compute-type says otherwise) and the same beam size.

Printed per input and system: audio seconds, wall seconds, RTF (wall / audio), normalized CER (NFKC, lower case,
whitespace, punctuation and symbols removed; corpus edit distance / reference length), and the ratio
RTF(sori) / RTF(sequential), and the same for process CPU time (all threads), which a busy machine distorts less
than wall time. Model loading and one warm-up call are not timed. Each measurement is the best of
--repeat runs, interleaved, since other work on the machine only ever makes a run slower.

    .venv/bin/python bench/rtf.py [--beam 5] [--repeat 2] [--inputs ko,en] [--batch-size 8]
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
import unicodedata
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine"))

from sori_engine import audio as audio_io  # noqa: E402
from sori_engine import models, transcriber  # noqa: E402
from sori_engine.protocol import ModelConfig, TranscribeParams  # noqa: E402

TESTDATA = Path(os.environ.get("SORI_TESTDATA", ROOT.parent / "shared" / "testdata"))
SR = audio_io.SAMPLE_RATE


def norm_chars(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    return [c for c in text if unicodedata.category(c)[0] not in "ZPS"]


def edit_distance(a: list[str], b: list[str]) -> int:
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[len(b)]


def cer(hyp: str, ref: str) -> float:
    r = norm_chars(ref)
    return edit_distance(norm_chars(hyp), r) / max(1, len(r))


def manifest() -> dict[str, tuple[str, str]]:
    with open(TESTDATA / "MANIFEST.tsv", encoding="utf-8") as f:
        return {row["local_file"]: (row["lang"], row["transcript"]) for row in csv.DictReader(f, delimiter="\t")}


def build_input(name: str, refs: dict[str, tuple[str, str]]) -> tuple[str, np.ndarray, str]:
    """(language, 16 kHz float32 audio, reference text) of one bench input."""
    if name == "ko":
        files = sorted(f for f in refs if f.startswith("ko/"))
    elif name == "en":
        files = sorted(f for f in refs if f.startswith("en/earnings22"))
    else:
        raise SystemExit(f"unknown input {name}")
    gap = np.zeros(SR, dtype=np.float32)
    parts: list[np.ndarray] = []
    for f in files:
        parts += [audio_io.decode(str(TESTDATA / f)), gap]
    return refs[files[0]][0], np.concatenate(parts), " ".join(refs[f][1] for f in files)


def write_wav(path: Path, samples: np.ndarray) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes((np.clip(samples, -1, 1 - 1 / 32768) * 32768).astype("<i2").tobytes())


def run_sori(cfg: ModelConfig, wav: Path, language: str) -> str:
    params = TranscribeParams(audio_path=str(wav), model=cfg, language_mode="fixed", language=language)
    return " ".join(s.text for s in transcriber.transcribe(params, lambda _f: None).segments)


def run_sequential(cfg: ModelConfig, samples: np.ndarray, language: str) -> str:
    segments, _ = models.get_model(cfg).transcribe(samples, language=language, beam_size=cfg.beam_size)
    return " ".join(s.text.strip() for s in segments)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=str(ROOT / "models" / "whisper-base"))
    ap.add_argument("--compute-type", default="int8")
    ap.add_argument("--beam", type=int, default=5, help="beam size for both (sommers uses 5, whisper 1)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--inputs", default="ko,en")
    ap.add_argument("--batch-size", type=int, default=transcriber.BATCH_SIZE)
    ap.add_argument("--cpu-threads", type=int, default=0)
    ap.add_argument("--speech-s", type=float, default=transcriber.SPEECH_S)
    ap.add_argument("--chunk-s", type=float, default=transcriber.CHUNK_SPEECH_S)
    args = ap.parse_args()
    transcriber.BATCH_SIZE = args.batch_size
    transcriber.SPEECH_S = args.speech_s
    transcriber.CHUNK_SPEECH_S = args.chunk_s
    cfg = ModelConfig(path=args.model, device="cpu", compute_type=args.compute_type, beam_size=args.beam,
                      cpu_threads=args.cpu_threads)
    refs = manifest()
    models.get_model(cfg)  # load once, untimed
    print(f"model {args.model} {args.compute_type} beam {args.beam} batch {args.batch_size}; cpus {os.cpu_count()}")
    print(f"{'input':6} {'system':11} {'audio s':>8} {'wall s':>8} {'RTF':>7} {'CER':>6} {'CPU s':>8} {'CPU RTF':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.inputs.split(","):
            language, samples, ref = build_input(name, refs)
            wav = Path(tmp) / f"{name}.wav"
            write_wav(wav, samples)
            audio_s = samples.shape[0] / SR
            run_sori(cfg, wav, language)  # warm-up (VAD model load, caches)
            best = {"sori": float("inf"), "sequential": float("inf")}
            cpu = {"sori": float("inf"), "sequential": float("inf")}
            text = {"sori": "", "sequential": ""}
            for _ in range(args.repeat):
                for system in ("sori", "sequential"):
                    t0, c0 = time.perf_counter(), time.process_time()
                    text[system] = (
                        run_sori(cfg, wav, language) if system == "sori" else run_sequential(cfg, samples, language)
                    )
                    best[system] = min(best[system], time.perf_counter() - t0)
                    cpu[system] = min(cpu[system], time.process_time() - c0)
            for system in ("sori", "sequential"):
                rtf = best[system] / audio_s
                print(
                    f"{name:6} {system:11} {audio_s:8.1f} {best[system]:8.1f} {rtf:7.3f} {cer(text[system], ref):6.3f} "
                    f"{cpu[system]:8.1f} {cpu[system] / audio_s:8.3f}"
                )
            print(
                f"{name:6} ratio sori / sequential: wall RTF {best['sori'] / best['sequential']:.2f}, "
                f"CPU {cpu['sori'] / cpu['sequential']:.2f}"
            )
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
