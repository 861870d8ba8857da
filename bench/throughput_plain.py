#!/usr/bin/env python3
"""The plain faster-whisper script that bench/throughput.ts compares sori with, over the throughput mix
(engine/sori_eval/inputs.py build_mix: `cd engine && ../.venv/bin/python -m sori_eval.inputs mix OUT_DIR`).

    .venv/bin/python bench/throughput_plain.py run OUT_DIR/mix.json [--batched] [--beam 5] [--device cuda]
        what an engineer writes in ten lines: one WhisperModel (models/whisper-base, int8, CPU; with --device cuda,
        float16 on the GPU, or --compute-type), each file
        transcribed in turn with faster-whisper's defaults (beam 5, no VAD, condition_on_previous_text) or, with
        --batched, through BatchedInferencePipeline (its default VAD, batch size 8); prints one JSON line with the
        audio, wall and CPU seconds (model load not counted) and each file's text
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(mix: Path, batched: bool, beam: int, device: str, compute_type: str) -> None:
    from faster_whisper import BatchedInferencePipeline, WhisperModel

    entries = json.loads(mix.read_text())
    model = WhisperModel(str(ROOT / "models" / "whisper-base"), device=device, compute_type=compute_type)
    pipeline = BatchedInferencePipeline(model) if batched else None
    cpu0, wall0 = time.process_time(), time.perf_counter()
    texts: dict[str, str] = {}
    for e in entries:
        path = str(mix.parent / e["file"])
        if pipeline is not None:
            segments, _ = pipeline.transcribe(path, language=e["language"], beam_size=beam, batch_size=8)
        else:
            segments, _ = model.transcribe(path, language=e["language"], beam_size=beam)
        texts[e["file"]] = " ".join(s.text.strip() for s in segments)  # the generator decodes as it is read
    print(
        json.dumps(
            {
                "system": "plain BatchedInferencePipeline" if batched else "plain WhisperModel.transcribe",
                "audio_s": sum(e["seconds"] for e in entries),
                "wall_s": time.perf_counter() - wall0,
                "cpu_s": time.process_time() - cpu0,
                "texts": texts,
            },
            ensure_ascii=False,
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("mix", type=Path)
    r.add_argument("--batched", action="store_true")
    r.add_argument("--beam", type=int, default=5)
    r.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    r.add_argument("--compute-type", help="CTranslate2 compute type (default: int8 on cpu, float16 on cuda)")
    args = ap.parse_args()
    compute_type = args.compute_type or ("float16" if args.device == "cuda" else "int8")
    run(args.mix, args.batched, args.beam, args.device, compute_type)


if __name__ == "__main__":
    main()
