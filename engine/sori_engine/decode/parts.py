"""Several parts of one request in flight at once (docs/engine.md, "One engine for the host").

A long file is transcribed window by window (transcriber.py), each window its own rounds (`rounds.Steps`: one
batched pass at a time). Run one after another, a file alone keeps one decoder busy; `concurrently` keeps up to
`k` windows in flight, so that a host's decoders (scheduler.py) all have work from one file. It is a generator that
yields what the request waits for now (`Pending`: every part's current need) and is sent one answer at a time
(`Answer`: a need and its segments), so that one part's CPU stages run while the others' passes decode.

Parts are opened in order, each only after the one before reached its first need (its language stage ran: a file
in `detect` mode is decided by its first speech), and `done(i, result)` is called in order, part by part, so what
follows a window (its checkpoint) is what it is when the windows run one after another.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import TypeVar

from ..model.interface import Decoded
from .rounds import Need, Steps, decode_once

P = TypeVar("P")
T = TypeVar("T")


@dataclass(frozen=True)
class Pending:
    """What a request waits for: `needs`, each decoded on its own and answered when done. `more`: the request has
    CPU work it can do before any answer (open its next part): send it None at once."""

    needs: tuple[Need, ...]
    more: bool = False


Answer = tuple[Need, list[list[Decoded]]] | None
# A request's stages: yields what it waits for, is sent one answer (or None), returns what the stages make.
Request = Generator[Pending, Answer, T]


def concurrently(
    parts: Iterator[Steps[P]],
    k: int | Callable[[], int],
    done: Callable[[int, P], None],
    finish: Callable[[], T],
) -> Request[T]:
    """The parts' steps, up to `k` in flight (or `k()`, asked before each part is opened: the engine's share for
    this request); `done(i, result)` as each part and all before it are done (a result is not kept after: a
    window's audio is freed once its segments are taken); returns `finish()` once every part is done."""
    most = k if callable(k) else (lambda: k)
    active: dict[int, tuple[int, Steps[P]]] = {}  # id(need) -> the part waiting for it
    needs: dict[int, Need] = {}
    results: dict[int, P] = {}  # parts done, waiting for those before them
    reported = 0  # parts passed to `done`
    opened = 0
    exhausted = False

    def settle(i: int, steps: Steps[P], value: list[list[Decoded]] | None) -> None:
        nonlocal reported
        try:
            need = steps.send(value)  # type: ignore[arg-type]  # None starts a fresh generator
        except StopIteration as stop:
            results[i] = stop.value
            while reported in results:
                done(reported, results.pop(reported))
                reported += 1
            return
        active[id(need)], needs[id(need)] = (i, steps), need

    while True:
        if not exhausted and len(active) < max(1, most()):
            part = next(parts, None)
            if part is None:
                exhausted = True
            else:
                settle(opened, part, None)
                opened += 1
        if exhausted and not active:
            return finish()
        answer = yield Pending(tuple(needs.values()), more=not exhausted and len(active) < max(1, most()))
        if answer is None:
            continue
        need, decoded = answer
        i, steps = active.pop(id(need))
        del needs[id(need)]
        settle(i, steps, decoded)


def run_alone(request: Request[T]) -> T:
    """What `request` returns, each need decoded at once by itself, in the order it was asked for."""
    try:
        pending = next(request)
        while True:
            if pending.more:
                pending = request.send(None)
                continue
            need = pending.needs[0]
            pending = request.send((need, decode_once(need.settings, need.jobs, need.items, need.rests)))
    except StopIteration as stop:
        return stop.value
