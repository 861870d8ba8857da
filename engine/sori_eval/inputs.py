"""The benchmarks' inputs, built from the shared test audio (never stored in the repository).

    laid_out(name)      ko / ja: the language's clips end to end; en: the two 60 s earnings-call clips; a gap of
                        `gap_s` seconds of digital silence ("zeros") or room tone ("tone", -50 dBFS) after each
                        (bench/rtf.py; its default layout is `z1`, 1 s of silence)
    build_mix(out)      the throughput mix (bench/throughput.ts): Korean calls of 1-5 minutes, the ja and en files,
                        one 1-hour recording (`scale` "full"), with mix.json
    long_recording()    hours of speech written block by block (bench/memory.py, bench/resume.ts)

From a shell (cwd engine/): `python -m sori_eval.inputs mix OUT_DIR [--scale small]`,
`python -m sori_eval.inputs long OUT.wav --minutes 60 [--block-s 600]`, `python -m sori_eval.inputs laid-out ko OUT.wav`.
Imports sori_engine (its audio decoding): select the engine under test first (engine_under_test.select).
"""

from __future__ import annotations

import argparse
import json
import wave
from pathlib import Path

import numpy as np

from sori_engine import audio as audio_io

from .testdata import TESTDATA, manifest
from .wav import write_wav

SR = audio_io.SAMPLE_RATE


def laid_out(name: str, gap_s: float = 1.0, fill: str = "zeros") -> tuple[str, np.ndarray, str]:
    """(language, 16 kHz float32 audio, reference text) of one laid-out input."""
    refs = {c.file: c for c in manifest()}
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
    return refs[files[0]].lang, np.concatenate(parts), " ".join(refs[f].reference for f in files)


def build_mix(out: Path, scale: str = "full") -> list[dict]:
    """The throughput mix's wav files (16 kHz mono) and out/mix.json: [{file, language, seconds, diarize, reference}]
    (reference: the shared transcripts of what the file holds; null for the 1-hour recording).

    Korean calls of 1, 2, 3 and 5 minutes: the 69 s two-speaker dialogue, then Korean clips in turn, half-second
    pauses; a call holds whole clips only (the dialogue even in the 1-minute call), so its reference is the clips'
    transcripts end to end. Then every ja and en file of the shared set; with scale "full" one hour of the shared
    Korean recordings repeated. Scale "turnaround": the 5-minute call and those recordings for 20 and 60 minutes."""
    out.mkdir(parents=True, exist_ok=True)
    refs = {c.file: c.reference for c in manifest()}
    dialogue_file = "multi/deeply_ko_dialogue_constructed.wav"
    dialogue = audio_io.decode(str(TESTDATA / dialogue_file))
    ko_files = sorted(f"ko/{p.name}" for p in (TESTDATA / "ko").glob("*.wav"))
    ko = [audio_io.decode(str(TESTDATA / f)) for f in ko_files]
    pause = np.zeros(SR // 2, dtype=np.float32)
    entries = []
    for minutes in (1, 2, 3, 5):
        parts, total, i, said = [dialogue, pause], dialogue.size + pause.size, 0, [refs[dialogue_file]]
        while total + ko[i % len(ko)].size <= minutes * 60 * SR:
            parts += [ko[i % len(ko)], pause]
            total += ko[i % len(ko)].size + pause.size
            said.append(refs[ko_files[i % len(ko)]])
            i += 1
        x = np.concatenate(parts)
        name = f"ko-call-{minutes}min.wav"
        write_wav(out / name, x)
        entries.append({"file": name, "language": "ko", "seconds": x.size / SR, "diarize": True,
                        "reference": " ".join(said)})  # fmt: skip
    for lang in ("ja", "en"):
        for p in sorted((TESTDATA / lang).iterdir()):
            if p.suffix not in (".wav", ".flac"):
                continue
            x = audio_io.decode(str(p))
            name = f"{lang}-{p.stem}.wav"
            write_wav(out / name, x)
            entries.append({"file": name, "language": lang, "seconds": x.size / SR, "diarize": False,
                            "reference": refs.get(f"{lang}/{p.name}")})  # fmt: skip
    if scale in ("full", "turnaround"):
        recordings = [audio_io.decode(str(p)) for p in sorted((TESTDATA / "untranscribed").glob("vito_tritony_*.wav"))]
        for minutes in (20, 60) if scale == "turnaround" else (60,):
            name = "ko-recording-1h.wav" if minutes == 60 else f"ko-recording-{minutes}min.wav"
            write_wav(out / name, _end_to_end(recordings, pause, minutes * 60 * SR))
            entries.append({"file": name, "language": "ko", "seconds": minutes * 60.0, "diarize": False,
                            "reference": None})  # fmt: skip
    if scale == "turnaround":  # the long recordings and the 5-minute diarized call, each to be run alone
        entries = [e for e in entries if str(e["file"]).startswith("ko-recording") or e["file"] == "ko-call-5min.wav"]
    (out / "mix.json").write_text(json.dumps(entries, indent=1))
    return entries


def _end_to_end(recordings: list[np.ndarray], pause: np.ndarray, size: int) -> np.ndarray:
    """The recordings in turn, `pause` after each, repeated up to `size` samples."""
    parts, total, i = [], 0, 0
    while total < size:
        r = recordings[i % len(recordings)]
        parts += [r, pause]
        total += r.size + pause.size
        i += 1
    return np.concatenate(parts)[:size]


def korean_speech() -> np.ndarray:
    """The shared Korean clips end to end, 1 s of silence after each (16 kHz float32)."""
    clips = [audio_io.decode(str(p)) for p in sorted((TESTDATA / "ko").glob("*.wav"))]
    gap = np.zeros(SR, dtype=np.float32)
    return np.concatenate([x for c in clips for x in (c, gap)])


def long_recording(path: Path, hours: float, block_s: float) -> float:
    """The Korean clips end to end (1 s gaps) in a block of block_s seconds (silence after them), repeated for
    `hours`; written block by block (never whole in memory). Returns its length in seconds."""
    speech = korean_speech()
    block = np.zeros(int(block_s * SR), dtype=np.float32)
    block[: speech.shape[0]] = speech[: block.shape[0]]
    pcm = (np.clip(block, -1, 1 - 1 / 32768) * 32768).astype("<i2").tobytes()
    n_blocks = round(hours * 3600 / block_s)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        for _ in range(n_blocks):
            w.writeframes(pcm)
    return n_blocks * block_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("mix")
    m.add_argument("out", type=Path)
    m.add_argument("--scale", choices=["small", "full", "turnaround"], default="full")
    long = sub.add_parser("long")
    long.add_argument("out", type=Path)
    long.add_argument("--minutes", type=float, default=60)
    long.add_argument("--block-s", type=float, default=600)
    lay = sub.add_parser("laid-out")
    lay.add_argument("name", choices=["ko", "ja", "en"])
    lay.add_argument("out", type=Path)
    args = ap.parse_args()
    if args.cmd == "mix":
        entries = build_mix(args.out, args.scale)
        print(f"{len(entries)} files, {sum(e['seconds'] for e in entries) / 60:.1f} min of audio in {args.out}")
    elif args.cmd == "long":
        print(long_recording(args.out, args.minutes / 60, args.block_s))
    else:
        write_wav(args.out, laid_out(args.name)[1])


if __name__ == "__main__":
    main()
