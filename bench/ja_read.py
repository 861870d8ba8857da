#!/usr/bin/env python3
"""CER of short read-speech clips through the engine's transcription path, with the request the service sends for
a job (bench/engine-params.ts): by default {"model_name": "sommers", "language": "ja"}, i.e. what a Japanese job
gets. Clips: the folder that tools/corpora/build_ja_read.py writes (default ../ja-read, its MANIFEST.tsv: file, text,
split), or with --shared LANG the shared clips of that language (../shared/testdata, bench/models.py's files).

    .venv/bin/python bench/ja_read.py [--dir ../ja-read] [--split tune|held|all] [--shared ja]
        [--config JSON] [--set FIELD=VALUE ...] [--gaps 0.5,1,2 --fills zeros,tone] [--engine-root DIR]
        [--json OUT] [--show]

Each clip is one `transcriber.transcribe` call (audio decoding, Silero VAD, the decode stages), one at a time, in one
process (the model loaded once). With --gaps, each part's clips are instead laid end to end (file order) with a gap
after each of --gaps seconds of --fills (`zeros`: digital silence, `tone`: room tone at -50 dBFS, as
sori_eval.inputs.laid_out), one recording per part and layout, scored against the references joined: what a
recording of several sentences gets (VAD, chunking and the rules between chunks then matter). --engine-root runs another checkout's engine (an older one ignores the request's
`decode` object; it had no presets); --set overrides a DecodeOptions field in the request's `decode` object.

Printed per part (tune, held, all): clips, CER (corpus level: edits over reference characters, in the one normal
form of engine/sori_eval/scoring.py), the mean of the clips' CERs, and CPU seconds; --show prints each clip's
reference, text and edits. --json writes every clip's text and edits, for a before/after diff.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "engine"))
from sori_eval import engine_under_test, scoring, testdata  # this checkout's scoring, whatever engine
from sori_eval.entries import service_params
from sori_eval.wav import write_wav

ENGINE_ROOT = engine_under_test.select(sys.argv)

from sori_engine import protocol, transcriber


def clips(args: argparse.Namespace) -> list[tuple[str, Path, str, str]]:
    """(name, path, reference, split) rows."""
    if args.shared:
        return [(c.file, c.path, c.reference, "shared") for c in testdata.manifest() if c.lang == args.shared
                and c.file.startswith(f"{args.shared}/") and c.reference]
    with open(args.dir / "MANIFEST.tsv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [(r["file"], args.dir / r["file"], r["text"], r["split"]) for r in rows
            if args.split == "all" or r["split"] == args.split]


def read_pcm16(path: Path) -> np.ndarray:
    with wave.open(str(path), "rb") as w:
        if (w.getnchannels(), w.getsampwidth(), w.getframerate()) != (1, 2, 16000):
            raise SystemExit(f"{path}: not 16 kHz mono 16-bit PCM")
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768


def laid_out(rows: list[tuple[str, Path, str, str]], gap_s: float, fill: str, out: Path) -> str:
    """The rows' clips end to end, a gap after each, written to `out`; their references joined."""
    rng = np.random.default_rng(0)
    n = int(gap_s * 16000)
    parts: list[np.ndarray] = []
    for _name, path, _ref, _part in rows:
        gap = np.zeros(n) if fill == "zeros" else rng.standard_normal(n) * 10 ** (-50 / 20)
        parts += [read_pcm16(path), gap.astype(np.float32)]
    write_wav(out, np.concatenate(parts))
    return " ".join(r[2] for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=ROOT.parent / "ja-read")
    ap.add_argument("--split", default="all", choices=["tune", "held", "all"])
    ap.add_argument("--shared", default=None, help="the shared clips of this language instead of --dir")
    ap.add_argument("--config", default='{"model_name":"sommers","language":"ja"}', help="the job config")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="a DecodeOptions override")
    ap.add_argument("--gaps", default=None, help="lay each part's clips end to end with these gaps (seconds)")
    ap.add_argument("--fills", default="zeros", help="zeros and/or tone, with --gaps")
    ap.add_argument("--engine-root", default=None, help="another checkout whose engine runs")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()

    request = service_params([args.config])[0]
    lang = request["language"]
    for assignment in args.set:
        name, value = assignment.split("=", 1)
        request["model"].setdefault("decode", {})[name] = float(value)
    rows = clips(args)
    tmp = Path(tempfile.mkdtemp(prefix="ja-read-"))
    if args.gaps:
        laid = []
        for part in sorted({r[3] for r in rows}):
            mine = sorted(r for r in rows if r[3] == part)
            for gap in args.gaps.split(","):
                for fill in args.fills.split(","):
                    name = f"{part}-{fill[0]}{gap}"
                    ref = laid_out(mine, float(gap), fill, tmp / f"{name}.wav")
                    laid.append((name, tmp / f"{name}.wav", ref, part))
        rows = laid
    results = []
    t0 = time.process_time()
    for name, path, ref, part in rows:
        params = protocol.parse_transcribe({**request, "audio_path": str(path)})
        c0 = time.process_time()
        result = transcriber.transcribe(params, lambda _f: None)
        text = "".join(s.text for s in result.segments)
        r, h = scoring.chars(ref, lang), scoring.chars(text, lang)
        edits = scoring.edit_distance(h, r)
        results.append({"file": name, "split": part, "reference": ref, "text": text, "edits": edits,
                        "ref_chars": len(r), "cpu_s": round(time.process_time() - c0, 2)})
        if args.show:
            print(f"{name} [{part}] {edits}/{len(r)}\n  ref: {ref}\n  hyp: {text}")
    cpu = time.process_time() - t0

    print(f"engine: {ENGINE_ROOT}  request: {json.dumps(request['model'].get('decode'))} beam "
          f"{request['model']['beam_size']}  sets: {args.set or '-'}")
    print(f"{'part':6} {'clips':>5} {'CER':>7} {'mean':>7}")
    parts = sorted({r["split"] for r in results}) + (["all"] if len({r["split"] for r in results}) > 1 else [])
    summary = {}
    for part in parts:
        sel = [r for r in results if part == "all" or r["split"] == part]
        corpus = sum(r["edits"] for r in sel) / max(1, sum(r["ref_chars"] for r in sel))
        mean = sum(r["edits"] / max(1, r["ref_chars"]) for r in sel) / max(1, len(sel))
        summary[part] = {"clips": len(sel), "cer": round(corpus, 4), "mean_cer": round(mean, 4)}
        print(f"{part:6} {len(sel):5d} {100 * corpus:6.1f}% {100 * mean:6.1f}%")
    print(f"CPU {cpu:.0f} s (process, model load excluded)")
    if args.json:
        args.json.write_text(json.dumps({"engine_root": str(ENGINE_ROOT), "sets": args.set, "summary": summary,
                                         "clips": results}, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
