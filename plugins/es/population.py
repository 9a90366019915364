"""Generation-at-a-time strategies driven through the propose/tell searcher protocol."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from orchestrator.components import CostModel, SearchContext
from orchestrator.errors import OrchestratorError
from orchestrator.options import as_bool, owner_name, whole
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from plugins.es.encoding import KnobEncoding
from plugins.es.ledger import WORST, Ledger
from plugins.es.repair import Repairer
from plugins.es.sampling import FreshSampler

# Generations in a row without a new config before the strategy restarts; after twice
# as many, ``propose`` falls back to fresh random configs for that call.
STALL_GENERATIONS = 8

Positions = tuple[int, ...]


@dataclass(frozen=True)
class StrategySetup:
    """What a strategy is built from when a task starts."""

    encoding: KnobEncoding
    seed: int
    # Positions of the best config already measured for this task (warm start), if any.
    start: Positions | None
    # Positions of a random valid config, or None if the space has none.
    sample: Callable[[], Positions | None]


class Strategy(Protocol):
    """An evolutionary strategy over position vectors, one generation at a time."""

    def ask(self) -> list[Positions]:
        """The members of the next generation."""

    def tell(self, fitness: Sequence[float], repaired: Sequence[Positions | None]) -> None:
        """Fitness of each member (higher is better, :data:`WORST` if failed or invalid),
        and the valid positions each member was evaluated at (None: beyond repair)."""

    def restart(self) -> None:
        """Start afresh elsewhere; called when generations stop producing new configs."""


class PopulationSearcher:
    """A searcher that runs a :class:`Strategy` on measured results or on a cost model.

    Without a cost model each generation's new configs are proposed and measured, and
    the generation is scored once all results are in; configs known from history or
    from earlier generations are scored without measuring them again. With a cost
    model (and ``use_model``), each ``propose`` evolves ``model_generations``
    generations on the model's predictions and proposes the unmeasured configs the
    model ranks highest.

    A generation's new configs go to the model in one ``predict`` call, which a model
    may parallelise itself (the ``tuna`` model analyses them in a process pool).
    ``workers > 1`` splits them into that many chunks predicted in concurrent threads,
    for models whose ``predict`` is thread-safe; the scores are joined in order, so the
    search does not depend on ``workers``.
    """

    name = "population"

    def __init__(self, *, use_model: bool = True, model_generations: int = 5,
                 workers: int = 1) -> None:
        self.use_model = use_model
        self.model_generations = model_generations
        self.workers = workers

    @classmethod
    def owner(cls) -> str:
        """How errors name this searcher, as the registry names it."""
        return owner_name("searcher", cls.name)

    @classmethod
    def model_options(cls, use_model: Any, model_generations: Any, workers: Any) -> dict[str, Any]:
        """The constructor's cost-model options parsed from (possibly string) values."""
        return {
            "use_model": as_bool(cls.owner(), "use_model", use_model),
            "model_generations": whole(cls.owner(), "model_generations", model_generations, 1),
            "workers": whole(cls.owner(), "workers", workers, 1),
        }

    def make_strategy(self, setup: StrategySetup) -> Strategy:
        raise NotImplementedError

    # -- protocol -----------------------------------------------------------------------

    def start(self, context: SearchContext) -> None:
        self.space: Space = context.space
        self.encoding = KnobEncoding(context.space)
        self.repairer = Repairer(context.space, self.encoding)
        self.ledger = Ledger(context.prior)
        self.sampler = FreshSampler(context.space, random.Random(f"{context.seed}:sampler"))
        self.model: CostModel | None = context.cost_model if self.use_model else None
        self._members: list[tuple[Positions, str] | None] | None = None
        self._queue: list[Config] = []
        self._awaiting: set[str] = set()
        self.strategy = self.make_strategy(StrategySetup(
            self.encoding, context.seed, self._start_positions(), self._sample_positions))

    def propose(self, n: int) -> list[Config]:
        if n <= 0:
            return []
        if self.model is not None:
            out = self._propose_by_model(n)
        else:
            if not self._queue:
                self._advance()
            out, self._queue = self._queue[:n], self._queue[n:]
        if not out:
            out = self.sampler.unseen(n, self.ledger.seen)
        for cfg in out:
            self.ledger.seen.add(cfg.key)
            self._awaiting.add(cfg.key)
        return out

    def tell(self, results: Sequence[MeasureResult]) -> None:
        for r in results:
            self.ledger.record(r)
            self._awaiting.discard(r.config.key)

    # -- measured fitness ---------------------------------------------------------------

    def _advance(self) -> None:
        """Score finished generations and start new ones until one has unmeasured configs."""
        for key in self._awaiting:  # proposed but never reported: count as failed
            self.ledger.fail(key)
        self._awaiting.clear()
        for attempt in range(2 * STALL_GENERATIONS):
            self._score_generation()
            if attempt == STALL_GENERATIONS:
                self.strategy.restart()
            self._members = []
            for positions in self.strategy.ask():
                fixed = self.repairer.repair(positions)
                if fixed is None:
                    self._members.append(None)
                    continue
                valid, cfg = fixed
                self._members.append((valid, cfg.key))
                if cfg.key not in self.ledger.seen:
                    self.ledger.seen.add(cfg.key)
                    self._queue.append(cfg)
            if self._queue:
                return
        # Nothing new for a while (this generation is fully known): score it now, and
        # leave this call to fresh random configs.
        self._score_generation()

    def _score_generation(self) -> None:
        """Tell the strategy the fitness of the pending generation, if there is one."""
        if self._members is None:
            return
        members, self._members = self._members, None
        fitness = [self.ledger.fitness.get(m[1], WORST) if m else WORST for m in members]
        self.strategy.tell(fitness, [m[0] if m else None for m in members])

    # -- cost-model fitness -------------------------------------------------------------

    def _propose_by_model(self, n: int) -> list[Config]:
        scores: dict[str, float] = {}
        pool: dict[str, tuple[float, int, Config]] = {}
        for attempt in range(2):
            if attempt:
                self.strategy.restart()
            for _ in range(self.model_generations):
                members = [self.repairer.repair(p) for p in self.strategy.ask()]
                fresh = list({cfg.key: cfg for _, cfg in filter(None, members)
                              if cfg.key not in scores}.values())
                for cfg, score in zip(fresh, self._predict(fresh), strict=True):
                    scores[cfg.key] = score
                    if cfg.key not in self.ledger.seen:
                        pool.setdefault(cfg.key, (score, len(pool), cfg))
                self.strategy.tell([scores[m[1].key] if m else WORST for m in members],
                                   [m[0] if m else None for m in members])
            if pool:
                break
        ranked = sorted(pool.values(), key=lambda t: (-t[0], t[1]))
        return [cfg for _, _, cfg in ranked[:n]]

    def _predict(self, configs: list[Config]) -> list[float]:
        """Model scores in ``configs`` order; chunks are scored in parallel threads."""
        assert self.model is not None
        if not configs:
            return []
        model, space = self.model, self.space
        parts = [list(c) for c in np.array_split(np.arange(len(configs)),
                                                  min(self.workers, len(configs)))]
        chunks = [[configs[i] for i in part] for part in parts]
        if len(chunks) == 1:
            scores = list(model.predict(space, chunks[0]))
        else:
            with ThreadPoolExecutor(len(chunks)) as pool:
                scores = [s for part in pool.map(lambda c: model.predict(space, c), chunks)
                          for s in part]
        if len(scores) != len(configs):
            raise OrchestratorError(
                f"cost model returned {len(scores)} scores for {len(configs)} configs")
        return [float(s) if math.isfinite(float(s)) else WORST for s in scores]

    # -- setup helpers ------------------------------------------------------------------

    def _start_positions(self) -> Positions | None:
        best = self.ledger.best
        if best is None or self.space.validate(best) is not None:
            return None
        return self.encoding.positions(best)

    def _sample_positions(self) -> Positions | None:
        cfg = self.sampler.any()
        return self.encoding.positions(cfg) if cfg is not None else None
