"""CPU template for dense (A[M,K] x B[K,N]) and batch_matmul (A[b,M,K] x W[b,K,N]).

Loop nest (MetaSchedule's SSRSRS structure, N vectorized):
``b i0 j0 | i1 j1 | k0 | i2 j2 | k1 | i3 j3`` where ``i3 x j3`` is the register tile
(``j3`` holds whole SIMD registers), the output tile is accumulated in a small local
buffer written back after the reduction, and ``b i0 j0`` is fused and run in parallel.
Axes without a usable factor are padded (``pad_einsum``) instead of giving up SIMD.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator.space import ChoiceKnob, Config, Knob
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.templates.common import (
    UNROLL_STEPS,
    annotate_unroll,
    choice,
    divisors,
    factors_of,
    max_accumulators,
    pad_for_tiles,
    pad_for_vectors,
    round_up,
    split_knob,
    vector_widths,
    vectorize_at_most,
    vectors,
)

ACC_CHOICES = ("outer", "inner")


@dataclass(frozen=True)
class MatmulShape:
    """Extents of one matmul task; ``mp``/``np`` are the computed (possibly padded) M, N."""

    batch: int
    m: int
    n: int
    k: int
    mp: int
    np: int
    block: str

    @property
    def padded(self) -> bool:
        return (self.mp, self.np) != (self.m, self.n)


def shape_of(task: Task, target: TargetInfo) -> MatmulShape:
    """The extents of ``task`` and the padding the template applies on ``target``."""
    p = task.params
    lanes = target.simd_lanes_fp32
    return MatmulShape(p.get("B", 1), p["M"], p["N"], p["K"], pad_for_tiles(p["M"]),
                       pad_for_vectors(p["N"], lanes), task.operator.main_block)


def knobs(task: Task, target: TargetInfo) -> list[Knob]:
    """The knobs of the matmul template for ``task``."""
    s = shape_of(task, target)
    lanes = target.simd_lanes_fp32
    maxacc = max_accumulators(target)
    rows = [d for d in divisors(s.mp) if d <= maxacc]
    widths = vector_widths(s.np, lanes, 4)
    k_inner = [d for d in divisors(s.k) if d <= 256]
    return [
        split_knob("tile_i", s.mp, 4, inner=rows),
        split_knob("tile_j", s.np, 4, inner=widths,
                   keep=lambda c: c[2] * c[3] <= 512),
        split_knob("tile_k", s.k, 2, inner=k_inner),
        ChoiceKnob("acc_at", ACC_CHOICES),
        ChoiceKnob("unroll", UNROLL_STEPS),
    ]


@dataclass(frozen=True)
class MatmulCheck:
    """Rejects matmul configs whose register tile or parallelism is poor (picklable)."""

    shape: MatmulShape
    lanes: int
    cores: int
    maxacc: int
    min_acc: int
    min_k1: int
    min_par: int
    min_rows: int
    # Only reject spilling register tiles (used when the shape leaves no config
    # that meets every threshold).
    relaxed: bool = False

    def __call__(self, config: Config) -> str | None:
        i0, i1, i2, i3 = config["tile_i"]
        j0, j1, j2, j3 = config["tile_j"]
        k0, k1 = config["tile_k"]
        acc = i3 * vectors(j3, self.lanes)
        if acc > self.maxacc:
            return f"register tile {i3}x{j3} needs {acc} accumulators (> {self.maxacc})"
        if self.relaxed:
            return None
        if i3 < self.min_rows:
            return f"register tile {i3}x{j3} has too few rows to reuse its B vectors"
        if acc < self.min_acc:
            return f"register tile {i3}x{j3} has {acc} accumulators (< {self.min_acc})"
        if k1 < self.min_k1:
            return f"inner reduction {k1} is too short to amortize the register tile"
        par = self.shape.batch * i0 * j0
        if par < self.min_par:
            return f"parallel extent {par} < {self.min_par}"
        tile_bytes = 4 * (i2 * i3) * (j2 * j3)
        if tile_bytes > 64 << 10:
            return f"inner output tile of {tile_bytes} bytes does not fit L1/L2"
        return None


def make_check(task: Task, target: TargetInfo, space_knobs: list[Knob]) -> MatmulCheck:
    """The check for ``task``, with thresholds lowered to what the shape allows."""
    s = shape_of(task, target)
    lanes = target.simd_lanes_fp32
    maxacc = max_accumulators(target)
    by_name = {k.name: k for k in space_knobs}
    rows = {c[3] for c in by_name["tile_i"].choices}
    cols = {c[3] for c in by_name["tile_j"].choices}
    feasible = [r * vectors(c, lanes) for r in rows for c in cols
                if r * vectors(c, lanes) <= maxacc]
    min_acc = min(8, max(feasible, default=1))
    min_rows = min(4, max(rows))
    k1s = [c[1] for c in by_name["tile_k"].choices]
    min_k1 = min(16, max(k1s))
    pars = [s.batch * a[0] * b[0] for a in by_name["tile_i"].choices
            for b in by_name["tile_j"].choices]
    min_par = min(target.cores, max(pars))
    return MatmulCheck(s, lanes, target.cores, maxacc, min_acc, min_k1, min_par, min_rows)


def apply(sch: Any, task: Task, config: Config, target: TargetInfo) -> None:
    """Schedule the matmul in ``sch`` (a fresh s_tir.Schedule of the task) per ``config``."""
    s = shape_of(task, target)
    ti = factors_of(config, "tile_i", s.mp, 4)
    tj = factors_of(config, "tile_j", s.np, 4)
    tk = factors_of(config, "tile_k", s.k, 2)
    acc_at = choice(config, "acc_at", ACC_CHOICES)
    unroll = int(choice(config, "unroll", UNROLL_STEPS))

    block = sch.get_sblock(s.block)
    if s.padded:
        lead = [1] if task.op == "batch_matmul" else []
        sch.pad_einsum(block, [*lead, _pad_factor(s.m, s.mp), _pad_factor(s.n, s.np), 1])
    loops = sch.get_loops(block)
    b = loops[0] if len(loops) == 4 else None
    i, j, k = loops[-3:]
    i0, i1, i2, i3 = sch.split(i, ti)
    j0, j1, j2, j3 = sch.split(j, tj)
    k0, k1 = sch.split(k, tk)
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)

    acc_loop = j1 if acc_at == "inner" else j0
    if s.padded:
        writeback = _padding_blocks(sch, block, 4 * target.simd_lanes_fp32)
        sch.reverse_compute_at(writeback, acc_loop)
    else:
        writeback = sch.cache_write(block, 0, "global")
        sch.reverse_compute_at(writeback, acc_loop)

    outer = [b, i0, j0] if b is not None else [i0, j0]
    par = sch.fuse(*outer)
    sch.parallel(par)
    annotate_unroll(sch, par, unroll)
    sch.unroll(i3)
    sch.vectorize(j3)
    sch.decompose_reduction(block, k0)
    # The write-back row spans the accumulator's columns (all N with acc_at=outer):
    # vectorized a register tile's width at a time, as the tile computes it.
    vectorize_at_most(sch, sch.get_loops(writeback)[-1], tj[3])


def _pad_factor(extent: int, padded: int) -> int:
    """The pad_einsum factor that rounds ``extent`` up to ``padded`` (1: no padding)."""
    if padded == extent:
        return 1
    return next(f for f in (8, 16, 32, 64, padded) if round_up(extent, f) == padded)


def _padding_blocks(sch: Any, block: Any, width: int) -> Any:
    """Schedule pad_einsum's input copies (parallel, vectorized ``width`` lanes at a
    time) and return the block that copies the padded output back (it then serves as
    the accumulator write-back)."""
    for producer in sch.get_producers(block):
        loops = sch.get_loops(producer)
        vectorize_at_most(sch, loops[-1], width)
        if len(loops) > 1:
            sch.parallel(sch.fuse(*loops[:-1]))
    (consumer,) = sch.get_consumers(block)
    return consumer
