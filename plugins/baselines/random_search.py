"""Random search: uniform samples of the space, never the same config twice."""

from __future__ import annotations

import random
from collections.abc import Sequence

from orchestrator.components import SearchContext
from orchestrator.result import MeasureResult
from orchestrator.space import Config

# Consecutive draws that only hit known configs before the space counts as exhausted.
_MAX_MISSES = 2000


class RandomSearch:
    """Uniform random sampling without repetition (seeded, reproducible)."""

    def start(self, context: SearchContext) -> None:
        self.space = context.space
        self.rng = random.Random(context.seed)
        self.seen = {r.config.key for r in context.prior}
        self._grid: list[Config] | None = None
        # A small space is shuffled once: exact sampling without replacement.
        if self.space.size <= 20000:
            grid = [c for c in self.space if c.key not in self.seen]
            self.rng.shuffle(grid)
            self._grid = grid

    def propose(self, n: int) -> list[Config]:
        out: list[Config] = []
        if self._grid is not None:
            while self._grid and len(out) < n:
                cfg = self._grid.pop()
                if cfg.key not in self.seen:
                    self.seen.add(cfg.key)
                    out.append(cfg)
            return out
        misses = 0
        while len(out) < n and misses < _MAX_MISSES:
            cfg = self.space.sample(self.rng)
            if cfg is None:
                break
            if cfg.key in self.seen:
                misses += 1
                continue
            self.seen.add(cfg.key)
            out.append(cfg)
        return out

    def tell(self, results: Sequence[MeasureResult]) -> None:
        self.seen.update(r.config.key for r in results)
