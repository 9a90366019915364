"""Shared helpers for the es plugin tests: a toy cost model and a small tuning driver."""

from __future__ import annotations

import dataclasses
import random
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

from orchestrator.components import SearchContext
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.testing import ReplayMeasurer, toy_latency, toy_results, toy_space
from orchestrator.testing.conformance import TOY_TARGET
from orchestrator.testing.toy import TOY_TASK
from plugins.baselines.random_search import RandomSearch
from plugins.es.cmaes_search import CmaEs
from plugins.es.deap_es import DeapES
from plugins.es.deap_ga import DeapGA
from plugins.es.tuna_es import TunaES

SEARCHERS = {"tuna-es": TunaES, "cmaes": CmaEs, "deap-ga": DeapGA, "deap-es": DeapES}


class ToyModel:
    """A cost model that knows the toy landscape exactly (score = -latency)."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.threads: set[str] = set()
        self._lock = threading.Lock()

    def fit(self, space: Space, results: Sequence[MeasureResult]) -> None:
        pass

    def predict(self, space: Space, configs: Sequence[Config]) -> list[float]:
        with self._lock:
            self.calls.append(len(configs))
            self.threads.add(threading.current_thread().name)
        return [-toy_latency(c) for c in configs]


class WithModel:
    """Wraps a searcher so that its context carries a cost model (for the conformance tests)."""

    def __init__(self, searcher: Any, model: Any) -> None:
        self.searcher, self.model = searcher, model

    def start(self, context: SearchContext) -> None:
        self.searcher.start(dataclasses.replace(context, cost_model=self.model))

    def propose(self, n: int) -> list[Config]:
        return self.searcher.propose(n)

    def tell(self, results: Sequence[MeasureResult]) -> None:
        self.searcher.tell(results)


@cache
def cached_toy_results(n: int | None = None, seed: int = 0) -> list[MeasureResult]:
    """``toy_results(None, n, seed)``, computed once (callers must not modify it)."""
    return toy_results(None, n, seed)


@cache
def toy_measurer() -> ReplayMeasurer:
    """One replay table over every toy config, built once (it takes most of a second)."""
    return ReplayMeasurer(results=cached_toy_results())


def context(seed: int = 0, space: Space | None = None, prior: tuple = (),
            cost_model: Any = None) -> SearchContext:
    return SearchContext(TOY_TASK, TOY_TARGET, space or toy_space(), seed, cost_model, prior)


def run(searcher: Any, trials: int, *, seed: int = 0, batch: int = 8,
        space: Space | None = None, cost_model: Any = None) -> list[MeasureResult]:
    """Tune like the loop does (propose, measure by replay, tell) until ``trials`` or the end."""
    space = space or toy_space()
    searcher.start(context(seed, space, cost_model=cost_model))
    results: list[MeasureResult] = []
    while len(results) < trials:
        configs = searcher.propose(min(batch, trials - len(results)))
        if not configs:
            break
        batch_results = toy_measurer().measure(space, TOY_TARGET, configs)
        searcher.tell(batch_results)
        results.extend(batch_results)
    return results


def best_latency(results: Sequence[MeasureResult]) -> float:
    return min(r.latency for r in results)


@cache
def toy_configs() -> tuple[Config, ...]:
    return tuple(toy_space())


def random_search_best(trials: int, seed: int) -> float:
    """Best latency random search finds in ``trials`` trials, without re-enumerating the
    space on every run: :class:`RandomSearch` shuffles the valid configs with
    ``Random(seed)`` and pops from the end, and so does this."""
    grid = list(toy_configs())
    random.Random(seed).shuffle(grid)
    return min(toy_latency(c) for c in grid[-trials:])


def random_search() -> RandomSearch:
    return RandomSearch()
