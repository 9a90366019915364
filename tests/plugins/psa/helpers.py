"""Hand-made GPUs and kernel plans for the PSA tests (round numbers, easy to check)."""

from __future__ import annotations

from dataclasses import replace

from orchestrator.gpus import GpuSpec
from orchestrator.kernel_plan import KernelPlan

# 8 SMs, 2 blocks each (block slots), 1000 GFLOPS, 100 GB/s: numbers to compute by hand.
SMALL_GPU = GpuSpec("small", "hand-made GPU", "sm_90", sms=8, warp_size=32,
                    regs_per_sm=65536, regs_per_thread=255, regs_per_block=65536,
                    smem_per_sm=100 * 1024, smem_per_block=100 * 1024,
                    max_threads_per_block=1024, max_threads_per_sm=2048, max_blocks_per_sm=2,
                    peak_fp32_gflops=1000.0, mem_bandwidth_gbs=100.0, l2_bytes=1 << 20,
                    clock_ghz=1.0)


def plan(**changes: object) -> KernelPlan:
    """A plan with no penalty on SMALL_GPU (16 blocks of 128 threads = one full wave)."""
    base = KernelPlan(grid_blocks=16, threads_per_block=128, regs_per_thread=32,
                      smem_bytes_per_block=0, flops=1e9, useful_flops=1e9,
                      global_load_bytes=4e8, global_store_bytes=1e8, smem_load_bytes=4e8,
                      load_run_bytes=128, reduction_steps=4)
    return replace(base, **changes)
