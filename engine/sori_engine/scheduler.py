"""Many transcribe requests in one engine, on all its decoders (docs/engine.md, "One engine for the host").

Each request is its stages as steps (transcriber.transcribe_steps, decode/parts.py's `Request`): a generator that
yields the batched passes it waits for (`Pending`: one need per window in flight) and is sent each need's segments
as they are done. Up to `jobs` requests run at once, admitted in submission order; the rest wait as their parsed
parameters only, so memory stays bounded whatever is queued. A running request's CPU stages (audio decoding, VAD,
language, the verdicts, the file-level clean) run in a small thread pool, between its answers.

`decoders` threads decode, each one batched pass at a time over the needs waiting for one, as one batch of at most
`batch_size` clips (CTranslate2 runs that many passes of one model at once, `inter_threads`, the weights held once).
A need's first-round clips go out a batch at a time, so one long file alone keeps every decoder busy; a need's rests
(a few short clips, their token cap their longest rest) go out in one call. A request's windows never share a
batch (its text does not depend on how many are in flight); other requests' clips do. A batch that would not be full
waits up to `gather_s` for other requests still in their CPU stages, so that their clips join it. Each request
waiting gets an equal share of the batch (the slots one does not fill go to the others in submission order), so a
4-hour file does not stall the short calls behind it. A batch's clips are decoded as each is alone (rounds.decode_once), so a request's
text does not depend on what it shared a batch with, bar batch numerics.

A cancelled request frees its place at once: its generator is closed (at once, or when its current CPU stage
returns), its passes still decoding are dropped when they return, and its other items are never decoded.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .decode import parts, rounds
from .errors import CANCELLED, EngineError, bad_request
from .model.interface import Decoded

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SchedulerOptions:
    """jobs: transcribe requests in flight in one engine (SORI_ENGINE_JOBS; the rest wait in submission order).
    stage_threads: threads running the CPU stages of those requests beside the decoders (default: `jobs`).
    decoders: batched passes decoded at once (SORI_ENGINE_DECODERS; the models' `inter_threads`), and windows of one
    request in flight.
    gather_s: how long a batch that would not be full waits for requests in their CPU stages to join it (a short
    wait: the decoder idles meanwhile, which on a GPU is lost time, on a CPU host mostly not)."""

    jobs: int = 2
    stage_threads: int = 2
    decoders: int = 1
    gather_s: float = 0.5

    @staticmethod
    def from_env(env: Mapping[str, str]) -> SchedulerOptions:
        jobs = _whole(env, "SORI_ENGINE_JOBS", SchedulerOptions.jobs)
        decoders = _whole(env, "SORI_ENGINE_DECODERS", SchedulerOptions.decoders)
        return SchedulerOptions(jobs=jobs, stage_threads=jobs, decoders=decoders)


def _whole(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    try:
        return max(1, int(raw)) if raw else default
    except ValueError:
        raise bad_request(f"{name} must be a whole number, not {raw!r}") from None


Decode = Callable[[rounds.Settings, list[rounds.Job], list[rounds.Item], bool], list[list[Decoded]]]
# finish(request id, result, error): exactly one of result and error is set.
Finish = Callable[[str, Any, BaseException | None], None]


@dataclass
class _Outcome:
    pending: parts.Pending | None = None
    result: Any = None
    error: BaseException | None = None


@dataclass(eq=False)  # compared by identity
class _Need:
    """One need of a running request: its items handed to decoders (`sent`), and the segments of those back."""

    need: rounds.Need
    sent: int = 0
    decoded: dict[int, list[Decoded]] = field(default_factory=dict)  # item index: its segments

    @property
    def unsent(self) -> int:
        return len(self.need.items) - self.sent


@dataclass(eq=False)  # compared by identity
class _Running:
    id: str
    steps: parts.Request[Any]
    needs: dict[int, _Need] = field(default_factory=dict)  # id(need): its state
    answers: deque[parts.Answer] = field(default_factory=deque)  # needs done, to send when its stages return
    undelivered: set[int] = field(default_factory=set)  # id(need) of those answers: not to be decoded again
    advancing: Future[_Outcome] | None = None  # its CPU stages, running in the pool up to its next Pending


@dataclass(eq=False)  # compared by identity
class _Pass:
    """A batched pass on a decoder: the requests' needs whose items it holds, and which items."""

    taken: list[tuple[_Running, _Need, range]]
    future: Future[list[list[Decoded]]]


def _advance(steps: parts.Request[Any], value: parts.Answer) -> _Outcome:
    """Runs a request's stages (in a pool thread) up to what it waits for next, or its end."""
    try:
        return _Outcome(pending=steps.send(value))  # type: ignore[arg-type]  # None starts a fresh generator
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
    """Runs transcribe requests' steps; `step()` is called by one thread, which hands batched passes to the
    decoders. `wake()` is called (from any thread) when a request's CPU stages or a pass are done, for a caller
    waiting on it."""

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
        self._waiting: deque[tuple[str, Callable[[], parts.Request[Any]]]] = deque()
        self._running: dict[str, _Running] = {}  # in submission order
        self._closing: list[_Running] = []  # cancelled while their stages ran: closed when those return
        self._passes: list[_Pass] = []  # on the decoders
        self._pool = ThreadPoolExecutor(max(1, options.stage_threads), thread_name_prefix="sori-stages")
        self._decoders = ThreadPoolExecutor(max(1, options.decoders), thread_name_prefix="sori-decoder")
        self._gathering_since: float | None = None  # when a batch that would not be full began to wait
        self.batches = 0  # batched passes run (for tests and logs)
        self.shared_batches = 0  # of which held clips of more than one request
        self.most_at_once = 0  # the most passes decoding at once (for tests)

    def submit(self, rid: str, make_steps: Callable[[], parts.Request[Any]]) -> None:
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
        self._drop(running)
        self._finish(rid, None, EngineError(CANCELLED, "cancelled"))
        return True

    def windows_each(self) -> int:
        """Windows a running request may have in flight: its share of the decoders (a file alone: one per decoder,
        so one decoder decodes a file window after window, as before the decoders)."""
        return max(1, self.options.decoders // max(1, len(self._running)))

    @property
    def idle(self) -> bool:
        """Nothing waiting, running, decoding or closing."""
        return not self._waiting and not self._running and not self._closing and not self._passes

    def wait_s(self) -> float | None:
        """How long a caller whose `step()` sent nothing may wait for `wake` before stepping again: the rest of
        a batch's gathering, None while none gathers."""
        if self._gathering_since is None:
            return None
        return max(0.0, self._gathering_since + self.options.gather_s - time.monotonic())

    def step(self) -> bool:
        """Collects the stages and passes that returned, admits waiting requests, and hands batched passes to the
        free decoders. False when it sent none: the caller may wait for `wake` (`wait_s`)."""
        self._reap()
        self._admit()
        sent = False
        while len(self._passes) < self.options.decoders and self._send_one_batch():
            sent = True
        return sent

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._decoders.shutdown(wait=False, cancel_futures=True)

    def _drop(self, running: _Running) -> None:
        """A request that is no longer here: its generator closed (once its stages return); its passes' answers
        are dropped when they return (`_reap` finds it gone)."""
        if running.advancing is not None:
            self._closing.append(running)  # a generator cannot be closed while it runs in another thread
        else:
            running.steps.close()

    def _start(self, running: _Running, value: parts.Answer) -> None:
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
        for done in [p for p in self._passes if p.future.done()]:
            self._passes.remove(done)
            self._collect(done)
        for running in list(self._running.values()):
            if running.advancing is not None:
                if not running.advancing.done():
                    continue
                outcome = running.advancing.result()
                running.advancing = None
                if outcome.pending is None:
                    del self._running[running.id]
                    self._finish(running.id, outcome.result, outcome.error)
                    continue
                self._waits_for(running, outcome.pending)
            if running.answers:
                answer = running.answers.popleft()
                if answer is not None:
                    running.undelivered.discard(id(answer[0]))
                self._start(running, answer)

    def _waits_for(self, running: _Running, pending: parts.Pending) -> None:
        """The request's needs are now `pending.needs`: new ones queued; those already known, and those whose answer
        waits to be sent (the request did not have it yet when it said what it waits for), kept as they are."""
        for need in pending.needs:
            if id(need) not in running.needs and id(need) not in running.undelivered:
                running.needs[id(need)] = _Need(need)
                if not need.items:  # nothing to decode: answered at once
                    self._answered(running, running.needs[id(need)])
        if pending.more:
            running.answers.appendleft(None)

    def _answered(self, running: _Running, state: _Need) -> None:
        del running.needs[id(state.need)]
        running.undelivered.add(id(state.need))
        running.answers.append((state.need, [state.decoded[i] for i in range(len(state.need.items))]))

    def _collect(self, done: _Pass) -> None:
        try:
            decoded = done.future.result()
        except Exception as e:  # a failed pass fails the requests whose clips it held; the others go on
            log.error("a batched pass failed", exc_info=e)
            for running, _state, _items in done.taken:
                if self._running.get(running.id) is running:  # not cancelled, nor failed by another pass
                    del self._running[running.id]
                    self._drop(running)
                    self._finish(running.id, None, e)
            return
        pos = 0
        for running, state, items in done.taken:
            for i in items:
                state.decoded[i] = decoded[pos]
                pos += 1
            if self._running.get(running.id) is running and len(state.decoded) == len(state.need.items):
                self._answered(running, state)

    def _send_one_batch(self) -> bool:
        # One need per request, its first window's: a request's windows never share a batch, so its text does not
        # depend on how many are in flight (a resume gives what the run it resumes would have).
        ready: list[tuple[_Running, _Need]] = []
        for r in self._running.values():
            first_unsent = next((n for n in r.needs.values() if n.unsent > 0), None)
            if first_unsent is not None:
                ready.append((r, first_unsent))
        if not ready:
            self._gathering_since = None  # the request it gathered for is gone (cancelled): no wait left to time
            return False
        first = ready[0][1].need
        # Clips share a batch when their decode settings and kind (first round or rests) are equal.
        group = [(r, n) for r, n in ready if (n.need.settings, n.need.rests) == (first.settings, first.rests)]
        wanted = [n.unsent for _r, n in group]
        slots = first.settings.options.batch_size
        grouped = {r.id for r, _n in group}
        others_in_stages = any(r.advancing is not None and r.id not in grouped for r in self._running.values())
        if sum(wanted) < slots and others_in_stages:
            now = time.monotonic()
            if self._gathering_since is None:
                self._gathering_since = now
            if now - self._gathering_since < self.options.gather_s:
                return False  # others may yet join this batch
        self._gathering_since = None
        # Rests (a few short clips each, their token cap their need's longest rest): all a need's in one call, as
        # when its request runs alone. A first round: a batch at a time, shared among the needs waiting.
        allotted = wanted if first.rests else shares(len(group), slots, wanted)
        jobs: list[rounds.Job] = []
        items: list[rounds.Item] = []
        taken: list[tuple[_Running, _Need, range]] = []
        for (running, state), k in zip(group, allotted, strict=True):
            if not k:
                continue
            need = state.need
            owners: dict[int, int] = {}
            for item in need.items[state.sent : state.sent + k]:
                if item.owner not in owners:
                    owners[item.owner] = len(jobs)
                    jobs.append(need.jobs[item.owner])
                items.append(rounds.Item(owners[item.owner], item.chunk, item.before))
            taken.append((running, state, range(state.sent, state.sent + k)))
            state.sent += k
        self.batches += 1
        self.shared_batches += len({r.id for r, _s, _i in taken}) > 1
        future = self._decoders.submit(self._decode, first.settings, jobs, items, first.rests)
        future.add_done_callback(lambda _f: self._wake())
        self._passes.append(_Pass(taken, future))
        self.most_at_once = max(self.most_at_once, len(self._passes))
        return True
