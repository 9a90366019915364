"""Tuning runs that take turns on the machine, batch by batch, each timed by its own clock.

On a shared machine whose speed drifts by a quarter between hours, runs made one after
the other are not timed alike. Here every run is a ``tune`` call in its own thread; a
baton passes between them after each measured batch (the loop's
``orchestrator_results_measured`` hook), so only the holder works and the others wait.
Each run's clock counts only its own turns: its setup, its searcher's start, proposing,
building, timing, recording and learning. A minute of slow machine then costs every run
about one batch.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.hookspecs import hookimpl
from orchestrator.manager import Plugins


class Baton:
    """Participants hold the machine one at a time, in a fixed rotation; one that leaves
    drops out of it."""

    def __init__(self, names: Sequence[str]) -> None:
        self._order = list(names)
        self._active = set(names)
        self._turn = 0
        self._cv = threading.Condition()

    def acquire(self, name: str) -> None:
        with self._cv:
            self._cv.wait_for(lambda: self._order[self._turn] == name)

    def release(self, name: str) -> None:
        """Pass the baton on to the next active participant (or keep it, if alone)."""
        with self._cv:
            if self._order[self._turn] == name:
                self._advance()

    def leave(self, name: str) -> None:
        with self._cv:
            self._active.discard(name)
            if self._order[self._turn] == name:
                self._advance()

    def _advance(self) -> None:
        n = len(self._order)
        for step in range(1, n + 1):
            i = (self._turn + step) % n
            if self._order[i] in self._active:
                self._turn = i
                break
        self._cv.notify_all()


@dataclass(frozen=True)
class Tick:
    """A run's progress after one of its turns: trials done, its own seconds so far."""

    trials: int
    seconds: float


def read_clock(path: Path) -> list[Tick]:
    """The ticks a clock file holds (none if it does not exist)."""
    if not path.exists():
        return []
    return [Tick(int(d["trials"]), float(d["seconds"]))
            for line in path.read_text().splitlines() if line.strip()
            for d in (json.loads(line),)]


class _TurnObserver:
    """Ends its thread's turn after each measured batch: stops the clock, writes a tick,
    passes the baton, waits for the next turn. Other threads' calls are ignored."""

    def __init__(self, name: str, baton: Baton, clock: Path) -> None:
        self.name, self.baton, self.clock = name, baton, clock
        ticks = read_clock(clock)
        self.seconds = ticks[-1].seconds if ticks else 0.0  # a resumed run's time so far
        self.thread: int | None = None
        self._since = 0.0

    def begin(self) -> None:
        self.thread = threading.get_ident()
        self.baton.acquire(self.name)
        self._since = time.perf_counter()

    def end(self) -> None:
        self.seconds += time.perf_counter() - self._since
        self.baton.leave(self.name)

    @hookimpl
    def orchestrator_results_measured(self, run: Any, results: Any, trials_done: int,
                                      best: Any) -> None:
        if threading.get_ident() != self.thread:
            return
        self.seconds += time.perf_counter() - self._since
        with self.clock.open("a") as f:
            f.write(json.dumps({"trials": trials_done, "seconds": round(self.seconds, 4)}) + "\n")
        self.baton.release(self.name)
        self.baton.acquire(self.name)
        self._since = time.perf_counter()


def take_turns(plugins: Plugins, runs: Sequence[tuple[str, Callable[[], object], Path]]) -> None:
    """Run every ``(name, job, clock_file)`` at once, taking turns batch by batch; each
    job calls ``tune`` with ``plugins``. Each turn appends a :class:`Tick` to its
    clock file (JSON lines). The first error of any job is raised once all have ended."""
    baton = Baton([name for name, _, _ in runs])
    errors: list[BaseException] = []
    observers = [_TurnObserver(name, baton, clock) for name, _, clock in runs]

    def body(observer: _TurnObserver, job: Callable[[], object]) -> None:
        observer.begin()
        try:
            job()
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)
        finally:
            observer.end()

    threads = []
    for observer, (name, job, clock) in zip(observers, runs, strict=True):
        clock.parent.mkdir(parents=True, exist_ok=True)
        plugins.pm.register(observer, name=f"turns-{name}-{id(observer)}")
        threads.append(threading.Thread(target=body, args=(observer, job), name=f"turns-{name}",
                                        daemon=True))  # Ctrl-C ends them: batches are committed
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for observer in observers:
            plugins.pm.unregister(observer)
    if errors:
        raise errors[0]
