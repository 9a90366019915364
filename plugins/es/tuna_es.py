"""``tuna-es``: the evolution strategy of Tuna (Algorithm 4) over the unit cube of knobs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from orchestrator.options import number, whole
from plugins.es.population import PopulationSearcher, Positions, StrategySetup


def centered_ranks(values: Sequence[float]) -> np.ndarray:
    """Fitness shaping: ranks scaled to [-0.5, 0.5], ties sharing their mean rank.

    Ranks make the update independent of the fitness scale and let failures (-inf)
    count as the worst rank instead of breaking the sum.
    """
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 2:
        return np.zeros(n)
    order = np.argsort(x, kind="stable")
    ranks = np.empty(n)
    ranks[order] = np.arange(n, dtype=float)
    for value in np.unique(x):
        tied = x == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return ranks / (n - 1) - 0.5


class TunaStrategy:
    """theta <- theta + lr / (n * sigma) * sum_i F_i * eps_i, with mirrored noise.

    ``theta`` lives in the unit cube (one axis per knob); a member
    ``theta + sigma * eps_i`` is decoded to the nearest knob positions. Without a
    warm start (the best config in history), the first generation is a scouting
    population of random valid configs and ``theta`` starts at the best of them; a
    random single start too often lands on a plateau the mirrored noise cannot leave.
    A restart scouts again.
    """

    def __init__(self, setup: StrategySetup, *, lr: float, sigma: float, population: int) -> None:
        self.setup, self.lr, self.sigma = setup, lr, sigma
        self.half = max(1, (population + 1) // 2)
        self.rng = np.random.default_rng(np.random.SeedSequence([setup.seed, 0x7E5]))
        dim = setup.encoding.dim
        self.theta = (setup.encoding.to_unit(setup.start) if setup.start is not None
                      else np.full(dim, 0.5))
        self.scouting = setup.start is None
        self._eps: np.ndarray | None = None

    def ask(self) -> list[Positions]:
        if self.scouting:
            scouts = [self.setup.sample() for _ in range(2 * self.half)]
            found = [p for p in scouts if p is not None]
            return found or [self.setup.encoding.from_unit(self.theta)]
        half = self.rng.standard_normal((self.half, self.setup.encoding.dim))
        self._eps = np.concatenate([half, -half])
        decode = self.setup.encoding.from_unit
        return [decode(self.theta + self.sigma * e) for e in self._eps]

    def tell(self, fitness: Sequence[float], repaired: Sequence[Positions | None]) -> None:
        if self.scouting:
            self.scouting = False
            best = int(np.argmax(fitness))
            if repaired[best] is not None:
                self.theta = self.setup.encoding.to_unit(repaired[best])
            return
        assert self._eps is not None and len(fitness) == len(self._eps)
        shaped = centered_ranks(fitness)
        step = self.lr / (len(shaped) * self.sigma) * (shaped @ self._eps)
        self.theta = np.clip(self.theta + step, 0.0, 1.0)

    def restart(self) -> None:
        self.scouting = True


class TunaES(PopulationSearcher):
    """Tuna's evolution strategy (Algorithm 4) on knob indices relaxed to [0, 1]."""

    name = "tuna-es"

    def __init__(self, *, lr: float = 0.1, sigma: float = 0.15, population: int = 8,
                 use_model: bool = True, model_generations: int = 5, workers: int = 1) -> None:
        n = self.owner()
        super().__init__(**self.model_options(use_model, model_generations, workers))
        self.lr = number(n, "lr", lr, 0.0, low_open=True)
        self.sigma = number(n, "sigma", sigma, 0.0, low_open=True)
        self.population = whole(n, "population", population, 2)

    def make_strategy(self, setup: StrategySetup) -> TunaStrategy:
        return TunaStrategy(setup, lr=self.lr, sigma=self.sigma, population=self.population)
