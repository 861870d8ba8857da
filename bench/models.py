#!/usr/bin/env python3
"""Real-time factor and error rate of model configurations, measured through the engine's own transcription path.

Every file is transcribed by `sori_engine.transcriber.transcribe` with a `TranscribeParams` built from a
registry-style entry {path, device, compute_type, beam_size, cpu_threads, vad} -- the same call the worker makes for
a job -- with `language_mode` "fixed" and the language taken from the manifest row of the file. So the figures are
what a user of that registry entry gets (audio decoding and Silero VAD included). For a registry entry, a row is what a
client gets with the RTZR-style config {"model_name": NAME, "language": LANG} -- e.g. {"model_name": "whisper",
"language": "en"} for English, or any other language Whisper knows -- and, as the API refuses sommers with a language
other than ko or ja (400 H0001, docs/api.md), the `sommers` entry is only run on ko and ja.

Run from the repository root:

    .venv/bin/python bench/models.py                      # the two entries of defaultRegistry (src/engine/models.ts)
    .venv/bin/python bench/models.py --registry models.json   # a SORI_MODELS_FILE-shaped JSON file
    .venv/bin/python bench/models.py b1=models/whisper-base:int8:1 b5-novad=models/whisper-base:int8:5:novad \
        --langs ko,ja --max-files 12 --json /tmp/bench.json
    .venv/bin/python bench/models.py ... --langs ko --long    # the ko clips as one 2-minute recording

A configuration on the command line is NAME=PATH:COMPUTE_TYPE:BEAM[:novad] (vad on unless `novad`); device and
cpu_threads come from --device / --cpu-threads. Test audio: the ko/, ja/, en/ folders of ../shared/testdata, with
reference transcripts from its MANIFEST.tsv. Those files are short clips (most ko/ja ones 2-8 s, under one 30 s
Whisper window); --long lays a language's clips end to end (0.5 s of faint noise between them) into one temporary
wav and scores that instead, which is closer to the recordings the service is given: VAD and chunking then matter.

One row per (configuration, language):

    files    files transcribed
    audio s  their total duration (decoded samples)
    proc s   wall time of the transcribe() calls, one at a time (audio decode + VAD + Whisper)
    RTF      real-time factor, proc s / audio s (0.25 = four times faster than real time). Model loading is excluded
             and so is one untimed warm-up file per configuration. Configurations take turns file by file, so a
             change in the machine's load during the run hits them alike.
    cpuRTF   CPU time of this process (all threads) / audio s: less sensitive than RTF to other work on the machine.
    load s   seconds to load the model (once per process; configurations that differ only in beam size or VAD
             share the loaded model and show the same figure).
    CER      normalized character error rate in the one normal form of the tests and benches
             (engine/sori_eval/scoring.py: NFKC, lower case, numbers read out for ko/ja/en, punctuation and spaces
             removed); corpus level: sum of edits over sum of reference lengths, so long files weigh more.
    WER      (en only) word error rate over the same normal form's words.

Timings depend on the machine and on whatever else runs on it: compare rows from one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import ctranslate2
import faster_whisper
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))  # this checkout's engine and sori_eval

from sori_engine import audio as audio_io  # noqa: E402
from sori_engine import models, transcriber  # noqa: E402
from sori_engine.protocol import ModelConfig, TranscribeParams  # noqa: E402
from sori_engine.transcriber import transcribe  # noqa: E402
from sori_eval import scoring  # noqa: E402
from sori_eval.testdata import TESTDATA, clips  # noqa: E402
from sori_eval.wav import write_wav  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REGISTRY_TS = ROOT / "src" / "engine" / "models.ts"
SR = audio_io.SAMPLE_RATE
# Defaults of a registry entry, as in EntrySchema (src/engine/models.ts).
ENTRY_DEFAULTS = {"device": "cpu", "compute_type": "int8", "beam_size": 1, "cpu_threads": 0, "vad": True}


@dataclass
class Config:
    name: str
    model: ModelConfig


# ------------------------------------------------------------------------------------------------ configurations
def parse_spec(spec: str, device: str, cpu_threads: int) -> Config:
    """NAME=PATH:COMPUTE_TYPE:BEAM[:novad]"""
    m = re.fullmatch(r"([^=]+)=([^:]+):([^:]+):(\d+)(:novad)?", spec)
    if not m:
        raise SystemExit(f"bad configuration {spec!r}: expected NAME=PATH:COMPUTE_TYPE:BEAM[:novad]")
    name, path, compute_type, beam, novad = m.groups()
    return Config(name, ModelConfig(str(Path(path).resolve()), device, compute_type, int(beam), cpu_threads, not novad))


def entry_config(name: str, entry: dict, base_dir: Path) -> Config:
    e = {**ENTRY_DEFAULTS, **entry}
    return Config(name, ModelConfig(str((base_dir / e["path"]).resolve()), e["device"], e["compute_type"],
                                    e["beam_size"], e["cpu_threads"], e["vad"]))


def registry_file(path: Path) -> list[Config]:
    """A SORI_MODELS_FILE: {"sommers": {...}, "whisper": {...}}, paths relative to the file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [entry_config(name, entry, path.parent) for name, entry in data.items()]


def default_registry() -> list[Config]:
    """The entries of defaultRegistry() in src/engine/models.ts (read from the source, so the bench follows it),
    with `base` = models/whisper-base."""
    configs = []
    for name, body in re.findall(r"^\s*(sommers|whisper): \{ path: base, (.*) \},$", REGISTRY_TS.read_text(), re.M):
        entry = {k: json.loads(v) for k, v in re.findall(r"(\w+): ([^,]+)", body)}
        configs.append(entry_config(name, {**entry, "path": "whisper-base"}, ROOT / "models"))
    if len(configs) != 2:
        raise SystemExit(f"cannot read defaultRegistry from {REGISTRY_TS}; pass configurations explicitly")
    return configs


# ------------------------------------------------------------------------------------------------ test data
def load_manifest(langs: list[str], max_files: int | None) -> dict[str, list[dict]]:
    """Manifest rows of the files in folder <lang>/ that have a reference transcript, sorted by file name."""
    out = {}
    for lang in langs:
        rows = [{"local_file": c.file, "lang": c.lang, "transcript": c.reference} for c in clips([lang])]
        out[lang] = rows[:max_files] if max_files else rows
    return out


def as_recording(lang: str, rows: list[dict], out_dir: Path) -> dict:
    """One manifest-like row for the language's files laid end to end, 0.5 s of faint noise (-50 dBFS, room tone)
    between them, written as a 16 kHz wav: a recording several Whisper windows long, as the service gets them."""
    gap = (np.random.default_rng(0).standard_normal(SR // 2) * 10 ** (-50 / 20)).astype(np.float32)
    audio = np.concatenate([x for r in rows for x in (audio_io.decode(str(TESTDATA / r["local_file"])), gap)])
    path = write_wav(out_dir / f"{lang}-long.wav", audio)
    return {"local_file": str(path), "lang": rows[0]["lang"], "transcript": " ".join(r["transcript"] for r in rows)}


# The languages the API accepts with model_name sommers (SOMMERS_LANGUAGES in src/jobs/jobConfig.ts).
SOMMERS_LANGUAGES = {"ko", "ja"}


def served(cfg: Config, lang: str) -> bool:
    """Whether the API accepts {"model_name": cfg.name, "language": lang}: command-line configurations always run."""
    return cfg.name != "sommers" or lang in SOMMERS_LANGUAGES


def params(cfg: Config, row: dict) -> TranscribeParams:
    return TranscribeParams(audio_path=str(TESTDATA / row["local_file"]), model=cfg.model,
                            language_mode="fixed", language=row["lang"])


# ------------------------------------------------------------------------------------------------ main
def load_models(configs: list[Config]) -> dict[str, float]:
    """Load every configuration's model into the engine's cache (as the engine does on first use) and return the load
    time per configuration; configurations that differ only in beam size or VAD share one loaded model."""
    seen: dict[tuple, float] = {}
    load_s = {}
    for cfg in configs:
        m = cfg.model
        key = (m.path, m.device, m.compute_type, m.cpu_threads)
        if key not in seen:
            t0 = time.perf_counter()
            models.get_model(m)
            seen[key] = time.perf_counter() - t0
        load_s[cfg.name] = seen[key]
    return load_s


def run(
    configs: list[Config], data: dict[str, list[dict]], warmup: dict, report: Callable[[dict], None]
) -> tuple[list[dict], list[dict]]:
    """Transcribe every file with every configuration and call report(row) for each (configuration, language) as
    soon as that language is done. Configurations take turns file by file, so a change in the machine's load
    during the run hits them alike."""
    load_s = load_models(configs)
    for cfg in configs:  # warm-up on one clip (VAD session, first-call allocations): not timed
        transcribe(params(cfg, warmup), lambda _: None)

    rows, files = [], []
    for lang, manifest in data.items():
        for i, m in enumerate(manifest, 1):
            print(f"{lang} {i}/{len(manifest)} {m['local_file']}", file=sys.stderr, flush=True)
            for cfg in configs:
                if not served(cfg, m["lang"]):
                    continue
                t0, c0 = time.perf_counter(), time.process_time()
                result = transcribe(params(cfg, m), lambda _: None)
                proc_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
                hyp = " ".join(s.text for s in result.segments)
                ref_c, hyp_c = scoring.chars(m["transcript"], m["lang"]), scoring.chars(hyp, m["lang"])
                f = {"config": cfg.name, "lang": lang, "file": m["local_file"], "audio_s": result.duration_s,
                     "proc_s": proc_s, "cpu_s": cpu_s, "char_err": scoring.edit_distance(hyp_c, ref_c),
                     "char_ref": len(ref_c), "ref": m["transcript"], "hyp": hyp}
                if m["lang"] == "en":
                    ref_w, hyp_w = scoring.words(m["transcript"], "en"), scoring.words(hyp, "en")
                    f |= {"word_err": scoring.edit_distance(hyp_w, ref_w), "word_ref": len(ref_w)}
                files.append(f)
        for cfg in configs:
            fs = [f for f in files if f["config"] == cfg.name and f["lang"] == lang]
            if not fs:
                continue
            tot = {k: sum(f.get(k, 0) for f in fs) for k in
                   ("audio_s", "proc_s", "cpu_s", "char_err", "char_ref", "word_err", "word_ref")}
            row = {"config": cfg.name, "lang": lang, "files": len(fs), "audio_s": tot["audio_s"],
                   "proc_s": tot["proc_s"], "rtf": tot["proc_s"] / max(tot["audio_s"], 1e-9),
                   "cpu_rtf": tot["cpu_s"] / max(tot["audio_s"], 1e-9),
                   "cer": tot["char_err"] / max(tot["char_ref"], 1), "char_err": tot["char_err"],
                   "char_ref": tot["char_ref"], "wer": tot["word_err"] / tot["word_ref"] if tot["word_ref"] else None,
                   "load_s": load_s[cfg.name]}
            rows.append(row)
            report(row)
    return rows, files


def print_row(r: dict) -> None:
    wer = f"{r['wer']:7.1%}" if r["wer"] is not None else f"{'-':>7}"
    print(f"{r['config']:<16} {r['lang']:<8} {r['files']:>5} {r['audio_s']:>8.1f} {r['proc_s']:>7.1f} "
          f"{r['rtf']:>6.3f} {r['cpu_rtf']:>6.3f} {r['cer']:>7.1%} {wer} {r['load_s']:>6.2f}", flush=True)


def describe(m: ModelConfig) -> str:
    return (f"{os.path.relpath(m.path, ROOT)} {m.device} {m.compute_type} beam{m.beam_size} "
            f"threads={m.cpu_threads} {'vad' if m.vad else 'novad'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("configs", nargs="*", metavar="NAME=PATH:COMPUTE_TYPE:BEAM[:novad]")
    ap.add_argument("--registry", type=Path, help="registry JSON file (SORI_MODELS_FILE shape); adds its entries")
    ap.add_argument("--langs", default="ko,ja,en", help="test folders / languages (default: %(default)s)")
    ap.add_argument("--max-files", type=int, help="at most N files per language (first N by file name)")
    ap.add_argument("--long", action="store_true", help="transcribe each language's files as one recording, end "
                    "to end with 0.5 s of room tone between them, instead of one by one")
    ap.add_argument("--device", default="cpu", help="device of command-line configurations (default: cpu)")
    ap.add_argument("--cpu-threads", type=int, default=0, help="cpu_threads of command-line configurations "
                    "(default 0: CTranslate2's default)")
    ap.add_argument("--json", type=Path, help="write the rows and per-file results (hypotheses included) here")
    args = ap.parse_args(argv)

    configs = [parse_spec(s, args.device, args.cpu_threads) for s in args.configs]
    if args.registry:
        configs += registry_file(args.registry)
    configs = configs or default_registry()
    data = load_manifest([x for x in args.langs.split(",") if x], args.max_files)
    warmup = next(rows[0] for rows in data.values() if rows)
    tmp = tempfile.TemporaryDirectory(prefix="sori-bench-")
    if args.long:
        data = {f"{lang}-long": [as_recording(lang, rows, Path(tmp.name))] for lang, rows in data.items() if rows}

    engine_src = hashlib.sha256(Path(transcriber.__file__).read_bytes()).hexdigest()[:12]
    print(f"# faster-whisper {faster_whisper.__version__}, ctranslate2 {ctranslate2.__version__}, "
          f"transcriber.py sha256 {engine_src}, {platform.machine()} with {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")
    for cfg in configs:
        print(f"# {cfg.name}: {describe(cfg.model)}")
    print(f"\n{'config':<16} {'lang':<8} {'files':>5} {'audio s':>8} {'proc s':>7} {'RTF':>6} {'cpuRTF':>6} "
          f"{'CER':>7} {'WER':>7} {'load s':>6}", flush=True)
    rows, files = run(configs, data, warmup, print_row)
    print(f"# load average at the end {os.getloadavg()[0]:.2f}")

    if args.json:
        out = {"transcriber_sha256": engine_src, "configs": {c.name: asdict(c.model) for c in configs},
               "rows": rows, "files": files}
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
