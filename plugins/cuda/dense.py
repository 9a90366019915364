"""CUDA template for dense (C[M,N] = A[M,K] x B[K,N]).

Loop nest: ``(m0 n0) -> blockIdx.x | (m1 n1) -> threadIdx.x | k0 | k1 | m2 n2`` where
``m2 x n2`` is each thread's register tile, accumulated in a local buffer and written
back after the reduction. ``layout=blocked`` gives a thread ``n2`` adjacent columns;
``layout=interleaved`` gives it columns ``n1`` apart, so that consecutive threads read
consecutive shared-memory words (no bank conflicts) and store consecutive addresses.

At every ``k0`` step the block's threads load the ``(m1*m2) x k1`` tile of A and the
``k1 x (n1*n2)`` tile of B into shared memory together (the fused copy loop is spread
over threadIdx.x, so consecutive threads load consecutive addresses), then every thread
reads its operands from shared memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator.kernel_plan import KernelPlan
from orchestrator.space import ChoiceKnob, Config, Knob
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.cuda.common import (
    ELEMENT_BYTES,
    LAYOUTS,
    UNROLL_STEPS,
    annotate_unroll,
    cooperative_load,
    gpu_split,
    registers,
    run_bytes,
    shared_bytes,
    stage_split,
)
from plugins.templates.common import choice, factors_of


@dataclass(frozen=True)
class DenseShape:
    m: int
    n: int
    k: int
    block: str = "dense"


def shape_of(task: Task) -> DenseShape:
    """The extents of ``task``."""
    p = task.params
    return DenseShape(p["M"], p["N"], p["K"], task.operator.main_block)


def knobs(task: Task, target: TargetInfo) -> list[Knob]:
    """tile_m, tile_n: (blocks, threads, per thread); tile_k: (outer, shared stage);
    layout of a thread's columns; unroll."""
    s = shape_of(task)
    return [
        gpu_split("tile_m", s.m),
        gpu_split("tile_n", s.n),
        stage_split("tile_k", s.k),
        ChoiceKnob("layout", LAYOUTS),
        ChoiceKnob("unroll", UNROLL_STEPS),
    ]


@dataclass(frozen=True)
class DenseTiles:
    m: tuple[int, ...]
    n: tuple[int, ...]
    k: tuple[int, ...]
    layout: str
    unroll: int


def tiles_of(task: Task, config: Config) -> DenseTiles:
    """The config's factors, checked against the shape (InvalidConfigError otherwise)."""
    s = shape_of(task)
    return DenseTiles(factors_of(config, "tile_m", s.m, 3), factors_of(config, "tile_n", s.n, 3),
                      factors_of(config, "tile_k", s.k, 2), choice(config, "layout", LAYOUTS),
                      int(choice(config, "unroll", UNROLL_STEPS)))


def redundant(task: Task, config: Config) -> str | None:
    """Why ``config`` duplicates another config of the space, or None."""
    t = tiles_of(task, config)
    if t.layout == "interleaved" and min(t.n[1], t.n[2]) == 1:
        return "interleaved columns are blocked ones when n1 or n2 is 1"
    return None


def plan(task: Task, config: Config, target: TargetInfo) -> KernelPlan:
    """The launch, resources and traffic of ``config`` (no build)."""
    s = shape_of(task)
    t = tiles_of(task, config)
    m0, m1, m2 = t.m
    n0, n1, n2 = t.n
    k0, k1 = t.k
    bm, bn = m1 * m2, n1 * n2
    threads = m1 * n1
    blocks = m0 * n0
    flops = 2.0 * s.m * s.n * s.k
    # A rows hold k1 contiguous floats (whole rows when the stage spans K); B rows hold
    # bn contiguous floats (the whole tile when it spans N).
    run_a = k1 if k1 < s.k else bm * s.k
    run_b = bn if bn < s.n else k1 * s.n
    return KernelPlan(
        grid_blocks=blocks,
        threads_per_block=threads,
        regs_per_thread=registers(m2 * n2, m2 + n2),
        smem_bytes_per_block=shared_bytes(bm * k1, k1 * bn),
        flops=flops,
        useful_flops=flops,
        global_load_bytes=float(ELEMENT_BYTES * blocks * k0 * k1 * (bm + bn)),
        global_store_bytes=float(ELEMENT_BYTES * s.m * s.n),
        smem_load_bytes=float(ELEMENT_BYTES * blocks * threads * s.k * (m2 + n2)),
        load_run_bytes=min(run_bytes(run_a), run_bytes(run_b)),
        reduction_steps=k0,
        tiles=(("block_m", bm), ("block_n", bn), ("thread_m", m2), ("thread_n", n2),
               ("threads_m", m1), ("threads_n", n1), ("stage_k", k1),
               ("interleaved", int(t.layout == "interleaved")), ("unroll", t.unroll)),
    )


def apply(sch: Any, task: Task, config: Config, target: TargetInfo) -> None:
    """Schedule the dense block of ``sch`` (a fresh s_tir.Schedule of the task)."""
    s = shape_of(task)
    t = tiles_of(task, config)
    threads = t.m[1] * t.n[1]
    block = sch.get_sblock(s.block)
    if t.layout == "interleaved":
        # Iterate j as (block, thread, per thread) with j = j0*bn + j2*n1 + j1, and
        # accumulate in a buffer laid out that way (reindex): a cache of C itself would
        # span the bounding box of the thread's strided columns.
        bn, n1 = t.n[1] * t.n[2], t.n[1]
        sch.transform_block_layout(
            block, lambda i, j, k: (i, j // bn, j % n1, (j % bn) // n1, k))
        acc = sch.reindex(block, ("write", 0))
        sch.set_scope(block, 0, "local")
        i, j0, j1, j2, k = sch.get_loops(block)
    else:
        acc = None
        i, j, k = sch.get_loops(block)
        j0, j1, j2 = sch.split(j, list(t.n))
    i0, i1, i2 = sch.split(i, list(t.m))
    k0, k1 = sch.split(k, list(t.k))
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    bx = sch.fuse(i0, j0)
    sch.bind(bx, "blockIdx.x")
    tx = sch.fuse(i1, j1)
    sch.bind(tx, "threadIdx.x")
    if acc is None:
        acc = sch.cache_write(block, 0, "local")
    for index in (0, 1):
        copy = sch.cache_read(block, index, "shared")
        sch.compute_at(copy, k0)
        cooperative_load(sch, copy, 3, threads)  # under bx, tx, k0
    sch.reverse_compute_at(acc, tx)
    sch.decompose_reduction(block, k0)
    annotate_unroll(sch, bx, t.unroll)
