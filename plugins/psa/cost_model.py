"""The ``psa`` cost model: PSA's estimated latency L_total (equation 4) as a score."""

from __future__ import annotations

import math
from collections.abc import Sequence

from orchestrator.errors import TargetError
from orchestrator.gpus import GPUS
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo, resolve_target
from plugins.psa.analysis import Analyzer
from plugins.psa.penalties import PsaError

# Score of a config that cannot launch: finite, below every real prediction.
FAILED_SCORE = -1e30


class PsaCostModel:
    """Scores configs by PSA's analytical latency; needs a space with a kernel plan.

    ``predict`` returns minus the estimated latency in seconds (the CostModel protocol
    says higher is better); ``latencies`` returns the seconds themselves. ``fit`` is a
    no-op: PSA is a static formula with no learned parameters. Option ``target``: the
    GPU to analyse for (``cuda:h100``, a TargetInfo); by default the GPU of this machine,
    because ``predict`` is not told the target.
    """

    def __init__(self, *, target: str | TargetInfo = "cuda") -> None:
        self._target = target
        self._analyzer: Analyzer | None = None

    @property
    def target(self) -> TargetInfo:
        if not isinstance(self._target, TargetInfo):
            try:
                self._target = resolve_target(self._target)
            except TargetError as exc:
                if self._target != "cuda":
                    raise
                raise PsaError("cost model psa analyses for this machine's GPU unless told "
                               f"otherwise, and {exc.args[0].split(';')[0]}; create it with "
                               f"target='cuda:<{'|'.join(GPUS)}>'") from None
        return self._target

    def _for(self, space: Space) -> Analyzer:
        if self._analyzer is None or self._analyzer.space != space:
            self._analyzer = Analyzer(space, self.target, "cost model psa")
        return self._analyzer

    def fit(self, space: Space, results: Sequence[MeasureResult]) -> None:
        """Does nothing: PSA has no parameters to learn from measurements."""

    def latencies(self, space: Space, configs: Sequence[Config]) -> list[float]:
        """Estimated seconds per config (inf when a config cannot launch)."""
        if not configs:
            return []
        return self._for(space).latencies(configs)

    def predict(self, space: Space, configs: Sequence[Config]) -> list[float]:
        """One score per config: -L_total in seconds (higher is better)."""
        return [-lat if math.isfinite(lat) else FAILED_SCORE
                for lat in self.latencies(space, configs)]
