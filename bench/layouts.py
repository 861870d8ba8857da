#!/usr/bin/env python3
"""CER of sori (and of the plain script) over several layouts of the same clips: a figure that one layout's luck
does not decide.

bench/rtf.py's two inputs lay the shared clips end to end with 1 s of digital silence between them. On inputs this
short (145 s of ko, 122 s of en) a change anywhere in the VAD or the chunking moves every chunk's edges, and the
model writes different words at some of them, better or worse by chance: one layout's CER moves by 0.01-0.02 for
changes that have nothing to do with the words that moved (docs/performance.md, "One layout is a lottery"). Here
the same clips are laid out with gaps of several lengths, of digital silence and of room tone (-50 dBFS noise, as
bench/models.py --long), and each system's CER is given per layout and as the mean over them: a change that helps
shows in the mean, a knife edge in one layout does not decide.

    .venv/bin/python bench/layouts.py [--inputs ko,en] [--beam 5,1] [--plain] [--gaps 0.5,1,2] [--fills zeros,tone]
        [--set MODULE.NAME=VALUE] [--engine-root DIR] [--json OUT]

--plain adds WhisperModel.transcribe at the same beams (slow: about 1.5 times sori's CPU). --engine-root runs
another checkout's engine (a "before"); --set overrides a decoding option, as in bench/rtf.py. CPU seconds are the
process's over all layouts, for each system.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _engine_root() -> Path:
    for i, arg in enumerate(sys.argv):
        if arg == "--engine-root" and i + 1 < len(sys.argv):
            return Path(sys.argv[i + 1])
    return Path(__file__).resolve().parent.parent


sys.path.insert(0, str(_engine_root() / "engine"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sori_engine.protocol import ModelConfig  # noqa: E402

import rtf  # noqa: E402, I001  (the inputs laid out, the CER, the two systems' calls)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", default="ko,en")
    ap.add_argument("--beam", default="5,1")
    ap.add_argument("--plain", action="store_true", help="also the plain script (WhisperModel.transcribe)")
    ap.add_argument("--gaps", default="0.5,1,2", help="gap lengths in seconds")
    ap.add_argument("--fills", default="zeros,tone", help="what fills a gap: zeros (digital silence), tone")
    ap.add_argument("--model", default=str(rtf.ROOT / "models" / "whisper-base"))
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="a decoding option")
    ap.add_argument("--engine-root", default=None, help="the checkout whose engine runs (default: this one)")
    ap.add_argument("--json", default=None, help="write every layout's texts and CERs here")
    args = ap.parse_args()
    options = rtf.decode_options(args.set)
    beams = [int(b) for b in args.beam.split(",")]
    systems = [("sori", b) for b in beams] + ([("plain", b) for b in beams] if args.plain else [])
    layouts = [(float(g), f) for f in args.fills.split(",") for g in args.gaps.split(",")]
    refs = rtf.manifest()

    def config(beam: int) -> ModelConfig:
        return ModelConfig(
            path=args.model, device="cpu", compute_type="int8", beam_size=beam, cpu_threads=0, decode=options
        )

    rtf.models.get_model(config(1))
    print(f"engine {rtf.transcriber.__file__}; layouts {layouts}; {', '.join(args.set) or 'no overrides'}")
    report: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.inputs.split(","):
            cers: dict = {k: [] for k in systems}
            cpu = dict.fromkeys(systems, 0.0)
            for gap_s, fill in layouts:
                language, samples, ref = rtf.build_input(name, refs, gap_s, fill)
                wav = Path(tmp) / f"{name}.wav"
                rtf.write_wav(wav, samples)
                for key in systems:
                    system, beam = key
                    c0 = time.process_time()
                    text = (
                        rtf.run_sori(config(beam), wav, language)
                        if system == "sori"
                        else rtf.run_sequential(config(beam), samples, language)
                    )
                    cpu[key] += time.process_time() - c0
                    cers[key].append(rtf.cer(text, ref, language))
                    report.setdefault(name, {}).setdefault(f"{system}-b{beam}", []).append(
                        {"gap_s": gap_s, "fill": fill, "cer": cers[key][-1], "text": text}
                    )
            head = " ".join(f"{f[0]}{g:g}" for g, f in layouts)
            print(f"{name}: CER per layout ({head}), mean, CPU s")
            for key in systems:
                row = " ".join(f"{c:.3f}" for c in cers[key])
                print(f"  {key[0]:5} b{key[1]}  {row}  mean {np.mean(cers[key]):.4f}  CPU {cpu[key]:.1f}")
            sys.stdout.flush()
    if args.json:
        Path(args.json).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
