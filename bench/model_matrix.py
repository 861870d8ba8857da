#!/usr/bin/env python3
"""Measure Whisper (CTranslate2 / faster-whisper) decoding configurations on the shared test audio.

For every configuration, every transcribed file of the chosen languages (ko/, ja/, en/ in
../shared/testdata, listed in MANIFEST.tsv) is decoded with the language fixed, and one table row per
(configuration, language) is printed:

  exact CER  Levenshtein over characters / reference characters, summed over the files (corpus level),
             after NFKC + lower-casing + collapsing runs of whitespace; spaces and punctuation count.
  norm CER   the same after also removing every punctuation/symbol character and all whitespace.
  WER        (en only) word error rate on lower-cased words, punctuation removed.
  RTF        processing seconds (transcribe() + consuming the segments) / audio seconds.
  load s     seconds to construct WhisperModel (CTranslate2 load + conversion to the compute type).

Nothing is downloaded: models are local CTranslate2 directories (model.bin, config.json, tokenizer.json,
vocabulary.*). Audio is read in place and never copied.

A configuration is written MODEL/COMPUTE/bBEAM[/vad][/nocond], e.g. `base/int8/b5/vad`:
  MODEL    a key given with --model KEY=PATH, or a sub-directory of --models-dir, or a path
  COMPUTE  a CTranslate2 compute type (int8, int8_float32, float32, float16, ...)
  bN       beam size N (b1 = greedy)
  vad      vad_filter=True (Silero VAD v6 shipped with faster-whisper); default off
  nocond   condition_on_previous_text=False; default True (faster-whisper's default)

Examples (run from the repository root):
  .venv/bin/python bench/model_matrix.py --model base=/models/whisper-base
  python bench/model_matrix.py --models-dir /tmp/models/asm --langs ko,ja \
      --configs gp-base/int8/b1,gp-base/int8/b5,sfy-base/int8/b5
  python bench/model_matrix.py --model base=/models/whisper-base --langs en --max-files 2 --json /tmp/out.json
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TESTDATA = REPO_ROOT.parent / "shared" / "testdata"

# The matrix measured for docs/models.md (model key "base" = the assembled Whisper base directory).
DEFAULT_CONFIGS = [
    "base/int8/b1",
    "base/int8/b5",
    "base/float32/b1",
    "base/float32/b5",
    "base/int8/b1/vad",
    "base/int8/b5/vad",
    "base/int8/b1/nocond",
    "base/int8/b5/nocond",
]

NO_SPACE_LANGS = {"ja", "zh", "th", "lo", "my", "km"}


# ----------------------------------------------------------------------------------------------- scoring
def levenshtein(a, b) -> int:
    """Edit distance between two sequences (characters or words)."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def norm_exact(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"\s+", " ", text).strip()


def _is_punct_or_symbol(ch: str) -> bool:
    return unicodedata.category(ch)[0] in ("P", "S")


def norm_loose(text: str) -> str:
    text = norm_exact(text)
    return "".join(ch for ch in text if not ch.isspace() and not _is_punct_or_symbol(ch))


def words(text: str) -> list[str]:
    text = norm_exact(text)
    text = "".join(" " if (_is_punct_or_symbol(ch) and ch != "'") else ch for ch in text)
    return [w.strip("'") for w in text.split() if w.strip("'")]


@dataclass
class Tally:
    files: int = 0
    audio_s: float = 0.0
    proc_s: float = 0.0
    exact_err: int = 0
    exact_len: int = 0
    loose_err: int = 0
    loose_len: int = 0
    word_err: int = 0
    word_len: int = 0

    def add(self, ref: str, hyp: str, audio_s: float, proc_s: float, lang: str) -> dict:
        re_, he = norm_exact(ref), norm_exact(hyp)
        rl, hl = norm_loose(ref), norm_loose(hyp)
        e1, e2 = levenshtein(re_, he), levenshtein(rl, hl)
        self.files += 1
        self.audio_s += audio_s
        self.proc_s += proc_s
        self.exact_err += e1
        self.exact_len += len(re_)
        self.loose_err += e2
        self.loose_len += len(rl)
        row = {"exact_cer": e1 / max(1, len(re_)), "norm_cer": e2 / max(1, len(rl))}
        if lang not in NO_SPACE_LANGS:
            rw, hw = words(ref), words(hyp)
            e3 = levenshtein(rw, hw)
            self.word_err += e3
            self.word_len += len(rw)
            row["wer"] = e3 / max(1, len(rw))
        return row


# ------------------------------------------------------------------------------------------------ config
@dataclass
class Config:
    spec: str
    model: str
    compute_type: str = "int8"
    beam_size: int = 1
    vad: bool = False
    condition_on_previous_text: bool = True
    extra: dict = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: str) -> "Config":
        parts = [p for p in spec.strip().split("/") if p]
        if len(parts) < 2:
            raise ValueError(f"config {spec!r}: expected MODEL/COMPUTE[/bN][/vad][/nocond]")
        cfg = cls(spec=spec.strip(), model=parts[0], compute_type=parts[1])
        for tok in parts[2:]:
            if re.fullmatch(r"b\d+", tok):
                cfg.beam_size = int(tok[1:])
            elif tok == "vad":
                cfg.vad = True
            elif tok == "novad":
                cfg.vad = False
            elif tok == "nocond":
                cfg.condition_on_previous_text = False
            elif tok == "cond":
                cfg.condition_on_previous_text = True
            else:
                raise ValueError(f"config {spec!r}: unknown token {tok!r}")
        return cfg


def resolve_model(key: str, mapping: dict[str, str], models_dir: Path | None) -> Path:
    if key in mapping:
        p = Path(mapping[key])
    elif models_dir is not None and (models_dir / key).is_dir():
        p = models_dir / key
    else:
        p = Path(key)
    if not (p / "model.bin").is_file():
        raise SystemExit(f"model {key!r}: {p} is not a CTranslate2 model directory (no model.bin)")
    return p


# ------------------------------------------------------------------------------------------------ data
def load_manifest(testdata: Path, langs: list[str], max_files: int | None) -> dict[str, list[tuple[Path, str]]]:
    out: dict[str, list[tuple[Path, str]]] = {lang: [] for lang in langs}
    with open(testdata / "MANIFEST.tsv", encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            rel = row["local_file"]
            folder = rel.split("/", 1)[0]
            if folder in out and row.get("transcript"):
                out[folder].append((testdata / rel, row["transcript"]))
    for lang in out:
        out[lang].sort()
        if max_files:
            out[lang] = out[lang][:max_files]
    return out


def join_segments(segments, lang: str) -> str:
    sep = "" if lang in NO_SPACE_LANGS else " "
    return sep.join(s.text.strip() for s in segments).strip()


# ------------------------------------------------------------------------------------------------ main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models-dir", type=Path, help="directory whose sub-directories are CTranslate2 models")
    ap.add_argument("--model", action="append", default=[], metavar="KEY=PATH",
                    help="name a model directory (repeatable); also accepts a bare PATH (key = its basename)")
    ap.add_argument("--configs", default=",".join(DEFAULT_CONFIGS),
                    help="comma-separated MODEL/COMPUTE/bN[/vad][/nocond] (default: %(default)s)")
    ap.add_argument("--langs", default="ko,ja,en", help="comma-separated test folders/languages")
    ap.add_argument("--testdata", type=Path, default=DEFAULT_TESTDATA)
    ap.add_argument("--max-files", type=int, default=None, help="at most N files per language")
    ap.add_argument("--max-files-en", type=int, default=None, help="at most N English files (overrides)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--cpu-threads", type=int, default=os.cpu_count() or 0)
    ap.add_argument("--no-warmup", action="store_true", help="skip the untimed 2 s warm-up decode")
    ap.add_argument("--json", type=Path, help="write per-file hypotheses and scores here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each hypothesis")
    args = ap.parse_args(argv)

    try:
        import numpy as np
        from faster_whisper import WhisperModel
        from faster_whisper.audio import decode_audio
    except ImportError as e:  # pragma: no cover
        raise SystemExit(f"faster-whisper is required: {e}")

    mapping: dict[str, str] = {}
    for m in args.model:
        if "=" in m:
            k, v = m.split("=", 1)
        else:
            k, v = Path(m).name, m
        mapping[k] = v
    configs = [Config.parse(s) for s in args.configs.split(",") if s.strip()]
    if len(mapping) == 1:  # one model given: "base" in the default configs means that one
        only = next(iter(mapping.values()))
        for c in configs:
            if c.model not in mapping and not (args.models_dir and (args.models_dir / c.model).is_dir()):
                mapping.setdefault(c.model, only)
    langs = [x.strip() for x in args.langs.split(",") if x.strip()]
    data = load_manifest(args.testdata, langs, args.max_files)
    if "en" in data and args.max_files_en is not None:
        data["en"] = data["en"][: args.max_files_en]

    # Decode every file once (not timed as model work: the engine decodes once per job too, but this keeps
    # the comparison about the model). Durations come from the decoded samples.
    audio: dict[Path, "np.ndarray"] = {}
    for lang in langs:
        for path, _ in data[lang]:
            audio[path] = decode_audio(str(path), sampling_rate=16000)

    import ctranslate2
    import faster_whisper

    print(f"# faster-whisper {faster_whisper.__version__}, ctranslate2 {ctranslate2.__version__}, "
          f"device={args.device}, cpu_threads={args.cpu_threads}, os.cpu_count()={os.cpu_count()}")
    for lang in langs:
        secs = sum(len(audio[p]) for p, _ in data[lang]) / 16000
        print(f"# {lang}: {len(data[lang])} files, {secs:.1f} s audio")
    for k, v in sorted(mapping.items()):
        print(f"# model {k} = {v}")
    sys.stdout.flush()

    rows, details = [], []
    for cfg in configs:
        path = resolve_model(cfg.model, mapping, args.models_dir)
        t0 = time.perf_counter()
        model = WhisperModel(str(path), device=args.device, compute_type=cfg.compute_type,
                             cpu_threads=args.cpu_threads, num_workers=1)
        load_s = time.perf_counter() - t0
        if not args.no_warmup:
            list(model.transcribe(np.zeros(32000, dtype=np.float32), language="en", beam_size=1)[0])
        for lang in langs:
            tally = Tally()
            for path_a, ref in data[lang]:
                samples = audio[path_a]
                t1 = time.perf_counter()
                segments, info = model.transcribe(
                    samples, language=lang, task="transcribe", beam_size=cfg.beam_size,
                    vad_filter=cfg.vad, condition_on_previous_text=cfg.condition_on_previous_text)
                hyp = join_segments(list(segments), lang)
                proc_s = time.perf_counter() - t1
                audio_s = len(samples) / 16000
                scores = tally.add(ref, hyp, audio_s, proc_s, lang)
                details.append({"config": cfg.spec, "lang": lang, "file": str(path_a.relative_to(args.testdata)),
                                "ref": ref, "hyp": hyp, "audio_s": round(audio_s, 3),
                                "proc_s": round(proc_s, 3), **{k: round(v, 4) for k, v in scores.items()}})
                if args.verbose:
                    print(f"  [{cfg.spec} {lang}] {path_a.name} exact={scores['exact_cer']:.3f} "
                          f"norm={scores['norm_cer']:.3f}\n    REF {ref}\n    HYP {hyp}", flush=True)
            row = {
                "config": cfg.spec, "lang": lang, "files": tally.files, "audio_s": tally.audio_s,
                "exact_cer": tally.exact_err / max(1, tally.exact_len),
                "norm_cer": tally.loose_err / max(1, tally.loose_len),
                "wer": (tally.word_err / tally.word_len) if tally.word_len else None,
                "rtf": tally.proc_s / max(1e-9, tally.audio_s), "load_s": load_s,
            }
            rows.append(row)
            wer = f"{row['wer'] * 100:5.1f}%" if row["wer"] is not None else "    -"
            print(f"| {cfg.spec:<22} | {lang} | {tally.files:>3} | {row['exact_cer'] * 100:6.2f}% | "
                  f"{row['norm_cer'] * 100:6.2f}% | {wer} | {row['rtf']:.3f} | {load_s:5.2f} |", flush=True)
        del model

    print()
    print("| config | lang | files | exact CER | norm CER | WER | RTF | load s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        wer = f"{r['wer'] * 100:.1f}%" if r["wer"] is not None else "–"
        print(f"| `{r['config']}` | {r['lang']} | {r['files']} | {r['exact_cer'] * 100:.2f}% | "
              f"{r['norm_cer'] * 100:.2f}% | {wer} | {r['rtf']:.3f} | {r['load_s']:.2f} |")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "files": details}, ensure_ascii=False, indent=1),
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
