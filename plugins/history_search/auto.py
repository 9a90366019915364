"""The ``auto`` dispatcher: GGA when history matches the task well, TL otherwise."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from history.ranking import RankedHistory
from orchestrator import confirm
from orchestrator.components import SearchContext
from orchestrator.errors import OrchestratorError
from orchestrator.options import coerce_options, number, owner_name
from orchestrator.result import MeasureResult
from orchestrator.space import Config
from plugins.gga.searcher import GuidedGA
from plugins.tl.searcher import TransferSearcher

log = logging.getLogger(__name__)

# Best match score (eq. 1) from which history is trusted enough for GGA. On the cpu
# templates, every ResNet-18 conv layer of the built-in suite scores >= 0.786 against the
# other layers (leave-one-out), while the pruned layers with odd channel counts score
# <= 0.571 against all of them (the first layer, whose C = 3 is not pruned, keeps 0.786):
# 0.75 separates the two; see docs/results/gga.md.
DEFAULT_THRESHOLD = 0.75


def chosen_flow(match: float, threshold: float = DEFAULT_THRESHOLD) -> str:
    """The searcher ``auto`` runs for a task whose best match score is ``match``."""
    return "gga" if match >= threshold else "tl"


class AutoSearch:
    """Runs ``gga`` if the best match score of the task against history (eq. 1, any
    other task of the same operator; 1 when this task has results of its own) reaches
    ``threshold``, else ``tl`` (Mu et al., Fig. 1). Options: ``threshold`` (0.75), and
    ``gga`` / ``tl``: dicts of options for the chosen searcher, e.g.
    ``--searcher-opt 'tl={"filter": false}'``. The default searcher of ``orchestrator tune``
    and ``tune()``; ``note`` says which flow it ran and why."""

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, gga: dict[str, Any] | None = None,
                 tl: dict[str, Any] | None = None) -> None:
        owner = owner_name("searcher", "auto")
        for name, opts in (("gga", gga), ("tl", tl)):
            if opts is not None and not isinstance(opts, dict):
                raise OrchestratorError(f"{owner}: option {name} takes a JSON object, got {opts!r}")
        self.threshold = number(owner, "threshold", threshold, 0.0, 1.0)
        # Checked now, as every option is, rather than once the history has been scored.
        self.gga_options = coerce_options(f"{owner}: gga", GuidedGA, gga or {})
        self.tl_options = coerce_options(f"{owner}: tl", TransferSearcher, tl or {})
        GuidedGA(**self.gga_options)
        TransferSearcher(**self.tl_options)

    def start(self, context: SearchContext) -> None:
        """Score the history, choose the flow and start it."""
        own = any(r.ok for r in context.prior)
        self.match = 1.0 if own else RankedHistory(context.history, context.space,
                                                   context.target).best_match()
        self.chosen = chosen_flow(self.match, self.threshold)
        self.delegate: Any = (GuidedGA(**self.gga_options) if self.chosen == "gga"
                              else TransferSearcher(**self.tl_options))
        self.note = (f"auto ran {self.chosen}: "
                     + ("the task has results of its own" if own else
                        f"best history match {self.match:.3f} "
                        f"{'>=' if self.chosen == 'gga' else '<'} {self.threshold:g}"))
        log.info("%s, for %s", self.note, context.task.label())
        self.delegate.start(context)

    def propose(self, n: int) -> list[Config]:
        """What the chosen searcher proposes."""
        return self.delegate.propose(n)

    def tell(self, results: Sequence[MeasureResult]) -> None:
        """Passed to the chosen searcher."""
        self.delegate.tell(results)

    def tell_confirmed(self, results: Sequence[MeasureResult]) -> None:
        """Passed to the chosen searcher if it takes confirmed results."""
        confirm.tell_confirmed(self.delegate, results)
