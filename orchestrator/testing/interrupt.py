"""An observer that interrupts a run as Ctrl-C would, for testing that runs resume."""

from __future__ import annotations

from typing import Any

from orchestrator.hookspecs import hookimpl


class InterruptAfter:
    """Raises ``KeyboardInterrupt`` once ``batches`` batches of a run are recorded (register
    it as a plugin beside the components under test)."""

    def __init__(self, batches: int) -> None:
        self.batches, self.seen = batches, 0

    @hookimpl
    def orchestrator_results_measured(self, run: Any, results: Any, trials_done: int,
                                      best: Any) -> None:
        """Called after each recorded batch; interrupts at the ``batches``-th."""
        self.seen += 1
        if self.seen == self.batches:
            raise KeyboardInterrupt
