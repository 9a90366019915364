"""DEAP glue: individuals and fitness without ``deap.creator`` globals, and a private RNG.

DEAP's operators draw from the ``random`` module. :func:`module_random` swaps a
searcher's own ``random.Random`` state in for the duration of a call and back out,
so that two searchers (or the caller) never perturb each other's sequences. The
swap is not thread-safe; the tuning loop calls searchers from one thread.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from deap import base


@contextmanager
def module_random(rng: random.Random) -> Iterator[None]:
    """Run the body with the ``random`` module's state taken from (and saved to) ``rng``."""
    outer = random.getstate()
    random.setstate(rng.getstate())
    try:
        yield
    finally:
        rng.setstate(random.getstate())
        random.setstate(outer)


class MaxFitness(base.Fitness):
    """One objective, maximised (fitness is ``-log(latency)``)."""

    weights = (1.0,)


class Individual(list):
    """A genome with a DEAP fitness; ES individuals also carry per-gene step sizes."""

    def __init__(self, genes: Iterable[float] = (),
                 strategy: Iterable[float] | None = None) -> None:
        super().__init__(genes)
        self.fitness = MaxFitness()
        self.strategy = list(strategy) if strategy is not None else None
