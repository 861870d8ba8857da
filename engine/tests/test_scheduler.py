"""Many transcribe requests in one engine (scheduler.py): requests decoded in shared batches get the text each gets
decoded alone, to batch numerics; a short call behind a long file finishes first; a cancelled request frees its
place at once. The real small model, through the scheduler's public functions.

Not equal to the bit: CTranslate2's decoder gives a clip slightly different scores in a batch of other clips than
alone (a 30 s clip, full window either way, in a batch of one or of four), and where greedy decoding is near a tie
a word or a segment boundary goes the other way; a short clip's encoder window is also its batch's longest clip's.
The same holds today between a file's own chunks (docs/engine.md, "One engine for the host"). So the bounds: the
text of each request within a few characters of its text alone, and no further from its reference."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from transcripts import cer, reference

from sori_engine import audio as audio_io
from sori_engine import transcriber
from sori_engine.decode import parts, rounds
from sori_engine.decode_options import DecodeOptions
from sori_engine.errors import CANCELLED, EngineError
from sori_engine.protocol import ModelConfig, TranscribeParams
from sori_engine.scheduler import Scheduler, SchedulerOptions, shares
from sori_eval.wav import write_wav

FILES = (
    "en/earnings22_1_4482311_3_62.wav",
    "en/whisper_jfk.flac",
    "en/earnings22_3_4483589_261_321.wav",
    "multi/pyannote_sample.wav",
)


def _params(model: dict[str, Any], path: Path, words: bool = True) -> TranscribeParams:
    return TranscribeParams(
        audio_path=str(path), model=ModelConfig(**model), language_mode="fixed", language="en", word_timestamps=words
    )


def _text(result: Any) -> str:
    return " ".join(s.text for s in result.segments)


def _close_to_alone(testdata: Path, files: dict[str, str], alone: dict[str, Any], together: dict[str, Any]) -> None:
    for rid, clip in files.items():
        a, t = _text(alone[rid]), _text(together[rid])
        assert cer(t, a) <= 0.15, (rid, a, t)  # batch numerics move a word or two near greedy ties
        ref = reference(testdata, clip)
        assert cer(t, ref) <= cer(a, ref) + 0.05, (rid, a, t)


def _through_scheduler(
    reqs: dict[str, TranscribeParams],
    jobs: int,
    cancel: tuple[str, ...] = (),
    gather_s: float = 0.5,
    decoders: int = 1,
    checkpoints: list[dict] | None = None,
) -> tuple[dict[str, Any], list[str], Scheduler]:
    """Each request's result (or error) through one scheduler with `jobs` in flight, and the order they finished."""
    finished: dict[str, Any] = {}
    order: list[str] = []
    woken = threading.Event()

    def finish(rid: str, result: Any, error: BaseException | None) -> None:
        finished[rid] = error if error is not None else result
        order.append(rid)

    options = SchedulerOptions(jobs=jobs, stage_threads=jobs, decoders=decoders, gather_s=gather_s)
    scheduler = Scheduler(options, finish, woken.set)
    emit = checkpoints.append if checkpoints is not None else None
    for rid, req in reqs.items():
        scheduler.submit(
            rid,
            lambda req=req: transcriber.transcribe_steps(
                req, lambda _f: None, emit, windows_in_flight=scheduler.windows_each
            ),
        )
    for rid in cancel:
        scheduler.step()  # admitted, its stages started
        assert scheduler.cancel(rid)
    while True:
        if scheduler.step():
            continue
        if scheduler.idle:
            break
        woken.wait(scheduler.wait_s())
        woken.clear()
    scheduler.shutdown()
    return finished, order, scheduler


def test_shares_split_a_batch_evenly_and_give_the_rest_in_order() -> None:
    assert shares(2, 4, [10, 10]) == [2, 2]
    assert shares(2, 4, [1, 10]) == [1, 3]
    assert shares(3, 4, [5, 5, 5]) == [2, 1, 1]
    assert shares(5, 4, [1, 1, 1, 1, 1]) == [1, 1, 1, 1, 1]  # each at least one clip: no request waits a turn
    assert shares(1, 16, [3]) == [3]


def test_four_requests_in_shared_batches_get_the_text_each_gets_alone(testdata: Path, model: dict[str, Any]) -> None:
    files = {f"r{i}": f for i, f in enumerate(FILES)}
    reqs = {rid: _params(model, testdata / f) for rid, f in files.items()}
    alone = {rid: transcriber.transcribe(req, lambda _f: None) for rid, req in reqs.items()}
    assert all(r.segments for r in alone.values())
    for jobs in (2, 4):
        # A batch waits for every request still in its stages (gather_s): many clips share batches.
        together, _order, scheduler = _through_scheduler(reqs, jobs, gather_s=60.0)
        assert scheduler.shared_batches > 0  # the point: clips of several requests were decoded together
        _close_to_alone(testdata, files, alone, together)


def test_a_short_call_behind_a_long_file_finishes_first(testdata: Path, model: dict[str, Any], tmp_path: Path) -> None:
    clip = audio_io.decode(str(testdata / FILES[0]))
    long = write_wav(tmp_path / "long.wav", np.concatenate([clip] * 4))  # 4 minutes, 8 chunks or more
    reqs = {"long": _params(model, long, words=False), "short": _params(model, testdata / FILES[1], words=False)}
    _results, order, _s = _through_scheduler(reqs, jobs=2)
    assert order == ["short", "long"]


def test_a_long_file_alone_keeps_every_decoder_busy(
    testdata: Path, model: dict[str, Any], tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("SORI_ENGINE_WINDOW_S", "60")  # 4 windows of a minute
    clip = audio_io.decode(str(testdata / FILES[0]))
    long = write_wav(tmp_path / "long.wav", np.concatenate([clip] * 4))
    req = _params(model, long, words=False)
    req = TranscribeParams(**{**req.__dict__, "checkpoints": True})
    alone = transcriber.transcribe(req, lambda _f: None)
    checkpoints: list[dict] = []
    results, _order, scheduler = _through_scheduler({"long": req}, jobs=1, decoders=2, checkpoints=checkpoints)
    assert scheduler.most_at_once == 2  # two windows' passes decoding at once
    assert [c["index"] for c in checkpoints] == list(range(len(checkpoints)))  # in window order, as one at a time
    assert len(checkpoints) >= 4
    a, t = _text(alone), _text(results["long"])
    assert t == a  # its windows never share a batch: the text of one at a time
    again = TranscribeParams(**{**req.__dict__, "resume_from": checkpoints[:2]})
    resumed, _order, _s = _through_scheduler({"again": again}, jobs=1, decoders=2)
    assert _text(resumed["again"]) == a  # resumed after two windows: the others decoded again, as before


def test_a_cancelled_request_frees_its_place_at_once(testdata: Path, model: dict[str, Any]) -> None:
    files = dict(zip(("a", "b", "c"), FILES, strict=False))
    reqs = {rid: _params(model, testdata / f, words=False) for rid, f in files.items()}
    alone = {rid: transcriber.transcribe(reqs[rid], lambda _f: None) for rid in ("b", "c")}
    results, order, scheduler = _through_scheduler(reqs, jobs=2, cancel=("a",))
    assert order[0] == "a"  # answered at once, before anything was decoded
    assert isinstance(results["a"], EngineError) and results["a"].code == CANCELLED
    assert scheduler.idle  # its generator closed
    del files["a"]
    _close_to_alone(testdata, files, alone, results)  # c took a's place


def test_the_engine_answers_ping_and_cancel_between_passes(engine: Any, model: dict[str, Any], testdata: Path) -> None:
    def send(rid: str, op: str, params: dict[str, Any]) -> None:
        engine.send_raw((json.dumps({"id": rid, "op": op, "params": params}) + "\n").encode())

    ask = {"model": model, "language_mode": "fixed", "language": "en"}
    send("many-1", "transcribe", {**ask, "audio_path": str(testdata / FILES[0])})
    send("many-2", "transcribe", {**ask, "audio_path": str(testdata / FILES[1])})
    send("many-3", "ping", {})
    send("many-4", "cancel", {"id": "many-1"})
    finals: dict[str, dict[str, Any]] = {}
    while len(finals) < 4:
        msg = engine.read_line()
        assert msg["id"].startswith("many-"), msg
        if "event" not in msg:
            finals[msg["id"]] = msg
    order = list(finals)
    assert order.index("many-3") < order.index("many-2")  # a ping is not queued behind a transcription
    assert finals["many-4"]["result"] == {"cancelled": True}
    assert finals["many-1"]["error"]["code"] == CANCELLED
    assert finals["many-2"]["result"]["segments"]


def test_a_batch_gathering_for_a_cancelled_request_leaves_no_wait() -> None:
    # A batch gathers for `a` while `b` is in its stages; `a` cancelled, no wait may be left to time, or the engine's
    # loop would step without sleeping (wait_s 0) until `b`'s stages return.
    settings = rounds.Settings(model=None, prompting=None, options=DecodeOptions())  # type: ignore[arg-type]
    need = rounds.Need(settings, [rounds.Job(np.zeros(16000, np.float32), [[]])], [rounds.Item(0, [])], rests=False)
    release = threading.Event()

    def waits_for_a_pass() -> Any:
        yield parts.Pending((need,))

    def stages_still_running() -> Any:
        release.wait(10)
        yield parts.Pending((need,))

    scheduler = Scheduler(SchedulerOptions(jobs=2, stage_threads=2, decoders=1, gather_s=0.01), lambda *_a: None)
    scheduler.submit("a", waits_for_a_pass)
    scheduler.submit("b", stages_still_running)
    try:
        deadline = time.monotonic() + 5
        while scheduler.wait_s() is None and time.monotonic() < deadline:  # until a's stages return and it gathers
            assert not scheduler.step()
        assert scheduler.wait_s() is not None
        assert scheduler.cancel("a")
        time.sleep(0.02)  # past gather_s
        assert not scheduler.step()
        assert scheduler.wait_s() is None
    finally:
        release.set()
        scheduler.shutdown()
