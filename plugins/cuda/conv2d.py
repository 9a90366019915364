"""CUDA template for conv2d (NCHW input, KCRS weights, any stride/padding/dilation).

Loop nest of the main block, outermost first:
``(n f0 y0 x0) -> blockIdx.x | (f1 y1 x1) -> threadIdx.x | rc0 [ry rx] | rc1 [ry rx] |
f2 y2 x2`` where ``f2 x y2 x x2`` is each thread's register tile (accumulated in a local
buffer); ``layout=interleaved`` spaces a thread's ``x2`` columns ``x1`` apart instead of
adjacent, so consecutive threads touch consecutive columns.

At every outer reduction step the block's threads load together, into shared memory,
the padded input window of their output tile and the weights of their filters
(``rs_at=inner``: ``rc1`` channels times the whole ``R x S`` window per step;
``rs_at=outer``: ``rc1`` channels of one filter tap per step, R*S times more steps). The
padding is computed while loading (the padded input is inlined into the shared copy).
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
from plugins.templates.common import choice, factors_of, find_block
from plugins.templates.conv_shape import ConvShape, shape_of

RS_CHOICES = ("inner", "outer")


def rs_modes(s: ConvShape) -> tuple[str, ...]:
    return RS_CHOICES if s.r * s.s > 1 else ("inner",)


def knobs(task: Task, target: TargetInfo) -> list[Knob]:
    """tile_f, tile_y, tile_x: (blocks, threads, per thread); tile_rc: (outer, shared
    stage); rs_at; layout of a thread's columns; unroll."""
    s = shape_of(task)
    return [
        gpu_split("tile_f", s.k),
        gpu_split("tile_y", s.oh, max_inner=8),
        gpu_split("tile_x", s.ow, max_inner=8),
        stage_split("tile_rc", s.c, max_stage=64),
        ChoiceKnob("rs_at", rs_modes(s)),
        ChoiceKnob("layout", LAYOUTS),
        ChoiceKnob("unroll", UNROLL_STEPS),
    ]


@dataclass(frozen=True)
class ConvTiles:
    f: tuple[int, ...]
    y: tuple[int, ...]
    x: tuple[int, ...]
    rc: tuple[int, ...]
    rs_at: str
    layout: str
    unroll: int


def tiles_of(task: Task, config: Config) -> ConvTiles:
    """The config's factors, checked against the shape (InvalidConfigError otherwise)."""
    s = shape_of(task)
    return ConvTiles(factors_of(config, "tile_f", s.k, 3), factors_of(config, "tile_y", s.oh, 3),
                     factors_of(config, "tile_x", s.ow, 3), factors_of(config, "tile_rc", s.c, 2),
                     choice(config, "rs_at", rs_modes(s)), choice(config, "layout", LAYOUTS),
                     int(choice(config, "unroll", UNROLL_STEPS)))


def redundant(task: Task, config: Config) -> str | None:
    """Why ``config`` duplicates another config of the space, or None."""
    t = tiles_of(task, config)
    if t.layout == "interleaved" and min(t.x[1], t.x[2]) == 1:
        return "interleaved columns are blocked ones when x1 or x2 is 1"
    return None


def _span(tile: int, stride: int, taps: int, dilation: int) -> int:
    """Input rows (or columns) read by ``tile`` outputs over ``taps`` filter taps."""
    return (tile - 1) * stride + (taps - 1) * dilation + 1


def plan(task: Task, config: Config, target: TargetInfo) -> KernelPlan:
    """The launch, resources and traffic of ``config`` (no build)."""
    s = shape_of(task)
    t = tiles_of(task, config)
    f0, f1, f2 = t.f
    y0, y1, y2 = t.y
    x0, x1, x2 = t.x
    rc0, rc1 = t.rc
    ft, yt, xt = f1 * f2, y1 * y2, x1 * x2
    threads = f1 * y1 * x1
    blocks = s.n * f0 * y0 * x0
    inner = t.rs_at == "inner"
    taps_r, taps_s = (s.r, s.s) if inner else (1, 1)
    rows = _span(yt, s.stride, taps_r, s.dilation)
    cols = _span(xt, s.stride, taps_s, s.dilation)
    input_tile = rc1 * rows * cols
    weight_tile = ft * rc1 * taps_r * taps_s
    steps = rc0 if inner else rc0 * s.r * s.s
    flops = 2.0 * s.n * s.k * s.oh * s.ow * s.c * s.r * s.s
    # Contiguous runs: the input's window rows (single elements when one strided tap is
    # loaded alone); the weights' rc1*R*S floats per filter (all filters of the block
    # when the stage spans C; single elements when one tap is loaded alone).
    run_in = min(cols, s.w) if inner or s.stride == 1 else 1
    if not inner:
        run_w = 1
    else:
        run_w = rc1 * s.r * s.s if rc1 < s.c else ft * s.c * s.r * s.s
    return KernelPlan(
        grid_blocks=blocks,
        threads_per_block=threads,
        regs_per_thread=registers(f2 * y2 * x2, f2 + y2 * x2),
        smem_bytes_per_block=shared_bytes(input_tile, weight_tile),
        flops=flops,
        useful_flops=flops,
        global_load_bytes=float(ELEMENT_BYTES * blocks * steps * (input_tile + weight_tile)),
        global_store_bytes=float(ELEMENT_BYTES * s.n * s.k * s.oh * s.ow),
        smem_load_bytes=float(ELEMENT_BYTES * blocks * threads * s.c * s.r * s.s
                              * (f2 + y2 * x2)),
        load_run_bytes=min(run_bytes(run_in), run_bytes(run_w)),
        reduction_steps=steps,
        tiles=(("block_f", ft), ("block_y", yt), ("block_x", xt), ("thread_f", f2),
               ("thread_y", y2), ("thread_x", x2), ("threads_f", f1), ("threads_y", y1),
               ("threads_x", x1), ("stage_c", rc1), ("rs_inner", int(inner)),
               ("interleaved", int(t.layout == "interleaved")), ("unroll", t.unroll)),
    )


def apply(sch: Any, task: Task, config: Config, target: TargetInfo) -> None:
    """Schedule the conv2d of ``sch`` (a fresh s_tir.Schedule of the task)."""
    s = shape_of(task)
    t = tiles_of(task, config)
    threads = t.f[1] * t.y[1] * t.x[1]
    block = sch.get_sblock(s.block)
    if t.layout == "interleaved":
        # x as (block, thread, per thread) with x = x0*xt + x2*xs + x1, accumulated in
        # a buffer laid out that way (see the dense template).
        xt, xs = t.x[1] * t.x[2], t.x[1]
        sch.transform_block_layout(
            block, lambda n_, f_, y_, x_, c_, r_, s_: (n_, f_, y_, x_ // xt, x_ % xs,
                                                     (x_ % xt) // xs, c_, r_, s_))
        acc = sch.reindex(block, ("write", 0))
        sch.set_scope(block, 0, "local")
        n, f, y, x0, x1, x2, rc, ry, rx = sch.get_loops(block)
    else:
        acc = None
        n, f, y, x, rc, ry, rx = sch.get_loops(block)
        x0, x1, x2 = sch.split(x, list(t.x))
    f0, f1, f2 = sch.split(f, list(t.f))
    y0, y1, y2 = sch.split(y, list(t.y))
    rc0, rc1 = sch.split(rc, list(t.rc))
    if t.rs_at == "inner":
        sch.reorder(n, f0, y0, x0, f1, y1, x1, rc0, rc1, ry, rx, f2, y2, x2)
        stage, depth = rc0, 3
    else:
        sch.reorder(n, f0, y0, x0, f1, y1, x1, rc0, ry, rx, rc1, f2, y2, x2)
        stage, depth = rx, 5
    bx = sch.fuse(n, f0, y0, x0)
    sch.bind(bx, "blockIdx.x")
    tx = sch.fuse(f1, y1, x1)
    sch.bind(tx, "threadIdx.x")
    if acc is None:
        acc = sch.cache_write(block, 0, "local")
    copies = [sch.cache_read(block, index, "shared") for index in (0, 1)]
    padded = find_block(sch, s.pad_block)
    if padded is not None:  # the shared copy computes the padding itself
        sch.compute_inline(padded)
    for copy in copies:
        sch.compute_at(copy, stage)
        cooperative_load(sch, copy, depth, threads)
    sch.reverse_compute_at(acc, tx)
    sch.decompose_reduction(block, rc0)
    annotate_unroll(sch, bx, t.unroll)
