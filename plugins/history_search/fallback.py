"""The ``fallback`` searcher: apply the best-matching history config, without search."""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence

from history.ranking import RankedHistory
from history.similarity import DEFAULT_OMEGA, candidate_configs
from orchestrator.components import SearchContext
from orchestrator.options import number, owner_name
from orchestrator.result import MeasureResult
from orchestrator.space import Config

log = logging.getLogger(__name__)


class FallbackSearch:
    """Proposes one config, the history record with the best filtering metric (eq. 2:
    throughput x utilization x match score ** omega) adapted to this task, then stops.
    Without usable history it proposes one config sampled from the space (nothing when
    this task's own history already holds results: there is nothing to fall back on)."""

    def __init__(self, omega: float = DEFAULT_OMEGA) -> None:
        self.omega = number(owner_name("searcher", "fallback"), "omega", omega, 0.0)

    def start(self, context: SearchContext) -> None:
        """Find the config to apply."""
        known = {r.config.key for r in context.prior}
        scored = RankedHistory(context.history, context.space, context.target, self.omega)
        found = candidate_configs(scored, context.space, 1, skip=known)
        self.source = found[0][1] if found else None
        if found:
            self.choice: Config | None = found[0][0]
        elif context.prior:
            log.warning("fallback: no history record of another %s task adapts to %s (or "
                        "every one that does is measured already); nothing to apply. Its "
                        "best so far: orchestrator history best", context.task.op,
                        context.task.label())
            self.choice = None
        else:
            log.info("fallback: no usable history for %s; applying a sampled config",
                     context.task.label())
            self.choice = context.space.sample(random.Random(context.seed))
        self.done = False

    def propose(self, n: int) -> list[Config]:
        """The chosen config on the first call, then nothing (the run ends)."""
        if self.done or self.choice is None or n < 1:
            return []
        self.done = True
        return [self.choice]

    def tell(self, results: Sequence[MeasureResult]) -> None:
        """Nothing to learn: the search is over."""
