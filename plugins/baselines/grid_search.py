"""Grid search: every valid config of the space in a fixed order (for small spaces)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from orchestrator.components import SearchContext
from orchestrator.result import MeasureResult
from orchestrator.space import Config


class GridSearch:
    """Exhaustive enumeration in the space's order, skipping configs already in history."""

    def start(self, context: SearchContext) -> None:
        self.known = {r.config.key for r in context.prior}
        self._it: Iterator[Config] = iter(context.space)

    def propose(self, n: int) -> list[Config]:
        out: list[Config] = []
        for cfg in self._it:
            if cfg.key in self.known:
                continue
            self.known.add(cfg.key)
            out.append(cfg)
            if len(out) >= n:
                break
        return out

    def tell(self, results: Sequence[MeasureResult]) -> None:
        self.known.update(r.config.key for r in results)
