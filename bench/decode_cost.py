#!/usr/bin/env python3
"""What decoding in a decode process costs against decoding in the engine (docs/performance.md, "The decode process").

    flock ~/.sori-bench.lock nice -n 5 .venv/bin/python bench/decode_cost.py [--seconds 60] [--repeat 5] [--transcribe]

Builds a file of `--seconds` of the Korean clips (wav s16 16 kHz; mp3 and m4a made from it with PyAV), then, for
each, decodes it whole `--repeat` times three ways and prints the median CPU seconds (this process and its reaped
children) and wall seconds:
- `in-process`: PyAV in this process, the loop audio.py ran before the decode process (media/child.py's own);
- `process`: sori_engine.audio.decode, a decode process with rlimits and seccomp, no namespaces;
- `process+bwrap`: the same inside bubblewrap, where it works. The Python inside bubblewrap is not a reaped child
  of this process (bwrap's PID namespace), so its CPU does not show in getrusage: the figure is bwrap's own CPU plus
  the `process` figure.
A job probes once and streams once (and measures once more when the container does not state its length), so its
overhead is about two process starts; `--transcribe` also runs one transcription of the wav (whisper-base int8,
beam 5, in this process) to put that against.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "engine"))
sys.path.insert(0, str(ROOT / "test" / "audio"))

from sori_engine import audio
from sori_engine.media import child, sandbox
from sori_eval.wav import write_wav


def cpu() -> float:
    s, c = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def in_process(path: str) -> int:
    import av

    resampler = av.AudioResampler(format="s16", layout="mono", rate=audio.SAMPLE_RATE)
    total = 0
    with av.open(path, metadata_errors="ignore") as c:
        frames = child._skip_invalid(c.decode(c.streams.audio[0]), av)
        for frame in child._resample(child._group(frames, av), resampler):
            block = frame.to_ndarray()[0].astype(np.float32)
            block *= 1.0 / 32768.0
            total += block.shape[0]
    return total


def sandboxed(path: str, namespaces: bool) -> int:
    limits = replace(sandbox.default_limits(), namespaces=namespaces)
    return sum(b.shape[0] for b in sandbox.stream(path, None, None, limits))


def measure(fn, repeat: int) -> tuple[float, float]:
    cpus, walls = [], []
    for _ in range(repeat):
        c0, w0 = cpu(), time.monotonic()
        fn()
        cpus.append(cpu() - c0)
        walls.append(time.monotonic() - w0)
    return statistics.median(cpus), statistics.median(walls)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--testdata", default=str(ROOT.parent / "shared" / "testdata"))
    ap.add_argument("--transcribe", action="store_true")
    args = ap.parse_args()
    from make_fixtures import write  # test/audio/make_fixtures.py: PyAV encoders

    clips = sorted((Path(args.testdata) / "ko").glob("*.wav"))
    parts, n = [], 0
    while n < args.seconds * audio.SAMPLE_RATE:
        x = in_process_array(str(clips[len(parts) % len(clips)]))
        parts.append(x)
        n += x.shape[0]
    samples = np.concatenate(parts)[: int(args.seconds * audio.SAMPLE_RATE)]
    tmp = Path(tempfile.mkdtemp(prefix="decode_cost_"))
    files = {"wav": str(write_wav(tmp / "in.wav", samples))}
    write(
        tmp / "in.mp3",
        "mp3",
        "libmp3lame",
        samples.reshape(1, -1),
        audio.SAMPLE_RATE,
        "mono",
        "fltp",
    )
    write(
        tmp / "in.m4a",
        "ipod",
        "aac",
        samples.reshape(1, -1),
        audio.SAMPLE_RATE,
        "mono",
        "fltp",
    )
    files |= {"mp3": str(tmp / "in.mp3"), "m4a": str(tmp / "in.m4a")}
    bwrap = bool(sandbox._bwrap())
    print(
        f"{args.seconds:g} s of audio, median of {args.repeat}; bubblewrap {'works' if bwrap else 'unavailable'}"
    )
    print(f"{'file':5} {'way':14} {'CPU s':>7} {'wall s':>7}")
    for name, path in files.items():
        ways = [
            ("in-process", lambda p=path: in_process(p)),
            ("process", lambda p=path: sandboxed(p, False)),
        ]
        if bwrap:
            ways.append(("process+bwrap", lambda p=path: sandboxed(p, True)))
        for way, fn in ways:
            fn()  # warm the page cache
            c, w = measure(fn, args.repeat)
            print(f"{name:5} {way:14} {c:7.3f} {w:7.3f}")
    plain = replace(sandbox.default_limits(), namespaces=False)
    c, w = measure(lambda: sandbox.probe(files["wav"], plain), args.repeat)
    print(f"probe (one decode process, headers only): {c:.3f} CPU s, {w:.3f} s wall")
    if args.transcribe:
        transcribe_both(files["wav"], args.repeat)


def transcribe_both(wav: str, repeat: int) -> None:
    """One transcription of the wav (whisper-base int8, beam 5, in this process), with the audio read as before
    (PyAV in this process: audio.stream and audio.probe_or_none swapped for in-process versions) and as now (decode
    processes), interleaved, `repeat` times each; prints the medians and the decode processes a job starts."""
    import av
    from sori_engine import transcriber
    from sori_engine.protocol import ModelConfig, ProbeResult, TranscribeParams

    def stream_here(
        path: str, max_duration_s: float | None = None, channel: int | None = None
    ):  # type: ignore[no-untyped-def]
        resampler = av.AudioResampler(
            format="s16", layout="mono", rate=audio.SAMPLE_RATE
        )
        with av.open(path, metadata_errors="ignore") as c:
            frames = child._skip_invalid(c.decode(c.streams.audio[0]), av)
            for frame in child._resample(child._group(frames, av), resampler):
                block = frame.to_ndarray()[0].astype(np.float32)
                block *= 1.0 / 32768.0
                yield block

    def probe_here(path: str) -> ProbeResult:
        with av.open(path, metadata_errors="ignore") as c:
            s = c.streams.audio[0]
            d = c.duration / av.time_base if c.duration is not None else None
            return ProbeResult(
                c.format.name,
                s.codec_context.name,
                d,
                s.codec_context.channels,
                s.sample_rate,
            )

    model = ModelConfig(
        path=str(ROOT / "models" / "whisper-base"),
        device="cpu",
        compute_type="int8",
        beam_size=5,
    )
    params = TranscribeParams(
        audio_path=wav, model=model, language_mode="fixed", language="ko"
    )
    started = [0]
    real_init = sandbox.DecodeProcess.__init__

    def counting_init(self, *a, **k):  # type: ignore[no-untyped-def]
        started[0] += 1
        real_init(self, *a, **k)

    sandbox.DecodeProcess.__init__ = counting_init  # type: ignore[method-assign]
    now = (audio.stream, audio.probe_or_none)
    before_stream, before_probe = stream_here, probe_here
    transcriber.transcribe(params, lambda _f: None)  # loads the model
    cpus: dict[str, list[float]] = {"before": [], "now": []}
    texts = set()
    for _ in range(repeat):
        for way in ("before", "now"):
            audio.stream, audio.probe_or_none = (
                (before_stream, before_probe) if way == "before" else now
            )
            started[0] = 0
            c0 = cpu()
            result = transcriber.transcribe(params, lambda _f: None)
            cpus[way].append(cpu() - c0)
            texts.add("".join(seg.text for seg in result.segments))
            if way == "now":
                per_job = started[0]
    b, n = statistics.median(cpus["before"]), statistics.median(cpus["now"])
    print(
        f"transcription of the wav (whisper-base int8, beam 5), median of {repeat}: PyAV in the engine {b:.2f} CPU s, "
        f"decode processes {n:.2f} CPU s ({per_job} a job): {100 * (n - b) / b:+.1f} %; same text: {len(texts) == 1}"
    )


def in_process_array(path: str) -> np.ndarray:
    return audio.decode(path)


if __name__ == "__main__":
    main()
