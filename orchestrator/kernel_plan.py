"""What a GPU config launches, in the terms analytical GPU models read.

A CUDA space names a function ``plan_fn(task, config, target) -> KernelPlan`` (field
``Space.plan_fn``) that derives these figures from the knobs alone, without building.
Pruners and cost models (CNNOpt, PSA) work on plans, so they serve every CUDA template
that provides one. Byte counts are totals over the whole launch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from orchestrator.gpus import GpuSpec


@dataclass(frozen=True)
class KernelPlan:
    """Launch shape, resources and traffic of one config of a CUDA kernel."""

    grid_blocks: int              # thread blocks launched
    threads_per_block: int
    regs_per_thread: int          # estimate from the tiles (ptxas may differ)
    smem_bytes_per_block: int     # shared memory the block allocates
    flops: float                  # executed floating-point operations (padding included)
    useful_flops: float           # the operator's own operations
    global_load_bytes: float      # global -> shared/registers, all blocks
    global_store_bytes: float
    smem_load_bytes: float        # shared -> registers, all blocks
    load_run_bytes: int           # contiguous bytes consecutive threads load (coalescing)
    reduction_steps: int          # shared-memory stages per block (outer reduction loop)
    tiles: tuple[tuple[str, int], ...] = ()   # named tile sizes, for model features

    @property
    def warps_per_block(self) -> int:
        return math.ceil(self.threads_per_block / 32)

    @property
    def flops_per_thread(self) -> float:
        return self.flops / max(1, self.grid_blocks * self.threads_per_block)

    def tile(self, name: str, default: int = 0) -> int:
        return dict(self.tiles).get(name, default)


def blocks_per_sm(plan: KernelPlan, gpu: GpuSpec) -> int:
    """Blocks one SM holds at once, limited by threads, registers, shared memory and the
    block slot count; 0 when a single block does not fit."""
    if (plan.threads_per_block > gpu.max_threads_per_block
            or plan.regs_per_thread > gpu.regs_per_thread
            or plan.smem_bytes_per_block > gpu.smem_per_block):
        return 0
    warps = plan.warps_per_block
    by_threads = gpu.max_threads_per_sm // (warps * gpu.warp_size)
    # registers are allocated per warp in units of 256
    regs_per_warp = math.ceil(plan.regs_per_thread * gpu.warp_size / 256) * 256
    by_regs = gpu.regs_per_sm // max(1, regs_per_warp * warps)
    by_smem = gpu.smem_per_sm // plan.smem_bytes_per_block if plan.smem_bytes_per_block else 10**9
    return max(0, min(by_threads, by_regs, by_smem, gpu.max_blocks_per_sm))


def occupancy(plan: KernelPlan, gpu: GpuSpec) -> float:
    """Resident warps per SM over the SM's maximum (0..1)."""
    return blocks_per_sm(plan, gpu) * plan.warps_per_block / gpu.max_warps_per_sm


def waves(plan: KernelPlan, gpu: GpuSpec) -> float:
    """Launch waves: blocks over the blocks the whole GPU holds at once (inf if none fit)."""
    per_sm = blocks_per_sm(plan, gpu)
    return plan.grid_blocks / (per_sm * gpu.sms) if per_sm else math.inf
