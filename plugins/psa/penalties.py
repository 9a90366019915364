"""The penalty terms of Pruner's Parameterized Static Analyzer (Qiao et al., section 2.3).

Every penalty is read from a :class:`~orchestrator.kernel_plan.KernelPlan` and a
:class:`~orchestrator.gpus.GpuSpec`. The paper's formulas are followed exactly; where
it leaves a quantity open, the choice is a named constant or function documented here:

- ``n_r*`` (register limit of a thread, thread-level penalty): the most registers per
  thread with which all warps of one block can be resident on one SM at once, i.e.
  ``min(regs_per_thread limit, min(regs_per_block, regs_per_sm) // (warps * warp_size))``.
  A plan above it spills (the over-allocation the paper penalises).
- ``n_reg / n_com`` (memory-to-compute ratio of a thread): values a thread loads into
  registers (global and shared loads, ``ELEMENT_BYTES`` each) over the floating-point
  operations it executes.
- ``n_b`` (blocks an SM activates at once, kernel-level penalty): the occupancy limit of
  this plan (threads, registers capped at ``n_r*``, shared memory, block slots);
  ``n_w`` (warps an SM activates at once) = ``n_b * warps_per_block``, so the two cases of
  equation 3 meet continuously at ``B = B*``.
- ``n_l*`` (memory transaction length, memory penalty): ``TRANSACTION_BYTES`` = 32, the
  sector by which L2/DRAM serve an SM since Volta; ``n_l`` is the plan's contiguous load
  run in bytes.

The divisors (P_warp, P_kernel, P_mem) lie in (0, 1] and the multiplier P_thread is
>= 1, as in the paper; P_kernel is 0 for a plan of which not one block fits on an SM
(its latency is then infinite and the pruner drops it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from orchestrator.errors import OrchestratorError
from orchestrator.gpus import GpuSpec
from orchestrator.kernel_plan import KernelPlan, blocks_per_sm

# Bytes per tensor element (the suites are float32); turns byte counts into values.
ELEMENT_BYTES = 4
# n_l*: global memory transaction length in bytes (a 32-byte sector; 128 = a whole line).
TRANSACTION_BYTES = 32


class PsaError(OrchestratorError):
    """A plan or space PSA cannot analyse."""


@dataclass(frozen=True)
class Penalties:
    """The four penalty terms of one plan, plus the quantities behind them."""

    p_reg: float          # max(n_r / n_r*, 1)
    alpha: float          # 1 + n_reg / n_com
    p_warp: float         # n_t / (ceil(n_t / 32) * 32)
    p_kernel: float       # equation 3
    p_mem: float          # n_l / (ceil(n_l / n_l*) * n_l*)
    reg_limit: int        # n_r*
    blocks_per_sm: int    # n_b (0: a block cannot be resident at all)

    @property
    def p_thread(self) -> float:
        """P_thread = alpha * P_reg (>= 1)."""
        return self.alpha * self.p_reg

    @property
    def feasible(self) -> bool:
        """False when not even one block of the plan fits on an SM."""
        return self.blocks_per_sm > 0


def register_limit(plan: KernelPlan, gpu: GpuSpec) -> int:
    """n_r*: registers per thread with which one block's warps can all be resident."""
    threads = plan.warps_per_block * gpu.warp_size
    file_per_block = min(gpu.regs_per_block, gpu.regs_per_sm)
    return max(1, min(gpu.regs_per_thread, file_per_block // max(1, threads)))


def register_penalty(plan: KernelPlan, gpu: GpuSpec) -> float:
    """P_reg = max(n_r / n_r*, 1)."""
    return max(plan.regs_per_thread / register_limit(plan, gpu), 1.0)


def memory_compute_ratio(plan: KernelPlan) -> float:
    """n_reg / n_com per thread: values loaded into registers per executed flop."""
    threads = max(1, plan.grid_blocks * plan.threads_per_block)
    n_reg = (plan.global_load_bytes + plan.smem_load_bytes) / ELEMENT_BYTES / threads
    n_com = plan.flops / threads
    if n_com <= 0:
        raise PsaError("kernel plan has no floating-point operations; PSA cannot weigh it")
    return n_reg / n_com


def thread_alpha(plan: KernelPlan) -> float:
    """alpha = 1 + n_reg / n_com."""
    return 1.0 + memory_compute_ratio(plan)


def warp_penalty(threads_per_block: int, warp_size: int = 32) -> float:
    """P_warp = n_t / (ceil(n_t / n_w*) * n_w*): the share of issued lanes that work."""
    if threads_per_block <= 0:
        raise PsaError(f"a block needs threads, got {threads_per_block}")
    return threads_per_block / (math.ceil(threads_per_block / warp_size) * warp_size)


def resident_blocks(plan: KernelPlan, gpu: GpuSpec) -> int:
    """n_b: blocks one SM holds at once, with registers capped at n_r* (spilled)."""
    capped = replace(plan, regs_per_thread=min(plan.regs_per_thread, register_limit(plan, gpu)))
    return blocks_per_sm(capped, gpu)


def _tail(units: float, per_wave: float) -> float:
    """units / (ceil(units / per_wave) * per_wave): the last wave's idle share removed."""
    return units / (math.ceil(units / per_wave) * per_wave)


def kernel_penalty(plan: KernelPlan, gpu: GpuSpec, n_b: int | None = None) -> float:
    """Equation 3: B/(ceil(B/B*) B*) when B >= B*, else W/(ceil(W/W*) W*); 0 if no block fits."""
    n_b = resident_blocks(plan, gpu) if n_b is None else n_b
    if n_b <= 0:
        return 0.0
    blocks = plan.grid_blocks
    b_star = gpu.sms * n_b
    if blocks >= b_star:
        return _tail(blocks, b_star)
    warps = blocks * plan.warps_per_block
    w_star = gpu.sms * n_b * plan.warps_per_block
    return _tail(warps, w_star)


def memory_penalty(run_bytes: int, transaction_bytes: int = TRANSACTION_BYTES) -> float:
    """P_mem = n_l / (ceil(n_l / n_l*) * n_l*) for a contiguous run of ``run_bytes``."""
    if run_bytes <= 0:
        raise PsaError(f"a load run needs bytes, got {run_bytes}")
    return _tail(run_bytes, transaction_bytes)


def penalties(plan: KernelPlan, gpu: GpuSpec) -> Penalties:
    """All penalty terms of ``plan`` on ``gpu``."""
    n_b = resident_blocks(plan, gpu)
    return Penalties(
        p_reg=register_penalty(plan, gpu), alpha=thread_alpha(plan),
        p_warp=warp_penalty(plan.threads_per_block, gpu.warp_size),
        p_kernel=kernel_penalty(plan, gpu, n_b), p_mem=memory_penalty(plan.load_run_bytes),
        reg_limit=register_limit(plan, gpu), blocks_per_sm=n_b)
