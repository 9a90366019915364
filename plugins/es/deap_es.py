"""``deap-es``: a self-adaptive (mu + lambda) or (mu, lambda) evolution strategy with DEAP."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from deap import algorithms, base, tools

from orchestrator.errors import OrchestratorError
from plugins.es.deap_support import Individual, module_random
from plugins.es.options import as_choice, as_float, as_int, reject_unknown
from plugins.es.population import PopulationSearcher, Positions, StrategySetup

# Largest step size on the unit cube; the smallest is half a choice of each knob, since
# smaller steps would only ever decode to the parent's own config.
MAX_STEP = 0.5


class ESStrategy:
    """Individuals are points of the unit cube with one step size per knob.

    Offspring come from DEAP's ``varOr``: blend crossover (``cxESBlend``) or log-normal
    self-adaptive mutation (``mutESLogNormal``). Repair is Baldwinian: a member is
    scored at its nearest valid config but keeps its point.
    """

    def __init__(self, setup: StrategySetup, *, mu: int, lambda_: int, plus: bool,
                 sigma: float, cxpb: float, mutpb: float) -> None:
        self.setup, self.mu, self.lambda_, self.plus = setup, mu, lambda_, plus
        self.sigma, self.cxpb, self.mutpb = sigma, cxpb, mutpb
        self.rng = random.Random(f"{setup.seed}:deap-es")
        self.min_step = [0.5 / n for n in setup.encoding.sizes]
        self.toolbox = base.Toolbox()
        self.toolbox.register("mate", tools.cxESBlend, alpha=0.1)
        self.toolbox.register("mutate", tools.mutESLogNormal, c=1.0, indpb=0.5)
        self.population: list[Individual] = []
        self._offspring: list[Individual] = []
        self._keep: list[Individual] = []
        self._seeded = setup.start

    def _random(self) -> Individual:
        positions = self._seeded if self._seeded is not None else self.setup.sample()
        self._seeded = None
        encoding = self.setup.encoding
        point = (encoding.to_unit(positions) if positions is not None
                 else [self.rng.random() for _ in range(encoding.dim)])
        return Individual((float(x) for x in point), [self.sigma] * encoding.dim)

    def _bound(self, ind: Individual) -> Individual:
        ind[:] = [min(1.0, max(0.0, x)) for x in ind]
        assert ind.strategy is not None
        ind.strategy = [min(MAX_STEP, max(lo, s)) for lo, s in zip(self.min_step, ind.strategy)]
        return ind

    def ask(self) -> list[Positions]:
        if not self.population:
            self._offspring = [self._random() for _ in range(self.mu)]
        else:
            with module_random(self.rng):
                # Crossover needs two parents (mu may be 1).
                cxpb = self.cxpb if len(self.population) > 1 else 0.0
                children = algorithms.varOr(self.population, self.toolbox, self.lambda_,
                                            cxpb, self.mutpb)
            # varOr returns reproduced parents uncloned; clone so scoring leaves parents alone.
            self._offspring = [self._bound(self.toolbox.clone(c)) for c in children]
        return [self.setup.encoding.from_unit(ind) for ind in self._offspring]

    def tell(self, fitness: Sequence[float], repaired: Sequence[Positions | None]) -> None:
        for ind, value in zip(self._offspring, fitness, strict=True):
            ind.fitness.values = (value,)
        if not self.population:
            pool, self._keep = self._offspring + self._keep, []
        elif self.plus:
            pool = self.population + self._offspring
        else:
            pool = self._offspring
        self.population = tools.selBest(pool, self.mu)

    def restart(self) -> None:
        """A fresh random population; in (mu + lambda) mode the best individual survives."""
        self._keep = tools.selBest(self.population, 1) if self.plus else []
        self.population = []


class DeapES(PopulationSearcher):
    """(mu + lambda) or (mu, lambda) evolution strategy (DEAP) with self-adaptive steps."""

    name = "deap-es"

    def __init__(self, *, mu: Any = 6, lambda_: Any = 12, mode: Any = "plus",
                 sigma: Any = 0.2, cxpb: Any = 0.3, mutpb: Any = 0.6, use_model: Any = True,
                 model_generations: Any = 5, workers: Any = 1, **unknown: Any) -> None:
        # The CLI spells the option lambda (a Python keyword) or lambda_.
        if "lambda" in unknown:
            lambda_ = unknown.pop("lambda")
        reject_unknown(self.name, DeapES, unknown)
        n = self.name
        super().__init__(**self.model_options(use_model, model_generations, workers))
        self.mu = as_int(n, "mu", mu, low=1)
        self.lambda_ = as_int(n, "lambda", lambda_, low=2)
        self.plus = as_choice(n, "mode", mode, ("plus", "comma")) == "plus"
        self.sigma = as_float(n, "sigma", sigma, low=0.0, high=MAX_STEP, low_open=True)
        self.cxpb = as_float(n, "cxpb", cxpb, low=0.0, high=1.0)
        self.mutpb = as_float(n, "mutpb", mutpb, low=0.0, high=1.0)
        if self.cxpb + self.mutpb > 1.0:
            raise OrchestratorError(f"{n}: cxpb + mutpb must be at most 1")
        if not self.plus and self.lambda_ < self.mu:
            raise OrchestratorError(f"{n}: mode=comma needs lambda >= mu")

    def make_strategy(self, setup: StrategySetup) -> ESStrategy:
        return ESStrategy(setup, mu=self.mu, lambda_=self.lambda_, plus=self.plus,
                          sigma=self.sigma, cxpb=self.cxpb, mutpb=self.mutpb)
