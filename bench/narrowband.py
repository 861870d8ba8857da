#!/usr/bin/env python3
"""Makes telephone-band copies of test audio: 8 kHz, mono, 16-bit PCM wav (what a phone call recording holds).

    .venv/bin/python bench/narrowband.py OUT_DIR FILE...     # FILE relative to ../shared/testdata

Used by bench/accuracy.ts --narrowband to measure the CALL domain; the copies are scratch files, never committed.
"""

from __future__ import annotations

import sys
import wave
from pathlib import Path

import av
import numpy as np

TESTDATA = Path(__file__).resolve().parent.parent.parent / "shared" / "testdata"


def narrowband(src: Path, dst: Path) -> None:
    resampler = av.AudioResampler(format="s16", layout="mono", rate=8000)
    pcm: list[np.ndarray] = []
    with av.open(str(src)) as container:
        for frame in container.decode(audio=0):
            for out in resampler.resample(frame):
                pcm.append(out.to_ndarray().reshape(-1))
    for out in resampler.resample(None):
        pcm.append(out.to_ndarray().reshape(-1))
    dst.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(dst), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(np.concatenate(pcm).astype("<i2").tobytes())


def main() -> None:
    out_dir = Path(sys.argv[1])
    for name in sys.argv[2:]:
        dst = out_dir / name
        if not dst.exists():
            narrowband(TESTDATA / name, dst)


if __name__ == "__main__":
    main()
