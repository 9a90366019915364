"""What a searcher knows: configs already seen and the fitness of those measured."""

from __future__ import annotations

import math
from collections.abc import Iterable

from orchestrator.result import MeasureResult
from orchestrator.space import Config

# Fitness of a failed or invalid config: below every measured one.
WORST = -math.inf


def fitness_of(result: MeasureResult) -> float:
    """Higher is better: ``-log(latency)``, or :data:`WORST` for a failure."""
    return -math.log(result.latency) if result.ok and result.latency > 0 else WORST


class Ledger:
    """Keys of every config proposed or in history, and the best fitness of each result."""

    def __init__(self, prior: Iterable[MeasureResult] = ()) -> None:
        self.seen: set[str] = set()
        self.fitness: dict[str, float] = {}
        self._best: tuple[float, Config] | None = None
        for r in prior:
            self.record(r)

    def record(self, result: MeasureResult) -> float:
        """Remember ``result``; returns the config's best fitness so far."""
        key = result.config.key
        value = max(fitness_of(result), self.fitness.get(key, WORST))
        self.fitness[key] = value
        self.seen.add(key)
        if value > WORST and (self._best is None or value > self._best[0]):
            self._best = (value, result.config)
        return value

    def fail(self, key: str) -> None:
        """Count a proposed config that never got a result as failed."""
        self.fitness.setdefault(key, WORST)
        self.seen.add(key)

    def known(self, key: str) -> bool:
        return key in self.fitness

    @property
    def best(self) -> Config | None:
        """The best measured config, if any measurement succeeded."""
        return self._best[1] if self._best else None
