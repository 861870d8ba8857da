"""Untrusted media decoded in a short-lived, confined process per file (docs/security.md, "Untrusted media").

Every upload is attacker-controlled bytes. FFmpeg's demuxers and decoders never run in the engine, which holds the
models and every job in flight: each probe and each decode pass is a process of its own (media/child.py) that gets
the one input as an open descriptor, sends what it decoded down a pipe and exits. It may crash, hang or be fed a
file built to exploit a decoder; what it can reach is its input and the pipe, and the engine turns its death into
that one request's `audio_decode_failed`.

The engine's side, here:
- `container_of`: the demuxer, from the file's magic bytes (the same six formats src/audio/format.ts admits);
  anything else is refused before a process starts. The child opens the file with that demuxer forced.
- `ALLOWED_CODECS`: per container, the audio codecs it carries in practice; the child refuses any other before a
  decoder runs (docs/audio.md, "Formats", says why each is there).
- `DecodeLimits`: what bounds one decode process (CPU time, memory, wall time without output, output length).
- bubblewrap, when it is installed and works on this host, adds namespaces (no network, no view of the data
  directory, no other process); where it does not (an unprivileged container) the child's own rlimits and
  seccomp filter hold alone. Checked once per engine, logged.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.machinery
import json
import logging
import os
import select
import shutil
import signal
import site
import subprocess
import sys
import threading
import time
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import AUDIO_DECODE_FAILED, AUDIO_TOO_LONG, BAD_REQUEST, INTERNAL, EngineError
from ..pcm import SAMPLE_RATE
from .child import FRAME

log = logging.getLogger(__name__)

CHILD = Path(__file__).with_name("child.py")
MAX_MESSAGE = 64 << 20  # one decoded block: about 2 MB in practice (500,000 input samples resampled to 16 kHz s16)
CHILD_CODES = frozenset({AUDIO_DECODE_FAILED, AUDIO_TOO_LONG, BAD_REQUEST})

# The decoders (FFmpeg's names) each container may use; docs/audio.md lists them with the reasons.
_PCM = ("pcm_u8", "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_f32le", "pcm_f64le", "pcm_alaw", "pcm_mulaw")
ALLOWED_CODECS: dict[str, tuple[str, ...]] = {
    "wav": (*_PCM, "adpcm_ms", "adpcm_ima_wav", "gsm_ms", "mp3float"),
    "mp3": ("mp3float",),
    "flac": ("flac",),
    "amr": ("amrnb", "amrwb"),
    # mp4 and m4a: FFmpeg's one ISO-BMFF demuxer
    "mov": ("aac", "alac", "mp3float", "amrnb", "amrwb", "ac3", "eac3", "opus", "flac", "pcm_s16le", "pcm_s16be"),
}
# The name a probe reports: FFmpeg's demuxer name as probing finds it (docs/engine.md), not the short one forced.
FAMILY = {"mov": "mov,mp4,m4a,3gp,3g2,mj2"}


@dataclass(frozen=True)
class DecodeLimits:
    """What bounds one decode process. The CPU time and memory are the process's own rlimits; the wall time is
    how long the engine waits for its next message (a process blocked on a full pipe while the transcriber works
    uses no CPU and is not counted: the engine is not waiting then); the output length is the request's
    max_duration_s, or `max_output_s` when it sets none."""

    cpu_s: int = 600  # a 4 h AAC file decodes in about 9 CPU s here (60 s: 0.036 s; docs/performance.md)
    memory_bytes: int = 1 << 30  # address space; Python with PyAV loaded maps about 120 MB of it
    stall_s: float = 60.0
    max_output_s: float = 4 * 3600.0  # the spec's 4-hour bound
    namespaces: bool = True  # bubblewrap when it works here

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DecodeLimits:
        """SORI_DECODE_CPU_S, SORI_DECODE_MEMORY_MB, SORI_DECODE_STALL_S, SORI_DECODE_NAMESPACES (0: never)."""
        d = cls()
        try:
            return cls(
                cpu_s=int(env.get("SORI_DECODE_CPU_S", d.cpu_s)),
                memory_bytes=int(env["SORI_DECODE_MEMORY_MB"]) << 20
                if "SORI_DECODE_MEMORY_MB" in env
                else d.memory_bytes,
                stall_s=float(env.get("SORI_DECODE_STALL_S", d.stall_s)),
                namespaces=env.get("SORI_DECODE_NAMESPACES", "1") != "0",
            )
        except ValueError as e:
            raise EngineError(INTERNAL, f"bad decode limit in the environment: {e}") from e


@functools.cache
def default_limits() -> DecodeLimits:
    return DecodeLimits.from_env(os.environ)


def container_of(path: str) -> str:
    """FFmpeg's demuxer for the file, from its first bytes, as src/audio/format.ts (file-type) tells the six formats
    apart; audio_decode_failed for anything else. An ID3v2 tag is skipped, as file-type does (an mp3 or a flac)."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
            offset = tags = 0
            while head[:3] == b"ID3" and len(head) >= 10 and tags < 4:  # bounded, as file-type's re-entry is
                size = (head[6] & 0x7F) << 21 | (head[7] & 0x7F) << 14 | (head[8] & 0x7F) << 7 | (head[9] & 0x7F)
                offset += 10 + size
                tags += 1
                f.seek(offset)
                head = f.read(16)
    except OSError as e:
        raise EngineError(AUDIO_DECODE_FAILED, f"cannot read {path}: {e}") from e
    if not head and not offset:
        raise EngineError(AUDIO_DECODE_FAILED, f"cannot decode {path}: the file is empty")
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head[:4] == b"fLaC":
        return "flac"
    if head[:5] == b"#!AMR":
        return "amr"
    if head[4:8] == b"ftyp" and len(head) > 8 and head[8] & 0x60:
        return "mov"
    if (
        len(head) >= 2
        and head[0] == 0xFF
        and head[1] & 0xE0 == 0xE0
        and head[1] & 0x06 == 0x02
        and head[1] & 0x16 != 0x10
    ):
        return "mp3"  # an MPEG audio frame of layer 3 (not ADTS AAC, not layer 1 or 2)
    if offset:
        return "mp3"  # ID3 before something else: file-type's guess, and FFmpeg's mp3 demuxer then finds no frame
    raise EngineError(
        AUDIO_DECODE_FAILED, f"cannot decode {path}: not one of the accepted formats (mp4, m4a, mp3, amr, flac, wav)"
    )


@functools.cache
def _bwrap() -> tuple[str, ...]:
    """The bubblewrap command line that decode processes run under, or () where it is missing or cannot make
    namespaces here (a container without user namespaces): checked once, by starting one."""
    exe = shutil.which("bwrap")
    if exe is None:
        log.info("decode processes: bubblewrap not installed; rlimits and seccomp only (docs/security.md)")
        return ()
    roots = {"/usr", "/lib", "/lib64", "/bin", "/etc/ld.so.cache", str(CHILD.parent)}
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable), *site.getsitepackages()):
        roots |= {p, os.path.realpath(p)}
    roots |= {p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)}  # a venv over a venv (.pth)
    binds = [a for r in sorted(roots, key=len) for a in ("--ro-bind-try", r, r)]
    cmd = (exe, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", *binds,
           "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/", "--")  # fmt: skip
    try:
        subprocess.run([*cmd, sys.executable, "-I", "-c", "import av"], capture_output=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as e:
        err = getattr(e, "stderr", b"") or b""
        log.warning(
            "decode processes: bubblewrap cannot run here (%s); rlimits and seccomp only (docs/security.md)",
            err.decode(errors="replace").strip()[:200] or e,
        )
        return ()
    log.info("decode processes run in bubblewrap namespaces (no network, no view of the data directory)")
    return cmd


class DecodeProcess:
    """One decode process and its pipe: `next()` is its next message, and any way it can go wrong (death, a limit,
    silence past the wall-time limit, malformed output, a refusal) is raised as the request's EngineError."""

    def __init__(
        self,
        path: str,
        limits: DecodeLimits,
    ) -> None:
        self.path = path
        self.limits = limits
        fmt = container_of(path)
        self.started = time.monotonic()
        self.cpu_s: float | None = None  # the process's CPU time (with its children), once reaped
        wrap = _bwrap() if limits.namespaces else ()
        self.wrapped = bool(wrap)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            raise EngineError(AUDIO_DECODE_FAILED, f"cannot read {path}: {e}") from e
        cfg = {
            "format": fmt,
            "codecs": ALLOWED_CODECS[fmt],
            "input_fd": fd,
            "cpu_s": limits.cpu_s,
            "memory_bytes": limits.memory_bytes,
            "parent": os.getpid(),
            "wrapped": bool(wrap),
        }
        try:
            self.proc = subprocess.Popen(
                [*wrap, sys.executable, "-I", str(CHILD), json.dumps(cfg)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                pass_fds=(fd,),
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},  # nothing of the engine's
            )
        except OSError as e:
            raise EngineError(INTERNAL, f"cannot start a decode process: {e}") from e
        finally:
            os.close(fd)
        assert self.proc.stdout is not None
        self._fd = self.proc.stdout.fileno()
        self._buf = bytearray()

    def header(self) -> dict[str, Any]:
        """The H message: the probe."""
        kind, payload = self.next()
        if kind != b"H":
            self.kill()
            raise self._failed("the decode process sent malformed output")
        info: dict[str, Any] = json.loads(payload)
        info["format"] = FAMILY.get(info["format"], info["format"])
        _note_confinement(info.get("sandbox"))
        return info

    def go(self, channel: int | None, max_samples: int | None) -> None:
        """Tells the process (after its header) to decode: that channel alone or the downmix, at most that much."""
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # it died: its pipe says so at the next read
            self.proc.stdin.write((json.dumps({"channel": channel, "max_samples": max_samples}) + "\n").encode())
            self.proc.stdin.close()

    def stop(self) -> None:
        """Tells the process (after its header) that the probe was all: it sends its end and exits."""
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()

    def _read(self, n: int) -> bytes | None:
        """`n` bytes, or None at EOF; waits at most stall_s for each read."""
        while len(self._buf) < n:
            ready, _, _ = select.select([self._fd], [], [], self.limits.stall_s)
            if not ready:
                self.kill()
                raise self._failed(f"the decode process gave no output for {self.limits.stall_s:g} s (wall-time limit)")
            chunk = os.read(self._fd, max(1 << 16, n - len(self._buf)))
            if not chunk:
                return None
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def next(self) -> tuple[bytes, bytes]:
        head = self._read(FRAME.size)
        if head is None:
            raise self._died()
        kind, size = FRAME.unpack(head)
        if kind not in (b"H", b"A", b"E", b"D") or size > MAX_MESSAGE:
            self.kill()
            raise self._failed("the decode process sent malformed output")
        payload = self._read(size) if size else b""
        if payload is None:
            raise self._died()
        if kind == b"E":
            self.reap()
            try:
                err = json.loads(payload)
                code, message = str(err["code"]), str(err["message"])
            except (ValueError, KeyError, TypeError):
                code, message = AUDIO_DECODE_FAILED, "the decode process sent a malformed error"
            if code not in CHILD_CODES:
                code = AUDIO_DECODE_FAILED
            raise EngineError(code, f"cannot decode {self.path}: {message}" if code == AUDIO_DECODE_FAILED else message)
        return kind, payload

    def _failed(self, why: str) -> EngineError:
        self.reap()
        return EngineError(AUDIO_DECODE_FAILED, f"cannot decode {self.path}: {why}")

    def _died(self) -> EngineError:
        """The pipe closed without an end message: the process crashed or was killed by a limit."""
        status = self.reap()
        sig = -status if status < 0 else (status - 128 if self.wrapped and status > 128 else 0)
        if sig:
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
            if sig == signal.SIGXCPU or (sig == signal.SIGKILL and (self.cpu_s or 0) >= self.limits.cpu_s):
                why = f"the decode process hit its CPU time limit ({self.limits.cpu_s} s)"
            else:
                why = f"the decode process died ({name})"
        else:
            why = f"the decode process exited with status {status} without finishing"
        return self._failed(why)

    def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()  # the process is not reaped before reap(), so its pid is still its own

    def reap(self) -> int:
        """Waits for the process (killing it when it has not ended within 5 s) and returns its exit code; keeps its
        CPU time (its children's included) in `cpu_s`."""
        deadline = time.monotonic() + 5.0
        while self.proc.returncode is None:
            try:
                pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            except ChildProcessError:  # cannot happen: nothing else waits for it
                self.proc.returncode = -signal.SIGKILL
                break
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_s = usage.ru_utime + usage.ru_stime
                break
            if time.monotonic() > deadline:
                self.kill()
            time.sleep(0.002)
        return self.proc.returncode

    def close(self) -> None:
        self.kill()
        self.reap()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None and not pipe.closed:
                with contextlib.suppress(BrokenPipeError):
                    pipe.close()


def probe(path: str, limits: DecodeLimits | None = None, keep: bool = False) -> dict[str, Any]:
    """The container's probe (H message), from a process that has read no further than the stream headers. With
    `keep`, the process is kept, waiting, for the next `stream` of the same file (a transcription probes, then
    decodes: one process start, not two); else it is told to stop."""
    p = DecodeProcess(path, limits or default_limits())
    try:
        info = p.header()
    except BaseException:
        p.close()
        raise
    if keep:
        _park(path, p, info)
        return info
    try:
        p.stop()
        p.next()  # D: the process ends by itself
        return info
    finally:
        p.close()


def stream(
    path: str,
    max_duration_s: float | None = None,
    channel: int | None = None,
    limits: DecodeLimits | None = None,
) -> Iterator[np.ndarray]:
    """The file's audio as 16 kHz float32 blocks, decoded by a decode process (audio.stream's contract): the one a
    `probe(keep=True)` of this file left waiting, or a new one. The process is killed when the caller stops reading
    (the generator closed) and on any failure."""
    lim = limits or default_limits()
    bound = max_duration_s if max_duration_s is not None else lim.max_output_s
    limit = int(bound * SAMPLE_RATE)
    kept = _claim(path) if limits is None else None
    p = kept or DecodeProcess(path, lim)
    total = 0
    try:
        if kept is None:
            p.header()
        p.go(channel, limit)
        while True:
            kind, payload = p.next()
            if kind == b"D":
                break
            if kind != b"A" or len(payload) % 2:
                p.kill()
                raise p._failed("the decode process sent malformed output")
            block = np.frombuffer(payload, dtype="<i2").astype(np.float32)
            block *= 1.0 / 32768.0
            total += block.shape[0]
            if total > limit:
                p.kill()
                raise _too_long(bound, max_duration_s, f"stopped decoding at {total / SAMPLE_RATE:.1f}s")
            yield block
    except EngineError as e:
        if e.code == AUDIO_TOO_LONG and not e.message.startswith("audio is longer"):
            raise _too_long(bound, max_duration_s, e.message) from None
        raise
    finally:
        p.close()


# Processes a probe left waiting for their file's decode pass: (path, process, when). Few, and short-lived: one
# not claimed within KEEP_S (its request failed between the probe and the decode) is closed at the next park.
_kept: list[tuple[str, DecodeProcess, float]] = []
_kept_lock = threading.Lock()
KEEP_S = 60.0
KEEP_MAX = 16


def _park(path: str, p: DecodeProcess, info: dict[str, Any]) -> None:
    now = time.monotonic()
    with _kept_lock:
        stale = [k for k in _kept if now - k[2] > KEEP_S]
        stale += _kept[: max(0, len(_kept) - len(stale) - KEEP_MAX + 1)]
        _kept[:] = [k for k in _kept if k not in stale] + [(path, p, now)]
    for _path, old, _t in stale:
        old.close()


def _claim(path: str) -> DecodeProcess | None:
    with _kept_lock:
        for k in _kept:
            if k[0] == path:
                _kept.remove(k)
                return k[1]
    return None


def _too_long(bound: float, max_duration_s: float | None, detail: str) -> EngineError:
    what = f"max_duration_s={bound:g}" if max_duration_s is not None else f"the decode limit of {bound:g} s"
    return EngineError(AUDIO_TOO_LONG, f"audio is longer than {what} ({detail})")


_noted: set[str] = set()


def _note_confinement(held: Any) -> None:
    """Logs once per engine what confines its decode processes (a missing seccomp is worth a warning)."""
    key = json.dumps(held, sort_keys=True)
    if key in _noted:
        return
    _noted.add(key)
    if isinstance(held, dict) and not held.get("seccomp"):
        log.warning("decode processes run without a seccomp filter: %s", held.get("seccomp_error", held))
    else:
        log.info("decode processes confined by: %s", held)


class _NoAv(types.ModuleType):
    """What `import av` gives in the engine: faster-whisper imports PyAV at its top (faster_whisper/audio.py) but
    uses it only to decode a path or file object, which the engine never hands it (it passes arrays)."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"av.{name}: PyAV is kept out of the engine process; media is decoded in a decode process "
            "(sori_engine.media.sandbox)"
        )


def keep_ffmpeg_out() -> None:
    """Make `import av` in this process give a stand-in, so that importing faster-whisper does not map FFmpeg's
    libraries (libavformat, libavcodec, ...) into the engine. Called by the engine's main before anything imports
    faster-whisper; a process that already imported PyAV (a test run) keeps it."""
    if "av" not in sys.modules:
        sys.modules["av"] = _NoAv("av", _NoAv.__doc__)
        sys.modules["av"].__spec__ = importlib.machinery.ModuleSpec("av", None)
