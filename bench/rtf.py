#!/usr/bin/env python3
"""sori's transcription path against the plain faster-whisper script, on the same model and the same audio: CPU
and wall time, and CER over one or several layouts of the same clips.

Inputs (engine/sori_eval/inputs.py `laid_out`, built in memory from ../shared/testdata):
    ko   the 26 Korean clips end to end (about 2.5 min)
    en   the two 60 s earnings-call clips end to end (about 2 min)
    ja   the 15 Japanese clips end to end (not in the default --inputs)
each laid out with a gap after every clip: --gaps (seconds) times --fills (`zeros`: digital silence, `tone`: room
tone at -50 dBFS). The default layout is one, `z1` (1 s of silence); `--gaps 0.5,1,2 --fills zeros,tone` gives six.
On inputs this short a change anywhere in the VAD or the chunking moves chunk edges and the model writes different
words at some of them, better or worse by chance: one layout's CER moves by 0.01-0.02, so judge an accuracy change
by the mean over the six layouts.

Systems, with one WhisperModel instance (int8 on CPU unless --compute-type says otherwise):
    sori   sori_engine.transcriber.transcribe, the worker's call (streaming decode, windowed Silero VAD, chunks of
           speech decoded in batches, continued where a chunk stopped early), at each --sori-beam
    plain  WhisperModel.transcribe(audio, language=..., beam_size=...) with faster-whisper's defaults (no VAD,
           condition_on_previous_text, temperature fallback): what a plain script does, at each --beam

Printed per input, layout and system: audio s, wall s, CPU s (process, all threads: a busy machine distorts it less
than wall time), their ratios to the audio, and the normalized CER (the one normal form, engine/sori_eval/scoring.py);
then per system the mean CER over the layouts and the summed CPU, and every sori / plain CPU and wall ratio. Each
time is the best of --repeat interleaved runs (other work on the machine only ever makes a run slower); model
loading and one warm-up call are not timed.

    .venv/bin/python bench/rtf.py [--inputs ko,en] [--beam 5,1] [--sori-beam 5,1] [--repeat 2]
        [--gaps 1 --fills zeros] [--no-plain] [--cpu-threads N] [--set FIELD=VALUE] [--engine-root DIR]
        [--dump DIR] [--json OUT]

--engine-root runs another checkout's engine (a "before"); --set overrides a decoding option (e.g.
encoder_min_s=30); --dump writes each text and the reference; --json every layout's texts and figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "engine"))  # sori_eval; the engine under test is chosen next
from sori_eval import engine_under_test  # noqa: E402

engine_under_test.select(sys.argv)

from sori_engine import models, transcriber  # noqa: E402
from sori_engine.protocol import ModelConfig, TranscribeParams  # noqa: E402
from sori_eval import inputs, scoring  # noqa: E402
from sori_eval.wav import write_wav  # noqa: E402

SR = inputs.SR


def run_sori(cfg: ModelConfig, wav: Path, language: str) -> str:
    params = TranscribeParams(audio_path=str(wav), model=cfg, language_mode="fixed", language=language)
    return " ".join(s.text for s in transcriber.transcribe(params, lambda _f: None).segments)


def run_plain(cfg: ModelConfig, samples: np.ndarray, language: str) -> str:
    segments, _ = models.get_model(cfg).whisper.transcribe(samples, language=language, beam_size=cfg.beam_size)
    return " ".join(s.text.strip() for s in segments)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=str(ROOT / "models" / "whisper-base"))
    ap.add_argument("--compute-type", default="int8")
    ap.add_argument("--inputs", default="ko,en")
    ap.add_argument("--beam", default="5", help="the plain script's beam sizes (faster-whisper's default: 5)")
    ap.add_argument("--sori-beam", default=None, help="sori's beam sizes (default: as --beam; sommers 5, whisper 1)")
    ap.add_argument("--no-plain", action="store_true", help="sori only")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--gaps", default="1", help="gap lengths after each clip, seconds")
    ap.add_argument("--fills", default="zeros", help="what fills a gap: zeros (digital silence), tone")
    ap.add_argument("--cpu-threads", type=int, default=0, help="CTranslate2 threads (0: its default, as the registry)")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="override a decoding option, e.g. encoder_min_s=30 (repeatable)")  # fmt: skip
    ap.add_argument("--engine-root", default=None, help="the checkout whose engine runs (default: this one)")
    ap.add_argument("--dump", default=None, help="write each system's text and the reference to this folder")
    ap.add_argument("--json", default=None, help="write every layout's texts and figures here")
    args = ap.parse_args()
    options = engine_under_test.decode_options(args.set)
    plain_beams = [] if args.no_plain else [int(b) for b in args.beam.split(",")]
    sori_beams = [int(b) for b in (args.sori_beam or args.beam).split(",")]
    systems = [("plain", b) for b in plain_beams] + [("sori", b) for b in sori_beams]
    layouts = [(float(g), f) for f in args.fills.split(",") for g in args.gaps.split(",")]

    def config(beam: int) -> ModelConfig:
        return ModelConfig(path=args.model, device="cpu", compute_type=args.compute_type, beam_size=beam,
                           cpu_threads=args.cpu_threads, decode=options)  # fmt: skip

    models.get_model(config(1))  # load once (the beam is not part of the cache key), untimed
    print(f"engine {transcriber.__file__}; model {args.model} {args.compute_type}; cpu_threads {args.cpu_threads}; "
          f"cpus {os.cpu_count()}; {', '.join(args.set) or 'no overrides'}; load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"{'input':6} {'layout':6} {'system':9} {'audio s':>8} {'wall s':>7} {'RTF':>6} {'CPU s':>7} {'CPU RTF':>7} "
          f"{'CER':>6}")  # fmt: skip
    report: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.inputs.split(","):
            cers: dict = {k: [] for k in systems}
            cpu_sum = dict.fromkeys(systems, 0.0)
            wall_sum = dict.fromkeys(systems, 0.0)
            for li, (gap_s, fill) in enumerate(layouts):
                layout = f"{fill[0]}{gap_s:g}"
                language, samples, ref = inputs.laid_out(name, gap_s, fill)
                wav = write_wav(Path(tmp) / f"{name}.wav", samples)
                audio_s = samples.shape[0] / SR
                if li == 0:
                    run_sori(config(sori_beams[0]), wav, language)  # warm-up (VAD model load, caches)
                wall = dict.fromkeys(systems, float("inf"))
                cpu = dict.fromkeys(systems, float("inf"))
                text = dict.fromkeys(systems, "")
                for _ in range(args.repeat):
                    for key in systems:
                        system, beam = key
                        t0, c0 = time.perf_counter(), time.process_time()
                        text[key] = (run_sori(config(beam), wav, language) if system == "sori"
                                     else run_plain(config(beam), samples, language))  # fmt: skip
                        wall[key] = min(wall[key], time.perf_counter() - t0)
                        cpu[key] = min(cpu[key], time.process_time() - c0)
                for key in systems:
                    c = scoring.cer(text[key], ref, language)
                    cers[key].append(c)
                    cpu_sum[key] += cpu[key]
                    wall_sum[key] += wall[key]
                    print(f"{name:6} {layout:6} {key[0]:5} b{key[1]}  {audio_s:8.1f} {wall[key]:7.1f} "
                          f"{wall[key] / audio_s:6.3f} {cpu[key]:7.1f} {cpu[key] / audio_s:7.3f} {c:6.3f}")  # fmt: skip
                    report.setdefault(name, {}).setdefault(f"{key[0]}-b{key[1]}", []).append(
                        {
                            "layout": layout,
                            "audio_s": audio_s,
                            "wall_s": wall[key],
                            "cpu_s": cpu[key],
                            "cer": c,
                            "text": text[key],
                        }  # fmt: skip
                    )
                if args.dump:
                    out = Path(args.dump)
                    out.mkdir(parents=True, exist_ok=True)
                    (out / f"{name}-{layout}.ref.txt").write_text(ref + "\n", encoding="utf-8")
                    for system, beam in systems:
                        (out / f"{name}-{layout}.{system}-b{beam}.txt").write_text(text[(system, beam)] + "\n", "utf-8")
                sys.stdout.flush()
            if len(layouts) > 1:
                for key in systems:
                    print(f"{name:6} mean   {key[0]:5} b{key[1]}  CER {np.mean(cers[key]):.4f} over {len(layouts)} "
                          f"layouts, CPU {cpu_sum[key]:.1f} s")  # fmt: skip
            for s_key in [k for k in systems if k[0] == "sori"]:
                for p_key in [k for k in systems if k[0] == "plain"]:
                    print(f"{name:6} ratio sori b{s_key[1]} / plain b{p_key[1]}: CPU {cpu_sum[s_key] / cpu_sum[p_key]:.2f}, "
                          f"wall {wall_sum[s_key] / wall_sum[p_key]:.2f}")  # fmt: skip
            print(f"{name:6} load average after: {os.getloadavg()[0]:.1f}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
