#!/usr/bin/env python3
"""sori's transcription path against plain sequential faster-whisper, on the same model and the same audio.

Two inputs are built from the shared test audio (../shared/testdata), in memory:
    ko   the 26 Korean clips of ko/ end to end, 1 s of silence between them (about 2.5 min)
    en   the two 60 s earnings-call clips of en/ end to end (about 2 min)
    ja   the 15 Japanese clips of ja/ end to end (about 2.5 min; not in the default --inputs)
and each is transcribed by
    sori        sori_engine.transcriber.transcribe, the worker's call: streaming decode, windowed Silero VAD,
                chunks of <= 30 s of speech decoded in batches (BatchedInferencePipeline), continued from where a
                chunk's decoding stopped early
    sequential  WhisperModel.transcribe(audio, language=..., beam_size=...) with faster-whisper's defaults
                (no VAD, condition_on_previous_text=True, temperature fallback): what a plain script does
with the same WhisperModel instance (int8 on CPU unless --compute-type says otherwise).

Printed per input and system: audio seconds, wall seconds, RTF (wall / audio), normalized CER (NFKC, lower case,
"%" read as its word, whitespace, punctuation and symbols removed; corpus edit distance / reference length; "(old)":
the same with "%" dropped, the form of figures before 2026-11-27), and the ratio
RTF(sori) / RTF(sequential), and the same for process CPU time (all threads), which a busy machine distorts less
than wall time. Model loading and one warm-up call are not timed. Each measurement is the best of
--repeat runs, interleaved, since other work on the machine only ever makes a run slower.

    .venv/bin/python bench/rtf.py [--beam 5,1] [--sori-beam 5,1] [--repeat 2] [--inputs ko,en]
        [--cpu-threads N] [--batch-size N] [--chunk-s S] [--speech-s S] [--dump DIR] [--set MODULE.NAME=VALUE]

--beam lists the sequential runs' beam sizes and --sori-beam sori's (default: the same list), so one run prints
sori at the same beam as the baseline and sori's production settings (sommers: beam 5, whisper: beam 1) against
the baseline's default (beam 5); every sori row gets a ratio against every sequential row. The load average is
printed with each input, since other work on a shared machine inflates wall time most and CPU time a little.
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
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine"))

from sori_engine import audio as audio_io  # noqa: E402
from sori_engine import models, transcriber  # noqa: E402
from sori_engine.decode.options import DEFAULT, DecodeOptions, with_overrides  # noqa: E402
from sori_engine.protocol import ModelConfig, TranscribeParams  # noqa: E402

TESTDATA = Path(os.environ.get("SORI_TESTDATA", ROOT.parent / "shared" / "testdata"))
SR = audio_io.SAMPLE_RATE


# Signs a speaker says as a word: the model writes either ("14%" or "14 percent"), as the references do, and the
# normal form reads them alike (bench/cer.ts verbalizes them too) rather than count the word as edits.
SPOKEN_SIGNS = {"en": {"%": " percent "}, "ko": {"%": "퍼센트"}, "ja": {"%": "パーセント"}}


def norm_chars(text: str, lang: str | None = None) -> list[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    for sign, word in SPOKEN_SIGNS.get(lang or "", {}).items():
        text = text.replace(sign, word)
    return [c for c in text if unicodedata.category(c)[0] not in "ZPS"]


def edit_distance(a: list[str], b: list[str]) -> int:
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[len(b)]


def cer(hyp: str, ref: str, lang: str | None = None) -> float:
    """Normalized CER; with `lang`, its SPOKEN_SIGNS read as words (without: signs dropped, the form before
    2026-11-27, printed beside it for comparison with older figures)."""
    r = norm_chars(ref, lang)
    return edit_distance(norm_chars(hyp, lang), r) / max(1, len(r))


def manifest() -> dict[str, tuple[str, str]]:
    with open(TESTDATA / "MANIFEST.tsv", encoding="utf-8") as f:
        return {row["local_file"]: (row["lang"], row["transcript"]) for row in csv.DictReader(f, delimiter="\t")}


def build_input(
    name: str, refs: dict[str, tuple[str, str]], gap_s: float = 1.0, fill: str = "zeros"
) -> tuple[str, np.ndarray, str]:
    """(language, 16 kHz float32 audio, reference text) of one bench input: its clips with `gap_s` seconds of
    `fill` after each, digital silence ("zeros") or room tone ("tone": -50 dBFS noise, seeded; bench/layouts.py)."""
    if name in ("ko", "ja"):
        files = sorted(f for f in refs if f.startswith(f"{name}/"))
    elif name == "en":
        files = sorted(f for f in refs if f.startswith("en/earnings22"))
    else:
        raise SystemExit(f"unknown input {name}")
    n = int(gap_s * SR)
    rng = np.random.default_rng(0)
    parts: list[np.ndarray] = []
    for f in files:
        gap = np.zeros(n) if fill == "zeros" else rng.standard_normal(n) * 10 ** (-50 / 20)
        parts += [audio_io.decode(str(TESTDATA / f)), gap.astype(np.float32)]
    return refs[files[0]][0], np.concatenate(parts), " ".join(refs[f][1] for f in files)


def decode_options(assignments: list[str], base: DecodeOptions = DEFAULT) -> DecodeOptions:
    """--set FIELD=VALUE: DecodeOptions fields overridden (engine/sori_engine/decode/options.py), checked as a
    SORI_MODELS_FILE's are."""
    overrides = {}
    for assignment in assignments:
        name, value = assignment.split("=", 1)
        overrides[name] = float(value)
    try:
        return with_overrides(base, overrides, "--set")
    except (TypeError, ValueError) as e:
        raise SystemExit(str(e)) from None


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
    ap.add_argument("--beam", default="5", help="sequential beam sizes, comma-separated (faster-whisper's default: 5)")
    ap.add_argument("--sori-beam", default=None, help="sori beam sizes (default: as --beam; sommers 5, whisper 1)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--inputs", default="ko,en")
    ap.add_argument("--cpu-threads", type=int, default=0, help="CTranslate2 threads (0: its default, as the registry)")
    ap.add_argument("--batch-size", type=int, default=DEFAULT.batch_size, help="sori's chunks per batch")
    ap.add_argument("--chunk-s", type=float, default=DEFAULT.chunk_s, help="sori's speech per chunk")
    ap.add_argument("--speech-s", type=float, default=DEFAULT.speech_s, help="sori's longest VAD region")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="override a decoding option, e.g. encoder_margin_s=0 (repeatable)")
    ap.add_argument("--dump", default=None, help="write each system's text and the reference to this folder")
    args = ap.parse_args()
    options = decode_options(
        args.set, replace(DEFAULT, batch_size=args.batch_size, chunk_s=args.chunk_s, speech_s=args.speech_s)
    )
    seq_beams = [int(b) for b in args.beam.split(",")]
    sori_beams = [int(b) for b in (args.sori_beam or args.beam).split(",")]
    systems = [("sequential", b) for b in seq_beams] + [("sori", b) for b in sori_beams]

    def config(beam: int) -> ModelConfig:
        return ModelConfig(path=args.model, device="cpu", compute_type=args.compute_type, beam_size=beam,
                           cpu_threads=args.cpu_threads, decode=options)

    refs = manifest()
    models.get_model(config(1))  # load once (beam size is not part of the cache key), untimed
    print(f"model {args.model} {args.compute_type}; sori chunks {args.chunk_s:g} s, batch {args.batch_size}; "
          f"cpu_threads {args.cpu_threads}; cpus {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'input':6} {'system':14} {'audio s':>8} {'wall s':>8} {'RTF':>7} {'CER':>6} {'(old)':>6} "
          f"{'CPU s':>8} {'CPU RTF':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.inputs.split(","):
            language, samples, ref = build_input(name, refs)
            wav = Path(tmp) / f"{name}.wav"
            write_wav(wav, samples)
            audio_s = samples.shape[0] / SR
            run_sori(config(sori_beams[0]), wav, language)  # warm-up (VAD model load, caches)
            wall = {k: float("inf") for k in systems}
            cpu = {k: float("inf") for k in systems}
            text = {k: "" for k in systems}
            for _ in range(args.repeat):
                for key in systems:
                    system, beam = key
                    t0, c0 = time.perf_counter(), time.process_time()
                    text[key] = (
                        run_sori(config(beam), wav, language)
                        if system == "sori"
                        else run_sequential(config(beam), samples, language)
                    )
                    wall[key] = min(wall[key], time.perf_counter() - t0)
                    cpu[key] = min(cpu[key], time.process_time() - c0)
            if args.dump:
                Path(args.dump).mkdir(parents=True, exist_ok=True)
                (Path(args.dump) / f"{name}.ref.txt").write_text(ref + "\n", encoding="utf-8")
                for system, beam in systems:
                    (Path(args.dump) / f"{name}.{system}-b{beam}.txt").write_text(text[(system, beam)] + "\n", "utf-8")
            for key in systems:
                label = f"{key[0]} b{key[1]}"
                print(
                    f"{name:6} {label:14} {audio_s:8.1f} {wall[key]:8.1f} {wall[key] / audio_s:7.3f} "
                    f"{cer(text[key], ref, language):6.3f} {cer(text[key], ref):6.3f} "
                    f"{cpu[key]:8.1f} {cpu[key] / audio_s:8.3f}"
                )
            for s_key in [k for k in systems if k[0] == "sori"]:
                for q_key in [k for k in systems if k[0] == "sequential"]:
                    print(
                        f"{name:6} ratio sori b{s_key[1]} / sequential b{q_key[1]}: "
                        f"CPU {cpu[s_key] / cpu[q_key]:.2f}, wall {wall[s_key] / wall[q_key]:.2f}"
                    )
            print(f"{name:6} load average after: {os.getloadavg()[0]:.1f}")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
