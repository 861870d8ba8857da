"""Many transcribe requests in one engine (docs/engine.md, "Many jobs in one engine").

Each request is its stages as steps (transcriber.transcribe_steps): a generator that yields each batched pass it
waits for (rounds.Need) and returns its result. Up to `jobs` requests run at once, admitted in submission order;
the rest wait as their parsed parameters only, so memory stays bounded whatever is queued. A running request's
CPU stages (audio decoding, VAD, language, the verdicts, the file-level clean) run in a small thread pool, between
its needs; the scheduler's own thread, the decoder, runs one batched pass at a time over the needs of every
request waiting for one, as one batch of at most `batch_size` clips (a request waiting alone, or for its rests,
has all its clips decoded in one call, as when it runs alone). A batch that would not be full waits up to
`gather_s` for the requests still in their CPU stages, so that their clips join it. Each request gets an equal share of the batch
(the slots a request does not fill go to the others in submission order), so a 4-hour file does not stall the
short calls behind it. A batch's clips are decoded as each is alone (rounds.decode_once), so a request's text
does not depend on what it shared a batch with, bar batch numerics.

A cancelled request frees its place at once: its generator is closed (at once, or when its current CPU stage
returns) and its items are never decoded.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .decode import rounds
from .errors import CANCELLED, EngineError, bad_request
from .model.interface import Decoded

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SchedulerOptions:
    """jobs: transcribe requests in flight in one engine (SORI_ENGINE_JOBS; the rest wait in submission order).
    stage_threads: threads running the CPU stages of those requests beside the decoder (default: `jobs`).
    gather_s: how long a batch that would not be full waits for requests in their CPU stages to join it (a short
    wait: the decoder idles meanwhile, which on a GPU is lost time, on a CPU host mostly not)."""

    jobs: int = 2
    stage_threads: int = 2
    gather_s: float = 0.5

    @staticmethod
    def from_env(env: Mapping[str, str]) -> SchedulerOptions:
        raw = env.get("SORI_ENGINE_JOBS", "").strip()
        try:
            jobs = int(raw) if raw else SchedulerOptions.jobs
        except ValueError:
            raise bad_request(f"SORI_ENGINE_JOBS must be a whole number, not {raw!r}") from None
        jobs = max(1, jobs)
        return SchedulerOptions(jobs=jobs, stage_threads=jobs)


Decode = Callable[[rounds.Settings, list[rounds.Job], list[rounds.Item], bool], list[list[Decoded]]]
# finish(request id, result, error): exactly one of result and error is set.
Finish = Callable[[str, Any, BaseException | None], None]


@dataclass
class _Outcome:
    need: rounds.Need | None = None
    result: Any = None
    error: BaseException | None = None


@dataclass
class _Running:
    id: str
    steps: rounds.Steps[Any]
    need: rounds.Need | None = None
    decoded: list[list[Decoded]] = field(default_factory=list)  # segments of need.items[: len(decoded)]
    advancing: Future[_Outcome] | None = None  # its CPU stages, running in the pool up to its next need


def _advance(steps: rounds.Steps[Any], value: list[list[Decoded]] | None) -> _Outcome:
    """Runs a request's stages (in a pool thread) up to its next need or its end."""
    try:
        return _Outcome(need=steps.send(value))  # type: ignore[arg-type]  # None starts a fresh generator
    except StopIteration as stop:
        return _Outcome(result=stop.value)
    except Exception as e:  # noqa: BLE001 - reported to the worker as the request's error
        return _Outcome(error=e)


def shares(n: int, slots: int, wanted: list[int]) -> list[int]:
    """Slots of one batch for each of `n` requests that want `wanted[i]` clips: an equal share each (at least one),
    then the slots left over to those that want more, in order."""
    base = max(1, slots // max(n, 1))
    got = [min(w, base) for w in wanted]
    left = slots - sum(got)
    for i, w in enumerate(wanted):
        more = min(w - got[i], max(left, 0))
        got[i] += more
        left -= more
    return got


class Scheduler:
    """Runs transcribe requests' steps; `step()` is called by the decoder thread, which alone decodes. `wake()` is
    called (from any thread) when a request's CPU stages reach a need or an end, for a caller waiting on it."""

    def __init__(
        self,
        options: SchedulerOptions,
        finish: Finish,
        wake: Callable[[], None] = lambda: None,
        decode: Decode = rounds.decode_once,
    ) -> None:
        self.options = options
        self._finish = finish
        self._wake = wake
        self._decode = decode
        self._waiting: deque[tuple[str, Callable[[], rounds.Steps[Any]]]] = deque()
        self._running: dict[str, _Running] = {}  # in submission order
        self._closing: list[_Running] = []  # cancelled while their stages ran: closed when those return
        self._pool = ThreadPoolExecutor(max(1, options.stage_threads), thread_name_prefix="sori-stages")
        self._gathering_since: float | None = None  # when a batch that would not be full began to wait
        self.batches = 0  # batched passes run (for tests and logs)
        self.shared_batches = 0  # of which held clips of more than one request

    def submit(self, rid: str, make_steps: Callable[[], rounds.Steps[Any]]) -> None:
        """Queues a request; `make_steps()` makes its generator when it is admitted."""
        self._waiting.append((rid, make_steps))

    def cancel(self, rid: str) -> bool:
        """Drops a waiting or running request at once (it finishes with `cancelled`); False when it is not here."""
        for i, (wid, _make) in enumerate(self._waiting):
            if wid == rid:
                del self._waiting[i]
                self._finish(rid, None, EngineError(CANCELLED, "cancelled"))
                return True
        running = self._running.pop(rid, None)
        if running is None:
            return False
        if running.advancing is not None:
            self._closing.append(running)  # a generator cannot be closed while it runs in another thread
        else:
            running.steps.close()
        self._finish(rid, None, EngineError(CANCELLED, "cancelled"))
        return True

    @property
    def idle(self) -> bool:
        """Nothing waiting, running or closing."""
        return not self._waiting and not self._running and not self._closing

    def wait_s(self) -> float | None:
        """How long a caller whose `step()` decoded nothing may wait for `wake` before stepping again: the rest of
        a batch's gathering, None while none gathers."""
        if self._gathering_since is None:
            return None
        return max(0.0, self._gathering_since + self.options.gather_s - time.monotonic())

    def step(self) -> bool:
        """Collects the stages that returned, admits waiting requests, and runs one batched pass if any request
        waits for one. False when there was nothing to decode: the caller may wait for `wake` (`wait_s`)."""
        self._reap()
        self._admit()
        return self._decode_one_batch()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _start(self, running: _Running, value: list[list[Decoded]] | None) -> None:
        running.need, running.decoded = None, []
        future = self._pool.submit(_advance, running.steps, value)
        running.advancing = future
        future.add_done_callback(lambda _f: self._wake())

    def _admit(self) -> None:
        while self._waiting and len(self._running) < self.options.jobs:
            rid, make_steps = self._waiting.popleft()
            running = _Running(rid, make_steps())
            self._running[rid] = running
            self._start(running, None)

    def _reap(self) -> None:
        for closing in [c for c in self._closing if c.advancing is not None and c.advancing.done()]:
            closing.steps.close()
            self._closing.remove(closing)
        for running in list(self._running.values()):
            if running.advancing is None or not running.advancing.done():
                continue
            outcome = running.advancing.result()
            running.advancing = None
            if outcome.need is not None:
                running.need = outcome.need
                if not outcome.need.items:  # nothing to decode: answered at once
                    self._start(running, [])
                continue
            del self._running[running.id]
            self._finish(running.id, outcome.result, outcome.error)

    def _decode_one_batch(self) -> bool:
        ready = [r for r in self._running.values() if r.need is not None and r.advancing is None]
        if not ready:
            return False
        first = ready[0].need
        assert first is not None
        # Clips share a batch when their decode settings and kind (first round or rests) are equal.
        group = [
            r for r in ready if r.need is not None and (r.need.settings, r.need.rests) == (first.settings, first.rests)
        ]
        wanted = [len(r.need.items) - len(r.decoded) for r in group if r.need is not None]
        slots = first.settings.options.batch_size
        if sum(wanted) < slots and any(r.advancing is not None for r in self._running.values()):
            now = time.monotonic()
            if self._gathering_since is None:
                self._gathering_since = now
            if now - self._gathering_since < self.options.gather_s:
                return False  # others may yet join this batch
        self._gathering_since = None
        # A request alone, or rests (a few short clips each, their token cap their request's longest rest): all its
        # clips in one call, batched by decode_once just as when the request runs alone.
        alone = len(group) == 1 or first.rests
        allotted = wanted if alone else shares(len(group), slots, wanted)
        jobs: list[rounds.Job] = []
        items: list[rounds.Item] = []
        taken: list[tuple[_Running, int]] = []
        for running, k in zip(group, allotted, strict=True):
            need = running.need
            assert need is not None
            owners: dict[int, int] = {}
            for item in need.items[len(running.decoded) : len(running.decoded) + k]:
                if item.owner not in owners:
                    owners[item.owner] = len(jobs)
                    jobs.append(need.jobs[item.owner])
                items.append(rounds.Item(owners[item.owner], item.chunk, item.before))
            taken.append((running, k))
        self.batches += 1
        self.shared_batches += sum(1 for _r, k in taken if k) > 1
        try:
            decoded = self._decode(first.settings, jobs, items, first.rests)
        except Exception as e:  # a failed pass fails the requests whose clips it held; the others go on
            log.exception("a batched pass failed")
            for running, _k in taken:
                del self._running[running.id]
                running.steps.close()
                self._finish(running.id, None, e)
            return True
        pos = 0
        for running, k in taken:
            running.decoded.extend(decoded[pos : pos + k])
            pos += k
            need = running.need
            assert need is not None
            if len(running.decoded) == len(need.items):
                self._start(running, running.decoded)
        return True
