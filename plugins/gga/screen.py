"""Screening gga's children with a rank model before they are measured (``screen=K``).

Not in the paper. gga breeds K times as many children as it measures, and a boosted-tree
rank model (``plugins.tl.model``, the one ``tl`` and ``xgb`` use) keeps the ones it ranks
highest. The model learns from the history records gga already scored (each in its own
task's group, with the task's shape as features) and from this task's measurements, and
is fitted again after every generation. The children are still made only by guided
crossover and guided mutation; the model decides which of them are worth a build.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from history.similarity import ScoredRecord, group_by_task
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from plugins.tl.features import FeatureEncoder
from plugins.tl.model import BoosterParams, RankModel, performances

_OWN_GROUP = 0  # history tasks are groups 1, 2, ...


def spread_rows(records: Iterable[ScoredRecord], rows: int) -> list[ScoredRecord]:
    """At most ``rows`` of ``records``, shared equally among their tasks (a task with
    fewer records than its share gives the rest to the others), each task's share spread
    evenly over its records from the fastest down: a sample that keeps every task's range
    of speeds, where the ``rows`` best by filtering metric are the fastest configs of the
    closest tasks only. Tasks keep their order of first appearance."""
    groups = [sorted(g, key=lambda r: -r.gflops) for g in group_by_task(records).values()]
    quota = [0] * len(groups)
    left = max(0, rows)
    # smallest task first, each its share of what is left (rounded up), so a small task's
    # unused share passes to the larger ones
    order = sorted(range(len(groups)), key=lambda i: len(groups[i]))
    for k, i in enumerate(order):
        quota[i] = min(len(groups[i]), -(-left // (len(order) - k)))
        left -= quota[i]
    out: list[ScoredRecord] = []
    for g, q in zip(groups, quota):
        out.extend(g[k * len(g) // q] for k in range(q))
    return out


class ChildScreen:
    """A rank model over history of other tasks plus this task's results."""

    def __init__(self, space: Space, history: Sequence[ScoredRecord], seed: int,
                 params: BoosterParams | None = None) -> None:
        self.task = space.task
        self.encoder = FeatureEncoder.for_space(space, with_task=True)
        self.model = RankModel(params, seed)
        groups: dict[str, int] = {}
        self.hist_x = self.encoder.matrix([h.result.config for h in history],
                                          [h.task for h in history])
        self.hist_perf = performances([h.result for h in history])
        self.hist_groups = np.asarray([groups.setdefault(h.task.key, len(groups) + 1)
                                       for h in history], dtype=np.int64)

    def fit(self, own: Sequence[MeasureResult]) -> None:
        """Fit again on the history and ``own`` (this task's results so far)."""
        x = self.encoder.matrix([r.config for r in own], self.task)
        self.model.fit(
            np.vstack([self.hist_x, x]) if len(own) else self.hist_x,
            np.concatenate([self.hist_perf, performances(own)]),
            np.concatenate([self.hist_groups,
                            np.full(len(own), _OWN_GROUP, dtype=np.int64)]))

    @property
    def ready(self) -> bool:
        return self.model.fitted

    def best(self, configs: Sequence[Config], count: int) -> list[Config]:
        """The ``count`` of ``configs`` the model ranks highest, best first (ties keep
        the given order); the first ``count`` as given before any successful fit."""
        if not self.ready or not configs:
            return list(configs[:count])
        scores = self.model.predict(self.encoder.matrix(list(configs), self.task))
        return [configs[int(i)] for i in np.argsort(-scores, kind="stable")[:count]]
