"""Built-in plugin ``tuna``: the Tuna static-analysis cost model (CPU) and the
``static`` measurer that tunes without touching hardware.

Wang et al., "Tuna: A Static Analysis Approach to Optimizing Deep Neural Networks".
The CPU model is implemented; the paper's CUDA model (PTX analysis) is not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.hookspecs import hookimpl

if TYPE_CHECKING:
    from orchestrator.registry import ComponentRegistry


@hookimpl
def orchestrator_add_cost_models(registry: ComponentRegistry) -> None:
    from plugins.tuna.cost_model import TunaCostModel

    registry.add("tuna", TunaCostModel,
                 description="Tuna static analysis of the generated assembly: SIMD counts, "
                             "L1 data movement, ILP (options: workers, cache_dir, "
                             "coefficients, target, timeout, opt_level)")


@hookimpl
def orchestrator_add_measurers(registry: ComponentRegistry) -> None:
    from plugins.tuna.measurer import StaticMeasurer

    registry.add("static", StaticMeasurer,
                 description="predicted latency from Tuna static analysis; runs nothing "
                             "(options: workers, cache_dir, coefficients, timeout, opt_level)")
