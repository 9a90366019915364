"""Plugin ``cnnopt``: CNNOpt for conv2d on NVIDIA GPUs.

Xu et al., "Effective Performance Modeling and Domain-Specific Compiler Optimization
of CNNs for GPUs" (PACT'22). Registers the ``cnnopt`` space generator (the RS and S
kernel schemas of section 3, built with tvm.s_tir), the ``cnnopt-capacity`` pruner
(register and shared-memory capacity constraints, equations 2 and 3) and the cost
models ``cnnopt-analytical``, ``cnnopt-ml`` and ``cnnopt-hybrid`` (section 4; the
regression models are trained offline with ``orchestrator train``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.hookspecs import hookimpl

if TYPE_CHECKING:
    from orchestrator.registry import ComponentRegistry


@hookimpl
def orchestrator_add_space_generators(registry: ComponentRegistry) -> None:
    """Called once at start-up; registers ``cnnopt``."""
    from plugins.cnnopt.generator import CnnoptSpaces

    registry.add("cnnopt", CnnoptSpaces,
                 description="CNNOpt RS/S kernel schemas for NCHW conv2d on CUDA: X, Y, K "
                             "tiled over grid, warps (32 threads), registers; C staged "
                             "through shared memory, optionally split across blocks")


@hookimpl
def orchestrator_add_pruners(registry: ComponentRegistry) -> None:
    """Called once at start-up; registers ``cnnopt-capacity`` and ``cnnopt-capacity-only``."""
    from functools import partial

    from plugins.cnnopt.capacity import CapacityPruner, Rules

    registry.add("cnnopt-capacity", CapacityPruner,
                 description="CNNOpt capacity constraints (registers, eq. 2/3; shared "
                             "memory; threads) on the target GPU, ranked by the "
                             "analytical model; plus our rules against tiny tiles and "
                             "grids (option: rank)")
    registry.add("cnnopt-capacity-only",
                 partial(CapacityPruner, rules=Rules.capacity_only()),
                 description="cnnopt-capacity with the paper's capacity constraints alone "
                             "(larger spaces)")


@hookimpl
def orchestrator_add_cost_models(registry: ComponentRegistry) -> None:
    """Called once at start-up; registers the three CNNOpt cost models."""
    from plugins.cnnopt.cost_models import AnalyticalCostModel, hybrid_model, ml_model

    registry.add("cnnopt-analytical", AnalyticalCostModel,
                 description="CNNOpt analytical model: transactions, occupancy, waves -> "
                             "estimated time (option: target)")
    registry.add("cnnopt-ml", ml_model,
                 description="CNNOpt black-box random forest on problem and tile sizes "
                             "(options: target, model)")
    registry.add("cnnopt-hybrid", hybrid_model,
                 description="CNNOpt hybrid random forest: problem and tile sizes plus "
                             "analytical features; train with `orchestrator train` "
                             "(options: target, model)")
