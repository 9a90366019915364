"""Static scores from features: the shared core of the cost model and the measurer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orchestrator.options import number, whole
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from plugins.tuna.arch import family
from plugins.tuna.cache import Entry
from plugins.tuna.coefficients import Coefficients, load
from plugins.tuna.engine import DEFAULT_TIMEOUT, FeatureEngine, check_opt_level
from plugins.tuna.features import Features


class StaticScorer:
    """Features (cached, parallel) -> predicted latency in seconds, per target family."""

    def __init__(self, *, workers: int | None = None, cache_dir: str | Path | None = None,
                 coefficients: str | Path | None = None,
                 timeout: float = DEFAULT_TIMEOUT, opt_level: int | None = None,
                 owner: str = "tuna") -> None:
        # Checked here, where the plugin's name is known (``owner``, as option errors name it).
        self.engine = FeatureEngine(
            workers=None if workers is None else whole(owner, "workers", workers, 0),
            cache_dir=cache_dir, timeout=number(owner, "timeout", timeout, 0.0, low_open=True),
            opt_level=check_opt_level(opt_level, owner))
        self.coefficients_path = coefficients
        self._coefficients: dict[str, Coefficients] = {}

    def coefficients(self, target: TargetInfo) -> Coefficients:
        fam = family(target)
        if fam not in self._coefficients:
            self._coefficients[fam] = load(fam, self.coefficients_path)
        return self._coefficients[fam]

    def entries(self, space: Space, target: TargetInfo,
                configs: Sequence[Config]) -> list[Entry]:
        return self.engine.features(space, target, configs)

    def seconds(self, target: TargetInfo, entry: Entry) -> float | None:
        """Predicted latency of an analyzed config; None for a failure."""
        if not isinstance(entry, Features):
            return None
        return self.coefficients(target).seconds(entry, target.clock_ghz)

    def close(self) -> None:
        self.engine.close()
