"""``cmaes``: Optuna's CMA-ES sampler over integer knob positions, by ask and tell."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from orchestrator.components import SearchContext
from orchestrator.options import owner_name, whole
from orchestrator.result import MeasureResult
from orchestrator.space import Config
from plugins.es.encoding import KnobEncoding
from plugins.es.ledger import WORST, Ledger
from plugins.es.repair import Repairer
from plugins.es.sampling import FreshSampler

# Trials asked per proposed config before a call counts as stalled (most asks are
# answered at once: duplicates get their known value, beyond-repair ones a penalty).
ASKS_PER_CONFIG = 16


def _objective(fitness: float) -> float:
    """Optuna minimises ``log(latency)``; failures are told ``+inf`` (worst)."""
    return math.inf if fitness == WORST else -fitness


class CmaEs:
    """CMA-ES (Optuna's ``CmaEsSampler``) on knob positions as ``suggest_int`` parameters.

    Integers rather than categoricals, because the sampler hands categorical
    parameters to its random fallback. A trial that lands on a config already measured
    is told that result and asked again; one that lands on a config proposed but not
    yet measured waits for its result. When a call finds nothing new the study is
    restarted with the next seed (known configs are answered from the ledger, so the
    new study learns them for free), and after that fresh random configs are proposed.
    """

    name = "cmaes"

    def __init__(self, *, popsize: int | None = None) -> None:
        # None: Optuna's default, 4 + 3 ln(number of knobs).
        self.popsize = (None if popsize is None
                        else whole(owner_name("searcher", self.name), "popsize", popsize, 2))

    def start(self, context: SearchContext) -> None:
        self.encoding = KnobEncoding(context.space)
        self.repairer = Repairer(context.space, self.encoding)
        self.ledger = Ledger(context.prior)
        self.sampler = FreshSampler(context.space, random.Random(f"{context.seed}:sampler"))
        self.seed = context.seed
        self.restarts = 0
        self._waiting: dict[str, list[Any]] = {}
        self.study = self._new_study()

    def _new_study(self) -> Any:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = optuna.samplers.CmaEsSampler(
            seed=self.seed + 1_000_003 * self.restarts, popsize=self.popsize,
            warn_independent_sampling=False)
        return optuna.create_study(direction="minimize", sampler=sampler)

    def propose(self, n: int) -> list[Config]:
        out: list[Config] = []
        for attempt in range(2):
            if attempt:
                self.restarts += 1
                self.study = self._new_study()
            repaired = False
            for _ in range(ASKS_PER_CONFIG * max(n, 1)):
                if len(out) >= n:
                    break
                cfg, valid = self._ask()
                repaired |= valid
                if cfg is not None:
                    out.append(cfg)
            # A restart helps a study stuck on known configs, not one that finds no valid ones.
            if out or not repaired:
                break
        if not out:
            out = self.sampler.unseen(n, self.ledger.seen)
            self.ledger.seen.update(c.key for c in out)
        return out

    def _ask(self) -> tuple[Config | None, bool]:
        """Ask one trial: the config if it is new, and whether the trial was valid (a
        trial on a known config is told its value, one on a pending config waits)."""
        trial = self.study.ask()
        positions = [trial.suggest_int(name, 0, size - 1)
                     for name, size in zip(self.encoding.names, self.encoding.sizes)]
        fixed = self.repairer.repair(positions)
        if fixed is None:
            self.study.tell(trial, math.inf)
            return None, False
        key = fixed[1].key
        if key in self.ledger.fitness:
            self.study.tell(trial, _objective(self.ledger.fitness[key]))
            return None, True
        self._waiting.setdefault(key, []).append(trial)
        if key in self.ledger.seen:
            return None, True
        self.ledger.seen.add(key)
        return fixed[1], True

    def tell(self, results: Sequence[MeasureResult]) -> None:
        for r in results:
            value = _objective(self.ledger.record(r))
            for trial in self._waiting.pop(r.config.key, []):
                self.study.tell(trial, value)
