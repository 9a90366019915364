"""``deap-ga``: a genetic algorithm over knob positions, built from DEAP's operators."""

from __future__ import annotations

import random
from collections.abc import Sequence

from deap import algorithms, base, tools

from orchestrator.options import number, whole
from plugins.es.deap_support import Individual, module_random
from plugins.es.population import PopulationSearcher, Positions, StrategySetup


class GAStrategy:
    """Tournament selection, uniform crossover, random-reset mutation, one elite.

    Repaired genomes are written back into the population (Lamarckian repair), so
    parents are always valid configs.
    """

    def __init__(self, setup: StrategySetup, *, population: int, cxpb: float, mutpb: float,
                 tournament: int) -> None:
        self.setup, self.size = setup, population
        self.cxpb, self.mutpb = cxpb, mutpb
        self.rng = random.Random(f"{setup.seed}:deap-ga")
        sizes = setup.encoding.sizes
        self.toolbox = base.Toolbox()
        self.toolbox.register("mate", tools.cxUniform, indpb=0.5)
        self.toolbox.register("mutate", tools.mutUniformInt, low=[0] * len(sizes),
                              up=[n - 1 for n in sizes], indpb=1.0 / max(1, len(sizes)))
        self.toolbox.register("select", tools.selTournament, tournsize=tournament)
        self.population: list[Individual] = []
        self._offspring: list[Individual] = []
        self._keep: list[Individual] = []
        self._seeded = setup.start

    def _random(self) -> Individual:
        if self._seeded is not None:
            start, self._seeded = self._seeded, None
            return Individual(start)
        positions = self.setup.sample()
        if positions is None:
            positions = tuple(self.rng.randrange(n) for n in self.setup.encoding.sizes)
        return Individual(positions)

    def ask(self) -> list[Positions]:
        if not self.population:
            self._offspring = [self._random() for _ in range(self.size)]
        else:
            with module_random(self.rng):
                parents = self.toolbox.select(self.population, len(self.population))
                self._offspring = algorithms.varAnd(parents, self.toolbox, self.cxpb, self.mutpb)
        return [tuple(ind) for ind in self._offspring]

    def tell(self, fitness: Sequence[float], repaired: Sequence[Positions | None]) -> None:
        for ind, value, fixed in zip(self._offspring, fitness, repaired, strict=True):
            if fixed is not None:
                ind[:] = fixed
            ind.fitness.values = (value,)
        elite = tools.selBest(self.population + self._keep, 1)
        self._keep = []
        self.population = elite + tools.selBest(self._offspring, self.size - len(elite))

    def restart(self) -> None:
        """A fresh random population; the best individual so far survives as the elite."""
        self._keep = tools.selBest(self.population, 1)
        self.population = []


class DeapGA(PopulationSearcher):
    """Genetic algorithm (DEAP): tournament selection, uniform crossover, random reset."""

    name = "deap-ga"

    def __init__(self, *, population: int = 12, cxpb: float = 0.6, mutpb: float = 0.4,
                 tournament: int = 3, use_model: bool = True, model_generations: int = 5,
                 workers: int = 1) -> None:
        n = self.owner()
        super().__init__(**self.model_options(use_model, model_generations, workers))
        self.population = whole(n, "population", population, 2)
        self.cxpb = number(n, "cxpb", cxpb, 0.0, 1.0)
        self.mutpb = number(n, "mutpb", mutpb, 0.0, 1.0)
        self.tournament = whole(n, "tournament", tournament, 1)

    def make_strategy(self, setup: StrategySetup) -> GAStrategy:
        return GAStrategy(setup, population=self.population, cxpb=self.cxpb, mutpb=self.mutpb,
                          tournament=self.tournament)
