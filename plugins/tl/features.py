"""Feature vectors of configs for the XGBoost model: knob features, optionally followed
by the task's specification so that records of different shapes can share one model.

Per split knob: log2 of every factor (outermost first) and log2 of the inner tile (the
product of the inner factors). Per choice knob: the index of the value among the
knob's choices. Task specification: log2(1 + value) of every shape parameter, and
log2 of the task's FLOPs. A value the input's space does not know is NaN (XGBoost
treats it as missing).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from orchestrator.space import ChoiceKnob, Config, Knob, Space, SplitKnob
from orchestrator.task import Task


def _split_features(knob: SplitKnob, value: Any) -> list[float]:
    n = knob.parts + 1
    if not isinstance(value, tuple) or len(value) != knob.parts:
        return [math.nan] * n
    try:
        factors = [int(v) for v in value]
    except (TypeError, ValueError):
        return [math.nan] * n
    if min(factors) < 1:
        return [math.nan] * n
    return [math.log2(f) for f in factors] + [math.log2(math.prod(factors[1:]))]


def _choice_feature(knob: ChoiceKnob, value: Any) -> float:
    try:
        return float(knob.choices.index(value))
    except ValueError:
        return math.nan


@dataclass(frozen=True)
class FeatureEncoder:
    """Encodes configs of one space (and of other tasks with the same knobs)."""

    knobs: tuple[Knob, ...]
    params: tuple[str, ...] = ()

    @classmethod
    def for_space(cls, space: Space, with_task: bool = False) -> FeatureEncoder:
        return cls(space.knobs, tuple(name for name, _ in space.task.shape) if with_task else ())

    @property
    def names(self) -> list[str]:
        out: list[str] = []
        for k in self.knobs:
            if isinstance(k, SplitKnob):
                out += [f"{k.name}[{i}]" for i in range(k.parts)] + [f"{k.name}.tile"]
            else:
                out.append(k.name)
        if self.params:
            out += [f"task.{p}" for p in self.params] + ["task.flops"]
        return out

    @property
    def width(self) -> int:
        return len(self.names)

    def task_features(self, task: Task) -> list[float]:
        if not self.params:
            return []
        p = task.params
        vals = [math.log2(1 + p[name]) if name in p else math.nan for name in self.params]
        return vals + [math.log2(max(task.flops, 1))]

    def encode(self, config: Config, task: Task | None = None) -> list[float]:
        return self._knob_row(config) + self._task_row(task)

    def _knob_row(self, config: Config) -> list[float]:
        row: list[float] = []
        for k in self.knobs:
            value = config.get(k.name)
            if isinstance(k, SplitKnob):
                row += _split_features(k, value)
            else:
                row.append(_choice_feature(k, value))
        return row

    def _task_row(self, task: Task | None) -> list[float]:
        if not self.params:
            return []
        return self.task_features(task) if task is not None else [math.nan] * (len(self.params) + 1)

    def matrix(self, configs: Sequence[Config], tasks: Sequence[Task] | Task | None = None) -> np.ndarray:
        """One row per config; ``tasks`` is one task for all rows or one per row."""
        if isinstance(tasks, Task) or tasks is None:
            tasks = [tasks] * len(configs)  # type: ignore[list-item]
        # a history holds thousands of records of a few tasks: each task's row once (by
        # identity: ``tasks`` holds them, so no id is reused while this runs)
        task_rows: dict[int, list[float]] = {}
        rows = []
        for c, t in zip(configs, tasks, strict=True):
            if id(t) not in task_rows:
                task_rows[id(t)] = self._task_row(t)
            rows.append(self._knob_row(c) + task_rows[id(t)])
        return np.asarray(rows, dtype=np.float64).reshape(len(rows), self.width)


@dataclass(frozen=True)
class IndexEncoder:
    """Fast encoding of configs given as choice indices of a knob space (for annealing)."""

    tables: tuple[np.ndarray, ...]
    task_row: np.ndarray

    @classmethod
    def of(cls, encoder: FeatureEncoder, task: Task) -> IndexEncoder:
        tables = []
        for k in encoder.knobs:
            if isinstance(k, SplitKnob):
                tables.append(np.asarray([_split_features(k, c) for c in k.choices], dtype=np.float64))
            else:
                tables.append(np.arange(len(k.choices), dtype=np.float64).reshape(-1, 1))
        return cls(tuple(tables), np.asarray(encoder.task_features(task), dtype=np.float64))

    def matrix(self, indices: np.ndarray) -> np.ndarray:
        """Rows for an (n, knobs) integer array of choice indices."""
        parts = [t[indices[:, i]] for i, t in enumerate(self.tables)]
        if self.task_row.size:
            parts.append(np.broadcast_to(self.task_row, (len(indices), self.task_row.size)))
        return np.hstack(parts)
