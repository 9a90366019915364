"""Frozen descriptions of a tuning run, handed to observers and returned by ``tune``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from orchestrator.result import MeasureResult
from orchestrator.runoff import Runoff
from orchestrator.space import Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task


@dataclass(frozen=True)
class RunInfo:
    run_id: int
    task: Task
    target: TargetInfo
    space: Space
    searcher: str
    measurer: str
    space_generator: str
    pruners: tuple[str, ...]
    cost_model: str | None
    seed: int
    max_trials: int
    max_seconds: float | None
    early_stop: int | None
    resumed_trials: int = 0


@dataclass(frozen=True)
class TuneSummary:
    run: RunInfo
    trials: int
    measured: int
    reused: int
    best: MeasureResult | None
    statuses: dict[str, int]
    seconds: float  # the run's own (a run-off after it is not counted)
    stop_reason: str
    first_ok: MeasureResult | None = None
    retimed: int = 0  # measurements that timed a new best again (TuneOptions.confirm)
    measurer_counts: dict[str, int] = field(default_factory=dict)  # Measurer.counts
    extra: dict[str, Any] = field(default_factory=dict)
    runoff: Runoff | None = None  # TuneOptions.runoff: the contenders timed side by side
    searcher_note: str = ""  # the searcher's ``note`` (Searcher), "" without one

    @property
    def best_gflops(self) -> float:
        return self.best.gflops(self.run.task.flops) if self.best else 0.0

    @classmethod
    def count_statuses(cls, results: list[MeasureResult]) -> dict[str, int]:
        return dict(Counter(r.status.value for r in results))
