"""An example third-party plugin: the searcher ``example-descending`` proposes configs
with the largest innermost tiles first (a toy heuristic, for testing the plugin path)."""

from __future__ import annotations

from orchestrator import hookimpl


class DescendingInnerTile:
    """Configs ordered by the product of their innermost split factors, largest first."""

    def start(self, context):
        def inner(cfg):
            product = 1
            for knob in context.space.knobs:
                if knob.kind == "split":
                    product *= cfg[knob.name][-1]
            return -product

        known = {r.config.key for r in context.prior}
        configs = [c for c in context.space if c.key not in known]
        self.queue = sorted(configs, key=lambda c: (inner(c), c.key))

    def propose(self, n):
        out, self.queue = self.queue[:n], self.queue[n:]
        return out

    def tell(self, results):
        pass


@hookimpl
def orchestrator_add_searchers(registry):
    registry.add("example-descending", DescendingInnerTile)
