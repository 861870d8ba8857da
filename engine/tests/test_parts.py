"""Several windows of one request in flight (decode/parts.py), on plain data: parts opened in order, each after the
one before reached its first need; `done` in order whatever order they finish in; the result as one at a time."""

from __future__ import annotations

from collections.abc import Iterator

from sori_engine.decode import parts, rounds


def _need() -> rounds.Need:
    item = rounds.Item(0, [{"start": 0, "end": 1}])
    return rounds.Need(settings=None, jobs=[], items=[item], rests=False)  # type: ignore[arg-type]


def _part(name: str, rounds_: int, log: list[str]) -> rounds.Steps[str]:
    log.append(f"open {name}")
    got = []
    for _ in range(rounds_):
        decoded = yield _need()
        got.append(len(decoded))
    log.append(f"end {name}")
    return f"{name}:{sum(got)}"


def _parts(spec: dict[str, int], log: list[str]) -> Iterator[rounds.Steps[str]]:
    for name, n in spec.items():
        yield _part(name, n, log)


def test_parts_open_in_order_and_are_done_in_order_whatever_finishes_first() -> None:
    log: list[str] = []
    done: list[tuple[int, str]] = []
    req = parts.concurrently(
        _parts({"a": 3, "b": 1, "c": 1}, log), 2, lambda i, r: done.append((i, r)), lambda: [r for _i, r in done]
    )
    pending = next(req)
    assert log == ["open a"] and pending.more  # b is opened only after a reached its first need
    pending = req.send(None)
    assert log == ["open a", "open b"] and len(pending.needs) == 2 and not pending.more
    b_need = pending.needs[1]
    pending = req.send((b_need, [[]]))  # b finishes first: not reported before a
    assert "end b" in log and done == []
    assert "open c" in log  # its place went to c
    while True:
        try:
            pending = req.send((pending.needs[0], [[]]) if not pending.more else None)
        except StopIteration as stop:
            result = stop.value
            break
    assert [i for i, _r in done] == [0, 1, 2]
    assert result == ["a:3", "b:1", "c:1"]


def test_run_alone_decodes_each_need_in_turn(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(parts, "decode_once", lambda _s, _j, items, _r: [[] for _ in items])
    log: list[str] = []
    out: list[str] = []
    req = parts.concurrently(_parts({"a": 2, "b": 2}, log), 3, lambda _i, r: out.append(r), lambda: out)
    assert parts.run_alone(req) == ["a:2", "b:2"]


def test_the_share_is_asked_before_each_part_opens() -> None:
    log: list[str] = []
    share = [1]
    req = parts.concurrently(_parts({"a": 1, "b": 1}, log), lambda: share[0], lambda _i, _r: None, lambda: None)
    pending = next(req)
    assert not pending.more  # a share of one: b waits for a
    share[0] = 2
    pending = req.send(None)
    assert log == ["open a", "open b"]


def test_the_scheduler_decodes_each_item_once_with_windows_in_flight_on_two_decoders() -> None:
    """Plain data through the scheduler: three parts of two rounds each, two decoders. A need whose answer waits
    while its request's stages run is listed again by the request: it must not be decoded twice."""
    import threading
    import time

    from sori_engine.decode_options import DecodeOptions
    from sori_engine.scheduler import Scheduler, SchedulerOptions

    settings = rounds.Settings(model=None, prompting=None, options=DecodeOptions())  # type: ignore[arg-type]
    decoded: list[int] = []

    def part(name: str) -> rounds.Steps[str]:
        for r in range(2):
            items = [rounds.Item(0, [{"start": i, "end": i + 1}]) for i in range(3 + r)]
            yield rounds.Need(settings, [None], items, rests=False)  # type: ignore[list-item]
            time.sleep(0.01)  # a CPU stage, while the other parts' passes decode
        return name

    def decode(_s, _jobs, items, _rests):  # type: ignore[no-untyped-def]
        time.sleep(0.005)
        decoded.extend(range(len(items)))
        return [[] for _ in items]

    finished: dict[str, object] = {}
    woken = threading.Event()
    scheduler = Scheduler(
        SchedulerOptions(jobs=1, stage_threads=1, decoders=2, gather_s=0.0),
        lambda rid, result, error: finished.update({rid: error or result}),
        woken.set,
        decode,
    )
    names: list[str] = []
    three = iter([part("a"), part("b"), part("c")])
    scheduler.submit("r", lambda: parts.concurrently(three, 3, lambda _i, r: names.append(r), lambda: names))
    while not scheduler.idle:
        if not scheduler.step():
            woken.wait(0.05)
            woken.clear()
    scheduler.shutdown()
    assert finished == {"r": ["a", "b", "c"]}
    assert len(decoded) == 3 * (3 + 4)  # every item once
    assert scheduler.most_at_once == 2
