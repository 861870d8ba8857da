"""The decode process: probe and decode one untrusted file, then exit (docs/security.md, "Untrusted media").

Run by media/sandbox.py as `python -I child.py CONFIG`, never imported by the engine: it alone loads PyAV, so
FFmpeg's demuxers and decoders run only here, on one file. The input is fd 3 (opened read-only by the engine);
stdout is a pipe of framed messages (`FRAME`: a kind byte and a payload length, then the payload):

  H  the probe, JSON: format, codec, duration_s, channels, sample_rate, and what confines this process (`sandbox`)
  A  a block of decoded audio: s16le, one channel, 16 kHz
  E  the failure, JSON {"code", "message"}; the process then exits 2
  D  the end, JSON {"samples"}; the process then exits 0

After H it waits for one line on stdin: `{"channel": int|null, "max_samples": int|null}` to decode, or the end of
stdin to stop there (a probe alone). So one process serves a transcription's probe and then its decode pass.

Before it reads a byte of the input the process confines itself: it loads everything it will need (PyAV's modules,
exercised on a few samples of silence made here), sets its rlimits (CPU time, address space, no new file
descriptor, no file written, no new process), asks for SIGKILL when the engine dies, and loads a seccomp filter
that refuses every syscall that opens a file, makes a socket, runs a program, forks or signals another process.
FFmpeg then reads the input as a Python file object with the sniffed demuxer forced (no probing: no other demuxer
is reachable), its decoders limited to the allow-list (avformat's stream-info pass included) and no protocol
usable (a reference inside the file cannot name another file or a URL).

Only the standard library and PyAV are imported (and pyseccomp, when installed): `-I` leaves the engine's own
package off sys.path, so nothing here depends on it; the engine passes the allow-list in CONFIG.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import io
import json
import os
import resource
import signal
import struct
import sys
from collections.abc import Iterator
from typing import Any

FRAME = struct.Struct("<cI")  # kind, payload length
SAMPLE_RATE = 16000
INPUT_FD = 3
GROUP_SAMPLES = 500_000  # resample in large blocks (as audio.py always did): per-frame resampling is slow
PR_SET_PDEATHSIG = 1
CLONE_THREAD = 0x00010000
SONAMES = {"c": "libc.so.6", "seccomp": "libseccomp.so.2"}

# Refused with EPERM once the input is about to be read (ENOSYS for clone3, so that glibc falls back to clone, where
# a new process, unlike a thread, is refused). Everything else a decoder does (read, mmap, futex, write to the pipe,
# threads) stays allowed: the filter's job is to keep a compromised decoder from reaching anything but its input.
DENIED_SYSCALLS = (
    "open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    "execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev",
    "kill", "tkill", "pidfd_open", "pidfd_send_signal", "pidfd_getfd",
    "mkdir", "mkdirat", "mknod", "mknodat", "unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2",
    "link", "linkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat",
    "truncate", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "bpf", "perf_event_open",
    "keyctl", "add_key", "request_key", "io_uring_setup", "userfaultfd", "memfd_create", "inotify_init1",
)  # fmt: skip


class Refused(Exception):
    """A failure with its protocol code (the engine's errors.py codes), reported as an E message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def send(kind: bytes, payload: bytes) -> None:
    out = sys.stdout.buffer
    out.write(FRAME.pack(kind, len(payload)))
    out.write(payload)
    out.flush()


def send_json(kind: bytes, obj: Any) -> None:
    send(kind, json.dumps(obj).encode())


def _tiny_wav() -> bytes:
    data = b"\0" * 3200  # 0.1 s of 16 kHz s16 silence
    fmt = struct.pack("<HHIIHH", 1, 1, SAMPLE_RATE, SAMPLE_RATE * 2, 2, 16)
    body = b"WAVEfmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


def load_av() -> Any:
    """PyAV with every module and code path the decode needs already loaded: after the seal no file can be opened,
    so a lazy import would fail."""
    import av
    import av.audio
    import av.subtitles  # imported lazily when a container is opened
    import av.video

    av.logging.set_level(av.logging.FATAL)  # the failure itself comes back in the E message
    with av.open(io.BytesIO(_tiny_wav()), format="wav") as c:
        for layout, fmt in (("mono", "s16"), (None, "s16p")):
            c.seek(0)
            resampler = av.AudioResampler(format=fmt, layout=layout, rate=SAMPLE_RATE)
            for frame in _resample(_group(_skip_invalid(c.decode(c.streams.audio[0]), av), av), resampler):
                bytes(frame.planes[0])
    return av


def load_seccomp() -> Any:
    """pyseccomp (ctypes over the system's libseccomp), or why it cannot be had: loaded before the limits, since
    loading it opens files."""
    import ctypes.util

    # pyseccomp looks both libraries up with find_library, which runs ldconfig (a process per decode); their
    # sonames are stable ABI names, and the dynamic loader finds them.
    find = ctypes.util.find_library
    ctypes.util.find_library = lambda name: SONAMES.get(name) or find(name)
    try:
        import pyseccomp

        pyseccomp.SyscallFilter(pyseccomp.ALLOW)  # fails here when libseccomp.so.2 is missing
        return pyseccomp
    except (ImportError, OSError, RuntimeError, AttributeError) as e:
        return f"{type(e).__name__}: {e}"
    finally:
        ctypes.util.find_library = find


def confine(cfg: dict[str, Any], seccomp: Any) -> dict[str, Any]:
    """Limits and the seccomp filter; returns what holds, for the H message (the engine logs it once)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != cfg["parent"] and not cfg.get("wrapped"):
        os._exit(3)  # the engine died before the request above took effect
    cpu = int(cfg["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU, then SIGKILL a second later
    resource.setrlimit(resource.RLIMIT_AS, (cfg["memory_bytes"], cfg["memory_bytes"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))  # no effect for root: seccomp refuses fork there
    resource.setrlimit(resource.RLIMIT_NOFILE, (INPUT_FD + 1, INPUT_FD + 1))  # fds 0-3 only: none can be opened
    fd = int(cfg["input_fd"])
    if fd != INPUT_FD:
        os.dup2(fd, INPUT_FD)
        os.close(fd)
    os.closerange(INPUT_FD + 1, 1 << 16)  # whatever else was inherited or opened while loading
    held: dict[str, Any] = {"rlimits": True, "seccomp": False, "namespaces": bool(cfg.get("wrapped"))}
    if isinstance(seccomp, str):
        held["seccomp_error"] = seccomp
        return held
    f = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        with contextlib.suppress(ValueError, RuntimeError, OSError):  # a syscall this architecture does not have
            f.add_rule(seccomp.ERRNO(errno.EPERM), name)
    f.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    f.load()
    held["seccomp"] = True
    return held


def run(cfg: dict[str, Any], av: Any, held: dict[str, Any]) -> int:
    codecs = ",".join(cfg["codecs"])
    fmt = cfg["format"]
    source = os.fdopen(INPUT_FD, "rb")
    opts = {"codec_whitelist": codecs, "format_whitelist": fmt, "protocol_whitelist": "none"}
    try:
        container = av.open(source, mode="r", format=fmt, container_options=opts, metadata_errors="ignore")
    except (av.FFmpegError, OSError, ValueError, EOFError) as e:
        raise Refused("audio_decode_failed", str(e)) from e
    with container:
        if not container.streams.audio:
            raise Refused("audio_decode_failed", f"no audio stream in the file (format {container.format.name})")
        stream = container.streams.audio[0]
        ctx = stream.codec_context
        if ctx is None:  # FFmpeg knows no decoder for the codec (a WAV with an unknown format tag)
            raise Refused("audio_decode_failed", "no decoder for the audio codec of the file")
        if ctx.name not in cfg["codecs"]:
            raise Refused(
                "audio_decode_failed",
                f"audio codec {ctx.name} in a {fmt} container is not accepted (accepted: {', '.join(cfg['codecs'])})",
            )
        ctx.options = {"codec_whitelist": codecs}
        if container.duration is not None:
            duration_s: float | None = container.duration / av.time_base
        elif stream.duration is not None and stream.time_base is not None:
            duration_s = float(stream.duration * stream.time_base)
        else:
            duration_s = None
        channels = ctx.channels
        send_json(
            b"H",
            {
                "format": container.format.name,
                "codec": ctx.name,
                "duration_s": duration_s,
                "channels": channels,
                "sample_rate": ctx.sample_rate,
                "sandbox": held,
            },
        )
        go = sys.stdin.buffer.readline()  # the engine's go-ahead, or the end of stdin
        if not go:
            send_json(b"D", {"samples": 0})
            return 0
        ask = json.loads(go)
        channel = ask.get("channel")
        if channel is not None and not 0 <= channel < max(channels, 1):
            raise Refused("bad_request", f"channel {channel} does not exist: the audio has {channels} channel(s)")
        # With a channel, keep the input's layout (None) in planar s16 and send that plane; else let FFmpeg downmix
        # to mono s16, exactly as faster_whisper.audio.decode_audio does.
        if channel is None:
            resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
        else:
            resampler = av.AudioResampler(format="s16p", layout=None, rate=SAMPLE_RATE)
        limit = ask.get("max_samples")
        total = 0
        try:
            for frame in _resample(_group(_skip_invalid(container.decode(stream), av), av), resampler):
                n = frame.samples
                if n == 0:
                    continue
                total += n
                if limit is not None and total > limit:
                    raise Refused("audio_too_long", f"stopped decoding at {total / SAMPLE_RATE:.1f}s")
                send(b"A", memoryview(frame.planes[0 if channel is None else channel])[: 2 * n])
        except (av.FFmpegError, OSError, ValueError, EOFError) as e:
            raise Refused("audio_decode_failed", str(e)) from e
    if total == 0:
        raise Refused("audio_decode_failed", "no audio could be decoded from the file")
    send_json(b"D", {"samples": total})
    return 0


def _skip_invalid(frames: Iterator[Any], av: Any) -> Iterator[Any]:
    """End the stream at an undecodable packet and keep what was decoded before it, as faster-whisper does: a
    truncated upload still yields its good part. (PyAV's decode generator cannot resume after it raised.)"""
    while True:
        try:
            yield next(frames)
        except StopIteration:
            return
        except av.InvalidDataError:
            return


def _group(frames: Iterator[Any], av: Any) -> Iterator[Any]:
    fifo = av.AudioFifo()
    for frame in frames:
        frame.pts = None  # the fifo checks timestamp continuity, which broken files do not keep
        fifo.write(frame)
        if fifo.samples >= GROUP_SAMPLES and (group := fifo.read()) is not None:
            yield group
    if fifo.samples > 0 and (group := fifo.read()) is not None:
        yield group


def _resample(frames: Iterator[Any], resampler: Any) -> Iterator[Any]:
    for frame in frames:
        yield from resampler.resample(frame)
    yield from resampler.resample(None)  # flushes the resampler's buffered tail


def main() -> int:
    cfg = json.loads(sys.argv[1])
    try:
        av = load_av()
        held = confine(cfg, load_seccomp())
        return run(cfg, av, held)
    except Refused as e:
        send_json(b"E", {"code": e.code, "message": str(e)})
    except MemoryError:
        send_json(b"E", {"code": "audio_decode_failed", "message": "the decode process ran out of its memory limit"})
    except BrokenPipeError:
        os._exit(1)  # the engine stopped reading (it has what it wanted, or it gave up on this file)
    return 2


if __name__ == "__main__":
    sys.exit(main())
