#!/usr/bin/env python3
"""Builds the audio-front-end test inputs from the shared test audio, with PyAV (no system ffmpeg needed).

    .venv/bin/python test/audio/make_fixtures.py OUT_DIR [TESTDATA]

writes into OUT_DIR and prints a JSON object {name: file} on stdout:
- formats/: the Korean sentence of ko/picovoice_leopard_test_ko.wav (3.9 s) in every accepted format: wav PCM
  u8/s16/s24/s32/f32/f64 at various rates, mono/stereo/6-channel, flac, mp3, m4a (AAC), mp4 (AAC + H.264 video),
  AMR-NB. AMR-WB has no encoder in PyAV's FFmpeg: the shared .awb of the same sentence is used.
- stereo.wav: two Korean speakers, one per channel (channel 0 speaks first, channel 1 after it).
- bad/: a truncated mp3, a wav whose header claims 10 hours, random bytes named .mp3, an mp4 with a video track
  only, a wav with no samples, 10 s of digital silence, 10 s of white noise.
Nothing is committed: the shared audio's licenses forbid redistribution (../shared/testdata/README.md).
"""

from __future__ import annotations

import json
import struct
import sys
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

SR = 16000
ROOT = Path(__file__).resolve().parents[2]


def load(path: Path, rate: int = SR) -> np.ndarray:
    """Mono float32 at `rate`."""
    resampler = av.AudioResampler(format="flt", layout="mono", rate=rate)
    out = []
    with av.open(str(path)) as c:
        for frame in c.decode(audio=0):
            out += [f.to_ndarray().reshape(-1) for f in resampler.resample(frame)]
    out += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]
    return np.concatenate(out).astype(np.float32)


def write(path: Path, fmt: str | None, codec: str, samples: np.ndarray, rate: int, layout: str,
          sample_fmt: str, video: bool = False, bit_rate: int | None = None) -> None:
    """samples: (channels, n) float32 at `rate`."""
    with av.open(str(path), "w", format=fmt) as c:
        if video:
            vs = c.add_stream("h264", rate=10)
            vs.width, vs.height, vs.pix_fmt = 64, 64, "yuv420p"
        st = c.add_stream(codec, rate=rate, layout=layout)
        st.format = sample_fmt
        if bit_rate:
            st.bit_rate = bit_rate
        frame_size = st.codec_context.frame_size or 1024
        n = samples.shape[1]
        pts = 0
        vpts = 0
        for i in range(0, n, frame_size):
            block = samples[:, i : i + frame_size]
            if block.shape[1] < frame_size and st.codec_context.frame_size:
                block = np.pad(block, ((0, 0), (0, frame_size - block.shape[1])))
            planar = np.ascontiguousarray(block, dtype=np.float32)
            frame = av.AudioFrame.from_ndarray(planar, format="fltp", layout=layout)
            frame.sample_rate = rate
            frame.pts = pts
            frame.time_base = Fraction(1, rate)
            pts += block.shape[1]
            for packet in st.encode(_convert(frame, sample_fmt, layout, rate)):
                c.mux(packet)
            if video:
                while vpts / 10 <= pts / rate:
                    img = np.full((64, 64, 3), (vpts * 7) % 255, dtype=np.uint8)
                    vf = av.VideoFrame.from_ndarray(img, format="rgb24").reformat(format="yuv420p")
                    vf.pts = vpts
                    vpts += 1
                    for packet in vs.encode(vf):
                        c.mux(packet)
        for packet in st.encode(None):
            c.mux(packet)
        if video:
            for packet in vs.encode(None):
                c.mux(packet)


def _convert(frame: av.AudioFrame, sample_fmt: str, layout: str, rate: int) -> list[av.AudioFrame] | av.AudioFrame:
    if sample_fmt == "fltp":
        return frame
    # A resampler per call is fine for test-sized inputs; it converts the sample format only.
    out = av.AudioResampler(format=sample_fmt, layout=layout, rate=rate).resample(frame)
    return out[0] if len(out) == 1 else out


def wav_header_lies(path: Path, samples: np.ndarray) -> None:
    """A PCM s16 mono 16 kHz wav whose RIFF and data sizes claim 10 hours of audio."""
    pcm = (np.clip(samples, -1, 1 - 1 / 32768) * 32768).astype("<i2").tobytes()
    claimed = 10 * 3600 * SR * 2
    path.write_bytes(_wav_header(claimed) + pcm)


def wav_empty(path: Path) -> None:
    path.write_bytes(_wav_header(0))


def _wav_header(data_bytes: int) -> bytes:
    """RIFF/WAVE header of PCM s16 mono 16 kHz whose data chunk declares `data_bytes`."""
    fmt = struct.pack("<IHHIIHH", 16, 1, 1, SR, SR * 2, 2, 16)
    riff = b"RIFF" + struct.pack("<I", 36 + data_bytes) + b"WAVE"
    return riff + b"fmt " + fmt + b"data" + struct.pack("<I", data_bytes)


def main() -> int:
    out = Path(sys.argv[1])
    testdata = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT.parent / "shared" / "testdata"
    (out / "formats").mkdir(parents=True, exist_ok=True)
    (out / "bad").mkdir(parents=True, exist_ok=True)
    src = testdata / "ko" / "picovoice_leopard_test_ko.wav"
    files: dict[str, str] = {"reference": str(src)}

    def mono(rate: int) -> np.ndarray:
        return load(src, rate)[None, :]

    def multi(rate: int, channels: int) -> np.ndarray:
        return np.repeat(mono(rate), channels, axis=0)

    F = out / "formats"
    specs = [
        # name, container, codec, samples, rate, layout, sample format
        ("wav_u8_8k_mono.wav", "wav", "pcm_u8", mono(8000), 8000, "mono", "u8"),
        ("wav_s16_16k_mono.wav", "wav", "pcm_s16le", mono(16000), 16000, "mono", "s16"),
        ("wav_s16_11025_mono.wav", "wav", "pcm_s16le", mono(11025), 11025, "mono", "s16"),
        ("wav_s24_44k1_stereo.wav", "wav", "pcm_s24le", multi(44100, 2), 44100, "stereo", "s32"),
        ("wav_s32_48k_mono.wav", "wav", "pcm_s32le", mono(48000), 48000, "mono", "s32"),
        ("wav_f32_22050_stereo.wav", "wav", "pcm_f32le", multi(22050, 2), 22050, "stereo", "flt"),
        ("wav_f64_32k_mono.wav", "wav", "pcm_f64le", mono(32000), 32000, "mono", "dbl"),
        ("wav_s16_16k_6ch.wav", "wav", "pcm_s16le", multi(16000, 6), 16000, "5.1", "s16"),
        ("flac_s16_48k_stereo.flac", "flac", "flac", multi(48000, 2), 48000, "stereo", "s16"),
        ("mp3_44k1_mono.mp3", "mp3", "libmp3lame", mono(44100), 44100, "mono", "fltp"),
        ("m4a_aac_44k1_stereo.m4a", "ipod", "aac", multi(44100, 2), 44100, "stereo", "fltp"),
        ("amr_nb_8k.amr", "amr", "libopencore_amrnb", mono(8000), 8000, "mono", "s16"),
    ]
    for name, fmt, codec, samples, rate, layout, sfmt in specs:
        write(F / name, fmt, codec, samples, rate, layout, sfmt, bit_rate=12200 if "amr" in name else None)
        files[name] = str(F / name)
    write(F / "mp4_aac_h264_video.mp4", "mp4", "aac", multi(44100, 2), 44100, "stereo", "fltp", video=True)
    files["mp4_aac_h264_video.mp4"] = str(F / "mp4_aac_h264_video.mp4")
    files["amr_wb_16k.awb"] = str(testdata / "formats" / "picovoice_leopard_test_ko.awb")

    # Two speakers, one per channel: A from 0.5 s, B after A has finished (1 s gap).
    a = load(testdata / "ko" / "deeply_anechoic_sub100120a00053.wav")
    b = load(src)
    start_b = int(0.5 * SR) + a.shape[0] + SR
    n = start_b + b.shape[0] + int(0.5 * SR)
    stereo = np.zeros((2, n), dtype=np.float32)
    stereo[0, int(0.5 * SR) : int(0.5 * SR) + a.shape[0]] = a
    stereo[1, start_b : start_b + b.shape[0]] = b
    write(out / "stereo.wav", "wav", "pcm_s16le", stereo, SR, "stereo", "s16")
    files["stereo.wav"] = str(out / "stereo.wav")
    files["stereo_b_start_s"] = str(start_b / SR)

    B = out / "bad"
    mp3 = (F / "mp3_44k1_mono.mp3").read_bytes()
    (B / "truncated.mp3").write_bytes(mp3[: len(mp3) // 2])
    wav_header_lies(B / "header_lies.wav", mono(SR)[0])
    (B / "zero.wav").write_bytes(b"")
    (B / "random.mp3").write_bytes(np.random.default_rng(7).bytes(50_000))
    write_video_only(B / "video_only.mp4")
    wav_empty(B / "zero_seconds.wav")
    write(B / "silence.wav", "wav", "pcm_s16le", np.zeros((1, 10 * SR), dtype=np.float32), SR, "mono", "s16")
    noise = np.random.default_rng(7).uniform(-0.5, 0.5, (1, 10 * SR)).astype(np.float32)
    write(B / "noise.wav", "wav", "pcm_s16le", noise, SR, "mono", "s16")
    for p in sorted(B.iterdir()):
        files[f"bad/{p.name}"] = str(p)
    json.dump(files, sys.stdout, indent=1)
    print()
    return 0


def write_video_only(path: Path) -> None:
    with av.open(str(path), "w", format="mp4") as c:
        vs = c.add_stream("h264", rate=10)
        vs.width, vs.height, vs.pix_fmt = 64, 64, "yuv420p"
        for i in range(20):
            img = np.full((64, 64, 3), i * 10, dtype=np.uint8)
            vf = av.VideoFrame.from_ndarray(img, format="rgb24").reformat(format="yuv420p")
            vf.pts = i
            for packet in vs.encode(vf):
                c.mux(packet)
        for packet in vs.encode(None):
            c.mux(packet)


if __name__ == "__main__":
    sys.exit(main())
