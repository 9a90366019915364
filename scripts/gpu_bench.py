"""Measure CUDA configs for the GPU reproduction scripts, resumably, through the history.

Every measurement goes into a history database; a rerun with the same database answers
what is already there from it and measures only the rest. That makes a long measuring
campaign resumable (stop it at a deadline, rerun to continue) and lets the reports be
recomputed on a machine without a GPU from an imported dataset (``--replay``): the
measurer is only started when something is missing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from orchestrator.errors import OrchestratorError
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo

# Kernels of a few to a few hundred microseconds: three repeats of at least 10 ms each
# give medians within a percent or two, at a fifth of the local measurer's default cost.
GPU_MEASURER_OPTIONS: dict[str, Any] = {"repeat": 3, "min_repeat_ms": 10}


class DeadlineReached(OrchestratorError):
    """The campaign's time is up; what was measured is in the database."""


class MissingMeasurements(OrchestratorError):
    """A replay needs a measurement the database does not hold."""


class Bench:
    """Seconds per config on one CUDA target, from the history or measured (once each)."""

    def __init__(self, target: TargetInfo, db: str, batch: int = 32, *,
                 replay: bool = False, deadline: float | None = None,
                 measurer: str = "cuda", options: dict[str, Any] | None = None,
                 plugins: Any = None) -> None:
        from history.store import HistoryStore

        self.target, self.batch, self.replay = target, batch, replay
        self.deadline = deadline  # time.monotonic() value, or None
        self.measurer_name = measurer
        self.options = dict(GPU_MEASURER_OPTIONS if options is None else options)
        self.store = HistoryStore.open(db)
        self.target_id = self.store.ensure_target(target)
        # task key and template -> config -> seconds (inf for a failure), loaded once each
        self.cache: dict[str, dict[Config, float]] = {}
        self.measured = 0     # by this process
        self.reused = 0       # answered from the history
        self._measurer: Any = None
        self._plugins = plugins  # where the measurer comes from (default: installed ones)

    def _known(self, space: Space) -> dict[Config, float]:
        """The task's results by the space's template, read from the history on first use."""
        key = f"{space.task.key} {space.template}"
        known = self.cache.get(key)
        if known is None:
            known = self.cache[key] = {}
            task_id = self.store.find_task(space.task)
            stored = [] if task_id is None else self.store.results(
                task_id, self.target_id, templates=space.reusable_templates)
            for r in stored:  # oldest first
                if r.measurer == self.measurer_name:
                    # The first measurement is the one a campaign used; later ones are
                    # re-timings (remeasure) and must not change a replayed report.
                    known.setdefault(r.config, r.latency if r.ok else math.inf)
        return known

    def known(self, space: Space, config: Config) -> float | None:
        """The latency already known for ``config`` (inf for a failure), else None."""
        return self._known(space).get(config)

    def measured_latencies(self, space: Space) -> dict[Config, float]:
        """Every known result of this space's task (a copy)."""
        return dict(self._known(space))

    def measure(self, space: Space, configs: Sequence[Config]) -> list[float]:
        """Seconds per config (inf for failures), in order; each config measured once."""
        known = self._known(space)
        todo = list(dict.fromkeys(c for c in configs if c not in known))
        self.reused += len(set(configs)) - len(todo)
        if todo and self.replay:
            raise MissingMeasurements(
                f"replay: the database lacks {len(todo)} measurement(s) of "
                f"{space.task.label()} on {self.target.arch}; import the dataset this report "
                "was made from, or measure on a GPU without --replay")
        task_id = self.store.ensure_task(space.task) if todo else 0
        for i in range(0, len(todo), self.batch):
            if self.deadline is not None and time.monotonic() > self.deadline:
                raise DeadlineReached(
                    f"deadline reached with {len(todo) - i} config(s) of "
                    f"{space.task.label()} left; rerun with the same --db to continue")
            chunk = todo[i:i + self.batch]
            results = self._measure(space, chunk)
            self.store.record(run_id=None, task_id=task_id, target_id=self.target_id,
                              results=results, template=space.template)
            self.measured += len(results)
            for r in results:
                known[r.config] = r.latency if r.ok else math.inf
        return [known[c] for c in configs]

    def _measure(self, space: Space, chunk: Sequence[Config]) -> list[MeasureResult]:
        if self._measurer is None:
            from orchestrator.manager import load_plugins

            plugins = self._plugins or load_plugins()
            self._measurer = plugins.create("measurer", self.measurer_name, **self.options)
        return self._measurer.measure(space, self.target, chunk)

    def remeasure(self, space: Space, config: Config) -> MeasureResult:
        """Measure ``config`` afresh (recorded too), e.g. beside another library's kernel."""
        task_id = self.store.ensure_task(space.task)
        result = self._measure(space, [config])[0]
        self.store.record(run_id=None, task_id=task_id, target_id=self.target_id,
                          results=[result], template=space.template)
        return result

    def close(self) -> None:
        if self._measurer is not None:
            self._measurer.close()
            self._measurer = None
        self.store.close()
