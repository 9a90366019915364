"""The ``tuna`` cost model: static analysis of generated code, no measurement needed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orchestrator.options import owner_name
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo, resolve_target
from plugins.tuna.engine import DEFAULT_TIMEOUT
from plugins.tuna.scoring import StaticScorer

# What a config that cannot be built scores: finite, below every real prediction.
FAILED_SCORE = -1e30


class TunaCostModel:
    """Scores configs by static analysis of their assembly (Tuna, CPU part).

    ``predict`` returns minus the predicted latency in seconds (higher is better).
    ``fit`` learns nothing online: the coefficients are calibrated offline
    (``orchestrator calibrate --cost-model tuna``). Options: ``workers`` (analysis
    processes, 0 = in process), ``cache_dir``, ``coefficients`` (a JSON file),
    ``target`` (``host``), ``timeout`` (seconds per config), ``opt_level`` (LLVM's
    optimization level of the analyzed code; TVM's 3 by default; 2 is a little faster
    and less accurate).
    """

    def __init__(self, *, workers: int | None = None, cache_dir: str | Path | None = None,
                 coefficients: str | Path | None = None, target: str | TargetInfo = "host",
                 timeout: float = DEFAULT_TIMEOUT, opt_level: int | None = None) -> None:
        self.scorer = StaticScorer(workers=workers, cache_dir=cache_dir,
                                   coefficients=coefficients, timeout=timeout,
                                   opt_level=opt_level, owner=owner_name("cost model", "tuna"))
        self._target = target

    @property
    def target(self) -> TargetInfo:
        if not isinstance(self._target, TargetInfo):
            self._target = resolve_target(self._target)
        return self._target

    def fit(self, space: Space, results: Sequence[MeasureResult]) -> None:
        """Nothing to learn per task: the model is static."""

    def predict(self, space: Space, configs: Sequence[Config]) -> list[float]:
        if not configs:
            return []
        target = self.target
        out = []
        for entry in self.scorer.entries(space, target, configs):
            seconds = self.scorer.seconds(target, entry)
            out.append(FAILED_SCORE if seconds is None else -seconds)
        return out

    def close(self) -> None:
        self.scorer.close()
