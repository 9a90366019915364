"""Plugin ``psa``: Pruner's Parameterized Static Analyzer for CUDA spaces.

Qiao et al., "Pruner: An Efficient Cross-Platform Tensor Compiler with Dual Awareness",
section 2.3. Registers the ``psa`` pruner (the target space: the configs with the lowest
estimated latency, plus a uniformly drawn share of the rest), ``psa-512`` (the same with
the paper's final size, for callers that cannot pass options) and the ``psa`` cost model
(-L_total). Works on any space with a kernel plan (``Space.plan_fn``); needs no GPU.
The paper's PaCM cost model and momentum transfer learning are not implemented.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.hookspecs import hookimpl

if TYPE_CHECKING:
    from orchestrator.registry import ComponentRegistry


@hookimpl
def orchestrator_add_pruners(registry: ComponentRegistry) -> None:
    """Called once at start-up; registers ``psa`` and ``psa-512``."""
    from plugins.psa.pruner import Psa512Pruner, PsaPruner

    registry.add("psa", PsaPruner,
                 description="Pruner's PSA target space: the 256 configs with the lowest "
                             "analytical latency + 10% drawn from the rest (options: size, "
                             "explore, seed; CUDA spaces with a kernel plan)")
    registry.add("psa-512", Psa512Pruner,
                 description="the psa pruner with the paper's target space size 512")


@hookimpl
def orchestrator_add_cost_models(registry: ComponentRegistry) -> None:
    """Called once at start-up; registers the ``psa`` cost model."""
    from plugins.psa.cost_model import PsaCostModel

    registry.add("psa", PsaCostModel,
                 description="Pruner's PSA analytical latency, -L_total (option: target, "
                             "default this machine's GPU); fit learns nothing")
