"""Equation 4 of the PSA: a kernel's approximate latency from its penalties.

    L_c^i = n_ops^i * P_thread / (T_p * P_kernel * P_warp)
    L_m^i = n_m^i / (T_m * P_mem^i)
    L_total = sum_i (L_c^i + L_m^i)

The paper sums over the innermost buffer statements of a TIR program. A KernelPlan
describes a tiled kernel by totals, so it is read as three statements:

1. the global loads (``n_ops = 0``, ``n_m = global_load_bytes``, ``P_mem`` from the
   plan's contiguous load run);
2. the computation (``n_ops = flops`` executed, padding included; its operands come from
   registers and shared memory, which the paper does not count as memory traffic);
3. the output store (``n_ops = 0``, ``n_m = global_store_bytes``, ``P_mem = 1``: a plan
   carries no store run length, so stores are taken as aligned).

``T_p`` is the GPU's peak FP32 rate and ``T_m`` its DRAM bandwidth (orchestrator.gpus).
Caches are not modelled (as in the paper), so ``n_m`` counts every global access.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from orchestrator.gpus import GpuSpec
from orchestrator.kernel_plan import KernelPlan
from plugins.psa.penalties import Penalties, penalties

# P_mem of the output store: KernelPlan has no store run length (assumed aligned).
STORE_P_MEM = 1.0


@dataclass(frozen=True)
class Statement:
    """One statement of equation 4: its flops, global bytes and memory penalty."""

    name: str
    n_ops: float
    n_m: float
    p_mem: float = 1.0


@dataclass(frozen=True)
class Estimate:
    """L_total of one plan (seconds; inf when no block fits) with its parts."""

    total: float
    compute: float
    memory: float
    penalties: Penalties


def statements(plan: KernelPlan, pen: Penalties) -> tuple[Statement, ...]:
    """The three statements a KernelPlan is read as (loads, compute, store)."""
    return (Statement("load", 0.0, plan.global_load_bytes, pen.p_mem),
            Statement("compute", plan.flops, 0.0),
            Statement("store", 0.0, plan.global_store_bytes, STORE_P_MEM))


def compute_latency(n_ops: float, pen: Penalties, gpu: GpuSpec) -> float:
    """L_c = n_ops * P_thread / (T_p * P_kernel * P_warp), seconds."""
    if n_ops == 0:
        return 0.0
    if pen.p_kernel <= 0:
        return math.inf
    t_p = gpu.peak_fp32_gflops * 1e9
    return n_ops * pen.p_thread / (t_p * pen.p_kernel * pen.p_warp)


def memory_latency(n_m: float, p_mem: float, gpu: GpuSpec) -> float:
    """L_m = n_m / (T_m * P_mem), seconds."""
    if n_m == 0:
        return 0.0
    return n_m / (gpu.mem_bandwidth_gbs * 1e9 * p_mem)


def estimate(plan: KernelPlan, gpu: GpuSpec) -> Estimate:
    """L_total of ``plan`` on ``gpu`` (equation 4); total is inf when no block fits."""
    pen = penalties(plan, gpu)
    if not pen.feasible:
        return Estimate(math.inf, math.inf, math.inf, pen)
    comp = mem = 0.0
    for st in statements(plan, pen):
        comp += compute_latency(st.n_ops, pen, gpu)
        mem += memory_latency(st.n_m, st.p_mem, gpu)
    return Estimate(comp + mem, comp, mem, pen)


def l_total(plan: KernelPlan, gpu: GpuSpec) -> float:
    """L_total in seconds (inf when not even one block fits on an SM)."""
    return estimate(plan, gpu).total
