"""DLFusion: model-level planning of layer fusion and per-block core counts (MP).

Liu et al., "DLFusion: An Auto-Tuning Compiler for Layer Fusion on Deep Neural Network
Accelerator". A network (built-in or ONNX via TVM's Relax frontend) becomes a layer list;
planners (Table III strategies, Algorithm 1, an exact DP) produce :class:`Plan` values;
a measurer with ``measure_plan(layers, plan) -> PlanResult`` prices them. The only
measurer shipped is :class:`SimulatedAccelerator`: a SIMULATED MLU-100, not hardware.
Importing this package does not import TVM (only ONNX loading does).
"""

from __future__ import annotations

from functools import partial

from orchestrator.hookspecs import hookimpl
from orchestrator.registry import ComponentRegistry
from plugins.dlfusion.accelerator import (
    AcceleratorError, AcceleratorParams, PlanMeasurer, SimulatedAccelerator, load_params,
)
from plugins.dlfusion.cli import PlanReport, make_report, plan_command
from plugins.dlfusion.dp import optimal_plan, reduced_oracle_plan
from plugins.dlfusion.layers import Layer, ModelError, Network
from plugins.dlfusion.models import BUILTIN_MODELS, builtin_model
from plugins.dlfusion.plan import Block, BlockResult, Plan, PlanError, PlanResult
from plugins.dlfusion.planner import dlfusion_plan, joint_opt_fusion_and_mp, layer_mp
from plugins.dlfusion.planners import StrategyPlanner
from plugins.dlfusion.strategies import STRATEGIES, STRATEGY_NAMES, compare_strategies, make_plan

__all__ = [
    "AcceleratorError", "AcceleratorParams", "BUILTIN_MODELS", "Block", "BlockResult",
    "Layer", "ModelError", "Network", "Plan", "PlanError", "PlanMeasurer", "PlanReport",
    "PlanResult", "STRATEGIES", "STRATEGY_NAMES", "SimulatedAccelerator", "builtin_model",
    "compare_strategies", "dlfusion_plan", "joint_opt_fusion_and_mp", "layer_mp",
    "load_params", "make_plan", "make_report", "optimal_plan", "plan_command",
    "reduced_oracle_plan",
]


@hookimpl
def orchestrator_add_planners(registry: ComponentRegistry) -> None:
    for s in STRATEGIES:
        registry.add(s.name, partial(StrategyPlanner, s.name),
                     description=f"{s.number}. {s.label}: {s.description}")
