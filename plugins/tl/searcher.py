"""Model-guided searchers: ``xgb`` (AutoTVM's XGBoost tuner, no history) and ``tl``
(the same tuner trained on filtered history of other tasks plus its own measurements)."""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from history.similarity import history_results
from orchestrator.components import SearchContext
from orchestrator.options import (as_bool, coerce_options, describe_options, number, one_of,
                                  owner_name, whole)
from orchestrator.result import MeasureResult
from orchestrator.space import Config
from plugins.tl.features import FeatureEncoder, IndexEncoder
from plugins.tl.history_filter import FeatureImportance, select_similar, weighted_similarity
from plugins.tl.model import BoosterParams, RankModel, performances
from plugins.tl.optimizer import AnnealParams, anneal, rank_configs, sample_pool

log = logging.getLogger(__name__)

_MAX_SAMPLE_MISSES = 2000
OPTIMIZERS = ("sa", "pool")


class ModelSearcher:
    """AutoTVM's XGBoost tuner: a rank model on knob features picks the next ``plan_size``
    configs (simulated annealing over the space, or ranking a random pool), retrained
    every ``plan_size`` measurements; an ``epsilon`` share of proposals is random, and so
    is everything before the first fit."""

    name = "xgb"  # the name its option errors give it
    uses_history = False

    def __init__(self, plan_size: int = 64, optimizer: str = "sa", epsilon: float = 0.05,
                 rounds: int = 100, max_depth: int = 3, sa_chains: int = 128,
                 sa_iters: int = 500, sa_early_stop: int = 50, pool_size: int = 2048) -> None:
        owner = owner_name("searcher", self.name)
        self.plan_size = whole(owner, "plan_size", plan_size, 1)
        self.optimizer = one_of(owner, "optimizer", optimizer, OPTIMIZERS)
        self.epsilon = number(owner, "epsilon", epsilon, 0.0, 1.0)
        self.booster = BoosterParams(rounds=whole(owner, "rounds", rounds, 1),
                                     max_depth=whole(owner, "max_depth", max_depth, 1))
        self.anneal_params = AnnealParams(whole(owner, "sa_chains", sa_chains, 1),
                                          whole(owner, "sa_iters", sa_iters, 1),
                                          whole(owner, "sa_early_stop", sa_early_stop, 1))
        self.pool_size = whole(owner, "pool_size", pool_size, 1)

    # -- Searcher protocol -------------------------------------------------------------
    def start(self, context: SearchContext) -> None:
        """Load this task's earlier results (and, for ``tl``, history) and fit if there is
        enough to learn from."""
        self.space, self.task, self.seed = context.space, context.task, context.seed
        self.rng = random.Random(context.seed)
        self.encoder = FeatureEncoder.for_space(self.space, with_task=self.uses_history)
        self.index_encoder = IndexEncoder.of(self.encoder, self.task)
        self.model = RankModel(self.booster, context.seed)
        self.seen: set[str] = set()
        self.own: list[MeasureResult] = []
        self.plan: list[Config] = []
        self.own_fits = 0
        self.fits = 0
        for r in context.prior:
            self._add(r)
        self._prepare_history(context)
        if self._due():
            self._refit()

    def propose(self, n: int) -> list[Config]:
        """Up to ``n`` unseen configs: the model's plan, or random ones."""
        out: list[Config] = []
        while len(out) < n:
            cfg = self._next_planned() if self.rng.random() >= self.epsilon else None
            cfg = cfg or self._random_unseen()
            if cfg is None:
                break
            self.seen.add(cfg.key)
            out.append(cfg)
        return out

    def tell(self, results: Sequence[MeasureResult]) -> None:
        """Add the results to the training data; refit every ``plan_size`` of them."""
        for r in results:
            self._add(r)
        if self._due():
            self._refit()

    def fit_now(self) -> None:
        """Fit on the results it holds, before its first ``plan_size`` of them: for a
        search handed over midway, whose first proposals would otherwise be random."""
        if self.own and not self.model.fitted:
            self._refit()

    # -- internals ---------------------------------------------------------------------
    def _add(self, r: MeasureResult) -> None:
        self.seen.add(r.config.key)
        self.own.append(r)

    def _due(self) -> bool:
        return len(self.own) >= self.plan_size * (self.own_fits + 1)

    def _prepare_history(self, context: SearchContext) -> None:
        """Hook for searchers that learn from other tasks."""

    def _training_set(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x = self.encoder.matrix([r.config for r in self.own], self.task)
        return x, performances(self.own), np.zeros(len(self.own), dtype=np.int64)

    def _refit(self) -> None:
        if len(self.own) >= self.plan_size * (self.own_fits + 1):
            self.own_fits = len(self.own) // self.plan_size
        x, perf, groups = self._training_set()
        self.model.fit(x, perf, groups)
        self.fits += 1
        self._after_fit()
        self.plan = self._maximize(self.plan_size) if self.model.fitted else []

    def _after_fit(self) -> None:
        """Hook called after every fit."""

    def _maximize(self, n: int) -> list[Config]:
        seed = self.seed * 7919 + self.fits
        if self.optimizer == "pool":
            pool = sample_pool(self.space, self.pool_size, self.seen, seed)
            return rank_configs(self.space, self._score_configs, pool, n, self.seen)
        best_own = sorted((r for r in self.own if r.ok), key=lambda r: r.latency)
        starts = [r.config for r in best_own[:self.anneal_params.chains // 4]]
        return anneal(self.space, self._score_indices, n, self.seen, seed, starts,
                      self.anneal_params)

    def _score_indices(self, idx: np.ndarray) -> np.ndarray:
        return self.model.predict(self.index_encoder.matrix(idx))

    def _score_configs(self, configs: list[Config]) -> np.ndarray:
        return self.model.predict(self.encoder.matrix(configs, self.task))

    def _next_planned(self) -> Config | None:
        while self.plan:
            cfg = self.plan.pop(0)
            if cfg.key not in self.seen:
                return cfg
        return None

    def _random_unseen(self) -> Config | None:
        if self.space.candidates is not None:
            fresh = [c for c in self.space.candidates if c.key not in self.seen]
            return self.rng.choice(fresh) if fresh else None
        for _ in range(_MAX_SAMPLE_MISSES):
            cfg = self.space.sample(self.rng)
            if cfg is None:
                return None
            if cfg.key not in self.seen:
                return cfg
        return None


class XGBSearcher(ModelSearcher):
    """AutoTVM's XGBoost tuner without history: rank loss, simulated annealing, plans of
    64 configs, retrained every 64 measurements (options: plan_size, optimizer=sa|pool,
    epsilon, rounds, max_depth, sa_chains, sa_iters, sa_early_stop, pool_size)."""


class TransferSearcher(ModelSearcher):
    """Transfer-learning tuner (Mu et al., section III-A): the XGBoost rank model is
    trained on history of other tasks of the same operator plus this task's
    measurements, on knob features concatenated with each task's specification. With
    ``filter`` (the default) only the history records most similar to this task are
    used, similarity weighted by feature importance (moving average of the trees' split
    counts); ``filter=false`` uses all of it. Without history it is the ``xgb`` tuner.

    Options: those of ``xgb`` plus ``filter`` (true), ``keep`` (0.25: share of history
    kept), ``min_keep`` (64 records), ``importance_decay`` (0.3), ``references`` (64:
    how many of this task's best configs the history is compared with).
    """

    name = "tl"
    uses_history = True

    def __init__(self, filter: bool = True, keep: float = 0.25, min_keep: int = 64,
                 importance_decay: float = 0.3, references: int = 64, **options: Any) -> None:
        own = [name for name, _, _ in describe_options(TransferSearcher)[0]]
        owner = owner_name("searcher", self.name)
        super().__init__(**coerce_options(owner, ModelSearcher, options, also=own))
        self.keep = number(owner, "keep", keep, 0.0, 1.0, low_open=True)
        self.filter = as_bool(owner, "filter", filter)
        self.min_keep = whole(owner, "min_keep", min_keep, 0)
        self.importance = FeatureImportance(number(owner, "importance_decay", importance_decay,
                                                   0.0, 1.0))
        self.references = whole(owner, "references", references, 1)

    def _prepare_history(self, context: SearchContext) -> None:
        records = (history_results(context.history, self.task.op, context.target, exclude=self.task)
                   if context.history is not None else [])
        self.hist_x = self.encoder.matrix([r.config for _, r in records], [t for t, _ in records])
        self.hist_perf = performances([r for _, r in records])
        task_ids: dict[str, int] = {}
        self.hist_groups = np.asarray(
            [task_ids.setdefault(t.key, len(task_ids) + 1) for t, _ in records], dtype=np.int64)
        self.hist_selected = np.arange(len(records))
        if len(records) and self.filter:
            probe = RankModel(self.booster, self.seed)
            probe.fit(self.hist_x, self.hist_perf, self.hist_groups)
            self.importance.update(probe.split_counts())
        log.info("tl: %d history records of %d tasks for %s", len(records), len(task_ids),
                 self.task.label())

    def _due(self) -> bool:
        return super()._due() or (self.fits == 0 and len(self.hist_x) > 0)

    def _select_history(self) -> np.ndarray:
        if not self.filter or len(self.hist_x) == 0:
            return np.arange(len(self.hist_x))
        own_ok = sorted((r for r in self.own if r.ok), key=lambda r: r.latency)[:self.references]
        refs = self.encoder.matrix([r.config for r in own_ok], self.task)
        if not len(refs):  # nothing measured yet: compare task specifications only
            refs = np.asarray([self.encoder.encode(Config(()), self.task)], dtype=np.float64)
        sim = weighted_similarity(self.hist_x, refs, self.importance.weights(self.encoder.width))
        return select_similar(sim, self.keep, self.min_keep)

    def _training_set(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x, perf, groups = super()._training_set()
        self.hist_selected = sel = self._select_history()
        return (np.vstack([self.hist_x[sel], x]), np.concatenate([self.hist_perf[sel], perf]),
                np.concatenate([self.hist_groups[sel], groups]))

    def _after_fit(self) -> None:
        if self.filter and self.model.fitted:
            self.importance.update(self.model.split_counts())
