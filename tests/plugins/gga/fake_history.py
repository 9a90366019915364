"""An in-memory HistoryReader over toy dense tasks (synthetic latencies), for the tests
of the history-driven searchers."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from orchestrator.components import SearchContext
from orchestrator.result import MeasureResult
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from orchestrator.testing import TOY_TASK, toy_results, toy_space
from orchestrator.testing.conformance import TOY_TARGET


def dense(m: int, k: int, n: int) -> Task:
    return Task.create("dense", {"M": m, "K": k, "N": n}, name=f"d{m}x{k}x{n}")


class FakeHistory:
    """``tasks``/``results`` of the HistoryReader protocol over given results."""

    def __init__(self, data: dict[Task, list[MeasureResult]]) -> None:
        self.data = data

    def tasks(self, op: str | None = None) -> list[Task]:
        return [t for t in self.data if op is None or t.op == op]

    def results(self, task: Task, target: TargetInfo | None = None,
                ok_only: bool = True) -> list[MeasureResult]:
        return [r for r in self.data.get(task, []) if r.ok or not ok_only]


def toy_history(tasks: Iterable[Task], n: int = 60, seed: int = 0) -> FakeHistory:
    """``n`` synthetic results of each task's toy space (read-only, shared by tests)."""
    return _toy_history(tuple(tasks), n, seed)


@functools.lru_cache(maxsize=None)
def _toy_history(tasks: tuple[Task, ...], n: int, seed: int) -> FakeHistory:
    return FakeHistory({t: toy_results(toy_space(t), n=n, seed=seed + i)
                        for i, t in enumerate(tasks)})


# Same divisors as the toy task's 64s: a history that matches it well (score 1).
NEAR = (dense(64, 64, 32), dense(32, 64, 64))
# Prime extents: nothing divides 64 (score 0.5 per knob for the record, see eq. 1).
FAR = (dense(61, 61, 61),)


def context(history: FakeHistory | None, seed: int = 0, prior: tuple = (),
            task: Task = TOY_TASK) -> SearchContext:
    return SearchContext(task, TOY_TARGET, toy_space(task), seed, None, prior, history=history)
