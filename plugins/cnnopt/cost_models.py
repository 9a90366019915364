"""The cost models ``cnnopt-analytical``, ``cnnopt-ml`` and ``cnnopt-hybrid``.

``predict`` returns minus the predicted seconds (higher is better, as the CostModel
protocol asks). The GPU is the ``target`` option (``cuda:h100``), else the target the
cnnopt space was generated for (its notes), else this machine's GPU.

``cnnopt-ml`` and ``cnnopt-hybrid`` read the offline model trained by
``orchestrator train --cost-model cnnopt-hybrid`` (or ``cnnopt-ml``) for that GPU (see
plugins/cnnopt/regression.py for where it is stored). Without a trained model they
learn online from the task's own measurements once ``min_online`` configs are measured,
and rank by the analytical estimate until then.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np

from orchestrator.gpus import GpuSpec, gpu_spec
from orchestrator.options import coerce_options, owner_name, whole
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo, resolve_target
from plugins.cnnopt.analytical import AnalyticalModel
from plugins.cnnopt.errors import CnnoptError
from plugins.cnnopt.features import matrix
from plugins.cnnopt.generator import target_from_notes
from plugins.cnnopt.regression import Forest, TrainedModel, load

# What a config the schema rejects scores: finite, below every real prediction.
FAILED_SCORE = -1e30
MIN_ONLINE = 8


class _GpuModel:
    def __init__(self, target: str | TargetInfo | None = None) -> None:
        self._target = target
        self._gpu: GpuSpec | None = None

    def gpu(self, space: Space) -> GpuSpec:
        if self._gpu is None:
            target = self._target or target_from_notes(space) or "cuda"
            info = target if isinstance(target, TargetInfo) else resolve_target(str(target))
            self._gpu = gpu_spec(info)
        return self._gpu

    @staticmethod
    def _require_cnnopt(space: Space, who: str) -> None:
        if space.generator != "cnnopt":
            raise CnnoptError(f"cost model {who} scores cnnopt spaces, not "
                              f"{space.generator!r} (use --space cnnopt)")


class AnalyticalCostModel(_GpuModel):
    """CNNOpt's analytical model: estimated time from data movement (global->shared and
    shared->register transactions), occupancy, concurrent blocks and waves.
    Options: ``target``. ``fit`` learns nothing."""

    name = "cnnopt-analytical"

    def fit(self, space: Space, results: Sequence[MeasureResult]) -> None:
        """Nothing to learn: the model is analytical."""

    def seconds(self, space: Space, configs: Sequence[Config]) -> list[float]:
        self._require_cnnopt(space, self.name)
        return AnalyticalModel(self.gpu(space)).estimate_configs(space, configs)

    def predict(self, space: Space, configs: Sequence[Config]) -> list[float]:
        return [-s if s != float("inf") else FAILED_SCORE for s in self.seconds(space, configs)]


class RegressionCostModel(_GpuModel):
    """A random forest of log latency on problem and tile sizes (``kind="ml"``) or on
    those plus the analytical features (``kind="hybrid"``, CNNOpt's model).
    Options: ``target``, ``model`` (a trained model file), ``min_online``, ``seed``."""

    def __init__(self, kind: str, *, target: str | TargetInfo | None = None,
                 model: str | Path | None = None, min_online: int = MIN_ONLINE,
                 seed: int = 0) -> None:
        super().__init__(target)
        self.kind = kind
        self.name = f"cnnopt-{kind}"
        self._path = model
        self._trained: TrainedModel | None = None
        self._loaded = False
        self._online: Forest | None = None
        owner = owner_name("cost model", self.name)
        self.min_online = whole(owner, "min_online", min_online, 1)
        self.seed = whole(owner, "seed", seed, 0)

    @classmethod
    def with_model(cls, model: TrainedModel,
                   target: str | TargetInfo | None = None) -> RegressionCostModel:
        """A cost model that uses ``model`` (already in memory) instead of a file."""
        out = cls(model.kind, target=target)
        out._trained, out._loaded = model, True
        return out

    def trained(self, space: Space) -> TrainedModel | None:
        """The offline model for the space's GPU (None when none was trained)."""
        if not self._loaded:
            self._trained = load(self.gpu(space).name, self.kind, self._path)
            self._loaded = True
        return self._trained

    def fit(self, space: Space, results: Sequence[MeasureResult]) -> None:
        """With an offline model: nothing (the paper's model is trained offline).
        Without one: fit a forest on this task's own measurements."""
        self._require_cnnopt(space, self.name)
        if self.trained(space) is not None:
            return
        best: dict[Config, float] = {}
        for r in results:
            if r.ok and r.latency < best.get(r.config, float("inf")):
                best[r.config] = r.latency
        if len(best) < self.min_online:
            return
        configs = list(best)
        x, ok = matrix(space, configs, self.kind, self.gpu(space))
        y = np.array([best[c] if k else np.nan for c, k in zip(configs, ok)])
        self._online = Forest(seed=self.seed).fit(x, y)

    def seconds(self, space: Space, configs: Sequence[Config]) -> list[float]:
        """Predicted seconds per config (inf for configs the schema rejects)."""
        self._require_cnnopt(space, self.name)
        model = self.trained(space)
        forest = model.forest if model is not None else self._online
        if forest is None:
            return AnalyticalModel(self.gpu(space)).estimate_configs(space, configs)
        x, ok = matrix(space, configs, self.kind, self.gpu(space))
        pred = forest.predict(x) if len(x) else np.zeros(0)
        return [float(p) if k else float("inf") for p, k in zip(pred, ok)]

    def predict(self, space: Space, configs: Sequence[Config]) -> list[float]:
        return [-s if s != float("inf") else FAILED_SCORE for s in self.seconds(space, configs)]


def _regression(kind: str, options: dict[str, object]) -> RegressionCostModel:
    made = partial(RegressionCostModel, kind)
    return made(**coerce_options(owner_name("cost model", f"cnnopt-{kind}"), made, options))


def ml_model(**options: object) -> RegressionCostModel:
    """``cnnopt-ml``: black-box forest on problem and tile sizes."""
    return _regression("ml", options)


def hybrid_model(**options: object) -> RegressionCostModel:
    """``cnnopt-hybrid``: forest on problem and tile sizes plus analytical features."""
    return _regression("hybrid", options)
