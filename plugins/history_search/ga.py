"""The ``ga`` searcher: a plain genetic algorithm on knob indices, as AutoTVM's GA tuner,
with DEAP's roulette selection, one-point crossover and uniform random mutation."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from orchestrator.components import SearchContext
from orchestrator.options import number, owner_name, whole
from orchestrator.result import MeasureResult
from orchestrator.space import Config

_ATTEMPTS_PER_CHILD = 20
_MAX_SAMPLE_MISSES = 2000


def _deap() -> tuple[Any, Any]:
    from deap import base, tools

    return base, tools


class GeneticSearch:
    """AutoTVM's GA tuner: generations of ``population`` configs (100) are measured; the
    ``elite`` best (3) of all measured so far survive, the rest of the next generation
    comes from roulette selection, one-point crossover of the knob indices and random
    mutation of each knob with probability ``mutation_prob`` (0.1). Children already
    measured, proposed or rejected by the space are drawn again.

    DEAP draws from Python's global ``random``; the searcher swaps in its own seeded
    state around every DEAP call, so runs are reproducible and nobody else's state moves.
    """

    def __init__(self, population: int = 100, elite: int = 3, mutation_prob: float = 0.1) -> None:
        owner = owner_name("searcher", "ga")
        self.population_size = whole(owner, "population", population, 2)
        self.elite = whole(owner, "elite", elite, 0, self.population_size - 1)
        self.mutation_prob = number(owner, "mutation_prob", mutation_prob, 0.0, 1.0)

    def start(self, context: SearchContext) -> None:
        """Seed the GA and make the first generation (random samples of the space)."""
        base, _ = _deap()

        class Fitness(base.Fitness):
            weights = (1.0,)

        self._fitness_cls = Fitness
        self.space = context.space
        self.rng = random.Random(context.seed)
        self._state = random.Random(context.seed + 1).getstate()
        self.perf: dict[str, float] = {}
        self.configs: dict[str, Config] = {}
        self.seen: set[str] = set()
        for r in context.prior:
            self._learn(r)
        self.generation: list[str] = []
        self.pending = self._sample(self.population_size)
        self.generation = [c.key for c in self.pending]

    def propose(self, n: int) -> list[Config]:
        """The next ``n`` configs of the generation (breeding the next one when needed)."""
        if not self.pending:
            self.pending = self._next_generation()
            self.generation = [c.key for c in self.pending]
        out, self.pending = self.pending[:n], self.pending[n:]
        return out

    def tell(self, results: Sequence[MeasureResult]) -> None:
        """Record the fitness of the configs last proposed."""
        for r in results:
            self._learn(r)

    # -- internals ---------------------------------------------------------------------
    @contextmanager
    def _deap_random(self) -> Iterator[None]:
        outside = random.getstate()
        random.setstate(self._state)
        try:
            yield
        finally:
            self._state = random.getstate()
            random.setstate(outside)

    def _learn(self, r: MeasureResult) -> None:
        key = r.config.key
        self.seen.add(key)
        self.configs[key] = r.config
        self.perf[key] = max(self.perf.get(key, 0.0), 1.0 / r.latency if r.ok else 0.0)

    def _individual(self, key: str) -> _Individual:
        ind = _Individual(self.space.indices(self.configs[key]))
        ind.fitness = self._fitness_cls((self.perf[key],))
        return ind

    def _next_generation(self) -> list[Config]:
        """Elites of everything measured plus this generation breed the next one."""
        _, tools = _deap()
        usable = sorted(k for k in self.perf if self.space.validate(self.configs[k]) is None)
        if not usable:
            return self._sample(self.population_size)
        elites = sorted(usable, key=lambda k: (-self.perf[k], k))[:self.elite]
        pool = sorted(set(elites) | {k for k in self.generation if k in self.perf and k in usable})
        individuals = [self._individual(k) for k in pool]
        positive = [i for i in individuals if i.fitness.values[0] > 0]
        sizes = self.space.knob_sizes
        want = self.population_size - len(elites)
        out: list[Config] = []
        with self._deap_random():
            for _ in range(want * _ATTEMPTS_PER_CHILD):
                if len(out) >= want:
                    break
                if len(positive) >= 2:
                    a, b = tools.selRoulette(positive, 2)
                else:
                    a, b = tools.selRandom(individuals, 2)
                a, b = _Individual(a), _Individual(b)
                if len(sizes) >= 2:
                    tools.cxOnePoint(a, b)
                tools.mutUniformInt(a, [0] * len(sizes), [s - 1 for s in sizes], self.mutation_prob)
                self._accept(self.space.config_at(a), out)
        # Elites are measured already: they breed again but are not proposed again.
        return out + self._sample(want - len(out))

    def _accept(self, cfg: Config, out: list[Config]) -> bool:
        if cfg.key in self.seen or self.space.validate(cfg) is not None:
            return False
        self.seen.add(cfg.key)
        self.configs[cfg.key] = cfg
        out.append(cfg)
        return True

    def _sample(self, count: int) -> list[Config]:
        out: list[Config] = []
        misses = 0
        while len(out) < count and misses < _MAX_SAMPLE_MISSES:
            cfg = self.space.sample(self.rng)
            if cfg is None or not self._accept(cfg, out):
                misses += 1
        return out


class _Individual(list):
    """A list of knob indices with a DEAP fitness attribute."""

    fitness: Any
