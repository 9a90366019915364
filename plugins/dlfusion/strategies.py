"""The optimization strategies of Table III as named plans, plus the exact DP optimum."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from orchestrator.errors import OrchestratorError
from plugins.dlfusion.accelerator import SimulatedAccelerator
from plugins.dlfusion.calibrate import Alg1Params, alg1_plan
from plugins.dlfusion.dp import cost_table, optimal_plan, reduced_oracle_plan
from plugins.dlfusion.layers import Network
from plugins.dlfusion.plan import Block, Plan, PlanResult
from plugins.dlfusion.planner import joint_opt_fusion_and_mp, layer_mp


class StrategyError(OrchestratorError):
    """An unknown strategy name."""


@dataclass(frozen=True)
class Strategy:
    name: str
    number: str
    label: str
    description: str


STRATEGIES: tuple[Strategy, ...] = (
    Strategy("none", "1", "Non-Optimization", "no fusion, MP = 1 (the baseline)"),
    Strategy("fixed-mp", "2", "Fixed MP",
             "no fusion, one MP for all layers (the best power of two, as Figure 5(a))"),
    Strategy("dynamic-mp", "3", "Dynamic MP", "no fusion, each layer its equation-5 MP"),
    Strategy("fuse-all-max-mp", "4", "All Fusion & Max. MP", "one block on every core"),
    Strategy("fusion-fixed-mp", "5", "Fusion & Fixed MP",
             "Algorithm 1 with one MP for all layers (the best power of two)"),
    Strategy("dlfusion", "6", "DLFusion",
             "Algorithm 1: blocks with their own MP (threshold and MP scale calibrated for "
             "the accelerator on synthetic networks)"),
    Strategy("dlfusion-published", "6'", "DLFusion (paper constants)",
             "Algorithm 1 with the paper's OpCount_critical = 10^1.25 GOPs and equation 5 "
             "unscaled"),
    Strategy("oracle", "7", "Brute-force (reduced)",
             "MP in {1,2,4,8,12,16,24,32}, block sizes multiples of 4 (exact)"),
    Strategy("optimal-dp", "+", "Optimal DP",
             "beyond the paper: any contiguous blocks, any MP, exact dynamic programming"),
)
STRATEGY_NAMES: tuple[str, ...] = tuple(s.name for s in STRATEGIES)


def strategy_info(name: str) -> Strategy:
    for s in STRATEGIES:
        if s.name == name:
            return s
    raise StrategyError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGY_NAMES)}")


def _pow2s(cores: int) -> list[int]:
    out, m = [], 1
    while m <= cores:
        out.append(m)
        m *= 2
    return out


def _unfused(net: Network, name: str, mps: list[int]) -> Plan:
    return Plan(name, net.name, tuple(Block(i, i + 1, m) for i, m in enumerate(mps)))


def _best(acc: SimulatedAccelerator, net: Network, plans: list[Plan]) -> Plan:
    return min(plans, key=lambda p: acc.measure_plan(net, p).latency_s)


def plan_none(net: Network, acc: SimulatedAccelerator) -> Plan:
    return _unfused(net, "none", [1] * len(net))


def plan_fixed_mp(net: Network, acc: SimulatedAccelerator) -> Plan:
    return _best(acc, net, [_unfused(net, "fixed-mp", [m] * len(net)) for m in _pow2s(acc.cores)])


def plan_dynamic_mp(net: Network, acc: SimulatedAccelerator) -> Plan:
    return _unfused(net, "dynamic-mp", [layer_mp(layer, acc.cores) for layer in net.layers])


def plan_fuse_all_max_mp(net: Network, acc: SimulatedAccelerator) -> Plan:
    return Plan("fuse-all-max-mp", net.name, (Block(0, len(net), acc.cores),))


def alg1_params(acc: SimulatedAccelerator) -> Alg1Params:
    """Algorithm 1's parameters for ``acc``: its calibrated ones, else the paper's."""
    p = acc.params
    if p.alg1_opcount_critical is None:
        return Alg1Params(p.opcount_critical, 1.0)
    return Alg1Params(p.alg1_opcount_critical, p.alg1_mp_scale)


def plan_fusion_fixed_mp(net: Network, acc: SimulatedAccelerator,
                         opcount_critical: float | None = None) -> Plan:
    crit = alg1_params(acc).opcount_critical if opcount_critical is None else opcount_critical
    plans = []
    for m in _pow2s(acc.cores):
        res = joint_opt_fusion_and_mp(net, crit, acc.cores, layer_mps=(m,) * len(net))
        plans.append(Plan("fusion-fixed-mp", net.name, res.blocks()))
    return _best(acc, net, plans)


def plan_dlfusion(net: Network, acc: SimulatedAccelerator,
                  opcount_critical: float | None = None) -> Plan:
    params = alg1_params(acc)
    if opcount_critical is not None:
        params = Alg1Params(opcount_critical, params.mp_scale)
    return alg1_plan(net, acc.cores, params, "dlfusion")


def plan_dlfusion_published(net: Network, acc: SimulatedAccelerator) -> Plan:
    return alg1_plan(net, acc.cores, Alg1Params(acc.params.opcount_critical, 1.0),
                     "dlfusion-published")


def plan_oracle(net: Network, acc: SimulatedAccelerator, table: np.ndarray | None = None) -> Plan:
    return reduced_oracle_plan(acc, net, table)[0]


def plan_optimal(net: Network, acc: SimulatedAccelerator, table: np.ndarray | None = None) -> Plan:
    return optimal_plan(acc, net, table=table)[0]


_BUILDERS: dict[str, Callable[[Network, SimulatedAccelerator], Plan]] = {
    "none": plan_none, "fixed-mp": plan_fixed_mp, "dynamic-mp": plan_dynamic_mp,
    "fuse-all-max-mp": plan_fuse_all_max_mp, "fusion-fixed-mp": plan_fusion_fixed_mp,
    "dlfusion": plan_dlfusion, "dlfusion-published": plan_dlfusion_published,
    "oracle": plan_oracle, "optimal-dp": plan_optimal,
}


def make_plan(name: str, net: Network, acc: SimulatedAccelerator) -> Plan:
    """The plan of one strategy for ``net`` on ``acc``."""
    strategy_info(name)
    return _BUILDERS[name](net, acc)


def compare_strategies(net: Network, acc: SimulatedAccelerator,
                       names: tuple[str, ...] = STRATEGY_NAMES) -> tuple[PlanResult, ...]:
    """Every strategy's measured plan, in Table III order (the DP table is shared)."""
    table = None
    results = []
    for name in names:
        strategy_info(name)
        if name in ("oracle", "optimal-dp"):
            if table is None:
                table = cost_table(acc, net, range(1, acc.cores + 1))
            plan = (plan_oracle if name == "oracle" else plan_optimal)(net, acc, table)
        else:
            plan = make_plan(name, net, acc)
        results.append(acc.measure_plan(net, plan))
    return tuple(results)
