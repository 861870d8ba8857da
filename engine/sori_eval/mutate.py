"""Seeded mutations of media files, for fuzzing the decode path (engine/tests/test_media_sandbox.py, bench/fuzz_upload.ts).

`mutations(data, seed, n)` gives n mutated copies of a file's bytes, the same ones for the same seed: bit flips,
runs of 0x00 / 0xFF / random bytes, a cut, a slice repeated, header bytes changed, and length fields made huge.
Headers (the first few hundred bytes) are where a demuxer's trust lives, so half of the changes land there.
Made at test time from the shared audio; nothing derived is written to the repository.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

HEAD = 512  # where containers keep their sizes, counts and codec parameters


def _spot(rng: random.Random, size: int) -> int:
    return rng.randrange(min(HEAD, size)) if rng.random() < 0.5 else rng.randrange(size)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One mutation of `data` (one to three changes of the kinds above)."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        if len(b) < 16:
            break
        kind = rng.randrange(6)
        at = _spot(rng, len(b))
        if kind == 0:  # bit flips
            for _ in range(rng.randint(1, 16)):
                i = _spot(rng, len(b))
                b[i] ^= 1 << rng.randrange(8)
        elif kind == 1:  # a run of one byte value, or of random bytes
            n = rng.randint(1, 64)
            fill = rng.choice([b"\x00" * n, b"\xff" * n, rng.randbytes(n)])
            b[at : at + n] = fill[: len(b) - at]
        elif kind == 2:  # cut short
            del b[max(16, rng.randrange(len(b))) :]
        elif kind == 3:  # a slice repeated
            n = rng.randint(1, min(4096, len(b)))
            start = rng.randrange(len(b) - n + 1)
            b[at:at] = b[start : start + n]
        elif kind == 4:  # a 32-bit field made huge or zero (sizes, counts, sample rates)
            value = rng.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, rng.getrandbits(32)])
            b[at : at + 4] = value.to_bytes(4, rng.choice(["little", "big"]))
        else:  # a 16-bit field changed (channels, bits per sample, format tags)
            value = rng.choice([0, 1, 0xFFFF, 0x8000, rng.getrandbits(16)])
            b[at : at + 2] = value.to_bytes(2, rng.choice(["little", "big"]))
    return bytes(b)


def mutations(data: bytes, seed: int | str, n: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    for _ in range(n):
        yield mutate(data, rng)


# One short file per accepted format (test/audio/make_fixtures.py), as the spec names them: the seeds of the
# mutation corpus in the tests and the longer fuzz run (bench/fuzz_upload.ts).
SIX = {
    "wav": "wav_s16_16k_mono.wav",
    "flac": "flac_s16_48k_stereo.flac",
    "mp3": "mp3_44k1_mono.mp3",
    "m4a": "m4a_aac_44k1_stereo.m4a",
    "amr": "amr_nb_8k.amr",
    "mp4": "mp4_aac_h264_video.mp4",
}
