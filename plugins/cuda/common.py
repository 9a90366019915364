"""Helpers shared by the CUDA templates: knobs, GPU limits, cooperative loads, checks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.gpus import GpuSpec
from orchestrator.kernel_plan import KernelPlan
from orchestrator.space import SplitKnob, factorizations

# How a thread's own columns lie: adjacent, or one thread-row apart.
LAYOUTS: tuple[str, ...] = ("blocked", "interleaved")
# Explicit-unroll depths (MetaSchedule's CUDA choices without 1024).
UNROLL_STEPS: tuple[int, ...] = (0, 16, 64, 512)
# TVM declares shared arrays statically, and a kernel may declare at most 48 KiB of
# static shared memory whatever the GPU (more needs dynamic shared memory and an opt-in).
STATIC_SMEM_BYTES = 48 * 1024
# Registers a thread needs besides its accumulators and operand fragments: indices,
# addresses, loop counters.
REG_OVERHEAD = 20
ELEMENT_BYTES = 4  # float32
SMEM_ALIGN = 64  # TVM declares shared arrays alignas(64)
# Largest per-thread factor along one axis, and largest shared reduction stage offered.
MAX_THREAD_TILE = 16
MAX_STAGE = 128


@dataclass(frozen=True)
class Limits:
    """What one block of a kernel may use on a GPU (picklable, read by checks)."""

    name: str
    warp_size: int
    max_threads: int
    smem_bytes: int
    regs_per_thread: int
    regs_per_block: int

    @classmethod
    def of(cls, gpu: GpuSpec) -> Limits:
        return cls(gpu.name, gpu.warp_size, gpu.max_threads_per_block,
                   min(gpu.smem_per_block, STATIC_SMEM_BYTES), gpu.regs_per_thread,
                   gpu.regs_per_block)

    def violation(self, plan: KernelPlan) -> str | None:
        """Why ``plan`` cannot launch on this GPU, or None."""
        if plan.threads_per_block > self.max_threads:
            return (f"{plan.threads_per_block} threads per block exceed the {self.name}'s "
                    f"{self.max_threads}")
        if plan.smem_bytes_per_block > self.smem_bytes:
            return (f"{plan.smem_bytes_per_block} bytes of shared memory per block exceed "
                    f"the {self.smem_bytes} a kernel may declare statically")
        if plan.regs_per_thread > self.regs_per_thread:
            return (f"an estimated {plan.regs_per_thread} registers per thread exceed "
                    f"{self.regs_per_thread}")
        if plan.regs_per_thread * plan.threads_per_block > self.regs_per_block:
            return (f"{plan.threads_per_block} threads x {plan.regs_per_thread} registers "
                    f"exceed the {self.regs_per_block} registers of a block")
        return None


def gpu_split(name: str, extent: int, *, max_inner: int = MAX_THREAD_TILE,
              max_threads: int = 1024) -> SplitKnob:
    """A 3-level perfect split ``(blocks, threads, per-thread)`` of ``extent`` whose
    per-thread factor is at most ``max_inner`` and thread factor at most ``max_threads``."""
    cands = [c for c in factorizations(extent, 3) if c[2] <= max_inner and c[1] <= max_threads]
    return SplitKnob(name, extent, 3, tuple(cands or factorizations(extent, 3)))


def stage_split(name: str, extent: int, *, max_stage: int = MAX_STAGE) -> SplitKnob:
    """A 2-level perfect split ``(outer, stage)`` of a reduction of length ``extent``; the
    stage is what one shared-memory load covers."""
    cands = [c for c in factorizations(extent, 2) if c[1] <= max_stage]
    return SplitKnob(name, extent, 2, tuple(cands or factorizations(extent, 2)))


def registers(accumulators: int, fragments: int) -> int:
    """Estimated registers per thread: accumulators, operand fragments and overhead."""
    return accumulators + fragments + REG_OVERHEAD


def shared_bytes(*elements: int) -> int:
    """Shared memory of float arrays of these sizes, declared in this order: TVM aligns
    each array to 64 bytes, so every array but the last is rounded up."""
    sizes = [ELEMENT_BYTES * e for e in elements]
    return sum(-(-b // SMEM_ALIGN) * SMEM_ALIGN for b in sizes[:-1]) + sizes[-1]


def run_bytes(elements: int) -> int:
    """Contiguous bytes a warp's consecutive threads load for a run of ``elements``
    consecutive floats (at most one per lane)."""
    return ELEMENT_BYTES * max(1, min(32, elements))


def cooperative_load(sch: Any, block: Any, depth: int, threads: int) -> None:
    """Spread the copy ``block`` (placed under ``depth`` loops) over the block's
    ``threads`` threads: its own loops fused, split by ``threads``, bound to threadIdx.x."""
    loops = sch.get_loops(block)[depth:]
    if not loops:  # a single element: every thread stores the same value
        return
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    _, inner = sch.split(fused, [None, threads])
    sch.bind(inner, "threadIdx.x")


def annotate_unroll(sch: Any, loop: Any, steps: int) -> None:
    """Ask the lowering to unroll loops below ``loop`` up to ``steps`` iterations."""
    if steps > 0:
        sch.annotate(loop, "pragma_auto_unroll_max_step", steps)
        sch.annotate(loop, "pragma_unroll_explicit", 1)


def product(values: Sequence[int]) -> int:
    return math.prod(values)
