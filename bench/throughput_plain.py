#!/usr/bin/env python3
"""The throughput mix (bench/throughput.ts) built from the shared audio, and the plain faster-whisper script it is
compared with.

    .venv/bin/python bench/throughput_plain.py build OUT_DIR [--scale small|full]
        writes the mix's wav files (16 kHz mono) and OUT_DIR/mix.json: [{file, language, seconds, diarize,
        reference}] (reference: the shared transcripts of what the file holds; null for the 1-hour recording)
    .venv/bin/python bench/throughput_plain.py run OUT_DIR/mix.json [--batched] [--beam 5] [--device cuda]
        what an engineer writes in ten lines: one WhisperModel (models/whisper-base, int8, CPU; with --device cuda,
        float16 on the GPU, or --compute-type), each file
        transcribed in turn with faster-whisper's defaults (beam 5, no VAD, condition_on_previous_text) or, with
        --batched, through BatchedInferencePipeline (its default VAD, batch size 8); prints one JSON line with the
        audio, wall and CPU seconds (model load not counted) and each file's text

The mix (full): Korean calls of 1 to 5 minutes (the 69 s two-speaker dialogue and Korean clips end to end, with
diarization), the Japanese and English files of the shared set, and one 1-hour recording (the shared Korean
recordings repeated); `--scale small` keeps the calls and the short files and leaves the hour out. A call holds
whole clips only (the dialogue, 69 s, even in the 1-minute call; then clips up to its length, not over), so that
its reference is the clips' transcripts end to end.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
import time
import wave
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine"))

from sori_engine import audio as audio_io  # noqa: E402  (after the path insert)

TESTDATA = Path(os.environ.get("SORI_TESTDATA", ROOT.parent / "shared" / "testdata"))
SR = audio_io.SAMPLE_RATE


def write(path: Path, x: np.ndarray) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes((np.clip(x, -1, 1 - 1 / 32768) * 32767).astype("<i2").tobytes())


def references() -> dict[str, str]:
    """The shared transcripts by file (MANIFEST.tsv), speaker tags ("[spkA] ") left out."""
    with open(TESTDATA / "MANIFEST.tsv", encoding="utf-8", newline="") as f:
        rows = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return {r["local_file"]: re.sub(r"\[spk\w+\]\s*", "", r["transcript"]).strip() for r in rows}


def build(out: Path, scale: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    refs = references()
    dialogue_file = "multi/deeply_ko_dialogue_constructed.wav"
    dialogue = audio_io.decode(str(TESTDATA / dialogue_file))
    ko_files = sorted(f"ko/{p.name}" for p in (TESTDATA / "ko").glob("*.wav"))
    ko = [audio_io.decode(str(TESTDATA / f)) for f in ko_files]
    pause = np.zeros(SR // 2, dtype=np.float32)
    entries = []
    # Korean calls of 1, 2, 3 and 5 minutes: the dialogue, then Korean clips in turn, with half-second pauses.
    for minutes in (1, 2, 3, 5):
        parts, total, i, said = (
            [dialogue, pause],
            dialogue.size + pause.size,
            0,
            [refs[dialogue_file]],
        )
        while total + ko[i % len(ko)].size <= minutes * 60 * SR:
            parts += [ko[i % len(ko)], pause]
            total += ko[i % len(ko)].size + pause.size
            said.append(refs[ko_files[i % len(ko)]])
            i += 1
        x = np.concatenate(parts)
        name = f"ko-call-{minutes}min.wav"
        write(out / name, x)
        entries.append(
            {
                "file": name,
                "language": "ko",
                "seconds": x.size / SR,
                "diarize": True,
                "reference": " ".join(said),
            }
        )
    for lang in ("ja", "en"):
        for p in sorted((TESTDATA / lang).iterdir()):
            if p.suffix not in (".wav", ".flac"):
                continue
            x = audio_io.decode(str(p))
            name = f"{lang}-{p.stem}.wav"
            write(out / name, x)
            entries.append(
                {
                    "file": name,
                    "language": lang,
                    "seconds": x.size / SR,
                    "diarize": False,
                    "reference": refs.get(f"{lang}/{p.name}"),
                }
            )
    if scale == "full":
        recordings = [audio_io.decode(str(p)) for p in sorted((TESTDATA / "untranscribed").glob("vito_tritony_*.wav"))]
        parts, total, i = [], 0, 0
        while total < 3600 * SR:
            r = recordings[i % len(recordings)]
            parts += [r, pause]
            total += r.size + pause.size
            i += 1
        x = np.concatenate(parts)[: 3600 * SR]
        write(out / "ko-recording-1h.wav", x)
        entries.append(
            {
                "file": "ko-recording-1h.wav",
                "language": "ko",
                "seconds": 3600.0,
                "diarize": False,
                "reference": None,
            }
        )
    (out / "mix.json").write_text(json.dumps(entries, indent=1))
    print(f"{len(entries)} files, {sum(e['seconds'] for e in entries) / 60:.1f} min of audio in {out}")


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
    b = sub.add_parser("build")
    b.add_argument("out", type=Path)
    b.add_argument("--scale", choices=["small", "full"], default="full")
    r = sub.add_parser("run")
    r.add_argument("mix", type=Path)
    r.add_argument("--batched", action="store_true")
    r.add_argument("--beam", type=int, default=5)
    r.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    r.add_argument("--compute-type", help="CTranslate2 compute type (default: int8 on cpu, float16 on cuda)")
    args = ap.parse_args()
    if args.cmd == "build":
        build(args.out, args.scale)
    else:
        compute_type = args.compute_type or ("float16" if args.device == "cuda" else "int8")
        run(args.mix, args.batched, args.beam, args.device, compute_type)


if __name__ == "__main__":
    main()
