"""CPU template for conv2d (NCHW input, KCRS weights, any stride/padding/dilation).

Loop nest of the main block, outermost first (SSRSRS tiling):
``n f0 y0 x0 | f1 y1 x1 | c0 [r s] | f2 y2 x2 | c1 [r s] | <register tile>``
with ``n f0 y0 x0`` fused and parallel. Two ways to vectorize:

* ``vec=k``: the register tile is ``y3 x x3`` pixels times ``f3`` output channels held
  in SIMD registers. The weights are copied once per call into a blocked layout
  ``[K/f3, ..., f3]`` (cache_read + transform_layout) so each step loads whole vectors,
  and the local accumulator is laid out channel-innermost.
* ``vec=w``: the register tile is ``f3 x y3`` rows times ``x3`` output pixels in SIMD
  registers, each weight broadcast (for stride 1 the input row is contiguous); used when
  the channel count has no SIMD-friendly factor.

The padded input is either computed once at the root, or inlined into the main block.
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
    find_block,
    max_accumulators,
    split_knob,
    vector_efficiency,
    vector_widths,
    vectors,
)
from plugins.templates.conv_shape import ConvShape, shape_of

VEC_CHOICES = ("k", "w")
ACC_CHOICES = ("outer", "inner")
RS_CHOICES = ("inner", "outer")


def vec_modes(s: ConvShape, lanes: int) -> tuple[str, ...]:
    """The vectorization modes worth offering for ``s``, best first."""
    k_eff = _best_efficiency(s.k, lanes)
    w_eff = _best_efficiency(s.ow, lanes)
    if s.stride > 1:
        w_eff *= 0.5  # strided input rows: every vector is a gather
    if k_eff == 1.0 or k_eff >= w_eff:
        # Channel vectors need no gathers and suit any stride: preferred on a tie.
        return ("k", "w") if k_eff < 1.0 and w_eff >= 0.75 * k_eff else ("k",)
    return ("w", "k") if k_eff >= 0.75 * w_eff else ("w",)


def _best_efficiency(extent: int, lanes: int) -> float:
    """Lane use of the widest SIMD-friendly divisor of ``extent`` (0 if it is 1)."""
    width = vector_widths(extent, lanes, 4)[0]
    return vector_efficiency(width, lanes) if width > 1 else 0.0


def pad_modes(s: ConvShape) -> tuple[str, ...]:
    """Where the padded input is computed (without padding it is a plain copy: inlined)."""
    return ("root", "inline") if s.pad > 0 else ("inline",)


def knobs(task: Task, target: TargetInfo) -> list[Knob]:
    """The knobs of the conv2d template for ``task``."""
    s = shape_of(task)
    lanes = target.simd_lanes_fp32
    maxacc = max_accumulators(target)
    modes = vec_modes(s, lanes)
    # The innermost factor of each spatial axis: vector widths on the vectorized axis
    # of some mode, register rows (scalars) otherwise.
    f_rows = {d for d in divisors(s.k) if d <= maxacc}
    x_rows = {d for d in divisors(s.ow) if d <= maxacc}
    f_inner = (set(vector_widths(s.k, lanes, 4)) if "k" in modes else set()) | (
        f_rows if "w" in modes else set())
    x_inner = (set(vector_widths(s.ow, lanes, 4)) if "w" in modes else set()) | (
        x_rows if "k" in modes else set())
    y_inner = [d for d in divisors(s.oh) if d <= 4]
    return [
        ChoiceKnob("vec", modes),
        split_knob("tile_f", s.k, 4, inner=sorted(f_inner)),
        split_knob("tile_y", s.oh, 4, inner=y_inner),
        split_knob("tile_x", s.ow, 4, inner=sorted(x_inner)),
        split_knob("tile_c", s.c, 2, inner=[d for d in divisors(s.c) if d <= 64]),
        ChoiceKnob("rs_at", RS_CHOICES if s.r * s.s > 1 else ("inner",)),
        ChoiceKnob("pad", pad_modes(s)),
        ChoiceKnob("acc_at", ACC_CHOICES),
        ChoiceKnob("unroll", UNROLL_STEPS),
    ]


@dataclass(frozen=True)
class ConvCheck:
    """Rejects conv2d configs with a poor register tile or too little parallelism."""

    shape: ConvShape
    lanes: int
    maxacc: int
    min_acc: dict[str, int]
    min_rows: dict[str, int]
    min_par: int
    vec_widths: dict[str, tuple[int, ...]]
    # Only reject spilling register tiles (used when the shape leaves no config
    # that meets every threshold).
    relaxed: bool = False

    def __call__(self, config: Config) -> str | None:
        s = self.shape
        vec = config["vec"]
        f0, _, f2, f3 = config["tile_f"]
        y0, _, y2, y3 = config["tile_y"]
        x0, _, x2, x3 = config["tile_x"]
        width, rows = (f3, y3 * x3) if vec == "k" else (x3, f3 * y3)
        if width not in self.vec_widths[vec] and not self.relaxed:
            return f"vector width {width} is not one of {list(self.vec_widths[vec])}"
        acc = rows * vectors(width, self.lanes)
        if acc > self.maxacc:
            return f"register tile needs {acc} accumulators (> {self.maxacc})"
        if self.relaxed:
            return None
        if rows < self.min_rows[vec]:
            return f"register tile has {rows} rows (< {self.min_rows[vec]}) to reuse its vectors"
        if acc < self.min_acc[vec]:
            return f"register tile has {acc} accumulators (< {self.min_acc[vec]})"
        par = s.n * f0 * y0 * x0
        if par < self.min_par:
            return f"parallel extent {par} < {self.min_par}"
        c1 = config["tile_c"][1]
        if config["rs_at"] == "outer" and c1 < min(8, s.c):
            return "reduction over channels alone is too short for the register tile"
        return None


def make_check(task: Task, target: TargetInfo, space_knobs: list[Knob]) -> ConvCheck:
    """The check for ``task``; every threshold is lowered to what the shape allows."""
    s = shape_of(task)
    lanes = target.simd_lanes_fp32
    maxacc = max_accumulators(target)
    by = {k.name: k for k in space_knobs}
    f3s = {c[3] for c in by["tile_f"].choices}
    y3s = {c[3] for c in by["tile_y"].choices}
    x3s = {c[3] for c in by["tile_x"].choices}
    widths = {"k": tuple(w for w in vector_widths(s.k, lanes, 4) if w in f3s),
              "w": tuple(w for w in vector_widths(s.ow, lanes, 4) if w in x3s)}
    min_acc: dict[str, int] = {}
    min_rows: dict[str, int] = {}
    for vec in VEC_CHOICES:
        rows = ({y * x for y in y3s for x in x3s} if vec == "k"
                else {f * y for f in f3s for y in y3s})
        fits = [r for r in rows if any(r * vectors(w, lanes) <= maxacc for w in widths[vec])]
        min_rows[vec] = min(4, max(fits, default=1))
        feasible = [r * vectors(w, lanes) for r in fits for w in widths[vec]
                    if r >= min_rows[vec] and r * vectors(w, lanes) <= maxacc]
        min_acc[vec] = min(8, max(feasible, default=1))
    pars = [s.n * a[0] * b[0] * c[0] for a in by["tile_f"].choices
            for b in by["tile_y"].choices for c in by["tile_x"].choices]
    min_par = min(2 * target.cores, max(pars))
    return ConvCheck(s, lanes, maxacc, min_acc, min_rows, min_par, widths)


def apply(sch: Any, task: Task, config: Config, target: TargetInfo) -> None:
    """Schedule the conv2d in ``sch`` (a fresh s_tir.Schedule of the task) per ``config``."""
    s = shape_of(task)
    vec = choice(config, "vec", VEC_CHOICES)
    tf = factors_of(config, "tile_f", s.k, 4)
    ty = factors_of(config, "tile_y", s.oh, 4)
    tx = factors_of(config, "tile_x", s.ow, 4)
    tc = factors_of(config, "tile_c", s.c, 2)
    rs_at = choice(config, "rs_at", RS_CHOICES)
    pad = choice(config, "pad", pad_modes(s))
    acc_at = choice(config, "acc_at", ACC_CHOICES)
    unroll = int(choice(config, "unroll", UNROLL_STEPS))

    block = sch.get_sblock(s.block)
    n, f, y, x, c, r, q = sch.get_loops(block)
    f0, f1, f2, f3 = sch.split(f, tf)
    y0, y1, y2, y3 = sch.split(y, ty)
    x0, x1, x2, x3 = sch.split(x, tx)
    c0, c1 = sch.split(c, tc)
    if rs_at == "inner":
        middle, inner = [c0], [c1, r, q]
    else:
        middle, inner = [c0, r, q], [c1]
    tile = [y3, x3, f3] if vec == "k" else [f3, y3, x3]
    sch.reorder(n, f0, y0, x0, f1, y1, x1, *middle, f2, y2, x2, *inner, *tile)

    if vec == "k":
        _pack_weights(sch, block, tf[3], rs_at)
    writeback = sch.cache_write(block, 0, "global")
    if vec == "k":
        # Channel-innermost accumulator: the register tile stores whole vectors.
        sch.transform_layout(block, ("write", 0),
                             lambda nn, ff, yy, xx: (nn, ff // tf[3], yy, xx, ff % tf[3]))
    sch.reverse_compute_at(writeback, x1 if acc_at == "inner" else x0)

    padded = find_block(sch, s.pad_block)
    if padded is not None and pad == "inline":
        sch.compute_inline(padded)
    elif padded is not None:
        _parallel_copy(sch, padded)

    par = sch.fuse(n, f0, y0, x0)
    sch.parallel(par)
    annotate_unroll(sch, par, unroll)
    vec_loop, *scalar = (f3, y3, x3) if vec == "k" else (x3, f3, y3)
    for loop in scalar:
        sch.unroll(loop)
    sch.vectorize(vec_loop)
    sch.decompose_reduction(block, middle[0])
    wl = sch.get_loops(writeback)
    if vec == "w":
        sch.vectorize(wl[-1])


def _pack_weights(sch: Any, block: Any, width: int, rs_at: str) -> None:
    """Copy the weights at the root into ``[K/width, C, R, S, width]`` (or with R, S
    before C when they are the outer reduction loops), in parallel."""
    packed = sch.cache_read(block, 1, "global")
    if rs_at == "inner":
        layout = lambda k, c, r, s: (k // width, c, r, s, k % width)  # noqa: E731
    else:
        layout = lambda k, c, r, s: (k // width, r, s, c, k % width)  # noqa: E731
    sch.transform_layout(packed, ("write", 0), layout)
    k, c, r, s = sch.get_loops(packed)
    ko, ki = sch.split(k, [None, width])
    if rs_at == "inner":
        sch.reorder(ko, c, r, s, ki)
    else:
        sch.reorder(ko, r, s, c, ki)
    sch.parallel(ko)


def _parallel_copy(sch: Any, block: Any) -> None:
    """Run an elementwise block at the root in parallel over its outer loops,
    vectorized along the innermost one."""
    loops = sch.get_loops(block)
    sch.vectorize(loops[-1])
    if len(loops) > 2:
        sch.parallel(sch.fuse(*loops[:2]))
