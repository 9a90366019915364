"""``deap-es``: a self-adaptive (mu + lambda) or (mu, lambda) evolution strategy with DEAP."""

from __future__ import annotations

import inspect
import random
from collections.abc import Sequence
from typing import Any

from deap import algorithms, base, tools

from orchestrator.errors import OptionError
from orchestrator.options import number, one_of, unknown_option, whole
from plugins.es.deap_support import Individual, module_random
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

    def __init__(self, *, mu: int = 6, lambda_: int = 12, mode: str = "plus",
                 sigma: float = 0.2, cxpb: float = 0.3, mutpb: float = 0.6,
                 use_model: bool = True, model_generations: int = 5, workers: int = 1,
                 **more: Any) -> None:
        n = self.owner()
        # The CLI spells the option lambda (a Python keyword) or lambda_.
        if "lambda" in more:
            lambda_ = more.pop("lambda")
        if more:
            known = {*inspect.signature(DeapES).parameters, "lambda"} - {"more"}
            raise unknown_option(n, sorted(more)[0], known)
        super().__init__(**self.model_options(use_model, model_generations, workers))
        self.mu = whole(n, "mu", mu, 1)
        self.lambda_ = whole(n, "lambda", lambda_, 2)
        self.plus = one_of(n, "mode", str(mode).strip().lower(), ("plus", "comma")) == "plus"
        self.sigma = number(n, "sigma", sigma, 0.0, MAX_STEP, low_open=True)
        self.cxpb = number(n, "cxpb", cxpb, 0.0, 1.0)
        self.mutpb = number(n, "mutpb", mutpb, 0.0, 1.0)
        if self.cxpb + self.mutpb > 1.0:
            raise OptionError(f"{n}: cxpb + mutpb must be at most 1, got "
                              f"{self.cxpb} + {self.mutpb}")
        if not self.plus and self.lambda_ < self.mu:
            raise OptionError(f"{n}: mode=comma needs lambda >= mu, got lambda "
                              f"{self.lambda_} and mu {self.mu}")

    def make_strategy(self, setup: StrategySetup) -> ESStrategy:
        return ESStrategy(setup, mu=self.mu, lambda_=self.lambda_, plus=self.plus,
                          sigma=self.sigma, cxpb=self.cxpb, mutpb=self.mutpb)
