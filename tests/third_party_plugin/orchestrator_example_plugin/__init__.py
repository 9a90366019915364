"""An example third-party plugin: the searcher ``example-descending`` proposes configs
with the largest innermost tiles first (a toy heuristic, for testing the plugin path), and
shows how a component checks an option the way the shipped ones do."""

from __future__ import annotations

from orchestrator import hookimpl
from orchestrator.options import owner_name, whole

NAME = "example-descending"


class DescendingInnerTile:
    """Configs ordered by the product of their innermost split factors, largest first,
    after skipping the first ``skip`` of that order (0)."""

    def __init__(self, skip: int = 0) -> None:
        # The registry has already turned "skip=3" from the command line into an int and
        # rejected unknown options; the range is this component's to check, in its name.
        self.skip = whole(owner_name("searcher", NAME), "skip", skip, 0)

    def start(self, context):
        def inner(cfg):
            product = 1
            for knob in context.space.knobs:
                if knob.kind == "split":
                    product *= cfg[knob.name][-1]
            return -product

        known = {r.config.key for r in context.prior}
        configs = [c for c in context.space if c.key not in known]
        self.queue = sorted(configs, key=lambda c: (inner(c), c.key))[self.skip:]

    def propose(self, n):
        out, self.queue = self.queue[:n], self.queue[n:]
        return out

    def tell(self, results):
        pass


@hookimpl
def orchestrator_add_searchers(registry):
    registry.add(NAME, DescendingInnerTile)
