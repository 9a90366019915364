"""Gradient-boosted trees with a ranking objective (as AutoTVM's XGBoost cost model),
and the ``xgb`` cost model that wraps them in the CostModel protocol.

Training rows come in groups (one per task): the ranking loss only compares configs of
the same task, so tasks of very different speed can share one model. Labels are
throughputs normalized by the best of their group (failures 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from orchestrator.options import owner_name, whole
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from plugins.tl.features import FeatureEncoder


@dataclass(frozen=True)
class BoosterParams:
    """XGBoost settings (AutoTVM's defaults, with fewer rounds and one thread: the
    measurer's build workers use the other cores)."""

    rounds: int = 100
    max_depth: int = 3
    eta: float = 0.3
    gamma: float = 1e-4
    min_child_weight: float = 1.0
    objective: str = "rank:pairwise"
    nthread: int = 1

    def xgb_params(self, seed: int) -> dict[str, object]:
        params: dict[str, object] = {
            "objective": self.objective, "max_depth": self.max_depth, "eta": self.eta,
            "gamma": self.gamma, "min_child_weight": self.min_child_weight,
            "subsample": 1.0, "lambda": 1.0, "alpha": 0.0, "nthread": self.nthread,
            "seed": seed, "verbosity": 0, "tree_method": "hist",
        }
        if self.objective.startswith("rank:"):
            # One sampled pair per row, as the classic pairwise objective AutoTVM used.
            params.update(lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=1)
        return params


def normalized_labels(perf: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``perf`` divided by the best of its group (0 where the group has no success)."""
    out = np.zeros_like(perf, dtype=np.float64)
    for g in np.unique(groups):
        sel = groups == g
        top = perf[sel].max(initial=0.0)
        if top > 0:
            out[sel] = perf[sel] / top
    return out


class RankModel:
    """A boosted-tree model fitted on grouped rows; predicts a score, higher is better."""

    def __init__(self, params: BoosterParams | None = None, seed: int = 0) -> None:
        self.params = params or BoosterParams()
        self.seed = seed
        self.booster = None
        self.width = 0

    @property
    def fitted(self) -> bool:
        return self.booster is not None

    def fit(self, x: np.ndarray, perf: np.ndarray, groups: np.ndarray) -> None:
        """Fit on rows ``x`` with performances ``perf`` (calls per second, 0 = failed)
        in task ``groups``; a set without any success leaves the model unfitted."""
        import xgboost as xgb

        self.width = x.shape[1]
        if len(x) < 2 or not np.any(perf > 0):
            self.booster = None
            return
        order = np.argsort(groups, kind="stable")  # XGBoost wants each group contiguous
        x, perf, groups = x[order], perf[order], groups[order]
        dtrain = xgb.DMatrix(x, label=normalized_labels(perf, groups), missing=np.nan)
        if self.params.objective.startswith("rank:"):
            _, sizes = np.unique(groups, return_counts=True)
            dtrain.set_group(sizes)
        self.booster = xgb.train(self.params.xgb_params(self.seed), dtrain,
                                 num_boost_round=self.params.rounds)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Scores of rows ``x`` (zeros before the first successful fit)."""
        if self.booster is None or len(x) == 0:
            return np.zeros(len(x))
        return np.asarray(self.booster.inplace_predict(x, missing=np.nan), dtype=np.float64)

    def split_counts(self) -> np.ndarray:
        """How many times each feature splits a tree (zeros when unfitted)."""
        counts = np.zeros(self.width)
        if self.booster is None:
            return counts
        for name, n in self.booster.get_score(importance_type="weight").items():
            counts[int(name[1:])] = n  # features are named f0, f1, ...
        return counts


def performances(results: Sequence[MeasureResult]) -> np.ndarray:
    """Calls per second of each result (0 for failures)."""
    return np.asarray([1.0 / r.latency if r.ok else 0.0 for r in results], dtype=np.float64)


class XGBCostModel:
    """XGBoost cost model with a ranking loss on knob features (AutoTVM-style).

    ``fit`` is called by the loop with every result of the task so far and retrains
    from scratch; ``predict`` returns one score per config, higher is better (zeros until
    a fit saw a successful result).
    """

    def __init__(self, rounds: int = 100, max_depth: int = 3, seed: int = 0) -> None:
        owner = owner_name("cost model", "xgb")
        self.model = RankModel(BoosterParams(rounds=whole(owner, "rounds", rounds, 1),
                                             max_depth=whole(owner, "max_depth", max_depth, 1)),
                               seed)
        self._encoder: FeatureEncoder | None = None

    def _encoder_for(self, space: Space) -> FeatureEncoder:
        if self._encoder is None or self._encoder.knobs != space.knobs:
            self._encoder = FeatureEncoder.for_space(space)
        return self._encoder

    def fit(self, space: Space, results: Sequence[MeasureResult]) -> None:
        """Retrain on ``results`` (all of one task)."""
        enc = self._encoder_for(space)
        x = enc.matrix([r.config for r in results])
        self.model.fit(x, performances(results), np.zeros(len(results), dtype=np.int64))

    def predict(self, space: Space, configs: Sequence[Config]) -> list[float]:
        """One finite score per config, higher is better."""
        enc = self._encoder_for(space)
        return [float(s) for s in self.model.predict(enc.matrix(list(configs)))]
