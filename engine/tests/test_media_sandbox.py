"""Untrusted media in a decode process of its own (sori_engine/media/; docs/security.md, "Untrusted media").

What is checked: the engine process never maps FFmpeg's libraries, during and after jobs in each of the six formats;
a decode process killed mid-file fails its own job with a clear code while another job on the same engine
completes; a stalled, over-long or memory-starved decode process fails with a code; containers and codecs off the
allow-list are refused before any decoder runs; the decode process cannot open a file or a socket; and a seeded
mutation corpus of each format ends, file by file, in audio or a coded failure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Engine

from sori_engine import audio
from sori_engine.errors import AUDIO_DECODE_FAILED, AUDIO_TOO_LONG, EngineError
from sori_engine.media import sandbox
from sori_eval.mutate import SIX, mutations
from sori_eval.wav import write_wav

SR = audio.SAMPLE_RATE
FFMPEG_LIBS = ("libavformat", "libavcodec")
CODES = {AUDIO_DECODE_FAILED, AUDIO_TOO_LONG}


def ffmpeg_maps(pid: int) -> list[str]:
    return sorted({line.split()[-1] for line in Path(f"/proc/{pid}/maps").read_text().splitlines()
                   if any(lib in line for lib in FFMPEG_LIBS)})  # fmt: skip


def decode_processes(parent: int | None = None) -> list[int]:
    """Live decode processes (the Python child, not a bubblewrap around it), of `parent`'s tree when given."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if not any(a.endswith(b"media/child.py") for a in argv) or b"bwrap" in argv[0]:
            continue
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            continue
        if parent is None or _descends(int(entry.name), parent):
            found.append(int(entry.name))
    return found


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:
            return False
        if pid == ancestor:
            return True
    return False


def input_of(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/fd/3")
    except OSError:
        return None


def transcribe_params(model: dict[str, Any], path: str, **extra: Any) -> dict[str, Any]:
    return {"audio_path": path, "model": model, "language_mode": "fixed", "language": "ko", **extra}


def send(engine: Engine, rid: str, op: str, params: dict[str, Any]) -> None:
    engine.send_raw((json.dumps({"id": rid, "op": op, "params": params}) + "\n").encode())


def finals(engine: Engine, ids: set[str]) -> dict[str, dict[str, Any]]:
    """The final lines of the requests `ids`, in whatever order they come (events skipped)."""
    got: dict[str, dict[str, Any]] = {}
    while set(got) != ids:
        msg = engine.read_line()
        if "event" not in msg and msg.get("id") in ids:
            got[msg["id"]] = msg
    return got


# ---------------------------------------------------------------------------------------------------------------
# The engine process


def test_the_engine_never_maps_ffmpeg(engine: Engine, model: dict[str, Any], fixtures: dict[str, str]) -> None:
    """During and after a probe and a transcription of each of the six formats, the engine process maps neither
    libavformat nor libavcodec (faster-whisper's own `import av` gets a stand-in)."""
    pid = engine.proc.pid
    assert ffmpeg_maps(pid) == []
    for i, (fmt, name) in enumerate(SIX.items()):
        assert engine.call("probe", {"audio_path": fixtures[name]}).result["channels"] >= 1
        send(engine, f"six{i}", "transcribe", transcribe_params(model, fixtures[name]))
        during = ffmpeg_maps(pid)
        seen = set()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not seen:  # catch the job's decode process while it lives
            seen = {p for p in decode_processes(pid)}
            during += ffmpeg_maps(pid)
        reply = finals(engine, {f"six{i}"})[f"six{i}"]
        assert "result" in reply and reply["result"]["segments"], (fmt, reply)
        assert during == [] and ffmpeg_maps(pid) == [], (fmt, during)
    assert decode_processes(pid) == []  # each was reaped


def long_input(testdata: Path, tmp_path: Path, minutes: float) -> Path:
    """`minutes` of Korean clips with silence between them (mostly silence: cheap to transcribe)."""
    clips = sorted((testdata / "ko").glob("*.wav"))[:6]
    parts: list[np.ndarray] = []
    total = 0
    i = 0
    while total < minutes * 60 * SR:
        x = audio.decode(str(clips[i % len(clips)]))
        parts += [x, np.zeros(SR * 15, dtype=np.float32)]
        total += x.shape[0] + SR * 15
        i += 1
    return write_wav(tmp_path / "long.wav", np.concatenate(parts))


@pytest.fixture
def windowed_engine(tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """An engine of its own with 60 s windows, so that a job's decode process lives (blocked on its pipe) while
    the first windows are recognized."""
    monkeypatch.setenv("SORI_ENGINE_WINDOW_S", "60")
    monkeypatch.setenv("SORI_ENGINE_JOBS", "2")
    eng = Engine(tmp_path / "stderr.log")
    yield eng
    eng.close()


def test_a_decode_process_killed_mid_file_fails_only_its_job(
    windowed_engine: Engine, model: dict[str, Any], testdata: Path, fixtures: dict[str, str], tmp_path: Path
) -> None:
    eng = windowed_engine
    long = str(long_input(testdata, tmp_path, 4))
    send(eng, "victim", "transcribe", transcribe_params(model, long))
    victim = None
    deadline = time.monotonic() + 120
    while victim is None and time.monotonic() < deadline:
        victim = next((p for p in decode_processes(eng.proc.pid) if input_of(p) == long), None)
        time.sleep(0.05)
    assert victim is not None, "the long job's decode process was never seen"
    send(eng, "other", "transcribe", transcribe_params(model, fixtures["wav_s16_16k_mono.wav"]))
    time.sleep(0.5)  # the other job is in flight beside it
    os.kill(victim, signal.SIGKILL)
    got = finals(eng, {"victim", "other"})
    err = got["victim"]["error"]
    assert err["code"] == AUDIO_DECODE_FAILED and "decode process died (SIGKILL)" in err["message"], err
    assert got["other"]["result"]["segments"], got["other"]
    assert eng.call("ping").result  # the engine serves on
    again = eng.call("transcribe", transcribe_params(model, fixtures["mp3_44k1_mono.mp3"]))
    assert again.result["segments"]
    assert ffmpeg_maps(eng.proc.pid) == []


def test_mutated_files_end_each_with_a_result_or_a_code(
    engine: Engine, model: dict[str, Any], fixtures: dict[str, str], tmp_path: Path
) -> None:
    """Two seeded mutations of each format through the engine process: a result or audio_decode_failed /
    audio_too_long each, and the engine answers a ping after every one."""
    for fmt, name in SIX.items():
        data = Path(fixtures[name]).read_bytes()
        for i, bad in enumerate(mutations(data, f"engine-{fmt}", 2)):
            path = tmp_path / f"{fmt}-{i}{Path(name).suffix}"
            path.write_bytes(bad)
            reply = engine.call("transcribe", transcribe_params(model, str(path), max_duration_s=60))
            assert "result" in reply.final or reply.error_code in CODES, (fmt, i, reply.final)
            assert engine.call("ping").result
    assert decode_processes(engine.proc.pid) == []


# ---------------------------------------------------------------------------------------------------------------
# One decode process (in this test process: no model)


def test_the_seeded_mutation_corpus_decodes_or_fails_with_a_code(fixtures: dict[str, str], tmp_path: Path) -> None:
    """Eight seeded mutations of each of the six formats: float audio in [-1, 1], or an EngineError with the code
    of bad audio; no other exception, and no decode process left behind."""
    outcomes: dict[str, int] = {}
    for fmt, name in SIX.items():
        data = Path(fixtures[name]).read_bytes()
        for i, bad in enumerate(mutations(data, f"corpus-{fmt}", 8)):
            path = tmp_path / f"{fmt}-{i}{Path(name).suffix}"
            path.write_bytes(bad)
            try:
                x = audio.decode(str(path), max_duration_s=600)
            except EngineError as e:
                assert e.code in CODES, (fmt, i, e.code, e.message)
                outcomes[e.code] = outcomes.get(e.code, 0) + 1
            else:
                assert x.dtype == np.float32 and np.isfinite(x).all() and np.abs(x).max() <= 1.0, (fmt, i)
                outcomes["audio"] = outcomes.get("audio", 0) + 1
    assert sum(outcomes.values()) == 48 and outcomes.get("audio", 0) > 0, outcomes
    assert decode_processes(os.getpid()) == []


def test_a_stalled_decode_process_is_killed(testdata: Path, tmp_path: Path) -> None:
    long = str(long_input(testdata, tmp_path, 3))
    limits = replace(sandbox.default_limits(), stall_s=1.0)
    blocks = sandbox.stream(long, None, None, limits)
    next(blocks)
    (pid,) = decode_processes(os.getpid())
    os.kill(pid, signal.SIGSTOP)
    began = time.monotonic()
    with pytest.raises(EngineError) as caught:
        for _ in blocks:
            pass
    assert caught.value.code == AUDIO_DECODE_FAILED
    assert "gave no output for 1 s (wall-time limit)" in caught.value.message
    assert time.monotonic() - began < 10
    assert decode_processes(os.getpid()) == []


def test_output_past_the_bound_is_audio_too_long(testdata: Path, tmp_path: Path) -> None:
    long = str(long_input(testdata, tmp_path, 2))
    with pytest.raises(EngineError) as caught:
        audio.decode(long, max_duration_s=30)
    assert caught.value.code == AUDIO_TOO_LONG and "max_duration_s=30" in caught.value.message
    # No max_duration_s: the decode limit (4 h by default) still holds.
    limits = replace(sandbox.default_limits(), max_output_s=20)
    with pytest.raises(EngineError) as caught:
        list(sandbox.stream(long, None, None, limits))
    assert caught.value.code == AUDIO_TOO_LONG and "decode limit of 20 s" in caught.value.message


def test_a_decode_process_over_its_memory_limit_fails_with_a_code(fixtures: dict[str, str]) -> None:
    limits = replace(sandbox.default_limits(), memory_bytes=64 << 20)  # less than Python with PyAV loaded needs
    with pytest.raises(EngineError) as caught:
        list(sandbox.stream(fixtures["mp3_44k1_mono.mp3"], None, None, limits))
    assert caught.value.code == AUDIO_DECODE_FAILED, caught.value.message
    assert "decode process" in caught.value.message


def test_a_decode_process_over_its_cpu_limit_fails_with_a_code(fixtures: dict[str, str]) -> None:
    limits = replace(sandbox.default_limits(), cpu_s=0, namespaces=False)  # SIGXCPU at once
    with pytest.raises(EngineError) as caught:
        list(sandbox.stream(fixtures["mp3_44k1_mono.mp3"], None, None, limits))
    assert caught.value.code == AUDIO_DECODE_FAILED
    assert "the decode process hit its CPU time limit" in caught.value.message


def test_formats_off_the_allow_list_are_refused_before_any_process(testdata: Path) -> None:
    for name in ("picovoice_leopard_test_ko.ogg", "picovoice_leopard_test_ko.webm"):
        with pytest.raises(EngineError) as caught:
            sandbox.container_of(str(testdata / "formats" / name))
        assert caught.value.code == AUDIO_DECODE_FAILED and "not one of the accepted formats" in caught.value.message


def _encode(path: Path, fmt: str, codec: str, rate: int = 16000) -> Path:
    """One second of a tone, written with PyAV in this test process."""
    import av

    with av.open(str(path), "w", format=fmt) as c:
        st = c.add_stream(codec, rate=rate, layout="mono")
        n = st.codec_context.frame_size or 1152
        t = np.arange(rate) / rate
        x = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
        fmt_name = st.codec_context.codec.audio_formats[0].name
        for i in range(0, rate - n + 1, n):
            block = x[i : i + n]
            frame = av.AudioFrame.from_ndarray(
                (block * 32767).astype(np.int16).reshape(1, -1) if fmt_name.startswith("s16") else block.reshape(1, -1),
                format="s16" if fmt_name.startswith("s16") else "fltp",
                layout="mono",
            )
            frame.sample_rate = rate
            frame.pts = None
            for packet in st.encode(frame):
                c.mux(packet)
        for packet in st.encode(None):
            c.mux(packet)
    return path


def test_codecs_off_the_allow_list_are_refused(tmp_path: Path) -> None:
    """A QuickTime file carrying IMA ADPCM, and a WAV carrying G.722: FFmpeg decodes both, the allow-list does not."""
    qt = _encode(tmp_path / "ima.mov", "mov", "adpcm_ima_qt")
    with pytest.raises(EngineError) as caught:
        audio.probe(str(qt))
    assert caught.value.code == AUDIO_DECODE_FAILED
    assert "audio codec adpcm_ima_qt in a mov container is not accepted" in caught.value.message
    g722 = _encode(tmp_path / "g722.wav", "wav", "adpcm_g722")
    with pytest.raises(EngineError) as caught:
        audio.decode(str(g722))
    assert caught.value.code == AUDIO_DECODE_FAILED and "audio codec g722 in a wav container" in caught.value.message


def test_the_decode_process_cannot_open_files_or_sockets(fixtures: dict[str, str]) -> None:
    """The confinement itself: the child's setup, then attempts to open a file, make a socket and run a program,
    all refused, while the input (fd 3) is still readable."""
    probe_code = (
        "import json, os, socket, subprocess, sys\n"
        f"sys.path.insert(0, {str(Path(sandbox.CHILD).parent)!r})\n"
        "import child\n"
        "cfg = json.loads(sys.argv[1])\n"
        "child.load_av()\n"
        "held = child.confine(cfg, child.load_seccomp())\n"
        "out = {'held': held}\n"
        "for name, act in [('open', lambda: open('/etc/hostname')), ('socket', lambda: socket.socket()),\n"
        "                  ('exec', lambda: subprocess.run(['/bin/true'])), ('fork', os.fork)]:\n"
        "    try:\n"
        "        act()\n"
        "        out[name] = 'allowed'\n"
        "    except OSError as e:\n"
        "        out[name] = e.errno\n"
        "out['input'] = len(os.read(3, 4))\n"
        "print(json.dumps(out))\n"
    )
    fd = os.open(fixtures["wav_s16_16k_mono.wav"], os.O_RDONLY)
    try:
        cfg = {"input_fd": fd, "cpu_s": 10, "memory_bytes": 1 << 30, "parent": os.getpid(), "wrapped": False}
        done = subprocess.run(
            [sys.executable, "-I", "-c", probe_code, json.dumps(cfg)],
            pass_fds=(fd,),
            capture_output=True,
            timeout=60,
            check=True,
        )
    finally:
        os.close(fd)
    out = json.loads(done.stdout)
    assert out["held"]["rlimits"] and out["held"]["seccomp"], out
    assert out["open"] == out["socket"] == out["fork"] == 1, out  # EPERM each
    assert out["exec"] in (1, 24), out  # EPERM, or no descriptor left for its pipe (EMFILE)
    assert out["input"] == 4


def test_the_engine_import_path_does_not_load_ffmpeg() -> None:
    """faster-whisper and the transcriber import without mapping FFmpeg once the stand-in is in place (a fresh
    process, as the engine's main does it)."""
    code = (
        "from sori_engine.media.sandbox import keep_ffmpeg_out\n"
        "keep_ffmpeg_out()\n"
        "from sori_engine import audio, models, transcriber, streaming, refiner, voiceprint, redact_audio\n"
        "import faster_whisper\n"
        "maps = open('/proc/self/maps').read()\n"
        "print(sum(lib in maps for lib in ('libavformat', 'libavcodec')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=120, check=True, cwd=Path(audio.__file__).parents[1]
    )
    assert done.stdout.strip() == b"0", done.stderr[-2000:]
