#!/usr/bin/env python3
"""Every decoded word of the shared test audio as JSON, for a before/after comparison of an engine change.

Talks to the engine through its protocol (`python -m sori_engine`, cwd engine/), as the worker does, so the dump
depends on the request shape only, not on the engine's inner functions. Two parts, each file's answer written to
OUT/<part>/<entry>/<file>.json:

- batch: every transcribed file of ../shared/testdata (bar ogg and webm, which the service refuses) through
  `transcribe` with the registry entries `sommers` (beam 5) and `whisper` (beam 1), words on, checkpoints on (the
  segments before the hallucination stage and the speech map), language fixed for ko/ja/en and `multi` with
  candidates ko, ja, en elsewhere; plus the narrow-band files without the VAD (domain CALL) and multi/ in 60 s
  windows (SORI_ENGINE_WINDOW_S, speech carried across windows);
- stream: every ko and ja clip as an 8 kHz copy through a streaming session (entry sommers, the VAD off as for
  domain CALL), 100 ms per step, an interim asked every fifth step: every interim and final;
- diarize: every file of multi/, untranscribed/ and formats/ through `diarize` (the count estimated) and, each file
  whole as one voice, `voiceprint` with `count_voices` and `phone_prints` (the embeddings rounded to 6 places).

    flock ~/.sori-bench.lock .venv/bin/python bench/decode_dump.py OUT [--part batch|stream|diarize]
        [--only SUBSTRING]
        [--in-flight N]

Then `diff -r BEFORE AFTER`: any difference is a change of output. `--in-flight N` sends the batch requests N at a
time to engines running N at once (SORI_ENGINE_JOBS=N), their clips decoded in shared batches: its diff against a
dump without it is what sharing batches changes (docs/engine.md, "Many jobs in one engine").
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any

import av
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "engine"))  # sori_eval (standard library only)
from sori_eval.engine_process import Engine  # noqa: E402
from sori_eval.entries import model_entry  # noqa: E402
from sori_eval.testdata import TESTDATA  # noqa: E402

ENTRIES = {"sommers": model_entry(5), "whisper": model_entry(1)}
AUDIO = (".wav", ".flac", ".mp3", ".m4a", ".mp4", ".amr", ".awb")
NARROWBAND = (
    "formats/picovoice_leopard_test_ko.ulaw8k.wav",
    "formats/picovoice_leopard_test_ko.amr",
    "formats/deeply_ko_dialogue_constructed.amr",
    "untranscribed/vito_java_sample_8k.wav",
)


def language_of(rel: str) -> str | None:
    top = rel.split("/")[0]
    return top if top in ("ko", "ja", "en") else None


def batch_params(rel: str, entry: str, vad: bool = True) -> dict[str, Any]:
    lang = language_of(rel)
    return {
        "audio_path": str(TESTDATA / rel),
        "model": {**ENTRIES[entry], "vad": vad},
        "language_mode": "fixed" if lang else "multi",
        "language": lang,
        "language_candidates": None if lang else ["ko", "ja", "en"],
        "word_timestamps": True,
        "initial_prompt": None,
        "hotwords": None,
        "max_duration_s": 14400,
        "checkpoints": True,
    }


def write(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
        encoding="utf-8",
    )


def files(only: str | None) -> list[str]:
    out = sorted(
        str(p.relative_to(TESTDATA))
        for p in TESTDATA.rglob("*")
        if p.is_file() and p.suffix in AUDIO
    )
    return [f for f in out if only is None or only in f]


def run_batch(out: Path, only: str | None, in_flight: int = 1) -> None:
    tasks = [
        (entry, rel, batch_params(rel, entry))
        for rel in files(only)
        for entry in ENTRIES
    ]
    tasks += [
        ("sommers-novad", rel, batch_params(rel, "sommers", vad=False))
        for rel in NARROWBAND
        if only is None or only in rel
    ]
    _dump(out, Engine({"SORI_ENGINE_JOBS": str(in_flight)}), tasks, in_flight)
    windowed = [
        ("whisper-window60", rel, batch_params(rel, "whisper"))
        for rel in files(only)
        if rel.startswith("multi/")
    ]
    _dump(
        out,
        Engine({"SORI_ENGINE_WINDOW_S": "60", "SORI_ENGINE_JOBS": str(in_flight)}),
        windowed,
        in_flight,
    )


def _dump(
    out: Path,
    engine: Engine,
    tasks: list[tuple[str, str, dict[str, Any]]],
    in_flight: int,
) -> None:
    """Each task's answer written, `in_flight` requests sent at a time."""
    try:
        for i in range(0, len(tasks), in_flight):
            group = tasks[i : i + in_flight]
            for (entry, rel, _p), (result, cps) in zip(
                group, engine.call_many("transcribe", [p for *_k, p in group])
            ):
                write(
                    out / "batch" / entry / f"{rel}.json",
                    {"result": result, "checkpoints": cps},
                )
                print(entry, rel, flush=True)
    finally:
        engine.close()


def run_diarize(out: Path, only: str | None) -> None:
    engine = Engine()
    try:
        for rel in files(only):
            if not rel.startswith(("multi/", "untranscribed/", "formats/")):
                continue
            path = str(TESTDATA / rel)
            result, _ = engine.call("diarize", {"audio_path": path})
            voice = {"parts": [{"audio_path": path}]}
            vp, _ = engine.call(
                "voiceprint",
                {"voices": [voice], "count_voices": True, "phone_prints": True},
            )
            write(out / "diarize" / f"{rel}.json", {"diarize": result, "voiceprint": _rounded(vp)})
            print("diarize", rel, flush=True)
    finally:
        engine.close()


def _rounded(obj: Any) -> Any:
    if isinstance(obj, float):
        return round(obj, 6)
    if isinstance(obj, list):
        return [_rounded(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    return obj


def pcm8k(path: Path) -> bytes:
    resampler = av.AudioResampler(format="s16", layout="mono", rate=8000)
    chunks: list[np.ndarray] = []
    with av.open(str(path)) as container:
        for frame in container.decode(audio=0):
            chunks.extend(f.to_ndarray()[0] for f in resampler.resample(frame))
    chunks.extend(f.to_ndarray()[0] for f in resampler.resample(None))
    return np.concatenate(chunks).astype("<i2").tobytes()


def run_stream(out: Path, only: str | None) -> None:
    engine = Engine()
    step_bytes = 1600  # 100 ms at 8 kHz
    try:
        for rel in files(only):
            lang = language_of(rel)
            if lang not in ("ko", "ja"):
                continue
            decode = {
                "model": {**ENTRIES["sommers"], "vad": False},
                "language_mode": "fixed",
                "language": lang,
                "word_timestamps": False,
            }
            engine.call(
                "stream_open",
                {
                    "session": "s",
                    "sample_rate": 8000,
                    "epd_time": 0.5,
                    "decode": decode,
                },
            )
            pcm = pcm8k(TESTDATA / rel)
            events: list[Any] = []
            n = 0
            for i in range(0, len(pcm), step_bytes):
                last = i + step_bytes >= len(pcm)
                item = {
                    "session": "s",
                    "pcm": base64.b64encode(pcm[i : i + step_bytes]).decode(),
                    "interim": n % 5 == 4,
                    "finish": last,
                }
                result, _ = engine.call("stream_step", {"steps": [item]})
                for r in result["results"]:
                    r.pop("received_s", None)
                    events.append({"step": n, **r})
                n += 1
            write(out / "stream" / "sommers" / f"{rel}.json", events)
            print("stream", rel, flush=True)
    finally:
        engine.close()


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", type=Path)
    ap.add_argument("--part", choices=("batch", "stream", "diarize", "all"), default="all")
    ap.add_argument("--only", help="only files whose path contains this")
    ap.add_argument(
        "--in-flight",
        type=int,
        default=1,
        help="batch requests sent at once to each engine",
    )
    args = ap.parse_args()
    if args.part in ("batch", "all"):
        run_batch(args.out, args.only, args.in_flight)
    if args.part in ("stream", "all"):
        run_stream(args.out, args.only)
    if args.part in ("diarize", "all"):
        run_diarize(args.out, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
