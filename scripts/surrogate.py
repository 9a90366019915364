"""A simulated measurer: each layer's speed predicted from real measurements of it.

Searcher settings are hard to compare on the machine: one seed per setting, and timings
that move by 10% between sessions, decide most per-layer verdicts (docs/results/gga.md).
A surrogate replaces the machine by a model of one layer's speed, fitted on every real
measurement of that layer the databases hold (thousands of configs from several searchers'
runs), so that searchers can be run over many seeds in minutes and compared in trials.

It is a simulation, and everything it writes says so: results carry the measurer name
``surrogate-simulated``. Its figures say how searchers behave on a smooth model of the
layer, not how fast they tune on the machine; a setting it favours still has to be run on
the machine. ``accuracy`` says how well the model ranks configs it was not fitted on.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from history.store import HistoryStore
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.tl.features import FeatureEncoder
from plugins.tuna.metrics import spearman

NAME = "surrogate-simulated"


@dataclass(frozen=True)
class LayerData:
    """Every config of one layer measured in the databases, with its median GFLOPS over
    all its successful timings (configs that never ran are left out)."""

    task: Task
    configs: tuple[Config, ...]
    gflops: np.ndarray
    records: int  # successful measurements read


def layer_data(task: Task, target: TargetInfo, dbs: Sequence[Path]) -> LayerData:
    """Read ``task``'s successful measurements on ``target`` from every database."""
    by_key: dict[str, tuple[Config, list[float]]] = {}
    records = 0
    for db in dbs:
        store = HistoryStore.open(db, create=False)
        try:
            for r in store.reader().results(task, target):
                if r.ok:
                    records += 1
                    by_key.setdefault(r.config.key, (r.config, []))[1].append(r.gflops(task.flops))
        finally:
            store.close()
    configs = tuple(c for c, _ in by_key.values())
    gflops = np.asarray([float(np.median(g)) for _, g in by_key.values()], dtype=np.float64)
    return LayerData(task, configs, gflops, records)


class Surrogate:
    """A boosted-tree regression of log GFLOPS on a space's knob features. Shallow trees
    (depth 4) ranked held-out configs best of the settings tried on two layers (depths
    4-12): deeper ones fit the timing noise of single configs."""

    def __init__(self, space: Space, seed: int = 0, rounds: int = 600,
                 measured_first: bool = False) -> None:
        self.encoder = FeatureEncoder.for_space(space)
        self.seed, self.rounds = seed, rounds
        self.booster = None
        # measured_first: a config measured on the machine answers with its measured
        # median, the model answers only for the others
        self.measured_first = measured_first
        self.known: dict[str, float] = {}

    def fit(self, configs: Sequence[Config], gflops: np.ndarray) -> Surrogate:
        import xgboost as xgb

        x = self.encoder.matrix(list(configs))
        d = xgb.DMatrix(x, label=np.log(gflops))
        params = {"objective": "reg:squarederror", "max_depth": 4, "eta": 0.05,
                  "subsample": 0.8, "colsample_bytree": 0.8, "min_child_weight": 2.0,
                  "nthread": 2, "seed": self.seed, "verbosity": 0, "tree_method": "hist"}
        self.booster = xgb.train(params, d, num_boost_round=self.rounds)
        if self.measured_first:
            self.known = {c.key: float(g) for c, g in zip(configs, gflops)}
        return self

    def gflops(self, configs: Sequence[Config]) -> np.ndarray:
        import xgboost as xgb

        if self.booster is None:
            raise RuntimeError("Surrogate.gflops before fit")
        x = self.encoder.matrix(list(configs))
        out = np.exp(self.booster.predict(xgb.DMatrix(x)).astype(np.float64))
        for i, c in enumerate(configs):
            if c.key in self.known:
                out[i] = self.known[c.key]
        return out


@dataclass(frozen=True)
class Accuracy:
    """How well a surrogate fitted on 4/5 of a layer's configs ranks the other fifth."""

    spearman: float  # median over the folds
    top_share: float  # held-out true best / true GFLOPS of the config the model ranks first
    median_error: float  # median |predicted / measured - 1|


def accuracy(space: Space, data: LayerData, folds: int = 5, seed: int = 0) -> Accuracy:
    idx = list(range(len(data.configs)))
    random.Random(seed).shuffle(idx)
    rho, share, err = [], [], []
    for f in range(folds):
        test = idx[f::folds]
        train = sorted(set(idx) - set(test))
        model = Surrogate(space, seed).fit([data.configs[i] for i in train], data.gflops[train])
        pred = model.gflops([data.configs[i] for i in test])
        true = data.gflops[test]
        rho.append(spearman(pred.tolist(), true.tolist()))
        share.append(float(true[int(np.argmax(pred))] / true.max()))
        err.extend(np.abs(pred / true - 1.0).tolist())
    return Accuracy(float(np.median(rho)), float(np.median(share)), float(np.median(err)))


class SurrogateMeasurer:
    """Answers each config with the surrogate's GFLOPS as one latency sample, times a
    log-normal factor of spread ``noise`` (0: exact). Simulated: nothing is built or run."""

    name = NAME

    def __init__(self, models: dict[str, Surrogate], noise: float = 0.0, seed: int = 0) -> None:
        self.models = models  # task key -> its surrogate
        self.noise = noise
        self.rng = np.random.default_rng(seed)
        self.measured: list[Config] = []  # every config answered, in order

    def true_gflops(self, task: Task, configs: Sequence[Config]) -> np.ndarray:
        return self.models[task.key].gflops(configs)

    def measure(self, space: Space, target: TargetInfo,
                configs: Sequence[Config]) -> list[MeasureResult]:
        if not configs:
            return []
        g = self.true_gflops(space.task, configs)
        self.measured.extend(configs)
        if self.noise:
            g = g * np.exp(self.rng.normal(0.0, self.noise, len(g)))
        return [MeasureResult(c, MeasureStatus.OK, (space.task.flops / (v * 1e9),), measurer=NAME)
                for c, v in zip(configs, g)]

    def close(self) -> None:
        pass
